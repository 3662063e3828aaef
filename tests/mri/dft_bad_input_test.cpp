// Bad input to Dft / DftR2: every failure is a fieldft::Error with the right code and a message
// that names the offending array (and index).
#include <complex>
#include <limits>
#include <vector>

#include "dft_test_common.hpp"
#include "fieldft/nufft.hpp"

namespace fieldft::test {
namespace {

class DftBadInput : public ::testing::Test {
 protected:
  void SetUp() override { FIELDFT_TEST_SKIP_UNLESS_AVAILABLE(kBackend); }
  using V = std::vector<float>;
  std::vector<std::int64_t> grid3{4, 4, 4}, grid2{4, 4};
  V k{0.5f, 1.f, -2.f}, t{0.f, 0.001f, 0.002f}, f64 = V(64, 10.f), f16 = V(16, 10.f), none;

  mri::Dft<float> make3(const V& kx, const V& ky, const V& kz, const V& field, const V& times,
                        std::int64_t images = 1) {
    return mri::Dft<float>(grid3, kx, ky, kz, field, times, dft_options(images));
  }
};

TEST_F(DftBadInput, MismatchedLengthsNameTheArray) {
  EXPECT_TRUE(throws_error([&] { make3(k, V{1.f, 2.f}, k, f64, t); }, ErrorCode::kShapeMismatch, {"ky", "3"}));
  EXPECT_TRUE(throws_error([&] { make3(k, k, V{1.f}, f64, t); }, ErrorCode::kShapeMismatch, {"kz"}));
  EXPECT_TRUE(throws_error([&] { make3(k, k, k, V(63, 0.f), t); }, ErrorCode::kShapeMismatch, {"field", "64"}));
  EXPECT_TRUE(throws_error([&] { make3(k, k, k, f64, V{0.f}); }, ErrorCode::kShapeMismatch, {"times"}));
  EXPECT_TRUE(throws_error([&] { mri::Dft<float>(grid2, k, k, k, f16, t, dft_options()); },
                           ErrorCode::kShapeMismatch, {"kz", "2D"}));
  const V g16(16, 1.f), g15(15, 1.f);
  EXPECT_TRUE(throws_error(
      [&] { mri::DftR2<float>(grid2, k, k, none, f16, t, mri::GradientMaps<float>{g16, g15, {}}, dft_options()); },
      ErrorCode::kShapeMismatch, {"gy"}));
  EXPECT_TRUE(throws_error(
      [&] { mri::DftR2<float>(grid2, k, k, none, f16, t, mri::GradientMaps<float>{g16, g16, g16}, dft_options()); },
      ErrorCode::kShapeMismatch, {"gz"}));
}

TEST_F(DftBadInput, NonFiniteValuesNameArrayAndIndex) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  V bad = k;
  bad[1] = nan;
  EXPECT_TRUE(throws_error([&] { make3(bad, k, k, f64, t); }, ErrorCode::kNonFinite, {"kx[1]"}));
  EXPECT_TRUE(throws_error([&] { make3(k, k, bad, f64, t); }, ErrorCode::kNonFinite, {"kz[1]"}));
  V badf = f64;
  badf[37] = -inf;
  EXPECT_TRUE(throws_error([&] { make3(k, k, k, badf, t); }, ErrorCode::kNonFinite, {"field[37]"}));
  V badt = t;
  badt[2] = inf;
  EXPECT_TRUE(throws_error([&] { make3(k, k, k, f64, badt); }, ErrorCode::kNonFinite, {"times[2]"}));
  V g = V(16, 0.f);
  g[5] = nan;
  EXPECT_TRUE(throws_error(
      [&] { mri::DftR2<float>(grid2, k, k, none, f16, t, mri::GradientMaps<float>{V(16, 0.f), g, {}}, dft_options()); },
      ErrorCode::kNonFinite, {"gy[5]"}));
  EXPECT_TRUE(throws_error([&] { (void)mri::compute_gradient_maps<float>(grid2, badf); },
                           ErrorCode::kShapeMismatch, {"field"}));
}

TEST_F(DftBadInput, GridAndOptions) {
  EXPECT_TRUE(throws_error([&] { mri::Dft<float>(std::vector<std::int64_t>{8}, k, k, none, none, none, dft_options()); },
                           ErrorCode::kInvalidArgument, {"2 or 3"}));
  EXPECT_TRUE(throws_error([&] { mri::Dft<float>(std::vector<std::int64_t>{4, 0}, k, k, none, none, none, dft_options()); },
                           ErrorCode::kInvalidArgument, {"grid size 1", ">= 1"}));
  EXPECT_TRUE(throws_error([&] { make3(k, k, k, f64, t, 0); }, ErrorCode::kInvalidArgument, {"images"}));
  mri::DftOptions threads = dft_options();
  threads.nthreads = -1;
  EXPECT_TRUE(throws_error([&] { mri::Dft<float>(grid3, k, k, k, f64, t, threads); },
                           ErrorCode::kInvalidArgument, {"nthreads", "-1"}));
}

// nthreads far beyond the machine (100000 made the OpenMP runtime abort the process) is capped at
// fieldft::max_cpu_threads(), the NUFFT plan's rule: the operator works and gives what one thread
// gives, to rounding.
TEST_F(DftBadInput, HugeThreadCountIsCapped) {
  mri::DftOptions many = dft_options(), one = dft_options();
  many.nthreads = 100000;
  one.nthreads = 1;
  mri::Dft<float> a(grid3, k, k, k, f64, t, many), b(grid3, k, k, k, f64, t, one);
  std::vector<std::complex<float>> image(64), sa(3), sb(3), ia(64), ib(64);
  for (std::size_t v = 0; v < image.size(); ++v) image[v] = {0.1f * static_cast<float>(v), 1.f - 0.01f * static_cast<float>(v)};
  a.forward(image.data(), sa.data());
  b.forward(image.data(), sb.data());
  EXPECT_LE(rel_error(sa, widen(sb)), 1e-6);
  a.adjoint(sa.data(), ia.data());
  b.adjoint(sb.data(), ib.data());
  EXPECT_LE(rel_error(ia, widen(ib)), 1e-6);
  EXPECT_EQ(cpu_threads_for(100000), max_cpu_threads());
  if (kBackend == Backend::kCpu) {  // the threads the operators use
    EXPECT_EQ(a.nthreads(), max_cpu_threads());
    EXPECT_EQ(b.nthreads(), 1);
  }
}

TEST_F(DftBadInput, SizesBeyondSixtyFourBits) {
  // 2^40 · 2^40 · 2^40 voxels cannot be indexed; neither can 2^60 voxels × 16 images × 8 bytes.
  const std::int64_t big = std::int64_t(1) << 40;
  EXPECT_TRUE(throws_error([&] { mri::Dft<float>(std::vector<std::int64_t>{big, big, big}, k, k, k, none, none, dft_options()); },
                           ErrorCode::kTooLarge, {"voxels"}));
  const std::int64_t half = std::int64_t(1) << 30;
  EXPECT_TRUE(throws_error([&] { mri::Dft<float>(std::vector<std::int64_t>{half, half}, k, k, none, none, none, dft_options(16)); },
                           ErrorCode::kTooLarge, {"overflows"}));
}

TEST_F(DftBadInput, PointersAndBackends) {
  auto op = make3(k, k, k, f64, t);
  std::vector<std::complex<float>> x(64), y(3);
  EXPECT_TRUE(throws_error([&] { op.forward(nullptr, y.data()); }, ErrorCode::kInvalidArgument, {"input", "null"}));
  EXPECT_TRUE(throws_error([&] { op.adjoint(y.data(), nullptr); }, ErrorCode::kInvalidArgument, {"output", "null"}));
  if (kBackend == Backend::kCpu) {
    EXPECT_TRUE(throws_error([&] { op.forward_device(x.data(), y.data()); }, ErrorCode::kBackendUnavailable,
                             {"forward_device", "CUDA"}));
  } else {
    // Host memory handed to a device entry point is caught, not dereferenced on the GPU.
    EXPECT_TRUE(throws_error([&] { op.forward_device(x.data(), y.data()); }, ErrorCode::kInvalidArgument,
                             {"device memory"}));
  }
#if !FIELDFT_HAVE_CUDA
  mri::DftOptions cuda;
  cuda.backend = Backend::kCuda;
  EXPECT_TRUE(throws_error([&] { mri::Dft<float>(grid3, k, k, k, f64, t, cuda); }, ErrorCode::kBackendUnavailable,
                           {"CUDA"}));
#endif
}

}  // namespace
}  // namespace fieldft::test
