// GPU-only checks of the field-corrected DFT: the full 64³ × 262144 case against the oracle,
// CPU/GPU parity, device-pointer entry points and the op::LinearOperator interface on device
// vectors. Label gpu; every test skips itself without a CUDA device.
#include <cuda_runtime.h>

#include "dft_test_common.hpp"
#include "fieldft/op/combinators.hpp"

namespace fieldft::test {
namespace {

class DftGpu : public ::testing::Test {
 protected:
  void SetUp() override { FIELDFT_TEST_SKIP_UNLESS_AVAILABLE(Backend::kCuda); }
};

// Device copy of a host vector, freed at scope exit.
template <class T>
class DeviceVector {
 public:
  explicit DeviceVector(std::size_t n) : n_(n) {
    if (cudaMalloc(&p_, std::max<std::size_t>(n, 1) * sizeof(T)) != cudaSuccess) throw std::bad_alloc();
  }
  explicit DeviceVector(const std::vector<T>& v) : DeviceVector(v.size()) {
    cudaMemcpy(p_, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice);
  }
  ~DeviceVector() { cudaFree(p_); }
  DeviceVector(const DeviceVector&) = delete;
  DeviceVector& operator=(const DeviceVector&) = delete;
  T* get() const { return p_; }
  std::vector<T> host() const {
    std::vector<T> v(n_);
    cudaMemcpy(v.data(), p_, n_ * sizeof(T), cudaMemcpyDeviceToHost);
    return v;
  }

 private:
  T* p_ = nullptr;
  std::size_t n_;
};

// The case: 64³ voxels, 262144 samples, random k over the whole k-space; the oracle
// runs at 512 random outputs of each direction. Two field maps: a random ±50 Hz map with
// readouts to 41 ms (spatial phases to 2π·48 cycles ≈ 300 rad dominate), and a smooth map of
// up to 4 kHz with readouts to 100 ms: field phases to 2π·400 cycles ≈ 2500 rad, the
// "thousands of radians" of the requirement.
void check_full_size(const DftProblem<float>& p, const char* what) {
  auto op = make_dft(p);
  const auto x = random_complex<float>(p.voxels, 2001);
  const auto xp = positive_image<float>(p.voxels, 2002);
  const auto y = random_complex<float>(p.samples, 2003);
  std::vector<std::complex<float>> ax(p.samples), axp(p.samples), ahy(p.voxels);
  op->forward(x.data(), ax.data());
  op->forward(xp.data(), axp.data());
  op->adjoint(y.data(), ahy.data());
  const auto js = index_subset(p.samples, 512, 3001);
  const auto vs = index_subset(p.voxels, 512, 3002);
  const double ef = reference::rel_l2_error<cdouble>(pick(ax, 0, js), oracle_forward_at(p, widen(x), js));
  const double efp = reference::rel_l2_error<cdouble>(pick(axp, 0, js), oracle_forward_at(p, widen(xp), js));
  const double ea = reference::rel_l2_error<cdouble>(pick(ahy, 0, vs), oracle_adjoint_at(p, widen(y), vs));
  std::printf("[ 64^3 x 262144 float, %s ] forward %.2e, forward (positive image) %.2e, adjoint %.2e\n", what,
              ef, efp, ea);
  // The requirement for float at this size (the design's kernel measured 2.2e-4).
  EXPECT_LT(ef, 1e-5) << what;
  EXPECT_LT(efp, 1e-5) << what;
  EXPECT_LT(ea, 1e-5) << what;
}

TEST_F(DftGpu, Full64CubedAgainstOracle) {
  check_full_size(make_dft_problem<float>({64, 64, 64}, 262144, 1001), "random 50 Hz field, 41 ms");
}

TEST_F(DftGpu, Full64CubedThousandsOfRadians) {
  check_full_size(make_dft_problem<float>({64, 64, 64}, 262144, 1004, 4000.0, 0.1, FieldKind::kSmooth),
                  "smooth 4 kHz field, 100 ms");
}

// 32 images in one call (the tensor-core path) at the full size.
TEST_F(DftGpu, Full64CubedThirtyTwoImages) {
  const std::int64_t c = 32;
  const auto p = make_dft_problem<float>({64, 64, 64}, 262144, 1002);
  auto op = make_dft(p, c);
  const auto x = random_complex<float>(p.voxels * c, 2011);
  const auto y = random_complex<float>(p.samples * c, 2012);
  std::vector<std::complex<float>> ax(p.samples * c), ahy(p.voxels * c);
  op->forward(x.data(), ax.data());
  op->adjoint(y.data(), ahy.data());
  const auto js = index_subset(p.samples, 48, 3011);
  const auto vs = index_subset(p.voxels, 48, 3012);
  // Oracle over the subsets, for all 32 images together (the outputs of all images).
  std::vector<cdouble> got_f, want_f, got_a, want_a;
  for (std::int64_t i = 0; i < c; ++i) {
    const std::vector<std::complex<float>> xi(x.begin() + i * p.voxels, x.begin() + (i + 1) * p.voxels);
    const std::vector<std::complex<float>> yi(y.begin() + i * p.samples, y.begin() + (i + 1) * p.samples);
    auto wf = oracle_forward_at(p, widen(xi), js);
    auto wa = oracle_adjoint_at(p, widen(yi), vs);
    auto gf = pick(ax, i * p.samples, js);
    auto ga = pick(ahy, i * p.voxels, vs);
    want_f.insert(want_f.end(), wf.begin(), wf.end());
    want_a.insert(want_a.end(), wa.begin(), wa.end());
    got_f.insert(got_f.end(), gf.begin(), gf.end());
    got_a.insert(got_a.end(), ga.begin(), ga.end());
  }
  const double ef = reference::rel_l2_error<cdouble>(got_f, want_f);
  const double ea = reference::rel_l2_error<cdouble>(got_a, want_a);
  std::printf("[ 64^3 x 262144 x 32 images float ] forward %.2e, adjoint %.2e\n", ef, ea);
  EXPECT_LT(ef, 1e-5);
  EXPECT_LT(ea, 1e-5);
}

TEST_F(DftGpu, CpuAndGpuAgree) {
  const auto p = make_dft_problem<float>({24, 20, 16}, 5000, 1003);
  for (std::int64_t c : {1, 3}) {
    for (bool r2 : {false, true}) {
      std::unique_ptr<mri::Dft<float>> cpu, gpu;
      mri::DftOptions oc = dft_options(c), og = dft_options(c);
      oc.backend = Backend::kCpu;
      og.backend = Backend::kCuda;
      auto build = [&](const mri::DftOptions& o) -> std::unique_ptr<mri::Dft<float>> {
        if (r2)
          return std::make_unique<mri::DftR2<float>>(p.grid, std::span<const float>(p.kx), std::span<const float>(p.ky),
                                                     p.kz_span(), std::span<const float>(p.field),
                                                     std::span<const float>(p.times), o);
        return std::make_unique<mri::Dft<float>>(p.grid, std::span<const float>(p.kx), std::span<const float>(p.ky),
                                                 p.kz_span(), std::span<const float>(p.field),
                                                 std::span<const float>(p.times), o);
      };
      cpu = build(oc);
      gpu = build(og);
      const auto x = random_complex<float>(p.voxels * c, 2021);
      const auto y = random_complex<float>(p.samples * c, 2022);
      std::vector<std::complex<float>> fc(p.samples * c), fg(p.samples * c), ac(p.voxels * c), ag(p.voxels * c);
      cpu->forward(x.data(), fc.data());
      gpu->forward(x.data(), fg.data());
      cpu->adjoint(y.data(), ac.data());
      gpu->adjoint(y.data(), ag.data());
      const double df = rel_error(fg, widen(fc)), da = rel_error(ag, widen(ac));
      std::printf("[ CPU vs GPU, %lld images%s ] forward %.2e, adjoint %.2e\n", static_cast<long long>(c),
                  r2 ? ", R2*" : "", df, da);
      // The requirement; each side is ~1e-6 from the oracle.
      EXPECT_LT(df, 1e-5);
      EXPECT_LT(da, 1e-5);
    }
  }
}

// Every kernel variant the CUDA engine's knobs reach (DftTuning): float CUDA-core kernels with
// 0-3 of 8 pairs on the polynomial, the warp-specialised forward (4), and the CUDA cores where
// the tensor cores would run (tc_min_images 0, 4 images), all against the CPU engine; bad knobs
// refused. Tolerance as in CpuAndGpuAgree (each side ~1e-6 from the oracle).
TEST_F(DftGpu, TuningVariantsAgreeWithCpu) {
  const auto p = make_dft_problem<float>({24, 20, 16}, 5000, 1005);
  auto build = [&](const mri::DftOptions& o) {
    return std::make_unique<mri::Dft<float>>(p.grid, std::span<const float>(p.kx), std::span<const float>(p.ky),
                                             p.kz_span(), std::span<const float>(p.field),
                                             std::span<const float>(p.times), o);
  };
  for (const std::int64_t c : {1, 4}) {
    mri::DftOptions oc = dft_options(c);
    oc.backend = Backend::kCpu;
    auto cpu = build(oc);
    const auto x = random_complex<float>(p.voxels * c, 2031);
    const auto y = random_complex<float>(p.samples * c, 2032);
    std::vector<std::complex<float>> fc(p.samples * c), ac(p.voxels * c);
    cpu->forward(x.data(), fc.data());
    cpu->adjoint(y.data(), ac.data());
    const mri::DftTuning variants[] = {{0, -1}, {1, -1}, {2, -1}, {3, -1}, {4, -1}, {-1, 0}, {2, 0}};
    for (const mri::DftTuning& t : variants) {
      mri::DftOptions og = dft_options(c);
      og.backend = Backend::kCuda;
      og.tuning = t;
      auto gpu = build(og);
      std::vector<std::complex<float>> fg(p.samples * c), ag(p.voxels * c);
      gpu->forward(x.data(), fg.data());
      gpu->adjoint(y.data(), ag.data());
      EXPECT_LT(rel_error(fg, widen(fc)), 1e-5) << c << " images, poly " << t.poly << ", tc_min_images " << t.tc_min_images;
      EXPECT_LT(rel_error(ag, widen(ac)), 1e-5) << c << " images, poly " << t.poly << ", tc_min_images " << t.tc_min_images;
    }
  }
  mri::DftOptions bad = dft_options(1);
  bad.backend = Backend::kCuda;
  bad.tuning.poly = 5;
  EXPECT_THROW(build(bad), Error);
  bad.tuning = {-1, -2};
  EXPECT_THROW(build(bad), Error);
}

TEST_F(DftGpu, DevicePointersAndOperatorInterface) {
  const auto p = make_dft_problem<float>({16, 16, 8}, 3000, 1004);
  cudaStream_t user = nullptr;
  ASSERT_EQ(cudaStreamCreate(&user), cudaSuccess);
  // A borrowed stream must outlive every operator on it (context.hpp): destroy it last.
  struct StreamOwner {
    cudaStream_t s;
    ~StreamOwner() { cudaStreamDestroy(s); }
  } owner{user};
  mri::DftOptions o = dft_options();
  o.stream = user;  // the operator runs on the caller's stream
  auto a = std::make_shared<mri::Dft<float>>(p.grid, std::span<const float>(p.kx), std::span<const float>(p.ky),
                                             p.kz_span(), std::span<const float>(p.field),
                                             std::span<const float>(p.times), o);
  ASSERT_TRUE(a->location().is_cuda());
  EXPECT_EQ(a->context().stream(), static_cast<void*>(user));
  const auto x = random_complex<float>(p.voxels, 2031);
  std::vector<std::complex<float>> ax(p.samples), ahax(p.voxels);
  a->forward(x.data(), ax.data());
  a->adjoint(ax.data(), ahax.data());

  // Device-pointer calls are stream-ordered: synchronise the context before reading.
  DeviceVector<std::complex<float>> dx(x), dy(p.samples), dz(p.voxels);
  a->forward_device(dx.get(), dy.get());
  a->context().synchronize();
  // Same kernels as the host entry point, which only adds copies: identical results.
  EXPECT_EQ(rel_error(dy.host(), widen(ax)), 0.0);
  a->apply(dx.get(), dy.get());
  a->context().synchronize();
  EXPECT_EQ(rel_error(dy.host(), widen(ax)), 0.0);
  a->apply_normal(dx.get(), dz.get());  // default AᴴA through a device temporary
  a->context().synchronize();
  EXPECT_EQ(rel_error(dz.host(), widen(ahax)), 0.0);

  const std::complex<float> alpha(2.0f, -1.0f);
  auto scaled = op::scale<float>(alpha, a);
  scaled->apply(dx.get(), dy.get());
  a->context().synchronize();
  std::vector<std::complex<float>> want(ax);
  for (auto& v : want) v *= alpha;
  // One complex multiplication more than the reference: float rounding.
  EXPECT_LT(rel_error(dy.host(), widen(want)), 1e-6);
}

}  // namespace
}  // namespace fieldft::test
