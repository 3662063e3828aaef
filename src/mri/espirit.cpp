// ESPIRiT's host steps (src/mri/espirit.hpp; the math is in include/fieldft/mri/coil_maps.hpp).
// Uecker et al., Magn. Reson. Med. 71:990–1001 (2014).
#include "mri/espirit.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <string>

#include "fieldft/error.hpp"
#include "mri/hermitian_eig.hpp"

namespace fieldft::mri::detail {

namespace {

using cd = std::complex<double>;

constexpr int kMaxPowerIterations = 300;
constexpr double kPowerTolerance = 1e-10;  // ‖G s − λ s‖ relative to λ_1 = 1 (well below float)

std::int64_t ipow(std::int64_t b, int e) {
  std::int64_t r = 1;
  for (int i = 0; i < e; ++i) r *= b;
  return r;
}

// Multi-index (x fastest) of a flat index over `extent` points per axis.
std::array<std::int64_t, 3> unflatten(std::int64_t i, std::int64_t extent, int dim) {
  std::array<std::int64_t, 3> a{0, 0, 0};
  for (int d = 0; d < dim; ++d) {
    a[d] = i % extent;
    i /= extent;
  }
  return a;
}

}  // namespace

template <class T>
std::int64_t espirit_maps(const EspiritProblem& pr, const std::vector<cd>& calib, const std::complex<T>* start,
                          std::complex<T>* maps) {
  const int dim = pr.dim, ks = pr.kernel_size;
  const std::int64_t n = pr.calibration_size, coils = pr.coils;
  const std::int64_t positions_per_axis = n - ks + 1;
  const std::int64_t npos = ipow(positions_per_axis, dim), nq = ipow(ks, dim), ncol = coils * nq;
  const std::int64_t ncal = ipow(n, dim);

  // 2. The calibration matrix, column-major (position fastest): A[p, q + nq·c] = y_c(p + q).
  std::vector<cd> a(static_cast<std::size_t>(npos * ncol));
  for (std::int64_t c = 0; c < coils; ++c)
    for (std::int64_t q = 0; q < nq; ++q) {
      const auto qi = unflatten(q, ks, dim);
      cd* col = a.data() + npos * (q + nq * c);
      for (std::int64_t p = 0; p < npos; ++p) {
        const auto pi = unflatten(p, positions_per_axis, dim);
        std::int64_t idx = 0;
        for (int d = dim - 1; d >= 0; --d) idx = idx * n + pi[d] + qi[d];
        col[p] = calib[static_cast<std::size_t>(idx + ncal * c)];
      }
    }
  // Σ_p a_p a_pᴴ (rows a_p as column vectors): its leading eigenvectors span the rows themselves
  // (AᴴA's would span their complex conjugates).
  std::vector<cd> gram(static_cast<std::size_t>(ncol * ncol));
#pragma omp parallel for schedule(dynamic) num_threads(pr.nthreads)
  for (std::int64_t j = 0; j < ncol; ++j) {
    const cd* aj = a.data() + npos * j;
    for (std::int64_t i = j; i < ncol; ++i) {
      const cd* ai = a.data() + npos * i;
      cd s = 0;
      for (std::int64_t p = 0; p < npos; ++p) s += ai[p] * std::conj(aj[p]);
      gram[i + ncol * j] = s;
      gram[j + ncol * i] = std::conj(s);
    }
  }
  a.clear();
  a.shrink_to_fit();

  // 3. The signal subspace: eigenvalues σ², ascending.
  std::vector<double> lambda;
  hermitian_eig(ncol, gram, lambda);
  const double top = lambda.back();
  require(top > 0, ErrorCode::kInvalidArgument,
          "estimate_coil_maps (ESPIRiT): the calibration k-space is zero; expected data with signal "
          "in the calibration region");
  const double keep = pr.kernel_threshold * pr.kernel_threshold * top;
  std::int64_t rank = 0;
  while (rank < ncol && lambda[static_cast<std::size_t>(ncol - 1 - rank)] >= keep) ++rank;

  // 4./5. Per voxel: U_c,k(r) = |Q|^{-1/2} Σ_q v_k[c, q] e^{2πi q·r}, G = U Uᴴ, its leading
  // eigenvector by power iteration. Phase tables per axis: e^{2πi q r_d(i)}.
  std::array<std::vector<cd>, 3> phase;
  for (int d = 0; d < 3; ++d) {
    const std::int64_t nd = pr.grid[d];
    phase[d].assign(static_cast<std::size_t>(nd * ks), cd(1));
    if (d >= dim) continue;
    for (std::int64_t i = 0; i < nd; ++i) {
      const double r = static_cast<double>(i - nd / 2) / static_cast<double>(nd);
      for (int q = 0; q < ks; ++q) phase[d][i * ks + q] = std::polar(1.0, 2 * std::numbers::pi * q * r);
    }
  }
  const double qscale = 1 / std::sqrt(static_cast<double>(nq));
  const std::int64_t nvox = pr.grid[0] * pr.grid[1] * pr.grid[2];
  const int ref = std::max(pr.reference_coil, 0);

#pragma omp parallel num_threads(pr.nthreads)
  {
    std::vector<cd> eq(static_cast<std::size_t>(nq)), u(static_cast<std::size_t>(coils * rank)),
        g(static_cast<std::size_t>(coils * coils)), s(static_cast<std::size_t>(coils)), t(s);
#pragma omp for schedule(static)
    for (std::int64_t v = 0; v < nvox; ++v) {
      const std::int64_t ix = v % pr.grid[0], iy = (v / pr.grid[0]) % pr.grid[1], iz = v / (pr.grid[0] * pr.grid[1]);
      for (std::int64_t q = 0; q < nq; ++q) {
        const auto qi = unflatten(q, ks, dim);
        eq[q] = phase[0][ix * ks + qi[0]] * phase[1][iy * ks + qi[1]] * phase[2][iz * ks + qi[2]] * qscale;
      }
      for (std::int64_t k = 0; k < rank; ++k) {
        const cd* vk = gram.data() + ncol * (ncol - 1 - k);
        for (std::int64_t c = 0; c < coils; ++c) {
          cd sum = 0;
          for (std::int64_t q = 0; q < nq; ++q) sum += vk[q + nq * c] * eq[q];
          u[c + coils * k] = sum;
        }
      }
      for (std::int64_t j = 0; j < coils; ++j)
        for (std::int64_t i = 0; i < coils; ++i) {
          cd sum = 0;
          for (std::int64_t k = 0; k < rank; ++k) sum += u[i + coils * k] * std::conj(u[j + coils * k]);
          g[i + coils * j] = sum;
        }
      double norm2 = 0;
      for (std::int64_t c = 0; c < coils; ++c) {
        s[c] = cd(start[v + nvox * c]);
        norm2 += std::norm(s[c]);
      }
      if (!(norm2 > 0)) {
        std::fill(s.begin(), s.end(), cd(0));
        s[ref] = 1;
        norm2 = 1;
      }
      for (cd& x : s) x /= std::sqrt(norm2);
      double lam = 0;
      for (int it = 0; it < kMaxPowerIterations; ++it) {
        for (std::int64_t i = 0; i < coils; ++i) {
          cd sum = 0;
          for (std::int64_t j = 0; j < coils; ++j) sum += g[i + coils * j] * s[j];
          t[i] = sum;
        }
        cd rq = 0;
        double tn = 0;
        for (std::int64_t i = 0; i < coils; ++i) {
          rq += std::conj(s[i]) * t[i];
          tn += std::norm(t[i]);
        }
        lam = rq.real();
        double res = 0;
        for (std::int64_t i = 0; i < coils; ++i) res += std::norm(t[i] - lam * s[i]);
        if (!(tn > 0)) break;
        const double inv = 1 / std::sqrt(tn);
        for (std::int64_t i = 0; i < coils; ++i) s[i] = t[i] * inv;
        if (std::sqrt(res) <= kPowerTolerance) break;
      }
      const bool inside = lam >= pr.eigen_threshold;
      cd rot = 0;
      if (inside) {
        const double ar = std::abs(s[ref]);
        rot = ar > 0 ? std::conj(s[ref]) / ar : cd(1);
      }
      for (std::int64_t c = 0; c < coils; ++c) maps[v + nvox * c] = std::complex<T>(s[c] * rot);
    }
  }
  return rank;
}

template std::int64_t espirit_maps<float>(const EspiritProblem&, const std::vector<cd>&, const std::complex<float>*,
                                          std::complex<float>*);
template std::int64_t espirit_maps<double>(const EspiritProblem&, const std::vector<cd>&, const std::complex<double>*,
                                           std::complex<double>*);

}  // namespace fieldft::mri::detail
