// Method::kPrecomputed (kernel weights computed once at set_points; CPU and CUDA): same results
// as the weights evaluated per execute, its memory in PlanInfo, the memory limit, the automatic
// choice from Options::reuse (CPU; CUDA never yet), re-set points, and its refusals (type 3).
// Its accuracy against the exact sums is checked with the other methods by the sweep and the
// oracle tests (point_methods_under_test).
#include "nufft_test_common.hpp"

namespace fieldft::test {
namespace {

using nufft::Method;
using nufft::Plan;

template <class T>
class NufftPrecomputed : public NufftTypedTest<T> {};
TYPED_TEST_SUITE(NufftPrecomputed, Precisions);

// The documented size (nufft.hpp, Method::kPrecomputed): CPU dim·⌈w/L⌉·L values of T per point,
// L = 32 bytes / sizeof(T); CUDA dim·w values of T per point.
template <class T>
std::int64_t expected_bytes(const nufft::PlanInfo& info, std::int64_t m) {
  const std::int64_t lanes = kBackend == Backend::kCuda ? 1 : 32 / static_cast<std::int64_t>(sizeof(T));
  const std::int64_t per_dim = (info.kernel_width + lanes - 1) / lanes * lanes;
  return m * info.dim * per_dim * static_cast<std::int64_t>(sizeof(T));
}

nufft::Options precomputed(double upsampfac = 0.0, int modeord = 0) {
  return options_for(Method::kPrecomputed, upsampfac, modeord);
}

// Types 1 and 2 and their adjoints, every dimension, both mode orders, a batch of 3 transforms
// in batches of 2 (one full, one partial): equal to the plan that evaluates the kernel per
// execute. Both use the same kernel table in T, so they differ by rounding at most; the bound
// is the precision floor, as for the other comparisons of one map computed two ways.
TYPED_TEST(NufftPrecomputed, MatchesKernelEvaluatedPerExecute) {
  using T = TypeParam;
  for (int dim : {1, 2, 3})
    for (int type : {1, 2})
      for (int modeord : {0, 1})
        for (bool adjoint : {false, true}) {
          SCOPED_TRACE(::testing::Message() << "dim " << dim << ", type " << type << ", modeord " << modeord
                                            << (adjoint ? ", adjoint" : ""));
          const auto modes = test_modes(dim);
          const auto pts = random_points<T>(dim, 900, 300 + dim);
          nufft::Options po = precomputed(0.0, modeord), no = options_for(Method::kNuptsDriven, 0.0, modeord);
          po.max_batch = no.max_batch = 2;
          Plan<T> pre(type, modes, 1, 3, working_eps<T>(), po), fly(type, modes, 1, 3, working_eps<T>(), no);
          set_points(pre, pts);
          set_points(fly, pts);
          EXPECT_EQ(pre.info().method, Method::kPrecomputed);
          EXPECT_EQ(fly.info().method, Method::kNuptsDriven);
          EXPECT_EQ(pre.info().precomputed_bytes, expected_bytes<T>(pre.info(), pts.size()));
          EXPECT_EQ(fly.info().precomputed_bytes, 0);
          const auto in = random_complex<T>(input_size(pre.info(), adjoint), 310 + dim);
          const auto a = apply(pre, in, adjoint), b = apply(fly, in, adjoint);
          EXPECT_LE(rel_error(a, widen(b)), rounding_tolerance(pre));
        }
}

// Points set again on the same plan (another count, the first again, other points of the same
// count, then none): the weights follow, and each execute matches the exact sums.
TYPED_TEST(NufftPrecomputed, ResetPointsRecomputesTheWeights) {
  using T = TypeParam;
  for (int dim : {1, 2, 3})
    for (int type : {1, 2}) {
      SCOPED_TRACE(::testing::Message() << "dim " << dim << ", type " << type);
      const auto modes = test_modes(dim);
      Plan<T> plan(type, modes, 1, 1, working_eps<T>(), precomputed(2.0));
      const auto a = random_points<T>(dim, 1200, 320 + dim), b = random_points<T>(dim, 500, 330 + dim);
      const auto c = random_points<T>(dim, 1200, 335 + dim);  // a's count: buffers kept, weights new
      for (const PointSet<T>* pts : {&a, &b, &a, &c}) {
        set_points(plan, *pts);
        EXPECT_EQ(plan.info().precomputed_bytes, expected_bytes<T>(plan.info(), pts->size()));
        const auto in = random_complex<T>(type == 1 ? pts->size() : num_modes(modes), 340 + dim);
        const auto want = oracle(type, pts->exact, widen(in), modes, 1, 0);
        EXPECT_LE(rel_error(apply(plan, in), want), property_bound(plan));
      }
      const std::vector<T> none;
      plan.set_points(0, none.data(), none.data(), none.data());
      EXPECT_EQ(plan.info().precomputed_bytes, 0);
    }
}

// Above Options::precompute_max_bytes an explicit kPrecomputed is refused with kTooLarge naming
// the option, and the plan keeps its earlier points; kAuto with a large reuse keeps the kernel
// evaluated per execute instead (CPU: kNuptsDriven; CUDA never precomputes automatically).
TYPED_TEST(NufftPrecomputed, MemoryLimitRefusesOrFallsBack) {
  using T = TypeParam;
  const std::vector<std::int64_t> modes = {24, 20};
  const auto small = random_points<T>(2, 20, 350), large = random_points<T>(2, 2000, 351);
  nufft::Options opt = precomputed(2.0);
  Plan<T> probe(1, modes, 1, 1, working_eps<T>(), opt);
  set_points(probe, small);
  // A limit between the two point sets' weights.
  opt.precompute_max_bytes = static_cast<double>(expected_bytes<T>(probe.info(), 100));
  Plan<T> plan(1, modes, 1, 1, working_eps<T>(), opt);
  set_points(plan, small);
  EXPECT_TRUE(throws_error([&] { set_points(plan, large); }, ErrorCode::kTooLarge,
                           {"precompute_max_bytes", "precomputed"}));
  EXPECT_EQ(plan.info().num_points, small.size());
  const auto in = random_complex<T>(small.size(), 352);
  const auto want = oracle(1, small.exact, widen(in), modes, 1, 0);
  EXPECT_LE(rel_error(apply(plan, in), want), property_bound(plan));

  nufft::Options autoopt = options_for(Method::kAuto, 2.0);
  autoopt.reuse = 1000;
  autoopt.precompute_max_bytes = opt.precompute_max_bytes;
  Plan<T> fallback(1, modes, 1, 1, working_eps<T>(), autoopt);
  set_points(fallback, large);
  const bool cpu = kBackend == Backend::kCpu;
  EXPECT_NE(fallback.info().method, Method::kPrecomputed);
  EXPECT_TRUE(!cpu || fallback.info().method == Method::kNuptsDriven);
  EXPECT_EQ(fallback.info().precomputed_bytes, 0);
  set_points(fallback, small);
  EXPECT_EQ(fallback.info().method == Method::kPrecomputed, cpu) << nufft::method_name(fallback.info().method);
}

// kAuto: the kernel per execute when the executes per set_points are unknown (reuse 0), the
// weights precomputed when many are expected (the threshold itself is checked by
// NufftPlanner.CpuPrecomputeRule in tests/core). CUDA: never precomputed automatically (not yet
// measured, NufftPlanner.CudaPrecomputeRule), and the reason says so.
TYPED_TEST(NufftPrecomputed, AutoFollowsReuse) {
  using T = TypeParam;
  const auto pts = random_points<T>(2, 800, 360);
  for (std::int64_t reuse : {std::int64_t(0), std::int64_t(1000)}) {
    nufft::Options opt = options_for(Method::kAuto);
    opt.reuse = reuse;
    Plan<T> plan(2, test_modes(2), 1, 1, working_eps<T>(), opt);
    set_points(plan, pts);
    if (kBackend == Backend::kCpu) {
      EXPECT_EQ(plan.info().method, reuse > 0 ? Method::kPrecomputed : Method::kNuptsDriven) << "reuse " << reuse;
    } else {
      EXPECT_NE(plan.info().method, Method::kPrecomputed) << "reuse " << reuse;
    }
    EXPECT_NE(plan.info().plan_reason.find("reuse"), std::string::npos) << plan.info().plan_reason;
  }
}

// Refusals: type 3 (kInvalidArgument), negative reuse or limit (kInvalidArgument); the name
// parses.
TYPED_TEST(NufftPrecomputed, RefusesWhatItDoesNotDo) {
  using T = TypeParam;
  const std::vector<std::int64_t> modes = {16, 16};
  const std::vector<std::int64_t> one = {1};
  EXPECT_EQ(nufft::parse_method("precomputed"), Method::kPrecomputed);
  EXPECT_TRUE(throws_error([&] { Plan<T>(3, one, 1, 1, working_eps<T>(), precomputed()); },
                           ErrorCode::kInvalidArgument, {"precomputed", "type 3"}));
  nufft::Options bad = options_for();
  bad.reuse = -1;
  EXPECT_TRUE(throws_error([&] { Plan<T>(1, modes, 1, 1, working_eps<T>(), bad); }, ErrorCode::kInvalidArgument,
                           {"reuse"}));
  bad = options_for();
  bad.precompute_max_bytes = -5;
  EXPECT_TRUE(throws_error([&] { Plan<T>(1, modes, 1, 1, working_eps<T>(), bad); }, ErrorCode::kInvalidArgument,
                           {"precompute_max_bytes"}));
}

}  // namespace
}  // namespace fieldft::test
