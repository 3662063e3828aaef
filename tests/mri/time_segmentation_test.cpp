// mri::TimeSegmentedEncoding (fieldft/mri/time_segmentation.hpp) on the backend under test
// (FIELDFT_TEST_BACKEND): the generic operator battery, the accuracy at the chosen L against the
// exact DftEncoding over a sweep of field ranges and readout lengths for both interpolators, the
// growth of L with field range × readout, the report, batching, and bad input. CPU/GPU parity
// comes with the battery in the GPU executable.
//
// Data (fieldft/mri/simulate.hpp): Archimedean spirals at the Nyquist spacing, readout times
// t = s·dwell over each interleave (so times repeat per readout), smooth Gaussian-blob field maps
// of ±max_hz, the modified Shepp–Logan phantom. Values are rounded to T first and the exact
// operator is DftEncoding<double> on those rounded values, so that comparisons measure the
// approximation, not the rounding of its input.
#include "fieldft/mri/time_segmentation.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <memory>
#include <numbers>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "fieldft/context.hpp"
#include "fieldft/mri/encoding.hpp"
#include "fieldft/mri/sense.hpp"
#include "fieldft/mri/simulate.hpp"
#include "fieldft/op/combinators.hpp"
#include "fieldft/solve/cg.hpp"
#include "support/battery.hpp"
#include "support/context_vector.hpp"
#include "support/operator_battery.hpp"

namespace fieldft::test {
namespace {

using op::OperatorPtr;

// NUFFT tolerances: near the floor of each precision, so that the sweep measures the segmentation.
template <class T>
constexpr double nufft_eps() {
  return std::is_same_v<T, float> ? 1e-5 : 1e-9;
}

// ---------------------------------------------------------------------------------------------
// A simulated scan in precision T, and the same rounded values in double for the exact operator.

template <class T>
struct Scan {
  std::vector<std::int64_t> grid;
  std::vector<T> kx, ky, kz, times, field;
  std::shared_ptr<const mri::Encoding<T>> encoding;
  std::shared_ptr<const mri::Encoding<double>> exact;  // the same values, in double
  std::int64_t voxels = 1, samples = 0;
};

template <class T>
std::vector<T> rounded(const std::vector<double>& v) {
  return std::vector<T>(v.begin(), v.end());
}

template <class T>
std::vector<double> widened(const std::vector<T>& v) {
  return std::vector<double>(v.begin(), v.end());
}

// Spiral interleaves of `readout_s` seconds each; a field map of ±max_hz (0: none).
template <class T>
Scan<T> make_scan(std::vector<std::int64_t> grid, double max_hz, double readout_s, std::uint64_t seed = 1) {
  Scan<T> s;
  s.grid = std::move(grid);
  for (auto g : s.grid) s.voxels *= g;
  const auto traj = mri::spiral_trajectory(s.grid);
  s.samples = traj.size();
  s.kx = rounded<T>(traj.kx);
  s.ky = rounded<T>(traj.ky);
  s.kz = rounded<T>(traj.kz);
  s.times = rounded<T>(mri::readout_times(traj, readout_s / static_cast<double>(traj.samples)));
  if (max_hz > 0) s.field = rounded<T>(mri::field_map(s.grid, {.max_hz = max_hz, .blobs = 3, .seed = seed}));
  const std::span<const std::int64_t> g(s.grid);
  const bool three = s.grid.size() == 3;
  s.encoding = std::make_shared<const mri::Encoding<T>>(g, std::span<const T>(s.kx), std::span<const T>(s.ky),
                                                        three ? std::span<const T>(s.kz) : std::span<const T>(),
                                                        std::span<const T>(s.times), std::span<const T>(s.field));
  const auto kx = widened(s.kx), ky = widened(s.ky), kz = widened(s.kz), t = widened(s.times), f = widened(s.field);
  s.exact = std::make_shared<const mri::Encoding<double>>(g, std::span<const double>(kx), std::span<const double>(ky),
                                                          three ? std::span<const double>(kz) : std::span<const double>(),
                                                          std::span<const double>(t), std::span<const double>(f));
  return s;
}

template <class T>
mri::TimeSegmentationOptions options(mri::SegmentInterpolator kind, double accuracy, std::int64_t batch = 1) {
  mri::TimeSegmentationOptions o;
  o.interpolator = kind;
  o.accuracy = accuracy;
  o.eps = nufft_eps<T>();
  o.batch = batch;
  o.max_segments = 256;
  o.toeplitz = mri::Toeplitz::kOff;  // the exact normal of the approximation; the Toeplitz one below
  return o;
}

// ---------------------------------------------------------------------------------------------
// Battery registrations (small grids; ±60 Hz over 10 ms readouts: L of a few segments).
//
// Tolerances: the forward is C·N₂·E and the adjoint Eᴴ·N₁·Cᴴ, with E, C the expand and combine
// passes (exact adjoints of each other to rounding) and N₂, N₁ the NUFFT's type 2 and type 1
// plans, each within 2·eps of the exact transforms. The adjointness defect is therefore that of
// the NUFFT pair on the stacked vectors Ex and Cᴴy: 4·eps·‖Ex‖‖Cᴴy‖, where ‖Ex‖ = √L‖x‖ and
// ‖Cᴴy‖ <= A·‖y‖ with A = max_t Σ_l |h_l(t)| (report().amplification), against ‖Ax‖‖y‖ ≈ ‖x‖‖y‖
// for M ≈ N: 4·eps·√L·A. CPU/GPU parity: each backend within 2·eps·A of the exact model per
// output, so 4·eps·√L·A as well. Linearity, normal and repeats are rounding-level (the
// approximation is one fixed linear map).

template <class T>
OperatorTolerances tolerances(const Scan<T>& s, const mri::TimeSegmentationOptions& o) {
  const auto r = mri::plan_time_segmentation(*s.encoding, o);
  const double e = 4 * o.eps * std::sqrt(static_cast<double>(r.segments)) * std::max(1.0, r.amplification);
  return {.adjointness = e, .parity = e};
}

const std::vector<std::int64_t> kGrid2{16, 12}, kGrid3{10, 8, 6};

template <class T>
bool register_time_segmented(const std::string& p) {
  using mri::SegmentInterpolator;
  auto reg = [&p](const std::string& name, const std::vector<std::int64_t>& grid, double hz, std::int64_t batch,
                  mri::TimeSegmentationOptions o, std::int64_t k = 1) {
    o.batch = batch;
    const auto tol = tolerances(make_scan<T>(grid, hz, 10e-3), o);
    register_operator_battery<T>(name + p, [grid, hz, o, k](const Context& c) -> OperatorPtr<T> {
      auto a = std::make_shared<mri::TimeSegmentedEncoding<T>>(make_scan<T>(grid, hz, 10e-3).encoding, c, o);
      return k > 1 ? op::batch<T>(a, k) : a;
    }, tol, __FILE__, __LINE__);
  };
  const auto ls = options<T>(SegmentInterpolator::kLeastSquares, 1e-3);
  const auto hann = options<T>(SegmentInterpolator::kHanning, 5e-2);
  reg("TimeSegmented2DLeastSquares", kGrid2, 60, 1, ls);
  reg("TimeSegmented2DHanningBatch3", kGrid2, 60, 3, hann);
  reg("TimeSegmented3DLeastSquaresBatch2", kGrid3, 60, 2, ls);
  reg("TimeSegmented2DNoField", kGrid2, 0, 1, ls);
  reg("BatchOfTimeSegmented2D", kGrid2, 60, 2, ls, 2);  // batched(2) of batch 2: one NUFFT of batch 4·L
  // SENSE on it: mri::sense's second form, y_c = E(S_c ∘ x) with E of batch C (one NUFFT of L·C).
  {
    auto o = ls;
    o.batch = 3;
    const auto tol = tolerances(make_scan<T>(kGrid2, 60, 10e-3), o);
    register_operator_battery<T>("SenseTimeSegmented2D" + p, [o](const Context& c) -> OperatorPtr<T> {
      const auto maps = mri::coil_maps(kGrid2, 3);
      auto e = std::make_shared<mri::TimeSegmentedEncoding<T>>(make_scan<T>(kGrid2, 60, 10e-3).encoding, c, o);
      return mri::sense<T>(e, std::vector<std::complex<T>>(maps.begin(), maps.end()), op::Shape{16, 12, 3});
    }, tol, __FILE__, __LINE__);
  }
  // The field-corrected Toeplitz normal (fieldft/mri/field_toeplitz.hpp), taken by kAuto on a grid
  // the device's fused path runs ({16, 8}), and on grids its cuFFT path runs ({20, 12} with SENSE,
  // {8, 6, 4}): its normal is AᴴA within about the accuracy (5× for the interpolator's l1 norm
  // and the kernels' eps), and so are host against device.
  {
    auto o = ls;
    o.toeplitz = mri::Toeplitz::kAuto;
    const auto toeplitz_tol = [](const std::vector<std::int64_t>& grid, const mri::TimeSegmentationOptions& q) {
      auto tol = tolerances(make_scan<T>(grid, 60, 10e-3), q);
      tol.normal = 5 * q.accuracy;
      tol.parity = std::max(tol.parity, 5 * q.accuracy);
      return tol;
    };
    const auto plain = [&](const std::string& name, std::vector<std::int64_t> grid) {
      register_operator_battery<T>(name + p, [o, grid](const Context& c) -> OperatorPtr<T> {
        return std::make_shared<mri::TimeSegmentedEncoding<T>>(make_scan<T>(grid, 60, 10e-3).encoding, c, o);
      }, toeplitz_tol(grid, o), __FILE__, __LINE__);
    };
    const auto sense = [&](const std::string& name, std::vector<std::int64_t> grid) {
      auto q = o;
      q.batch = 3;
      op::Shape shape(grid.begin(), grid.end());
      shape.push_back(3);
      register_operator_battery<T>(name + p, [q, grid, shape](const Context& c) -> OperatorPtr<T> {
        const auto maps = mri::coil_maps(grid, 3);
        auto e = std::make_shared<mri::TimeSegmentedEncoding<T>>(make_scan<T>(grid, 60, 10e-3).encoding, c, q);
        return mri::sense<T>(e, std::vector<std::complex<T>>(maps.begin(), maps.end()), shape);
      }, toeplitz_tol(grid, q), __FILE__, __LINE__);
    };
    plain("TimeSegmentedToeplitz2D", {16, 8});
    sense("SenseTimeSegmentedToeplitz2D", {16, 8});
    sense("SenseTimeSegmentedToeplitz2DNonPowerOfTwo", {20, 12});
    plain("TimeSegmentedToeplitz3D", {8, 6, 4});
  }
  return true;
}

[[maybe_unused]] const bool registered = register_time_segmented<float>("Float") && register_time_segmented<double>("Double");

// ---------------------------------------------------------------------------------------------

template <class T>
class TimeSegmentation : public ::testing::Test {
 protected:
  void SetUp() override { FIELDFT_TEST_SKIP_UNLESS_AVAILABLE(kBackend); }
};
using Precisions = ::testing::Types<float, double>;
TYPED_TEST_SUITE(TimeSegmentation, Precisions);

// The exact results to compare with: DftEncoding<double> applied to the phantom (forward) and to
// random data (adjoint).
template <class T>
struct Exact {
  std::vector<std::complex<T>> x, y;
  std::vector<cdouble> forward, adjoint;
};

template <class T>
Exact<T> exact_results(const Scan<T>& s) {
  Exact<T> e;
  const auto phantom = mri::shepp_logan(s.grid);
  e.x.assign(phantom.begin(), phantom.end());
  e.y = random_complex<T>(s.samples, 7);
  mri::DftEncoding<double> dft(s.exact, Context::host());
  e.forward = battery_detail::run_apply(dft, widen(e.x), false);
  e.adjoint = battery_detail::run_apply(dft, widen(e.y), true);
  return e;
}

// Relative l2 of the time-segmented forward and adjoint against the exact ones.
template <class T>
std::pair<double, double> errors_against_exact(mri::TimeSegmentedEncoding<T>& a, const Exact<T>& e) {
  return {rel_error(battery_detail::run_apply(a, e.x, false), e.forward),
          rel_error(battery_detail::run_apply(a, e.y, true), e.adjoint)};
}

// The sweep of the issue: field ranges ±50, ±150, ±300 Hz × readouts of 2, 10, 25 ms, for both
// interpolators, at the L each chooses. Threshold: the requested accuracy plus the NUFFT's share,
// 2·eps·A (each transform within 2·eps, amplified at most by A = max Σ_l |h_l| through the sum over
// segments), plus 1e-5 in float for the rounding of the phases and sums in T. The accuracy bounds
// the worst-case phase error at every voxel and time, so it bounds the relative l2 of the
// forward result as long as no cancellation between voxels makes a sample small against its
// errors; with the phantom and a smooth field the measured errors are 30-100× below it for least
// squares and about 5× for Hanning (docs/architecture.md).
// Least squares is asked for 1e-3 (and 1e-5 in double, to show the bound is not loose by
// construction), Hanning for 5e-2 (its error is first order in Δω·Δτ: 1e-3 would need ~5000
// segments at ±300 Hz × 25 ms).
TYPED_TEST(TimeSegmentation, ErrorAtTheChosenLMeetsTheAccuracy) {
  using T = TypeParam;
  using mri::SegmentInterpolator;
  struct Case {
    SegmentInterpolator kind;
    double accuracy;
  };
  std::vector<Case> cases{{SegmentInterpolator::kLeastSquares, 1e-3}, {SegmentInterpolator::kHanning, 5e-2}};
  if (std::is_same_v<T, double>) cases.push_back({SegmentInterpolator::kLeastSquares, 1e-5});
  const std::vector<std::int64_t> grid{32, 32};
  for (double hz : {50.0, 150.0, 300.0}) {
    for (double ms : {2.0, 10.0, 25.0}) {
      const auto s = make_scan<T>(grid, hz, ms * 1e-3, 3);
      const auto exact = exact_results(s);
      for (const Case& c : cases) {
        auto o = options<T>(c.kind, c.accuracy);
        mri::TimeSegmentedEncoding<T> a(s.encoding, battery_context(), o);
        const auto& r = a.report();
        SCOPED_TRACE(::testing::Message() << hz << " Hz, " << ms << " ms: " << r.reason << "; amplification "
                                          << r.amplification);
        EXPECT_LE(r.worst_error, c.accuracy);
        const double bound = c.accuracy + 2 * o.eps * r.amplification + (std::is_same_v<T, float> ? 1e-5 : 0.0);
        const auto [forward, adjoint] = errors_against_exact(a, exact);
        EXPECT_LE(forward, bound) << "forward, L = " << r.segments;
        EXPECT_LE(adjoint, bound) << "adjoint, L = " << r.segments;
      }
    }
  }
}

// L grows with the field range × the readout length (the phase span Δω·T the segments must
// resolve), for both interpolators.
TYPED_TEST(TimeSegmentation, SegmentsGrowWithFieldRangeTimesReadout) {
  using T = TypeParam;
  using mri::SegmentInterpolator;
  for (auto [kind, acc] : {std::pair{SegmentInterpolator::kLeastSquares, 1e-3}, std::pair{SegmentInterpolator::kHanning, 5e-2}}) {
    int previous = 0;
    for (const auto& [hz, ms] : {std::pair{50.0, 2.0}, std::pair{150.0, 10.0}, std::pair{300.0, 25.0}}) {
      const auto s = make_scan<T>({32, 32}, hz, ms * 1e-3, 3);
      const int l = mri::plan_time_segmentation(*s.encoding, options<T>(kind, acc)).segments;
      EXPECT_GT(l, previous) << hz << " Hz, " << ms << " ms";
      previous = l;
    }
  }
}

// CG from 0 on host data y, in a's context; the image back on the host.
template <class T>
std::vector<std::complex<T>> reconstruct(op::LinearOperator<T>& a, const std::vector<cdouble>& y,
                                         const solve::CgOptions& o) {
  ContextVector<T> yv(a.context(), a.codomain_size()), x(a.context(), a.domain_size());
  yv.upload(std::vector<std::complex<T>>(y.begin(), y.end()));
  x.upload(std::vector<std::complex<T>>(static_cast<std::size_t>(a.domain_size())));
  (void)solve::cg<T>(a, yv.get(), x.get(), nullptr, o);
  return x.download();
}

// Data simulated with the exact model (DftEncoding<double>, ±150 Hz, 10 ms readouts) on a spiral
// run to reach √2 and cropped to the k-space square (every Cartesian frequency sampled, as in
// tests/mri/sense_test.cpp), reconstructed by 40 CG steps with λ = 1e-4·M (sense_test.cpp's
// choice) through the time-segmented model (accuracy 1e-3, L = 11), the exact DFT model and the
// NUFFT without field correction. Measured NRMSE against the phantom (double / float): time-
// segmented 0.0466 / 0.0544, DFT 0.0466 / 0.0531 (40 steps do not converge CG under the field's
// phase; both models stop at the same place), uncorrected 0.448 / 0.449; time-segmented against
// DFT image 2.5e-5 / 2.1e-3 (in float the two CG runs' rounding differs, not the models).
// Bounds: the corrected NRMSE within 10% (+1e-3) of the DFT's; the uncorrected at least 5× the
// corrected; the two corrected images within the accuracy in double and 10× it in float.
TYPED_TEST(TimeSegmentation, FieldCorrectedReconstructionMatchesTheExactModel) {
  using T = TypeParam;
  const std::vector<std::int64_t> grid{32, 32};
  const auto traj = mri::spiral_trajectory(grid, {.reach = std::numbers::sqrt2});
  const auto t_all = mri::readout_times(traj, 10e-3 / static_cast<double>(traj.samples));
  std::vector<T> kx, ky, times;
  for (std::int64_t j = 0; j < traj.size(); ++j)
    if (std::abs(traj.kx[j]) <= 16 && std::abs(traj.ky[j]) <= 16) {
      kx.push_back(static_cast<T>(traj.kx[j]));
      ky.push_back(static_cast<T>(traj.ky[j]));
      times.push_back(static_cast<T>(t_all[j]));
    }
  const auto fd = mri::field_map(grid, {.max_hz = 150, .blobs = 3, .seed = 5});
  const std::vector<T> field(fd.begin(), fd.end());
  const std::span<const std::int64_t> g(grid);
  auto enc = std::make_shared<const mri::Encoding<T>>(g, std::span<const T>(kx), std::span<const T>(ky),
                                                      std::span<const T>(), std::span<const T>(times),
                                                      std::span<const T>(field));
  const auto kxd = widened(kx), kyd = widened(ky), td = widened(times), fdd = widened(field);
  auto exact = std::make_shared<const mri::Encoding<double>>(g, std::span<const double>(kxd), std::span<const double>(kyd),
                                                             std::span<const double>(), std::span<const double>(td),
                                                             std::span<const double>(fdd));
  const auto phantom = mri::shepp_logan(grid);
  const std::vector<cdouble> truth(phantom.begin(), phantom.end());
  mri::DftEncoding<double> dft_exact(exact, Context::host());
  const auto y = battery_detail::run_apply(dft_exact, truth, false);

  const Context c = battery_context();
  solve::CgOptions o;
  o.max_iterations = 40;
  o.lambda = 1e-4 * static_cast<double>(kx.size());
  const double accuracy = 1e-3;
  mri::TimeSegmentedEncoding<T> ts(enc, c, options<T>(mri::SegmentInterpolator::kLeastSquares, accuracy));
  mri::DftEncoding<T> dft(enc, c);
  auto plain = std::make_shared<const mri::Encoding<T>>(g, std::span<const T>(kx), std::span<const T>(ky));
  mri::NufftEncodingOptions no;
  no.eps = nufft_eps<T>();
  mri::NufftEncoding<T> uncorrected(plain, c, no);
  const auto x_ts = reconstruct<T>(ts, y, o), x_dft = reconstruct<T>(dft, y, o), x_plain = reconstruct<T>(uncorrected, y, o);
  const double e_ts = rel_error(x_ts, truth), e_dft = rel_error(x_dft, truth), e_plain = rel_error(x_plain, truth);
  const double between = rel_error(x_ts, widen(x_dft));
  SCOPED_TRACE(::testing::Message() << ts.report().reason << "; NRMSE time-segmented " << e_ts << ", DFT " << e_dft
                                    << ", uncorrected " << e_plain << "; time-segmented vs DFT " << between);
  EXPECT_LE(e_ts, 1.1 * e_dft + 1e-3);
  EXPECT_GE(e_plain, 5 * e_ts);
  EXPECT_LE(between, (std::is_same_v<T, float> ? 10 : 1) * accuracy);
}

// The report and accessor; forced L; batching shares the design and batches the one NUFFT.
TYPED_TEST(TimeSegmentation, ReportForcedLAndBatchedForm) {
  using T = TypeParam;
  const auto s = make_scan<T>({16, 12}, 100, 8e-3);
  auto o = options<T>(mri::SegmentInterpolator::kLeastSquares, 1e-3);
  mri::TimeSegmentedEncoding<T> a(s.encoding, battery_context(), o);
  const auto& r = a.report();
  EXPECT_EQ(a.segments(), r.segments);
  EXPECT_GT(r.segments, 1);
  EXPECT_FALSE(r.forced);
  EXPECT_EQ(r.accuracy, 1e-3);
  EXPECT_LE(r.worst_error, 1e-3);
  EXPECT_GE(r.design_seconds, 0.0);
  EXPECT_FALSE(r.reason.empty());
  EXPECT_EQ(a.nufft().batch(), r.segments);
  EXPECT_EQ(a.domain_shape(), (op::Shape{16, 12}));
  EXPECT_EQ(a.codomain_shape(), (op::Shape{s.samples}));

  o.segments = 3;
  mri::TimeSegmentedEncoding<T> f(s.encoding, battery_context(), o);
  EXPECT_EQ(f.segments(), 3);
  EXPECT_TRUE(f.report().forced);
  EXPECT_GT(f.report().worst_error, 1e-3);  // fewer than needed: reported, not refused

  o.segments = 0;
  o.batch = 3;
  auto b = op::batch<T>(std::make_shared<mri::TimeSegmentedEncoding<T>>(s.encoding, battery_context(), o), 2);
  auto* tb = dynamic_cast<mri::TimeSegmentedEncoding<T>*>(b.get());
  ASSERT_NE(tb, nullptr) << b->name() << ": op::batch looped instead of batching the transform";
  EXPECT_EQ(tb->batch(), 6);
  EXPECT_EQ(tb->nufft().batch(), 6 * r.segments);
  EXPECT_EQ(b->domain_shape(), (op::Shape{16, 12, 3, 2}));
  EXPECT_EQ(b->codomain_shape(), (op::Shape{s.samples, 3, 2}));
}

// Without a field map the operator is the NUFFT encoding (L = 1, h = 1).
TYPED_TEST(TimeSegmentation, WithoutFieldMapIsTheNufftEncoding) {
  using T = TypeParam;
  const auto s = make_scan<T>({16, 12}, 0, 8e-3);
  mri::TimeSegmentedEncoding<T> a(s.encoding, battery_context(), options<T>(mri::SegmentInterpolator::kLeastSquares, 1e-6));
  EXPECT_EQ(a.segments(), 1);
  EXPECT_EQ(a.report().worst_error, 0.0);
  const auto plain = std::make_shared<const mri::Encoding<T>>(std::span<const std::int64_t>(s.grid), std::span<const T>(s.kx),
                                                              std::span<const T>(s.ky));
  mri::NufftEncodingOptions no;
  no.eps = nufft_eps<T>();
  mri::NufftEncoding<T> n(plain, battery_context(), no);
  const auto x = random_complex<T>(s.voxels, 11);
  const auto y = random_complex<T>(s.samples, 12);
  const double tol = default_tolerance<T>();
  EXPECT_LE(battery_detail::rel_diff(battery_detail::run_apply(a, x, false), battery_detail::run_apply(n, x, false)), tol);
  EXPECT_LE(battery_detail::rel_diff(battery_detail::run_apply(a, y, true), battery_detail::run_apply(n, y, true)), tol);
}

TYPED_TEST(TimeSegmentation, BadInput) {
  using T = TypeParam;
  const auto s = make_scan<T>({16, 12}, 300, 25e-3);
  const Context c = battery_context();
  auto expect_code = [&](mri::TimeSegmentationOptions o, ErrorCode code, const std::string& what) {
    try {
      mri::TimeSegmentedEncoding<T> a(s.encoding, c, o);
      ADD_FAILURE() << what << ": expected an error";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), code) << what << ": " << e.what();
    }
  };
  auto o = options<T>(mri::SegmentInterpolator::kLeastSquares, 1e-9);
  o.max_segments = 8;
  expect_code(o, ErrorCode::kInvalidArgument, "unreachable accuracy");
  o = options<T>(mri::SegmentInterpolator::kLeastSquares, 0);
  expect_code(o, ErrorCode::kInvalidArgument, "accuracy 0");
  o = options<T>(mri::SegmentInterpolator::kLeastSquares, 1e-3);
  o.max_segments = 5000;
  expect_code(o, ErrorCode::kInvalidArgument, "max_segments 5000");
  o = options<T>(mri::SegmentInterpolator::kLeastSquares, 1e-3);
  o.batch = 0;
  expect_code(o, ErrorCode::kInvalidArgument, "batch 0");
  o = options<T>(static_cast<mri::SegmentInterpolator>(7), 1e-3);
  expect_code(o, ErrorCode::kInvalidArgument, "interpolator 7");
  EXPECT_THROW(mri::TimeSegmentedEncoding<T>(nullptr, c), Error);
}

}  // namespace
}  // namespace fieldft::test
