// mri::sense (fieldft/mri/sense.hpp) on the backend under test (FIELDFT_TEST_BACKEND): the
// operator battery, reconstructions of simulated multi-coil spiral data with a known truth,
// NUFFT- against DFT-based SENSE, CG's objective, CPU against GPU (in the GPU executable), and
// bad input.
//
// The known-truth problem (all of it from fieldft/mri/simulate.hpp): a 32² modified Shepp–Logan
// phantom on a smooth phase (exp(i(0.8u − 0.5v)), so that a conjugation error shows), 4 coils with
// normalised maps (Σ_c |S_c|² = 1), and a spiral of 4 arms at the Nyquist spacing run out to
// reach √2 (radius 16√2 cycles/FOV) of which only the samples inside the k-space square
// [-16, 16]² are kept: every Cartesian frequency of the image is then sampled at the Nyquist
// density and the model is well posed (a spiral to |k| = N/2 leaves the corners of the square,
// 21% of it, unmeasured, and their share of the phantom's edges unrecoverable). The data are
// those of the exact DFT SENSE operator in double (not the NUFFT: no inverse crime for the NUFFT
// reconstructions), noise-free, or with complex Gaussian noise added.
#include "fieldft/mri/sense.hpp"

#include <cmath>
#include <cstdio>
#include <complex>
#include <memory>
#include <numbers>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "fieldft/context.hpp"
#include "fieldft/mri/encoding.hpp"
#include "fieldft/mri/simulate.hpp"
#include "fieldft/op/combinators.hpp"
#include "fieldft/solve/cg.hpp"
#include "support/battery.hpp"
#include "support/context_vector.hpp"
#include "support/operator_battery.hpp"

namespace fieldft::test {
namespace {

using op::OperatorPtr;
using op::Shape;

template <class T>
constexpr double sense_eps() {
  return std::is_same_v<T, float> ? 1e-5 : 1e-9;
}

// ---------------------------------------------------------------------------------------------
// The simulated acquisition, in double on the host (computed once).

constexpr std::int64_t kN = 32, kCoils = 4;

struct Acquisition {
  std::vector<std::int64_t> grid{kN, kN};
  std::int64_t voxels = kN * kN, samples = 0;
  std::vector<double> kx, ky;
  std::vector<cdouble> truth, maps, y;  // y: exact noise-free data, {M, C}
  Shape maps_shape{kN, kN, kCoils};
};

const Acquisition& acquisition() {
  static const Acquisition a = [] {
    Acquisition q;
    const auto phantom = mri::shepp_logan(q.grid);
    q.truth.resize(phantom.size());
    for (std::int64_t v = 0; v < q.voxels; ++v) {
      const double u = 2.0 * static_cast<double>(v % kN - kN / 2) / kN;
      const double w = 2.0 * static_cast<double>(v / kN - kN / 2) / kN;
      q.truth[static_cast<std::size_t>(v)] = phantom[static_cast<std::size_t>(v)] * std::polar(1.0, 0.8 * u - 0.5 * w);
    }
    q.maps = mri::coil_maps(q.grid, kCoils, {.normalize = true});
    const auto t = mri::spiral_trajectory(q.grid, {.reach = std::numbers::sqrt2});
    const double half = kN / 2.0;
    for (std::int64_t j = 0; j < t.size(); ++j)
      if (std::abs(t.kx[j]) <= half && std::abs(t.ky[j]) <= half) {
        q.kx.push_back(t.kx[j]);
        q.ky.push_back(t.ky[j]);
      }
    q.samples = static_cast<std::int64_t>(q.kx.size());
    auto enc = std::make_shared<const mri::Encoding<double>>(std::span<const std::int64_t>(q.grid),
                                                             std::span<const double>(q.kx),
                                                             std::span<const double>(q.ky));
    auto e = mri::sense<double>(enc, q.maps, q.maps_shape, Context::host(), {.encoding = mri::EncodingKind::kDft});
    q.y.resize(static_cast<std::size_t>(q.samples * kCoils));
    e->apply(q.truth.data(), q.y.data());
    return q;
  }();
  return a;
}

template <class T>
std::vector<std::complex<T>> narrow(const std::vector<cdouble>& v) {
  return std::vector<std::complex<T>>(v.begin(), v.end());
}

// ‖got − want‖ / ‖want‖ in double.
template <class T>
double nrmse(const std::vector<std::complex<T>>& got, const std::vector<cdouble>& want) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    num += std::norm(cdouble(got[i]) - want[i]);
    den += std::norm(want[i]);
  }
  return std::sqrt(num / den);
}

// The acquisition's geometry in precision T.
template <class T>
std::shared_ptr<const mri::Encoding<T>> acquisition_encoding() {
  const Acquisition& q = acquisition();
  const std::vector<T> kx(q.kx.begin(), q.kx.end()), ky(q.ky.begin(), q.ky.end());
  return std::make_shared<const mri::Encoding<T>>(std::span<const std::int64_t>(q.grid), std::span<const T>(kx),
                                                  std::span<const T>(ky));
}

// The SENSE operator of the acquisition at c, precision T.
template <class T>
OperatorPtr<T> make_sense(const Context& c, mri::EncodingKind kind) {
  const Acquisition& q = acquisition();
  auto enc = acquisition_encoding<T>();
  return mri::sense<T>(enc, narrow<T>(q.maps), q.maps_shape, c, {.encoding = kind, .eps = sense_eps<T>()});
}

// CG from x0 = 0 on data y (host), in a's context; the image back on the host.
template <class T>
std::vector<std::complex<T>> reconstruct(op::LinearOperator<T>& a, const std::vector<cdouble>& y,
                                         const solve::CgOptions& o, solve::CgResult* result = nullptr) {
  ContextVector<T> yv(a.context(), a.codomain_size()), x(a.context(), a.domain_size());
  yv.upload(narrow<T>(y));
  x.upload(std::vector<std::complex<T>>(static_cast<std::size_t>(a.domain_size())));
  const auto r = solve::cg<T>(a, yv.get(), x.get(), nullptr, o);
  if (result) *result = r;
  return x.download();
}

// The largest eigenvalue of AᴴA by 30 power iterations (AᴴA is Hermitian PSD; 30 steps give it
// to a few percent, which is all the bounds below need).
template <class T>
double largest_eigenvalue(op::LinearOperator<T>& a) {
  ContextVector<T> x(a.context(), a.domain_size()), z(a.context(), a.domain_size());
  auto v = random_complex<T>(a.domain_size(), 77);
  double lambda = 0;
  for (int it = 0; it < 30; ++it) {
    const double n = norm<T>(std::span<const std::complex<T>>(v));
    for (auto& e : v) e /= static_cast<T>(n);
    x.upload(v);
    a.apply_normal(x.get(), z.get());
    v = z.download();
    lambda = norm<T>(std::span<const std::complex<T>>(v));
  }
  return lambda;
}

// ---------------------------------------------------------------------------------------------
// The generic operator battery on mri::sense (small problems; the NUFFT gets 4·eps for its
// adjointness, normal and parity checks, as the encodings do: tests/mri/encoding_battery_test.cpp).

template <class T>
OperatorPtr<T> battery_sense(const Context& c, std::vector<std::int64_t> grid, std::int64_t coils,
                             mri::EncodingKind kind, bool field, double accuracy = 1e-3) {
  const auto t = mri::spiral_trajectory(grid, {.interleaves = 3, .samples = 40});
  const std::vector<T> kx(t.kx.begin(), t.kx.end()), ky(t.ky.begin(), t.ky.end()), kz(t.kz.begin(), t.kz.end());
  std::vector<T> times, fmap;
  if (field) {
    const auto td = mri::readout_times(t, 2e-4);
    const auto fd = mri::field_map(grid, {.max_hz = 60});
    times.assign(td.begin(), td.end());
    fmap.assign(fd.begin(), fd.end());
  }
  auto enc = std::make_shared<const mri::Encoding<T>>(std::span<const std::int64_t>(grid), std::span<const T>(kx),
                                                      std::span<const T>(ky), std::span<const T>(kz),
                                                      std::span<const T>(times), std::span<const T>(fmap));
  const auto maps = mri::coil_maps(grid, coils);
  Shape shape(grid.begin(), grid.end());
  shape.push_back(coils);
  mri::SenseOptions o{.encoding = kind, .eps = std::is_same_v<T, float> ? 1e-4 : 1e-6};
  o.time_segmentation.accuracy = accuracy;
  // The exact normal of the time-segmented model: its Toeplitz form is tested in
  // time_segmentation_test.cpp and toeplitz_test.cpp.
  o.time_segmentation.toeplitz = mri::Toeplitz::kOff;
  return mri::sense<T>(enc, narrow<T>(maps), shape, c, o);
}

template <class T>
bool register_sense(const std::string& p) {
  const double e = 4 * (std::is_same_v<T, float> ? 1e-4 : 1e-6);
  const OperatorTolerances nufft{.adjointness = e, .normal = e, .parity = e};
  using K = mri::EncodingKind;
  register_operator_battery<T>("MriSenseNufft2D" + p, [](const Context& c) {
    return battery_sense<T>(c, {16, 12}, 4, K::kNufft, false);
  }, nufft, __FILE__, __LINE__);
  register_operator_battery<T>("MriSenseNufft3D" + p, [](const Context& c) {
    return battery_sense<T>(c, {10, 8, 4}, 3, K::kNufft, false);
  }, nufft, __FILE__, __LINE__);
  register_operator_battery<T>("MriSenseDftField2D" + p, [](const Context& c) {
    return battery_sense<T>(c, {10, 8}, 3, K::kDft, true);
  }, {}, __FILE__, __LINE__);
  // Time segmentation: an exact adjoint pair up to the NUFFT's eps (the interpolator is shared
  // by forward and adjoint), so the NUFFT's tolerances; parity likewise (the design is host work).
  register_operator_battery<T>("MriSenseTsegField2D" + p, [](const Context& c) {
    return battery_sense<T>(c, {10, 8}, 3, K::kTimeSegmented, true);
  }, nufft, __FILE__, __LINE__);
  register_operator_battery<T>("MriSenseTsegField3D" + p, [](const Context& c) {
    return battery_sense<T>(c, {10, 8, 4}, 2, K::kTimeSegmented, true);
  }, nufft, __FILE__, __LINE__);
  return true;
}

[[maybe_unused]] const bool registered = register_sense<float>("Float") && register_sense<double>("Double");

// ---------------------------------------------------------------------------------------------

template <class T>
class Sense : public ::testing::Test {
 protected:
  void SetUp() override { FIELDFT_TEST_SKIP_UNLESS_AVAILABLE(kBackend); }
};
using Precisions = ::testing::Types<float, double>;
TYPED_TEST_SUITE(Sense, Precisions);

// One operator: the image in, all coils' samples out, through the encoding batched over the
// coils (its name shows the batch), and the same as sense() on a ready batched encoding.
TYPED_TEST(Sense, ShapesAndOneBatchedTransform) {
  using T = TypeParam;
  const Acquisition& q = acquisition();
  const Context c = test_context();
  auto a = make_sense<T>(c, mri::EncodingKind::kNufft);
  EXPECT_EQ(a->domain_shape(), (Shape{kN, kN}));
  EXPECT_EQ(a->codomain_shape(), (Shape{q.samples, kCoils}));
  EXPECT_NE(a->name().find("NufftEncoding(32x32 -> " + std::to_string(q.samples) + ", batch 4)"), std::string::npos)
      << a->name();

  auto enc = acquisition_encoding<T>();
  auto batched = std::make_shared<mri::DftEncoding<T>>(enc, c, mri::DftEncodingOptions{.batch = kCoils});
  auto from_op = mri::sense<T>(batched, narrow<T>(q.maps), q.maps_shape);
  auto from_kind = make_sense<T>(c, mri::EncodingKind::kDft);
  const auto x = narrow<T>(q.truth);
  const auto y1 = battery_detail::run_apply(*from_op, x, false);
  const auto y2 = battery_detail::run_apply(*from_kind, x, false);
  EXPECT_EQ(y1, y2) << "the same DFT, batch and maps give the same bits";
  // Against the exact data in double: rounding of T only (the DFT battery's thresholds).
  EXPECT_LE(nrmse(y1, q.y), (std::is_same_v<T, float> ? 1e-5 : 1e-12));
}

// Maps already in the context's memory (sense's third form, borrowed) give the operator that the
// same maps copied there give: the same bits through apply, adjoint and normal on one batched
// encoding (the DFT everywhere; the NUFFT on the host, and on a device within the rounding of its
// atomic spreading), with the operator keeping the memory alive through the owner. The maps are
// not checked on the host (the caller's contract): NaN maps are taken as they are.
TYPED_TEST(Sense, MapsInContextMemoryGiveTheSameOperator) {
  using T = TypeParam;
  using C = std::complex<T>;
  const Acquisition& q = acquisition();
  const Context c = test_context();
  auto enc = acquisition_encoding<T>();
  const auto maps = narrow<T>(q.maps);
  const auto x = narrow<T>(q.truth), y = narrow<T>(q.y);
  const auto normal = [](op::LinearOperator<T>& a, const std::vector<C>& v) {
    ContextVector<T> in(a.context(), a.domain_size()), out(a.context(), a.domain_size());
    in.upload(v);
    a.apply_normal(in.get(), out.get());
    return out.download();
  };
  for (const bool dft : {true, false}) {
    SCOPED_TRACE(dft ? "DftEncoding" : "NufftEncoding");
    mri::NufftEncodingOptions o;
    o.eps = sense_eps<T>();
    o.batch = kCoils;
    OperatorPtr<T> e;
    if (dft)
      e = std::make_shared<mri::DftEncoding<T>>(enc, c, mri::DftEncodingOptions{.batch = kCoils});
    else
      e = std::make_shared<mri::NufftEncoding<T>>(enc, c, o);
    auto copied = mri::sense<T>(e, maps, q.maps_shape);
    auto resident = std::make_shared<ContextVector<T>>(c, q.voxels * kCoils);
    resident->upload(maps);
    auto borrowed =
        mri::sense<T>(e, mri::ContextMaps<T>{std::span<const C>(resident->get(), maps.size()), resident}, q.maps_shape);
    resident.reset();  // the operator's owner keeps the memory
    EXPECT_EQ(borrowed->domain_shape(), copied->domain_shape());
    EXPECT_EQ(borrowed->codomain_shape(), copied->codomain_shape());
    const std::vector<C> got[] = {battery_detail::run_apply(*borrowed, x, false),
                                  battery_detail::run_apply(*borrowed, y, true), normal(*borrowed, x)};
    const std::vector<C> want[] = {battery_detail::run_apply(*copied, x, false),
                                   battery_detail::run_apply(*copied, y, true), normal(*copied, x)};
    for (int i = 0; i < 3; ++i) {
      SCOPED_TRACE(i == 0 ? "apply" : i == 1 ? "adjoint" : "normal");
      if (dft || kBackend == Backend::kCpu)
        EXPECT_EQ(got[i], want[i]);
      else
        EXPECT_LE(battery_detail::rel_diff(got[i], want[i]), (std::is_same_v<T, float> ? 1e-5 : 1e-12));
    }
  }
  auto e = std::make_shared<mri::DftEncoding<T>>(enc, c, mri::DftEncodingOptions{.batch = kCoils});
  ContextVector<T> resident(c, q.voxels * kCoils);  // NaN until uploaded: not read on the host
  const std::span<const C> values(resident.get(), maps.size());
  EXPECT_NO_THROW((void)mri::sense<T>(e, mri::ContextMaps<T>{values, nullptr}, q.maps_shape));
  EXPECT_TRUE(throws_error(
      [&] {
        (void)mri::sense<T>(e, mri::ContextMaps<T>{values.first(maps.size() - 1), nullptr}, q.maps_shape);
      },
      ErrorCode::kShapeMismatch, {"values", "expected"}));
  EXPECT_TRUE(throws_error(
      [&] {
        (void)mri::sense<T>(e, mri::ContextMaps<T>{values.first(kN * kN * 2), nullptr}, Shape{kN, kN, 2});
      },
      ErrorCode::kShapeMismatch, {"C = 2"}));
  EXPECT_TRUE(throws_error(
      [&] {
        (void)mri::sense<T>(nullptr, mri::ContextMaps<T>{values, nullptr}, q.maps_shape);
      },
      ErrorCode::kInvalidArgument, {"null"}));
}

// One coil on an unbatched encoding (domain = the image, as a coil split leaves it when a device
// gets one coil): accepted for maps of shape image x 1, and the same samples as coil 0 of the
// four-coil operator; a batch-1 encoding with the maps of several coils is still refused.
TYPED_TEST(Sense, OneCoilOnAnUnbatchedEncoding) {
  using T = TypeParam;
  const Acquisition& q = acquisition();
  const Context c = test_context();
  auto enc = acquisition_encoding<T>();
  auto one = std::make_shared<mri::DftEncoding<T>>(enc, c);
  const auto maps = narrow<T>(q.maps);
  const std::span<const std::complex<T>> coil0(maps.data(), static_cast<std::size_t>(kN * kN));
  auto a = mri::sense<T>(one, coil0, Shape{kN, kN, 1});
  EXPECT_EQ(a->domain_shape(), (Shape{kN, kN}));
  EXPECT_EQ(a->codomain_size(), q.samples);
  const auto y = battery_detail::run_apply(*a, narrow<T>(q.truth), false);
  const std::vector<cdouble> y0(q.y.begin(), q.y.begin() + q.samples);
  EXPECT_LE(nrmse(y, y0), (std::is_same_v<T, float> ? 1e-5 : 1e-12)) << "coil 0's exact samples";
  EXPECT_TRUE(throws_error([&] { (void)mri::sense<T>(one, std::span<const std::complex<T>>(maps), q.maps_shape); },
                           ErrorCode::kShapeMismatch, {"32x32x4", "C = 4"}));
}

// Noise-free known truth. CG, 40 iterations, λ = 1e-4·M (AᴴA has mean eigenvalue M, the samples
// per coil, with Σ_c |S_c|² = 1: trace(AᴴA) = voxels·M; the Tikhonov bias λ/(μ + λ) is then
// ~1e-4 on components of average sampling). Measured NRMSE: 6.6e-5 (NUFFT and DFT, float and
// double; M = 2564), the bias and the components that unpreconditioned CG has not converged in
// 40 steps. Bound 5e-4 (a factor 7.5 above, for another backend's NUFFT plan and rounding); a
// wrong sign, conjugation, coil order or scaling gives errors of order 1.
constexpr double kNoiseFreeBound = 5e-4;

TYPED_TEST(Sense, ReconstructsTheTruthNoiseFree) {
  using T = TypeParam;
  const Acquisition& q = acquisition();
  solve::CgOptions o;
  o.max_iterations = 40;
  o.lambda = 1e-4 * static_cast<double>(q.samples);
  for (auto kind : {mri::EncodingKind::kNufft, mri::EncodingKind::kDft}) {
    auto a = make_sense<T>(test_context(), kind);
    const double e = nrmse(reconstruct<T>(*a, q.y, o), q.truth);
    ::testing::Test::RecordProperty(kind == mri::EncodingKind::kNufft ? "nrmse_nufft" : "nrmse_dft", ::testing::PrintToString(e));
    EXPECT_LT(e, kNoiseFreeBound) << a->name();
  }
}

// With noise: complex Gaussian noise of standard deviation σ = 1% of the data's rms value. For
// a least-squares solve the noise's expected share of the image is σ²·trace((AᴴA)⁻¹), at least
// σ²·voxels²/trace(AᴴA) = σ²·voxels/M (harmonic <= arithmetic mean of the eigenvalues):
// NRMSE_noise >= σ·√(voxels/M)/‖x‖, the floor the test computes (9.7e-3 here). Measured NRMSE:
// 1.14e-2, 1.18 times the floor (with Nyquist density everywhere and normalised maps AᴴA's
// eigenvalues are not spread far). Bound: the noise-free bound + 2× the floor; and above the
// floor, or the noise was lost.
TYPED_TEST(Sense, ReconstructsTheTruthWithNoise) {
  using T = TypeParam;
  const Acquisition& q = acquisition();
  auto y = q.y;
  double rms = 0, xnorm = 0;
  for (const auto& v : y) rms += std::norm(v);
  rms = std::sqrt(rms / static_cast<double>(y.size()));
  for (const auto& v : q.truth) xnorm += std::norm(v);
  xnorm = std::sqrt(xnorm);
  const double sigma = 0.01 * rms;
  mri::add_noise<double>(y, sigma, 2024);
  const double floor = sigma * std::sqrt(static_cast<double>(q.voxels) / static_cast<double>(q.samples)) / xnorm;
  solve::CgOptions o;
  o.max_iterations = 40;
  o.lambda = 1e-4 * static_cast<double>(q.samples);
  for (auto kind : {mri::EncodingKind::kNufft, mri::EncodingKind::kDft}) {
    auto a = make_sense<T>(test_context(), kind);
    const double e = nrmse(reconstruct<T>(*a, y, o), q.truth);
    ::testing::Test::RecordProperty(kind == mri::EncodingKind::kNufft ? "nrmse_nufft" : "nrmse_dft", ::testing::PrintToString(e));
    EXPECT_GT(e, floor) << "below the least-squares noise floor: the noise was not added?";
    EXPECT_LT(e, kNoiseFreeBound + 2 * floor) << a->name();
  }
}

// NUFFT- and DFT-based SENSE solve the same regularised problem (AᴴA + λI)x = Aᴴy, with λ =
// ‖AᴴA‖/100, to a residual tolerance τ. A perturbation of the operator by δ (relative) moves the
// solution by at most (‖δN‖‖x‖ + ‖δb‖)/λ: with the forward and adjoint NUFFT each within ~2·eps,
// ‖δN‖ <= 4·eps·‖N‖ and ‖δb‖ <= 2·eps·‖N‖‖x‖, i.e. 6·eps·‖N‖/λ = 600·eps relative; each
// unconverged solve adds τ·(‖N‖ + λ)/λ = 101·τ. Bound: 600·eps + 2·101·τ (float: eps 1e-5,
// τ 1e-5: 8e-3; double: eps 1e-9, τ 1e-11: 6e-7).
template <class T>
double agreement_bound() {
  const double tau = std::is_same_v<T, float> ? 1e-5 : 1e-11;
  return 600 * sense_eps<T>() + 2 * 101 * tau;
}

template <class T>
std::vector<std::complex<T>> regularised_solution(op::LinearOperator<T>& a, double lambda) {
  solve::CgOptions o;
  o.max_iterations = 200;
  o.tolerance = std::is_same_v<T, float> ? 1e-5 : 1e-11;
  o.lambda = lambda;
  solve::CgResult r;
  auto x = reconstruct<T>(a, acquisition().y, o, &r);
  EXPECT_TRUE(r.converged) << a.name() << ": residual " << r.residual << " after " << r.iterations;
  return x;
}

TYPED_TEST(Sense, NufftAndDftGiveTheSameImage) {
  using T = TypeParam;
  const Context c = test_context();
  auto nufft = make_sense<T>(c, mri::EncodingKind::kNufft);
  auto dft = make_sense<T>(c, mri::EncodingKind::kDft);
  const double lambda = largest_eigenvalue(*dft) / 100;
  const auto xn = regularised_solution<T>(*nufft, lambda);
  const auto xd = regularised_solution<T>(*dft, lambda);
  const double d = nrmse(xn, std::vector<cdouble>(xd.begin(), xd.end()));
  ::testing::Test::RecordProperty("nufft_vs_dft", ::testing::PrintToString(d));
  EXPECT_LT(d, agreement_bound<T>());
}

// CG minimises f(x) = ‖Ax − y‖² + λ‖x‖² over growing Krylov spaces: f never increases from one
// iterate to the next (runs of 1, 2, … iterations end at the iterates of a longer run: CG is
// deterministic). f is evaluated with the operator in T, so rounding may raise a value by a few
// units of T's roundoff of f (allowed: 100·u). Noisy data, so that f stays away from 0.
TYPED_TEST(Sense, CgDecreasesTheObjective) {
  using T = TypeParam;
  const Acquisition& q = acquisition();
  auto y = q.y;
  mri::add_noise<double>(y, 0.05, 5);
  const double lambda = 1e-3 * static_cast<double>(q.samples);
  auto a = make_sense<T>(test_context(), mri::EncodingKind::kNufft);
  const auto objective = [&](const std::vector<std::complex<T>>& x) {
    const auto ax = battery_detail::run_apply(*a, x, false);
    double f = 0;
    for (std::size_t i = 0; i < y.size(); ++i) f += std::norm(cdouble(ax[i]) - y[i]);
    for (const auto& v : x) f += lambda * std::norm(cdouble(v));
    return f;
  };
  const double u = std::is_same_v<T, float> ? 0x1p-24 : 0x1p-53;
  const double f0 = objective(std::vector<std::complex<T>>(static_cast<std::size_t>(q.voxels)));
  double previous = f0;
  for (int k = 1; k <= 10; ++k) {
    solve::CgOptions o;
    o.max_iterations = k;
    o.lambda = lambda;
    const double f = objective(reconstruct<T>(*a, y, o));
    EXPECT_LE(f, previous * (1 + 100 * u)) << "iteration " << k;
    previous = f;
  }
  EXPECT_LT(previous, 0.01 * f0) << "10 iterations should remove most of ‖y‖²";
}

// ---------------------------------------------------------------------------------------------
// Field-map data: options.encoding = kTimeSegmented against kDft. The acquisition's trajectory
// with readout times at a 1e-5 s dwell (about 8 ms per arm) and a smooth ±80 Hz field map
// (peak phase 2π·80·0.008 ≈ 4 rad), the data of the exact DFT SENSE model in double.

struct FieldAcquisition {
  std::vector<double> times, field;
  std::vector<cdouble> y;  // {M, C}
};

constexpr double kTsegAccuracy = 1e-3;

const FieldAcquisition& field_acquisition() {
  static const FieldAcquisition a = [] {
    const Acquisition& q = acquisition();
    FieldAcquisition f;
    const auto t = mri::spiral_trajectory(q.grid, {.reach = std::numbers::sqrt2});
    const auto times = mri::readout_times(t, 1e-5);
    const double half = kN / 2.0;
    for (std::int64_t j = 0; j < t.size(); ++j)
      if (std::abs(t.kx[j]) <= half && std::abs(t.ky[j]) <= half) f.times.push_back(times[j]);
    f.field = mri::field_map(q.grid, {.max_hz = 80});
    auto e = mri::sense<double>(
        std::make_shared<const mri::Encoding<double>>(std::span<const std::int64_t>(q.grid),
                                                      std::span<const double>(q.kx), std::span<const double>(q.ky),
                                                      std::span<const double>(), std::span<const double>(f.times),
                                                      std::span<const double>(f.field)),
        q.maps, q.maps_shape, Context::host(), {.encoding = mri::EncodingKind::kDft});
    f.y.resize(static_cast<std::size_t>(q.samples * kCoils));
    e->apply(q.truth.data(), f.y.data());
    return f;
  }();
  return a;
}

template <class T>
OperatorPtr<T> make_field_sense(const Context& c, mri::EncodingKind kind) {
  const Acquisition& q = acquisition();
  const FieldAcquisition& f = field_acquisition();
  const std::vector<T> kx(q.kx.begin(), q.kx.end()), ky(q.ky.begin(), q.ky.end());
  const std::vector<T> times(f.times.begin(), f.times.end()), field(f.field.begin(), f.field.end());
  auto enc = std::make_shared<const mri::Encoding<T>>(std::span<const std::int64_t>(q.grid), std::span<const T>(kx),
                                                      std::span<const T>(ky), std::span<const T>(),
                                                      std::span<const T>(times), std::span<const T>(field));
  mri::SenseOptions o{.encoding = kind, .eps = sense_eps<T>()};
  o.time_segmentation.accuracy = kTsegAccuracy;
  return mri::sense<T>(enc, narrow<T>(q.maps), q.maps_shape, c, o);
}

// The forward of kTimeSegmented against kDft's on the truth, and the regularised solutions of
// both ((AᴴA + λI)x = Aᴴy, λ = ‖AᴴA‖/100, as NufftAndDftGiveTheSameImage). Time segmentation
// replaces each entry exp(−iΔω_v t_j) of the model by an approximation within the worst-case
// phase error (<= kTsegAccuracy, reported) plus the NUFFT's eps; its l2 error over a whole
// acquisition sits far below the worst case (docs/architecture.md, "Time segmentation":
// 30–100×). Bounds: the forward within kTsegAccuracy (measured 1.4e-5, float and double);
// the images within kTsegAccuracy + agreement_bound() (the latter for the two unconverged solves
// and the NUFFT, as above; measured 8.7e-5 float, 2.2e-5 double). A wrong sign of the field
// phase, or the field ignored (kNufft on the field-free encoding), gives errors of order 0.1–1.
TYPED_TEST(Sense, TimeSegmentedReconstructsLikeTheDft) {
  using T = TypeParam;
  const Acquisition& q = acquisition();
  const FieldAcquisition& f = field_acquisition();
  const Context c = test_context();
  auto ts = make_field_sense<T>(c, mri::EncodingKind::kTimeSegmented);
  auto dft = make_field_sense<T>(c, mri::EncodingKind::kDft);
  EXPECT_NE(ts->name().find("TimeSegmented"), std::string::npos) << ts->name();
  const double forward = nrmse(battery_detail::run_apply(*ts, narrow<T>(q.truth), false), f.y);
  ::testing::Test::RecordProperty("tseg_forward", ::testing::PrintToString(forward));
  EXPECT_LT(forward, kTsegAccuracy);

  const double lambda = largest_eigenvalue(*dft) / 100;
  solve::CgOptions o;
  o.max_iterations = 200;
  o.tolerance = std::is_same_v<T, float> ? 1e-5 : 1e-11;
  o.lambda = lambda;
  const auto xt = reconstruct<T>(*ts, f.y, o), xd = reconstruct<T>(*dft, f.y, o);
  const double d = nrmse(xt, std::vector<cdouble>(xd.begin(), xd.end()));
  ::testing::Test::RecordProperty("tseg_vs_dft", ::testing::PrintToString(d));
  std::printf("[ tseg ] %s: forward %.3g, image against the DFT's %.3g\n",
              std::is_same_v<T, float> ? "float" : "double", forward, d);
  EXPECT_LT(d, kTsegAccuracy + agreement_bound<T>());
  // And the uncorrected NUFFT on the same data is far off (the field matters here).
  const std::vector<T> kx(q.kx.begin(), q.kx.end()), ky(q.ky.begin(), q.ky.end());
  auto plain = mri::sense<T>(std::make_shared<const mri::Encoding<T>>(std::span<const std::int64_t>(q.grid),
                                                                     std::span<const T>(kx), std::span<const T>(ky)),
                             narrow<T>(q.maps), q.maps_shape, c, {.eps = sense_eps<T>()});
  const auto xn = reconstruct<T>(*plain, f.y, o);
  EXPECT_GT(nrmse(xn, std::vector<cdouble>(xd.begin(), xd.end())), 100 * d);
}

#if FIELDFT_TEST_BACKEND == 2
// The same regularised reconstruction on the host and on the device: each within
// agreement_bound() of the exact DFT solution, so within twice that of each other (a device
// NUFFT plan may choose another kernel or fine grid than the host's).
TYPED_TEST(Sense, CpuAndGpuReconstructionsAgree) {
  using T = TypeParam;
  auto host = make_sense<T>(Context::host(), mri::EncodingKind::kNufft);
  auto device = make_sense<T>(test_context(), mri::EncodingKind::kNufft);
  const double lambda = largest_eigenvalue(*host) / 100;
  const auto xh = regularised_solution<T>(*host, lambda);
  const auto xg = regularised_solution<T>(*device, lambda);
  const double d = nrmse(xg, std::vector<cdouble>(xh.begin(), xh.end()));
  ::testing::Test::RecordProperty("gpu_vs_cpu", ::testing::PrintToString(d));
  EXPECT_LT(d, 2 * agreement_bound<T>());
}
#endif

TYPED_TEST(Sense, BadInput) {
  using T = TypeParam;
  using C = std::complex<T>;
  const Acquisition& q = acquisition();
  const Context c = test_context();
  const std::vector<T> kx(q.kx.begin(), q.kx.end()), ky(q.ky.begin(), q.ky.end());
  const std::span<const std::int64_t> grid(q.grid);
  auto enc = std::make_shared<const mri::Encoding<T>>(grid, std::span<const T>(kx), std::span<const T>(ky));
  const auto maps = narrow<T>(q.maps);
  const auto shape_error = ErrorCode::kShapeMismatch;

  // The data's size against the shape.
  const std::span<const C> short_maps(maps.data(), maps.size() - 1);
  EXPECT_TRUE(throws_error([&] { (void)mri::sense<T>(enc, short_maps, q.maps_shape, c); }, shape_error,
                           {"4095", "expected 4096", "32x32x4"}));
  // The shape against the image: another image, or no coil axis.
  EXPECT_TRUE(throws_error([&] { (void)mri::sense<T>(enc, maps, {32, 16, 8}, c); }, shape_error,
                           {"32x16x8", "expected 32x32xC"}));
  EXPECT_TRUE(throws_error([&] { (void)mri::sense<T>(enc, maps, {32, 32 * 4}, c); }, shape_error,
                           {"32x128", "expected 32x32xC"}));
  // C < 1.
  EXPECT_TRUE(throws_error([&] { (void)mri::sense<T>(enc, std::span<const C>(), {32, 32, 0}, c); },
                           ErrorCode::kInvalidArgument, {"0 coils", "C >= 1"}));
  // NaN and Inf, named by coil and voxel: index 165 + 1024·2 is voxel (5, 5) of coil 2.
  for (T bad : {std::numeric_limits<T>::quiet_NaN(), std::numeric_limits<T>::infinity()}) {
    auto m = maps;
    m[165 + 1024 * 2] = C(0, bad);
    EXPECT_TRUE(throws_error([&] { (void)mri::sense<T>(enc, m, q.maps_shape, c); }, ErrorCode::kNonFinite,
                             {"coil map 2", "voxel (5, 5)", "finite"}));
  }
  // A field map needs the DFT or time segmentation: kNufft refuses it (kAuto, the default, chooses).
  const auto fd = mri::field_map(q.grid);
  const std::vector<T> field(fd.begin(), fd.end());
  auto with_field = std::make_shared<const mri::Encoding<T>>(grid, std::span<const T>(kx), std::span<const T>(ky),
                                                             std::span<const T>(), std::span<const T>(),
                                                             std::span<const T>(field));
  EXPECT_TRUE(throws_error(
      [&] { (void)mri::sense<T>(with_field, maps, q.maps_shape, c, {.encoding = mri::EncodingKind::kNufft}); },
      ErrorCode::kInvalidArgument, {"field map", "kTimeSegmented", "kDft"}));
  EXPECT_NO_THROW((void)mri::sense<T>(with_field, maps, q.maps_shape, c));
  EXPECT_NO_THROW((void)mri::sense<T>(with_field, maps, q.maps_shape, c, {.encoding = mri::EncodingKind::kDft}));
  // kTimeSegmented: its option errors and an accuracy that no L up to max_segments reaches.
  {
    const auto t = mri::spiral_trajectory(q.grid, {.reach = std::numbers::sqrt2});
    const auto td = mri::readout_times(t, 1e-4);  // ~80 ms arms: hundreds of radians
    std::vector<T> tkx, tky, times;
    for (std::int64_t j = 0; j < t.size(); ++j)
      if (std::abs(t.kx[j]) <= kN / 2.0 && std::abs(t.ky[j]) <= kN / 2.0) {
        tkx.push_back(static_cast<T>(t.kx[j]));
        tky.push_back(static_cast<T>(t.ky[j]));
        times.push_back(static_cast<T>(td[j]));
      }
    auto timed = std::make_shared<const mri::Encoding<T>>(grid, std::span<const T>(tkx), std::span<const T>(tky),
                                                          std::span<const T>(), std::span<const T>(times),
                                                          std::span<const T>(field));
    mri::SenseOptions o{.encoding = mri::EncodingKind::kTimeSegmented};
    o.time_segmentation.max_segments = 2;
    EXPECT_TRUE(throws_error([&] { (void)mri::sense<T>(timed, maps, q.maps_shape, c, o); },
                             ErrorCode::kInvalidArgument, {"accuracy"}));
    o.time_segmentation.max_segments = 64;
    o.time_segmentation.accuracy = -1;
    EXPECT_TRUE(throws_error([&] { (void)mri::sense<T>(timed, maps, q.maps_shape, c, o); },
                             ErrorCode::kInvalidArgument, {"accuracy"}));
  }
  EXPECT_TRUE(throws_error(
      [&] { (void)mri::sense<T>(enc, maps, q.maps_shape, c, {.encoding = static_cast<mri::EncodingKind>(7)}); },
      ErrorCode::kInvalidArgument, {"options.encoding"}));
  EXPECT_TRUE(throws_error([&] { (void)mri::sense<T>(std::shared_ptr<const mri::Encoding<T>>(), maps, q.maps_shape, c); },
                           ErrorCode::kInvalidArgument, {"null"}));
  // A ready operator whose domain is not the maps' shape (batch 3 for 4 coils).
  auto batch3 = std::make_shared<mri::DftEncoding<T>>(enc, c, mri::DftEncodingOptions{.batch = 3});
  EXPECT_TRUE(throws_error([&] { (void)mri::sense<T>(batch3, maps, q.maps_shape); }, shape_error,
                           {"32x32x3", "expected", "32x32x4"}));
  EXPECT_TRUE(throws_error([&] { (void)mri::sense<T>(OperatorPtr<T>(), maps, q.maps_shape); },
                           ErrorCode::kInvalidArgument, {"null"}));
}

}  // namespace
}  // namespace fieldft::test
