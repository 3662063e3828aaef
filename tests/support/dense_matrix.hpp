// Dense complex matrices in double for tests (header-only): column-major Mat with products,
// Hermitian transpose, a direct solver (Gaussian elimination with partial pivoting), a
// condition-number estimate and error measures.
#pragma once

#include <cmath>
#include <complex>
#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

#include "support/random_data.hpp"

namespace fieldft::test {

struct Mat {
  std::int64_t rows = 0, cols = 0;
  std::vector<cdouble> a;
  Mat() = default;
  Mat(std::int64_t r, std::int64_t c) : rows(r), cols(c), a(static_cast<std::size_t>(r * c)) {}
  cdouble& operator()(std::int64_t i, std::int64_t j) { return a[static_cast<std::size_t>(i + rows * j)]; }
  cdouble operator()(std::int64_t i, std::int64_t j) const { return a[static_cast<std::size_t>(i + rows * j)]; }
};

inline Mat random_mat(std::int64_t r, std::int64_t c, std::uint64_t seed) {
  Mat m(r, c);
  auto v = random_complex<double>(r * c, seed);
  m.a.assign(v.begin(), v.end());
  return m;
}

inline Mat herm(const Mat& x) {
  Mat m(x.cols, x.rows);
  for (std::int64_t j = 0; j < x.cols; ++j)
    for (std::int64_t i = 0; i < x.rows; ++i) m(j, i) = std::conj(x(i, j));
  return m;
}

inline Mat operator*(const Mat& x, const Mat& y) {
  Mat m(x.rows, y.cols);
  for (std::int64_t j = 0; j < y.cols; ++j)
    for (std::int64_t l = 0; l < x.cols; ++l)
      for (std::int64_t i = 0; i < x.rows; ++i) m(i, j) += x(i, l) * y(l, j);
  return m;
}

inline std::vector<cdouble> mul(const Mat& m, const std::vector<cdouble>& x) {
  std::vector<cdouble> y(static_cast<std::size_t>(m.rows));
  for (std::int64_t j = 0; j < m.cols; ++j)
    for (std::int64_t i = 0; i < m.rows; ++i) y[static_cast<std::size_t>(i)] += m(i, j) * x[static_cast<std::size_t>(j)];
  return y;
}

// diag(w) m (row scaling) and m + λI.
inline Mat scale_rows(const std::vector<double>& w, Mat m) {
  for (std::int64_t j = 0; j < m.cols; ++j)
    for (std::int64_t i = 0; i < m.rows; ++i) m(i, j) *= w[static_cast<std::size_t>(i)];
  return m;
}
inline Mat add_identity(Mat m, double lambda) {
  for (std::int64_t i = 0; i < m.rows; ++i) m(i, i) += lambda;
  return m;
}

// Gaussian elimination with partial pivoting: m x = b.
inline std::vector<cdouble> direct_solve(Mat m, std::vector<cdouble> b) {
  const std::int64_t n = m.rows;
  for (std::int64_t k = 0; k < n; ++k) {
    std::int64_t piv = k;
    for (std::int64_t i = k + 1; i < n; ++i)
      if (std::abs(m(i, k)) > std::abs(m(piv, k))) piv = i;
    for (std::int64_t j = 0; j < n; ++j) std::swap(m(k, j), m(piv, j));
    std::swap(b[static_cast<std::size_t>(k)], b[static_cast<std::size_t>(piv)]);
    for (std::int64_t i = k + 1; i < n; ++i) {
      const cdouble f = m(i, k) / m(k, k);
      for (std::int64_t j = k; j < n; ++j) m(i, j) -= f * m(k, j);
      b[static_cast<std::size_t>(i)] -= f * b[static_cast<std::size_t>(k)];
    }
  }
  std::vector<cdouble> x(static_cast<std::size_t>(n));
  for (std::int64_t i = n - 1; i >= 0; --i) {
    cdouble s = b[static_cast<std::size_t>(i)];
    for (std::int64_t j = i + 1; j < n; ++j) s -= m(i, j) * x[static_cast<std::size_t>(j)];
    x[static_cast<std::size_t>(i)] = s / m(i, i);
  }
  return x;
}

inline double vnorm(const std::vector<cdouble>& v) {
  double s = 0;
  for (auto z : v) s += std::norm(z);
  return std::sqrt(s);
}

// Condition number of a Hermitian positive definite matrix: power iterations on m and on m⁻¹.
inline double condition(const Mat& m) {
  const auto largest = [&](auto&& apply) {
    std::vector<cdouble> v = random_complex<double>(m.rows, 7);
    double lam = 0;
    for (int it = 0; it < 500; ++it) {
      auto w = apply(v);
      lam = vnorm(w) / vnorm(v);
      const double s = 1 / vnorm(w);
      for (auto& z : w) z *= s;
      v = w;
    }
    return lam;
  };
  const double hi = largest([&](const std::vector<cdouble>& v) { return mul(m, v); });
  const double inv = largest([&](const std::vector<cdouble>& v) { return direct_solve(m, v); });
  return hi * inv;
}

// ‖got − want‖ / ‖want‖ in double.
template <class T>
inline double rel_diff(const std::vector<std::complex<T>>& got, const std::vector<cdouble>& want) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    num += std::norm(cdouble(got[i]) - want[i]);
    den += std::norm(want[i]);
  }
  return std::sqrt(num / den);
}

template <class T>
constexpr double unit_roundoff() {
  return std::is_same_v<T, float> ? 0x1p-24 : 0x1p-53;
}

template <class T>
std::vector<std::complex<T>> narrow(const std::vector<cdouble>& v) {
  std::vector<std::complex<T>> r(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) r[i] = std::complex<T>(v[i]);
  return r;
}

}  // namespace fieldft::test
