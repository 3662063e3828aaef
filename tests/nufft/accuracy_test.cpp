// Accuracy of the NUFFT against the exact direct sums (fieldft/reference.hpp): the tolerance
// sweep, both signs, both mode orders, the adjoint, folding of far-away points, points on the
// period boundary, tiny mode counts and the automatic upsampling factor.
#include <algorithm>
#include <cmath>
#include <numbers>
#include <sstream>

#include "nufft_test_common.hpp"

namespace fieldft::test {
namespace {

using nufft::Method;
using nufft::Plan;

// ---------------------------------------------------------------------------------------------
// The sweep: one test per (type, dim, precision, upsampfac, method), looping over eps.

struct SweepParam {
  int type;
  int dim;
  Precision precision;
  double upsampfac;
  Method method;
};

void PrintTo(const SweepParam& p, std::ostream* os) {
  *os << "type " << p.type << ", " << p.dim << "D, " << precision_name(p.precision)
      << ", upsampfac " << p.upsampfac << ", method " << nufft::method_name(p.method);
}

std::string sweep_name(const ::testing::TestParamInfo<SweepParam>& info) {
  const auto& p = info.param;
  std::ostringstream sigma, os;
  sigma << p.upsampfac;  // 2, 1.25, 2.25, 1.6 -> 2, 1p25, 2p25, 1p6
  std::string s = sigma.str();
  std::replace(s.begin(), s.end(), '.', 'p');
  os << "type" << p.type << "_" << p.dim << "d_" << precision_name(p.precision) << "_sigma" << s << "_"
     << nufft::method_name(p.method);
  return os.str();
}

std::vector<SweepParam> sweep_params() {
  std::vector<SweepParam> v;
  for (Method m : point_methods_under_test())
    for (int type : {1, 2, 3})
      for (int dim : {1, 2, 3})
        for (Precision p : {Precision::kFloat, Precision::kDouble})
          for (double s : kSweepUpsampfacs)
            if (type != 3 || m != Method::kPrecomputed) v.push_back({type, dim, p, s, m});
  return v;
}

class AccuracySweep : public NufftTest, public ::testing::WithParamInterface<SweepParam> {};

// The criterion: relative l2 error <= 2·eps wherever eps is at or above the precision
// floor F (accuracy_sweep.hpp), and <= 2·F below it. A plan may refuse an eps only where it is
// below min_reachable_eps, and must then say so with kEpsTooSmall.
TEST_P(AccuracySweep, ErrorWithinTwiceEps) {
  const SweepParam& p = GetParam();
  const auto modes = sweep_problem(p.type, p.dim).modes;
  for (double eps : sweep_eps(p.precision)) {
    SCOPED_TRACE(::testing::Message() << "eps = " << eps);
    guarded(p.method, [&] {
      const SweepResult r =
          run_sweep_case(kBackend, p.method, p.type, p.dim, p.precision, p.upsampfac, eps);
      if (r.refused) {
        EXPECT_TRUE(refusal_is_justified(p.precision, p.type, p.dim, p.upsampfac, eps))
            << "plan refused a tolerance it should reach: " << r.refusal;
        return;
      }
      EXPECT_LE(r.error, r.bound) << "error/eps = " << r.error / eps << ", floor F = " << r.floor
                                  << ", kernel width " << r.info.kernel_width;
      EXPECT_EQ(r.info.upsampfac, p.upsampfac);
      // (Type 3 has no modes; its grid rule is checked by NufftType3.PlanInfoAndGridRule.)
      for (int d = 0; d < p.dim && p.type != 3; ++d)
        EXPECT_GE(static_cast<double>(r.info.fine_grid[d]), p.upsampfac * modes[d])
            << "fine grid smaller than upsampfac·N in dimension " << d + 1;
    });
  }
}

INSTANTIATE_TEST_SUITE_P(Nufft, AccuracySweep, ::testing::ValuesIn(sweep_params()), sweep_name);

// The floor is a model, F = 10·u·G; this keeps it honest (plans the library refuses because u·G > eps
// are checked to be justified instead). The rounding error of float, measured
// as the difference between a float and a double plan with the same kernel, grid and points
// (they differ only in arithmetic), must stay below F on the sweep problems, at every upsampling
// factor and down to min_eps. A float-only defect (a coefficient table or a fold in float, a
// missed widening) shows up here even where eps is large enough to hide it from the sweep.
class FloatRoundingFloor : public NufftTest {};
TEST_F(FloatRoundingFloor, FloatRoundingStaysBelowTheFloor) {
  for (Method m : methods_under_test())
    for (int type : {1, 2, 3})
      for (int dim : {1, 2, 3})
        for (double sigma : {2.0, 1.5, 1.25})
          for (double eps : {1e-3, 1e-5, 1e-7})
            guarded(m, [&] {
              RoundingResult r;
              try {
                r = measure_float_rounding(kBackend, m, type, dim, sigma, eps);
              } catch (const Error& e) {
                // Refusing an eps below the float rounding floor is right; anything else is not.
                if (e.code() != ErrorCode::kEpsTooSmall) throw;
                EXPECT_TRUE(refusal_is_justified(Precision::kFloat, type, dim, sigma, eps)) << e.what();
                return;
              }
              EXPECT_LE(r.difference, precision_floor(Precision::kFloat, r.info))
                  << "type " << type << ", dim " << dim << ", upsampfac " << sigma << ", eps "
                  << eps << ", gain " << r.gain << ", method " << nufft::method_name(m);
            });
}

// ---------------------------------------------------------------------------------------------
// Properties checked against the oracle at one working tolerance.

TYPED_TEST_SUITE(NufftTypedTest, Precisions);

template <class T>
void check_against_oracle(int type, int dim, int isign, int modeord, Method method,
                          std::uint64_t seed, const PointSet<T>& pts, bool adjoint = false) {
  const auto modes = test_modes(dim);
  const double eps = working_eps<T>();
  Plan<T> plan(type, modes, isign, 1, eps, options_for(method, 0.0, modeord));
  set_points(plan, pts);
  // The map applied: the plan's type, or for the adjoint the other type with -isign.
  const int applied_type = adjoint ? 3 - type : type;
  const int applied_sign = adjoint ? -plan.info().isign : plan.info().isign;
  const std::int64_t n_in = applied_type == 1 ? pts.size() : num_modes(modes);
  const auto in = random_complex<T>(n_in, seed);
  const auto got = apply(plan, in, adjoint);
  const auto want = oracle(applied_type, pts.exact, widen(in), modes, applied_sign, modeord);
  EXPECT_LE(rel_error(got, want), property_bound(plan))
      << "type " << type << (adjoint ? " adjoint" : "") << ", dim " << dim << ", isign " << isign
      << ", modeord " << modeord << ", method " << nufft::method_name(method);
}

TYPED_TEST(NufftTypedTest, BothSignsMatchOracle) {
  using T = TypeParam;
  for (Method m : point_methods_under_test())
    for (int dim : {1, 2, 3}) {
      const auto pts = random_points<T>(dim, 1500, 20 + dim);
      for (int type : {1, 2})
        for (int isign : {1, -1})
          guarded(m, [&] { check_against_oracle<T>(type, dim, isign, 0, m, 21, pts); });
    }
}

TYPED_TEST(NufftTypedTest, FftModeOrderMatchesOracle) {
  using T = TypeParam;
  for (Method m : point_methods_under_test())
    for (int dim : {1, 2, 3}) {
      const auto pts = random_points<T>(dim, 1500, 30 + dim);
      for (int type : {1, 2})
        guarded(m, [&] { check_against_oracle<T>(type, dim, 1, 1, m, 31, pts); });
    }
}

// modeord 1 changes only where each mode is stored: the two orders must give the same numbers
// up to the permutation (to rounding, as a backend may fuse the reordering with other work).
TYPED_TEST(NufftTypedTest, ModeOrdersArePermutationsOfEachOther) {
  using T = TypeParam;
  for (int dim : {1, 2, 3}) {
    const auto modes = test_modes(dim);
    const auto perm = modeord_permutation(modes);
    const auto pts = random_points<T>(dim, 800, 40 + dim);
    Plan<T> p0(1, modes, 1, 1, working_eps<T>(), options_for(Method::kAuto, 0.0, 0));
    Plan<T> p1(1, modes, 1, 1, working_eps<T>(), options_for(Method::kAuto, 0.0, 1));
    set_points(p0, pts);
    set_points(p1, pts);
    // type 1 (execute): f1[perm[i]] == f0[i].
    const auto c = random_complex<T>(pts.size(), 41);
    const auto f0 = apply(p0, c);
    const auto f1 = apply(p1, c);
    std::vector<std::complex<T>> f1_in_order0(f0.size());
    for (std::size_t i = 0; i < f0.size(); ++i) f1_in_order0[i] = f1[perm[i]];
    const double tol = std::max(rounding_tolerance(p0), rounding_tolerance(p1));
    EXPECT_LE(rel_error(f1_in_order0, widen(f0)), tol) << "dim " << dim << ", type 1";
    // type 2 (execute_adjoint of the same plans): permuting the input leaves c unchanged.
    const auto g0 = random_complex<T>(num_modes(modes), 42);
    std::vector<std::complex<T>> g1(g0.size());
    for (std::size_t i = 0; i < g0.size(); ++i) g1[perm[i]] = g0[i];
    EXPECT_LE(rel_error(apply(p1, g1, true), widen(apply(p0, g0, true))), tol)
        << "dim " << dim << ", type 2 (adjoint)";
  }
}

// execute_adjoint of a type-1 plan is the type-2 transform with -isign, and vice versa.
TYPED_TEST(NufftTypedTest, ExecuteAdjointMatchesOracle) {
  using T = TypeParam;
  for (Method m : point_methods_under_test())
    for (int dim : {1, 2, 3}) {
      const auto pts = random_points<T>(dim, 1500, 50 + dim);
      for (int type : {1, 2})
        for (int isign : {1, -1})
          for (int modeord : {0, 1})
            guarded(m, [&] {
              check_against_oracle<T>(type, dim, isign, modeord, m, 51, pts, /*adjoint=*/true);
            });
    }
}

// Points are 2π-periodic: any finite coordinate is folded. Coordinates shifted by up to ±1000
// periods (|x| up to ~6300) must cost no accuracy: the oracle uses exactly the shifted values (as
// rounded to T), and the library folds in double (fieldft/detail/fold.hpp). Folding with float
// arithmetic would cost a phase error of ~|x|·|k|·u, rms ≈ 6300·32·6e-8/√3 ≈ 7e-3 rad — over ten
// times the property bound 5·eps = 5e-4 — so the float variant detects it; in double the same
// arithmetic costs ~1e-11, far below 5·eps = 5e-9.
TYPED_TEST(NufftTypedTest, FoldsPointsFarOutsideThePeriod) {
  using T = TypeParam;
  const std::int64_t max_periods = 1000;
  for (int dim : {1, 2, 3}) {
    auto base = random_points<double>(dim, 1200, 60 + dim);
    Rng rng(61 + dim);
    std::vector<double>* axes[3] = {&base.exact.x, &base.exact.y, &base.exact.z};
    for (int d = 0; d < dim; ++d)
      for (auto& v : *axes[d])
        v += 2 * std::numbers::pi * static_cast<double>(rng.integer(-max_periods, max_periods));
    const auto pts = make_points<T>(dim, base.exact.x, base.exact.y, base.exact.z);
    for (int type : {1, 2})
      for (Method m : point_methods_under_test())
        guarded(m, [&] { check_against_oracle<T>(type, dim, 1, 0, m, 62, pts); });
  }
}

// Coordinates on and next to the period boundary: -π must map to the first cell, π (and
// float(π) > π) must wrap to -π, odd multiples of π too, and 0 must not be perturbed.
TYPED_TEST(NufftTypedTest, PointsOnThePeriodBoundary) {
  using T = TypeParam;
  constexpr double pi = std::numbers::pi;
  const std::vector<double> special = {
      -pi, pi, static_cast<double>(static_cast<float>(pi)),
      -static_cast<double>(static_cast<float>(pi)), 3 * pi, -3 * pi, 0.0,
      std::nextafter(-pi, 0.0), std::nextafter(pi, 0.0), std::nextafter(pi, 4.0),
      2 * pi, -2 * pi, 1e-30, -1e-30};
  for (int dim : {1, 2, 3}) {
    // Every coordinate of every point takes the special values, combined with random partners.
    auto rnd = random_points<double>(dim, 200, 70 + dim);
    std::vector<double>* axes[3] = {&rnd.exact.x, &rnd.exact.y, &rnd.exact.z};
    for (int d = 0; d < dim; ++d)
      for (std::size_t j = 0; j < rnd.exact.x.size(); ++j)
        if ((j + d) % 2 == 0) (*axes[d])[j] = special[(j / 2 + d) % special.size()];
    const auto pts = make_points<T>(dim, rnd.exact.x, rnd.exact.y, rnd.exact.z);
    for (int type : {1, 2})
      for (Method m : point_methods_under_test())
        guarded(m, [&] { check_against_oracle<T>(type, dim, -1, 0, m, 71, pts); });
  }
}

// Mode counts of 1, 2 and 3 (where the fine grid is set by the kernel width, not by N) and a
// clustered point set (all points within a few fine-grid cells).
TYPED_TEST(NufftTypedTest, TinyModeCountsAndClusteredPoints) {
  using T = TypeParam;
  const double eps = working_eps<T>();
  const std::vector<std::vector<std::int64_t>> shapes = {{1},    {2},       {3},       {1, 1},
                                                         {1, 5}, {4, 1},    {2, 1, 3}, {1, 1, 1},
                                                         {3, 3, 3}, {1, 6, 1}};
  for (const auto& modes : shapes) {
    const int dim = static_cast<int>(modes.size());
    for (bool clustered : {false, true}) {
      const auto pts = clustered ? random_points<T>(dim, 300, 80, 0.9, 0.92)
                                 : random_points<T>(dim, 300, 81);
      for (int type : {1, 2}) {
        SCOPED_TRACE(::testing::Message() << "modes " << ::testing::PrintToString(modes)
                                          << ", type " << type << (clustered ? ", clustered" : ""));
        Plan<T> plan(type, modes, 1, 1, eps, options_for());
        set_points(plan, pts);
        const auto in = random_complex<T>(type == 1 ? pts.size() : num_modes(modes), 82);
        const auto want = oracle(type, pts.exact, widen(in), modes, 1, 0);
        EXPECT_LE(rel_error(apply(plan, in), want), property_bound(plan));
      }
    }
  }
}

// Fine grids that are not a multiple of the bin size end in a short bin, which a kernel footprint
// can cross in fewer cells than a full one: 25 modes give a fine grid of 50, 13 modes give 26.
// Found by type 3, whose grids are arbitrary: the first CUDA output-driven spreader (cells
// scanning neighbour bins of 16) missed points across a 2-cell last bin, errors of 2e-2. Kept
// for every method and tile scheme.
TYPED_TEST(NufftTypedTest, FineGridsEndingInAShortBin) {
  using T = TypeParam;
  const std::vector<std::vector<std::int64_t>> shapes = {{25, 25}, {13, 13, 13}};
  for (const auto& modes : shapes) {
    const int dim = static_cast<int>(modes.size());
    const auto pts = random_points<T>(dim, 1500, 85 + dim);
    for (Method m : point_methods_under_test())
      for (int type : {1, 2}) guarded(m, [&] {
        Plan<T> plan(type, modes, 1, 1, working_eps<T>(), options_for(m, 2.0));
        set_points(plan, pts);
        const auto in = random_complex<T>(type == 1 ? pts.size() : num_modes(modes), 86);
        const auto want = oracle(type, pts.exact, widen(in), modes, 1, 0);
        EXPECT_LE(rel_error(apply(plan, in), want), property_bound(plan))
            << "type " << type << ", dim " << dim << ", fine grid " << plan.info().fine_grid[0] << ", method "
            << nufft::method_name(m);
      });
  }
}

// Problems large enough for many bins and slabs per thread (fine grids of ~10^4–10^5 cells,
// 60 000 points, half of them clustered in a small box so that bins are very unequal), checked on
// 400 random outputs with the oracle's subset sums: the relative error on a random subset
// estimates the full one within ~10%, far inside the property bound.
TYPED_TEST(NufftTypedTest, LargerProblemsOnARandomSubsetOfOutputs) {
  using T = TypeParam;
  constexpr std::int64_t kPoints = 60000, kChecked = 400;
  const std::vector<std::vector<std::int64_t>> shapes = {{6000}, {256, 200}, {48, 40, 36}};
  for (const auto& modes : shapes) {
    const int dim = static_cast<int>(modes.size());
    auto spread = random_points<double>(dim, kPoints / 2, 170 + dim);
    const auto cluster = random_points<double>(dim, kPoints / 2, 180 + dim, -0.3, 0.1);
    std::vector<double>* a[3] = {&spread.exact.x, &spread.exact.y, &spread.exact.z};
    const std::vector<double>* b[3] = {&cluster.exact.x, &cluster.exact.y, &cluster.exact.z};
    for (int d = 0; d < dim; ++d) a[d]->insert(a[d]->end(), b[d]->begin(), b[d]->end());
    const auto pts = make_points<T>(dim, spread.exact.x, spread.exact.y, spread.exact.z);
    for (Method m : point_methods_under_test())
      for (int type : {1, 2}) guarded(m, [&] {
        Plan<T> plan(type, modes, type == 1 ? 1 : -1, 1, working_eps<T>(), options_for(m));
        set_points(plan, pts);
        const auto in = random_complex<T>(type == 1 ? pts.size() : num_modes(modes), 190);
        const auto out = apply(plan, in);
        Rng rng(191);
        std::vector<std::int64_t> which(kChecked);
        for (auto& i : which) i = rng.integer(0, static_cast<std::int64_t>(out.size()) - 1);
        std::vector<std::complex<T>> got;
        for (auto i : which) got.push_back(out[static_cast<std::size_t>(i)]);
        const auto in_d = widen(in);
        const auto want =
            type == 1 ? reference::nufft_type1_at(pts.exact, in_d, modes, 1, 0, which)
                      : reference::nufft_type2_at(pts.exact, in_d, modes, -1, 0, which);
        EXPECT_LE(rel_error(got, want), property_bound(plan))
            << "type " << type << ", modes " << ::testing::PrintToString(modes) << ", method "
            << nufft::method_name(m);
      });
  }
}

// upsampfac = 0 asks the planner to choose; its choice must lie in [1.25, 2.25] and meet eps.
TYPED_TEST(NufftTypedTest, AutomaticUpsampfacIsInRangeAndAccurate) {
  using T = TypeParam;
  for (int dim : {1, 2, 3}) {
    const auto modes = test_modes(dim);
    const auto pts = random_points<T>(dim, 1000, 90 + dim);
    Plan<T> plan(1, modes, 1, 1, working_eps<T>(), options_for(Method::kAuto, 0.0));
    EXPECT_GE(plan.info().upsampfac, 1.25);
    set_points(plan, pts);
    EXPECT_LE(plan.info().upsampfac, 2.25);
    const auto c = random_complex<T>(pts.size(), 91);
    EXPECT_LE(rel_error(apply(plan, c), oracle(1, pts.exact, widen(c), modes, 1, 0)),
              property_bound(plan));
  }
}

// PlanInfo reports what the plan was built with.
TYPED_TEST(NufftTypedTest, PlanInfoReflectsArguments) {
  using T = TypeParam;
  const std::vector<std::int64_t> modes = {10, 7};
  Plan<T> plan(2, modes, -1, 3, working_eps<T>(), options_for(Method::kAuto, 1.25, 1));
  const auto& info = plan.info();
  EXPECT_EQ(info.type, 2);
  EXPECT_EQ(info.dim, 2);
  EXPECT_EQ(info.modes[0], 10);
  EXPECT_EQ(info.modes[1], 7);
  EXPECT_EQ(info.modes[2], 1);
  EXPECT_EQ(info.fine_grid[2], 1);
  EXPECT_EQ(info.num_modes(), 70);
  EXPECT_EQ(info.isign, -1);
  EXPECT_EQ(info.ntransf, 3);
  EXPECT_EQ(info.eps, working_eps<T>());
  EXPECT_EQ(info.upsampfac, 1.25);
  EXPECT_EQ(info.modeord, 1);
  EXPECT_EQ(info.backend, kBackend);
  EXPECT_GE(info.kernel_width, 2);
  EXPECT_GE(info.max_batch, 1);
  EXPECT_EQ(info.num_points, 0);
  const auto pts = random_points<T>(2, 123, 95);
  set_points(plan, pts);
  EXPECT_EQ(plan.info().num_points, 123);
}

}  // namespace
}  // namespace fieldft::test
