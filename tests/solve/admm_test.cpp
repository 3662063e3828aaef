// solve::admm (fieldft/solve/admm.hpp) on the backend under test (FIELDFT_TEST_BACKEND): the
// exact minimisers of A = I problems (soft thresholding; anisotropic versus isotropic grouping
// seen through R = (I; I)); recovery of a sparse and of a piecewise-constant truth (total
// variation with a test-local finite-difference matrix) from underdetermined data, against plain
// CG; the objective's decrease and its reports; bad input.
#include "fieldft/solve/admm.hpp"

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
class Admm : public ::testing::Test {
 protected:
  void SetUp() override { FIELDFT_TEST_SKIP_UNLESS_AVAILABLE(kBackend); }
};
using Precisions = ::testing::Types<float, double>;
TYPED_TEST_SUITE(Admm, Precisions);

// ADMM with A = I on y (n values) from x0 = 0.
template <class T>
std::vector<std::complex<T>> denoise(const std::vector<cdouble>& yv, op::LinearOperator<T>& r,
                                     const solve::AdmmOptions& o) {
  const Context c = test_context();
  const auto n = static_cast<std::int64_t>(yv.size());
  auto a = op::identity<T>({n}, c);
  ContextVector<T> y(c, n), x(c, n);
  y.upload(narrow<T>(yv));
  x.upload(std::vector<std::complex<T>>(static_cast<std::size_t>(n)));
  solve::admm<T>(*a, y.get(), x.get(), nullptr, r, o);
  return x.download();
}

// (1) A = I: with R = I the minimiser of ½‖x − y‖² + λ‖x‖₁ is soft(y, λ). With R = (I; I) (codomain
// 16x2), anisotropic shrinkage penalises λ(|x| + |x|) = 2λ|x| (minimiser soft(y, 2λ)), isotropic
// λ√(|x|² + |x|²) = √2 λ|x| (soft(y, √2 λ)). ADMM converges linearly on these problems; 300
// iterations reach rounding: 1e-4 (float) / 1e-9 (double).
TYPED_TEST(Admm, IdentityProblemsAreSoftThresholding) {
  using T = TypeParam;
  const Context c = test_context();
  const auto yv = random_complex<double>(16, 401);
  const double lambda = 0.3, bound = std::is_same_v<T, float> ? 1e-4 : 1e-9;
  solve::AdmmOptions o;
  o.lambda = lambda;
  o.max_iterations = 300;
  o.cg_iterations = 2;
  auto id = op::identity<T>({16}, c);
  EXPECT_LE(rel_diff(denoise<T>(yv, *id, o), soft(yv, lambda)), bound);

  auto twice = op::vstack<T>({op::identity<T>({16}, c), op::identity<T>({16}, c)});
  ASSERT_EQ(twice->codomain_shape(), (op::Shape{16, 2}));
  EXPECT_LE(rel_diff(denoise<T>(yv, *twice, o), soft(yv, 2 * lambda)), bound);
  o.isotropic = true;
  EXPECT_LE(rel_diff(denoise<T>(yv, *twice, o), soft(yv, std::sqrt(2.0) * lambda)), bound);
}

// Periodic forward differences on n samples: (Rx)_i = x_{i+1 mod n} − x_i.
Mat periodic_differences(std::int64_t n) {
  Mat d(n, n);
  for (std::int64_t i = 0; i < n; ++i) {
    d(i, i) = -1;
    d(i, (i + 1) % n) = 1;
  }
  return d;
}

// (2) Underdetermined recovery (noiseless): a 6-sparse truth with R = I (40 of 100 samples), and a
// piecewise-constant 64-sample truth with four jumps under total variation (R = periodic
// differences, 32 random samples). ADMM's error stays below 5% of the truth's norm (the shrinkage
// bias of a small λ), plain CG's minimum-norm solution is off by more than half of it.
TYPED_TEST(Admm, RecoversSparseAndPiecewiseConstantTruths) {
  using T = TypeParam;
  const Context c = test_context();
  const auto recover = [&](const Mat& am, const std::vector<cdouble>& truth, op::LinearOperator<T>& r,
                           double lambda, double rho, const char* what) {
    Dense<T> a(am, c);
    const auto yv = mul(am, truth);
    ContextVector<T> y(c, am.rows), x(c, am.cols);
    y.upload(narrow<T>(yv));
    const double cg_err = plain_cg_error<T>(a, y.get(), truth);
    x.upload(std::vector<std::complex<T>>(static_cast<std::size_t>(am.cols)));
    solve::AdmmOptions o;
    o.lambda = lambda;
    o.rho = rho;
    o.max_iterations = 500;
    o.cg_iterations = 5;
    solve::admm<T>(a, y.get(), x.get(), nullptr, r, o);
    const double err = rel_diff(x.download(), truth);
    EXPECT_GT(cg_err, 0.5) << what;
    EXPECT_LT(err, 0.05) << what;
    std::printf("%s: relative error admm %.3g, cg %.3g\n", what, err, cg_err);
  };
  SparseProblem sp;
  auto id = op::identity<T>({SparseProblem::kCols}, c);
  recover(sp.a, sp.truth, *id, 0.005, 0.05, "sparse (R = I)");

  const std::int64_t n = 64;
  std::vector<cdouble> pc(n);
  for (std::int64_t i = 0; i < n; ++i)
    pc[static_cast<std::size_t>(i)] = i < 10 ? cdouble(1, 0.5) : i < 30 ? cdouble(-0.5, 1) : i < 45 ? cdouble(2, 0) : cdouble(0.3, -0.7);
  Mat am = random_mat(32, n, 411);
  for (auto& e : am.a) e /= std::sqrt(32 * 2.0 / 3.0);
  Dense<T> tv(periodic_differences(n), c);
  recover(am, pc, tv, 0.005, 0.05, "piecewise constant (TV)");
}

// (3) The reported objective F(x_k) matches a host evaluation at the returned x, ends well below
// F(x_0) (ADMM's F is not monotone, but it converges to the minimum), and a tolerance on the
// relative change stops early.
TYPED_TEST(Admm, ReportsAndTolerance) {
  using T = TypeParam;
  SparseSetup<T> s;
  auto id = op::identity<T>({SparseProblem::kCols}, s.c);
  const double lambda = 0.02;
  solve::AdmmOptions o;
  o.lambda = lambda;
  o.rho = 0.1;
  o.max_iterations = 200;
  int calls = 0;
  o.callback = [&](const solve::Report& r) {
    EXPECT_EQ(r.iteration, ++calls);
    return true;
  };
  const auto res = solve::admm<T>(s.a, s.y.get(), s.x.get(), nullptr, *id, o);
  EXPECT_EQ(calls, 200);
  const auto xv = widen_d(s.x.download());
  const double host = data_term(s.p.a, s.p.y, {}, xv) + lambda * norm1(xv);
  const double f0 = data_term(s.p.a, s.p.y, {}, std::vector<cdouble>(SparseProblem::kCols));
  EXPECT_NEAR(res.objective, host, 1e3 * unit_roundoff<T>() * host);
  EXPECT_LT(res.objective, 0.5 * f0);

  s.zero_x();
  o.callback = nullptr;
  o.max_iterations = 2000;
  o.tolerance = std::is_same_v<T, float> ? 1e-4 : 1e-7;
  const auto stop = solve::admm<T>(s.a, s.y.get(), s.x.get(), nullptr, *id, o);
  EXPECT_TRUE(stop.converged);
  EXPECT_LE(stop.residual, o.tolerance);
  EXPECT_LT(stop.iterations, 2000);
}

// (4) Bad input.
TYPED_TEST(Admm, BadInput) {
  using T = TypeParam;
  using C = std::complex<T>;
  const Context c = test_context();
  auto a = op::identity<T>({8}, c);
  auto r = op::identity<T>({8}, c);
  Dense<T> wrong(random_mat(8, 6, 3), c);
  ContextVector<T> y(c, 8), x(c, 8), w(c, 8);
  y.upload(random_complex<T>(8, 1));
  x.upload(std::vector<C>(8));
  const auto call = [&](solve::AdmmOptions o, const C* ww = nullptr, op::LinearOperator<T>* rr = nullptr) {
    return [&, o, ww, rr] { (void)solve::admm<T>(*a, y.get(), x.get(), ww, rr ? *rr : *r, o); };
  };
  const double nan = std::numeric_limits<double>::quiet_NaN();
  solve::AdmmOptions o;
  o.max_iterations = 0;
  EXPECT_TRUE(throws_error(call(o), ErrorCode::kInvalidArgument, {"max_iterations", ">= 1"}));
  o = {};
  o.cg_iterations = 0;
  EXPECT_TRUE(throws_error(call(o), ErrorCode::kInvalidArgument, {"cg_iterations", ">= 1"}));
  o = {};
  o.lambda = -1;
  EXPECT_TRUE(throws_error(call(o), ErrorCode::kInvalidArgument, {"lambda", ">= 0"}));
  o = {};
  for (const double rho : {0.0, -1.0, nan}) {
    o.rho = rho;
    EXPECT_TRUE(throws_error(call(o), ErrorCode::kInvalidArgument, {"rho", "> 0"}));
  }
  o = {};
  EXPECT_TRUE(throws_error(call(o, nullptr, &wrong), ErrorCode::kShapeMismatch, {"domain of R"}));
  o.tolerance = 1e-6;
  EXPECT_TRUE(rejects_nan_weight(w, 1, [&](const C* ww) { call(o, ww)(); }));
}

}  // namespace
}  // namespace fieldft::test
