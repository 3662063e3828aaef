// Spread/interpolate-only plans (Options::spread_interp_only, fieldft/nufft.hpp) on the backend
// under test: spreading against the direct double-precision sum Σ_j c_j Ψ_j(l) with the plan's
// kernel, interpolation against its transpose, adjointness, mode order, the sign's irrelevance,
// batching, PlanInfo, refusals, and agreement with the CPU backend.
#include <cmath>
#include <numbers>
#include <string>

#include "fieldft/detail/kernel.hpp"
#include "nufft_test_common.hpp"

namespace fieldft::test {
namespace {

using nufft::Method;
using nufft::Plan;

template <class T>
class NufftSpreadInterp : public NufftTypedTest<T> {};
TYPED_TEST_SUITE(NufftSpreadInterp, Precisions);

nufft::Options spread_only(Method m = Method::kAuto, double upsampfac = 0.0, int modeord = 0) {
  nufft::Options o = options_for(m, upsampfac, modeord);
  o.spread_interp_only = true;
  return o;
}

// Grids of at least 2w cells for the widest kernel used here (w = 16: double, eps 1e-9 at
// upsampfac 1.25), odd and even counts on purpose.
std::vector<std::int64_t> grid_cells(int dim) {
  switch (dim) {
    case 1: return {70};
    case 2: return {36, 33};
    default: return {33, 32, 35};
  }
}

// The kernel's weight of every cell of a grid of n cells for a point at x (radians): ψ(t) =
// φ(2t/w) at the periodic distance t = l − u reduced into [−n/2, n/2), u = n·x/(2π) mod n.
std::vector<double> cell_weights(double x, std::int64_t n, int w, double beta) {
  double u = std::fmod(x / (2 * std::numbers::pi), 1.0) * static_cast<double>(n);
  if (u < 0) u += static_cast<double>(n);
  std::vector<double> out(static_cast<std::size_t>(n));
  for (std::int64_t l = 0; l < n; ++l) {
    double t = static_cast<double>(l) - u;
    t -= static_cast<double>(n) * std::floor(t / static_cast<double>(n) + 0.5);
    out[static_cast<std::size_t>(l)] = detail::es_kernel(2 * t / w, beta);
  }
  return out;
}

// Array index of grid cell l in the given mode order (nufft.hpp): modeord 0 stores cell
// (p − ⌊n/2⌋) mod n at index p, modeord 1 cell p at index p.
std::int64_t index_of_cell(std::int64_t l, std::int64_t n, int modeord) {
  return modeord == 0 ? (l + n / 2) % n : l;
}

// The oracle of both directions, in double: spread f[l] = Σ_j c_j Ψ_j(l) (adjoint = false) or
// interpolate c_j = Σ_l f[l] Ψ_j(l) (adjoint = true), ntransf transforms stacked.
std::vector<cdouble> direct_sum(const reference::Points& pts, std::span<const std::int64_t> cells, int w, double beta,
                                int modeord, const std::vector<cdouble>& in, std::int64_t ntransf, bool interpolate) {
  const int dim = static_cast<int>(cells.size());
  const std::int64_t m = static_cast<std::int64_t>(pts.x.size());
  std::int64_t n[3] = {1, 1, 1};
  for (int d = 0; d < dim; ++d) n[d] = cells[d];
  const std::int64_t total = n[0] * n[1] * n[2];
  std::vector<cdouble> out(static_cast<std::size_t>(ntransf * (interpolate ? m : total)), cdouble(0));
  const std::vector<double>* coords[3] = {&pts.x, &pts.y, &pts.z};
  for (std::int64_t j = 0; j < m; ++j) {
    std::vector<double> wd[3];
    for (int d = 0; d < 3; ++d)
      wd[d] = d < dim ? cell_weights((*coords[d])[j], n[d], w, beta) : std::vector<double>{1.0};
    for (std::int64_t l3 = 0; l3 < n[2]; ++l3)
      for (std::int64_t l2 = 0; l2 < n[1]; ++l2) {
        const double w23 = wd[1][l2] * wd[2][l3];
        if (w23 == 0) continue;
        for (std::int64_t l1 = 0; l1 < n[0]; ++l1) {
          const double psi = wd[0][l1] * w23;
          if (psi == 0) continue;
          const std::int64_t idx = index_of_cell(l1, n[0], modeord) +
                                   n[0] * (index_of_cell(l2, n[1], modeord) + n[1] * index_of_cell(l3, n[2], modeord));
          for (std::int64_t t = 0; t < ntransf; ++t) {
            if (interpolate)
              out[t * m + j] += psi * in[t * total + idx];
            else
              out[t * total + idx] += psi * in[t * m + j];
          }
        }
      }
  }
  return out;
}

// Bound against the direct sums. The plan evaluates φ through its piecewise polynomial, within
// eps/10 of φ in every factor (core::design_kernel), and sums in T: relative to the l2 norm of
// the result that is at most a few eps/10 (measured at most 4.9e-6 for float at eps 1e-4 and
// 1.6e-10 for double at eps 1e-9 over the cases of MatchesTheDirectKernelSums), plus the rounding
// of T over the w^dim terms of each cell (float: about 1e-6). eps + 1e-5 (float) separates this from a slip of the kernel, a cell or the order,
// which gives O(1).
template <class T>
double kernel_bound(double eps) {
  return eps + (sizeof(T) == sizeof(float) ? 1e-5 : 1e-12);
}

// Spreading (type 1, execute) and interpolation (type 2, execute) match the direct sums with the
// plan's kernel, in every dimension, both mode orders, at three upsampling factors (three kernels).
TYPED_TEST(NufftSpreadInterp, MatchesTheDirectKernelSums) {
  using T = TypeParam;
  for (Method meth : point_methods_under_test())
    for (int dim : {1, 2, 3})
      for (double sigma : {0.0, 1.25, 2.25})
        for (int modeord : {0, 1})
          for (int type : {1, 2}) guarded(meth, [&] {
            const auto cells = grid_cells(dim);
            const auto pts = random_points<T>(dim, 300, 700 + dim);
            Plan<T> plan(type, cells, 1, 1, working_eps<T>(), spread_only(meth, sigma, modeord));
            set_points(plan, pts);
            const auto& info = plan.info();
            const auto in = random_complex<T>(input_size(info, false), 701);
            const auto want = direct_sum(pts.exact, cells, info.kernel_width, info.kernel_beta, modeord, widen(in), 1,
                                         type == 2);
            EXPECT_LE(rel_error(apply(plan, in), want), kernel_bound<T>(info.eps))
                << "dim " << dim << ", type " << type << ", upsampfac " << sigma << ", modeord " << modeord
                << ", method " << nufft::method_name(meth);
          });
}

// Batches (ntransf = 3 with max_batch 2: a full and a partial batch) give each transform its own
// direct sum, and execute_adjoint of a type 1 plan is interpolation (the type 2 direct sum).
TYPED_TEST(NufftSpreadInterp, BatchesAndTheAdjointDirection) {
  using T = TypeParam;
  for (int dim : {1, 2, 3})
    for (int type : {1, 2}) {
      const auto cells = grid_cells(dim);
      const auto pts = random_points<T>(dim, 200, 710 + dim);
      nufft::Options o = spread_only();
      o.max_batch = 2;
      Plan<T> plan(type, cells, -1, 3, working_eps<T>(), o);
      set_points(plan, pts);
      const auto& info = plan.info();
      for (bool adjoint : {false, true}) {
        const auto in = random_complex<T>(input_size(info, adjoint), 711);
        const bool interpolate = (type == 2) != adjoint;
        const auto want =
            direct_sum(pts.exact, cells, info.kernel_width, info.kernel_beta, 0, widen(in), 3, interpolate);
        EXPECT_LE(rel_error(apply(plan, in, adjoint), want), kernel_bound<T>(info.eps))
            << "dim " << dim << ", type " << type << (adjoint ? ", adjoint" : ", forward");
      }
    }
}

// <spread c, f> = <c, interpolate f>: the two passes use the same kernel values, so they are
// adjoint to rounding (the NUFFT's own threshold, properties_test.cpp: 1e-5 / 1e-12; a cell or
// order slip between the directions gives O(1)). Also across plans: a type 2 plan's execute
// against a type 1 plan's execute, and isign has no effect.
TYPED_TEST(NufftSpreadInterp, SpreadingAndInterpolationAreAdjoint) {
  using T = TypeParam;
  const double tol = sizeof(T) == sizeof(float) ? 1e-5 : 1e-12;
  for (Method meth : point_methods_under_test())
    for (int dim : {1, 2, 3})
      for (int modeord : {0, 1}) guarded(meth, [&] {
        const auto cells = grid_cells(dim);
        const auto pts = random_points<T>(dim, 1000, 720 + dim);
        Plan<T> spread(1, cells, 1, 1, working_eps<T>(), spread_only(meth, 0.0, modeord));
        Plan<T> interp(2, cells, -1, 1, working_eps<T>(), spread_only(meth, 0.0, modeord));
        set_points(spread, pts);
        set_points(interp, pts);
        const auto c = random_complex<T>(input_size(spread.info(), false), 721);
        const auto f = random_complex<T>(output_size(spread.info(), false), 722);
        const auto sc = apply(spread, c);
        EXPECT_LE(adjointness_defect<T>(c, sc, f, apply(spread, f, true)), tol) << "dim " << dim << ", one plan";
        EXPECT_LE(adjointness_defect<T>(c, sc, f, apply(interp, f)), tol) << "dim " << dim << ", two plans";
        Plan<T> flipped(1, cells, -1, 1, working_eps<T>(), spread_only(meth, 0.0, modeord));
        set_points(flipped, pts);
        EXPECT_LE(rel_error(apply(flipped, c), widen(sc)), tol) << "dim " << dim << ": isign changed the result";
      });
}

TYPED_TEST(NufftSpreadInterp, PlanInfoDescribesTheGrid) {
  using T = TypeParam;
  const std::vector<std::int64_t> cells{40, 36};
  Plan<T> plan(1, cells, 1, 1, working_eps<T>(), spread_only());
  const auto& info = plan.info();
  EXPECT_TRUE(info.spread_interp_only);
  EXPECT_EQ(info.fine_grid, (std::array<std::int64_t, 3>{40, 36, 1}));
  EXPECT_EQ(info.modes, info.fine_grid);
  EXPECT_EQ(info.upsampfac, 2.0);  // 0 means 2 on every backend
  // The kernel of a transform at the same eps and upsampfac.
  Plan<T> transform(1, cells, 1, 1, working_eps<T>(), options_for(Method::kAuto, 2.0));
  EXPECT_EQ(info.kernel_width, transform.info().kernel_width);
  EXPECT_EQ(info.kernel_beta, transform.info().kernel_beta);
  EXPECT_FALSE(transform.info().spread_interp_only);
  // No points: spreading gives zeros.
  plan.set_points(0, nullptr, nullptr);
  const std::vector<std::complex<T>> none;
  const auto out = apply(plan, none);
  for (const auto& v : out) EXPECT_EQ(v, std::complex<T>(0));
}

TYPED_TEST(NufftSpreadInterp, RefusesType3AndGridsNarrowerThanTwoKernels) {
  using T = TypeParam;
  const std::vector<std::int64_t> one{16};
  EXPECT_TRUE(throws_error([&] { (void)Plan<T>(3, one, 1, 1, working_eps<T>(), spread_only()); },
                           ErrorCode::kInvalidArgument, {"spread_interp_only", "type 3"}));
  // eps 1e-4 at upsampfac 2: w = 6, so 11 cells are too few and 12 enough.
  const std::vector<std::int64_t> narrow{11, 40}, enough{12, 40};
  Plan<T> ok(1, enough, 1, 1, 1e-4, spread_only());
  ASSERT_EQ(ok.info().kernel_width, 6);
  EXPECT_TRUE(throws_error([&] { (void)Plan<T>(2, narrow, 1, 1, 1e-4, spread_only()); }, ErrorCode::kInvalidArgument,
                           {"spread_interp_only", "11 cells", "dimension 1", "2w = 12"}));
}

// The same points and data on this backend and on the CPU backend: both are within
// kernel_bound of the direct sums, so within twice that of each other. Every method, both
// directions. (On the CPU battery this would compare the CPU with itself.)
TYPED_TEST(NufftSpreadInterp, AgreesWithTheCpuBackend) {
  using T = TypeParam;
  if (kBackend == Backend::kCpu) GTEST_SKIP() << "compares a backend with the CPU backend; this battery is the CPU's";
  for (Method meth : point_methods_under_test())
    for (int dim : {1, 2, 3})
      for (int type : {1, 2}) guarded(meth, [&] {
        const auto cells = grid_cells(dim);
        const auto pts = random_points<T>(dim, 5000, 730 + dim);
        Plan<T> plan(type, cells, 1, 2, working_eps<T>(), spread_only(meth));
        nufft::Options cpu_opt = spread_only();
        cpu_opt.backend = Backend::kCpu;
        Plan<T> cpu(type, cells, 1, 2, working_eps<T>(), cpu_opt);
        set_points(plan, pts);
        set_points(cpu, pts);
        for (bool adjoint : {false, true}) {
          const auto in = random_complex<T>(input_size(plan.info(), adjoint), 731);
          EXPECT_LE(rel_error(apply(plan, in, adjoint), widen(apply(cpu, in, adjoint))),
                    2 * kernel_bound<T>(plan.info().eps))
              << "dim " << dim << ", type " << type << (adjoint ? ", adjoint" : ", forward") << ", method "
              << nufft::method_name(meth);
        }
      });
}

}  // namespace
}  // namespace fieldft::test
