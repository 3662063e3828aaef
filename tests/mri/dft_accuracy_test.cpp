// Field-corrected DFT against the double-precision oracle (fieldft/reference.hpp), on the
// backend under test. Sizes are small enough for the 2-core CI (each test well under 30 s); the
// full 64³ × 262144 case runs in dft_gpu_test.cpp.
#include "dft_test_common.hpp"

namespace fieldft::test {
namespace {

// Thresholds. float: the requirement of the issue (1e-5 relative l2); the method reaches
// ~1e-6 (phase reduced in cycles, tile sums in double). double: 1e-12, the requirement; the
// oracle itself sums ~1e4 terms in double (~1e-14).
template <class T>
constexpr double kTol = sizeof(T) == sizeof(float) ? 1e-5 : 1e-12;

template <class T>
class DftAccuracy : public ::testing::Test {
 protected:
  void SetUp() override { FIELDFT_TEST_SKIP_UNLESS_AVAILABLE(kBackend); }
};
using Precisions = ::testing::Types<float, double>;
TYPED_TEST_SUITE(DftAccuracy, Precisions);

// Forward and adjoint of one random image / sample vector (and a positive image) against the
// oracle at every output.
template <class T>
void check_against_oracle(const DftProblem<T>& p, std::uint64_t seed, const char* what) {
  auto op = make_dft(p);
  const auto x = random_complex<T>(p.voxels, seed);
  const auto xp = positive_image<T>(p.voxels, seed + 1);
  const auto y = random_complex<T>(p.samples, seed + 2);
  std::vector<std::complex<T>> ax(p.samples), axp(p.samples), ahy(p.voxels);
  op->forward(x.data(), ax.data());
  op->forward(xp.data(), axp.data());
  op->adjoint(y.data(), ahy.data());
  const auto samples = all_indices(p.samples), voxels = all_indices(p.voxels);
  const double ef = rel_error(ax, oracle_forward_at(p, widen(x), samples));
  const double efp = rel_error(axp, oracle_forward_at(p, widen(xp), samples));
  const double ea = rel_error(ahy, oracle_adjoint_at(p, widen(y), voxels));
  std::printf("[ %s %s ] forward %.2e, forward (positive image) %.2e, adjoint %.2e\n", what,
              sizeof(T) == 4 ? "float" : "double", ef, efp, ea);
  EXPECT_LT(ef, kTol<T>) << what;
  EXPECT_LT(efp, kTol<T>) << what;
  EXPECT_LT(ea, kTol<T>) << what;
}

TYPED_TEST(DftAccuracy, ThreeDimensionalWithPartialTiles) {
  // 20×18×12 is not a multiple of the 8×4×8 tiles: edge tiles are partly outside the grid.
  check_against_oracle(make_dft_problem<TypeParam>({20, 18, 12}, 3000, 11), 101, "3D 20x18x12");
}

TYPED_TEST(DftAccuracy, TwoDimensionalWithPartialTiles) {
  check_against_oracle(make_dft_problem<TypeParam>({50, 36}, 3000, 12), 102, "2D 50x36");
}

TYPED_TEST(DftAccuracy, OddSizesAndTinyGrid) {
  check_against_oracle(make_dft_problem<TypeParam>({7, 5, 3}, 500, 13), 103, "3D 7x5x3");
  check_against_oracle(make_dft_problem<TypeParam>({1, 9}, 300, 14), 104, "2D 1x9");
}

TYPED_TEST(DftAccuracy, StrongSmoothFieldLongReadout) {
  // ±500 Hz smooth field, readouts to 100 ms: field phases to 50 cycles (310 rad) on top of
  // spatial phases to 2π·40 cycles, i.e. totals of ~560 rad.
  check_against_oracle(make_dft_problem<TypeParam>({32, 32, 16}, 2000, 15, 500.0, 0.1, FieldKind::kSmooth),
                       105, "3D 32x32x16 strong field");
  // Up to 4 kHz, readouts to 100 ms: field phases to 400 cycles (2500 rad).
  check_against_oracle(make_dft_problem<TypeParam>({32, 32, 16}, 2000, 16, 4000.0, 0.1, FieldKind::kSmooth),
                       106, "3D 32x32x16 field phases of thousands of radians");
}

TYPED_TEST(DftAccuracy, Adjointness) {
  using T = TypeParam;
  const auto p = make_dft_problem<T>({24, 20, 16}, 4000, 21);
  auto op = make_dft(p);
  const auto x = random_complex<T>(p.voxels, 201);
  const auto y = random_complex<T>(p.samples, 202);
  std::vector<std::complex<T>> ax(p.samples), ahy(p.voxels);
  op->forward(x.data(), ax.data());
  op->adjoint(y.data(), ahy.data());
  const double defect = adjointness_defect<T>(x, ax, y, ahy);
  std::printf("[ adjointness %s ] %.2e\n", sizeof(T) == 4 ? "float" : "double", defect);
  // float: the 1e-6; double: 1e-13, a few hundred roundings of 1e-16 each.
  EXPECT_LT(defect, sizeof(T) == 4 ? 1e-6 : 1e-13);
}

TYPED_TEST(DftAccuracy, ManyImagesShareOneCall) {
  using T = TypeParam;
  const auto p = make_dft_problem<T>({16, 12, 10}, 1500, 31);
  const auto samples = all_indices(p.samples), voxels = all_indices(p.voxels);
  // 2: the CUDA-core path with two images per pass; 3 and 37: the tensor-core path on CUDA
  // (float), 37 = one pass of 32 images and one of 5.
  for (std::int64_t c : {2, 3, 37}) {
    auto op = make_dft(p, c);
    ASSERT_EQ(op->images(), c);
    // Image 0 is positive (coherent sums expose a biased sine/cosine), the others random.
    auto x = random_complex<T>(p.voxels * c, 300 + c);
    const auto x0 = positive_image<T>(p.voxels, 350 + c);
    std::copy(x0.begin(), x0.end(), x.begin());
    const auto y = random_complex<T>(p.samples * c, 400 + c);
    std::vector<std::complex<T>> ax(p.samples * c), ahy(p.voxels * c);
    op->forward(x.data(), ax.data());
    op->adjoint(y.data(), ahy.data());
    double worst_f = 0, worst_a = 0;
    for (std::int64_t i = 0; i < c; ++i) {
      const std::vector<std::complex<T>> xi(x.begin() + i * p.voxels, x.begin() + (i + 1) * p.voxels);
      const std::vector<std::complex<T>> yi(y.begin() + i * p.samples, y.begin() + (i + 1) * p.samples);
      const std::vector<std::complex<T>> axi(ax.begin() + i * p.samples, ax.begin() + (i + 1) * p.samples);
      const std::vector<std::complex<T>> ahyi(ahy.begin() + i * p.voxels, ahy.begin() + (i + 1) * p.voxels);
      worst_f = std::max(worst_f, rel_error(axi, oracle_forward_at(p, widen(xi), samples)));
      worst_a = std::max(worst_a, rel_error(ahyi, oracle_adjoint_at(p, widen(yi), voxels)));
    }
    std::printf("[ %lld images %s ] worst forward %.2e, worst adjoint %.2e\n",
                static_cast<long long>(c), sizeof(T) == 4 ? "float" : "double", worst_f, worst_a);
    EXPECT_LT(worst_f, kTol<T>) << c << " images";
    EXPECT_LT(worst_a, kTol<T>) << c << " images";
  }
}

TYPED_TEST(DftAccuracy, ImagesOfVeryDifferentScale) {
  // Images are scaled separately (the tensor-core path splits values into fp16 pairs relative
  // to each image's maximum): a 1e-6-scaled image keeps its relative accuracy.
  using T = TypeParam;
  const auto p = make_dft_problem<T>({12, 12, 8}, 800, 35);
  const std::int64_t c = 4;
  auto op = make_dft(p, c);
  auto x = random_complex<T>(p.voxels * c, 501);
  for (std::int64_t v = 0; v < p.voxels; ++v) x[v] *= T(1e-6);
  std::vector<std::complex<T>> ax(p.samples * c);
  op->forward(x.data(), ax.data());
  const std::vector<std::complex<T>> x0(x.begin(), x.begin() + p.voxels);
  const std::vector<std::complex<T>> ax0(ax.begin(), ax.begin() + p.samples);
  EXPECT_LT(rel_error(ax0, oracle_forward_at(p, widen(x0), all_indices(p.samples))), kTol<T>);
}

TYPED_TEST(DftAccuracy, NoSamples) {
  using T = TypeParam;
  auto p = make_dft_problem<T>({8, 8}, 0, 41);
  auto op = make_dft(p);
  EXPECT_EQ(op->num_samples(), 0);
  EXPECT_EQ(op->codomain_size(), 0);
  const auto x = random_complex<T>(p.voxels, 601);
  std::vector<std::complex<T>> out(p.voxels, std::complex<T>(7, 7));
  op->forward(x.data(), nullptr);  // nothing to write
  op->adjoint(nullptr, out.data());
  for (const auto& v : out) EXPECT_EQ(v, std::complex<T>(0));
}

TYPED_TEST(DftAccuracy, ShapesFollowTheLinearOperatorConvention) {
  using T = TypeParam;
  const auto p = make_dft_problem<T>({6, 5, 4}, 10, 51);
  auto one = make_dft(p);
  EXPECT_EQ(one->domain_shape(), (op::Shape{6, 5, 4}));
  EXPECT_EQ(one->codomain_shape(), (op::Shape{10}));
  EXPECT_EQ(one->domain_size(), 120);
  EXPECT_EQ(one->codomain_size(), 10);
  EXPECT_EQ(one->backend(), kBackend);
  EXPECT_EQ(one->location().is_cuda(), kBackend == Backend::kCuda);
  EXPECT_EQ(one->name(), "Dft(6x5x4 -> 10)");
  auto many = make_dft(p, 3);
  EXPECT_EQ(many->domain_shape(), (op::Shape{6, 5, 4, 3}));
  EXPECT_EQ(many->codomain_shape(), (op::Shape{10, 3}));
  // The same operator built in a context: the context's place, the same shapes.
  const Context c = kBackend == Backend::kCuda ? Context::cuda(0) : Context::host(2);
  mri::Dft<T> in_context(p.grid, std::span<const T>(p.kx), std::span<const T>(p.ky), p.kz_span(),
                         std::span<const T>(p.field), std::span<const T>(p.times), c, 3);
  EXPECT_TRUE(in_context.context().same_place(c));
  EXPECT_EQ(in_context.domain_shape(), many->domain_shape());
  EXPECT_EQ(in_context.nthreads(), kBackend == Backend::kCuda ? 0 : 2);
}

TYPED_TEST(DftAccuracy, EmptyFieldAndTimesMeanNoOffResonance) {
  using T = TypeParam;
  auto p = make_dft_problem<T>({10, 8}, 200, 61);
  mri::Dft<T> plain(p.grid, std::span<const T>(p.kx), std::span<const T>(p.ky), {}, {}, {},
                    dft_options());
  std::fill(p.field_d.begin(), p.field_d.end(), 0.0);
  std::fill(p.times_d.begin(), p.times_d.end(), 0.0);
  const auto x = random_complex<T>(p.voxels, 701);
  std::vector<std::complex<T>> ax(p.samples);
  plain.forward(x.data(), ax.data());
  EXPECT_LT(rel_error(ax, oracle_forward_at(p, widen(x), all_indices(p.samples))), kTol<T>);
}

}  // namespace
}  // namespace fieldft::test
