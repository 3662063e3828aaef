// The simulation helpers of fieldft/mri/simulate.hpp (host code, no backend): the Shepp–Logan
// values and areas, the trajectories' range and Nyquist coverage, readout times, coil maps, field
// maps, noise statistics, and bad input.
#include "fieldft/mri/simulate.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <numbers>
#include <vector>

#include "support/gtest_helpers.hpp"

namespace fieldft::test {
namespace {

using Grid = std::vector<std::int64_t>;
constexpr double kPi = std::numbers::pi;

// Voxel centres on a 100² grid sit at u = 2(i − 50)/100 = 0.02·(i − 50): the table's landmarks
// land exactly on voxel centres, and one sub-sample per voxel reads the table's value there.
TEST(Simulate, SheppLoganValuesAtLandmarks) {
  const Grid grid{100, 100};
  const auto img = mri::shepp_logan(grid, 1);
  ASSERT_EQ(img.size(), 10000u);
  const auto at = [&](double u, double v) {
    const auto i = static_cast<std::size_t>(std::lround(50 + u / 0.02));
    const auto j = static_cast<std::size_t>(std::lround(50 + v / 0.02));
    return img[i + 100 * j];
  };
  EXPECT_NEAR(at(0, 0), 0.2, 1e-12);       // skull 1, brain −0.8
  EXPECT_NEAR(at(0, 0.9), 1.0, 1e-12);     // skull only (the brain ends at y = 0.856)
  EXPECT_NEAR(at(0.22, 0), 0.0, 1e-12);    // right ventricle: 1 − 0.8 − 0.2
  EXPECT_NEAR(at(-0.22, 0), 0.0, 1e-12);   // left ventricle
  EXPECT_NEAR(at(0, -0.1), 0.3, 1e-12);    // the small ellipse at (0, −0.1)
  EXPECT_NEAR(at(0, 0.35), 0.3, 1e-12);    // the ellipse at (0, 0.35)
  EXPECT_NEAR(at(0.9, 0.9), 0.0, 1e-12);   // outside the head
  EXPECT_NEAR(at(0, -0.96), 0.0, 1e-12);   // below the skull (b = 0.92)
}

// The image's mean is Σ_e value_e · (area of e) / (area of the FOV): π a b / 4 in 2D and
// (4/3) π a b c / 8 in 3D (every ellipse lies inside the FOV). The sub-sample average converges
// to it: measured relative differences 1.3e-2, 2e-3, 1e-3, 3e-5 for K = 1, 2, 4, 8 at 64² (the
// smallest ellipses are under a voxel across) and 1e-3 for K = 4 at 24³. Bounds: 3e-3 for the
// default K = 4, 2e-4 for K = 16 (2D only: 16³ sub-samples per voxel would take seconds).
TEST(Simulate, SheppLoganMeanIsTheAreaIntegral) {
  for (int dim : {2, 3}) {
    const Grid grid = dim == 2 ? Grid{64, 64} : Grid{24, 24, 24};
    double want = 0;
    for (const auto& e : mri::shepp_logan_ellipses(dim))
      want += dim == 2 ? e.value * kPi * e.semi_axes[0] * e.semi_axes[1] / 4
                       : e.value * (4.0 / 3) * kPi * e.semi_axes[0] * e.semi_axes[1] * e.semi_axes[2] / 8;
    for (int k : dim == 2 ? std::vector<int>{4, 16} : std::vector<int>{4}) {
      const auto img = mri::shepp_logan(grid, k);
      double mean = 0;
      for (double v : img) mean += v;
      mean /= static_cast<double>(img.size());
      EXPECT_NEAR(mean / want, 1.0, k == 4 ? 3e-3 : 2e-4) << dim << "D, " << k << " sub-samples";
      const auto [lo, hi] = std::minmax_element(img.begin(), img.end());
      EXPECT_GE(*lo, -1e-12);
      EXPECT_LE(*hi, 1.0 + 1e-12);
    }
  }
}

// The largest distance from a Cartesian k-space point inside radius `r` to its nearest sample.
double largest_gap(const mri::Trajectory& t, double r) {
  double worst = 0;
  const int n = static_cast<int>(std::ceil(r));
  for (int y = -n; y <= n; ++y)
    for (int x = -n; x <= n; ++x) {
      if (x * x + y * y > r * r) continue;
      double best = std::numeric_limits<double>::infinity();
      for (std::int64_t j = 0; j < t.size(); ++j)
        best = std::min(best, std::hypot(t.kx[j] - x, t.ky[j] - y));
      worst = std::max(worst, best);
    }
  return worst;
}

// Nyquist-ish coverage: spiral arms 1 cycle/FOV apart with samples <= 1 apart along them leave
// no point of the disc farther than √(0.5² + 0.5²) ≈ 0.71 from a sample; radial spokes 1 apart at
// the edge with samples 0.5 apart, √(0.5² + 0.25²) ≈ 0.56. Checked inside |k| <= N/2 − 1 (the
// outermost ring is reached only up to τ = (S−1)/S).
TEST(Simulate, TrajectoriesCoverTheDiscAtTheNyquistSpacing) {
  const Grid grid{32, 32};
  const auto s = mri::spiral_trajectory(grid);
  EXPECT_EQ(s.interleaves, 4);  // the default max(1, N/8)
  EXPECT_EQ(s.size(), s.interleaves * s.samples);
  double kmax = 0, step = 0;
  for (std::int64_t j = 0; j < s.size(); ++j) {
    EXPECT_LE(std::abs(s.kx[j]), 16.0);
    EXPECT_LE(std::abs(s.ky[j]), 16.0);
    kmax = std::max(kmax, std::hypot(s.kx[j], s.ky[j]));
    if (j % s.samples) step = std::max(step, std::hypot(s.kx[j] - s.kx[j - 1], s.ky[j] - s.ky[j - 1]));
  }
  EXPECT_GT(kmax, 15.9);
  EXPECT_LE(step, 1.0);  // the default samples: Nyquist along the arm
  EXPECT_EQ(s.kx[0], 0.0);
  EXPECT_LE(largest_gap(s, 15), 0.75);

  const auto r = mri::radial_trajectory(grid);
  EXPECT_EQ(r.interleaves, 2 * 51);  // 2⌈π·32/2⌉
  EXPECT_EQ(r.samples, 32);
  EXPECT_LE(largest_gap(r, 15), 0.6);
  const auto d = mri::radial_trajectory(grid, {.centre_out = false});
  EXPECT_EQ(d.interleaves, 51);
  EXPECT_EQ(d.samples, 64);
  EXPECT_DOUBLE_EQ(d.kx[0], -16.0);  // diameters start at −N/2
  EXPECT_LE(largest_gap(d, 15), 0.6);

  // Oversampling 2 halves the arm spacing: twice the turns, twice the default samples per arm.
  const auto s2 = mri::spiral_trajectory(grid, {.oversampling = 2});
  EXPECT_NEAR(static_cast<double>(s2.samples) / static_cast<double>(s.samples), 2.0, 0.01);
  EXPECT_LE(largest_gap(s2, 15), 0.5);
}

// 3D: the 2D pattern repeated on the Nz planes kz = p − ⌊Nz/2⌋, planes slowest.
TEST(Simulate, StackOfSpiralsAndReadoutTimes) {
  const Grid grid{16, 12, 5};
  const auto t = mri::spiral_trajectory(grid, {.interleaves = 2, .samples = 30});
  const auto plane = mri::spiral_trajectory(Grid{16, 12}, {.interleaves = 2, .samples = 30});
  ASSERT_EQ(t.partitions, 5);
  ASSERT_EQ(t.size(), 5 * 60);
  ASSERT_EQ(t.kz.size(), 300u);
  for (std::int64_t j = 0; j < t.size(); ++j) {
    EXPECT_EQ(t.kx[j], plane.kx[j % 60]);
    EXPECT_EQ(t.ky[j], plane.ky[j % 60]);
    EXPECT_EQ(t.kz[j], static_cast<double>(j / 60 - 2));
    EXPECT_LE(std::abs(t.ky[j]), 6.0);  // per-axis radius N_y/2
  }
  const auto times = mri::readout_times(t, 4e-6, 1e-3);
  ASSERT_EQ(times.size(), 300u);
  EXPECT_EQ(times[0], 1e-3);
  EXPECT_DOUBLE_EQ(times[29], 1e-3 + 29 * 4e-6);
  EXPECT_EQ(times[30], 1e-3);  // the next readout starts again
}

TEST(Simulate, CoilMaps) {
  const Grid grid{24, 20};
  const std::int64_t v = 24 * 20, coils = 6;
  const auto raw = mri::coil_maps(grid, coils);
  const auto maps = mri::coil_maps(grid, coils, {.normalize = true});
  ASSERT_EQ(maps.size(), static_cast<std::size_t>(v * coils));
  for (std::int64_t i = 0; i < v; ++i) {
    double s = 0;
    for (std::int64_t c = 0; c < coils; ++c) s += std::norm(maps[i + v * c]);
    EXPECT_NEAR(s, 1.0, 1e-12) << "voxel " << i;
    // Normalising divides every coil by the same positive number: phases unchanged.
    EXPECT_NEAR(std::arg(maps[i + v * 2] / raw[i + v * 2]), 0.0, 1e-12);
  }
  // Coil 0 sits at +x: it sees the right side (u = 0.75) better than the left (u = −0.75).
  const std::int64_t right = 12 + 9 + 24 * 10, left = 12 - 9 + 24 * 10;
  EXPECT_GT(std::abs(raw[right]), 2 * std::abs(raw[left]));
  // Smooth: neighbours differ by far less than the maps' scale (width 1 = 12 voxels here).
  for (std::int64_t c = 0; c < coils; ++c)
    for (std::int64_t y = 0; y < 20; ++y)
      for (std::int64_t x = 0; x + 1 < 24; ++x)
        EXPECT_LT(std::abs(raw[x + 1 + 24 * y + v * c] - raw[x + 24 * y + v * c]), 0.2);
}

TEST(Simulate, FieldMap) {
  const Grid grid{20, 16, 6};
  const auto f = mri::field_map(grid, {.max_hz = 80, .blobs = 4, .seed = 7});
  ASSERT_EQ(f.size(), 20u * 16 * 6);
  const auto [lo, hi] = std::minmax_element(f.begin(), f.end());
  EXPECT_NEAR(std::max(-*lo, *hi), 2 * kPi * 80, 1e-9);  // rad/s, the peak exactly max_hz
  EXPECT_LT(*lo, 0.0);                                   // both signs
  EXPECT_GT(*hi, 0.0);
  EXPECT_EQ(f, mri::field_map(grid, {.max_hz = 80, .blobs = 4, .seed = 7}));
  EXPECT_NE(f, mri::field_map(grid, {.max_hz = 80, .blobs = 4, .seed = 8}));
  const auto zero = mri::field_map(grid, {.max_hz = 0});
  EXPECT_TRUE(std::all_of(zero.begin(), zero.end(), [](double x) { return x == 0; }));
}

// Statistics of n = 2·10⁵ values of standard deviation σ: the mean's parts have standard error
// σ/√(2n), |z|² has mean σ² and standard deviation σ² (|z|²/σ² is exponential); each part has
// variance σ²/2. Bounds: 5 standard errors (a false failure has probability < 1e-6, and the seed
// is fixed anyway).
TEST(Simulate, NoiseStatistics) {
  const std::int64_t n = 200000;
  const double sigma = 0.5;
  std::vector<std::complex<double>> z(static_cast<std::size_t>(n));
  mri::add_noise<double>(z, sigma, 11);
  std::complex<double> mean = 0;
  double power = 0, re2 = 0;
  for (const auto& x : z) {
    mean += x;
    power += std::norm(x);
    re2 += x.real() * x.real();
  }
  mean /= static_cast<double>(n);
  power /= static_cast<double>(n);
  re2 /= static_cast<double>(n);
  const double se = sigma / std::sqrt(2.0 * n);
  EXPECT_LT(std::abs(mean.real()), 5 * se);
  EXPECT_LT(std::abs(mean.imag()), 5 * se);
  EXPECT_NEAR(power, sigma * sigma, 5 * sigma * sigma / std::sqrt(static_cast<double>(n)));
  EXPECT_NEAR(re2, sigma * sigma / 2, 5 * sigma * sigma / std::sqrt(static_cast<double>(n)));
  // Added, not overwritten; the same seed gives the same noise in float (rounded).
  std::vector<std::complex<float>> zf(100, std::complex<float>(1, -1));
  mri::add_noise<float>(zf, sigma, 11);
  for (std::size_t i = 0; i < zf.size(); ++i) {
    EXPECT_NEAR(zf[i].real(), 1 + z[i].real(), 1e-6);
    EXPECT_NEAR(zf[i].imag(), -1 + z[i].imag(), 1e-6);
  }
}

// Per-shot phase: image + {S}, every shot's peak |φ_s| exactly max_phase, shots different from each
// other and reproducible from the seed, and a polynomial of degree 2 in the voxel position: along
// x the third differences vanish (to rounding of values of order max_phase), in 2D and 3D.
TEST(Simulate, ShotPhaseMaps) {
  for (const Grid& grid : {Grid{20, 16}, Grid{10, 8, 6}}) {
    const std::int64_t voxels = grid.size() == 2 ? 20 * 16 : 10 * 8 * 6, shots = 4;
    const double max_phase = 2.5;
    const auto phi = mri::shot_phase_maps(grid, shots, {.max_phase = max_phase, .seed = 3});
    ASSERT_EQ(phi.size(), static_cast<std::size_t>(voxels * shots));
    for (std::int64_t s = 0; s < shots; ++s) {
      double peak = 0;
      for (std::int64_t v = 0; v < voxels; ++v) peak = std::max(peak, std::abs(phi[v + voxels * s]));
      EXPECT_NEAR(peak, max_phase, 1e-12) << "shot " << s;
      if (s > 0) {
        double diff = 0;
        for (std::int64_t v = 0; v < voxels; ++v) diff = std::max(diff, std::abs(phi[v + voxels * s] - phi[v]));
        EXPECT_GT(diff, 0.1 * max_phase) << "shot " << s << " repeats shot 0";
      }
      const std::int64_t nx = grid[0];
      for (std::int64_t row = 0; row < voxels / nx; ++row)
        for (std::int64_t x = 0; x + 3 < nx; ++x) {
          const double* f = phi.data() + voxels * s + nx * row + x;
          EXPECT_NEAR(f[3] - 3 * f[2] + 3 * f[1] - f[0], 0.0, 1e-12);
        }
    }
    EXPECT_EQ(phi, mri::shot_phase_maps(grid, shots, {.max_phase = max_phase, .seed = 3}));
    EXPECT_NE(phi, mri::shot_phase_maps(grid, shots, {.max_phase = max_phase, .seed = 4}));
    const auto zero = mri::shot_phase_maps(grid, 2, {.max_phase = 0});
    EXPECT_TRUE(std::all_of(zero.begin(), zero.end(), [](double x) { return x == 0; }));
  }
}

// Interleave l of every partition goes to shot l mod S.
TEST(Simulate, ShotLabelsFromInterleaves) {
  const auto t = mri::spiral_trajectory(Grid{16, 16}, {.interleaves = 6, .samples = 10});
  const auto labels = mri::shot_labels(t, 4);
  ASSERT_EQ(labels.size(), 60u);
  for (std::int64_t j = 0; j < 60; ++j) EXPECT_EQ(labels[j], (j / 10) % 4) << "sample " << j;
  const auto one = mri::shot_labels(t, 1);
  EXPECT_TRUE(std::all_of(one.begin(), one.end(), [](std::int32_t l) { return l == 0; }));
  const auto t3 = mri::spiral_trajectory(Grid{16, 16, 3}, {.interleaves = 4, .samples = 5});
  const auto l3 = mri::shot_labels(t3, 2);
  ASSERT_EQ(l3.size(), 60u);
  for (std::int64_t j = 0; j < 60; ++j) EXPECT_EQ(l3[j], ((j / 5) % 4) % 2) << "sample " << j;
}

TEST(Simulate, BadInput) {
  const Grid g2{16, 16};
  const auto bad = ErrorCode::kInvalidArgument;
  EXPECT_TRUE(throws_error([] { (void)mri::shepp_logan(Grid{16}); }, bad, {"2 or 3 sizes"}));
  EXPECT_TRUE(throws_error([] { (void)mri::shepp_logan(Grid{16, 0}); }, bad, {"grid size 1", ">= 1"}));
  EXPECT_TRUE(throws_error([&] { (void)mri::shepp_logan(g2, 0); }, bad, {"subsamples", "1 ... 16"}));
  EXPECT_TRUE(throws_error([] { (void)mri::shepp_logan_ellipses(4); }, bad, {"dim", "2 or 3"}));
  const mri::Ellipse flat{1, {0, 0, 0}, {0.5, 0, 1}, 0};
  EXPECT_TRUE(throws_error([&] { (void)mri::ellipse_phantom(g2, std::span(&flat, 1)); }, bad,
                           {"ellipse 0", "semi-axis 1", "> 0"}));
  EXPECT_TRUE(throws_error([&] { (void)mri::spiral_trajectory(g2, {.interleaves = -1}); }, bad,
                           {"interleaves", ">= 1"}));
  EXPECT_TRUE(throws_error([&] { (void)mri::spiral_trajectory(g2, {.reach = 3}); }, bad, {"reach", "(0"}));
  EXPECT_TRUE(throws_error([&] { (void)mri::spiral_trajectory(g2, {.oversampling = std::nan("")}); }, bad,
                           {"oversampling", "finite"}));
  EXPECT_TRUE(throws_error([&] { (void)mri::radial_trajectory(g2, {.samples = -2}); }, bad, {"samples"}));
  const auto t = mri::radial_trajectory(g2);
  EXPECT_TRUE(throws_error([&] { (void)mri::readout_times(t, -1e-6); }, bad, {"dwell_s"}));
  EXPECT_TRUE(throws_error([&] { (void)mri::coil_maps(g2, 0); }, bad, {"coils", ">= 1"}));
  EXPECT_TRUE(throws_error([&] { (void)mri::coil_maps(g2, 4, {.width = 0}); }, bad, {"width"}));
  EXPECT_TRUE(throws_error([&] { (void)mri::field_map(g2, {.max_hz = -5}); }, bad, {"max_hz"}));
  EXPECT_TRUE(throws_error([&] { (void)mri::field_map(g2, {.blobs = 0}); }, bad, {"blobs"}));
  EXPECT_TRUE(throws_error([&] { (void)mri::shot_phase_maps(g2, 0); }, bad, {"shots", ">= 1"}));
  EXPECT_TRUE(throws_error([&] { (void)mri::shot_phase_maps(g2, 2, {.max_phase = -1}); }, bad, {"max_phase"}));
  EXPECT_TRUE(throws_error([&] { (void)mri::shot_phase_maps(g2, 2, {.max_phase = std::nan("")}); }, bad,
                           {"max_phase", "finite"}));
  const auto arms = mri::spiral_trajectory(g2, {.interleaves = 4, .samples = 8});
  EXPECT_TRUE(throws_error([&] { (void)mri::shot_labels(arms, 0); }, bad, {"shots is 0", "1 ... 4"}));
  EXPECT_TRUE(throws_error([&] { (void)mri::shot_labels(arms, 5); }, bad, {"shots is 5", "1 ... 4", "interleaves"}));
  auto cut = arms;
  cut.kx.pop_back();
  cut.ky.pop_back();
  EXPECT_TRUE(throws_error([&] { (void)mri::shot_labels(cut, 2); }, bad, {"31 samples", "4 x 8 x 1"}));
  std::vector<std::complex<double>> z(4);
  EXPECT_TRUE(throws_error([&] { mri::add_noise<double>(z, std::numeric_limits<double>::infinity(), 1); }, bad,
                           {"sigma", "finite"}));
  EXPECT_TRUE(throws_error([&] { mri::add_noise<double>(z, -1, 1); }, bad, {"sigma"}));
}

}  // namespace
}  // namespace fieldft::test
