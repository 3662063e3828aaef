// DftR2: the R2* (within-voxel field gradient) variant. Three kinds of checks:
//  * its definition, against the library's direct double sum (reference::field_dft_r2_*);
//  * its gradient maps (central differences, one-sided edges);
//  * its physics: an object whose field varies linearly inside every voxel, integrated by brute
//    force over 16 sub-samples per voxel and dimension. DftR2 must match that integral far
//    better than Dft, and the sign of its gradient term must be the one that matches.
#include <omp.h>

#include "dft_test_common.hpp"

namespace fieldft::test {
namespace {

using std::numbers::pi;

std::array<std::vector<double>, 3> central_differences(const std::vector<std::int64_t>& grid,
                                                       const std::vector<double>& field_rad) {
  std::array<std::vector<double>, 3> g;
  const std::int64_t n[3] = {grid[0], grid[1], grid.size() == 3 ? grid[2] : 1};
  const std::int64_t stride[3] = {1, n[0], n[0] * n[1]};
  const std::int64_t total = n[0] * n[1] * n[2];
  for (int d = 0; d < static_cast<int>(grid.size()); ++d) {
    g[d].assign(static_cast<std::size_t>(total), 0.0);
    if (n[d] < 2) continue;
    for (std::int64_t v = 0; v < total; ++v) {
      const std::int64_t i = (v / stride[d]) % n[d];
      const double f = field_rad[v] / (2 * pi);
      if (i == 0)
        g[d][v] = field_rad[v + stride[d]] / (2 * pi) - f;
      else if (i == n[d] - 1)
        g[d][v] = f - field_rad[v - stride[d]] / (2 * pi);
      else
        g[d][v] = (field_rad[v + stride[d]] - field_rad[v - stride[d]]) / (4 * pi);
    }
  }
  return g;
}

template <class T>
std::unique_ptr<mri::DftR2<T>> make_r2(const DftProblem<T>& p, std::int64_t images = 1) {
  return std::make_unique<mri::DftR2<T>>(p.grid, std::span<const T>(p.kx), std::span<const T>(p.ky),
                                         p.kz_span(), std::span<const T>(p.field),
                                         std::span<const T>(p.times), dft_options(images));
}

template <class T>
class DftR2Test : public ::testing::Test {
 protected:
  void SetUp() override { FIELDFT_TEST_SKIP_UNLESS_AVAILABLE(kBackend); }
};
using Precisions = ::testing::Types<float, double>;
TYPED_TEST_SUITE(DftR2Test, Precisions);

TYPED_TEST(DftR2Test, MatchesItsDefinition) {
  using T = TypeParam;
  // Smooth ±300 Hz field: gradients of several Hz per voxel, so G·t reaches ~0.5 and the sinc
  // arguments leave [−½, ½] (the polynomial branch and the reduced branch are both used).
  for (auto grid : {std::vector<std::int64_t>{12, 10, 9}, std::vector<std::int64_t>{24, 20}}) {
    const auto p = make_dft_problem<T>(grid, 800, 71, 300.0, 0.08, FieldKind::kSmooth);
    const auto g = central_differences(p.grid, p.field_d);
    for (std::int64_t c : {1, 3}) {
      auto op = make_r2(p, c);
      ASSERT_TRUE(op->r2());
      const auto x = random_complex<T>(p.voxels * c, 801);
      const auto y = random_complex<T>(p.samples * c, 802);
      std::vector<std::complex<T>> ax(p.samples * c), ahy(p.voxels * c);
      op->forward(x.data(), ax.data());
      op->adjoint(y.data(), ahy.data());
      for (std::int64_t i = 0; i < c; ++i) {
        const std::vector<std::complex<T>> xi(x.begin() + i * p.voxels, x.begin() + (i + 1) * p.voxels);
        const std::vector<std::complex<T>> yi(y.begin() + i * p.samples, y.begin() + (i + 1) * p.samples);
        const std::vector<std::complex<T>> axi(ax.begin() + i * p.samples, ax.begin() + (i + 1) * p.samples);
        const std::vector<std::complex<T>> ahyi(ahy.begin() + i * p.voxels, ahy.begin() + (i + 1) * p.voxels);
        const double ef = rel_error(
            axi, reference::field_dft_r2_forward(p.ksp, p.pos, p.field_d, p.times_d, p.grid, g, widen(xi)));
        const double ea = rel_error(
            ahyi, reference::field_dft_r2_adjoint(p.ksp, p.pos, p.field_d, p.times_d, p.grid, g, widen(yi)));
        // Same thresholds as Dft: float 1e-5 (the requirement), double 1e-12.
        EXPECT_LT(ef, sizeof(T) == 4 ? 1e-5 : 1e-12) << grid.size() << "D, image " << i << " of " << c;
        EXPECT_LT(ea, sizeof(T) == 4 ? 1e-5 : 1e-12) << grid.size() << "D, image " << i << " of " << c;
      }
    }
  }
}

TYPED_TEST(DftR2Test, Adjointness) {
  using T = TypeParam;
  const auto p = make_dft_problem<T>({16, 12, 10}, 2000, 72, 300.0, 0.08, FieldKind::kSmooth);
  auto op = make_r2(p);
  const auto x = random_complex<T>(p.voxels, 811);
  const auto y = random_complex<T>(p.samples, 812);
  std::vector<std::complex<T>> ax(p.samples), ahy(p.voxels);
  op->forward(x.data(), ax.data());
  op->adjoint(y.data(), ahy.data());
  EXPECT_LT((adjointness_defect<T>(x, ax, y, ahy)), sizeof(T) == 4 ? 1e-6 : 1e-13);
}

TYPED_TEST(DftR2Test, GivenGradientMapsEqualDerivedOnes) {
  using T = TypeParam;
  const auto p = make_dft_problem<T>({10, 9, 8}, 300, 73, 300.0, 0.08, FieldKind::kSmooth);
  const auto maps = mri::compute_gradient_maps<T>(p.grid, p.field);
  auto derived = make_r2(p);
  mri::DftR2<T> given(p.grid, std::span<const T>(p.kx), std::span<const T>(p.ky), p.kz_span(),
                      std::span<const T>(p.field), std::span<const T>(p.times),
                      mri::GradientMaps<T>{maps[0], maps[1], maps[2]}, dft_options());
  const auto x = random_complex<T>(p.voxels, 821);
  std::vector<std::complex<T>> a(p.samples), b(p.samples);
  derived->forward(x.data(), a.data());
  given.forward(x.data(), b.data());
  // The given maps are rounded to T; derived ones are not: a difference at T's rounding level.
  EXPECT_LT(rel_error(b, widen(a)), sizeof(T) == 4 ? 1e-6 : 1e-14);
}

TEST(DftGradientMaps, CentralDifferencesWithOneSidedEdges) {
  // f (Hz) = x² + 3y − z·x on a 5×4×3 grid (indices): interior central differences of a
  // quadratic are exact; edges use one-sided differences.
  const std::vector<std::int64_t> grid{5, 4, 3};
  std::vector<double> field;
  auto f = [](double x, double y, double z) { return x * x + 3 * y - z * x; };
  for (int z = 0; z < 3; ++z)
    for (int y = 0; y < 4; ++y)
      for (int x = 0; x < 5; ++x) field.push_back(2 * pi * f(x, y, z));
  const auto g = mri::compute_gradient_maps<double>(grid, field);
  ASSERT_EQ(g[0].size(), 60u);
  ASSERT_EQ(g[2].size(), 60u);
  for (int z = 0; z < 3; ++z)
    for (int y = 0; y < 4; ++y)
      for (int x = 0; x < 5; ++x) {
        const std::size_t v = static_cast<std::size_t>(x + 5 * (y + 4 * z));
        const double gx = x == 0 ? f(1, y, z) - f(0, y, z)
                                 : (x == 4 ? f(4, y, z) - f(3, y, z) : 2.0 * x - z);
        const double gz = z == 0 ? f(x, y, 1) - f(x, y, 0)
                                 : (z == 2 ? f(x, y, 2) - f(x, y, 1) : -static_cast<double>(x));
        EXPECT_NEAR(g[0][v], gx, 1e-12) << x << "," << y << "," << z;
        EXPECT_NEAR(g[1][v], 3.0, 1e-12);
        EXPECT_NEAR(g[2][v], gz, 1e-12);
      }
  // An axis of size 1 has no gradient; 2D maps have no z entry.
  const auto g2 = mri::compute_gradient_maps<float>(std::vector<std::int64_t>{1, 3},
                                                    std::vector<float>{0.f, 6.f, 12.f});
  EXPECT_EQ(g2[0], (std::vector<float>{0.f, 0.f, 0.f}));
  EXPECT_NEAR(g2[1][1], 6.0 / (2 * pi), 1e-6);
  EXPECT_TRUE(g2[2].empty());
}

// ---- physics: brute-force sub-voxel integration -----------------------------------------------

// Object: voxel v is a box of side 1/N_d around r_v holding density m_v; the field inside is
// f(r) = f0 + Σ_d slope_d r_d (Hz, r in FOV units), so it varies linearly within every voxel.
// The signal of sample j is Σ_v m_v · (mean over the box of exp(−2πi (k_j·r + f(r) t_j))).
// The mean is taken numerically with S midpoint sub-samples per dimension — no closed form.
template <class T>
std::vector<cdouble> brute_force_signal(const DftProblem<T>& p, std::span<const cdouble> m, double f0,
                                        const double* slope, int sub) {
  std::vector<cdouble> out(static_cast<std::size_t>(p.samples));
  const int nz_sub = p.dim == 3 ? sub : 1;
  const double inv = 1.0 / (static_cast<double>(sub) * sub * nz_sub);
#pragma omp parallel for schedule(dynamic, 4)
  for (std::int64_t j = 0; j < p.samples; ++j) {
    const double k[3] = {p.ksp.x[j], p.ksp.y[j], p.dim == 3 ? p.ksp.z[j] : 0.0};
    const double t = p.times_d[j];
    cdouble acc = 0;
    for (std::int64_t v = 0; v < p.voxels; ++v) {
      const double rc[3] = {p.pos.x[v], p.pos.y[v], p.dim == 3 ? p.pos.z[v] : 0.0};
      cdouble box = 0;
      for (int sz = 0; sz < nz_sub; ++sz)
        for (int sy = 0; sy < sub; ++sy)
          for (int sx = 0; sx < sub; ++sx) {
            const int s[3] = {sx, sy, sz};
            double cyc = 0, f = f0;
            for (int d = 0; d < p.dim; ++d) {
              const double r = rc[d] + ((s[d] + 0.5) / sub - 0.5) / static_cast<double>(p.grid[d]);
              cyc += k[d] * r;
              f += slope[d] * r;
            }
            cyc += f * t;
            box += std::polar(1.0, -2 * pi * (cyc - std::nearbyint(cyc)));
          }
      acc += m[v] * box * inv;
    }
    out[j] = acc;
  }
  return out;
}

template <class T>
void physics_check(std::vector<std::int64_t> grid, std::int64_t samples, std::uint64_t seed) {
  constexpr int kSub = 16;  // sub-samples per voxel and dimension
  // Hz per FOV, scaled with the grid so that G = slope/N is 18.75, −14.1, 9.4 Hz per voxel: with
  // readouts to 30 ms the gradient term G·t reaches 0.56 cycles, comparable to k/N ≤ ½.
  const double f0 = 40.0;
  double slope[3] = {600.0, -450.0, 300.0};
  for (std::size_t d = 0; d < grid.size(); ++d) slope[d] *= static_cast<double>(grid[d]) / 32.0;
  auto p = make_dft_problem<T>(grid, samples, seed, 0.0, 0.03);
  // Field map at the voxel centres.
  for (std::int64_t v = 0; v < p.voxels; ++v) {
    const double r[3] = {p.pos.x[v], p.pos.y[v], p.dim == 3 ? p.pos.z[v] : 0.0};
    double f = f0;
    for (int d = 0; d < p.dim; ++d) f += slope[d] * r[d];
    p.field[v] = static_cast<T>(2 * pi * f);
    p.field_d[v] = static_cast<double>(p.field[v]);
  }
  const auto m = positive_image<T>(p.voxels, seed + 1);
  const auto truth = brute_force_signal(p, widen(m), f0, slope, kSub);

  auto run = [&](mri::Dft<T>& op) {
    std::vector<std::complex<T>> s(p.samples);
    op.forward(m.data(), s.data());
    return rel_error(s, truth);
  };
  auto dft = make_dft(p);
  auto r2 = make_r2(p);  // gradients from central differences of the field map
  std::array<std::vector<T>, 3> flipped, zero;
  for (int d = 0; d < p.dim; ++d) {
    flipped[d].assign(static_cast<std::size_t>(p.voxels), T(0));
    zero[d].assign(static_cast<std::size_t>(p.voxels), T(0));
    for (std::int64_t v = 0; v < p.voxels; ++v)
      flipped[d][v] = static_cast<T>(-slope[d] / static_cast<double>(p.grid[d]));
  }
  auto with_maps = [&](const std::array<std::vector<T>, 3>& g) {
    return mri::DftR2<T>(p.grid, std::span<const T>(p.kx), std::span<const T>(p.ky), p.kz_span(),
                         std::span<const T>(p.field), std::span<const T>(p.times),
                         mri::GradientMaps<T>{g[0], g[1], g[2]}, dft_options());
  };
  auto r2_flipped = with_maps(flipped);
  auto r2_box = with_maps(zero);
  const double e_dft = run(*dft), e_r2 = run(*r2), e_flip = run(r2_flipped), e_box = run(r2_box);
  std::printf(
      "[ R2* physics %zuD %s, %d^%d sub-samples ] rel. error vs brute force: Dft %.3e, DftR2 %.3e "
      "(ratio %.0f); DftR2 with G = 0 %.3e, with -G %.3e\n",
      grid.size(), sizeof(T) == 4 ? "float" : "double", kSub, static_cast<int>(grid.size()), e_dft,
      e_r2, e_dft / e_r2, e_box, e_flip);
  ::testing::Test::RecordProperty("dft_error", std::to_string(e_dft));
  ::testing::Test::RecordProperty("dftr2_error", std::to_string(e_r2));
  // DftR2 differs from the brute force only by the midpoint rule's own error (the phase across
  // a sub-cell is at most 2π·1.1/16 rad here, ~1e-3 relative); Dft misses the voxel shape and
  // the within-voxel dephasing, errors of tens of percent at the edge of k-space.
  EXPECT_LT(e_r2, 5e-3);
  EXPECT_GT(e_dft / e_r2, 20.0);
  // The gradient term matters and has the right sign: dropping it (box shape only) or flipping
  // it is clearly worse.
  EXPECT_GT(e_box, 4 * e_r2);
  EXPECT_GT(e_flip, 4 * e_r2);
}

TYPED_TEST(DftR2Test, PhysicsTwoDimensions) { physics_check<TypeParam>({32, 32}, 500, 91); }

TYPED_TEST(DftR2Test, PhysicsThreeDimensions) { physics_check<TypeParam>({8, 8, 6}, 120, 92); }

}  // namespace
}  // namespace fieldft::test
