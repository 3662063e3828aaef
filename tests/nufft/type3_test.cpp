// Type 3 (non-uniform -> non-uniform) on the backend under test: the oracle (both signs, several
// tolerances, forward and adjoint), point clouds of large extent, the degenerate clouds (all
// sources or all targets equal), adjointness, batching, empty sides, re-set points with a new
// grid, the grid rule of fieldft/nufft.hpp, and agreement with the CPU backend, all on the grid
// path (Options::type3_direct = 0); then the direct sums (type3_direct = 1) against the oracle
// and the automatic choice between the two. The accuracy sweep (accuracy_test.cpp) covers type 3
// too.
#include <cmath>
#include <memory>
#include <sstream>
#include <string>

#include "nufft_test_common.hpp"

#if FIELDFT_TEST_BACKEND == 2
#include <cuda_runtime.h>
#endif

namespace fieldft::test {
namespace {

using nufft::Method;
using nufft::Plan;

template <class T>
class NufftType3 : public NufftTypedTest<T> {};
TYPED_TEST_SUITE(NufftType3, Precisions);

// Sources uniform in [x_lo, x_hi)^dim, targets in [s_lo, s_hi)^dim.
struct Boxes {
  double x_lo, x_hi, s_lo, s_hi;
};

template <class T>
struct Problem3 {
  PointSet<T> src, tgt;
};

template <class T>
Problem3<T> random_problem(int dim, std::int64_t m, std::int64_t nk, const Boxes& b, std::uint64_t seed) {
  return {random_points<T>(dim, m, seed, b.x_lo, b.x_hi), random_points<T>(dim, nk, seed + 1, b.s_lo, b.s_hi)};
}

// Boxes off-centre in both spaces (so the centring phases are exercised) with space-bandwidth
// products that keep grids and direct sums small.
Boxes moderate_boxes(int dim) {
  switch (dim) {
    case 1:
      return {-3, 5, -10, 14};
    case 2:
      return {-1, 3, -9, 5};
    default:
      return {-2, 1, -4, 6};
  }
}

// The map a type 3 plan applies: forward c -> f, or its adjoint f -> c (the sum with -isign
// from targets to sources).
std::vector<cdouble> oracle3(const reference::Points& src, const reference::Points& tgt, const std::vector<cdouble>& in,
                             int isign, bool adjoint) {
  return adjoint ? reference::nufft_type3(tgt, in, src, -isign) : reference::nufft_type3(src, in, tgt, isign);
}

// Forward and adjoint of a plan with points set (ntransf = 1) against the oracle, within the
// property bound 5·max(eps, F) (nufft_test_common.hpp).
template <class T>
void check_against_oracle3(Plan<T>& plan, const Problem3<T>& p, std::uint64_t seed, const std::string& what) {
  for (bool adjoint : {false, true}) {
    const auto in = random_complex<T>(input_size(plan.info(), adjoint), seed + (adjoint ? 1 : 0));
    const auto want = oracle3(p.src.exact, p.tgt.exact, widen(in), plan.info().isign, adjoint);
    EXPECT_LE(rel_error(apply(plan, in, adjoint), want), property_bound(plan))
        << what << (adjoint ? ", adjoint" : ", forward") << ", grid " << plan.info().fine_grid[0] << "x"
        << plan.info().fine_grid[1] << "x" << plan.info().fine_grid[2];
  }
}

// The working tolerance at upsampfac 2; at 1.25 one the rounding floor allows in 3D, where the
// deconvolution gains reach thousands (docs/accuracy.md) and the working eps would be refused.
template <class T>
double eps_at(double sigma) {
  if (sigma == 2.0) return working_eps<T>();
  return sizeof(T) == sizeof(float) ? 1e-3 : 1e-6;
}

// The options on the grid path, which these tests are about unless they say otherwise (the
// automatic choice would take the direct sums for some of their small problems).
nufft::Options on_grid(nufft::Options o = options_for()) {
  o.type3_direct = 0;
  return o;
}
nufft::Options direct(nufft::Options o = options_for()) {
  o.type3_direct = 1;
  return o;
}

// A type 3 plan; on the grid unless opt sets type3_direct.
template <class T>
Plan<T> make_type3(int dim, int isign, double eps, nufft::Options opt = options_for(), std::int64_t ntransf = 1) {
  if (opt.type3_direct == -1) opt.type3_direct = 0;
  return Plan<T>(3, std::vector<std::int64_t>(static_cast<std::size_t>(dim), 1), isign, ntransf, eps, opt);
}

// Both signs at a loose, the working and a tight tolerance, every method.
TYPED_TEST(NufftType3, BothSignsAndTolerancesMatchOracle) {
  using T = TypeParam;
  const double tight = sizeof(T) == sizeof(float) ? 1e-5 : 1e-12;
  for (Method m : methods_under_test())
    for (int dim : {1, 2, 3}) {
      const auto p = random_problem<T>(dim, 1000, 900, moderate_boxes(dim), 300 + dim);
      for (int isign : {1, -1})
        for (double eps : {1e-2, working_eps<T>(), tight})
          guarded(m, [&] {
            auto plan = make_type3<T>(dim, isign, eps, options_for(m));
            set_points(plan, p.src, p.tgt);
            std::ostringstream what;
            what << "dim " << dim << ", isign " << isign << ", eps " << eps << ", method " << nufft::method_name(m);
            check_against_oracle3(plan, p, 310, what.str());
          });
    }
}

// Clouds of large extent: |x|, |s| up to 80 and 200 in 1D (phases up to 1.6e4 rad, a grid of
// ~9600 points), smaller in 2D and 3D where the grid grows with the product over dimensions.
TYPED_TEST(NufftType3, LargeSpreadPointClouds) {
  using T = TypeParam;
  const Boxes boxes[3] = {{-50, 80, -30, 200}, {-20, 30, -10, 25}, {-6, 9, -4, 8}};
  for (Method m : methods_under_test())
    for (int dim : {1, 2, 3})
      guarded(m, [&] {
        const auto p = random_problem<T>(dim, 1500, 1500, boxes[dim - 1], 320 + dim);
        auto plan = make_type3<T>(dim, 1, working_eps<T>(), options_for(m));
        set_points(plan, p.src, p.tgt);
        check_against_oracle3(plan, p, 330, "dim " + std::to_string(dim) + ", method " + nufft::method_name(m));
      });
}

// Degenerate clouds: all sources equal (X = 0), all targets equal (S = 0), both, and in 2D/3D
// one dimension degenerate while the others are not. No division by zero, and the sums are right.
TYPED_TEST(NufftType3, DegenerateCloudsAllPointsEqual) {
  using T = TypeParam;
  for (int dim : {1, 2, 3}) {
    const Boxes b = moderate_boxes(dim);
    const auto rnd = random_problem<double>(dim, 400, 300, b, 340 + dim);
    // mask bit 0: sources collapse, bit 1: targets collapse; `axis` < dim collapses that axis only.
    for (int mask : {1, 2, 3})
      for (int axis : {-1, 0, dim - 1}) {
        if (axis >= 0 && dim == 1) continue;
        std::vector<double> s[3] = {rnd.src.exact.x, rnd.src.exact.y, rnd.src.exact.z};
        std::vector<double> t[3] = {rnd.tgt.exact.x, rnd.tgt.exact.y, rnd.tgt.exact.z};
        for (int d = 0; d < dim; ++d) {
          if (axis >= 0 && d != axis) continue;
          if (mask & 1) std::fill(s[d].begin(), s[d].end(), 0.7 - d);
          if (mask & 2) std::fill(t[d].begin(), t[d].end(), -2.5 + d);
        }
        const Problem3<T> p{make_points<T>(dim, s[0], s[1], s[2]), make_points<T>(dim, t[0], t[1], t[2])};
        auto plan = make_type3<T>(dim, -1, working_eps<T>());
        set_points(plan, p.src, p.tgt);
        std::ostringstream what;
        what << "dim " << dim << (mask & 1 ? ", sources equal" : "") << (mask & 2 ? ", targets equal" : "")
             << (axis >= 0 ? ", in axis " + std::to_string(axis) + " only" : "");
        check_against_oracle3(plan, p, 350, what.str());
      }
  }
}

// execute_adjoint is the adjoint of execute to rounding, at both upsampling factors: the same
// thresholds and reasoning as ExecuteAdjointIsTheAdjoint (properties_test.cpp): every stage
// (phase factors, spreading, inner type 2 plan, deconvolution) is applied with its exact adjoint.
TYPED_TEST(NufftType3, ExecuteAdjointIsTheAdjoint) {
  using T = TypeParam;
  const double tol = sizeof(T) == sizeof(float) ? 1e-5 : 1e-12;
  for (Method m : methods_under_test())
    for (int dim : {1, 2, 3})
      for (double sigma : kSweepUpsampfacs)
        guarded(m, [&] {
          const auto p = random_problem<T>(dim, 800, 700, moderate_boxes(dim), 360 + dim);
          auto plan = make_type3<T>(dim, 1, eps_at<T>(sigma), options_for(m, sigma));
          set_points(plan, p.src, p.tgt);
          const auto x = random_complex<T>(input_size(plan.info(), false), 361);
          const auto y = random_complex<T>(output_size(plan.info(), false), 362);
          EXPECT_LE(adjointness_defect<T>(x, apply(plan, x), y, apply(plan, y, true)), tol)
              << "dim " << dim << ", upsampfac " << sigma << ", method " << nufft::method_name(m);
        });
}

// ntransf = 5 in batches of max_batch (automatic, 2 with a partial last batch, 5) equals five
// single-transform plans to rounding, forward and adjoint.
TYPED_TEST(NufftType3, BatchEqualsLoopOfSingleTransforms) {
  using T = TypeParam;
  constexpr std::int64_t kTransforms = 5;
  for (Method m : methods_under_test())
    for (int dim : {1, 2, 3})
      for (int max_batch : {0, 2, 5})
        guarded(m, [&] {
          const auto p = random_problem<T>(dim, 600, 500, moderate_boxes(dim), 370 + dim);
          auto opt = options_for(m);
          opt.max_batch = max_batch;
          auto batch = make_type3<T>(dim, -1, working_eps<T>(), opt, kTransforms);
          auto single = make_type3<T>(dim, -1, working_eps<T>(), options_for(m));
          set_points(batch, p.src, p.tgt);
          set_points(single, p.src, p.tgt);
          const double tol = std::max(rounding_tolerance(batch), rounding_tolerance(single));
          for (bool adjoint : {false, true}) {
            const auto n_in = input_size(single.info(), adjoint), n_out = output_size(single.info(), adjoint);
            const auto in = random_complex<T>(kTransforms * n_in, 371);
            const auto got = apply(batch, in, adjoint);
            for (std::int64_t t = 0; t < kTransforms; ++t) {
              const std::vector<std::complex<T>> one(in.begin() + t * n_in, in.begin() + (t + 1) * n_in);
              const std::vector<std::complex<T>> got_t(got.begin() + t * n_out, got.begin() + (t + 1) * n_out);
              EXPECT_LE(rel_error(got_t, widen(apply(single, one, adjoint))), tol)
                  << "dim " << dim << (adjoint ? ", adjoint" : ", forward") << ", max_batch " << max_batch
                  << ", transform " << t << ", method " << nufft::method_name(m);
            }
          }
        });
}

// m = 0: every target sum is empty (f = 0 exactly) and the adjoint writes nothing; nk = 0: the
// forward writes nothing and the adjoint gives c = 0 exactly. Points can follow. Both paths.
TYPED_TEST(NufftType3, ZeroSourcesOrZeroTargets) {
  using T = TypeParam;
  const std::complex<T> sentinel(T(12.5), T(-3.25));
  for (int dim : {1, 2, 3})
   for (int path : {0, 1}) {
    const auto p = random_problem<T>(dim, 300, 200, moderate_boxes(dim), 380 + dim);
    const PointSet<T> none = random_points<T>(dim, 0, 1);
    nufft::Options opt = options_for();
    opt.type3_direct = path;
    for (bool no_sources : {true, false}) {
      auto plan = make_type3<T>(dim, 1, working_eps<T>(), opt, 2);
      const PointSet<T>& src = no_sources ? none : p.src;
      const PointSet<T>& tgt = no_sources ? p.tgt : none;
      set_points(plan, src, tgt);
      EXPECT_EQ(plan.info().num_points, src.size());
      EXPECT_EQ(plan.info().num_targets, tgt.size());
      const std::int64_t filled = 2 * (no_sources ? tgt.size() : src.size());
      const auto in = random_complex<T>(filled, 381);
      std::vector<std::complex<T>> empty(4, sentinel), full(filled, sentinel);
      if (no_sources) {  // forward: c (empty) -> f = 0; adjoint: f -> c (nothing to write)
        plan.execute(empty.data(), full.data());
        plan.execute_adjoint(in.data(), empty.data());
      } else {  // forward: c -> f (nothing to write); adjoint: f (empty) -> c = 0
        plan.execute(in.data(), empty.data());
        plan.execute_adjoint(empty.data(), full.data());
      }
      for (const auto& v : full) ASSERT_EQ(v, std::complex<T>(0)) << "dim " << dim;
      for (const auto& v : empty) ASSERT_EQ(v, sentinel) << "dim " << dim;
      auto single = make_type3<T>(dim, 1, working_eps<T>(), opt);
      set_points(single, none, none);
      set_points(single, p.src, p.tgt);
      EXPECT_EQ(single.info().type3_direct, path == 1);
      check_against_oracle3(single, p, 382,
                            "dim " + std::to_string(dim) + ", path " + std::to_string(path) + ", after an empty set_points");
    }
  }
}

// set_points again with clouds of other sizes and extents: the grid follows the new points (it
// changes size and comes back), and later executes use only the new points.
TYPED_TEST(NufftType3, SetPointsAgainReplacesPointsAndGrid) {
  using T = TypeParam;
  for (int dim : {1, 2, 3}) {
    const Boxes b = moderate_boxes(dim);
    const Boxes wide{2 * b.x_lo, 2 * b.x_hi, b.s_lo, 1.5 * b.s_hi};
    const auto first = random_problem<T>(dim, 700, 600, b, 390 + dim);
    const auto second = random_problem<T>(dim, 1100, 500, wide, 395 + dim);
    auto plan = make_type3<T>(dim, 1, working_eps<T>());
    std::int64_t grid_first = 0;
    for (const auto* p : {&first, &second, &first}) {
      set_points(plan, p->src, p->tgt);
      if (p == &first && grid_first == 0) grid_first = plan.info().fine_grid[0];
      if (p == &second) {
        EXPECT_GT(plan.info().fine_grid[0], grid_first) << "dim " << dim;
      }
      check_against_oracle3(plan, *p, 396, "dim " + std::to_string(dim) + ", M " + std::to_string(p->src.size()));
    }
  }
}

// PlanInfo of a type 3 plan: modes unused ({1, 1, 1}), the points and targets counted, and the
// grid per dimension exactly the rule that fieldft/nufft.hpp documents (accuracy_sweep.hpp:
// type3_grid_size), from the half-widths of the clouds.
TYPED_TEST(NufftType3, PlanInfoAndGridRule) {
  using T = TypeParam;
  for (int dim : {1, 2, 3})
    for (double sigma : kSweepUpsampfacs) {
      const auto p = random_problem<T>(dim, 500, 400, moderate_boxes(dim), 400 + dim);
      const nufft::Options opt = on_grid(options_for(Method::kAuto, sigma));
      Plan<T> plan(3, std::vector<std::int64_t>(static_cast<std::size_t>(dim), 77), -1, 2, eps_at<T>(sigma), opt);
      EXPECT_EQ(plan.info().type, 3);
      EXPECT_EQ(plan.info().dim, dim);
      EXPECT_EQ(plan.info().num_modes(), 1);
      EXPECT_EQ(plan.info().num_targets, 0);
      set_points(plan, p.src, p.tgt);
      const auto& info = plan.info();
      EXPECT_EQ(info.num_points, 500);
      EXPECT_EQ(info.num_targets, 400);
      EXPECT_EQ(info.upsampfac, sigma);
      EXPECT_FALSE(info.type3_direct);
      const std::vector<double>* src[3] = {&p.src.exact.x, &p.src.exact.y, &p.src.exact.z};
      const std::vector<double>* tgt[3] = {&p.tgt.exact.x, &p.tgt.exact.y, &p.tgt.exact.z};
      for (int d = 0; d < 3; ++d) {
        if (d >= dim) {
          EXPECT_EQ(info.fine_grid[d], 1);
          continue;
        }
        const auto [xlo, xhi] = std::minmax_element(src[d]->begin(), src[d]->end());
        const auto [slo, shi] = std::minmax_element(tgt[d]->begin(), tgt[d]->end());
        EXPECT_EQ(info.fine_grid[d], type3_grid_size(sigma, info.kernel_width, (*xhi - *xlo) / 2, (*shi - *slo) / 2))
            << "dim " << dim << ", axis " << d << ", upsampfac " << sigma;
      }
    }
}

// The same points and data on this backend and on the CPU backend agree within the accuracy
// both promise: each is within 2·max(eps, F) of the exact sums (the sweep's criterion), so they
// are within 4·max(eps, F) of each other. Forward and adjoint, every method. (On the CPU battery
// this would compare the CPU with itself, so it runs on other backends only.)
TYPED_TEST(NufftType3, AgreesWithTheCpuBackend) {
  using T = TypeParam;
  if (kBackend == Backend::kCpu) GTEST_SKIP() << "compares a backend with the CPU backend; this battery is the CPU's";
  for (Method m : methods_under_test())
    for (int dim : {1, 2, 3})
      guarded(m, [&] {
        const auto p = random_problem<T>(dim, 2000, 1800, moderate_boxes(dim), 410 + dim);
        auto plan = make_type3<T>(dim, 1, working_eps<T>(), options_for(m), 2);
        nufft::Options cpu_opt;
        cpu_opt.backend = Backend::kCpu;
        auto cpu = make_type3<T>(dim, 1, working_eps<T>(), on_grid(cpu_opt), 2);
        set_points(plan, p.src, p.tgt);
        set_points(cpu, p.src, p.tgt);
        EXPECT_EQ(plan.info().fine_grid, cpu.info().fine_grid);
        const double bound = 2 * accuracy_bound(precision_of<T>(), plan.info().eps, plan.info());
        for (bool adjoint : {false, true}) {
          const auto in = random_complex<T>(input_size(plan.info(), adjoint), 411);
          EXPECT_LE(rel_error(apply(plan, in, adjoint), widen(apply(cpu, in, adjoint))), bound)
              << "dim " << dim << (adjoint ? ", adjoint" : ", forward") << ", method " << nufft::method_name(m);
        }
      });
}

// The direct sums (type3_direct = 1) against the oracle: both signs, every dimension, a loose and
// a tight tolerance, forward and adjoint, on the boxes of the grid tests and on off-centre ones
// (phases up to 4e4 rad, which double resolves to ~5e-12, below the tight eps).
TYPED_TEST(NufftType3, DirectSumsMatchOracle) {
  using T = TypeParam;
  const double tight = sizeof(T) == sizeof(float) ? 1e-6 : 1e-11;
  for (int dim : {1, 2, 3})
    for (const Boxes& b : {moderate_boxes(dim), Boxes{40, 45, -300, -250}}) {
      const auto p = random_problem<T>(dim, 150, 130, b, 500 + dim);
      for (int isign : {1, -1})
        for (double eps : {1e-2, tight}) {
          auto plan = make_type3<T>(dim, isign, eps, direct());
          set_points(plan, p.src, p.tgt);
          EXPECT_TRUE(plan.info().type3_direct);
          EXPECT_EQ(plan.info().fine_grid, (std::array<std::int64_t, 3>{1, 1, 1}));
          std::ostringstream what;
          what << "direct sums, dim " << dim << ", isign " << isign << ", eps " << eps << ", x in [" << b.x_lo << ", "
               << b.x_hi << ")";
          check_against_oracle3(plan, p, 510, what.str());
        }
    }
}

// Direct sums with ntransf = 9 (more than one batch of the CUDA kernel, with a partial last one)
// equal nine single-transform plans to rounding, and the adjoint is the adjoint.
TYPED_TEST(NufftType3, DirectSumsBatchedAndAdjoint) {
  using T = TypeParam;
  constexpr std::int64_t kTransforms = 9;
  const double tol = sizeof(T) == sizeof(float) ? 1e-5 : 1e-12;
  for (int dim : {1, 2, 3}) {
    const auto p = random_problem<T>(dim, 120, 90, moderate_boxes(dim), 520 + dim);
    auto batch = make_type3<T>(dim, -1, working_eps<T>(), direct(), kTransforms);
    auto single = make_type3<T>(dim, -1, working_eps<T>(), direct());
    set_points(batch, p.src, p.tgt);
    set_points(single, p.src, p.tgt);
    for (bool adjoint : {false, true}) {
      const auto n_in = input_size(single.info(), adjoint), n_out = output_size(single.info(), adjoint);
      const auto in = random_complex<T>(kTransforms * n_in, 521);
      const auto got = apply(batch, in, adjoint);
      for (std::int64_t t = 0; t < kTransforms; ++t) {
        const std::vector<std::complex<T>> one(in.begin() + t * n_in, in.begin() + (t + 1) * n_in);
        const std::vector<std::complex<T>> got_t(got.begin() + t * n_out, got.begin() + (t + 1) * n_out);
        EXPECT_LE(rel_error(got_t, widen(apply(single, one, adjoint))), tol)
            << "dim " << dim << (adjoint ? ", adjoint" : ", forward") << ", transform " << t;
      }
    }
    const auto x = random_complex<T>(input_size(single.info(), false), 522);
    const auto y = random_complex<T>(output_size(single.info(), false), 523);
    EXPECT_LE(adjointness_defect<T>(x, apply(single, x), y, apply(single, y, true)), tol) << "dim " << dim;
  }
}

// The case a user hit: 10 sources and 10 targets spread over a huge box. The grid rule asks for
// 2σXS/π ≈ 2e7 points in 1D (X = S = 4000) and ~3e6 per dimension in 2D (8e12 cells: refused for
// memory); the automatic choice takes the direct sums, which match the oracle, allocate no grid
// and take microseconds. Phases reach 1.6e7 and 4.5e6 rad, resolved by double to ~2e-9 and
// 5e-10 (u·max phase), below each precision's eps here.
TYPED_TEST(NufftType3, FewPointsInAHugeBoxTakeTheDirectSums) {
  using T = TypeParam;
  const double eps = sizeof(T) == sizeof(float) ? working_eps<T>() : 1e-8;
  struct Case { int dim; Boxes box; };
  for (const Case& c : {Case{1, {-4000, 4000, -4000, 4000}}, Case{2, {-1500, 1500, -1500, 1500}}}) {
    const auto p = random_problem<T>(c.dim, 10, 10, c.box, 530 + c.dim);
    auto grid_plan = make_type3<T>(c.dim, 1, eps, on_grid());
    nufft::Options automatic = options_for();
    automatic.type3_direct = -1;
    Plan<T> auto_plan(3, std::vector<std::int64_t>(static_cast<std::size_t>(c.dim), 1), 1, 1, eps, automatic);
    set_points(auto_plan, p.src, p.tgt);
    EXPECT_TRUE(auto_plan.info().type3_direct) << "dim " << c.dim;
    EXPECT_EQ(auto_plan.info().fine_grid, (std::array<std::int64_t, 3>{1, 1, 1}));
    check_against_oracle3(auto_plan, p, 531, "10 x 10 in a huge box, dim " + std::to_string(c.dim));
    if (c.dim == 2) {  // the grid path cannot even hold this one
      EXPECT_TRUE(throws_error([&] { set_points(grid_plan, p.src, p.tgt); }, ErrorCode::kTooLarge, {"type 3"}));
    }
  }
}

// The automatic choice keeps the grid where it is cheap (many points, a small box), takes the
// direct sums where it is not, follows the points when they are set again (grid -> direct ->
// grid on one plan, each matching the oracle), and never takes direct sums whose phases double
// cannot resolve to eps (huge coordinates: the grid's own refusal, kTooLarge). Forced direct sums
// with such phases are kEpsTooSmall.
TYPED_TEST(NufftType3, AutomaticChoiceFollowsThePoints) {
  using T = TypeParam;
  const double eps = sizeof(T) == sizeof(float) ? working_eps<T>() : 1e-8;
  nufft::Options automatic = options_for();
  automatic.type3_direct = -1;
  for (int dim : {1, 2, 3}) {
    const auto many = random_problem<T>(dim, 1500, 1200, moderate_boxes(dim), 540 + dim);
    const double half = dim == 1 ? 4000 : (dim == 2 ? 300 : 60);
    const auto few = random_problem<T>(dim, 12, 15, Boxes{-half, half, -half, half}, 545 + dim);
    Plan<T> plan(3, std::vector<std::int64_t>(static_cast<std::size_t>(dim), 1), -1, 1, eps, automatic);
    for (const auto* p : {&many, &few, &many}) {
      set_points(plan, p->src, p->tgt);
      const bool want_direct = p == &few;
      EXPECT_EQ(plan.info().type3_direct, want_direct) << "dim " << dim << ", M " << p->src.size();
      if (!want_direct) {
        EXPECT_GT(plan.info().fine_grid[0], 1);
      }
      check_against_oracle3(plan, *p, 546, "dim " + std::to_string(dim) + ", M " + std::to_string(p->src.size()));
    }
  }
  const std::vector<double> far = {-1e7, 1e7};
  const auto src = make_points<T>(1, far), tgt = make_points<T>(1, far);  // phases 1e14 rad
  Plan<T> p1(3, test_modes(1), 1, 1, eps, automatic);
  EXPECT_TRUE(throws_error([&] { set_points(p1, src, tgt); }, ErrorCode::kTooLarge, {"type 3", "grid"}));
  Plan<T> p2(3, test_modes(1), 1, 1, eps, direct());
  EXPECT_TRUE(throws_error([&] { set_points(p2, src, tgt); }, ErrorCode::kEpsTooSmall, {"direct", "phases"}));
}

#if FIELDFT_TEST_BACKEND == 2
// A device copy of a host vector (at least one element, so that even an empty array has a
// device address).
template <class U>
class DeviceCopy {
 public:
  explicit DeviceCopy(const std::vector<U>& h) : n_(h.size()) {
    EXPECT_EQ(cudaMalloc(&p_, std::max<std::size_t>(n_, 1) * sizeof(U)), cudaSuccess);
    if (n_) {
      EXPECT_EQ(cudaMemcpy(p_, h.data(), n_ * sizeof(U), cudaMemcpyHostToDevice), cudaSuccess);
    }
  }
  ~DeviceCopy() { cudaFree(p_); }
  DeviceCopy(const DeviceCopy&) = delete;
  DeviceCopy& operator=(const DeviceCopy&) = delete;
  U* get() const { return p_; }
  std::vector<U> host() const {
    std::vector<U> h(n_);
    if (n_) {
      EXPECT_EQ(cudaMemcpy(h.data(), p_, n_ * sizeof(U), cudaMemcpyDeviceToHost), cudaSuccess);
    }
    return h;
  }

 private:
  U* p_ = nullptr;
  std::size_t n_ = 0;
};

// Coordinates and data in device memory give what host memory gives: the geometry comes from
// the same values, so the two plans differ only in the order of atomic additions, i.e. by
// rounding (the precision floor F bounds it).
TYPED_TEST(NufftType3, DevicePointersMatchHostPointers) {
  using T = TypeParam;
  for (Method m : methods_under_test())
    for (int dim : {1, 2, 3})
      guarded(m, [&] {
        const auto p = random_problem<T>(dim, 1200, 1000, moderate_boxes(dim), 420 + dim);
        auto host_plan = make_type3<T>(dim, -1, working_eps<T>(), options_for(m), 2);
        auto dev_plan = make_type3<T>(dim, -1, working_eps<T>(), options_for(m), 2);
        set_points(host_plan, p.src, p.tgt);
        const std::vector<T>* src[3] = {&p.src.x, &p.src.y, &p.src.z};
        const std::vector<T>* tgt[3] = {&p.tgt.x, &p.tgt.y, &p.tgt.z};
        std::vector<std::unique_ptr<DeviceCopy<T>>> coords;
        const T* ds[3] = {nullptr, nullptr, nullptr};
        const T* dt[3] = {nullptr, nullptr, nullptr};
        for (int d = 0; d < dim; ++d) {
          coords.push_back(std::make_unique<DeviceCopy<T>>(*src[d]));
          ds[d] = coords.back()->get();
          coords.push_back(std::make_unique<DeviceCopy<T>>(*tgt[d]));
          dt[d] = coords.back()->get();
        }
        dev_plan.set_points(p.src.size(), ds[0], ds[1], ds[2], p.tgt.size(), dt[0], dt[1], dt[2]);
        EXPECT_EQ(dev_plan.info().fine_grid, host_plan.info().fine_grid);
        const double tol = rounding_tolerance(host_plan);
        for (bool adjoint : {false, true}) {
          const auto in = random_complex<T>(input_size(host_plan.info(), adjoint), 421);
          const DeviceCopy<std::complex<T>> din(in);
          const DeviceCopy<std::complex<T>> dout(
              std::vector<std::complex<T>>(static_cast<std::size_t>(output_size(host_plan.info(), adjoint))));
          if (adjoint)
            dev_plan.execute_adjoint(din.get(), dout.get());
          else
            dev_plan.execute(din.get(), dout.get());
          EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);  // the default stream: device pointers do not synchronise
          EXPECT_LE(rel_error(dout.host(), widen(apply(host_plan, in, adjoint))), tol)
              << "dim " << dim << (adjoint ? ", adjoint" : ", forward") << ", method " << nufft::method_name(m);
        }
      });
}
#endif

}  // namespace
}  // namespace fieldft::test
