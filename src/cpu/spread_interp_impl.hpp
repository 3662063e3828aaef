// Templates behind spread_interp.hpp, instantiated per precision and dimension in small
// translation units (spread_interp_inst.cpp.in). The kernel width W is a compile-time constant
// so the per-row loops vectorise; a runtime switch picks W.
#pragma once

#include <omp.h>

#include <algorithm>
#include <cstring>

#include "cpu/spread_interp.hpp"
#include "fieldft/detail/fold.hpp"
#include "fieldft/detail/kernel.hpp"

namespace fieldft::cpu {

namespace impl {

template <class T, int W, int D>
struct PointKernel {
  alignas(64) T k[D][W];
  std::int64_t i0[D];
};

template <class T, int W, int D>
inline void load_point(const SpreadArgs<T>& a, std::int64_t p, PointKernel<T, W, D>& pk) {
  for (int d = 0; d < D; ++d) {
    pk.i0[d] = a.pts->i0[d][p];
    detail::eval_kernel_horner<W>(a.horner, a.grid->degree, a.pts->t[d][p], pk.k[d]);
  }
}

// Adds v·kx[0..W) to one x-row of the grid starting at cell i0 (wrapping periodically).
template <class T, int W>
inline void add_row(std::complex<T>* row, std::int64_t nfx, std::int64_t i0, const T* kx, T vr, T vi) {
  if (i0 >= 0 && i0 + W <= nfx) {
    T* g = reinterpret_cast<T*>(row + i0);
#pragma omp simd
    for (int i = 0; i < W; ++i) {
      g[2 * i] += vr * kx[i];
      g[2 * i + 1] += vi * kx[i];
    }
  } else {
    for (int i = 0; i < W; ++i) {
      T* g = reinterpret_cast<T*>(row + detail::wrap_index(i0 + i, nfx));
      g[0] += vr * kx[i];
      g[1] += vi * kx[i];
    }
  }
}

template <class T, int W>
inline void dot_row(const std::complex<T>* row, std::int64_t nfx, std::int64_t i0, const T* kx, T& re, T& im) {
  T sr = 0, si = 0;
  if (i0 >= 0 && i0 + W <= nfx) {
    const T* g = reinterpret_cast<const T*>(row + i0);
#pragma omp simd reduction(+ : sr, si)
    for (int i = 0; i < W; ++i) {
      sr += g[2 * i] * kx[i];
      si += g[2 * i + 1] * kx[i];
    }
  } else {
    for (int i = 0; i < W; ++i) {
      const T* g = reinterpret_cast<const T*>(row + detail::wrap_index(i0 + i, nfx));
      sr += g[0] * kx[i];
      si += g[1] * kx[i];
    }
  }
  re += sr;
  im += si;
}

template <class T, int W, int D>
void spread_w(const SpreadArgs<T>& a, const std::complex<T>* c, std::complex<T>* grid) {
  const Grid& g = *a.grid;
  const SortedPoints<T>& p = *a.pts;
  const std::int64_t nfx = g.nf[0], nfy = g.nf[1], nft = g.size();
  const std::int64_t nfs = g.nf[D - 1];
  const int nslab = p.num_slabs();
#pragma omp parallel num_threads(a.nthreads)
  {
    PointKernel<T, W, D> pk;
#pragma omp for schedule(dynamic, 1)
    for (int s = 0; s < nslab; ++s) {
      const std::int64_t lo = p.slab_lo[s], hi = p.slab_lo[s + 1];
      // This slab's planes start zeroed; only this thread touches them.
      const std::int64_t plane = nft / nfs;
      for (std::int64_t t = 0; t < a.nbatch; ++t)
        std::memset(static_cast<void*>(grid + t * nft + lo * plane), 0, sizeof(std::complex<T>) * (hi - lo) * plane);
      int nbrs[3] = {(s + nslab - 1) % nslab, s, (s + 1) % nslab};
      const int nn = nslab >= 3 ? 3 : nslab;  // fewer slabs than 3: each one is a neighbour once
      if (nslab < 3) {
        nbrs[0] = 0;
        nbrs[1] = 1;
      }
      for (int q = 0; q < nn; ++q) {
        const int ns = nbrs[q];
        for (std::int64_t j = p.slab_begin[ns]; j < p.slab_begin[ns + 1]; ++j) {
          const std::int64_t i0s = p.i0[D - 1][j];
          // The footprint [i0s, i0s+W) may wrap: intersect it with this slab shifted by -nf, 0, +nf.
          std::int64_t ka[3], kb[3];
          int nint = 0;
          for (std::int64_t sh : {-nfs, std::int64_t(0), nfs}) {
            const std::int64_t a0 = std::max(i0s, lo + sh) - i0s, b0 = std::min(i0s + W, hi + sh) - i0s;
            if (a0 < b0) {
              ka[nint] = a0;
              kb[nint] = b0;
              ++nint;
            }
          }
          if (nint == 0) continue;
          load_point(a, j, pk);
          const std::int64_t src = p.perm[j];
          for (std::int64_t t = 0; t < a.nbatch; ++t) {
            const std::complex<T> cv = c[t * a.c_stride + src];
            std::complex<T>* gt = grid + t * nft;
            for (int r = 0; r < nint; ++r) {
              for (std::int64_t k = ka[r]; k < kb[r]; ++k) {
                const std::int64_t ps = detail::wrap_index(i0s + k, nfs);
                const T ws = pk.k[D - 1][k];
                if constexpr (D == 1) {
                  T* gg = reinterpret_cast<T*>(gt + ps);
                  gg[0] += cv.real() * ws;
                  gg[1] += cv.imag() * ws;
                } else if constexpr (D == 2) {
                  add_row<T, W>(gt + ps * nfx, nfx, pk.i0[0], pk.k[0], cv.real() * ws, cv.imag() * ws);
                } else {
                  for (int ky = 0; ky < W; ++ky) {
                    const std::int64_t iy = detail::wrap_index(pk.i0[1] + ky, nfy);
                    const T wy = ws * pk.k[1][ky];
                    add_row<T, W>(gt + (ps * nfy + iy) * nfx, nfx, pk.i0[0], pk.k[0], cv.real() * wy, cv.imag() * wy);
                  }
                }
              }
            }
          }
        }
      }
    }
  }
}

template <class T, int W, int D>
void interp_w(const SpreadArgs<T>& a, const std::complex<T>* grid, std::complex<T>* c) {
  const Grid& g = *a.grid;
  const SortedPoints<T>& p = *a.pts;
  const std::int64_t nfx = g.nf[0], nfy = g.nf[1], nft = g.size();
#pragma omp parallel num_threads(a.nthreads)
  {
    PointKernel<T, W, D> pk;
#pragma omp for schedule(static, 1024)
    for (std::int64_t j = 0; j < p.m; ++j) {
      load_point(a, j, pk);
      const std::int64_t dst = p.perm[j];
      for (std::int64_t t = 0; t < a.nbatch; ++t) {
        const std::complex<T>* gt = grid + t * nft;
        T re = 0, im = 0;
        if constexpr (D == 1) {
          dot_row<T, W>(gt, nfx, pk.i0[0], pk.k[0], re, im);
        } else if constexpr (D == 2) {
          for (int ky = 0; ky < W; ++ky) {
            T rr = 0, ri = 0;
            dot_row<T, W>(gt + detail::wrap_index(pk.i0[1] + ky, nfy) * nfx, nfx, pk.i0[0], pk.k[0], rr, ri);
            re += rr * pk.k[1][ky];
            im += ri * pk.k[1][ky];
          }
        } else {
          const std::int64_t nfz = g.nf[2];
          for (int kz = 0; kz < W; ++kz) {
            const std::int64_t iz = detail::wrap_index(pk.i0[2] + kz, nfz);
            T pr = 0, pi = 0;
            for (int ky = 0; ky < W; ++ky) {
              T rr = 0, ri = 0;
              dot_row<T, W>(gt + (iz * nfy + detail::wrap_index(pk.i0[1] + ky, nfy)) * nfx, nfx, pk.i0[0], pk.k[0], rr, ri);
              pr += rr * pk.k[1][ky];
              pi += ri * pk.k[1][ky];
            }
            re += pr * pk.k[2][kz];
            im += pi * pk.k[2][kz];
          }
        }
        c[t * a.c_stride + dst] = {re, im};
      }
    }
  }
}

// Calls F<W>() for the runtime width w.
template <class F>
void dispatch_width(int w, F&& f) {
  switch (w) {
#define FIELDFT_WIDTH_CASE(W) \
  case W: f.template operator()<W>(); break;
    FIELDFT_WIDTH_CASE(2) FIELDFT_WIDTH_CASE(3) FIELDFT_WIDTH_CASE(4) FIELDFT_WIDTH_CASE(5)
    FIELDFT_WIDTH_CASE(6) FIELDFT_WIDTH_CASE(7) FIELDFT_WIDTH_CASE(8) FIELDFT_WIDTH_CASE(9)
    FIELDFT_WIDTH_CASE(10) FIELDFT_WIDTH_CASE(11) FIELDFT_WIDTH_CASE(12) FIELDFT_WIDTH_CASE(13)
    FIELDFT_WIDTH_CASE(14) FIELDFT_WIDTH_CASE(15) FIELDFT_WIDTH_CASE(16)
#undef FIELDFT_WIDTH_CASE
    default: break;
  }
}

}  // namespace impl

template <class T, int D>
void spread(const SpreadArgs<T>& a, const std::complex<T>* c, std::complex<T>* grid) {
  impl::dispatch_width(a.grid->width, [&]<int W>() { impl::spread_w<T, W, D>(a, c, grid); });
}

template <class T, int D>
void interp(const SpreadArgs<T>& a, const std::complex<T>* grid, std::complex<T>* c) {
  impl::dispatch_width(a.grid->width, [&]<int W>() { impl::interp_w<T, W, D>(a, grid, c); });
}

}  // namespace fieldft::cpu
