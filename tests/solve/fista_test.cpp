// solve::fista and solve::max_eigenvalue (fieldft/solve/{fista,max_eigenvalue}.hpp) on the
// backend under test (FIELDFT_TEST_BACKEND): the power method against known spectra; FISTA's
// exact minimiser for A = I (soft thresholding, with Ψ = I and with a unitary Ψ); the monotone
// variant's objective never increasing and the plain variant's final decrease; sparse recovery
// from underdetermined data against plain CG; bad input.
#include "fieldft/solve/fista.hpp"

#include <cmath>
#include <cstdio>
#include <limits>
#include <type_traits>
#include <vector>

#include "fieldft/context.hpp"
#include "fieldft/op/combinators.hpp"
#include "fieldft/solve/cg.hpp"
#include "fieldft/solve/max_eigenvalue.hpp"
#include "solve/problems.hpp"
#include "support/battery.hpp"
#include "support/context_vector.hpp"
#include "support/dense_operator.hpp"

namespace fieldft::test {
namespace {

template <class T>
class Fista : public ::testing::Test {
 protected:
  void SetUp() override { FIELDFT_TEST_SKIP_UNLESS_AVAILABLE(kBackend); }
};
using Precisions = ::testing::Types<float, double>;
TYPED_TEST_SUITE(Fista, Precisions);

// A unitary 16x16 matrix: Gram–Schmidt (twice, for orthogonality to rounding) on a random one.
Mat random_unitary(std::int64_t n, std::uint64_t seed) {
  Mat q = random_mat(n, n, seed);
  for (int pass = 0; pass < 2; ++pass)
    for (std::int64_t j = 0; j < n; ++j) {
      for (std::int64_t l = 0; l < j; ++l) {
        cdouble d = 0;
        for (std::int64_t i = 0; i < n; ++i) d += std::conj(q(i, l)) * q(i, j);
        for (std::int64_t i = 0; i < n; ++i) q(i, j) -= d * q(i, l);
      }
      double s = 0;
      for (std::int64_t i = 0; i < n; ++i) s += std::norm(q(i, j));
      for (std::int64_t i = 0; i < n; ++i) q(i, j) /= std::sqrt(s);
    }
  return q;
}

// (1) max_eigenvalue: a diagonal N = DᴴD with |d|² = 1, 2, …, 10 (ratio λ₂/λ₁ = 0.9: 200
// iterations leave 0.9^400 ~ 5e-19) and a dense Q diag(λ) Qᴴ with λ = {7, 3, 1, …} (30 iterations:
// (3/7)^60 ~ 1e-22). The Rayleigh quotient is exact to rounding: 1e-5 (float), 1e-12 (double).
TYPED_TEST(Fista, MaxEigenvalueMatchesKnownSpectrum) {
  using T = TypeParam;
  const Context c = test_context();
  const double bound = std::is_same_v<T, float> ? 1e-5 : 1e-12;
  std::vector<std::complex<T>> d(10);
  for (int i = 0; i < 10; ++i) d[static_cast<std::size_t>(i)] = std::polar(static_cast<T>(std::sqrt(i + 1.0)), static_cast<T>(i));
  auto dop = op::diag<T>(d, {10}, c);
  auto n = op::compose<T>(op::adjoint<T>(dop), dop);
  EXPECT_NEAR(solve::max_eigenvalue<T>(*n, 200), 10.0, 10 * bound);

  const Mat q = random_unitary(16, 9);
  Mat lam(16, 16);
  for (std::int64_t i = 0; i < 16; ++i) lam(i, i) = i == 0 ? 7.0 : (i == 1 ? 3.0 : 1.0 / (i + 1));
  Dense<T> dense(q * lam * herm(q), c);
  EXPECT_NEAR(solve::max_eigenvalue<T>(dense, 30), 7.0, 7 * bound);
  EXPECT_TRUE(throws_error([&] { (void)solve::max_eigenvalue<T>(dense, 0); }, ErrorCode::kInvalidArgument,
                           {"iterations", ">= 1"}));
  Dense<T> rect(random_mat(4, 3, 1), c);
  EXPECT_TRUE(throws_error([&] { (void)solve::max_eigenvalue<T>(rect, 5); }, ErrorCode::kShapeMismatch, {"square"}));
}

// Runs fista with A = I on y from x0 = 0; returns x.
template <class T>
std::vector<std::complex<T>> denoise(const std::vector<cdouble>& yv, op::LinearOperator<T>* psi,
                                     const solve::FistaOptions& o, solve::Result* result = nullptr) {
  const Context c = test_context();
  const auto n = static_cast<std::int64_t>(yv.size());
  auto a = op::identity<T>({n}, c);
  ContextVector<T> y(c, n), x(c, n);
  y.upload(narrow<T>(yv));
  x.upload(std::vector<std::complex<T>>(static_cast<std::size_t>(n)));
  const auto r = solve::fista<T>(*a, y.get(), x.get(), nullptr, psi, o);
  if (result) *result = r;
  return x.download();
}

// (2) A = I, Ψ = I: the minimiser of ½‖x − y‖² + λ‖x‖₁ is soft(y, λ). With L = 1 given, the first
// iterate is already soft(y, λ), and FISTA stays there (rounding only); with L estimated (a 5%
// margin above 1) it converges to it. A unitary Ψ: the minimiser is Ψᴴ soft(Ψy, λ).
TYPED_TEST(Fista, IdentityIsSoftThresholding) {
  using T = TypeParam;
  const auto yv = random_complex<double>(16, 301);
  const double lambda = 0.6;
  const auto want = soft(yv, lambda);
  const double bound = 64 * unit_roundoff<T>();
  solve::FistaOptions o;
  o.lambda = lambda;
  o.lipschitz = 1;
  o.max_iterations = 1;
  EXPECT_LE(rel_diff(denoise<T>(yv, nullptr, o), want), bound);
  o.max_iterations = 20;
  EXPECT_LE(rel_diff(denoise<T>(yv, nullptr, o), want), bound);
  o.lipschitz = 0;
  o.max_iterations = 200;
  EXPECT_LE(rel_diff(denoise<T>(yv, nullptr, o), want), 100 * bound);

  const Context c = test_context();
  const Mat q = random_unitary(16, 11);
  Dense<T> psi(q, c);
  const auto want_psi = mul(herm(q), soft(mul(q, yv), lambda));
  EXPECT_GT(rel_diff(narrow<T>(want_psi), want), 0.05);  // Ψ changes the answer
  o.lipschitz = 1;
  o.max_iterations = 20;
  EXPECT_LE(rel_diff(denoise<T>(yv, &psi, o), want_psi), 10 * bound);
}

// (3) Objectives on the underdetermined sparse problem (λ = 0.02): MFISTA's reported F never
// increases (rounding: a few ulps of the value); plain FISTA's F is not monotone, but its final
// value is below the initial F(0) and within 1% of MFISTA's after the same 300 iterations (both
// converge as O(1/k²)); the reported F matches a host evaluation at the returned x.
TYPED_TEST(Fista, ObjectiveDecreases) {
  using T = TypeParam;
  SparseSetup<T> s;
  const double lambda = 0.02;
  const auto objective = [&](const std::vector<cdouble>& v) { return data_term(s.p.a, s.p.y, {}, v) + lambda * norm1(v); };
  const double f0 = objective(std::vector<cdouble>(SparseProblem::kCols));
  double finals[2] = {0, 0};
  for (const bool monotone : {true, false}) {
    SCOPED_TRACE(monotone);
    s.zero_x();
    solve::FistaOptions o;
    o.lambda = lambda;
    o.max_iterations = 300;
    o.monotone = monotone;
    std::vector<double> f;
    o.callback = [&](const solve::Report& r) {
      f.push_back(r.objective);
      return true;
    };
    const auto res = solve::fista<T>(s.a, s.y.get(), s.x.get(), nullptr, nullptr, o);
    ASSERT_EQ(f.size(), 300u);
    if (monotone) {
      double previous = f0;
      for (std::size_t k = 0; k < f.size(); ++k) {
        EXPECT_LE(f[k], previous * (1 + 16 * unit_roundoff<T>())) << "iteration " << k + 1;
        previous = f[k];
      }
    }
    const double host = objective(widen_d(s.x.download()));
    EXPECT_NEAR(res.objective, host, 1e3 * unit_roundoff<T>() * host);
    EXPECT_LT(res.objective, 0.5 * f0);
    finals[monotone ? 0 : 1] = res.objective;
  }
  EXPECT_NEAR(finals[1], finals[0], 0.01 * finals[0]);
}

// (4) Sparse truth from underdetermined data (40 of 100 samples, noiseless): ℓ1 with a small λ
// recovers it to below 5% (λ's shrinkage bias is ~λ/|x| on the 6 nonzeros of magnitude >= 1,
// amplified by the conditioning of their 6 columns), while plain CG's minimum-norm solution is
// off by ~√(1 − 40/100) ≈ 0.77 of the truth's norm.
TYPED_TEST(Fista, RecoversSparseTruthBetterThanCg) {
  using T = TypeParam;
  SparseSetup<T> s;
  const double cg_err = plain_cg_error<T>(s.a, s.y.get(), s.p.truth);
  solve::FistaOptions o;
  o.lambda = 0.005;
  o.max_iterations = 2000;
  solve::fista<T>(s.a, s.y.get(), s.x.get(), nullptr, nullptr, o);
  const double err = rel_diff(s.x.download(), s.p.truth);
  EXPECT_GT(cg_err, 0.5);
  EXPECT_LT(err, 0.05);
  std::printf("relative error: fista %.3g, cg %.3g\n", err, cg_err);
}

// (5) Bad input.
TYPED_TEST(Fista, BadInput) {
  using T = TypeParam;
  using C = std::complex<T>;
  const Context c = test_context();
  auto a = op::identity<T>({8}, c);
  Dense<T> psi_wrong(random_mat(6, 8, 3), c);
  ContextVector<T> y(c, 8), x(c, 8), w(c, 8);
  y.upload(random_complex<T>(8, 1));
  x.upload(std::vector<C>(8));
  const auto call = [&](solve::FistaOptions o, const C* ww = nullptr, op::LinearOperator<T>* psi = nullptr) {
    return [&, o, ww, psi] { (void)solve::fista<T>(*a, y.get(), x.get(), ww, psi, o); };
  };
  const double nan = std::numeric_limits<double>::quiet_NaN();
  solve::FistaOptions o;
  o.max_iterations = 0;
  EXPECT_TRUE(throws_error(call(o), ErrorCode::kInvalidArgument, {"max_iterations", ">= 1"}));
  o = {};
  o.lambda = -1;
  EXPECT_TRUE(throws_error(call(o), ErrorCode::kInvalidArgument, {"lambda", ">= 0"}));
  o.lambda = nan;
  EXPECT_TRUE(throws_error(call(o), ErrorCode::kInvalidArgument, {"lambda"}));
  o = {};
  o.lipschitz = -2;
  EXPECT_TRUE(throws_error(call(o), ErrorCode::kInvalidArgument, {"lipschitz", ">= 0"}));
  o = {};
  o.power_iterations = 0;
  EXPECT_TRUE(throws_error(call(o), ErrorCode::kInvalidArgument, {"power_iterations", ">= 1"}));
  o = {};
  o.lipschitz_margin = 0.5;
  EXPECT_TRUE(throws_error(call(o), ErrorCode::kInvalidArgument, {"lipschitz_margin", ">= 1"}));
  o = {};
  EXPECT_TRUE(throws_error(call(o, nullptr, &psi_wrong), ErrorCode::kShapeMismatch, {"unitary"}));
  auto zero = op::scale<T>(C(0), op::identity<T>({8}, c));
  EXPECT_TRUE(throws_error([&] { (void)solve::fista<T>(*zero, y.get(), x.get(), nullptr, nullptr, o); },
                           ErrorCode::kInvalidArgument, {"Lipschitz", "not positive"}));
  o.tolerance = 1e-6;
  EXPECT_TRUE(rejects_nan_weight(w, 6, [&](const C* ww) { call(o, ww)(); }));
}

}  // namespace
}  // namespace fieldft::test
