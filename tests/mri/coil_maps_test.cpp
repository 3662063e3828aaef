// mri::estimate_coil_maps on simulated data with known sensitivities, on the backend under test
// (FIELDFT_TEST_BACKEND): smooth coil maps and a smooth-edged object with a slowly varying phase,
// k-space data from the exact DFT (2D) or a 1e-9 NUFFT (3D) in double on the host, then the maps
// estimated by RSS and by ESPIRiT from Cartesian and radial trajectories.
//
// The metric. The maps are only defined up to a per-voxel complex factor common to all coils (RSS
// keeps the object's phase, ESPIRiT an arbitrary one, and both normalise Σ_c |S_c|² = 1), so the
// test compares DIRECTIONS in coil space: per voxel, ε_v = 1 − |⟨S_est, S_true⟩|² / (‖S_est‖²
// ‖S_true‖²), the squared sine of the angle between the estimated and the true C-vector. It is 0
// exactly when S_est = α_v S_true for some complex α_v (the ratios S_c / S_ref agree), and it
// does fail for wrong maps: the negative control below swaps two true coils and gets ε > 0.1.
// It is evaluated inside the object (ρ <= 0.75 of the ellipse), away from the smooth edge, where
// low-resolution blur of the object's edge multiplies the coil profile by a different weight.
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <memory>
#include <numbers>
#include <span>
#include <string>
#include <vector>

#include "fieldft/mri/coil_maps.hpp"
#include "fieldft/mri/encoding.hpp"
#include "support/battery.hpp"
#include "support/context_vector.hpp"

namespace fieldft::test {
namespace {

using mri::CoilMapMethod;
using mri::CoilMapOptions;
using mri::Encoding;

// ---------------------------------------------------------------------------------------------
// Test-local simulation. Not include/fieldft/mri/simulate.hpp: this object has soft edges and its
// own phase, and the coils' profiles and phases are tuned to the 6-point ESPIRiT kernel and the
// 25-point calibration that the bounds below were derived for.

struct Phantom {
  std::vector<std::int64_t> grid;
  std::int64_t coils = 0;
  std::vector<cdouble> maps;   // N × C, the true sensitivities (not normalised)
  std::vector<cdouble> image;  // N
  std::vector<double> rho;     // N, the object's elliptical radius (1 at its edge)
  std::int64_t voxels() const { return static_cast<std::int64_t>(image.size()); }
};

std::array<double, 3> position(const std::vector<std::int64_t>& grid, std::int64_t v) {
  std::array<double, 3> r{0, 0, 0};
  for (std::size_t d = 0; d < grid.size(); ++d) {
    const std::int64_t i = v % grid[d];
    v /= grid[d];
    r[d] = static_cast<double>(i - grid[d] / 2) / static_cast<double>(grid[d]);
  }
  return r;
}

// C coils around the object: Gaussian profiles (width 0.3 FOV) centred 0.55 FOV from the centre,
// each with a linear phase of 0.4 cycles/FOV and its own offset; smooth enough for a 6-point
// ESPIRiT kernel and a 25-point calibration. The object: an ellipse with 0.04-FOV soft edges, a
// brighter inner disc, and a phase ramp of 0.35 cycles across the FOV.
Phantom make_phantom(std::vector<std::int64_t> grid, std::int64_t coils) {
  Phantom p;
  p.grid = std::move(grid);
  p.coils = coils;
  std::int64_t n = 1;
  for (auto g : p.grid) n *= g;
  p.maps.resize(static_cast<std::size_t>(n * coils));
  p.image.resize(static_cast<std::size_t>(n));
  p.rho.resize(static_cast<std::size_t>(n));
  const bool three = p.grid.size() == 3;
  auto soft = [](double rho) { return 1 / (1 + std::exp((rho - 1) / 0.04)); };
  for (std::int64_t v = 0; v < n; ++v) {
    const auto r = position(p.grid, v);
    const double rho = std::sqrt(std::pow(r[0] / 0.34, 2) + std::pow(r[1] / 0.27, 2) + (three ? std::pow(r[2] / 0.3, 2) : 0));
    const double inner = std::hypot(r[0] - 0.08, r[1] - 0.05) / 0.1;
    p.rho[v] = rho;
    p.image[v] = soft(rho) * (1 + 0.5 * soft(inner)) * std::polar(1.0, std::numbers::pi * (0.4 * r[0] - 0.3 * r[1]));
    for (std::int64_t c = 0; c < coils; ++c) {
      const double th = 2 * std::numbers::pi * static_cast<double>(c) / static_cast<double>(coils) + 0.3;
      const double cx = 0.55 * std::cos(th), cy = 0.55 * std::sin(th), cz = three ? 0.2 * (c % 2 ? 1 : -1) : 0;
      const double d2 = std::pow(r[0] - cx, 2) + std::pow(r[1] - cy, 2) + std::pow(r[2] - cz, 2);
      const double ph = 2 * std::numbers::pi * 0.4 * (r[0] * std::cos(th) + r[1] * std::sin(th)) + 0.7 * static_cast<double>(c);
      p.maps[v + n * c] = std::exp(-d2 / (2 * 0.3 * 0.3)) * std::polar(1.0, ph);
    }
  }
  return p;
}

enum class Trajectory { kCartesian, kRadial };

// Cartesian: every integer point of the grid's k-space. Radial (2D): 64 spokes of 2·N/2 samples,
// k = t (cos θ, sin θ), t = −N/2 … N/2 − 1: Nyquist-sampled out to |k| = 64/π ≈ 20 (beyond the
// calibration radius), undersampled beyond.
std::array<std::vector<double>, 3> trajectory(const std::vector<std::int64_t>& grid, Trajectory t) {
  std::array<std::vector<double>, 3> k;
  if (t == Trajectory::kRadial) {
    const std::int64_t spokes = 64, half = grid[0] / 2;
    for (std::int64_t s = 0; s < spokes; ++s) {
      const double th = std::numbers::pi * static_cast<double>(s) / static_cast<double>(spokes);
      for (std::int64_t j = -half; j < half; ++j) {
        k[0].push_back(static_cast<double>(j) * std::cos(th));
        k[1].push_back(static_cast<double>(j) * std::sin(th));
      }
    }
    return k;
  }
  std::int64_t n = 1;
  for (auto g : grid) n *= g;
  for (std::int64_t v = 0; v < n; ++v) {
    std::int64_t r = v;
    for (std::size_t d = 0; d < grid.size(); ++d) {
      k[d].push_back(static_cast<double>(r % grid[d] - grid[d] / 2));
      r /= grid[d];
    }
  }
  return k;
}

template <class T>
std::vector<T> to(const std::vector<double>& v) {
  return std::vector<T>(v.begin(), v.end());
}

// The data y_c = E(S_c m), C × M, in double on the host (exact DFT in 2D, a 1e-9 NUFFT in 3D).
std::vector<cdouble> simulate(const Phantom& p, const std::array<std::vector<double>, 3>& k) {
  auto e = std::make_shared<const Encoding<double>>(p.grid, k[0], k[1], std::span<const double>(k[2]));
  const std::int64_t n = p.voxels(), c = p.coils;
  std::vector<cdouble> coil_images(static_cast<std::size_t>(n * c));
  for (std::int64_t j = 0; j < c; ++j)
    for (std::int64_t v = 0; v < n; ++v) coil_images[v + n * j] = p.maps[v + n * j] * p.image[v];
  std::vector<cdouble> y(static_cast<std::size_t>(e->num_samples() * c));
  if (p.grid.size() == 2) {
    mri::DftEncoding<double> a(e, Context::host(), {.batch = c});
    a.apply(coil_images.data(), y.data());
  } else {
    mri::NufftEncodingOptions o;
    o.eps = 1e-9;
    o.batch = c;
    mri::NufftEncoding<double> a(e, Context::host(), o);
    a.apply(coil_images.data(), y.data());
  }
  return y;
}

// Runs estimate_coil_maps on context c with the data uploaded there; returns the maps on the host.
template <class T>
std::vector<std::complex<T>> estimate(const Phantom& p, const std::array<std::vector<double>, 3>& k,
                                      const std::vector<cdouble>& y, const Context& c, const CoilMapOptions& o,
                                      mri::CoilMapInfo* info = nullptr) {
  const Encoding<T> e(p.grid, to<T>(k[0]), to<T>(k[1]), to<T>(k[2]));
  ContextVector<T> data(c, static_cast<std::int64_t>(y.size())), maps(c, p.voxels() * p.coils);
  data.upload(std::vector<std::complex<T>>(y.begin(), y.end()));
  const auto i = mri::estimate_coil_maps<T>(e, c, std::span<const std::complex<T>>(data.get(), data.size()), p.coils, o,
                                            std::span<std::complex<T>>(maps.get(), maps.size()));
  if (info) *info = i;
  return maps.download();
}

// ---------------------------------------------------------------------------------------------
// Measures.

struct Scores {
  double worst_angle = 0;      // max ε_v inside the object
  double worst_norm = 0;       // max |Σ_c |S_c|² − 1| over unmasked voxels
  std::int64_t masked_inside = 0;  // masked voxels inside the object
  std::int64_t masked = 0;
  bool masked_are_zero = true;
};

template <class M>
Scores score(const Phantom& p, const std::vector<M>& est, const std::vector<cdouble>& truth) {
  Scores s;
  const std::int64_t n = p.voxels(), c = p.coils;
  for (std::int64_t v = 0; v < n; ++v) {
    double ee = 0, tt = 0;
    cdouble et = 0;
    for (std::int64_t j = 0; j < c; ++j) {
      const cdouble a(est[v + n * j]), b = truth[v + n * j];
      ee += std::norm(a);
      tt += std::norm(b);
      et += std::conj(b) * a;
    }
    const bool inside = p.rho[v] <= 0.75;
    if (ee == 0) {
      ++s.masked;
      if (inside) ++s.masked_inside;
      continue;
    }
    s.worst_norm = std::max(s.worst_norm, std::abs(ee - 1));
    if (inside) s.worst_angle = std::max(s.worst_angle, 1 - std::norm(et) / (ee * tt));
  }
  for (std::int64_t v = 0; v < n; ++v) {
    bool all_zero = true, any_zero = false;
    for (std::int64_t j = 0; j < c; ++j) {
      const bool z = std::complex<double>(est[v + n * j]) == cdouble(0);
      all_zero = all_zero && z;
      any_zero = any_zero || z;
    }
    if (any_zero && !all_zero) s.masked_are_zero = false;  // a voxel is masked whole or not at all
  }
  return s;
}

template <class T>
double norm_tolerance() {
  // Σ|S_c|² = 1 by construction (a division by the RSS, or a unit eigenvector), up to rounding
  // in T over C terms: float ~1e-7·C, double ~1e-16·C.
  return sizeof(T) == sizeof(float) ? 1e-5 : 1e-12;
}

template <class T>
class CoilMaps : public ::testing::Test {
 protected:
  void SetUp() override { FIELDFT_TEST_SKIP_UNLESS_AVAILABLE(kBackend); }
};
using Precisions = ::testing::Types<float, double>;
TYPED_TEST_SUITE(CoilMaps, Precisions);

// The metric fails for wrong maps: swapping two true coils (so the ratios S_1/S_0 are wrong)
// gives ε far above every bound used below.
TEST(CoilMapsMetric, FailsForWrongMaps) {
  const Phantom p = make_phantom({48, 48}, 6);
  std::vector<cdouble> swapped = p.maps;
  const std::int64_t n = p.voxels();
  std::swap_ranges(swapped.begin(), swapped.begin() + n, swapped.begin() + n);
  const Scores s = score(p, swapped, p.maps);
  EXPECT_GT(s.worst_angle, 0.1);
}

// Both methods, Cartesian and radial, 48², 6 coils, default options (R = 12).
// RSS: the low-resolution images are S_c·m blurred by the Hann-windowed calibration PSF (main
// lobe ~2/R = 0.17 FOV); where m and S_c both vary over that width the blur of the product is
// not the product of the blurs, and ε grows with (blur · |∇S|/|S|)². Measured (both precisions):
// Cartesian 5.4e-4, radial 7.2e-3 (the cell-count density and the radial PSF add their own blur).
// ESPIRiT: the eigenvector of eigenvalue 1 is the sensitivity itself (no blur of the object
// enters), so ε is limited by how well 6-point kernels span the maps' bandwidth and, for
// non-Cartesian data, by the gridding of the calibration k-space. Measured: Cartesian 2.1e-5,
// radial 6.4e-3. Bounds: 5e-3 / 1e-3 (Cartesian RSS / ESPIRiT: ~10× and ~50× the measured
// values) and 2e-2 (radial, ~3×), all far below the swap control (> 0.1).
TYPED_TEST(CoilMaps, RecoversTheSensitivities) {
  using T = TypeParam;
  const Phantom p = make_phantom({48, 48}, 6);
  const std::int64_t n = p.voxels();
  for (Trajectory t : {Trajectory::kCartesian, Trajectory::kRadial}) {
    const auto k = trajectory(p.grid, t);
    const auto y = simulate(p, k);
    for (CoilMapMethod m : {CoilMapMethod::kRss, CoilMapMethod::kEspirit}) {
      const bool rss = m == CoilMapMethod::kRss, cartesian = t == Trajectory::kCartesian;
      SCOPED_TRACE(std::string(rss ? "RSS, " : "ESPIRiT, ") + (cartesian ? "Cartesian" : "radial"));
      CoilMapOptions o;
      o.method = m;
      mri::CoilMapInfo info;
      const auto maps = estimate<T>(p, k, y, test_context(), o, &info);
      const Scores s = score(p, maps, p.maps);
      EXPECT_GT(info.calibration_samples, 0);
      EXPECT_LE(s.worst_angle, cartesian ? (rss ? 5e-3 : 1e-3) : 2e-2);
      EXPECT_LE(s.worst_norm, norm_tolerance<T>());
      EXPECT_EQ(s.masked_inside, 0) << "voxels inside the object were masked";
      EXPECT_TRUE(s.masked_are_zero);
      if (rss) {
        EXPECT_GT(s.masked, 0) << "the 5% RSS threshold masked no background voxel";
        continue;
      }
      EXPECT_EQ(info.kernel_size, 6);
      EXPECT_EQ(info.calibration_size, 25);
      EXPECT_GT(info.kernel_rank, 0);
      EXPECT_LT(info.kernel_rank, 6 * 36);  // a null space exists: that is what ESPIRiT rests on
      // The reference coil (0 by default) is real and >= 0 where unmasked.
      double worst_imag = 0;
      for (std::int64_t v = 0; v < n; ++v) {
        worst_imag = std::max(worst_imag, std::abs(static_cast<double>(maps[v].imag())));
        EXPECT_GE(maps[v].real(), T(0));
      }
      EXPECT_LE(worst_imag, sizeof(T) == sizeof(float) ? 1e-6 : 1e-14);
    }
  }
}

// 3D: both methods on a 20³ Cartesian acquisition, R = 6 (ESPIRiT with its 3D default ks = 4).
// Measured: RSS 8.8e-3 (a smaller calibration region than in 2D: more blur), ESPIRiT 2.5e-4.
// Bounds 2e-2 and 2e-3.
TYPED_TEST(CoilMaps, ThreeDimensions) {
  using T = TypeParam;
  const Phantom p = make_phantom({20, 20, 20}, 4);
  const auto k = trajectory(p.grid, Trajectory::kCartesian);
  const auto y = simulate(p, k);
  for (CoilMapMethod m : {CoilMapMethod::kRss, CoilMapMethod::kEspirit}) {
    CoilMapOptions o;
    o.method = m;
    o.calibration_radius = 6;
    mri::CoilMapInfo info;
    const auto maps = estimate<T>(p, k, y, test_context(), o, &info);
    const Scores s = score(p, maps, p.maps);
    EXPECT_LE(s.worst_angle, m == CoilMapMethod::kRss ? 2e-2 : 2e-3);
    EXPECT_LE(s.worst_norm, norm_tolerance<T>());
    EXPECT_EQ(s.masked_inside, 0);
    EXPECT_EQ(info.kernel_size, m == CoilMapMethod::kRss ? 0 : 4);
  }
}

// reference_coil = r makes map r real and >= 0 for RSS too, and does not change the directions.
TYPED_TEST(CoilMaps, RssReferenceCoil) {
  using T = TypeParam;
  const Phantom p = make_phantom({32, 32}, 4);
  const auto k = trajectory(p.grid, Trajectory::kCartesian);
  const auto y = simulate(p, k);
  CoilMapOptions o;
  o.calibration_radius = 8;
  const auto plain = estimate<T>(p, k, y, test_context(), o);
  o.reference_coil = 2;
  const auto ref = estimate<T>(p, k, y, test_context(), o);
  const std::int64_t n = p.voxels();
  for (std::int64_t v = 0; v < n; ++v) {
    EXPECT_LE(std::abs(static_cast<double>(ref[v + 2 * n].imag())), sizeof(T) == sizeof(float) ? 1e-6 : 1e-14);
    EXPECT_GE(ref[v + 2 * n].real(), T(0));
    // Same voxel, same direction: |⟨plain, ref⟩| = 1 where both are unmasked.
    cdouble dot = 0;
    double a = 0;
    for (std::int64_t c = 0; c < p.coils; ++c) {
      dot += std::conj(cdouble(plain[v + n * c])) * cdouble(ref[v + n * c]);
      a += std::norm(cdouble(plain[v + n * c]));
    }
    if (a > 0) {
      EXPECT_NEAR(std::abs(dot), 1.0, sizeof(T) == sizeof(float) ? 1e-5 : 1e-12);
    }
  }
}

// The device result equals the host result (the GPU executable only): same algorithm, NUFFTs of
// the same eps on both sides, so the maps agree to ~eps where both keep a voxel; voxels whose RSS
// sits within eps of the threshold may be masked on one side only (at most a few).
TYPED_TEST(CoilMaps, DeviceMatchesHost) {
  using T = TypeParam;
  if (kBackend != Backend::kCuda) GTEST_SKIP() << "host/device agreement needs the GPU executable";
  const Phantom p = make_phantom({48, 48}, 6);
  const auto k = trajectory(p.grid, Trajectory::kRadial);
  const auto y = simulate(p, k);
  for (CoilMapMethod m : {CoilMapMethod::kRss, CoilMapMethod::kEspirit}) {
    CoilMapOptions o;
    o.method = m;
    const auto dev = estimate<T>(p, k, y, test_context(), o);
    const auto host = estimate<T>(p, k, y, Context::host(), o);
    const std::int64_t n = p.voxels();
    std::int64_t differ_mask = 0;
    double num = 0, den = 0;
    for (std::int64_t v = 0; v < n; ++v) {
      bool zd = true, zh = true;
      for (std::int64_t c = 0; c < p.coils; ++c) {
        zd = zd && dev[v + n * c] == std::complex<T>(0);
        zh = zh && host[v + n * c] == std::complex<T>(0);
      }
      if (zd != zh) {
        ++differ_mask;
        continue;
      }
      for (std::int64_t c = 0; c < p.coils; ++c) {
        num += std::norm(cdouble(dev[v + n * c]) - cdouble(host[v + n * c]));
        den += std::norm(cdouble(host[v + n * c]));
      }
    }
    EXPECT_LE(differ_mask, 4);
    EXPECT_LE(std::sqrt(num / den), 1e-3);  // NUFFT eps 1e-5 in the images, float rounding
  }
}

// Bad input: clear errors naming what was expected.
TYPED_TEST(CoilMaps, RefusesBadInput) {
  using T = TypeParam;
  const std::vector<std::int64_t> grid{16, 16};
  const auto k = trajectory(grid, Trajectory::kCartesian);
  const Encoding<T> e(grid, to<T>(k[0]), to<T>(k[1]));
  const std::int64_t m = e.num_samples(), n = e.num_voxels(), c = 2;
  std::vector<std::complex<T>> data(static_cast<std::size_t>(m * c), std::complex<T>(1)), maps(static_cast<std::size_t>(n * c));
  CoilMapOptions o;
  o.calibration_radius = 4;
  const Context host = Context::host();
  auto run = [&](std::int64_t coils, const CoilMapOptions& opt, std::span<const std::complex<T>> d,
                 std::span<std::complex<T>> out) {
    return [&e, &host, coils, opt, d, out] { (void)mri::estimate_coil_maps<T>(e, host, d, coils, opt, out); };
  };
  const std::span<const std::complex<T>> d(data);
  const std::span<std::complex<T>> out(maps);
  EXPECT_TRUE(throws_error(run(0, o, d.subspan(0, 0), out.subspan(0, 0)), ErrorCode::kInvalidArgument, {"coils", "at least 1"}));
  EXPECT_TRUE(throws_error(run(c, o, d.subspan(1), out), ErrorCode::kShapeMismatch, {"data", std::to_string(m * c)}));
  EXPECT_TRUE(throws_error(run(c, o, d, out.subspan(1)), ErrorCode::kShapeMismatch, {"maps", std::to_string(n * c)}));
  for (double r : {0.0, -1.0, 8.5, std::numeric_limits<double>::quiet_NaN()}) {
    CoilMapOptions bad = o;
    bad.calibration_radius = r;
    EXPECT_TRUE(throws_error(run(c, bad, d, out), ErrorCode::kInvalidArgument, {"calibration_radius", "N_d / 2 = 8"}));
  }
  CoilMapOptions bad = o;
  bad.threshold = 1;
  EXPECT_TRUE(throws_error(run(c, bad, d, out), ErrorCode::kInvalidArgument, {"threshold"}));
  bad = o;
  bad.reference_coil = 2;
  EXPECT_TRUE(throws_error(run(c, bad, d, out), ErrorCode::kInvalidArgument, {"reference_coil", "[0, 2)"}));
  const std::vector<double> short_density(static_cast<std::size_t>(m - 1), 1.0);
  bad = o;
  bad.density = short_density;
  EXPECT_TRUE(throws_error(run(c, bad, d, out), ErrorCode::kShapeMismatch, {"density", std::to_string(m)}));
  std::vector<double> negative(static_cast<std::size_t>(m), 1.0);
  negative[3] = -1;
  bad.density = negative;
  EXPECT_TRUE(throws_error(run(c, bad, d, out), ErrorCode::kInvalidArgument, {"density[3]", ">= 0"}));
  bad = o;
  bad.method = CoilMapMethod::kEspirit;
  bad.kernel_size = 9;  // calibration size 2·4 + 1 = 9
  EXPECT_TRUE(throws_error(run(c, bad, d, out), ErrorCode::kInvalidArgument, {"kernel size", "calibration size 9"}));
  bad.kernel_size = 8;
  bad.kernel_threshold = 0;
  EXPECT_TRUE(throws_error(run(c, bad, d, out), ErrorCode::kInvalidArgument, {"kernel_threshold"}));
  bad = o;
  bad.method = CoilMapMethod::kEspirit;
  bad.calibration_radius = 8;
  bad.kernel_size = 7;  // 50 coils · 49 = 2450 > 2048
  std::vector<std::complex<T>> many(static_cast<std::size_t>(m * 50), std::complex<T>(1)), many_maps(static_cast<std::size_t>(n * 50));
  EXPECT_TRUE(throws_error(run(50, bad, many, many_maps), ErrorCode::kTooLarge, {"unknowns", "2048"}));
  // NaN in host data, named by coil and sample.
  std::vector<std::complex<T>> nan_data = data;
  nan_data[static_cast<std::size_t>(m + 5)] = std::complex<T>(std::numeric_limits<T>::quiet_NaN(), 0);
  EXPECT_TRUE(throws_error(run(c, o, nan_data, out), ErrorCode::kNonFinite, {"coil 1", "sample 5", "finite"}));
  // A calibration ball that holds no sample.
  const std::vector<T> far{T(7.5)};
  const Encoding<T> edge(grid, far, far);
  std::vector<std::complex<T>> one(1), one_map(static_cast<std::size_t>(n));
  EXPECT_TRUE(throws_error([&] { (void)mri::estimate_coil_maps<T>(edge, host, std::span<const std::complex<T>>(one), 1, o,
                                                                 std::span<std::complex<T>>(one_map)); },
                           ErrorCode::kInvalidArgument, {"no sample", "calibration radius"}));
}

}  // namespace
}  // namespace fieldft::test
