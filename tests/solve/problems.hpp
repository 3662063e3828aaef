// Small problems shared by the solver tests (compiled per backend): a weighted least-squares
// problem with a dense penalty operator, an underdetermined problem with a sparse truth, host
// evaluation of the objectives, and a runner that moves vectors to the test context.
#pragma once

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "fieldft/solve/cg.hpp"
#include "support/battery.hpp"
#include "support/context_vector.hpp"
#include "support/dense_operator.hpp"

namespace fieldft::test {

// A 20x8 full-rank A, inconsistent y, weights in [0.05, 2.05), and a 12x8 dense penalty R.
struct PenalisedProblem {
  Mat a = random_mat(20, 8, 101);
  Mat r = random_mat(12, 8, 111);
  std::vector<cdouble> y = random_complex<double>(20, 102);
  std::vector<double> w = [] {
    std::vector<double> w(20);
    const auto v = random_complex<double>(20, 103);
    for (std::size_t i = 0; i < w.size(); ++i) w[i] = 1.05 + v[i].real();
    return w;
  }();
};

// Underdetermined: 40 samples of a 100-vector with 6 nonzeros (magnitudes 1 to 2, random phases)
// through a random A with columns of norm ~1. Noiseless data y = A·truth.
struct SparseProblem {
  static constexpr std::int64_t kRows = 40, kCols = 100;
  Mat a = [] {
    Mat m = random_mat(kRows, kCols, 201);
    const double s = 1 / std::sqrt(kRows * 2.0 / 3.0);  // uniform [-1,1] parts: E|a|² = 2/3
    for (auto& e : m.a) e *= s;
    return m;
  }();
  std::vector<cdouble> truth = [] {
    std::vector<cdouble> t(kCols);
    const std::int64_t at[] = {3, 17, 42, 58, 71, 96};
    const auto ph = random_complex<double>(6, 202);
    for (int i = 0; i < 6; ++i)
      t[static_cast<std::size_t>(at[i])] = std::polar(1.0 + i / 5.0, 3.0 * ph[static_cast<std::size_t>(i)].real());
    return t;
  }();
  std::vector<cdouble> y = mul(a, truth);
};

inline std::vector<cdouble> widen_d(const std::vector<std::complex<float>>& v) { return {v.begin(), v.end()}; }
inline std::vector<cdouble> widen_d(const std::vector<std::complex<double>>& v) { return v; }

// ½ Σ w_i |(A x − y)_i|² (w empty: W = I).
inline double data_term(const Mat& a, const std::vector<cdouble>& y, const std::vector<double>& w,
                        const std::vector<cdouble>& x) {
  const auto ax = mul(a, x);
  double f = 0;
  for (std::size_t i = 0; i < ax.size(); ++i) f += (w.empty() ? 1.0 : w[i]) * std::norm(ax[i] - y[i]);
  return 0.5 * f;
}

inline double norm1(const std::vector<cdouble>& v) {
  double s = 0;
  for (const auto& z : v) s += std::abs(z);
  return s;
}

// soft(v, τ) in double.
inline std::vector<cdouble> soft(const std::vector<cdouble>& v, double tau) {
  std::vector<cdouble> r(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    const double m = std::abs(v[i]);
    r[i] = m > tau ? v[i] * (1 - tau / m) : cdouble(0);
  }
  return r;
}

// Complex weights in context memory from real ones.
template <class T>
std::vector<std::complex<T>> complex_weights(const std::vector<double>& w) {
  std::vector<std::complex<T>> r(w.size());
  for (std::size_t i = 0; i < w.size(); ++i) r[i] = std::complex<T>(static_cast<T>(w[i]));
  return r;
}

// The sparse problem in the test context: A as a Dense operator, y uploaded, x zeroed.
template <class T>
struct SparseSetup {
  SparseProblem p;
  Context c = test_context();
  Dense<T> a{p.a, c};
  ContextVector<T> y{c, SparseProblem::kRows}, x{c, SparseProblem::kCols};
  SparseSetup() {
    y.upload(narrow<T>(p.y));
    zero_x();
  }
  void zero_x() { x.upload(std::vector<std::complex<T>>(SparseProblem::kCols)); }
};

// A NaN weight (w[at], w in context c) makes call(w) throw: kInvalidArgument on the host, where
// weights are checked up front; kNonFinite on a device, where they surface as a non-finite
// reported objective (call must ask for reports: a tolerance or a callback).
template <class T, class Call>
::testing::AssertionResult rejects_nan_weight(ContextVector<T>& w, std::int64_t at, Call&& call) {
  std::vector<std::complex<T>> bad(static_cast<std::size_t>(w.size()), std::complex<T>(1));
  bad[static_cast<std::size_t>(at)] = std::complex<T>(std::numeric_limits<T>::quiet_NaN());
  w.upload(bad);
  return throws_error([&] { call(w.get()); },
                      w.context().is_host() ? ErrorCode::kInvalidArgument : ErrorCode::kNonFinite, {"finite"});
}

// The relative error of plain CG from x0 = 0 on underdetermined data y (in a's context): the
// minimum-norm solution, the baseline a sparsity prior must beat. CG reaches it within rank(A)
// steps and is stopped there by a tolerance (iterating on past convergence with a singular AᴴA
// only amplifies rounding).
template <class T>
double plain_cg_error(op::LinearOperator<T>& a, const std::complex<T>* y,
                      const std::vector<cdouble>& truth) {
  ContextVector<T> x(a.context(), a.domain_size());
  x.upload(std::vector<std::complex<T>>(static_cast<std::size_t>(a.domain_size())));
  solve::CgOptions o;
  o.max_iterations = 100;
  o.tolerance = std::is_same_v<T, float> ? 1e-4 : 1e-10;
  solve::cg<T>(a, y, x.get(), nullptr, o);
  return rel_diff(x.download(), truth);
}

}  // namespace fieldft::test
