// Templates behind spread_interp.hpp, instantiated per precision and dimension in small
// translation units (spread_interp_inst.cpp.in). The kernel width W is a compile-time constant
// so the per-row loops vectorise; a runtime switch picks W.
//
// Row operations work on interleaved (re, im) reals: the x kernel comes out of its doubled
// Horner table already interleaved, is combined with the complex strength once per point, and
// each grid row is then one broadcast-multiply-add of a short contiguous vector. The padded tail
// of that vector is zero and is used only where the row has room for it.
#pragma once

#include <omp.h>

#include <algorithm>
#include <cstring>

#include "core/dispatch.hpp"
#include "cpu/spread_interp.hpp"
#include "fieldft/detail/fold.hpp"
#include "fieldft/detail/kernel.hpp"

namespace fieldft::cpu {

namespace impl {

template <class T, int W, int D>
struct PointKernel {
  static constexpr int kX = x_lanes<T>(W), kYZ = yz_lanes<T>(W);
  alignas(64) T x[kX];         // x weights, each twice: x[2i] = x[2i+1] = ψ(cell i)
  alignas(64) T yz[2][kYZ];    // y and z weights
  std::int64_t i0[D];
};

template <class T, int W, int D>
inline void load_point(const SpreadArgs<T>& a, std::int64_t p, PointKernel<T, W, D>& pk) {
  constexpr int kX = PointKernel<T, W, D>::kX, kYZ = PointKernel<T, W, D>::kYZ;
  if (a.weights != nullptr) {  // Method::kPrecomputed (precompute_weights)
    const T* wp = a.weights + p * D * kYZ;
    pk.i0[0] = a.pts->i0[0][p];
    FIELDFT_SIMD
    for (int i = 0; i < kX; ++i) pk.x[i] = wp[i >> 1];  // kX <= 2 kYZ
    for (int d = 1; d < D; ++d) {
      pk.i0[d] = a.pts->i0[d][p];
      std::memcpy(pk.yz[d - 1], wp + d * kYZ, sizeof(T) * kYZ);
    }
    return;
  }
  const int deg = a.grid->degree;
  pk.i0[0] = a.pts->i0[0][p];
  detail::eval_kernel_horner<PointKernel<T, W, D>::kX>(a.horner_x, deg, a.pts->t[0][p], pk.x);
  for (int d = 1; d < D; ++d) {
    pk.i0[d] = a.pts->i0[d][p];
    detail::eval_kernel_horner<PointKernel<T, W, D>::kYZ>(a.horner_yz, deg, a.pts->t[d][p], pk.yz[d - 1]);
  }
}

// Whether a point's x footprint, padded to whole vectors, lies inside the row (no wrapping).
template <class T, int W>
inline bool x_inside(std::int64_t i0, std::int64_t nfx) {
  return i0 >= 0 && i0 + x_lanes<T>(W) / 2 <= nfx;
}

// row[i0 + i] += wy · (cx[2i], cx[2i+1]) for i < W, cells wrapped periodically unless `inside`.
template <class T, int W>
inline void add_row(std::complex<T>* row, std::int64_t nfx, std::int64_t i0, bool inside, const T* cx, T wy) {
  constexpr int kX = x_lanes<T>(W);
  if (inside) {
    T* g = reinterpret_cast<T*>(row + i0);
    FIELDFT_SIMD
    for (int i = 0; i < kX; ++i) g[i] += wy * cx[i];
  } else {
    for (int i = 0; i < W; ++i) {
      T* g = reinterpret_cast<T*>(row + detail::wrap_index(i0 + i, nfx));
      g[0] += wy * cx[2 * i];
      g[1] += wy * cx[2 * i + 1];
    }
  }
}

// acc[2i], acc[2i+1] += wy · row[i0 + i] for i < W; the x kernel is applied once per point later.
template <class T, int W>
inline void accumulate_row(const std::complex<T>* row, std::int64_t nfx, std::int64_t i0, bool inside, T wy, T* acc) {
  constexpr int kX = x_lanes<T>(W);
  if (inside) {
    const T* g = reinterpret_cast<const T*>(row + i0);
    FIELDFT_SIMD
    for (int i = 0; i < kX; ++i) acc[i] += wy * g[i];
  } else {
    for (int i = 0; i < W; ++i) {
      const T* g = reinterpret_cast<const T*>(row + detail::wrap_index(i0 + i, nfx));
      acc[2 * i] += wy * g[0];
      acc[2 * i + 1] += wy * g[1];
    }
  }
}

// Σ_i x-weight(i) · (acc[2i], acc[2i+1]): interpolation's last step, the x kernel applied once
// to the rows accumulated with the y and z weights.
template <class T, int W, int D>
inline std::complex<T> apply_x_kernel(const PointKernel<T, W, D>& pk, const T* acc) {
  T re = 0, im = 0;
#pragma omp simd reduction(+ : re, im)
  for (int i = 0; i < x_lanes<T>(W) / 2; ++i) {
    re += acc[2 * i] * pk.x[2 * i];
    im += acc[2 * i + 1] * pk.x[2 * i + 1];
  }
  return {re, im};
}

// The ranges of the slowest dimension's cells [i0s + ka, i0s + kb) that fall in the planes
// [lo, hi), trying the footprint unwrapped and shifted by one period either way; cell i0s + k of
// range r is plane i0s + k - shift[r], already inside [lo, hi).
struct SlabOverlap {
  std::int64_t ka[3], kb[3], shift[3];
  int n = 0;
};
template <int W>
inline SlabOverlap slab_overlap(std::int64_t i0s, std::int64_t lo, std::int64_t hi, std::int64_t nfs) {
  SlabOverlap o;
  for (std::int64_t sh : {-nfs, std::int64_t(0), nfs}) {
    const std::int64_t a0 = std::max(i0s, lo + sh) - i0s, b0 = std::min(i0s + W, hi + sh) - i0s;
    if (a0 < b0) {
      o.ka[o.n] = a0;
      o.kb[o.n] = b0;
      o.shift[o.n] = sh;
      ++o.n;
    }
  }
  return o;
}

template <class T, int W, int D>
void spread_point(const SpreadArgs<T>& a, const PointKernel<T, W, D>& pk, const SlabOverlap& ov, std::int64_t i0s,
                  const std::complex<T>* c, std::int64_t src, std::complex<T>* grid) {
  const Grid& g = *a.grid;
  const std::int64_t nfx = g.nf[0], nfy = g.nf[1], nft = g.size();
  constexpr int kX = x_lanes<T>(W);
  const bool xin = x_inside<T, W>(pk.i0[0], nfx);
  for (std::int64_t t = 0; t < a.nbatch; ++t) {
    const std::complex<T> cv = c[t * a.c_stride + src];
    std::complex<T>* gt = grid + t * nft;
    if constexpr (D == 1) {
      for (int r = 0; r < ov.n; ++r)
        for (std::int64_t k = ov.ka[r]; k < ov.kb[r]; ++k) gt[i0s + k - ov.shift[r]] += cv * pk.x[2 * k];
    } else {
      alignas(64) T cx[kX];
      const T ri[2] = {cv.real(), cv.imag()};
      FIELDFT_SIMD
      for (int i = 0; i < kX; ++i) cx[i] = pk.x[i] * ri[i & 1];
      for (int r = 0; r < ov.n; ++r) {
        for (std::int64_t k = ov.ka[r]; k < ov.kb[r]; ++k) {
          const std::int64_t ps = i0s + k - ov.shift[r];
          const T ws = pk.yz[D - 2][k];
          if constexpr (D == 2) {
            add_row<T, W>(gt + ps * nfx, nfx, pk.i0[0], xin, cx, ws);
          } else {
            std::complex<T>* plane = gt + ps * nfy * nfx;
            const std::int64_t iy0 = pk.i0[1];
            if (iy0 >= 0 && iy0 + W <= nfy) {
              std::complex<T>* row = plane + iy0 * nfx;
              for (int ky = 0; ky < W; ++ky, row += nfx) add_row<T, W>(row, nfx, pk.i0[0], xin, cx, ws * pk.yz[0][ky]);
            } else {
              for (int ky = 0; ky < W; ++ky)
                add_row<T, W>(plane + detail::wrap_index(iy0 + ky, nfy) * nfx, nfx, pk.i0[0], xin, cx, ws * pk.yz[0][ky]);
            }
          }
        }
      }
    }
  }
}

template <class T, int W, int D>
void spread_w(const SpreadArgs<T>& a, const std::complex<T>* c, std::complex<T>* grid) {
  using SP = SortedPoints<T>;
  const Grid& g = *a.grid;
  const SP& p = *a.pts;
  const std::int64_t nft = g.size(), nfs = g.nf[D - 1], plane = nft / nfs;
  const int nslab = p.num_slabs();
#pragma omp parallel num_threads(a.nthreads)
  {
    PointKernel<T, W, D> pk;
#pragma omp for schedule(dynamic, 1)
    for (int s = 0; s < nslab; ++s) {
      const std::int64_t lo = p.slab_lo[s], hi = p.slab_lo[s + 1];
      // Only this thread touches this slab's planes: zero them, then add every point that reaches them.
      for (std::int64_t t = 0; t < a.nbatch; ++t)
        std::memset(static_cast<void*>(grid + t * nft + lo * plane), 0, sizeof(std::complex<T>) * (hi - lo) * plane);
      // (slab, first class, last class) to scan: all of this slab, the high edge of the slab below
      // and the low edge of the slab above (with one or two slabs these coincide or vanish).
      int scan[3][3];
      int nscan = 0;
      scan[nscan][0] = s, scan[nscan][1] = SP::kLowEdge, scan[nscan++][2] = SP::kHighEdge;
      const int below = (s + nslab - 1) % nslab, above = (s + 1) % nslab;
      if (below != s) scan[nscan][0] = below, scan[nscan][1] = SP::kHighEdge, scan[nscan++][2] = SP::kHighEdge;
      if (above != s) {
        if (above == below) scan[nscan - 1][1] = SP::kLowEdge;  // two slabs: the other one's both edges
        else scan[nscan][0] = above, scan[nscan][1] = SP::kLowEdge, scan[nscan++][2] = SP::kLowEdge;
      }
      for (int q = 0; q < nscan; ++q) {
        const std::int64_t j0 = p.class_begin[3 * scan[q][0] + scan[q][1]];
        const std::int64_t j1 = p.class_begin[3 * scan[q][0] + scan[q][2] + 1];
        for (std::int64_t j = j0; j < j1; ++j) {
          const std::int64_t i0s = p.i0[D - 1][j];
          const SlabOverlap ov = slab_overlap<W>(i0s, lo, hi, nfs);
          if (ov.n == 0) continue;
          load_point(a, j, pk);
          spread_point(a, pk, ov, i0s, c, j, grid);
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
  constexpr int kX = x_lanes<T>(W);
#pragma omp parallel num_threads(a.nthreads)
  {
    PointKernel<T, W, D> pk;
#pragma omp for schedule(static, 1024)
    for (std::int64_t j = 0; j < p.m; ++j) {
      load_point(a, j, pk);
      const std::int64_t dst = j;
      const bool xin = x_inside<T, W>(pk.i0[0], nfx);
      // Wrapped row and plane offsets once per point, not once per row of the footprint.
      std::int64_t row_off[W], plane_off[W];
      if constexpr (D >= 2)
        for (int k = 0; k < W; ++k) row_off[k] = detail::wrap_index(pk.i0[1] + k, nfy) * nfx;
      if constexpr (D == 3)
        for (int k = 0; k < W; ++k) plane_off[k] = detail::wrap_index(pk.i0[2] + k, g.nf[2]) * nfy * nfx;
      for (std::int64_t t = 0; t < a.nbatch; ++t) {
        const std::complex<T>* gt = grid + t * nft;
        alignas(64) T acc[kX] = {};
        if constexpr (D == 1) {
          accumulate_row<T, W>(gt, nfx, pk.i0[0], xin, T(1), acc);
        } else if constexpr (D == 2) {
          for (int ky = 0; ky < W; ++ky)
            accumulate_row<T, W>(gt + row_off[ky], nfx, pk.i0[0], xin, pk.yz[0][ky], acc);
        } else {
          for (int kz = 0; kz < W; ++kz) {
            const std::complex<T>* pl = gt + plane_off[kz];
            const T wz = pk.yz[1][kz];
            for (int ky = 0; ky < W; ++ky)
              accumulate_row<T, W>(pl + row_off[ky], nfx, pk.i0[0], xin, wz * pk.yz[0][ky], acc);
          }
        }
        c[t * a.c_stride + dst] = apply_x_kernel(pk, acc);
      }
    }
  }
}

// ---- Subgrid spreading and blocked interpolation (D = 2, 3) ---------------------------------
//
// The subproblem method of Barnett, Magland & af Klinteberg (SIAM J. Sci. Comput. 41(5), 2019,
// §3.2): the points of one tile (an x bin, and in 3D a y bin, of one slab) are spread into a small
// private, contiguous subgrid, which is then added into the fine grid with the periodic wrap.
// The footprints' rows then lie a few hundred bytes apart instead of a grid row or plane apart,
// so they stay in L1 (in 3D the direct writes strode by whole planes and thrashed its sets).
// Races are avoided as before, without atomics: each thread owns whole slabs; the subgrid spans
// only the owned slab in the slowest dimension, and the points of the neighbouring slabs' edge
// classes add the part of their footprint that falls in it. Interpolation copies the fine grid
// around one tile (with the halo of the footprints, wrapped) into a subgrid and reads only that.

// A tile's subgrid: cell (rx, ry, rz) is fine-grid cell (ox + rx, oy + ry, oz + rz), unwrapped.
// Cells of a tile's points start at i0 ∈ [x0 − ⌊W/2⌋, x0 + bx − ⌊W/2⌋] (i0 = ⌈u − W/2⌉ for u in
// the tile's cells [x0, x0 + bx)); one more cell each side absorbs a rounding difference between
// the bin and the first cell. Rows hold the padded x vector (x_lanes<T>(W)/2 cells) from any start.
struct SubgridShape {
  std::int64_t sx = 1, sy = 1, sz = 1;  // cells per row, rows per plane, planes
  std::int64_t size() const { return sx * sy * sz; }
};
template <int W>
constexpr std::int64_t sub_margin() { return W / 2 + 1; }
template <class T, int W>
inline std::int64_t sub_row_cells(std::int64_t bx) { return bx + x_lanes<T>(W) / 2 + 2; }
template <int W>
inline std::int64_t sub_rows(std::int64_t by) { return by + W + 2; }  // footprints of by cells' points

// i modulo n into [0, n), for any i (subgrids may exceed a small grid by more than a period).
inline std::int64_t mod_index(std::int64_t i, std::int64_t n) {
  const std::int64_t r = i % n;
  return r < 0 ? r + n : r;
}

// Grid row cells [x, x + len) (periodic) += sub[0, len); or, with kLoad, sub[0, len) = those cells.
template <class T, bool kLoad>
inline void row_transfer(std::complex<T>* grow, std::int64_t nfx, std::int64_t x, std::int64_t len,
                         std::complex<T>* sub) {
  if (x >= 0 && x + len <= nfx) {
    T* g = reinterpret_cast<T*>(grow + x);
    T* s = reinterpret_cast<T*>(sub);
    if constexpr (kLoad) {
      std::memcpy(static_cast<void*>(s), g, sizeof(T) * 2 * len);
    } else {
      FIELDFT_SIMD
      for (std::int64_t i = 0; i < 2 * len; ++i) g[i] += s[i];
    }
  } else {
    for (std::int64_t i = 0; i < len; ++i) {
      std::complex<T>& gc = grow[mod_index(x + i, nfx)];
      if constexpr (kLoad) sub[i] = gc;
      else gc += sub[i];
    }
  }
}

// The bin keys of tile (ty, tx) of slab s, one per class, and whether all three bins are empty.
struct TileBins {
  std::int64_t k[3];
  bool empty = true;
};
template <class T>
inline TileBins tile_bins(const SortedPoints<T>& p, int s, std::int64_t ty, std::int64_t tx) {
  TileBins b;
  for (int cl = 0; cl < 3; ++cl) {
    b.k[cl] = p.bin_key(3 * s + cl, ty, tx);
    b.empty = b.empty && p.bin_begin[b.k[cl] + 1] == p.bin_begin[b.k[cl]];
  }
  return b;
}

// Spreads one point's whole footprint into the subgrids of the batch (subgrid t at
// sub + t * sh.size()); (xoff, yoff, zoff): its first cell in the subgrid (yoff = 0 in 2D, where
// the slowest dimension, y, plays z's part).
template <class T, int W, int D>
inline void spread_point_sub(const SpreadArgs<T>& a, const PointKernel<T, W, D>& pk, std::int64_t xoff,
                             std::int64_t yoff, std::int64_t zoff, const SubgridShape& sh, const std::complex<T>* c,
                             std::int64_t src, std::complex<T>* sub) {
  constexpr int kX = x_lanes<T>(W);
  for (std::int64_t t = 0; t < a.nbatch; ++t) {
    const std::complex<T> cv = c[t * a.c_stride + src];
    alignas(64) T cx[kX];
    const T ri[2] = {cv.real(), cv.imag()};
    FIELDFT_SIMD
    for (int i = 0; i < kX; ++i) cx[i] = pk.x[i] * ri[i & 1];
    std::complex<T>* st = sub + t * sh.size() + (zoff * sh.sy + yoff) * sh.sx + xoff;
    for (int kz = 0; kz < W; ++kz) {
      const T wz = pk.yz[D - 2][kz];
      T* row = reinterpret_cast<T*>(st + kz * sh.sy * sh.sx);
      if constexpr (D == 2) {
        FIELDFT_SIMD
        for (int i = 0; i < kX; ++i) row[i] += wz * cx[i];
      } else {
        for (int ky = 0; ky < W; ++ky, row += 2 * sh.sx) {
          const T wy = wz * pk.yz[0][ky];
          FIELDFT_SIMD
          for (int i = 0; i < kX; ++i) row[i] += wy * cx[i];
        }
      }
    }
  }
}

// Each slab's points are spread once, whole: the planes of a tile's subgrid inside the slab are
// added into the grid, the ones past either face into the slab's halo buffer (halo_planes
// planes: sub_margin below, the rest above), and once every slab is done the halos are added
// into the grid in a second parallel pass over the cells of a plane.
template <int W>
constexpr std::int64_t halo_planes() { return W + 2; }

template <class T, int W, int D>
void spread_sub_w(const SpreadArgs<T>& a, const std::complex<T>* c, std::complex<T>* grid) {
  static_assert(D == 2 || D == 3);
  const Grid& g = *a.grid;
  const SortedPoints<T>& p = *a.pts;
  const std::int64_t nfx = g.nf[0], nfy = g.nf[1], nft = g.size(), nfs = g.nf[D - 1], plane = nft / nfs;
  const std::int64_t bx = p.tile_size[0], by = p.tile_size[1], nbx = p.tile_count[0], nby = p.tile_count[1];
  const int nslab = p.num_slabs();
  constexpr std::int64_t kMargin = sub_margin<W>(), kHalo = halo_planes<W>();
  const std::int64_t halo_per_t = nslab * kHalo * plane;
  std::int64_t thick = 0;
  for (int s = 0; s < nslab; ++s) thick = std::max(thick, p.slab_lo[s + 1] - p.slab_lo[s]);
  SubgridShape full;
  full.sx = sub_row_cells<T, W>(bx);
  full.sy = D == 3 ? sub_rows<W>(by) : 1;
  full.sz = sub_rows<W>(thick);
  // Chunks of a plane for the halo pass: whole cache lines, a few per thread.
  const std::int64_t chunk = std::max<std::int64_t>(64, (plane / (8 * a.nthreads) + 63) / 64 * 64);
  const std::int64_t nchunk = (plane + chunk - 1) / chunk;
#pragma omp parallel num_threads(a.nthreads)
  {
    PointKernel<T, W, D> pk;
    std::vector<std::complex<T>> subv(static_cast<std::size_t>(full.size() * a.nbatch));
    std::complex<T>* sub = subv.data();
#pragma omp for schedule(dynamic, 1)
    for (int s = 0; s < nslab; ++s) {
      const std::int64_t lo = p.slab_lo[s], hi = p.slab_lo[s + 1], oz = lo - kMargin;
      for (std::int64_t t = 0; t < a.nbatch; ++t) {
        std::memset(static_cast<void*>(grid + t * nft + lo * plane), 0, sizeof(std::complex<T>) * (hi - lo) * plane);
        std::memset(static_cast<void*>(a.halo + t * halo_per_t + s * kHalo * plane), 0,
                    sizeof(std::complex<T>) * kHalo * plane);
      }
      SubgridShape sh = full;
      sh.sz = sub_rows<W>(hi - lo);
      for (std::int64_t ty = 0; ty < nby; ++ty) {
        for (std::int64_t tx = 0; tx < nbx; ++tx) {
          const TileBins kb = tile_bins(p, s, ty, tx);
          if (kb.empty) continue;
          const std::int64_t ox = tx * bx - kMargin, oy = D == 3 ? ty * by - kMargin : 0;
          std::memset(static_cast<void*>(sub), 0, sizeof(std::complex<T>) * sh.size() * a.nbatch);
          for (int cl = 0; cl < 3; ++cl)
            for (std::int64_t j = p.bin_begin[kb.k[cl]]; j < p.bin_begin[kb.k[cl] + 1]; ++j) {
              load_point(a, j, pk);
              const std::int64_t yoff = D == 3 ? pk.i0[1] - oy : 0;
              spread_point_sub(a, pk, pk.i0[0] - ox, yoff, pk.i0[D - 1] - oz, sh, c, j, sub);
            }
          // The tile's cells, the margin before them and the footprints' reach past them, wrapped
          // in x and y; planes outside the slab go to its halo.
          const std::int64_t lenx = std::min(bx, nfx - tx * bx) + W + 2;
          const std::int64_t leny = D == 3 ? sub_rows<W>(std::min(by, nfy - ty * by)) : 1;
          for (std::int64_t t = 0; t < a.nbatch; ++t) {
            std::complex<T>* halo = a.halo + t * halo_per_t + s * kHalo * plane;
            std::complex<T>* st = sub + t * sh.size();
            for (std::int64_t rz = 0; rz < sh.sz; ++rz) {
              const std::int64_t gz = oz + rz;
              std::complex<T>* dst = gz < lo   ? halo + rz * plane
                                     : gz < hi ? grid + t * nft + gz * plane
                                               : halo + (rz - (hi - lo)) * plane;
              for (std::int64_t ry = 0; ry < leny; ++ry) {
                std::complex<T>* grow = dst + (D == 3 ? mod_index(oy + ry, nfy) * nfx : 0);
                row_transfer<T, false>(grow, nfx, ox, lenx, st + (rz * sh.sy + ry) * sh.sx);
              }
            }
          }
        }
      }
    }
    // (implicit barrier) Halo planes into the grid: each thread owns a range of cells of every plane.
#pragma omp for schedule(static)
    for (std::int64_t ch = 0; ch < nchunk; ++ch) {
      const std::int64_t c0 = ch * chunk, len = std::min(chunk, plane - c0);
      for (std::int64_t t = 0; t < a.nbatch; ++t)
        for (int s = 0; s < nslab; ++s) {
          const std::int64_t lo = p.slab_lo[s], thick_s = p.slab_lo[s + 1] - lo;
          for (std::int64_t h = 0; h < kHalo; ++h) {
            const std::int64_t gz = mod_index(lo - kMargin + (h < kMargin ? h : h + thick_s), nfs);
            T* gdst = reinterpret_cast<T*>(grid + t * nft + gz * plane + c0);
            const T* hsrc = reinterpret_cast<const T*>(a.halo + t * halo_per_t + (s * kHalo + h) * plane + c0);
            FIELDFT_SIMD
            for (std::int64_t i = 0; i < 2 * len; ++i) gdst[i] += hsrc[i];
          }
        }
    }
  }
}

template <class T, int W, int D>
void interp_sub_w(const SpreadArgs<T>& a, const std::complex<T>* grid, std::complex<T>* c) {
  static_assert(D == 2 || D == 3);
  using SP = SortedPoints<T>;
  const Grid& g = *a.grid;
  const SP& p = *a.pts;
  const std::int64_t nfx = g.nf[0], nfy = g.nf[1], nft = g.size(), nfs = g.nf[D - 1], plane = nft / nfs;
  const std::int64_t bx = p.tile_size[0], by = p.tile_size[1], nbx = p.tile_count[0], nby = p.tile_count[1];
  const int nslab = p.num_slabs();
  std::int64_t thick = 0;
  for (int s = 0; s < nslab; ++s) thick = std::max(thick, p.slab_lo[s + 1] - p.slab_lo[s]);
  constexpr int kX = x_lanes<T>(W);
  // The subgrid spans the tile and its footprints' halo in every dimension, the slowest included.
  SubgridShape full;
  full.sx = sub_row_cells<T, W>(bx);
  full.sy = D == 3 ? sub_rows<W>(by) : sub_rows<W>(thick);
  full.sz = D == 3 ? sub_rows<W>(thick) : 1;
  const std::int64_t ntile = static_cast<std::int64_t>(nslab) * nby * nbx;
#pragma omp parallel num_threads(a.nthreads)
  {
    PointKernel<T, W, D> pk;
    std::vector<std::complex<T>> subv(static_cast<std::size_t>(full.size() * a.nbatch));
    std::complex<T>* sub = subv.data();
#pragma omp for schedule(dynamic, 1)
    for (std::int64_t tile = 0; tile < ntile; ++tile) {
      const int s = static_cast<int>(tile / (nby * nbx));
      const std::int64_t ty = (tile / nbx) % nby, tx = tile % nbx;
      const TileBins kb = tile_bins(p, s, ty, tx);
      if (kb.empty) continue;
      const std::int64_t lo = p.slab_lo[s], hi = p.slab_lo[s + 1];
      const std::int64_t ox = tx * bx - sub_margin<W>();
      const std::int64_t oy = D == 3 ? ty * by - sub_margin<W>() : lo - sub_margin<W>();
      const std::int64_t oz = D == 3 ? lo - sub_margin<W>() : 0;
      SubgridShape sh = full;
      if constexpr (D == 3) sh.sz = sub_rows<W>(hi - lo);
      else sh.sy = sub_rows<W>(hi - lo);
      for (std::int64_t t = 0; t < a.nbatch; ++t) {
        const std::complex<T>* gt = grid + t * nft;
        std::complex<T>* st = sub + t * sh.size();
        for (std::int64_t rz = 0; rz < sh.sz; ++rz)
          for (std::int64_t ry = 0; ry < sh.sy; ++ry) {
            const std::int64_t gz = D == 3 ? mod_index(oz + rz, nfs) : 0;
            const std::complex<T>* grow = gt + gz * plane + mod_index(oy + ry, nfy) * nfx;
            row_transfer<T, true>(const_cast<std::complex<T>*>(grow), nfx, ox, sh.sx, st + (rz * sh.sy + ry) * sh.sx);
          }
      }
      for (int cl = 0; cl < 3; ++cl) {
        for (std::int64_t j = p.bin_begin[kb.k[cl]]; j < p.bin_begin[kb.k[cl] + 1]; ++j) {
          load_point(a, j, pk);
          const std::int64_t xoff = pk.i0[0] - ox, yoff = pk.i0[1] - oy;
          const std::int64_t zoff = D == 3 ? pk.i0[2] - oz : 0;
          for (std::int64_t t = 0; t < a.nbatch; ++t) {
            const T* base = reinterpret_cast<const T*>(sub + t * sh.size() + (zoff * sh.sy + yoff) * sh.sx + xoff);
            alignas(64) T acc[kX] = {};
            if constexpr (D == 2) {
              for (int ky = 0; ky < W; ++ky) {
                const T* row = base + 2 * ky * sh.sx;
                const T wy = pk.yz[0][ky];
                FIELDFT_SIMD
                for (int i = 0; i < kX; ++i) acc[i] += wy * row[i];
              }
            } else {
              for (int kz = 0; kz < W; ++kz) {
                const T wz = pk.yz[1][kz];
                for (int ky = 0; ky < W; ++ky) {
                  const T* row = base + 2 * ((kz * sh.sy + ky) * sh.sx);
                  const T wy = wz * pk.yz[0][ky];
                  FIELDFT_SIMD
                  for (int i = 0; i < kX; ++i) acc[i] += wy * row[i];
                }
              }
            }
            c[t * a.c_stride + j] = apply_x_kernel(pk, acc);
          }
        }
      }
    }
  }
}

template <class T, int W, int D>
void precompute_weights_w(const Grid& g, const SortedPoints<T>& p, const T* horner_yz, int nthreads, T* weights) {
  constexpr int kYZ = yz_lanes<T>(W);
  const int deg = g.degree;
#pragma omp parallel for num_threads(nthreads) schedule(static, 4096)
  for (std::int64_t j = 0; j < p.m; ++j)
    for (int d = 0; d < D; ++d)
      detail::eval_kernel_horner<kYZ>(horner_yz, deg, p.t[d][j], weights + (j * D + d) * kYZ);
}

}  // namespace impl

template <class T, int D>
void precompute_weights(const Grid& g, const SortedPoints<T>& p, const T* horner_yz, int nthreads, T* weights) {
  core::dispatch_width(g.width, [&]<int W>() { impl::precompute_weights_w<T, W, D>(g, p, horner_yz, nthreads, weights); });
}

template <class T, int D>
void spread(const SpreadArgs<T>& a, const std::complex<T>* c, std::complex<T>* grid) {
  core::dispatch_width(a.grid->width, [&]<int W>() {
    if constexpr (D == 1) impl::spread_w<T, W, D>(a, c, grid);
    else impl::spread_sub_w<T, W, D>(a, c, grid);
  });
}

template <class T, int D>
void interp(const SpreadArgs<T>& a, const std::complex<T>* grid, std::complex<T>* c) {
  core::dispatch_width(a.grid->width, [&]<int W>() {
    if constexpr (D == 1) impl::interp_w<T, W, D>(a, grid, c);
    else impl::interp_sub_w<T, W, D>(a, grid, c);
  });
}

}  // namespace fieldft::cpu
