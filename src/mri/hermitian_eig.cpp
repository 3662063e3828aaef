// The dense Hermitian eigensolver (src/mri/hermitian_eig.hpp).
#include "mri/hermitian_eig.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>

#include "fieldft/error.hpp"

namespace fieldft::mri::detail {

namespace {

using cd = std::complex<double>;

// Implicit QL with Wilkinson shifts on the symmetric tridiagonal matrix of diagonal d and
// off-diagonal e (e[i] couples i and i+1; e[n-1] is scratch), rotations applied to the columns
// of the real n × n matrix z (column-major).
void tridiagonal_ql(std::int64_t n, std::vector<double>& d, std::vector<double>& e, std::vector<double>& z) {
  constexpr int kMaxIterations = 60;  // per eigenvalue; convergence is cubic, ~2 are typical
  // An off-diagonal entry is negligible below eps·‖T‖ (absolute accuracy, as for any backward-
  // stable method): a test relative to the neighbouring diagonal alone never passes inside a
  // block of (numerically) zero eigenvalues, such as the null space of a low-rank Gram matrix.
  const double eps = std::numeric_limits<double>::epsilon();
  double tnorm = 0;
  for (std::int64_t i = 0; i < n; ++i) tnorm = std::max(tnorm, std::abs(d[i]) + std::abs(e[i]));
  const double negligible = eps * tnorm;
  for (std::int64_t l = 0; l < n; ++l) {
    for (int iter = 0;; ++iter) {
      std::int64_t m = l;
      for (; m < n - 1; ++m)
        if (std::abs(e[m]) <= negligible) break;
      if (m == l) break;
      require(iter < kMaxIterations, ErrorCode::kInternal,
              "hermitian_eig: the QL iteration did not converge for eigenvalue " + std::to_string(l));
      // Wilkinson shift from the leading 2 × 2 block.
      double g = (d[l + 1] - d[l]) / (2 * e[l]);
      double r = std::hypot(g, 1.0);
      g = d[m] - d[l] + e[l] / (g + std::copysign(r, g));
      double s = 1, c = 1, p = 0;
      std::int64_t i = m - 1;
      bool deflated = false;
      for (; i >= l; --i) {
        const double f = s * e[i], b = c * e[i];
        r = std::hypot(f, g);
        e[i + 1] = r;
        if (r == 0) {  // underflow: the matrix splits here; restart on the smaller block
          d[i + 1] -= p;
          e[m] = 0;
          deflated = true;
          break;
        }
        s = f / r;
        c = g / r;
        g = d[i + 1] - p;
        r = (d[i] - g) * s + 2 * c * b;
        p = s * r;
        d[i + 1] = g + p;
        g = c * r - b;
        double* zi = z.data() + i * n;
        double* zi1 = zi + n;
        for (std::int64_t k = 0; k < n; ++k) {
          const double t = zi1[k];
          zi1[k] = s * zi[k] + c * t;
          zi[k] = c * zi[k] - s * t;
        }
      }
      if (deflated) continue;
      d[l] -= p;
      e[l] = g;
      e[m] = 0;
    }
  }
}

}  // namespace

void hermitian_eig(std::int64_t n, std::vector<cd>& a, std::vector<double>& values) {
  require(n >= 0 && static_cast<std::int64_t>(a.size()) == n * n, ErrorCode::kInternal,
          "hermitian_eig: the matrix is not n × n");
  for (const cd& v : a)
    require(std::isfinite(v.real()) && std::isfinite(v.imag()), ErrorCode::kNonFinite,
            "hermitian_eig: the matrix holds NaN or Inf; expected finite values");
  values.assign(static_cast<std::size_t>(n), 0.0);
  if (n == 0) return;
  auto at = [&](std::int64_t i, std::int64_t j) -> cd& { return a[i + n * j]; };

  // Householder reduction: reflector k (vector stored in refl[k], entries k+1 … n−1) zeroes
  // column k below its subdiagonal; the trailing block B becomes P B P = B − v wᴴ − w vᴴ with
  // p = 2 B v, w = p − (vᴴp) v (vᴴp is real because B is Hermitian).
  std::vector<std::vector<cd>> refl(static_cast<std::size_t>(std::max<std::int64_t>(n - 2, 0)));
  std::vector<cd> p(static_cast<std::size_t>(n));
  for (std::int64_t k = 0; k + 2 < n; ++k) {
    const std::int64_t len = n - k - 1;
    double xnorm2 = 0;
    for (std::int64_t i = k + 1; i < n; ++i) xnorm2 += std::norm(at(i, k));
    if (xnorm2 == 0) continue;  // already tridiagonal in this column: no reflector
    const double xnorm = std::sqrt(xnorm2);
    const cd x0 = at(k + 1, k);
    const cd phase = std::abs(x0) > 0 ? x0 / std::abs(x0) : cd(1);
    const cd alpha = -phase * xnorm;  // opposite sign to x0: no cancellation in v[0]
    std::vector<cd>& v = refl[k];
    v.assign(static_cast<std::size_t>(len), cd(0));
    for (std::int64_t i = 0; i < len; ++i) v[i] = at(k + 1 + i, k);
    v[0] -= alpha;
    double vnorm2 = 0;
    for (const cd& vi : v) vnorm2 += std::norm(vi);
    const double inv = 1 / std::sqrt(vnorm2);
    for (cd& vi : v) vi *= inv;
    // p = 2 B v, then w = p − (vᴴp) v in p.
    cd vp = 0;
    for (std::int64_t i = 0; i < len; ++i) {
      cd s = 0;
      for (std::int64_t j = 0; j < len; ++j) s += at(k + 1 + i, k + 1 + j) * v[j];
      p[i] = 2.0 * s;
    }
    for (std::int64_t i = 0; i < len; ++i) vp += std::conj(v[i]) * p[i];
    for (std::int64_t i = 0; i < len; ++i) p[i] -= vp.real() * v[i];
    for (std::int64_t j = 0; j < len; ++j) {
      const cd cvj = std::conj(v[j]), cwj = std::conj(p[j]);
      for (std::int64_t i = 0; i < len; ++i) at(k + 1 + i, k + 1 + j) -= v[i] * cwj + p[i] * cvj;
    }
    at(k + 1, k) = alpha;
    at(k, k + 1) = std::conj(alpha);
    for (std::int64_t i = k + 2; i < n; ++i) at(i, k) = at(k, i) = 0;
  }

  // T = D T' Dᴴ with T' real: δ_0 = 1, δ_{i+1} = δ_i · e_i / |e_i|, T'_{i+1,i} = |e_i|.
  std::vector<double> d(static_cast<std::size_t>(n)), e(static_cast<std::size_t>(n), 0.0);
  std::vector<cd> delta(static_cast<std::size_t>(n), cd(1));
  for (std::int64_t i = 0; i < n; ++i) d[i] = at(i, i).real();
  for (std::int64_t i = 0; i + 1 < n; ++i) {
    const cd ei = at(i + 1, i);
    e[i] = std::abs(ei);
    delta[i + 1] = e[i] > 0 ? delta[i] * ei / e[i] : delta[i];
  }
  std::vector<double> z(static_cast<std::size_t>(n * n), 0.0);
  for (std::int64_t i = 0; i < n; ++i) z[i + n * i] = 1;
  tridiagonal_ql(n, d, e, z);

  // Eigenvectors of H: Q D z, Q = P_0 P_1 ⋯; sorted by eigenvalue.
  std::vector<std::int64_t> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::int64_t x, std::int64_t y) { return d[x] < d[y]; });
  for (std::int64_t j = 0; j < n; ++j) {
    const std::int64_t src = order[j];
    values[j] = d[src];
    for (std::int64_t i = 0; i < n; ++i) at(i, j) = delta[i] * z[i + n * src];
  }
  for (std::int64_t k = n - 3; k >= 0; --k) {
    const std::vector<cd>& v = refl[k];
    if (v.empty()) continue;
    const std::int64_t len = n - k - 1;
    for (std::int64_t j = 0; j < n; ++j) {
      cd s = 0;
      for (std::int64_t i = 0; i < len; ++i) s += std::conj(v[i]) * at(k + 1 + i, j);
      s *= 2.0;
      for (std::int64_t i = 0; i < len; ++i) at(k + 1 + i, j) -= v[i] * s;
    }
  }
}

}  // namespace fieldft::mri::detail
