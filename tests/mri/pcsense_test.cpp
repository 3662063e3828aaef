// mri::pcsense (fieldft/mri/pcsense.hpp) on the backend under test (FIELDFT_TEST_BACKEND): the
// operator battery (NUFFT, Toeplitz NUFFT, DFT with a field map, and a callable encoding; float
// and double), the model written out shot by shot (sign convention, sample order, adjoint), zero
// phase against mri::sense, a reconstruction of multi-shot data that plain SENSE ruins, CPU
// against GPU (in the GPU executable), and bad input.
//
// The known-truth problem (fieldft/mri/simulate.hpp): a 32² modified Shepp–Logan phantom on a
// smooth phase (exp(i(0.8u − 0.5v)), as in sense_test.cpp), 8 coils with normalised maps
// (Σ_c |S_c|² = 1), a spiral of 4 arms at the Nyquist spacing run out to reach √2 and cut to the
// k-space square [-16, 16]² (every Cartesian frequency sampled at the Nyquist density by the 4
// arms together; sense_test.cpp says why), one arm per shot (mri::shot_labels), and a smooth
// random phase per shot of peak |φ_s| = 3 rad (mri::shot_phase_maps: constant + linear +
// quadratic). Each shot alone is 4× undersampled. The data are those of the exact DFT pcSENSE
// operator in double (no inverse crime for the NUFFT reconstructions), noise-free.
#include "fieldft/mri/pcsense.hpp"

#include <cmath>
#include <complex>
#include <limits>
#include <memory>
#include <numbers>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
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
using op::Shape;
using K = mri::EncodingKind;

template <class T>
constexpr double pcs_eps() {
  return std::is_same_v<T, float> ? 1e-5 : 1e-9;
}

template <class T>
std::vector<T> narrow_real(const std::vector<double>& v) {
  return std::vector<T>(v.begin(), v.end());
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

// ---------------------------------------------------------------------------------------------
// A multi-shot problem in double; encodings of precision T are made from it.

struct Problem {
  std::vector<std::int64_t> grid;
  std::int64_t voxels = 1, samples = 0, coils = 0, shots = 0;
  std::vector<double> kx, ky, kz, times, field, phase;  // phase: image + {S}
  std::vector<std::int32_t> labels;
  std::vector<cdouble> maps;
  Shape maps_shape, phase_shape;
};

struct ProblemSpec {
  std::vector<std::int64_t> grid;
  std::int64_t coils = 3, shots = 2, interleaves = 4, samples = 0;  // samples 0: the default
  double reach = 1;
  bool field = false, crop = false, normalize = false;
  double max_phase = 3.0;
  std::uint64_t seed = 5;
  double dwell = 2e-4, max_hz = 60;  // readout times (s per sample) and field map (with field)
};

Problem make_problem(const ProblemSpec& s) {
  Problem p;
  p.grid = s.grid;
  for (auto g : s.grid) p.voxels *= g;
  p.coils = s.coils;
  p.shots = s.shots;
  const auto t = mri::spiral_trajectory(s.grid, {.interleaves = s.interleaves, .samples = s.samples, .reach = s.reach});
  const auto labels = mri::shot_labels(t, s.shots);
  const auto times = mri::readout_times(t, s.dwell);
  for (std::int64_t j = 0; j < t.size(); ++j) {
    if (s.crop && (std::abs(t.kx[j]) > s.grid[0] / 2.0 || std::abs(t.ky[j]) > s.grid[1] / 2.0)) continue;
    p.kx.push_back(t.kx[j]);
    p.ky.push_back(t.ky[j]);
    if (!t.kz.empty()) p.kz.push_back(t.kz[j]);
    if (s.field) p.times.push_back(times[j]);
    p.labels.push_back(labels[j]);
  }
  p.samples = static_cast<std::int64_t>(p.kx.size());
  if (s.field) p.field = mri::field_map(s.grid, {.max_hz = s.max_hz});
  p.maps = mri::coil_maps(s.grid, s.coils, {.normalize = s.normalize});
  p.phase = mri::shot_phase_maps(s.grid, s.shots, {.max_phase = s.max_phase, .seed = s.seed});
  p.maps_shape = Shape(s.grid.begin(), s.grid.end());
  p.maps_shape.push_back(s.coils);
  p.phase_shape = Shape(s.grid.begin(), s.grid.end());
  p.phase_shape.push_back(s.shots);
  return p;
}

// The encoding of p (all shots, with labels) in precision T; `labels` false drops the labels.
template <class T>
std::shared_ptr<const mri::Encoding<T>> encoding_of(const Problem& p, bool labels = true) {
  const auto kx = narrow_real<T>(p.kx), ky = narrow_real<T>(p.ky), kz = narrow_real<T>(p.kz);
  const auto times = narrow_real<T>(p.times), field = narrow_real<T>(p.field);
  return std::make_shared<const mri::Encoding<T>>(
      std::span<const std::int64_t>(p.grid), std::span<const T>(kx), std::span<const T>(ky), std::span<const T>(kz),
      std::span<const T>(times), std::span<const T>(field),
      labels ? std::span<const std::int32_t>(p.labels) : std::span<const std::int32_t>());
}

template <class T>
OperatorPtr<T> make_pcsense(const Problem& p, const Context& c, mri::PcSenseOptions<T> o) {
  const auto phase = narrow_real<T>(p.phase);
  return mri::pcsense<T>(encoding_of<T>(p), narrow<T>(p.maps), p.maps_shape, phase, p.phase_shape, c, o);
}

template <class T>
mri::PcSenseOptions<T> options_of(K kind, double eps, mri::Toeplitz toeplitz = mri::Toeplitz::kAuto,
                                  double accuracy = 1e-3) {
  mri::PcSenseOptions<T> o;
  o.encoding = kind;
  o.eps = eps;
  o.toeplitz = toeplitz;
  o.time_segmentation.accuracy = accuracy;
  o.time_segmentation.toeplitz = toeplitz;
  return o;
}

// Problems for the one-pass DFT form (mri::PcSenseOptions::one_pass), all with a field map.
inline std::vector<std::pair<std::string, ProblemSpec>> one_pass_specs() {
  return {
      // 5 arms in 3 shots (2, 2, 1 arms: 300, 300, 150 samples).
      {"MriPcSenseDftOnePassUnequalShots2D",
       {.grid = {12, 10}, .coils = 4, .shots = 3, .interleaves = 5, .samples = 150, .field = true}},
      {"MriPcSenseDftOnePassOneShot2D",
       {.grid = {12, 10}, .coils = 3, .shots = 1, .interleaves = 3, .samples = 100, .field = true}},
      {"MriPcSenseDftOnePassManyShots3D",
       {.grid = {8, 6, 4}, .coils = 5, .shots = 7, .interleaves = 7, .samples = 40, .field = true}},
      {"MriPcSenseDftOnePass34Coils2D",
       {.grid = {8, 6}, .coils = 34, .shots = 2, .interleaves = 4, .samples = 70, .field = true}},
  };
}

// ---------------------------------------------------------------------------------------------
// The generic operator battery. Shots interleave in the sample order (arm l in shot l mod S), so
// that the gather and scatter are not contiguous copies. The NUFFT gets 4·eps for adjointness,
// normal and parity (tests/mri/encoding_battery_test.cpp says why).

template <class T>
constexpr double battery_eps() {
  return std::is_same_v<T, float> ? 1e-4 : 1e-6;
}

template <class T>
bool register_pcsense(const std::string& p) {
  const double e = 4 * battery_eps<T>();
  const OperatorTolerances nufft{.adjointness = e, .normal = e, .parity = e};
  const auto reg = [&p](const std::string& name, OperatorFactory<T> f, OperatorTolerances tol) {
    register_operator_battery<T>(name + p, std::move(f), tol, __FILE__, __LINE__);
  };
  reg(
      "MriPcSenseNufft2D",
      [](const Context& c) {
        const auto q = make_problem({.grid = {16, 12}, .coils = 4, .shots = 2, .interleaves = 4, .samples = 40});
        return make_pcsense<T>(q, c, options_of<T>(K::kNufft, battery_eps<T>(), mri::Toeplitz::kOff));
      },
      nufft);
  reg(
      "MriPcSenseNufftToeplitz2D",
      [](const Context& c) {
        const auto q = make_problem({.grid = {16, 12}, .coils = 3, .shots = 3, .interleaves = 6, .samples = 30});
        return make_pcsense<T>(q, c, options_of<T>(K::kNufft, battery_eps<T>(), mri::Toeplitz::kOn));
      },
      nufft);
  reg(
      "MriPcSenseNufft3D",
      [](const Context& c) {
        const auto q = make_problem({.grid = {10, 8, 4}, .coils = 3, .shots = 3, .interleaves = 3, .samples = 40});
        return make_pcsense<T>(q, c, options_of<T>(K::kNufft, battery_eps<T>()));
      },
      nufft);
  reg("MriPcSenseDftField2D",
      [](const Context& c) {
        const auto q =
            make_problem({.grid = {10, 8}, .coils = 3, .shots = 2, .interleaves = 4, .samples = 25, .field = true});
        return make_pcsense<T>(q, c, options_of<T>(K::kDft, 0));
      },
      {});
  // options.encoding = kTimeSegmented: one TimeSegmentedEncoding per shot, an adjoint pair up to
  // the NUFFT's eps (its interpolator is shared by forward and adjoint): the NUFFT's tolerances.
  reg(
      "MriPcSenseTsegField2D",
      [](const Context& c) {
        const auto q = make_problem(
            {.grid = {10, 8}, .coils = 3, .shots = 2, .interleaves = 4, .samples = 25, .field = true, .dwell = 1e-4});
        // kOff: the exact normal of the model (its Toeplitz form: time_segmentation_test.cpp).
        return make_pcsense<T>(q, c, options_of<T>(K::kTimeSegmented, battery_eps<T>(), mri::Toeplitz::kOff));
      },
      nufft);
  // A callable encoding (what time segmentation plugs into): here a DftEncoding made by the caller.
  reg("MriPcSenseCallable2D",
      [](const Context& c) {
        const auto q =
            make_problem({.grid = {10, 8}, .coils = 2, .shots = 4, .interleaves = 4, .samples = 25, .field = true});
        mri::PcSenseOptions<T> o;
        o.shot_encoding = [c](std::shared_ptr<const mri::Encoding<T>> e, std::int64_t batch) -> OperatorPtr<T> {
          return std::make_shared<mri::DftEncoding<T>>(std::move(e), c, mri::DftEncodingOptions{.batch = batch});
        };
        return make_pcsense<T>(q, c, o);
      },
      {});
  // kDft in ONE DFT pass over all shots (one_pass, the default: on a CUDA device in float with
  // C >= 3 coils; elsewhere the per-shot form, so the parity case compares the two): shots of
  // unequal sizes crossing the 256-sample group alignment, one shot, many shots in 3D, and 34
  // coils (two passes of the tensor-core kernels: 32 images, then 2).
  for (const auto& [name, spec] : one_pass_specs())
    reg(name, [spec](const Context& c) { return make_pcsense<T>(make_problem(spec), c, options_of<T>(K::kDft, 0)); },
        {});
  // The one pass with its normal through the stored Gram matrix (gram): the battery's normal
  // case checks AᴴA against A then Aᴴ, i.e. the matrix against the two DFT passes. 99 voxels (not
  // a multiple of the 32 unit images per build pass) and 5 coils.
  reg("MriPcSenseDftGram2D",
      [](const Context& c) {
        const auto q =
            make_problem({.grid = {11, 9}, .coils = 5, .shots = 3, .interleaves = 6, .samples = 60, .field = true});
        auto o = options_of<T>(K::kDft, 0);
        o.gram = true;
        return make_pcsense<T>(q, c, o);
      },
      {});
  return true;
}

[[maybe_unused]] const bool registered = register_pcsense<float>("Float") && register_pcsense<double>("Double");

// ---------------------------------------------------------------------------------------------

template <class T>
class PcSense : public ::testing::Test {
 protected:
  void SetUp() override { FIELDFT_TEST_SKIP_UNLESS_AVAILABLE(kBackend); }
};
using Precisions = ::testing::Types<float, double>;
TYPED_TEST_SUITE(PcSense, Precisions);

// One operator: the image in, {M, C} out; one encoding per shot, each batched over the C coils.
TYPED_TEST(PcSense, ShapesAndOneBatchedTransformPerShot) {
  using T = TypeParam;
  const auto q = make_problem({.grid = {16, 12}, .coils = 5, .shots = 3, .interleaves = 6, .samples = 20});
  auto a = make_pcsense<T>(q, test_context(), options_of<T>(K::kNufft, battery_eps<T>()));
  EXPECT_EQ(a->domain_shape(), (Shape{16, 12}));
  EXPECT_EQ(a->codomain_shape(), (Shape{120, 5}));
  const std::string name = a->name();
  EXPECT_NE(name.find("3 shots"), std::string::npos) << name;
  std::size_t count = 0;
  for (auto at = name.find("NufftEncoding(16x12 -> 40, batch 5)"); at != std::string::npos;
       at = name.find("NufftEncoding(16x12 -> 40, batch 5)", at + 1))
    ++count;
  EXPECT_EQ(count, 3u) << name;
}

// The model written out: for each shot s, mri::sense on that shot's samples alone (an Encoding
// made here from the shot's positions and times, with the common field map) with the product
// maps S_c·e^{+iφ_s}; its samples must land at their ORIGINAL positions j + M·c of pcsense's
// output, and pcsense's adjoint must be Σ_s of those operators' adjoints of the gathered data.
// The exact DFT on both sides, so only rounding separates them (the DFT battery's thresholds:
// float 1e-5, double 1e-12). A sign error in the phase, a conjugated phase or a wrong sample
// order gives differences of order 1.
TYPED_TEST(PcSense, MatchesTheModelShotByShot) {
  using T = TypeParam;
  const Context c = test_context();
  const auto q =
      make_problem({.grid = {12, 10}, .coils = 3, .shots = 3, .interleaves = 6, .samples = 25, .field = true});
  auto a = make_pcsense<T>(q, c, options_of<T>(K::kDft, 0));
  const auto x = random_complex<T>(q.voxels, 11), y = random_complex<T>(q.samples * q.coils, 12);
  const auto ax = battery_detail::run_apply(*a, x, false);
  const auto ahy = battery_detail::run_apply(*a, y, true);
  std::vector<cdouble> want_ax(ax.size()), want_ahy(static_cast<std::size_t>(q.voxels));
  for (std::int64_t s = 0; s < q.shots; ++s) {
    std::vector<std::int64_t> idx;
    for (std::int64_t j = 0; j < q.samples; ++j)
      if (q.labels[j] == s) idx.push_back(j);
    const std::int64_t ms = static_cast<std::int64_t>(idx.size());
    std::vector<T> kx, ky, times;
    for (auto j : idx) {
      kx.push_back(static_cast<T>(q.kx[j]));
      ky.push_back(static_cast<T>(q.ky[j]));
      times.push_back(static_cast<T>(q.times[j]));
    }
    const auto field = narrow_real<T>(q.field);
    auto enc = std::make_shared<const mri::Encoding<T>>(std::span<const std::int64_t>(q.grid), std::span<const T>(kx),
                                                        std::span<const T>(ky), std::span<const T>(),
                                                        std::span<const T>(times), std::span<const T>(field));
    std::vector<std::complex<T>> product(q.maps.size());
    for (std::size_t i = 0; i < product.size(); ++i) {
      const double phi = static_cast<double>(static_cast<T>(q.phase[i % q.voxels + q.voxels * s]));
      product[i] = std::complex<T>(q.maps[i] * std::polar(1.0, phi));
    }
    auto es = mri::sense<T>(enc, product, q.maps_shape, c, {.encoding = K::kDft});
    const auto ys = battery_detail::run_apply(*es, x, false);
    std::vector<std::complex<T>> gathered(static_cast<std::size_t>(ms * q.coils));
    for (std::int64_t ch = 0; ch < q.coils; ++ch)
      for (std::int64_t i = 0; i < ms; ++i) {
        want_ax[idx[i] + q.samples * ch] = cdouble(ys[i + ms * ch]);
        gathered[i + ms * ch] = y[idx[i] + q.samples * ch];
      }
    const auto xs = battery_detail::run_apply(*es, gathered, true);
    for (std::int64_t v = 0; v < q.voxels; ++v) want_ahy[v] += cdouble(xs[v]);
  }
  const double tol = std::is_same_v<T, float> ? 1e-5 : 1e-12;
  EXPECT_LE(nrmse(ax, want_ax), tol) << "forward";
  EXPECT_LE(nrmse(ahy, want_ahy), tol) << "adjoint";
}

// The sign convention in its simplest form: one shot (no labels), a constant phase φ = 0.7:
// pcsense's data are e^{+0.7i} times SENSE's, and its adjoint e^{−0.7i} times SENSE's adjoint.
TYPED_TEST(PcSense, ConstantPhaseMultipliesTheImage) {
  using T = TypeParam;
  const Context c = test_context();
  const auto q = make_problem({.grid = {12, 10}, .coils = 2, .shots = 1, .interleaves = 3, .samples = 30});
  const std::vector<T> phase(static_cast<std::size_t>(q.voxels), T(0.7));
  auto enc = encoding_of<T>(q, false);
  const auto maps = narrow<T>(q.maps);
  auto a = mri::pcsense<T>(enc, maps, q.maps_shape, phase, q.phase_shape, c, options_of<T>(K::kDft, 0));
  auto b = mri::sense<T>(enc, maps, q.maps_shape, c, {.encoding = K::kDft});
  const auto x = random_complex<T>(q.voxels, 21), y = random_complex<T>(q.samples * q.coils, 22);
  const cdouble p = std::polar(1.0, static_cast<double>(T(0.7)));
  auto scaled = [](const std::vector<std::complex<T>>& v, cdouble s) {
    std::vector<cdouble> r(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) r[i] = s * cdouble(v[i]);
    return r;
  };
  const double tol = std::is_same_v<T, float> ? 1e-5 : 1e-12;
  EXPECT_LE(nrmse(battery_detail::run_apply(*a, x, false), scaled(battery_detail::run_apply(*b, x, false), p)), tol);
  EXPECT_LE(nrmse(battery_detail::run_apply(*a, y, true), scaled(battery_detail::run_apply(*b, y, true), std::conj(p))),
            tol);
}

// Zero phase maps: pcsense is mri::sense on the whole encoding, whatever the shots. DFT: the
// same sums, rounding only (1e-5 / 1e-12). NUFFT: S plans on the shots' samples against one
// plan on all of them, each within ~2·eps of the model: 4·eps; the normals (Toeplitz or not,
// kAuto on both sides) likewise.
TYPED_TEST(PcSense, ZeroPhaseIsSense) {
  using T = TypeParam;
  const Context c = test_context();
  const auto q =
      make_problem({.grid = {16, 12}, .coils = 3, .shots = 4, .interleaves = 8, .samples = 25, .max_phase = 0});
  const auto maps = narrow<T>(q.maps);
  const auto x = random_complex<T>(q.voxels, 31), y = random_complex<T>(q.samples * q.coils, 32);
  for (K kind : {K::kDft, K::kNufft}) {
    SCOPED_TRACE(kind == K::kDft ? "DFT" : "NUFFT");
    auto a = make_pcsense<T>(q, c, options_of<T>(kind, battery_eps<T>()));
    auto b = mri::sense<T>(encoding_of<T>(q), maps, q.maps_shape, c, {.encoding = kind, .eps = battery_eps<T>()});
    const double tol = kind == K::kDft ? (std::is_same_v<T, float> ? 1e-5 : 1e-12) : 4 * battery_eps<T>();
    const auto pa = battery_detail::run_all(*a, x, y), pb = battery_detail::run_all(*b, x, y);
    const auto wide = [](const std::vector<std::complex<T>>& v) { return std::vector<cdouble>(v.begin(), v.end()); };
    EXPECT_LE(nrmse(pa.ax, wide(pb.ax)), tol) << "apply";
    EXPECT_LE(nrmse(pa.ahy, wide(pb.ahy)), tol) << "apply_adjoint";
    EXPECT_LE(nrmse(pa.normal, wide(pb.normal)), tol) << "apply_normal";
  }
}

// A callable encoding is called once per shot with the shot's samples and batch C, and with
// DftEncoding inside gives the very bits of options.encoding = kDft.
TYPED_TEST(PcSense, CallableEncodingPerShot) {
  using T = TypeParam;
  const Context c = test_context();
  const auto q =
      make_problem({.grid = {12, 10}, .coils = 3, .shots = 2, .interleaves = 4, .samples = 20, .field = true});
  std::vector<std::int64_t> seen;
  mri::PcSenseOptions<T> o;
  o.shot_encoding = [&](std::shared_ptr<const mri::Encoding<T>> e, std::int64_t batch) -> OperatorPtr<T> {
    EXPECT_EQ(batch, 3);
    EXPECT_TRUE(e->shots().empty());
    EXPECT_TRUE(e->has_field());
    seen.push_back(e->num_samples());
    return std::make_shared<mri::DftEncoding<T>>(std::move(e), c, mri::DftEncodingOptions{.batch = batch});
  };
  auto a = make_pcsense<T>(q, c, o);
  EXPECT_EQ(seen, (std::vector<std::int64_t>{40, 40}));
  // The built-in per-shot DFT form (not the one-pass form CUDA float would take: a different
  // summation order), so that the two must agree exactly.
  auto ob = options_of<T>(K::kDft, 0);
  ob.one_pass = false;
  auto b = make_pcsense<T>(q, c, ob);
  const auto x = random_complex<T>(q.voxels, 41), y = random_complex<T>(q.samples * q.coils, 42);
  EXPECT_EQ(battery_detail::run_apply(*a, x, false), battery_detail::run_apply(*b, x, false));
  EXPECT_EQ(battery_detail::run_apply(*a, y, true), battery_detail::run_apply(*b, y, true));
}

// ---------------------------------------------------------------------------------------------
// Reconstruction: pcSENSE recovers the image that plain SENSE ruins.

struct Acquisition {
  Problem p;
  std::vector<cdouble> truth, y;  // y: exact noise-free data of the DFT pcSENSE model, {M, C}
};

// The 32² problem of the reconstructions (above); `field`: with readout times at a 1e-5 s dwell
// and a smooth ±80 Hz field map (TimeSegmentedReconstructsLikeTheDft).
Acquisition simulate(bool field) {
  Acquisition q;
  ProblemSpec s{.grid = {32, 32},
                .coils = 8,
                .shots = 4,
                .interleaves = 4,
                .reach = std::numbers::sqrt2,
                .crop = true,
                .normalize = true,
                .max_phase = 3.0,
                .seed = 9};
  if (field) {
    s.field = true;
    s.dwell = 1e-5;
    s.max_hz = 80;
  }
  q.p = make_problem(s);
  const auto phantom = mri::shepp_logan(q.p.grid);
  q.truth.resize(phantom.size());
  for (std::int64_t v = 0; v < q.p.voxels; ++v) {
    const double u = 2.0 * static_cast<double>(v % 32 - 16) / 32, w = 2.0 * static_cast<double>(v / 32 - 16) / 32;
    q.truth[v] = phantom[v] * std::polar(1.0, 0.8 * u - 0.5 * w);
  }
  auto e = make_pcsense<double>(q.p, Context::host(), options_of<double>(K::kDft, 0));
  q.y.resize(static_cast<std::size_t>(q.p.samples * q.p.coils));
  e->apply(q.truth.data(), q.y.data());
  return q;
}

const Acquisition& acquisition() {
  static const Acquisition a = simulate(false);
  return a;
}

// CG from x0 = 0 on data y (host), in a's context; the image back on the host.
template <class T>
std::vector<std::complex<T>> reconstruct(op::LinearOperator<T>& a, const std::vector<cdouble>& y,
                                         const solve::CgOptions& o) {
  ContextVector<T> yv(a.context(), a.codomain_size()), x(a.context(), a.domain_size());
  yv.upload(narrow<T>(y));
  x.upload(std::vector<std::complex<T>>(static_cast<std::size_t>(a.domain_size())));
  (void)solve::cg<T>(a, yv.get(), x.get(), nullptr, o);
  return x.download();
}

// NRMSE of the magnitudes (blind to any phase, so that SENSE's failure is not a phase offset).
template <class T>
double magnitude_nrmse(const std::vector<std::complex<T>>& got, const std::vector<cdouble>& want) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const double d = std::abs(cdouble(got[i])) - std::abs(want[i]);
    num += d * d;
    den += std::norm(want[i]);
  }
  return std::sqrt(num / den);
}

// CG, 60 iterations, λ = 1e-4·M: with Σ_c |S_c|² = 1 and |e^{iφ_s}| = 1, trace(AᴴA) = voxels·M for
// pcSENSE as for SENSE (sense_test.cpp), so the Tikhonov bias is ~1e-4 on components of average
// sampling. Measured NRMSE of pcSENSE: 8.2e-5 (NUFFT and DFT, float and double; M = 2564 per
// coil), the bias and what unpreconditioned CG leaves in 60 steps; bound 5e-4 (a factor 6 above,
// for another backend's NUFFT plan and rounding). Plain SENSE (the same samples and maps, no
// phase) on the same data: NRMSE 0.75, 0.50 on the magnitudes alone — the four shots' images
// add with phases up to 6 rad apart, which cancels signal and leaves each shot's 4×
// undersampling aliasing. Floor 0.3 for both: SENSE must be ruined, not merely worse.
constexpr double kPcSenseBound = 5e-4, kSenseFloor = 0.3;

TYPED_TEST(PcSense, RecoversWhatSenseRuins) {
  using T = TypeParam;
  const Acquisition& q = acquisition();
  const Context c = test_context();
  solve::CgOptions o;
  o.max_iterations = 60;
  o.lambda = 1e-4 * static_cast<double>(q.p.samples);
  const auto maps = narrow<T>(q.p.maps);
  for (K kind : {K::kNufft, K::kDft}) {
    const std::string k = kind == K::kNufft ? "nufft" : "dft";
    auto pcs = make_pcsense<T>(q.p, c, options_of<T>(kind, pcs_eps<T>()));
    auto sense = mri::sense<T>(encoding_of<T>(q.p), maps, q.p.maps_shape, c, {.encoding = kind, .eps = pcs_eps<T>()});
    const auto xp = reconstruct<T>(*pcs, q.y, o), xs = reconstruct<T>(*sense, q.y, o);
    const double ep = nrmse(xp, q.truth), es = nrmse(xs, q.truth), ms = magnitude_nrmse(xs, q.truth);
    ::testing::Test::RecordProperty("pcsense_nrmse_" + k, ::testing::PrintToString(ep));
    ::testing::Test::RecordProperty("sense_nrmse_" + k, ::testing::PrintToString(es));
    ::testing::Test::RecordProperty("sense_magnitude_nrmse_" + k, ::testing::PrintToString(ms));
    std::printf("[ pcsense ] %s %s: pcSENSE NRMSE %.3g, SENSE NRMSE %.3g (magnitude %.3g)\n", k.c_str(),
                std::is_same_v<T, float> ? "float" : "double", ep, es, ms);
    EXPECT_LT(ep, kPcSenseBound) << pcs->name();
    EXPECT_GT(es, kSenseFloor) << "plain SENSE should fail on shots with different phases";
    EXPECT_GT(ms, kSenseFloor) << "plain SENSE's magnitude should fail too";
  }
}

// Field-map data: simulate(true), the data of the exact DFT pcSENSE model in double with a peak
// field phase of about 2π·80 Hz·8 ms ≈ 4 rad. options.encoding = kTimeSegmented (accuracy 1e-3,
// L chosen per shot) against kDft: the forward within the accuracy (its l2 error sits far below
// the worst case the accuracy bounds; measured 1.6e-5, float and double), and the CG images (60
// iterations, λ = 1e-4·M as above) within the accuracy of each other (measured 2.4e-5) and each
// within the pcSENSE bound of the truth (measured 8.5e-5).
TYPED_TEST(PcSense, TimeSegmentedReconstructsLikeTheDft) {
  using T = TypeParam;
  constexpr double accuracy = 1e-3;
  static const Acquisition field = simulate(true);
  const Context c = test_context();
  auto ts = make_pcsense<T>(field.p, c, options_of<T>(K::kTimeSegmented, pcs_eps<T>(), mri::Toeplitz::kAuto, accuracy));
  auto dft = make_pcsense<T>(field.p, c, options_of<T>(K::kDft, 0));
  EXPECT_NE(ts->name().find("TimeSegmented"), std::string::npos) << ts->name();
  const double forward = nrmse(battery_detail::run_apply(*ts, narrow<T>(field.truth), false), field.y);
  EXPECT_LT(forward, accuracy);
  solve::CgOptions o;
  o.max_iterations = 60;
  o.lambda = 1e-4 * static_cast<double>(field.p.samples);
  const auto xt = reconstruct<T>(*ts, field.y, o), xd = reconstruct<T>(*dft, field.y, o);
  const double d = nrmse(xt, std::vector<cdouble>(xd.begin(), xd.end()));
  const double et = nrmse(xt, field.truth);
  ::testing::Test::RecordProperty("tseg_forward", ::testing::PrintToString(forward));
  ::testing::Test::RecordProperty("tseg_vs_dft", ::testing::PrintToString(d));
  std::printf("[ pcsense ] tseg %s: forward %.3g, image against the DFT's %.3g, against the truth %.3g\n",
              std::is_same_v<T, float> ? "float" : "double", forward, d, et);
  EXPECT_LT(d, accuracy);
  EXPECT_LT(et, kPcSenseBound);
}

// AᴴA x through the operator's apply_normal, x and the result on the host.
template <class T>
std::vector<std::complex<T>> normal_of(op::LinearOperator<T>& a, const std::vector<std::complex<T>>& x) {
  ContextVector<T> in(a.context(), a.domain_size()), out(a.context(), a.domain_size());
  in.upload(x);
  a.apply_normal(in.get(), out.get());
  return out.download();
}

// The one-pass DFT form (one_pass = true, the default) against the per-shot form (false) in the
// same context: forward, adjoint and normal. Taken on a CUDA device in float (C >= 3 coils,
// the tensor-core path); elsewhere both are the per-shot form (the name says which). Both are the
// same sums, within the float DFT's accuracy of the model each (~2e-6 of each vector's largest
// value on the tensor cores): the DFT battery's 1e-5; double 1e-12.
TYPED_TEST(PcSense, OnePassDftIsThePerShotOperator) {
  using T = TypeParam;
  const Context c = test_context();
  const bool one_pass = c.is_cuda() && std::is_same_v<T, float>;
  const double tol = std::is_same_v<T, float> ? 1e-5 : 1e-12;
  for (const auto& [name, spec] : one_pass_specs()) {
    SCOPED_TRACE(name);
    const auto q = make_problem(spec);
    auto o = options_of<T>(K::kDft, 0);
    auto a = make_pcsense<T>(q, c, o);
    o.one_pass = false;
    auto b = make_pcsense<T>(q, c, o);
    EXPECT_EQ(a->name().find("one DFT pass") != std::string::npos, one_pass) << a->name();
    EXPECT_EQ(b->name().find("one DFT pass"), std::string::npos) << b->name();
    EXPECT_EQ(a->codomain_shape(), b->codomain_shape());
    const auto x = random_complex<T>(q.voxels, 31), y = random_complex<T>(q.samples * q.coils, 32);
    auto to_double = [](const std::vector<std::complex<T>>& v) { return std::vector<cdouble>(v.begin(), v.end()); };
    EXPECT_LE(nrmse(battery_detail::run_apply(*a, x, false), to_double(battery_detail::run_apply(*b, x, false))), tol)
        << "forward";
    EXPECT_LE(nrmse(battery_detail::run_apply(*a, y, true), to_double(battery_detail::run_apply(*b, y, true))), tol)
        << "adjoint";
    EXPECT_LE(nrmse(normal_of(*a, x), to_double(normal_of(*b, x))), tol) << "normal";
  }
}

// gram = true: where the one pass runs (a CUDA device, float), the normal through the stored Gram
// matrix, the same operator as the one pass's two DFT passes and the per-shot form (within the
// float DFT's accuracy: the matrix's columns are DFT passes of unit images; the DFT battery's
// 1e-5); forward and adjoint are the one pass's. Elsewhere gram changes nothing (per-shot form).
// The name says which, and whether the matrix is built yet (prepare_normal builds it).
TYPED_TEST(PcSense, GramNormalIsTheExactNormal) {
  using T = TypeParam;
  const Context c = test_context();
  const bool gram = c.is_cuda() && std::is_same_v<T, float>;
  const double tol = std::is_same_v<T, float> ? 1e-5 : 1e-12;
  auto specs = one_pass_specs();
  // 1,600 voxels: two row blocks and two column slices of cuda::gram::product (1,024 each).
  specs.push_back(
      {"Gram40x40", {.grid = {40, 40}, .coils = 8, .shots = 4, .interleaves = 8, .samples = 300, .field = true}});
  for (const auto& [name, spec] : specs) {
    SCOPED_TRACE(name);
    const auto q = make_problem(spec);
    auto o = options_of<T>(K::kDft, 0);
    o.one_pass = false;
    auto per_shot = make_pcsense<T>(q, c, o);
    o.one_pass = true;
    o.gram = true;
    auto a = make_pcsense<T>(q, c, o);
    EXPECT_EQ(a->name().find("Gram matrix") != std::string::npos, gram) << a->name();
    EXPECT_EQ(a->name().find("built at prepare_normal") != std::string::npos, gram) << a->name();
    a->prepare_normal();
    a->prepare_normal();  // idempotent
    if (gram) {
      EXPECT_NE(a->name().find("MiB, built)"), std::string::npos) << a->name();
    }
    const auto x = random_complex<T>(q.voxels, 41);
    const auto ref = normal_of(*per_shot, x);
    EXPECT_LE(nrmse(normal_of(*a, x), std::vector<cdouble>(ref.begin(), ref.end())), tol) << "normal";
  }
}

// The Gram matrix of a 64³ image (262,144² values, 512 GiB) fits on no device: a clear
// kOutOfMemory at prepare_normal that names the sizes and the option, not a failed allocation
// deep inside.
TYPED_TEST(PcSense, GramNormalThatDoesNotFitIsRefused) {
  using T = TypeParam;
  const Context c = test_context();
  if (!(c.is_cuda() && std::is_same_v<T, float>)) GTEST_SKIP() << "the Gram normal runs where the one pass runs";
  const auto q =
      make_problem({.grid = {64, 64, 64}, .coils = 3, .shots = 2, .interleaves = 2, .samples = 20, .field = true});
  auto o = options_of<T>(K::kDft, 0);
  o.gram = true;
  auto a = make_pcsense<T>(q, c, o);
  try {
    a->prepare_normal();
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kOutOfMemory) << e.what();
    const std::string m = e.what();
    EXPECT_NE(m.find("262144x262144"), std::string::npos) << m;
    EXPECT_NE(m.find("PcSenseOptions::gram = false"), std::string::npos) << m;
  }
}

#if FIELDFT_TEST_BACKEND == 2
// The same reconstruction on the host and on the device: the NUFFT within ~2·eps of the model on
// each, and CG's iterates a continuous function of the operator over 60 iterations; bound: the
// pcSENSE bound (each side is within it of the truth).
TYPED_TEST(PcSense, CpuAndGpuReconstructionsAgree) {
  using T = TypeParam;
  const Acquisition& q = acquisition();
  solve::CgOptions o;
  o.max_iterations = 60;
  o.lambda = 1e-4 * static_cast<double>(q.p.samples);
  auto host = make_pcsense<T>(q.p, Context::host(), options_of<T>(K::kNufft, pcs_eps<T>()));
  auto device = make_pcsense<T>(q.p, test_context(), options_of<T>(K::kNufft, pcs_eps<T>()));
  const auto xh = reconstruct<T>(*host, q.y, o), xg = reconstruct<T>(*device, q.y, o);
  const double d = nrmse(xg, std::vector<cdouble>(xh.begin(), xh.end()));
  ::testing::Test::RecordProperty("gpu_vs_cpu", ::testing::PrintToString(d));
  EXPECT_LT(d, kPcSenseBound);
}
#endif

// ---------------------------------------------------------------------------------------------

TYPED_TEST(PcSense, BadInput) {
  using T = TypeParam;
  using C = std::complex<T>;
  const Context c = test_context();
  const auto q = make_problem({.grid = {32, 32}, .coils = 4, .shots = 4, .interleaves = 4, .samples = 30});
  auto enc = encoding_of<T>(q);
  const auto maps = narrow<T>(q.maps);
  const auto phase = narrow_real<T>(q.phase);
  const Shape phase_shape{32, 32, 4};
  const auto shape_error = ErrorCode::kShapeMismatch;
  const auto call = [&](const std::vector<C>& m, const Shape& ms, const std::vector<T>& ph, const Shape& ps,
                        mri::PcSenseOptions<T> o = {}) {
    return [&, m, ms, ph, ps, o] { (void)mri::pcsense<T>(enc, m, ms, ph, ps, c, o); };
  };
  EXPECT_NO_THROW(call(maps, q.maps_shape, phase, phase_shape)());

  // Phase maps for another number of shots than the labels give (3 or 5 for 4).
  const std::vector<T> three(phase.begin(), phase.begin() + 3 * 1024);
  EXPECT_TRUE(throws_error(call(maps, q.maps_shape, three, {32, 32, 3}), shape_error,
                           {"phase maps for 3 shots", "labels give 4 shots", "expected 32x32x4"}));
  std::vector<T> five(phase);
  five.resize(5 * 1024);
  EXPECT_TRUE(throws_error(call(maps, q.maps_shape, five, {32, 32, 5}), shape_error, {"5 shots", "expected 32x32x4"}));
  // Phase maps of another image shape, or without the shot axis.
  EXPECT_TRUE(throws_error(call(maps, q.maps_shape, phase, {32, 16, 8}), shape_error, {"32x16x8", "expected 32x32x4"}));
  EXPECT_TRUE(throws_error(call(maps, q.maps_shape, phase, {32, 128}), shape_error, {"32x128", "expected 32x32x4"}));
  // The data's size against the shape.
  const std::vector<T> short_phase(phase.begin(), phase.end() - 1);
  EXPECT_TRUE(throws_error(call(maps, q.maps_shape, short_phase, phase_shape), shape_error,
                           {"4095", "expected 4096", "32x32x4"}));
  // NaN and Inf, named by shot and voxel: index 165 + 1024·2 is voxel (5, 5) of shot 2.
  for (T bad : {std::numeric_limits<T>::quiet_NaN(), std::numeric_limits<T>::infinity()}) {
    auto ph = phase;
    ph[165 + 1024 * 2] = bad;
    EXPECT_TRUE(throws_error(call(maps, q.maps_shape, ph, phase_shape), ErrorCode::kNonFinite,
                             {"phase map of shot 2", "voxel (5, 5)", "finite"}));
  }
  // A shot label with no samples: labels 0, 1, 3 (no 2).
  {
    auto labels = q.labels;
    for (auto& l : labels)
      if (l == 2) l = 1;
    const auto kx = narrow_real<T>(q.kx), ky = narrow_real<T>(q.ky);
    auto holes = std::make_shared<const mri::Encoding<T>>(
        std::span<const std::int64_t>(q.grid), std::span<const T>(kx), std::span<const T>(ky), std::span<const T>(),
        std::span<const T>(), std::span<const T>(), std::span<const std::int32_t>(labels));
    EXPECT_TRUE(throws_error([&] { (void)mri::pcsense<T>(holes, maps, q.maps_shape, phase, phase_shape, c); },
                             ErrorCode::kInvalidArgument, {"shot 2 has no samples", "0 … 3"}));
  }
  // The coil maps: mri::sense's checks (shape, size, C >= 1, finite).
  EXPECT_TRUE(throws_error(call(maps, {32, 16, 8}, phase, phase_shape), shape_error, {"32x16x8", "expected 32x32xC"}));
  const std::vector<C> short_maps(maps.begin(), maps.end() - 1);
  EXPECT_TRUE(throws_error(call(short_maps, q.maps_shape, phase, phase_shape), shape_error, {"4095", "expected 4096"}));
  EXPECT_TRUE(
      throws_error(call({}, {32, 32, 0}, phase, phase_shape), ErrorCode::kInvalidArgument, {"0 coils", "C >= 1"}));
  {
    auto m = maps;
    m[165 + 1024 * 3] = C(std::numeric_limits<T>::quiet_NaN(), 0);
    EXPECT_TRUE(
        throws_error(call(m, q.maps_shape, phase, phase_shape), ErrorCode::kNonFinite, {"coil map 3", "voxel (5, 5)"}));
  }
  // A null encoding; a field map with the NUFFT; an unknown kind.
  EXPECT_TRUE(throws_error([&] { (void)mri::pcsense<T>(nullptr, maps, q.maps_shape, phase, phase_shape, c); },
                           ErrorCode::kInvalidArgument, {"null"}));
  {
    const auto kx = narrow_real<T>(q.kx), ky = narrow_real<T>(q.ky), field = narrow_real<T>(mri::field_map(q.grid));
    auto with_field = std::make_shared<const mri::Encoding<T>>(
        std::span<const std::int64_t>(q.grid), std::span<const T>(kx), std::span<const T>(ky), std::span<const T>(),
        std::span<const T>(), std::span<const T>(field), std::span<const std::int32_t>(q.labels));
    EXPECT_TRUE(throws_error(
        [&] { (void)mri::pcsense<T>(with_field, maps, q.maps_shape, phase, phase_shape, c, {.encoding = K::kNufft}); },
        ErrorCode::kInvalidArgument, {"field map", "kTimeSegmented", "kDft"}));
  }
  EXPECT_TRUE(throws_error(call(maps, q.maps_shape, phase, phase_shape, {.encoding = static_cast<K>(7)}),
                           ErrorCode::kInvalidArgument, {"options.encoding"}));
  // Callables that return nothing, or an encoding not batched over the coils.
  mri::PcSenseOptions<T> null_op;
  null_op.shot_encoding = [](std::shared_ptr<const mri::Encoding<T>>, std::int64_t) { return OperatorPtr<T>(); };
  EXPECT_TRUE(throws_error(call(maps, q.maps_shape, phase, phase_shape, null_op), ErrorCode::kInvalidArgument,
                           {"shot 0", "null"}));
  mri::PcSenseOptions<T> unbatched;
  unbatched.shot_encoding = [c](std::shared_ptr<const mri::Encoding<T>> e, std::int64_t) -> OperatorPtr<T> {
    return std::make_shared<mri::DftEncoding<T>>(std::move(e), c);
  };
  EXPECT_TRUE(throws_error(call(maps, q.maps_shape, phase, phase_shape, unbatched), shape_error,
                           {"shot 0", "32x32 -> 30", "expected 32x32x4 -> 30x4"}));
#if FIELDFT_TEST_BACKEND == 2
  // A callable's encoding on another stream.
  mri::PcSenseOptions<T> elsewhere;
  elsewhere.shot_encoding = [](std::shared_ptr<const mri::Encoding<T>> e, std::int64_t b) -> OperatorPtr<T> {
    return std::make_shared<mri::DftEncoding<T>>(std::move(e), Context::cuda(0), mri::DftEncodingOptions{.batch = b});
  };
  EXPECT_TRUE(
      throws_error(call(maps, q.maps_shape, phase, phase_shape, elsewhere), ErrorCode::kContextMismatch, {"shot 0"}));
#endif
}

}  // namespace
}  // namespace fieldft::test
