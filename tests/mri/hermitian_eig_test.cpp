// The MRI layer's dense Hermitian eigensolver (src/mri/hermitian_eig.hpp) on random Hermitian
// matrices: H V = V Λ, VᴴV = I, eigenvalues ascending, and known spectra.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <vector>

#include "mri/hermitian_eig.hpp"
#include "support/random_data.hpp"

namespace fieldft::test {
namespace {

using cd = std::complex<double>;

std::vector<cd> random_hermitian(std::int64_t n, std::uint64_t seed) {
  const auto r = random_complex<double>(n * n, seed);
  std::vector<cd> h(static_cast<std::size_t>(n * n));
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < n; ++i) h[i + n * j] = r[i + n * j] + std::conj(r[j + n * i]);
  return h;
}

// Residuals relative to ‖H‖_F: backward-stable Householder + QL gives ~n·1e-16; 1e-12 leaves a
// margin of ~100× at n = 200 and would catch any wrong sign, conjugate or index (errors of O(1)).
TEST(HermitianEig, DecomposesRandomMatrices) {
  for (std::int64_t n : {1, 2, 3, 7, 64, 200}) {
    SCOPED_TRACE(n);
    const auto h = random_hermitian(n, 400 + static_cast<std::uint64_t>(n));
    auto v = h;
    std::vector<double> lambda;
    mri::detail::hermitian_eig(n, v, lambda);
    double hnorm = 0;
    for (const cd& x : h) hnorm += std::norm(x);
    hnorm = std::sqrt(hnorm);
    double res = 0, orth = 0;
    for (std::int64_t j = 0; j < n; ++j) {
      for (std::int64_t i = 0; i < n; ++i) {
        cd hv = 0, vv = 0;
        for (std::int64_t k = 0; k < n; ++k) {
          hv += h[i + n * k] * v[k + n * j];
          vv += std::conj(v[k + n * i]) * v[k + n * j];
        }
        res = std::max(res, std::abs(hv - lambda[j] * v[i + n * j]));
        orth = std::max(orth, std::abs(vv - (i == j ? 1.0 : 0.0)));
      }
    }
    EXPECT_LE(res / hnorm, 1e-12);
    EXPECT_LE(orth, 1e-12);
    EXPECT_TRUE(std::is_sorted(lambda.begin(), lambda.end()));
  }
}

// A known spectrum with repeated eigenvalues and an exactly diagonal (already tridiagonal) input.
TEST(HermitianEig, KnownSpectra) {
  const std::int64_t n = 6;
  std::vector<cd> d(n * n, cd(0));
  const double want[n] = {3, -1, 3, 0, 2, -1};
  for (std::int64_t i = 0; i < n; ++i) d[i + n * i] = want[i];
  std::vector<double> lambda;
  mri::detail::hermitian_eig(n, d, lambda);
  const std::vector<double> sorted = {-1, -1, 0, 2, 3, 3};
  for (std::int64_t i = 0; i < n; ++i) EXPECT_NEAR(lambda[i], sorted[i], 1e-14);
  // A rank-one projector u uᴴ: eigenvalues 0 (n − 1 times) and 1, eigenvector ∝ u.
  std::vector<cd> u = random_complex<double>(n, 410);
  double un = 0;
  for (const cd& x : u) un += std::norm(x);
  for (cd& x : u) x /= std::sqrt(un);
  std::vector<cd> p(n * n);
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < n; ++i) p[i + n * j] = u[i] * std::conj(u[j]);
  mri::detail::hermitian_eig(n, p, lambda);
  EXPECT_NEAR(lambda[n - 1], 1.0, 1e-14);
  cd overlap = 0;
  for (std::int64_t i = 0; i < n; ++i) overlap += std::conj(u[i]) * p[i + n * (n - 1)];
  EXPECT_NEAR(std::abs(overlap), 1.0, 1e-13);
}

// A large rank-one matrix (all ones, n = 300): n − 1 eigenvalues are zero up to rounding, the
// degenerate block on which a purely local deflation test never converges.
TEST(HermitianEig, LowRankMatrix) {
  const std::int64_t n = 300;
  std::vector<cd> a(static_cast<std::size_t>(n * n), cd(1));
  std::vector<double> lambda;
  mri::detail::hermitian_eig(n, a, lambda);
  EXPECT_NEAR(lambda[n - 1], static_cast<double>(n), 1e-10);
  for (std::int64_t i = 0; i + 1 < n; ++i) EXPECT_NEAR(lambda[i], 0.0, 1e-10);
  for (std::int64_t i = 0; i < n; ++i) EXPECT_NEAR(std::abs(a[i + n * (n - 1)]), 1 / std::sqrt(double(n)), 1e-12);
}

}  // namespace
}  // namespace fieldft::test
