// What every NUFFT kernel shares: the fine grid and sorted points as the kernels see them
// (DevGrid, DevPoints), the shared-memory Horner table and a point's kernel weights (the same
// per-point math as the CPU backend, include/fieldft/detail/), atomic grid updates, the walk
// over a tile's cells and its flush to the grid, and the subproblem list.
#pragma once

#include <cuda_pipeline.h>

#include <cstdint>
#include <type_traits>

#include "core/kernel_design.hpp"
#include "fieldft/detail/complex.hpp"
#include "fieldft/detail/fold.hpp"
#include "fieldft/detail/kernel.hpp"
#include "fieldft/detail/tile_layout.hpp"

namespace fieldft::cuda {

using detail::Cplx;
using detail::bulk_cells;
using detail::bulk_tile_len0;
using detail::kTcBins;
using detail::kTcRows;
using detail::kTileBins;
using detail::kTileWarps;
using detail::packed_rows;
using detail::spread_tile_bytes;
using detail::tc_width_fits;
using detail::tile_len;
using detail::tile_row_stride;
using detail::tile_x_lanes;
using detail::TileStrides;
using detail::warp_tile_strides;
using detail::subproblem_tile_bytes;
using detail::interp_tile_bytes;

struct DevGrid {
  std::int64_t nf[3];
  std::int64_t size;   // nf[0] * nf[1] * nf[2]
  int bin[3];          // bin sizes (cells)
  int nbins[3];        // bins per dimension
  int sub[3];          // sort sub-bin sizes (cells), dividing bin
  int nsub;            // sort keys per bin: prod over dimensions of bin / sub, see point_bin
  int width;           // kernel width W
  int boxes;           // 1: 3D warp tiles accumulate 2x2x2-cell boxes in registers (spread_tile_boxes)
  int bulk;            // 1: the device (sm_90) adds whole tile rows by bulk reductions (spread_tile)
  int tc;              // 1: 3D float tiles built by tensor-core products (spread_tc), bins kTcBins
};

// Sorted points: first cell and Horner variable per dimension, and the caller's index.
template <class T>
struct DevPoints {
  const std::int32_t* i0[3];
  const T* t[3];
  const std::int64_t* perm;
  std::int64_t m;
  // Method kPrecomputed: the points' kernel weights stored at set_points (store_point_weights),
  // weight k of dimension d of sorted point j at w[(d·W + k)·m + j] (core::cuda_precomputed_bytes:
  // a warp's loads of one weight are coalesced); null: evaluated from t per execute. Read by
  // the one-thread-per-point kernels only (thread_point_footprint); the tile kernels evaluate
  // their weights once per point and tile anyway.
  const T* w;
};

// Columns of the shared-memory copy of the Horner table: W rounded up to whole 16-byte vectors,
// so that each degree's coefficients are read as vector loads (kernel.hpp's w_pad; the extra
// columns are zero and their results unused).
template <class T>
__host__ __device__ constexpr int horner_pad(int w) {
  constexpr int per_vec = static_cast<int>(16 / sizeof(T));
  return (w + per_vec - 1) / per_vec * per_vec;
}

template <class T, int W>
constexpr int horner_cols() {
  return horner_pad<T>(W);
}

// Values of that copy for the largest degree at width W (core::max_horner_degree): sized by W,
// not by the widest kernel, it leaves room for a seventh spread_tile block per SM on cases E
// and F (float, W = 7: 576 bytes instead of 1728; blocks of 33.4 KiB fitted six times).
template <class T, int W>
constexpr int horner_smem() {
  return (core::max_horner_degree(W) + 1) * horner_cols<T, W>();
}

// Copies the Horner table (degree + 1 rows of horner_cols values, as the plan uploads it: W
// coefficients and zeros) into shared memory once per block (every thread reads all of it).
// smem: horner_smem values, 16-byte aligned.
template <class T, int W>
__device__ inline const T* stage_horner(const T* __restrict__ horner, int degree, T* smem) {
  for (int i = threadIdx.x; i < (degree + 1) * horner_cols<T, W>(); i += blockDim.x) smem[i] = horner[i];
  __syncthreads();
  return smem;
}

// The W kernel weights of Horner variable t from a table staged by stage_horner.
template <class T, int W>
__device__ inline void horner_weights(const T* hz, int degree, T t, T* out) {
  T k[horner_cols<T, W>()];
  detail::eval_kernel_horner<horner_cols<T, W>()>(hz, degree, t, k);
#pragma unroll
  for (int i = 0; i < W; ++i) out[i] = k[i];
}

// A point's kernel weights and its wrapped cell indices per dimension. In-grid offsets are
// 32-bit: the plan refuses fine grids of 2^31 cells or more per transform.
template <class T, int D, int W>
struct PointFootprint {
  T k[D][W];
  int idx[D][W];
};

// The W wrapped cell indices from first cell i0 on an axis of nf cells.
template <int W>
__device__ inline void wrapped_cells(int i0, int nf, int* idx) {
  for (int k = 0; k < W; ++k) {
    const int i = i0 + k;
    idx[k] = i < 0 ? i + nf : (i >= nf ? i - nf : i);
  }
}

// The wrapped cell indices of sorted point j's footprint.
template <class T, int D, int W>
__device__ inline void footprint_cells(const DevPoints<T>& p, std::int64_t j, const DevGrid& g,
                                       PointFootprint<T, D, W>& f) {
  for (int d = 0; d < D; ++d) wrapped_cells<W>(p.i0[d][j], static_cast<int>(g.nf[d]), f.idx[d]);
}

// Weights and cells dimension by dimension, each dimension's loads (i0, t) together: with all
// weights first and the cells after (footprint_cells), interp_nupts on matrix case G took 944
// instead of 886 us (H100, ncu, session 25).
template <class T, int D, int W>
__device__ inline void point_footprint(const DevPoints<T>& p, std::int64_t j, const DevGrid& g, const T* horner,
                                       int degree, PointFootprint<T, D, W>& f) {
  for (int d = 0; d < D; ++d) {
    const int i0 = p.i0[d][j];
    horner_weights<T, W>(horner, degree, p.t[d][j], f.k[d]);
    wrapped_cells<W>(i0, static_cast<int>(g.nf[d]), f.idx[d]);
  }
}

// The prologue of the one-thread-per-point kernels (spread_nupts, interp_nupts): the footprint
// of sorted point j, this thread's; false past the last point. Pre (Method kPrecomputed): the
// weights are the ones stored in p.w at set_points; else they are evaluated from the Horner
// table, which is first staged in sh (every thread of the block takes part). Pre is a template
// parameter, not a branch on p.w: with the branch in the kernel, 2D type 2 (matrix case G, which
// interpolates with interp_nupts) ran 6% slower on an H100 (docs/benchmarks.md, "precomputed").
template <class T, int D, int W, bool Pre>
__device__ inline bool thread_point_footprint(const DevPoints<T>& p, const DevGrid& g, const T* horner, int degree,
                                              T* sh, std::int64_t& j, PointFootprint<T, D, W>& f) {
  if constexpr (Pre) {
    j = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
    if (j >= p.m) return false;
#pragma unroll
    for (int d = 0; d < D; ++d)
#pragma unroll
      for (int k = 0; k < W; ++k) f.k[d][k] = __ldg(p.w + (d * W + k) * p.m + j);
    footprint_cells<T, D, W>(p, j, g, f);
    return true;
  } else {
    const T* hz = stage_horner<T, W>(horner, degree, sh);
    j = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
    if (j >= p.m) return false;
    point_footprint<T, D, W>(p, j, g, hz, degree, f);
    return true;
  }
}

// Method kPrecomputed, at set_points: stores the weights thread_point_footprint evaluates for
// every sorted point in w, in DevPoints::w's layout, so that the nupts kernels read
// exactly the values they would have evaluated. The factored form of the spreading matrix: the
// w^D products are formed in registers by the kernels (src/cpu/spread_interp.hpp argues the
// layout; docs/architecture.md).
template <class T, int D, int W>
__global__ void store_point_weights(DevPoints<T> p, DevGrid g, const T* __restrict__ horner, int degree,
                                    T* __restrict__ w) {
  __shared__ alignas(16) T sh[horner_smem<T, W>()];
  std::int64_t j = 0;
  PointFootprint<T, D, W> f;
  if (!thread_point_footprint<T, D, W, false>(p, g, horner, degree, sh, j, f)) return;
#pragma unroll
  for (int d = 0; d < D; ++d)
#pragma unroll
    for (int k = 0; k < W; ++k) w[(d * W + k) * p.m + j] = f.k[d][k];
}

// Offset of row (ky, kz) of a footprint: cells idx[0][kx] follow at + idx[0][kx].
template <class T, int D, int W>
__device__ inline int row_offset(const PointFootprint<T, D, W>& f, const DevGrid& g, int ky, int kz) {
  int r = 0;
  if constexpr (D > 2) r = f.idx[2][kz] * static_cast<int>(g.nf[1]);
  if constexpr (D > 1) r = (r + f.idx[1][ky]) * static_cast<int>(g.nf[0]);
  return r;
}

template <class T, int D, int W>
__device__ inline T row_weight(const PointFootprint<T, D, W>& f, int ky, int kz) {
  T w = T(1);
  if constexpr (D > 2) w = f.k[2][kz];
  if constexpr (D > 1) w *= f.k[1][ky];
  return w;
}

// Atomic grid += v. sm_90 adds a float pair in one vector atomic (red.global.add.v2.f32), half
// the atomic operations of a tile flush, which dominate sparse problems (a 3795-cell tile for
// ~60 points on cases E and F).
template <class T>
__device__ inline void atomic_add_cell(T* gb, int gi, Cplx<T> v) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if constexpr (sizeof(T) == sizeof(float)) {
    atomicAdd(reinterpret_cast<float2*>(gb) + gi, make_float2(v.re, v.im));
    return;
  }
#endif
  if (v.re != T(0)) atomicAdd(gb + 2 * gi, v.re);
  if (v.im != T(0)) atomicAdd(gb + 2 * gi + 1, v.im);
}

// Calls f(i, gi) for tile cells i = first, first + step, ... and their grid cells gi (periodic
// wrap). The tile starts at grid cell origin and holds len cells per dimension, rows sy cells
// apart (sy ≥ len[0]: the rest is padding, skipped) and planes sz ≥ sy·len[1] apart (the cells
// after a plane's last row are padding too where Padded, see warp_tile_strides). The cell's
// tile coordinates are carried from one step to the next (each of step's parts in x and y
// carries at most once), and so is its grid index where the tile does not wrap around the grid
// (most tiles): dividing i by the strides and wrapping each coordinate at every cell cost ~48
// instructions per cell, a quarter of spread_tile's instructions on cases E and F (ncu).
template <bool Padded = false, class F>
__device__ inline void for_tile_cells(const int* origin, const int* len, int sy, int sz, const DevGrid& g, int first,
                                      int step, F&& f) {
  const int nfx = static_cast<int>(g.nf[0]), nfy = static_cast<int>(g.nf[1]), nfz = static_cast<int>(g.nf[2]);
  const int nfxy = nfx * nfy, ncell = sz * len[2];
  const int dz = step / sz, dp = step - dz * sz, dy = dp / sy, dx = dp - dy * sy;
  int lz = first / sz, p = first - lz * sz, ly = p / sy, lx = p - ly * sy;  // p: index in the plane
  const bool wraps = origin[0] < 0 || origin[0] + len[0] > nfx || origin[1] < 0 || origin[1] + len[1] > nfy ||
                     origin[2] < 0 || origin[2] + len[2] > nfz;  // the same for the whole block
  const auto grid_index = [&] { return ((origin[2] + lz) * nfy + origin[1] + ly) * nfx + origin[0] + lx; };
  int gi = grid_index();  // valid where !wraps
  const int dgi = dz * nfxy + dy * nfx + dx, carry_x = nfx - sy, carry_y = nfxy - len[1] * nfx;
  for (int i = first; i < ncell; i += step) {
    if (lx < len[0] && (!Padded || ly < len[1])) {  // not padding
      if (wraps) {
        int ix = origin[0] + lx, iy = origin[1] + ly, iz = origin[2] + lz;
        ix = ix < 0 ? ix + nfx : (ix >= nfx ? ix - nfx : ix);
        iy = iy < 0 ? iy + nfy : (iy >= nfy ? iy - nfy : iy);
        iz = iz < 0 ? iz + nfz : (iz >= nfz ? iz - nfz : iz);
        f(i, (iz * nfy + iy) * nfx + ix);
      } else {
        f(i, gi);
      }
    }
    if constexpr (Padded) p += dp;
    lx += dx;
    ly += dy;
    lz += dz;
    gi += dgi;
    if (lx >= sy) {
      lx -= sy;
      ++ly;
      gi += carry_x;
    }
    if (Padded ? p >= sz : ly >= len[1]) {  // past the plane (and its padding): into the next
      ++lz;
      if constexpr (Padded) {
        p -= sz;
        ly = p / sy;
        lx = p - ly * sy;
        gi = grid_index();
      } else {
        ly -= len[1];
        gi += carry_y;
      }
    }
  }
}

// Adds a shared-memory tile to the grid gb; cells that stayed zero are skipped. With clear, the
// tile is left zero for the next transform (one pass over the tile instead of two).
template <bool Padded = false, class T>
__device__ inline void add_tile_to_grid(Cplx<T>* tile, const int* origin, const int* len, int sy, int sz,
                                        const DevGrid& g, T* gb, int first, int step, bool clear) {
  for_tile_cells<Padded>(origin, len, sy, sz, g, first, step, [&](int i, int gi) {
    const Cplx<T> v = tile[i];
    if (clear) tile[i] = Cplx<T>{T(0), T(0)};
    if (v.re != T(0) || v.im != T(0)) atomic_add_cell(gb, gi, v);
  });
}

// Zeroes the ncell cells of a tile (16-byte stores; tiles are 16-byte aligned).
template <class T>
__device__ inline void zero_tile(Cplx<T>* tile, int ncell, int first, int step) {
  using Vec = std::conditional_t<sizeof(T) == 4, float4, double2>;
  const int nvec = ncell * static_cast<int>(sizeof(Cplx<T>)) / 16;
  for (int i = first; i < nvec; i += step) reinterpret_cast<Vec*>(tile)[i] = Vec{};
  if (first == 0 && nvec * 16 < ncell * static_cast<int>(sizeof(Cplx<T>))) tile[ncell - 1] = Cplx<T>{};
}

// Tile of a bin: len cells per dimension (tile_len, 1 past D) starting at grid cell origin (bin
// start − W/2), the cells its points' footprints reach.
template <int D, int W>
__device__ inline void bin_tile(const DevGrid& g, int bin, int* len, int* origin) {
  for (int d = 0; d < 3; ++d) {
    len[d] = 1;
    origin[d] = 0;
  }
  for (int d = 0; d < D; ++d) {
    const int bd = bin % g.nbins[d];
    bin /= g.nbins[d];
    len[d] = tile_len(g.bin[d], W);
    origin[d] = bd * g.bin[d] - W / 2;
  }
}

// Subproblems: a block spreads the points of (part of) one bin into a shared-memory tile of
// tile_len cells per dimension, then adds the tile to the grid. Tile origin: bin start - W/2.
struct Subproblems {
  const int* bin;             // bin of each subproblem
  const std::int64_t* begin;  // first sorted point
  const std::int64_t* end;    // one past the last
};

}  // namespace fieldft::cuda
