// mri::Encoding's validation, and a quick check of the encoding operators' sign and position
// convention: NufftEncoding and DftEncoding of the same random image agree with each other and
// with the exact field-corrected DFT oracle (fieldft::reference), on the backend under test.
// The generic battery and the full oracle comparisons are in encoding_battery_test.cpp.
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <memory>
#include <numbers>
#include <span>
#include <string>
#include <vector>

#include "fieldft/mri/encoding.hpp"
#include "fieldft/op/combinators.hpp"
#include "support/operator_battery.hpp"

namespace fieldft::test {
namespace {

using mri::Encoding;

// ---------------------------------------------------------------------------------------------
// Validation (host only: an Encoding is plain host data).

const std::vector<std::int64_t> kGrid{8, 6};
const std::vector<float> kk{0.5f, -3.f, 2.f};  // within [-3, 3] for both axes of kGrid
const std::vector<float> kNone;

TEST(Encoding, KeepsItsOwnCopyAndShapes) {
  std::vector<float> kx{1.f, -4.f, 3.9f}, ky{0.f, 2.5f, -3.f}, t{0.f, 1e-3f, 2e-3f};
  std::vector<float> field(48, 10.f);
  const std::vector<std::int32_t> shots{0, 2, 1};
  const Encoding<float> e(kGrid, kx, ky, {}, t, field, shots);
  kx[0] = 99.f;  // the caller's arrays may change or go away
  EXPECT_EQ(e.dim(), 2);
  EXPECT_EQ(e.num_voxels(), 48);
  EXPECT_EQ(e.num_samples(), 3);
  EXPECT_EQ(e.k(0)[0], 1.f);
  EXPECT_TRUE(e.has_field());
  EXPECT_EQ(e.num_shots(), 3);
  EXPECT_EQ(e.image_shape(), (op::Shape{8, 6}));
  EXPECT_EQ(e.sample_shape(), (op::Shape{3}));
  EXPECT_EQ(e.grid()[2], 1);
  const Encoding<double> plain(std::vector<std::int64_t>{4, 4, 2}, std::vector<double>{1.0},
                               std::vector<double>{-2.0}, std::vector<double>{0.5});
  EXPECT_FALSE(plain.has_field());
  EXPECT_EQ(plain.num_shots(), 1);
  EXPECT_TRUE(plain.times().empty());
  EXPECT_EQ(plain.image_shape(), (op::Shape{4, 4, 2}));
}

TEST(Encoding, RefusesBadGridsAndLengths) {
  auto make = [](std::vector<std::int64_t> grid, const std::vector<float>& kx, const std::vector<float>& ky,
                 const std::vector<float>& kz, const std::vector<float>& times, const std::vector<float>& field,
                 const std::vector<std::int32_t>& shots = {}) {
    return [=] { (void)Encoding<float>(grid, kx, ky, kz, times, field, shots); };
  };
  EXPECT_TRUE(throws_error(make({8}, kk, kk, kNone, kNone, kNone), ErrorCode::kInvalidArgument, {"2 or 3"}));
  EXPECT_TRUE(throws_error(make({8, 0}, kk, kk, kNone, kNone, kNone), ErrorCode::kInvalidArgument, {"Ny", ">= 1"}));
  EXPECT_TRUE(throws_error(make(kGrid, kk, {0.f}, kNone, kNone, kNone), ErrorCode::kShapeMismatch, {"ky", "3"}));
  EXPECT_TRUE(throws_error(make(kGrid, kk, kk, kk, kNone, kNone), ErrorCode::kShapeMismatch, {"kz", "2D"}));
  EXPECT_TRUE(throws_error(make({8, 6, 4}, kk, kk, kNone, kNone, kNone), ErrorCode::kShapeMismatch, {"kz"}));
  EXPECT_TRUE(throws_error(make(kGrid, kk, kk, kNone, {0.f}, kNone), ErrorCode::kShapeMismatch, {"times"}));
  EXPECT_TRUE(throws_error(make(kGrid, kk, kk, kNone, kNone, std::vector<float>(47)), ErrorCode::kShapeMismatch,
                           {"field", "48", "voxel"}));
  EXPECT_TRUE(throws_error(make(kGrid, kk, kk, kNone, kNone, kNone, {0}), ErrorCode::kShapeMismatch, {"shots"}));
  EXPECT_TRUE(throws_error(make(kGrid, kk, kk, kNone, kNone, kNone, {0, -1, 0}), ErrorCode::kInvalidArgument,
                           {"shots[1]", ">= 0"}));
  const std::int64_t big = std::int64_t(1) << 40;
  EXPECT_TRUE(throws_error(make({big, big, big}, {}, {}, {}, kNone, kNone), ErrorCode::kTooLarge, {"voxels"}));
}

TEST(Encoding, RefusesNonFiniteValuesByName) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  std::vector<float> bad = kk;
  bad[2] = nan;
  EXPECT_TRUE(throws_error([&] { (void)Encoding<float>(kGrid, kk, bad); }, ErrorCode::kNonFinite, {"ky[2]"}));
  std::vector<float> t{0.f, inf, 0.f};
  EXPECT_TRUE(throws_error([&] { (void)Encoding<float>(kGrid, kk, kk, {}, t); }, ErrorCode::kNonFinite,
                           {"times[1]"}));
  std::vector<float> field(48, 0.f);
  field[40] = -inf;
  EXPECT_TRUE(throws_error([&] { (void)Encoding<float>(kGrid, kk, kk, {}, {}, field); }, ErrorCode::kNonFinite,
                           {"field[40]"}));
}

// k in cycles per field of view: [-N/2, N/2] per axis, with a relative tolerance of 1e-5 for
// rounding; values in another unit are refused with a message that names the unit.
TEST(Encoding, RefusesKOutsideTheGridWithAUnitHint) {
  const std::vector<std::int64_t> grid{64, 32};
  const std::vector<double> ky{0.0, 0.0};
  EXPECT_NO_THROW((void)Encoding<double>(grid, std::vector<double>{-32.0, 32.0}, ky));
  EXPECT_NO_THROW((void)Encoding<double>(grid, std::vector<double>{32.0001, -32.0001}, ky));
  EXPECT_TRUE(throws_error([&] { (void)Encoding<double>(grid, std::vector<double>{0.0, 32.01}, ky); },
                           ErrorCode::kInvalidArgument,
                           {"kx[1]", "[-32, 32]", "cycles per field of view", "radians", "1/m"}));
  // In 1/m for a 0.25 m field of view, ky would reach 64: refused on the y axis (Ny = 32).
  EXPECT_TRUE(throws_error(
      [&] { (void)Encoding<double>(grid, std::vector<double>{1.0, 2.0}, std::vector<double>{-64.0, 3.0}); },
      ErrorCode::kInvalidArgument, {"ky[0]", "Ny = 32"}));
  EXPECT_TRUE(throws_error(
      [&] {
        (void)Encoding<float>(std::vector<std::int64_t>{8, 8, 4}, std::vector<float>{0.f}, std::vector<float>{0.f},
                              std::vector<float>{2.5f});
      },
      ErrorCode::kInvalidArgument, {"kz[0]", "Nz = 4"}));
}

// ---------------------------------------------------------------------------------------------
// The operators against the oracle, on the backend under test.

template <class T>
class EncodingOperators : public ::testing::Test {
 protected:
  void SetUp() override { FIELDFT_TEST_SKIP_UNLESS_AVAILABLE(kBackend); }
};
using Precisions = ::testing::Types<float, double>;
TYPED_TEST_SUITE(EncodingOperators, Precisions);

template <class T>
constexpr double nufft_eps() {
  return sizeof(T) == sizeof(float) ? 1e-4 : 1e-9;
}

template <class T>
constexpr double dft_tol() {
  return sizeof(T) == sizeof(float) ? 1e-5 : 1e-12;
}

// A random trajectory over the whole of k-space (edges included), its oracle copy in double.
template <class T>
struct Problem {
  std::vector<std::int64_t> grid;
  std::int64_t voxels = 1, samples = 0;
  std::vector<T> k[3], times;
  reference::Points ksp, pos;
  std::vector<double> zeros_v, times_d;
  std::shared_ptr<const Encoding<T>> encoding;
};

template <class T>
Problem<T> make_problem(std::vector<std::int64_t> grid, std::int64_t m, std::uint64_t seed) {
  Problem<T> p;
  const int dim = static_cast<int>(grid.size());
  p.grid = grid;
  p.samples = m;
  for (auto g : grid) p.voxels *= g;
  Rng rng(seed);
  std::vector<double>* kd[3] = {&p.ksp.x, &p.ksp.y, &p.ksp.z};
  p.ksp.dim = dim;
  for (int d = 0; d < dim; ++d) {
    const double half = 0.5 * static_cast<double>(grid[d]);
    for (std::int64_t j = 0; j < m; ++j) {
      // The first two samples sit on the edges of k-space, -N/2 and N/2.
      const double v = j == 0 ? -half : (j == 1 ? half : rng.uniform(-half, half));
      p.k[d].push_back(static_cast<T>(v));
      kd[d]->push_back(static_cast<double>(p.k[d].back()));
    }
  }
  // Readout times without a field map: they change nothing (Δω = 0).
  for (std::int64_t j = 0; j < m; ++j) p.times.push_back(static_cast<T>(rng.uniform(0.0, 0.01)));
  p.times_d.assign(p.times.begin(), p.times.end());
  p.pos = voxel_positions(grid);
  p.zeros_v.assign(static_cast<std::size_t>(p.voxels), 0.0);
  p.encoding = std::make_shared<const Encoding<T>>(
      std::span<const std::int64_t>(p.grid), std::span<const T>(p.k[0]), std::span<const T>(p.k[1]),
      dim == 3 ? std::span<const T>(p.k[2]) : std::span<const T>(), std::span<const T>(p.times));
  return p;
}

// NufftEncoding (to its eps) and DftEncoding (to rounding) against the exact field-corrected DFT,
// forward and adjoint, 2D and 3D, odd and even sizes (⌊N/2⌋ is the centre voxel), and against
// each other on the same random image.
TYPED_TEST(EncodingOperators, NufftAndDftAgreeWithTheOracle) {
  using T = TypeParam;
  const Context c = battery_context();
  for (const auto& grid : {std::vector<std::int64_t>{12, 9}, std::vector<std::int64_t>{7, 6, 5}}) {
    SCOPED_TRACE(op::shape_string(grid));
    const auto p = make_problem<T>(grid, 150, 41);
    mri::NufftEncodingOptions no;
    no.eps = nufft_eps<T>();
    mri::NufftEncoding<T> nufft(p.encoding, c, no);
    mri::DftEncoding<T> dft(p.encoding, c);
    const auto x = random_complex<T>(p.voxels, 42), y = random_complex<T>(p.samples, 43);
    const auto want_f = reference::field_dft_forward(p.ksp, p.pos, p.zeros_v, p.times_d, widen(x));
    const auto want_a = reference::field_dft_adjoint(p.ksp, p.pos, p.zeros_v, p.times_d, widen(y));
    const auto nf = battery_detail::run_apply(nufft, x, false), na = battery_detail::run_apply(nufft, y, true);
    const auto df = battery_detail::run_apply(dft, x, false), da = battery_detail::run_apply(dft, y, true);
    // The NUFFT's accuracy criterion: relative l2 <= 2 eps.
    EXPECT_LE(rel_error(nf, want_f), 2 * nufft_eps<T>()) << "NufftEncoding forward";
    EXPECT_LE(rel_error(na, want_a), 2 * nufft_eps<T>()) << "NufftEncoding adjoint";
    EXPECT_LE(rel_error(df, want_f), dft_tol<T>()) << "DftEncoding forward";
    EXPECT_LE(rel_error(da, want_a), dft_tol<T>()) << "DftEncoding adjoint";
    EXPECT_LE(rel_error(nf, widen(df)), 2 * nufft_eps<T>() + dft_tol<T>()) << "NUFFT vs DFT";
  }
}

TYPED_TEST(EncodingOperators, PlansNamesAndBatches) {
  using T = TypeParam;
  const Context c = battery_context();
  const auto p = make_problem<T>({16, 12}, 200, 51);
  mri::NufftEncodingOptions no;
  no.eps = 1e-4;
  no.batch = 3;
  no.nufft.modeord = 1;  // ignored: the image is in increasing order
  mri::NufftEncoding<T> a(p.encoding, c, no);
  EXPECT_EQ(a.name(), "NufftEncoding(16x12 -> 200, batch 3)");
  EXPECT_EQ(a.domain_shape(), (op::Shape{16, 12, 3}));
  EXPECT_EQ(a.codomain_shape(), (op::Shape{200, 3}));
  EXPECT_EQ(a.forward_info().type, 2);
  EXPECT_EQ(a.forward_info().isign, -1);
  EXPECT_EQ(a.adjoint_info().type, 1);
  EXPECT_EQ(a.adjoint_info().isign, 1);
  for (const auto* info : {&a.forward_info(), &a.adjoint_info()}) {
    EXPECT_EQ(info->ntransf, 3);
    EXPECT_EQ(info->num_points, 200);
    EXPECT_EQ(info->modeord, 0);
    EXPECT_EQ(info->backend, kBackend);
  }
  // batched(K): one operator of batch B·K with shapes + {K}.
  auto b = a.batched(2);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->domain_shape(), (op::Shape{16, 12, 3, 2}));
  EXPECT_EQ(b->codomain_shape(), (op::Shape{200, 3, 2}));
  EXPECT_EQ(b->name(), "NufftEncoding(16x12 -> 200, batch 6)");
  EXPECT_TRUE(b->context().same_place(c));
  // ... and it applies the batch-3 operator to each half.
  const auto x = random_complex<T>(b->domain_size(), 52);
  const auto bx = battery_detail::run_apply(*b, x, false);
  const std::int64_t half = a.domain_size();
  const auto x0 = std::vector<std::complex<T>>(x.begin(), x.begin() + half);
  const auto x1 = std::vector<std::complex<T>>(x.begin() + half, x.end());
  auto ax = battery_detail::run_apply(a, x0, false);
  const auto ax1 = battery_detail::run_apply(a, x1, false);
  ax.insert(ax.end(), ax1.begin(), ax1.end());
  EXPECT_LE(rel_error(bx, widen(ax)), 1e-5);

  mri::DftR2Encoding<T> r2(p.encoding, c, {.batch = 2});
  EXPECT_EQ(r2.name(), "DftR2Encoding(16x12 -> 200, batch 2)");
  EXPECT_TRUE(r2.r2());
  auto r2b = r2.batched(3);
  EXPECT_EQ(r2b->domain_shape(), (op::Shape{16, 12, 2, 3}));
  EXPECT_EQ(r2b->name(), "DftR2Encoding(16x12 -> 200, batch 6)");
}

TYPED_TEST(EncodingOperators, RefusesWhatItCannotModel) {
  using T = TypeParam;
  const Context c = battery_context();
  const auto p = make_problem<T>({8, 8}, 20, 61);
  const std::vector<T> field(64, T(100));
  auto with_field = std::make_shared<const Encoding<T>>(std::span<const std::int64_t>(p.grid), p.k[0], p.k[1],
                                                        std::span<const T>(), p.times, field);
  EXPECT_TRUE(throws_error([&] { (void)mri::NufftEncoding<T>(with_field, c); }, ErrorCode::kInvalidArgument,
                           {"field map", "DftEncoding", "time segmentation"}));
  EXPECT_NO_THROW((void)mri::DftEncoding<T>(with_field, c));
  EXPECT_TRUE(throws_error([&] { (void)mri::NufftEncoding<T>(nullptr, c); }, ErrorCode::kInvalidArgument, {"null"}));
  EXPECT_TRUE(throws_error([&] { (void)mri::DftEncoding<T>(nullptr, c); }, ErrorCode::kInvalidArgument, {"null"}));
  mri::NufftEncodingOptions zero_batch, tiny_eps;
  zero_batch.batch = 0;
  tiny_eps.eps = 1e-20;
  EXPECT_TRUE(throws_error([&] { (void)mri::NufftEncoding<T>(p.encoding, c, zero_batch); },
                           ErrorCode::kInvalidArgument, {"batch"}));
  EXPECT_TRUE(throws_error([&] { (void)mri::DftEncoding<T>(p.encoding, c, {.batch = 0}); },
                           ErrorCode::kInvalidArgument, {"batch"}));
  // The NUFFT's own checks come through.
  EXPECT_TRUE(throws_error([&] { (void)mri::NufftEncoding<T>(p.encoding, c, tiny_eps); },
                           ErrorCode::kEpsTooSmall, {"eps"}));
}

// The operators run in the context they are given: its threads on the host.
TEST(EncodingContext, HostThreadsComeFromTheContext) {
  const auto p = make_problem<float>({8, 8}, 30, 71);
  mri::NufftEncoding<float> a(p.encoding, Context::host(1));
  EXPECT_EQ(a.forward_info().nthreads, 1);
  EXPECT_EQ(a.adjoint_info().nthreads, 1);
  EXPECT_EQ(a.forward_info().backend, Backend::kCpu);
}

}  // namespace
}  // namespace fieldft::test
