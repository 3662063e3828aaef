// solve::pwls_pcg (fieldft/solve/pwls_pcg.hpp) on the backend under test (FIELDFT_TEST_BACKEND):
// the quadratic penalty's closed-form minimiser (with and without a preconditioner); the
// hyperbolic penalty's objective never increasing, reported objectives matching a host
// evaluation, and the gradient vanishing at the result; sparse recovery with R = I; bad input.
#include "fieldft/solve/pwls_pcg.hpp"

#include <cmath>
#include <cstdio>
#include <limits>
#include <type_traits>
#include <vector>

#include "fieldft/context.hpp"
#include "fieldft/op/combinators.hpp"
#include "fieldft/solve/cg.hpp"
#include "solve/problems.hpp"
#include "support/battery.hpp"
#include "support/context_vector.hpp"
#include "support/dense_operator.hpp"

namespace fieldft::test {
namespace {

template <class T>
class PwlsPcg : public ::testing::Test {
 protected:
  void SetUp() override { FIELDFT_TEST_SKIP_UNLESS_AVAILABLE(kBackend); }
};
using Precisions = ::testing::Types<float, double>;
TYPED_TEST_SUITE(PwlsPcg, Precisions);

// Φ(x) = ½‖W^{1/2}(Ax − y)‖² + β Σ ψ(|[Rx]_k|) on the host in double, and its gradient
// AᴴW(Ax − y) + β Rᴴ(ω ∘ Rx).
struct Phi {
  const PenalisedProblem& p;
  double beta, delta;  // delta = ∞: quadratic
  double value(const std::vector<cdouble>& x) const {
    double f = data_term(p.a, p.y, p.w, x);
    for (const auto& t : mul(p.r, x)) {
      const double s = std::norm(t);
      f += beta * (std::isinf(delta) ? 0.5 * s : delta * delta * (std::sqrt(1 + s / (delta * delta)) - 1));
    }
    return f;
  }
  std::vector<cdouble> gradient(const std::vector<cdouble>& x) const {
    auto res = mul(p.a, x);
    for (std::size_t i = 0; i < res.size(); ++i) res[i] = p.w[i] * (res[i] - p.y[i]);
    auto g = mul(herm(p.a), res);
    auto rx = mul(p.r, x);
    for (auto& t : rx) t *= beta / std::sqrt(1 + std::norm(t) / (delta * delta));
    const auto pen = mul(herm(p.r), rx);
    for (std::size_t i = 0; i < g.size(); ++i) g[i] += pen[i];
    return g;
  }
};

// Runs pwls_pcg on the problem in the test context from x0 = 0; returns x on the host.
template <class T>
std::vector<std::complex<T>> run(const PenalisedProblem& p, const solve::PwlsOptions& o,
                                 const std::vector<double>* precond = nullptr,
                                 solve::Result* result = nullptr) {
  const Context c = test_context();
  Dense<T> a(p.a, c), r(p.r, c);
  ContextVector<T> y(c, 20), x(c, 8), w(c, 20), pc(c, 8);
  y.upload(narrow<T>(p.y));
  x.upload(std::vector<std::complex<T>>(8));
  w.upload(complex_weights<T>(p.w));
  if (precond) pc.upload(complex_weights<T>(*precond));
  const auto res = solve::pwls_pcg<T>(a, y.get(), x.get(), w.get(), r, precond ? pc.get() : nullptr, o);
  if (result) *result = res;
  return x.download();
}

// The closed form of the quadratic penalty: (AᴴWA + βRᴴR) x = AᴴWy.
std::vector<cdouble> quadratic_minimiser(const PenalisedProblem& p, double beta, double* kappa) {
  const Mat ah = herm(p.a);
  Mat h = ah * scale_rows(p.w, p.a);
  const Mat rr = herm(p.r) * p.r;
  for (std::size_t i = 0; i < h.a.size(); ++i) h.a[i] += beta * rr.a[i];
  std::vector<cdouble> wy(p.y.size());
  for (std::size_t i = 0; i < wy.size(); ++i) wy[i] = p.w[i] * p.y[i];
  if (kappa) *kappa = condition(h);
  return direct_solve(h, mul(ah, wy));
}

// (1) Quadratic ψ: nonlinear CG with an exact line search is linear CG, so 30 iterations on 8
// unknowns reach the closed form; the bound is the forward error κ·u of a backward-stable solve
// with a factor 1000 for the accumulation over the iterations (float: the line-search sums are
// rounded to float between iterations, a few hundred ulps of the relative residual). A diagonal
// preconditioner P = 1/diag(H) changes the path, not the minimiser.
TYPED_TEST(PwlsPcg, QuadraticReachesClosedForm) {
  using T = TypeParam;
  PenalisedProblem p;
  const double beta = 0.8;
  double kappa = 0;
  const auto want = quadratic_minimiser(p, beta, &kappa);
  ASSERT_LT(kappa, 1e3);
  solve::PwlsOptions o;
  o.beta = beta;
  o.max_iterations = 30;
  const double bound = 1000 * kappa * unit_roundoff<T>();
  EXPECT_LE(rel_diff(run<T>(p, o), want), bound);

  const Mat ah = herm(p.a), rr = herm(p.r) * p.r, h = ah * scale_rows(p.w, p.a);
  std::vector<double> pc(8);
  for (std::int64_t i = 0; i < 8; ++i) pc[static_cast<std::size_t>(i)] = 1 / (h(i, i).real() + beta * rr(i, i).real());
  EXPECT_LE(rel_diff(run<T>(p, o, &pc), want), bound);
  // β matters (the test would not see an ignored penalty).
  EXPECT_GT(rel_diff(run<T>(p, o), quadratic_minimiser(p, 0, nullptr)), 1e-2);
}

// (2) Hyperbolic ψ (δ = 0.3, so that part of Rx lies in the linear regime): the reported
// objective never increases (the Huber line search majorizes; rounding may add a few ulps of
// the value), it matches Φ evaluated on the host at the returned x, and after 100 iterations the
// gradient at x is below 1e-3 (float) / 1e-8 (double) of ‖AᴴWy‖: the minimiser is reached.
TYPED_TEST(PwlsPcg, HyperbolicDecreasesAndConverges) {
  using T = TypeParam;
  PenalisedProblem p;
  const Phi phi{p, 0.8, 0.3};
  solve::PwlsOptions o;
  o.beta = phi.beta;
  o.potential = solve::Potential::kHyperbolic;
  o.delta = phi.delta;
  o.max_iterations = 100;
  std::vector<solve::Report> reports;
  o.callback = [&](const solve::Report& r) {
    reports.push_back(r);
    return true;
  };
  solve::Result res;
  const auto x = widen_d(run<T>(p, o, nullptr, &res));
  ASSERT_EQ(reports.size(), 100u);
  const double slack = 16 * unit_roundoff<T>();
  double previous = phi.value(std::vector<cdouble>(8));
  for (const auto& r : reports) {
    EXPECT_LE(r.objective, previous * (1 + slack)) << "iteration " << r.iteration;
    previous = r.objective;
  }
  EXPECT_NEAR(res.objective, phi.value(x), 1e3 * unit_roundoff<T>() * phi.value(x));
  EXPECT_EQ(res.objective, reports.back().objective);
  const auto g = phi.gradient(x);
  std::vector<cdouble> wy(p.y.size());
  for (std::size_t i = 0; i < wy.size(); ++i) wy[i] = p.w[i] * p.y[i];
  EXPECT_LE(vnorm(g) / vnorm(mul(herm(p.a), wy)), (std::is_same_v<T, float> ? 1e-3 : 1e-8));
  // Not the quadratic's minimiser: the potential is seen.
  EXPECT_GT(rel_diff(std::vector<std::complex<T>>(x.begin(), x.end()), quadratic_minimiser(p, 0.8, nullptr)), 1e-2);
}

// (3) A tolerance on the relative change stops early and says so; the callback can stop.
TYPED_TEST(PwlsPcg, ToleranceAndCallbackStop) {
  using T = TypeParam;
  PenalisedProblem p;
  solve::PwlsOptions o;
  o.beta = 0.8;
  o.potential = solve::Potential::kHyperbolic;
  o.delta = 0.3;
  o.max_iterations = 200;
  o.tolerance = std::is_same_v<T, float> ? 1e-4 : 1e-8;
  solve::Result res;
  run<T>(p, o, nullptr, &res);
  EXPECT_TRUE(res.converged);
  EXPECT_LE(res.residual, o.tolerance);
  EXPECT_LT(res.iterations, 200);
  o.tolerance = 0;
  o.callback = [](const solve::Report& r) { return r.iteration < 4; };
  run<T>(p, o, nullptr, &res);
  EXPECT_TRUE(res.stopped);
  EXPECT_EQ(res.iterations, 4);
  o.callback = nullptr;
  run<T>(p, o, nullptr, &res);  // no reports: nothing brought back
  EXPECT_EQ(res.iterations, 200);
  EXPECT_TRUE(std::isnan(res.residual));
  EXPECT_TRUE(std::isnan(res.objective));
}

// (4) Sparse truth, underdetermined data (40 of 100), R = I and a hyperbolic potential with a
// small δ (≈ δ‖x‖₁ beyond δ: an ℓ1-like prior): the error is below 0.25 of the truth's norm and
// below half of plain CG's minimum-norm solution, whose error is ~√(1 − 40/100) ≈ 0.77 of it.
TYPED_TEST(PwlsPcg, SparsePriorBeatsPlainCg) {
  using T = TypeParam;
  SparseSetup<T> s;
  auto id = op::identity<T>({SparseProblem::kCols}, s.c);
  const double cg_err = plain_cg_error<T>(s.a, s.y.get(), s.p.truth);
  solve::PwlsOptions o;
  o.beta = 0.05;
  o.potential = solve::Potential::kHyperbolic;
  o.delta = 1e-3;
  o.max_iterations = 400;
  o.line_search_iterations = 5;
  solve::pwls_pcg<T>(s.a, s.y.get(), s.x.get(), nullptr, *id, nullptr, o);
  const double err = rel_diff(s.x.download(), s.p.truth);
  EXPECT_GT(cg_err, 0.5);
  EXPECT_LT(err, 0.25);
  EXPECT_LT(err, 0.5 * cg_err);
  std::printf("relative error: pwls_pcg (hyperbolic, R = I) %.3g, cg %.3g\n", err, cg_err);
}

// (5) Bad input: clear errors naming what was expected.
TYPED_TEST(PwlsPcg, BadInput) {
  using T = TypeParam;
  using C = std::complex<T>;
  PenalisedProblem p;
  const Context c = test_context();
  Dense<T> a(p.a, c), r(p.r, c);
  Dense<T> wrong(random_mat(12, 7, 5), c);
  ContextVector<T> y(c, 20), x(c, 8), w(c, 20), pc(c, 8);
  y.upload(narrow<T>(p.y));
  x.upload(std::vector<C>(8));
  w.upload(std::vector<C>(20, C(1)));
  pc.upload(std::vector<C>(8, C(1)));
  const auto call = [&](solve::PwlsOptions o, const C* ww = nullptr, op::LinearOperator<T>* rr = nullptr,
                        const C* pp = nullptr) {
    return [&, o, ww, rr, pp] { (void)solve::pwls_pcg<T>(a, y.get(), x.get(), ww, rr ? *rr : r, pp, o); };
  };
  const double nan = std::numeric_limits<double>::quiet_NaN();
  solve::PwlsOptions o;
  o.max_iterations = 0;
  EXPECT_TRUE(throws_error(call(o), ErrorCode::kInvalidArgument, {"max_iterations", ">= 1"}));
  o = {};
  o.line_search_iterations = -1;
  EXPECT_TRUE(throws_error(call(o), ErrorCode::kInvalidArgument, {"line_search_iterations", ">= 1"}));
  o = {};
  o.beta = -0.5;
  EXPECT_TRUE(throws_error(call(o), ErrorCode::kInvalidArgument, {"beta", ">= 0"}));
  o.beta = nan;
  EXPECT_TRUE(throws_error(call(o), ErrorCode::kInvalidArgument, {"beta", "finite"}));
  o = {};
  o.potential = solve::Potential::kHyperbolic;
  for (const double d : {0.0, -1.0, nan}) {
    o.delta = d;
    EXPECT_TRUE(throws_error(call(o), ErrorCode::kInvalidArgument, {"delta", "> 0"}));
  }
  o = {};
  o.tolerance = -1;
  EXPECT_TRUE(throws_error(call(o), ErrorCode::kInvalidArgument, {"tolerance", ">= 0"}));
  o = {};
  EXPECT_TRUE(throws_error(call(o, nullptr, &wrong), ErrorCode::kShapeMismatch, {"domain of R"}));
  EXPECT_TRUE(throws_error([&] { (void)solve::pwls_pcg<T>(a, nullptr, x.get(), nullptr, r, nullptr, o); },
                           ErrorCode::kInvalidArgument, {"y", "null"}));

  o.tolerance = 1e-6;
  EXPECT_TRUE(rejects_nan_weight(w, 4, [&](const C* ww) { call(o, ww)(); }));
  if (c.is_host()) {
    std::vector<C> neg(8, C(1));
    neg[2] = C(0);
    pc.upload(neg);
    EXPECT_TRUE(throws_error(call({}, nullptr, nullptr, pc.get()), ErrorCode::kInvalidArgument,
                             {"preconditioner[2]", "> 0"}));
  }
}

}  // namespace
}  // namespace fieldft::test
