// Algebraic properties of the NUFFT plan: adjointness, linearity, batching (ntransf), reuse of
// points across executes and re-setting them, M = 0, and moving a plan.
#include "nufft_test_common.hpp"

namespace fieldft::test {
namespace {

using nufft::Method;
using nufft::Plan;

template <class T>
class NufftProperties : public NufftTypedTest<T> {};
TYPED_TEST_SUITE(NufftProperties, Precisions);

// The threshold of the issue: 1e-5 (float), 1e-12 (double). execute and execute_adjoint use the
// same kernel, grid and deconvolution, so they are adjoint up to rounding whatever eps is; the
// defect is normalised by ||Ax|| ||y||, so it measures rounding relative to the data (measured at
// most 1.6e-7 / 1.4e-14 here), well inside the threshold — a sign, ordering or deconvolution slip
// between the two directions gives O(1).
TYPED_TEST(NufftProperties, ExecuteAdjointIsTheAdjoint) {
  using T = TypeParam;
  const double tol = sizeof(T) == sizeof(float) ? 1e-5 : 1e-12;
  for (Method m : point_methods_under_test())
    for (int dim : {1, 2, 3})
      for (int type : {1, 2})
        for (double sigma : kSweepUpsampfacs)
          for (int modeord : {0, 1}) guarded(m, [&] {
            const auto modes = test_modes(dim);
            const auto pts = random_points<T>(dim, 1000, 100 + dim);
            Plan<T> plan(type, modes, type == 1 ? 1 : -1, 1, working_eps<T>(),
                         options_for(m, sigma, modeord));
            set_points(plan, pts);
            const auto& info = plan.info();
            const auto x = random_complex<T>(input_size(info, false), 101);
            const auto y = random_complex<T>(output_size(info, false), 102);
            const auto ax = apply(plan, x);
            const auto ahy = apply(plan, y, true);
            EXPECT_LE(adjointness_defect<T>(x, ax, y, ahy), tol)
                << "dim " << dim << ", type " << type << ", upsampfac " << sigma << ", modeord "
                << modeord << ", method " << nufft::method_name(m);
          });
}

// A(a·x + b·y) = a·A(x) + b·A(y). In exact arithmetic the difference is zero (the plan is a fixed
// linear map once the points are set); what remains is rounding of the three evaluations, each
// at most the precision floor relative to its own norm, so the difference relative to
// ||A(ax+by)|| + |a| ||Ax|| + |b| ||Ay|| is bounded by the floor.
TYPED_TEST(NufftProperties, Linearity) {
  using T = TypeParam;
  const std::complex<T> a(T(0.7), T(-1.3)), b(T(-2.1), T(0.4));
  for (int dim : {1, 2, 3})
    for (int type : {1, 2})
      for (bool adjoint : {false, true}) {
        const auto modes = test_modes(dim);
        const auto pts = random_points<T>(dim, 1000, 110 + dim);
        Plan<T> plan(type, modes, 1, 1, working_eps<T>(), options_for());
        const double tol = rounding_tolerance(plan);
        set_points(plan, pts);
        const auto n = input_size(plan.info(), adjoint);
        const auto x = random_complex<T>(n, 111), y = random_complex<T>(n, 112);
        std::vector<std::complex<T>> axby(x.size());
        for (std::size_t i = 0; i < x.size(); ++i) axby[i] = a * x[i] + b * y[i];
        const auto lhs = apply(plan, axby, adjoint);
        const auto fx = apply(plan, x, adjoint), fy = apply(plan, y, adjoint);
        std::vector<cdouble> rhs(fx.size()), diff(fx.size());
        for (std::size_t i = 0; i < fx.size(); ++i) {
          rhs[i] = cdouble(a) * cdouble(fx[i]) + cdouble(b) * cdouble(fy[i]);
          diff[i] = cdouble(lhs[i]) - rhs[i];
        }
        const double scale = norm<T>(lhs) + std::abs(cdouble(a)) * norm<T>(fx) +
                             std::abs(cdouble(b)) * norm<T>(fy);
        EXPECT_LE(norm<double>(diff) / scale, tol)
            << "dim " << dim << ", type " << type << (adjoint ? " adjoint" : "");
      }
}

// A plan with ntransf = 5 (processed in batches of max_batch: automatic, 2 — so the last batch is
// partial — and 5) equals five single-transform plans on the same points. The numbers may differ
// by rounding (a batched FFT may take another code path), so the bound is the precision floor.
TYPED_TEST(NufftProperties, BatchEqualsLoopOfSingleTransforms) {
  using T = TypeParam;
  constexpr std::int64_t kTransforms = 5;
  for (Method m : point_methods_under_test())
    for (int dim : {1, 2, 3})
      for (int type : {1, 2})
        for (int max_batch : {0, 2, 5}) guarded(m, [&] {
          const auto modes = test_modes(dim);
          const auto pts = random_points<T>(dim, 700, 120 + dim);
          auto opt = options_for(m);
          opt.max_batch = max_batch;
          Plan<T> batch(type, modes, -1, kTransforms, working_eps<T>(), opt);
          Plan<T> single(type, modes, -1, 1, working_eps<T>(), options_for(m));
          set_points(batch, pts);
          set_points(single, pts);
          const double tol = std::max(rounding_tolerance(batch), rounding_tolerance(single));
          for (bool adjoint : {false, true}) {
            const auto n_in = input_size(single.info(), adjoint);
            const auto n_out = output_size(single.info(), adjoint);
            const auto in = random_complex<T>(kTransforms * n_in, 121);
            const auto got = apply(batch, in, adjoint);
            for (std::int64_t t = 0; t < kTransforms; ++t) {
              const std::vector<std::complex<T>> one(in.begin() + t * n_in,
                                                     in.begin() + (t + 1) * n_in);
              const std::vector<std::complex<T>> got_t(got.begin() + t * n_out,
                                                       got.begin() + (t + 1) * n_out);
              EXPECT_LE(rel_error(got_t, widen(apply(single, one, adjoint))), tol)
                  << "dim " << dim << ", type " << type << (adjoint ? " adjoint" : "")
                  << ", max_batch " << max_batch << ", transform " << t << ", method "
                  << nufft::method_name(m);
            }
          }
        });
}

// Points set once serve any number of executes with new strengths; set_points may be called again
// with a different number of points, and later executes use only the new ones.
TYPED_TEST(NufftProperties, SetPointsAgainReplacesThePoints) {
  using T = TypeParam;
  const double eps = working_eps<T>();
  for (int dim : {1, 2, 3})
    for (int type : {1, 2}) {
      const auto modes = test_modes(dim);
      Plan<T> plan(type, modes, 1, 1, eps, options_for());
      const double bound = property_bound(plan);
      const auto first = random_points<T>(dim, 900, 130 + dim);
      const auto second = random_points<T>(dim, 1700, 140 + dim);
      for (const auto* pts : {&first, &second, &first}) {
        set_points(plan, *pts);
        EXPECT_EQ(plan.info().num_points, pts->size());
        for (std::uint64_t seed : {131, 132}) {  // two executes on the same points
          const auto in = random_complex<T>(input_size(plan.info(), false), seed);
          EXPECT_LE(rel_error(apply(plan, in), oracle(type, pts->exact, widen(in), modes, 1, 0)),
                    bound)
              << "dim " << dim << ", type " << type << ", M " << pts->size() << ", seed " << seed;
        }
      }
    }
}

// M = 0 is valid: a type 1 transform of no points is exactly zero, and type 2 has nothing to
// write. The plan stays usable with points set afterwards.
TYPED_TEST(NufftProperties, ZeroPointsIsValid) {
  using T = TypeParam;
  for (int dim : {1, 2, 3}) {
    const auto modes = test_modes(dim);
    for (int type : {1, 2}) {
      Plan<T> plan(type, modes, 1, 2, working_eps<T>(), options_for());
      const std::vector<T> none;
      plan.set_points(0, none.data(), none.data(), none.data());
      EXPECT_EQ(plan.info().num_points, 0);
      const std::int64_t nm = 2 * num_modes(modes);
      const std::vector<std::complex<T>> f_in = random_complex<T>(nm, 150);
      // A sentinel buffer for the empty point side: nothing may be written there.
      const std::complex<T> sentinel(T(12.5), T(-3.25));
      std::vector<std::complex<T>> c_buf(4, sentinel);
      std::vector<std::complex<T>> f_out(nm, sentinel);
      if (type == 1) {
        plan.execute(c_buf.data(), f_out.data());
        plan.execute_adjoint(f_in.data(), c_buf.data());
      } else {
        plan.execute(f_in.data(), c_buf.data());
        plan.execute_adjoint(c_buf.data(), f_out.data());
      }
      for (const auto& v : f_out) ASSERT_EQ(v, std::complex<T>(0)) << "dim " << dim << ", type " << type;
      for (const auto& v : c_buf) ASSERT_EQ(v, sentinel) << "dim " << dim << ", type " << type;
      // And points can follow.
      const auto pts = random_points<T>(dim, 300, 151);
      set_points(plan, pts);
      const auto in = random_complex<T>(input_size(plan.info(), false), 152);
      const auto out = apply(plan, in);
      const std::int64_t n_in1 = input_size(plan.info(), false) / 2;
      const std::vector<std::complex<T>> in0(in.begin(), in.begin() + n_in1);
      const std::vector<std::complex<T>> out0(out.begin(), out.begin() + output_size(plan.info(), false) / 2);
      EXPECT_LE(rel_error(out0, oracle(type, pts.exact, widen(in0), modes, 1, 0)),
                property_bound(plan));
    }
  }
}

// A moved-to plan keeps its points and gives the same numbers.
TYPED_TEST(NufftProperties, MovedPlanKeepsWorking) {
  using T = TypeParam;
  const auto modes = test_modes(2);
  const auto pts = random_points<T>(2, 500, 160);
  Plan<T> a(1, modes, 1, 1, working_eps<T>(), options_for());
  set_points(a, pts);
  const auto c = random_complex<T>(pts.size(), 161);
  const auto want = oracle(1, pts.exact, widen(c), modes, 1, 0);
  const double bound = property_bound(a);
  Plan<T> b(std::move(a));
  EXPECT_LE(rel_error(apply(b, c), want), bound);
  Plan<T> d(2, modes, -1, 1, working_eps<T>(), options_for());
  d = std::move(b);
  EXPECT_EQ(d.info().type, 1);
  EXPECT_LE(rel_error(apply(d, c), want), bound);
}

// A plan made in a Context runs there whatever the options say (backend, device, stream,
// nthreads), keeps the context, and computes what the plan made from options computes; a plan
// made from options runs in the context they describe (the legacy default stream on a device).
TYPED_TEST(NufftProperties, PlanRunsInItsContext) {
  using T = TypeParam;
  const auto modes = test_modes(2);
  const auto pts = random_points<T>(2, 400, 170);
  const Context c = kBackend == Backend::kCuda ? Context::cuda(0) : Context::host(2);
  nufft::Options o = options_for();
  o.backend = kBackend == Backend::kCuda ? Backend::kCpu : Backend::kCuda;  // overridden
  o.nthreads = 7;                                                          // overridden
  Plan<T> a(1, modes, 1, 2, working_eps<T>(), c, o);
  EXPECT_TRUE(a.context().same_place(c)) << a.context().describe();
  EXPECT_EQ(a.info().backend, kBackend);
  EXPECT_EQ(a.info().nthreads, kBackend == Backend::kCuda ? 0 : 2);
  Plan<T> legacy(1, modes, 1, 2, working_eps<T>(), options_for());
  EXPECT_EQ(legacy.context().backend(), kBackend);
  EXPECT_EQ(legacy.context().stream(), nullptr);  // the default stream, as before contexts
  set_points(a, pts);
  set_points(legacy, pts);
  const auto c_in = random_complex<T>(input_size(a.info(), false), 171);
  const auto want = apply(legacy, c_in);
  EXPECT_LE(rel_error(apply(a, c_in), widen(want)), rounding_tolerance(a));
  // Moved, the plan keeps its context (and an owned stream stays alive with it).
  Plan<T> b(std::move(a));
  EXPECT_TRUE(b.context().same_place(c));
  EXPECT_LE(rel_error(apply(b, c_in), widen(want)), rounding_tolerance(b));
}

}  // namespace
}  // namespace fieldft::test
