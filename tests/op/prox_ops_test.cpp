// The proximal, penalty and solver-scalar operations of fieldft::op::VectorOps (soft_threshold,
// soft_threshold_stacked, norm1_to, hyperbolic_weights / _sum_to / _line_to, newton_step,
// polak_ribiere, mul_real, fill_random, normalize, to_host) on the backend under test
// (FIELDFT_TEST_BACKEND), against plain double-precision loops; the documented special cases
// (τ = 0, values below the threshold, δ = ∞, zero denominators, the zero vector) and argument
// errors.
#include <cmath>
#include <complex>
#include <limits>
#include <vector>

#include "fieldft/op/vector_ops.hpp"
#include "support/battery.hpp"
#include "support/context_vector.hpp"

namespace fieldft::test {
namespace {

using op::VectorOps;

// n not a multiple of any block size, above the host's serial threshold (32768).
constexpr std::int64_t kN = 40009;

// Element-wise results: a few roundings of O(1) values.
template <class T>
double tol() {
  return 64.0 * std::numeric_limits<T>::epsilon();
}

// Reductions of n terms of size ~1: the result's rounding to T plus double summation.
template <class T>
double sum_tol(double scale) {
  return (4.0 * std::numeric_limits<T>::epsilon() + 1e-12) * scale;
}

// A vector of n reals in context memory, kept in a ContextVector of complex values.
template <class T>
struct RealVector {
  RealVector(const Context& c, std::int64_t n) : store(c, (n + 1) / 2 + 1), n(n) {}
  T* get() { return reinterpret_cast<T*>(store.get()); }
  std::vector<T> download() const {
    const auto v = store.download();
    const T* p = reinterpret_cast<const T*>(v.data());
    return std::vector<T>(p, p + n);
  }
  ContextVector<T> store;
  std::int64_t n;
};

template <class T>
class ProxOps : public ::testing::Test {
 protected:
  void SetUp() override { FIELDFT_TEST_SKIP_UNLESS_AVAILABLE(kBackend); }
};
using Precisions = ::testing::Types<float, double>;
TYPED_TEST_SUITE(ProxOps, Precisions);

// Random values with magnitudes spread over [0, 2], so that a threshold of 0.7 zeroes some,
// shrinks others; exact zeros included.
template <class T>
std::vector<std::complex<T>> test_values(std::int64_t n, std::uint64_t seed) {
  auto v = random_complex<T>(n, seed);
  for (std::int64_t i = 0; i < n; i += 97) v[static_cast<std::size_t>(i)] = 0;
  return v;
}

TYPED_TEST(ProxOps, SoftThresholdMatchesLoop) {
  using T = TypeParam;
  using C = std::complex<T>;
  const Context c = test_context();
  VectorOps<T> ops(c);
  const auto xh = test_values<T>(kN, 41);
  ContextVector<T> x(c, kN), out(c, kN);
  x.upload(xh);
  for (const double tau : {0.0, 0.7}) {
    SCOPED_TRACE(tau);
    ops.soft_threshold(kN, static_cast<T>(tau), x.get(), out.get());
    const auto got = out.download();
    double worst = 0;
    int zeros = 0;
    for (std::size_t i = 0; i < xh.size(); ++i) {
      const cdouble xi(xh[i]);
      const double mag = std::abs(xi);
      const cdouble want = mag > tau ? xi * (1 - tau / mag) : cdouble(0);
      worst = std::max(worst, std::abs(cdouble(got[i]) - want));
      zeros += got[i] == C(0);
    }
    EXPECT_LE(worst, tol<T>());
    if (tau > 0) {
      EXPECT_GT(zeros, kN / 20);  // the threshold zeroes a good share of the values
    }
  }
  // In place (out == x) gives the same.
  ops.soft_threshold(kN, T(0.7), x.get(), out.get());
  ops.soft_threshold(kN, T(0.7), x.get(), x.get());
  EXPECT_EQ(x.download(), out.download());
}

TYPED_TEST(ProxOps, GroupedSoftThresholdAndNorm1MatchLoops) {
  using T = TypeParam;
  const Context c = test_context();
  VectorOps<T> ops(c);
  const std::int64_t n = kN / 3, k = 3;
  const auto xh = test_values<T>(n * k, 42);
  ContextVector<T> x(c, n * k), out(c, n * k);
  x.upload(xh);
  const double tau = 1.1;
  ops.soft_threshold_stacked(n, k, static_cast<T>(tau), x.get(), out.get());
  const auto got = out.download();
  double worst = 0, l21 = 0, l1 = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    double g2 = 0;
    for (std::int64_t j = 0; j < k; ++j) g2 += std::norm(cdouble(xh[static_cast<std::size_t>(i + n * j)]));
    const double g = std::sqrt(g2), f = g > tau ? 1 - tau / g : 0;
    l21 += g;
    for (std::int64_t j = 0; j < k; ++j) {
      const auto e = static_cast<std::size_t>(i + n * j);
      worst = std::max(worst, std::abs(cdouble(got[e]) - f * cdouble(xh[e])));
      l1 += std::abs(cdouble(xh[e]));
    }
  }
  EXPECT_LE(worst, tol<T>());

  RealVector<T> r(c, 2);
  ops.norm1_to(n, k, x.get(), r.get());
  ops.norm1_to(n * k, 1, x.get(), r.get() + 1);
  const auto sums = r.download();
  EXPECT_NEAR(sums[0], l21, sum_tol<T>(l21)) << "isotropic (l2,1)";
  EXPECT_NEAR(sums[1], l1, sum_tol<T>(l1)) << "l1";
  EXPECT_GT(l1 - l21, 0.1 * l1);  // the two norms differ: the grouping is seen
}

TYPED_TEST(ProxOps, HyperbolicPotentialMatchesFormulas) {
  using T = TypeParam;
  using C = std::complex<T>;
  const Context c = test_context();
  VectorOps<T> ops(c);
  const auto xh = test_values<T>(kN, 43), vh = random_complex<T>(kN, 44);
  ContextVector<T> x(c, kN), v(c, kN), scalars(c, 2);
  x.upload(xh);
  v.upload(vh);
  RealVector<T> w(c, kN), sum(c, 1);
  const T inf = std::numeric_limits<T>::infinity();
  for (const double delta : {0.3, 1e30, static_cast<double>(inf)}) {
    SCOPED_TRACE(delta);
    const T d = static_cast<T>(delta);
    const double kappa = 1 / (static_cast<double>(d) * d);
    ops.hyperbolic_weights(kN, d, x.get(), w.get());
    ops.hyperbolic_sum_to(kN, d, x.get(), sum.get());
    const T alpha = T(-0.375);
    scalars.upload({C(alpha, T(5)), C(0)});  // the imaginary part of α is ignored
    ops.hyperbolic_line_to(kN, d, x.get(), v.get(), scalars.get(), scalars.get() + 1);
    const auto wg = w.download();
    const double sg = sum.download()[0];
    const C line = scalars.download()[1];
    double worst = 0, psi = 0, lre = 0, lim = 0, scale = 0;
    for (std::size_t i = 0; i < xh.size(); ++i) {
      const cdouble xi(xh[i]), vi(vh[i]);
      const double s = std::norm(xi);
      const double want = 1 / std::sqrt(1 + s * kappa);
      worst = std::max(worst, std::abs(wg[i] - want));
      // ψ from its definition, by its series ½s(1 − sκ/4) where √(1 + sκ) − 1 would cancel.
      psi += s * kappa > 1e-6 ? (std::sqrt(1 + s * kappa) - 1) / kappa : 0.5 * s * (1 - s * kappa / 4);
      const cdouble t = xi + static_cast<double>(alpha) * vi;
      const double wt = 1 / std::sqrt(1 + std::norm(t) * kappa);
      lre += wt * (std::conj(vi) * t).real();
      lim += wt * std::norm(vi);
      scale += std::abs(vi) * std::abs(t);
    }
    EXPECT_LE(worst, tol<T>());
    if (delta > 1e29) {
      EXPECT_EQ(wg[1], T(1));  // the quadratic: weights exactly 1
    }
    EXPECT_NEAR(sg, psi, sum_tol<T>(psi));
    EXPECT_NEAR(line.real(), lre, sum_tol<T>(scale));
    EXPECT_NEAR(line.imag(), lim, sum_tol<T>(lim));
  }
  // No cancellation for |x| ≪ δ: ψ(1e-4·δ) = δ²·(1e-8/2 − …) to the precision of the sum (the
  // direct form √(1 + s) − 1 would lose 8 digits: all of them in float).
  const T tiny = T(1e-4);
  x.upload(std::vector<C>(kN, C(tiny)));
  ops.hyperbolic_sum_to(kN, T(1), x.get(), sum.get());
  const double t2 = static_cast<double>(tiny) * tiny;
  const double want = kN * t2 / (std::sqrt(1 + t2) + 1);
  EXPECT_NEAR(sum.download()[0], want, sum_tol<T>(want));
}

TYPED_TEST(ProxOps, SolverScalars) {
  using T = TypeParam;
  using C = std::complex<T>;
  const Context c = test_context();
  VectorOps<T> ops(c);
  // s: data {g, c}, penalty p, α, then now, cross, before, γ.
  ContextVector<T> s(c, 8);
  const auto run = [&](std::vector<C> values, T beta) {
    s.upload(values);
    ops.newton_step(s.get(), s.get() + 2, beta, s.get() + 3);
    ops.polak_ribiere(s.get() + 4, s.get() + 5, s.get() + 6, s.get() + 7);
    return s.download();
  };
  // α − (α c − g + β p)/(c + β q) = 0.5 − (0.5·4 − 3 + 2·1)/(4 + 2·0.5) = 0.5 − 1/5 = 0.3;
  // γ = (5 − 2)/4 = 0.75 (imaginary parts ignored, set to 0).
  auto r = run({C(3, 9), C(4, 9), C(1, T(0.5)), C(T(0.5), 7), C(5, 1), C(2, 1), C(4, 3), C(9, 9)}, T(2));
  EXPECT_NEAR(r[3].real(), 0.3, tol<T>());
  EXPECT_EQ(r[3].imag(), T(0));
  EXPECT_NEAR(r[7].real(), 0.75, tol<T>());
  EXPECT_EQ(r[7].imag(), T(0));
  // Zero / negative denominators: α unchanged, γ = 0; a negative ratio gives γ = 0 (PR+).
  r = run({C(3), C(0), C(1, 0), C(T(0.5)), C(5), C(2), C(0), C(9)}, T(0));
  EXPECT_EQ(r[3], C(T(0.5)));
  EXPECT_EQ(r[7], C(0));
  r = run({C(3), C(-1), C(0), C(T(0.5)), C(1), C(2), C(4), C(9)}, T(1));
  EXPECT_EQ(r[3], C(T(0.5)));
  EXPECT_EQ(r[7], C(0));
}

TYPED_TEST(ProxOps, MulRealRandomNormalizeToHost) {
  using T = TypeParam;
  using C = std::complex<T>;
  const Context c = test_context();
  VectorOps<T> ops(c);
  const auto xh = random_complex<T>(kN, 45);
  ContextVector<T> x(c, kN), out(c, kN);
  x.upload(xh);
  RealVector<T> w(c, kN);
  std::vector<C> wc((kN + 1) / 2 + 1);
  T* wp = reinterpret_cast<T*>(wc.data());
  for (std::int64_t i = 0; i < kN; ++i) wp[i] = static_cast<T>(0.5 + (i % 7) * 0.25);
  w.store.upload(wc);
  ops.mul_real(kN, w.get(), x.get(), out.get());
  auto got = out.download();
  double worst = 0;
  for (std::size_t i = 0; i < xh.size(); ++i)
    worst = std::max(worst, std::abs(cdouble(got[i]) - static_cast<double>(wp[i]) * cdouble(xh[i])));
  EXPECT_LE(worst, tol<T>());

  // fill_random: reproducible, within [-1, 1], mean near 0 (n = 40009 values of variance 1/3:
  // the mean's standard deviation is 0.003, the bound 0.02 is 7 of them), seeds differ.
  ops.fill_random(kN, 7, out.get());
  got = out.download();
  ops.fill_random(kN, 7, x.get());
  EXPECT_EQ(x.download(), got);
  double mean = 0, lo = 1, hi = -1;
  for (const C& z : got) {
    mean += z.real() + z.imag();
    lo = std::min<double>(lo, std::min(z.real(), z.imag()));
    hi = std::max<double>(hi, std::max(z.real(), z.imag()));
  }
  EXPECT_GE(lo, -1);
  EXPECT_LE(hi, 1);
  EXPECT_LT(std::abs(mean / (2 * kN)), 0.02);
  ops.fill_random(kN, 8, x.get());
  EXPECT_NE(x.download(), got);

  // normalize: ‖x‖ written, x unit; the zero vector stays 0 with norm 0.
  RealVector<T> nrm(c, 1);
  double n2 = 0;
  for (const C& z : got) n2 += std::norm(cdouble(z));
  ops.normalize(kN, out.get(), nrm.get());
  EXPECT_NEAR(nrm.download()[0], std::sqrt(n2), sum_tol<T>(std::sqrt(n2)));
  const auto unit = out.download();
  double u2 = 0;
  for (const C& z : unit) u2 += std::norm(cdouble(z));
  EXPECT_NEAR(u2, 1.0, 16 * std::numeric_limits<T>::epsilon());
  ops.fill(kN, C(0), out.get());
  ops.normalize(kN, out.get(), nrm.get());
  EXPECT_EQ(nrm.download()[0], T(0));
  EXPECT_EQ(out.download(), std::vector<C>(kN, C(0)));

  std::vector<C> h(5);
  ops.to_host(5, x.get(), h.data());
  const auto all = x.download();
  EXPECT_EQ(h, std::vector<C>(all.begin(), all.begin() + 5));
}

TYPED_TEST(ProxOps, BadArgumentsThrow) {
  using T = TypeParam;
  const Context c = test_context();
  VectorOps<T> ops(c);
  ContextVector<T> x(c, 4), s(c, 4);
  RealVector<T> w(c, 4);
  const T nan = std::numeric_limits<T>::quiet_NaN();
  const T inf = std::numeric_limits<T>::infinity();
  EXPECT_TRUE(throws_error([&] { ops.soft_threshold(4, T(-1), x.get(), x.get()); },
                           ErrorCode::kInvalidArgument, {"tau", ">= 0"}));
  EXPECT_TRUE(throws_error([&] { ops.soft_threshold(4, nan, x.get(), x.get()); },
                           ErrorCode::kInvalidArgument, {"tau"}));
  EXPECT_TRUE(throws_error([&] { ops.soft_threshold_stacked(2, 2, inf, x.get(), x.get()); },
                           ErrorCode::kInvalidArgument, {"tau", "finite"}));
  EXPECT_TRUE(throws_error([&] { ops.soft_threshold_stacked(2, -1, T(1), x.get(), x.get()); },
                           ErrorCode::kInvalidArgument, {"k", ">= 0"}));
  for (const T d : {T(0), T(-1), nan})
    EXPECT_TRUE(throws_error([&] { ops.hyperbolic_weights(4, d, x.get(), w.get()); },
                             ErrorCode::kInvalidArgument, {"delta", "> 0"}));
  EXPECT_TRUE(throws_error([&] { ops.hyperbolic_sum_to(4, T(0), x.get(), w.get()); },
                           ErrorCode::kInvalidArgument, {"delta"}));
  EXPECT_TRUE(throws_error([&] { ops.hyperbolic_line_to(4, T(1), x.get(), nullptr, s.get(), s.get()); },
                           ErrorCode::kInvalidArgument, {"pointer v", "null"}));
  EXPECT_TRUE(throws_error([&] { ops.newton_step(s.get(), s.get() + 2, T(-1), s.get() + 3); },
                           ErrorCode::kInvalidArgument, {"beta", ">= 0"}));
  EXPECT_TRUE(throws_error([&] { ops.norm1_to(4, 1, x.get(), nullptr); },
                           ErrorCode::kInvalidArgument, {"result"}));
  EXPECT_TRUE(throws_error([&] { ops.mul_real(4, nullptr, x.get(), x.get()); },
                           ErrorCode::kInvalidArgument, {"pointer w"}));
}

}  // namespace
}  // namespace fieldft::test
