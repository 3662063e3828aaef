// CUDA kernels of the NUFFT: point preparation and bin sort, spreading (nonuniform-point driven
// with global atomics; shared-memory subproblems; warp-owned tiles), interpolation (one thread
// per sorted point; from shared-memory tiles in 3D), and the mode copies with deconvolution.
// The per-point math (fold, kernel start, Horner evaluation) is the same header code the CPU
// backend uses.
#pragma once

#include <cuda_pipeline.h>

#include <cstdint>
#include <type_traits>

#include "core/kernel_design.hpp"
#include "fieldft/detail/complex.hpp"
#include "fieldft/detail/fold.hpp"
#include "fieldft/detail/kernel.hpp"

namespace fieldft::cuda {

using detail::Cplx;

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
};

// ---------------------------------------------------------------------------------------------
// Validation and sort

// First index (atomicMin) whose coordinate is not finite; *bad starts at INT64_MAX.
template <class T>
__global__ void find_non_finite(std::int64_t m, const T* __restrict__ x, unsigned long long* bad) {
  for (std::int64_t j = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; j < m;
       j += std::int64_t(gridDim.x) * blockDim.x)
    if (!isfinite(x[j])) atomicMin(bad, static_cast<unsigned long long>(j));
}

// First footprint cell of a point at fine-grid coordinate u, wrapped so that the cell that bins
// the point, i0 + W/2, lies in [0, nf) (kernel_start gives it in [0, nf]). Binned by that cell
// rather than by the cell holding u, a point's first cell lies at an offset l in [0, bin) from
// its tile's origin (bin start − W/2), and a tile holds bin + W − 1 cells per dimension (by the
// cell holding u, l reached bin: one more cell per dimension, 23x15x11 instead of 22x14x10 cells
// for 16x8x4 bins at W = 7).
__device__ inline detail::KernelStart binned_start(double u, std::int64_t nf, int w) {
  detail::KernelStart ks = detail::kernel_start(u, w);
  if (ks.i0 + w / 2 >= nf) ks.i0 -= nf;
  return ks;
}

// Cells per dimension of the tile of a bin of `bin` cells (see binned_start).
__host__ __device__ constexpr int tile_len(int bin, int w) { return bin + w - 1; }

// Sort key of a point: its bin (by its cell i0 + W/2, binned_start), then its sub-bin inside the
// bin (both x fastest). Bins group the points of a spreading subproblem; sub-bins keep the 32
// points of an interpolating warp close together, so that its loads fall on few cache lines
// (H100, case H: bins 16x8x4 alone 4.48 ms, sub-bins 16x4x2 3.81), and group the points of a
// register box (spread_tile_boxes). The sub-bin is taken from the offset l in [0, bin) of the
// point's first footprint cell from its tile's origin, the quantity the tile kernels use.
template <class T, int D>
__device__ inline int point_bin(const T* const* x, std::int64_t j, const DevGrid& g) {
  int b = 0, sb = 0;
  for (int d = D - 1; d >= 0; --d) {
    const double u = detail::fold_rescale(static_cast<double>(x[d][j]), g.nf[d]);
    const int cell = static_cast<int>(binned_start(u, g.nf[d], g.width).i0) + g.width / 2;  // [0, nf)
    const int bd = cell / g.bin[d];
    const int l = cell - bd * g.bin[d];
    b = b * g.nbins[d] + bd;
    sb = sb * (g.bin[d] / g.sub[d]) + l / g.sub[d];
  }
  return b * g.nsub + sb;
}

// Bin of every point and its rank inside the bin.
template <class T, int D>
__global__ void count_bins(std::int64_t m, const T* x0, const T* x1, const T* x2, DevGrid g,
                           int* __restrict__ bin_count, int* __restrict__ rank, int* __restrict__ bin_of) {
  const T* x[3] = {x0, x1, x2};
  for (std::int64_t j = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; j < m;
       j += std::int64_t(gridDim.x) * blockDim.x) {
    const int b = point_bin<T, D>(x, j, g);
    bin_of[j] = b;
    rank[j] = atomicAdd(&bin_count[b], 1);
  }
}

// The sorted position p of every point: perm[p] = j (Index: the type of the scanned starts).
template <class Index>
__global__ void scatter_perm(std::int64_t m, const Index* __restrict__ bin_start, const int* __restrict__ rank,
                             const int* __restrict__ bin_of, std::int64_t* __restrict__ perm) {
  for (std::int64_t j = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; j < m;
       j += std::int64_t(gridDim.x) * blockDim.x)
    perm[bin_start[bin_of[j]] + rank[j]] = j;
}

// Each sorted point's first cells and Horner variables, in sorted order: coordinates are read
// through perm (gathered), the outputs written contiguously. Written at scattered positions
// instead (seven partial-sector writes per point), this took 5.3 ms of case B's set_points on an
// H100 (1e7 points; sort keys are sub-bins, so neighbours in sorted order come from anywhere).
template <class T, int D>
__global__ void gather_sorted(std::int64_t m, const T* x0, const T* x1, const T* x2, DevGrid g, int width,
                              const std::int64_t* __restrict__ perm, std::int32_t* i00, std::int32_t* i01,
                              std::int32_t* i02, T* t0, T* t1, T* t2) {
  const T* x[3] = {x0, x1, x2};
  std::int32_t* i0[3] = {i00, i01, i02};
  T* tt[3] = {t0, t1, t2};
  for (std::int64_t p = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; p < m;
       p += std::int64_t(gridDim.x) * blockDim.x) {
    const std::int64_t j = perm[p];
    for (int d = 0; d < D; ++d) {
      const double u = detail::fold_rescale(static_cast<double>(x[d][j]), g.nf[d]);
      const detail::KernelStart ks = binned_start(u, g.nf[d], width);
      i0[d][p] = static_cast<std::int32_t>(ks.i0);
      tt[d][p] = static_cast<T>(detail::horner_arg(ks.offset, width));
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Spreading and interpolation

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

template <class T, int D, int W>
__device__ inline void point_footprint(const DevPoints<T>& p, std::int64_t j, const DevGrid& g, const T* horner,
                                       int degree, PointFootprint<T, D, W>& f) {
  for (int d = 0; d < D; ++d) {
    const int i0 = p.i0[d][j], nf = static_cast<int>(g.nf[d]);
    horner_weights<T, W>(horner, degree, p.t[d][j], f.k[d]);
    for (int k = 0; k < W; ++k) {
      const int i = i0 + k;
      f.idx[d][k] = i < 0 ? i + nf : (i >= nf ? i - nf : i);
    }
  }
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

// One thread per sorted point, atomic adds into the fine grid in global memory.
template <class T, int D, int W>
__global__ void spread_nupts(DevPoints<T> p, DevGrid g, const T* __restrict__ horner, int degree,
                             const Cplx<T>* __restrict__ c, std::int64_t c_stride, Cplx<T>* __restrict__ grid,
                             int nbatch) {
  __shared__ alignas(16) T sh[horner_smem<T, W>()];
  const T* hz = stage_horner<T, W>(horner, degree, sh);
  const std::int64_t j = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (j >= p.m) return;
  PointFootprint<T, D, W> f;
  point_footprint<T, D, W>(p, j, g, hz, degree, f);
  const std::int64_t src = p.perm[j];
  for (int b = 0; b < nbatch; ++b) {
    const Cplx<T> cv = c[b * c_stride + src];
    T* gb = reinterpret_cast<T*>(grid + b * g.size);
    for (int kz = 0; kz < (D > 2 ? W : 1); ++kz)
      for (int ky = 0; ky < (D > 1 ? W : 1); ++ky) {
        const int row = row_offset(f, g, ky, kz);
        const T wyz = row_weight(f, ky, kz);
        for (int kx = 0; kx < W; ++kx) {
          const T wgt = wyz * f.k[0][kx];
          atomic_add_cell(gb, row + f.idx[0][kx], Cplx<T>{cv.re * wgt, cv.im * wgt});
        }
      }
  }
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

template <class T, int D, int W>
__global__ void spread_subproblem(DevPoints<T> p, DevGrid g, const T* __restrict__ horner, int degree,
                                  const Cplx<T>* __restrict__ c, std::int64_t c_stride, Cplx<T>* __restrict__ grid,
                                  int nbatch, Subproblems sp) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  T* tile = reinterpret_cast<T*>(smem_raw);
  __shared__ alignas(16) T sh[horner_smem<T, W>()];
  const T* hz = stage_horner<T, W>(horner, degree, sh);
  const int s = blockIdx.x;
  int len[3], origin[3];
  bin_tile<D, W>(g, sp.bin[s], len, origin);
  const int ncell = len[0] * len[1] * len[2];
  for (int b = 0; b < nbatch; ++b) {
    for (int i = threadIdx.x; i < 2 * ncell; i += blockDim.x) tile[i] = T(0);
    __syncthreads();
    for (std::int64_t j = sp.begin[s] + threadIdx.x; j < sp.end[s]; j += blockDim.x) {
      T k[D][W];
      int l[3] = {0, 0, 0};
      for (int d = 0; d < D; ++d) {
        horner_weights<T, W>(hz, degree, p.t[d][j], k[d]);
        l[d] = p.i0[d][j] - origin[d];
      }
      const Cplx<T> cv = c[b * c_stride + p.perm[j]];
      for (int kz = 0; kz < (D > 2 ? W : 1); ++kz) {
        const T wz = D > 2 ? k[D > 2 ? 2 : 0][kz] : T(1);
        for (int ky = 0; ky < (D > 1 ? W : 1); ++ky) {
          const T wyz = wz * (D > 1 ? k[D > 1 ? 1 : 0][ky] : T(1));
          const int row = ((l[2] + kz) * len[1] + (l[1] + ky)) * len[0] + l[0];
          for (int kx = 0; kx < W; ++kx) {
            const T wgt = wyz * k[0][kx];
            atomicAdd(tile + 2 * (row + kx), cv.re * wgt);
            atomicAdd(tile + 2 * (row + kx) + 1, cv.im * wgt);
          }
        }
      }
    }
    __syncthreads();
    add_tile_to_grid(reinterpret_cast<Cplx<T>*>(tile), origin, len, len[0], len[0] * len[1], g,
                     reinterpret_cast<T*>(grid + b * g.size), threadIdx.x, blockDim.x, false);
    __syncthreads();
  }
}

// Warp-owned tiles, no shared-memory atomics (Method::kOutputDriven). A block is one warp and
// owns the padded tile of one subproblem (tile_len cells per dimension, as spread_subproblem) in
// shared memory. Points come in groups of 32: each lane evaluates one point's kernel weights
// into shared memory; then the warp applies the group's points one after another, its lanes
// covering one point's W^D footprint together: lane = (x offset, row group), XL x offsets by
// 32/XL row groups. The lanes of one point write distinct cells and the points of a warp are
// applied in order (__syncwarp between them), so plain loads and stores suffice where
// spread_subproblem needs a compare-and-swap loop per float (shared memory has no native float
// add). Parallelising over the footprint rather than over points is the output-driven scheme
// of cuFINUFFT 2.4 and NonuniformFFTs.jl (J. I. Polanco); the warp-owned tile is ours.
// In 3D a tile is shared by K warps, warp k owning the tile planes z with z % K == k: each warp
// applies every point of the group to its own planes only, so no cell is written by two warps
// and still no atomics are needed; a block barrier separates groups. One warp per tile left 6-7
// warps per SM (the tile takes 26-30 KiB of shared memory), too few to hide the latency of
// each point's shared-memory round trips (ncu on case B: one instruction per 3.8 cycles per
// warp, 1.7 warps per scheduler).
template <int W>
constexpr int tile_x_lanes() {
  return W <= 8 ? 8 : 16;
}

// Row stride (cells) of a warp tile whose rows hold len0 cells. float, 8 x-lanes: the two row
// groups of a half-warp must fall in different banks (64-bit accesses are served per
// half-warp), i.e. 2·stride mod 32 words in [14, 18] for up to 7..8 cells a row.
template <class T, int W>
__host__ __device__ constexpr int tile_row_stride(int len0, int align = 1) {
  if (sizeof(T) != 4 || tile_x_lanes<W>() != 8) return len0;
  int s = len0;
  while (s % 16 < 7 || s % 16 > 9 || s % align != 0) ++s;
  return s;
}

// Warp tiles with packed rows (spread_tile): a lane covers x offset ox < W of a footprint row,
// and the 32/W row groups of a warp run over the footprint rows (y, z) of the warp's planes
// one after another, across planes, instead of over rows y of one plane. With 8 x-lanes by 4
// row groups, W = 6 takes 12 accesses per point with 56 % of the lanes useful; packed, 8 with
// 84 % (W = 4: 2 accesses instead of 4). 3D tiles of two warps and even W up to 6, where the
// strides below make every access free of bank conflicts.
template <int D, int W, int K>
constexpr bool packed_rows() {
  return D == 3 && K == 2 && W % 2 == 0 && W <= 6;
}

struct TileStrides {
  int sy, sz;  // cells between rows, between planes
};

// Row and plane strides (cells) of a warp tile whose rows hold len0 cells and planes len1 rows.
// Packed rows (K = 2 warps): a wavefront of 128 bytes spans C = 128 / sizeof(Cplx<T>) cells, and
// an access is conflict-free when consecutive lanes fall on consecutive cells modulo C. Lanes of
// consecutive rows of a plane are sy apart, and across the planes of a warp (K planes apart)
// K·sz − (W − 1)·sy: both must be W modulo C, so sy ≡ W and K·sz ≡ W² (mod C), which the
// padding of rows and planes gives (even W). Else the rows of tile_row_stride, planes unpadded.
// Bulk rows (Bulk, below): rows also start on whole 16-byte units; the packed strides of even W
// already do (sy ≡ W and sz ≡ W²/2 mod C/2 cells are even), the plain rows are made to.
template <class T>
constexpr int bulk_cells();

template <class T, int W, bool Packed, bool Bulk = false>
__host__ __device__ constexpr TileStrides warp_tile_strides(int len0, int len1) {
  if constexpr (Packed) {
    constexpr int C = static_cast<int>(128 / sizeof(Cplx<T>)), K = 2;
    int sy = len0, sz = 0;
    while (sy % C != W % C) ++sy;
    sz = sy * len1;
    while ((K * sz - W * W) % C != 0) ++sz;
    return {sy, sz};
  } else {
    const int sy = tile_row_stride<T, W>(len0, Bulk ? bulk_cells<T>() : 1);
    return {sy, sy * len1};
  }
}

// Bulk rows: at a tile flush, each row of the tile is added to the grid by one bulk asynchronous
// reduction (sm_90, cp.reduce.async.bulk .add: the copy engine reads the row from shared memory
// and adds it in L2), two where it wraps around the grid in x, instead of a load, a zero test
// and a vector atomic per cell from the threads. Rows must start and end on 16-byte units in
// both memories: float tiles start on an even grid cell (origin moved down by one where
// bin start − W/2 is odd) and hold an even number of cells a row. Cells per 16 bytes:
template <class T>
constexpr int bulk_cells() {
  return sizeof(Cplx<T>) >= 16 ? 1 : static_cast<int>(16 / sizeof(Cplx<T>));
}

// Cells a row of a bulk tile holds: the footprints' tile_len(bin0, W) from bin start − W/2,
// the origin moved down to a multiple A of cells (by (W/2) mod A where A divides the bins, by up
// to A − 1 otherwise) and the length rounded up to a multiple of A.
template <class T, int W>
__host__ __device__ constexpr int bulk_tile_len0(int bin0) {
  constexpr int A = bulk_cells<T>();
  const int shift = bin0 % A == 0 ? (A - (W / 2) % A) % A : A - 1;
  return (tile_len(bin0, W) + shift + A - 1) / A * A;
}

// Whether spread_tile may flush g's tiles by bulk rows: the grid's rows hold whole 16-byte units
// and a tile row wraps around the grid at most once.
template <class T, int W>
__host__ __device__ inline bool bulk_rows_fit(const DevGrid& g) {
  return g.bulk != 0 && g.nf[0] % bulk_cells<T>() == 0 && bulk_tile_len0<T, W>(g.bin[0]) <= g.nf[0];
}

// The PTX of the bulk rows (sm_90). fence.proxy.async makes a thread's shared-memory stores
// visible to the copy engine; the reductions of a thread form a bulk group, and
// wait_group.read returns once the engine has read their sources.
template <class T>
__device__ inline void bulk_add_row(Cplx<T>* dst, const Cplx<T>* src, int cells) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(src));
  const unsigned bytes = static_cast<unsigned>(cells * sizeof(Cplx<T>));
  if constexpr (sizeof(T) == 4)
    asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%0], [%1], %2;" ::"l"(dst), "r"(s),
                 "r"(bytes)
                 : "memory");
  else
    asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f64 [%0], [%1], %2;" ::"l"(dst), "r"(s),
                 "r"(bytes)
                 : "memory");
#else
  __trap();  // the launcher takes bulk rows on sm_90 and later only
#endif
}

__device__ inline void bulk_fence_shared() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
#endif
}

__device__ inline void bulk_commit_and_wait_read() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("cp.async.bulk.commit_group;" ::: "memory");
  asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
#endif
}

// Adds the rows of a bulk tile (origin[0] and len[0] on whole 16-byte units, bulk_rows_fit) to
// the grid gb: rows first, first + step, ... of the len[1]·len[2] rows, sy cells apart in a
// plane and planes sz apart. Returns once the engine has read them; the caller's stores to the
// tile must have been fenced (bulk_fence_shared) and the block synchronised before.
template <class T>
__device__ inline void bulk_add_tile_rows(const Cplx<T>* tile, const int* origin, const int* len, int sy, int sz,
                                          const DevGrid& g, Cplx<T>* gb, int first, int step) {
  const int nfx = static_cast<int>(g.nf[0]), nfy = static_cast<int>(g.nf[1]), nfz = static_cast<int>(g.nf[2]);
  const int x0 = origin[0] < 0 ? origin[0] + nfx : origin[0];
  const int n1 = len[0] < nfx - x0 ? len[0] : nfx - x0;  // cells before the row wraps
  for (int r = first; r < len[1] * len[2]; r += step) {
    const int lz = r / len[1], ly = r - lz * len[1];
    const int iy = ((origin[1] + ly) % nfy + nfy) % nfy, iz = ((origin[2] + lz) % nfz + nfz) % nfz;
    const Cplx<T>* src = tile + lz * sz + ly * sy;
    Cplx<T>* dst = gb + (static_cast<std::int64_t>(iz) * nfy + iy) * nfx;
    bulk_add_row(dst + x0, src, n1);
    if (n1 < len[0]) bulk_add_row(dst, src + n1, len[0] - n1);
  }
  bulk_commit_and_wait_read();
}

// Strides of a warp tile. A kernel instantiated for fixed bin sizes (BX > 0: the planner's 3D
// default, tile_bins) gets them as constants, so that every cell address of a footprint is a
// base register plus an immediate: with runtime strides each cell costs an IADD3 and a LEA (SASS
// of case B: 45 of 171 instructions per point).
template <class T, int W, int BX, int BY, bool Packed = false, bool Bulk = false>
__device__ inline void tile_strides(const int* len, int& sy, int& sz) {
  if constexpr (BX > 0) {
    constexpr int kLen0 = Bulk ? bulk_tile_len0<T, W>(BX) : tile_len(BX, W);
    constexpr TileStrides kS = warp_tile_strides<T, W, Packed, Bulk>(kLen0, tile_len(BY, W));
    sy = kS.sy;
    sz = kS.sz;
  } else {
    const TileStrides st = warp_tile_strides<T, W, Packed, Bulk>(len[0], len[1]);
    sy = st.sy;
    sz = st.sz;
  }
}

// The global inputs of a warp-tile kernel's points (one per lane, in groups of 32), loaded a
// group ahead of their use: the Horner variables, first cells and strength of step k + 1 while
// step k is spread, and the sorted index perm of step k + 2 (the strength's address depends on
// it). Steps k = b·ngroups + group run over the transforms b and the subproblem's groups. Loaded
// when its group began, the warp waited for global memory twice per group: ncu on case B put a
// third of spread_tile's stall samples in the group set-up, ~20 % at the first uses of t, perm
// and c.
template <class T, int D>
struct PointInputs {
  const DevPoints<T>& p;
  const Cplx<T>* c;
  std::int64_t c_stride, j0, j1;
  int lane, ngroups, nsteps;
  unsigned t_mask;  // dimensions whose Horner variables this warp loads
  bool i0_on;       // whether it loads the first cells
  bool c_on;        // whether it loads perm and the strengths
  T t[D];           // step k's Horner variables,
  int i0[D];        // first footprint cells
  Cplx<T> cv;       // and strength, k the step last fetched
  std::int64_t pn;  // perm of the step after it

  __device__ PointInputs(const DevPoints<T>& pts, const Cplx<T>* strengths, std::int64_t stride, std::int64_t begin,
                         std::int64_t end, int nbatch, int l, unsigned tm = (1u << D) - 1, bool first_cells = true,
                         bool strengths_on = true)
      : p(pts), c(strengths), c_stride(stride), j0(begin), j1(end), lane(l),
        ngroups(static_cast<int>((end - begin + 31) / 32)), nsteps(ngroups * nbatch), t_mask(tm),
        i0_on(first_cells), c_on(strengths_on), pn(0) {
    fetch_perm(0);
  }
  // This lane's point of step k, or -1 (past the subproblem or the last step).
  __device__ std::int64_t point(int k) const {
    if (k >= nsteps) return -1;
    const std::int64_t j = j0 + static_cast<std::int64_t>(k % ngroups) * 32 + lane;
    return j < j1 ? j : -1;
  }
  __device__ void fetch_perm(int k) {
    const std::int64_t j = c_on ? point(k) : -1;
    if (j >= 0) pn = p.perm[j];
  }
  // Step k's inputs (pn holds its perm), then the perm of step k + 1.
  __device__ void fetch(int k) {
    const std::int64_t j = point(k);
    if (j >= 0) {
#pragma unroll
      for (int d = 0; d < D; ++d) {
        if (t_mask >> d & 1u) t[d] = p.t[d][j];
        if (i0_on) i0[d] = p.i0[d][j];
      }
      if (c_on) cv = c[(k / ngroups) * c_stride + pn];
    }
    fetch_perm(k + 1);
  }
};

// Barrier of the K warps of a warp-tile block.
template <int K>
__device__ inline void tile_sync() {
  if constexpr (K == 1) __syncwarp();
  else __syncthreads();
}

// Warps sharing a 3D warp tile (spread_tile's K). H100, ms for K = 2 -> 4: B 3.19 -> 4.86, C
// 37.8 -> 60.2 (each warp reloads a point's parameters for one or two planes).
constexpr int kTileWarps = 2;

// The bin sizes with fixed-stride instantiations of the warp-tile kernels (3D, W <= 8).
constexpr int kTileBins[3] = {16, 8, 4};
// The bins of the tensor-core tiles (spread_tc.cuh): 8 wide, so that a footprint's x cells fit
// 16 columns of the products (16x8x4: 11 % slower on case F's spread, the products a third
// larger).
constexpr int kTcBins[3] = {8, 8, 4};

// Alignment (bytes) for a vector load of n values of T: the largest power of two up to 16
// dividing their size.
template <class T>
constexpr std::size_t vec_align(int n) {
  std::size_t a = 16;
  while (a > alignof(T) && (sizeof(T) * static_cast<std::size_t>(n)) % a != 0) a /= 2;
  return a;
}

template <class T, int D, int W, int BX = 0, int BY = 0, int K = 1, bool Bulk = false>
__global__ void __launch_bounds__(32 * K)
    spread_tile(DevPoints<T> p, DevGrid g, const T* __restrict__ horner, int degree, const Cplx<T>* __restrict__ c,
                std::int64_t c_stride, Cplx<T>* __restrict__ grid, int nbatch, Subproblems sp) {
  static_assert(K == 1 || D == 3, "several warps per tile own planes: 3D only");
  constexpr bool kPacked = packed_rows<D, W, K>();
  constexpr int XL = kPacked ? W : tile_x_lanes<W>();
  constexpr int RG = 32 / XL;                                           // row groups
  constexpr int kRowsY = D > 1 && !kPacked ? (W + RG - 1) / RG : 1;     // y rows per lane
  constexpr int kRowsZ = D > 2 ? (W + K - 1) / K : 1;                   // footprint planes per warp (at most)
  constexpr int kAccess = kPacked ? (kRowsZ * W + RG - 1) / RG : 1;     // packed: accesses per point
  static_assert(!kPacked || W % K == 0, "packed rows: every warp has the same planes");
  // Planes per load-then-store chunk: at most 16 cells (32 values of T) in flight per lane.
  constexpr int kChunkZ = (16 / kRowsY < 1 ? 1 : (16 / kRowsY > kRowsZ ? kRowsZ : 16 / kRowsY));
  // What a lane reads of one point of the group, three loads (float, 3D, K = 2, W = 6: an
  // LDS.128 broadcast of the head, an LDS.64 each of the strength times x weight and of the y
  // weights). Shared memory bounds the kernel (ncu on case B: 94 % of its pipe, 56 wavefronts
  // per point), and these loads were a quarter of its wavefronts when the strength, offset,
  // last-plane flag and z weights took two 128-bit loads and the z weights of W = 6 three scalar
  // ones (an LDS.128 costs two wavefronts even as a broadcast, a scalar or 64-bit load one).
  // With K warps, warp k applies the footprint planes oz0, oz0 + K, ... (oz0 = (k - l2) mod K)
  // that fall on its tile planes (z % K == k); the last may lie past the footprint, unless K
  // divides W.
  // The head holds the z weights of the warp's planes (0 past the footprint) and, where both
  // fit one 16-byte load, the offset; else the offset is a separate 32-bit load (the head
  // padded to 32 bytes would cost E and F a block per SM).
  // Offset: of the warp's first footprint cell in the tile; where kLastVaries, times 2 plus
  // whether the warp's last plane slot is in the footprint.
  constexpr bool kLastVaries = K > 1 && W % K != 0;
  constexpr bool kOffInHead = (kRowsZ + 1) * sizeof(T) <= 16;
  struct alignas(16) HeadWithOffset {
    T kz[kRowsZ];
    int off;
  };
  struct alignas(vec_align<T>(kRowsZ)) HeadWeights {
    T kz[kRowsZ];
  };
  using Head = std::conditional_t<kOffInHead, HeadWithOffset, HeadWeights>;
  struct alignas(vec_align<T>(kRowsY)) RowWeights {
    T v[kRowsY];  // y weights of rows rg, rg + RG, ... (0 past the footprint)
  };
  // Packed rows: a point's weights of the footprint rows rg, rg + RG, ... of one warp's planes
  // (y weight times z weight; 0 past them), one vector load per lane and point.
  struct alignas(vec_align<T>(kAccess)) PackedWeights {
    T v[kAccess];
  };
  extern __shared__ __align__(16) unsigned char smem_raw[];
  Cplx<T>* tile = reinterpret_cast<Cplx<T>*>(smem_raw);
  // Rows padded by one element: the set-up's stores (lane = point) hit distinct banks. Not in
  // bulk tiles, whose rows of 24 cells at W = 7 leave no room for the padding if a seventh block
  // is to fit an SM (bank conflicts in the set-up's stores instead).
  constexpr int kPad = Bulk ? 0 : 1;
  __shared__ Cplx<T> scx[32][XL + kPad];  // strength times x weight (0 past W)
  __shared__ RowWeights sky[kPacked ? 1 : 32][RG + kPad];
  __shared__ Head shd[K][32];
  __shared__ int soff[kOffInHead ? 1 : K][32];
  // Packed: the y weights of the group's points (rows padded by one value: distinct banks for
  // the set-up's accesses, lane = point), and each warp's row weights built from them.
  __shared__ T syw[kPacked ? 32 : 1][W + 1];
  __shared__ PackedWeights spw[kPacked ? K : 1][kPacked ? 32 : 1][RG];
  // Bulk tiles read the Horner table from global memory (through L1) instead of a staged copy:
  // the 576 bytes it takes at W = 7 in float are what a seventh block per SM lacks on E and F
  // once the tile rows are 24 cells.
  constexpr bool kStageHorner = !Bulk;
  __shared__ alignas(16) T sh[kStageHorner ? horner_smem<T, W>() : 1];
  const T* hz = kStageHorner ? stage_horner<T, W>(horner, degree, sh)
                             : static_cast<const T*>(__builtin_assume_aligned(horner, 16));

  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int s = blockIdx.x;
  int len[3], origin[3];
  bin_tile<D, W>(g, sp.bin[s], len, origin);
  if constexpr (Bulk) {  // rows on whole 16-byte units
    constexpr int A = bulk_cells<T>();
    origin[0] -= (origin[0] % A + A) % A;
    len[0] = bulk_tile_len0<T, W>(g.bin[0]);
  }
  int sy, sz;  // cells between rows, between planes
  tile_strides<T, W, BX, BY, kPacked, Bulk>(len, sy, sz);
  const int ncell = sz * len[2];
  const int ox = lane % XL, rg = lane / XL;
  const bool x_on = ox < W && rg < RG;  // packed: lanes past RG·XL idle
  const int lane_off = ox + rg * sy;
  bool row_on[kRowsY];  // this lane's rows (rg, rg + RG, ...) that fall inside the footprint
#pragma unroll
  for (int r = 0; r < kRowsY; ++r) row_on[r] = x_on && (D > 1 ? rg + r * RG < W : rg == 0);  // 1D: one row
  // Packed: in access a, row group rg covers the warp's footprint row a·RG + rg (y fastest,
  // then the warp's plane slots, K tile planes apart), where acc_on[a]; this lane's cell is
  // acc_cell[a] + the point's offset.
  const int rg_lane = rg < RG ? rg : 0;
  Cplx<T>* acc_cell[kAccess];
  bool acc_on[kAccess];
#pragma unroll
  for (int a = 0; a < kAccess; ++a) {
    const int r = a * RG + rg_lane;
    acc_on[a] = x_on && r < kRowsZ * W;
    acc_cell[a] = tile + ox + (r % W) * sy + (r / W) * K * sz;
  }
  struct PointParams {
    Head h;
    int off;
    Cplx<T> cx;
    RowWeights ky;
    PackedWeights pw;
  };
  auto load_params = [&](int q, PointParams& pp) {
    if constexpr (kPacked) {
      if constexpr (kOffInHead) pp.off = shd[warp][q].off;
      else pp.off = soff[warp][q];
      pp.pw = spw[warp][q][rg_lane];
    } else {
      pp.h = shd[warp][q];
      if constexpr (kOffInHead) pp.off = pp.h.off;
      else pp.off = soff[warp][q];
      pp.ky = sky[q][rg];
    }
    pp.cx = scx[q][ox];
  };
  // The group's set-up is shared out: the Horner weights of dimension d by warp d·K/3. The
  // owner of dimension 0 loads perm and the strengths; the owner of dimension D − 1, kRest, the
  // first cells, and writes the heads.
  constexpr int kRest = D == 3 ? 2 * K / 3 : 0;
  auto owns_dim = [&](int d) { return D < 3 ? warp == 0 : d * K / 3 == warp; };
  unsigned t_mask = 0;
  for (int d = 0; d < D; ++d)
    if (owns_dim(d)) t_mask |= 1u << d;
  PointInputs<T, D> in(p, c, c_stride, sp.begin[s], sp.end[s], nbatch, lane, t_mask, warp == kRest, owns_dim(0));
  for (int i = threadIdx.x; i < ncell; i += 32 * K) tile[i] = Cplx<T>{T(0), T(0)};
  in.fetch(0);
  for (int step = 0; step < in.nsteps; ++step) {
    const int b = step / in.ngroups, group = step - b * in.ngroups;
    {
      const std::int64_t left = in.j1 - in.j0 - 32 * static_cast<std::int64_t>(group);
      const int n = static_cast<int>(left < 32 ? left : 32);
      tile_sync<K>();  // the previous group's weights are no longer read; the zeroed tile is visible
      if (lane < n) {
        const int l2 = D > 2 && warp == kRest ? in.i0[D > 2 ? 2 : 0] - origin[2] : 0;  // >= 0
#pragma unroll
        for (int d = 0; d < D; ++d) {
          if (!owns_dim(d)) continue;
          T k[W];
          horner_weights<T, W>(hz, degree, in.t[d], k);
          if (d == 0) {
#pragma unroll
            for (int x = 0; x < XL; ++x) {
              const T kx = x < W ? k[x < W ? x : 0] : T(0);
              scx[lane][x] = Cplx<T>{in.cv.re * kx, in.cv.im * kx};
            }
          } else if (d == 1 && kPacked) {
#pragma unroll
            for (int y = 0; y < W; ++y) syw[kPacked ? lane : 0][y] = k[y];
          } else if (d == 1) {
#pragma unroll
            for (int r0 = 0; r0 < RG; ++r0)
#pragma unroll
              for (int r = 0; r < kRowsY; ++r) {
                const int oy = r0 + r * RG;
                sky[lane][r0].v[r] = oy < W ? k[oy < W ? oy : 0] : T(0);
              }
          } else {
            // Footprint plane oz lies on tile plane l2 + oz: warp (l2 + oz) % K, slot oz / K.
#pragma unroll
            for (int w = 0; w < K; ++w) shd[w][lane].kz[kRowsZ - 1] = T(0);
#pragma unroll
            for (int oz = 0; oz < W; ++oz) shd[(l2 + oz) % K][lane].kz[oz / K] = k[oz];
          }
        }
        if (warp == kRest) {
          const int l0 = in.i0[0] - origin[0];
          const int l1 = D > 1 ? in.i0[D > 1 ? 1 : 0] - origin[1] : 0;
          const int off = l2 * sz + l1 * sy + l0;
#pragma unroll
          for (int w = 0; w < K; ++w) {
            const int oz0 = ((w - l2) % K + K) % K;
            const int o = kLastVaries ? 2 * (off + oz0 * sz) + (oz0 + K * (kRowsZ - 1) < W ? 1 : 0) : off + oz0 * sz;
            if constexpr (kOffInHead) shd[w][lane].off = o;
            else soff[w][lane] = o;
          }
          if constexpr (D < 3) shd[0][lane].kz[0] = T(1);
          if constexpr (D < 2)
#pragma unroll
            for (int r0 = 0; r0 < RG; ++r0) sky[lane][r0].v[0] = r0 == 0 ? T(1) : T(0);
        }
      }
      in.fetch(step + 1);
      tile_sync<K>();
      if constexpr (kPacked) {
        // This warp's row weights of each point: y weight times the z weight of the row's plane
        // slot (the head's). Built here rather than by evaluating the y and z kernels in every
        // warp (two Horner evaluations are several times these loads and products).
        if (lane < n) {
          const Head h = shd[warp][lane];
          T ky[W];
#pragma unroll
          for (int y = 0; y < W; ++y) ky[y] = syw[lane][y];
#pragma unroll
          for (int r0 = 0; r0 < RG; ++r0) {
            PackedWeights pw;
#pragma unroll
            for (int a = 0; a < kAccess; ++a) {
              const int r = a * RG + r0;
              pw.v[a] = r < kRowsZ * W ? ky[r % W] * h.kz[r < kRowsZ * W ? r / W : 0] : T(0);
            }
            spw[warp][lane][r0] = pw;
          }
        }
        __syncwarp();
      }
      // 3D: point q + 1's parameters are read while point q is applied, so that each point
      // starts with its loads from the tile rather than with loads of its parameters (the
      // group's arrays do not change until the next group). H100, B 5.98 -> 5.35 ms; in 2D (two
      // cells per lane and point) it was slower, A 1.10 -> 1.23 ms.
      constexpr bool kPrefetch = D == 3;
      // 3D: the loop unrolled by two, the parameters of one point loaded while the other is
      // applied, so that neither set is copied (packed rows first; plain rows since round 10).
      auto apply_packed = [&](const PointParams& pp) {
        Cplx<T>* cell[kAccess];
        Cplx<T> v[kAccess];
#pragma unroll
        for (int a = 0; a < kAccess; ++a) {
          cell[a] = acc_cell[a] + pp.off;
          if (acc_on[a]) v[a] = *cell[a];
        }
#pragma unroll
        for (int a = 0; a < kAccess; ++a) {
          v[a].re += pp.cx.re * pp.pw.v[a];
          v[a].im += pp.cx.im * pp.pw.v[a];
          if (acc_on[a]) *cell[a] = v[a];
        }
        __syncwarp();  // the next point may touch the cells just written by other lanes
      };
      // Plain rows: the lane's rows rg, rg + RG, ... of each of the warp's plane slots.
      auto apply_plain = [&](const PointParams& pp) {
        const T cre = pp.cx.re, cim = pp.cx.im;
        const bool last_on = !kLastVaries || (pp.off & 1) != 0;
        Cplx<T>* base = tile + (kLastVaries ? pp.off >> 1 : pp.off) + lane_off;
        // A chunk of this lane's cells (up to kChunkZ planes) is loaded before any is stored:
        // written as one load-add-store per cell, the compiler must assume that a store may
        // alias the next load and runs the round trips to shared memory one after another
        // (SASS of case B: 14 LDS → FFMA → STS chains per point, the kernel's main stall).
#pragma unroll
        for (int z0 = 0; z0 < kRowsZ; z0 += kChunkZ) {
          Cplx<T> v[kChunkZ][kRowsY];
#pragma unroll
          for (int oz = 0; oz < kChunkZ; ++oz)
#pragma unroll
            for (int r = 0; r < kRowsY; ++r)
              if (z0 + oz < kRowsZ && row_on[r] && (z0 + oz < kRowsZ - 1 || last_on))
                v[oz][r] = base[(z0 + oz) * K * sz + r * RG * sy];
#pragma unroll
          for (int oz = 0; oz < kChunkZ; ++oz) {
            if (z0 + oz >= kRowsZ) continue;
#pragma unroll
            for (int r = 0; r < kRowsY; ++r) {
              if (!row_on[r] || !(z0 + oz < kRowsZ - 1 || last_on)) continue;
              const T wgt = pp.ky.v[r] * pp.h.kz[z0 + oz < kRowsZ ? z0 + oz : 0];
              v[oz][r].re += cre * wgt;
              v[oz][r].im += cim * wgt;
              base[(z0 + oz) * K * sz + r * RG * sy] = v[oz][r];
            }
          }
        }
        __syncwarp();  // the next point may touch the cells just written by other lanes
      };
      auto apply = [&](const PointParams& pp) {
        if constexpr (kPacked) apply_packed(pp);
        else apply_plain(pp);
      };
      PointParams cur, next;
      if constexpr (kPrefetch) {
        load_params(0, cur);
        for (int q = 0; q < n; q += 2) {
          if (q + 1 < n) load_params(q + 1, next);
          apply(cur);
          if (q + 1 >= n) break;
          if (q + 2 < n) load_params(q + 2, cur);
          apply(next);
        }
      } else {
        for (int q = 0; q < n; ++q) {
          load_params(q, cur);
          apply(cur);
        }
      }
    }
    if (group == in.ngroups - 1) {
      if constexpr (Bulk) {
        bulk_fence_shared();
        tile_sync<K>();
        bulk_add_tile_rows(tile, origin, len, sy, sz, g, grid + b * g.size, threadIdx.x, 32 * K);
        if (b + 1 < nbatch) {
          tile_sync<K>();  // every row read: zero the tile for the next transform
          zero_tile(tile, ncell, threadIdx.x, 32 * K);
        }
      } else {
        tile_sync<K>();
        // Lanes over consecutive tile cells: a row-by-row loop, which wraps each row once but
        // leaves 9 of 32 lanes idle on 23-cell rows, measured 1.7x slower on case B.
        add_tile_to_grid<kPacked>(tile, origin, len, sy, sz, g, reinterpret_cast<T*>(grid + b * g.size), threadIdx.x,
                                  32 * K, b + 1 < nbatch);
      }
    }
  }
}

// Register boxes (3D warp tiles on dense points, DevGrid::boxes). The points of a subproblem
// are sorted by the 2x2x2-cell box of their first footprint cell l (point_bin, sub-bins 2x2x2),
// so consecutive points mostly share a box; the union of the footprints of a box's points is
// (W + 1)^3 cells, 16 per lane at W = 7 (lane = x offset, 2 rows y, W + 1 planes z), held in
// registers. Each point adds its weights there (zero outside its own footprint) with no
// shared-memory traffic but its parameters; when the box changes, the registers are added to the
// shared tile once. spread_tile instead makes a load-add-store round trip to shared memory per
// cell and point, which bounds it (ncu on case B: shared-memory pipe ~70 %, 6 warps per SM).
// The same idea as holding the updates of a point group in registers in the compute floors of
// shared/BENCHMARKS.md; W <= 7 so that the union rows fit 8 x-lanes. H100, same run: C (1 point
// per fine cell) 55.0 -> 49.2 ms, B (0.6) 4.47 -> 4.44; sparse E (0.12, a flush per point)
// 12.2 -> 14.6, F 0.217 -> 0.260. Against spread_tile with two warps per tile they pay only from
// ~1.2 points per cell (cuda_plan.cu, kBoxDensity).
// Both kernels issue ~200 instructions per point and are latency bound at 6 warps per SM
// (the 30 KiB tile); see docs/benchmarks.md.
template <class T, int W, int BX = 0, int BY = 0>
__global__ void __launch_bounds__(32)
    spread_tile_boxes(DevPoints<T> p, DevGrid g, const T* __restrict__ horner, int degree,
                      const Cplx<T>* __restrict__ c, std::int64_t c_stride, Cplx<T>* __restrict__ grid, int nbatch,
                      Subproblems sp) {
  constexpr int U = W + 1;                 // union cells per dimension of a 2-cell box
  static_assert(U <= 8, "register boxes need W + 1 <= 8 x-lanes");
  constexpr int XL = 8, RG = 4;
  constexpr int kRowsY = (U + RG - 1) / RG;  // y rows per lane
  extern __shared__ __align__(16) unsigned char smem_raw[];
  Cplx<T>* tile = reinterpret_cast<Cplx<T>*>(smem_raw);
  __shared__ Cplx<T> scx[32][U];  // strength times x weight, union-aligned (zero outside the footprint)
  __shared__ T swy[32][U], swz[32][U];
  __shared__ int sbox[32];        // tile offset of the point's union origin (identifies its box)
  __shared__ alignas(16) T sh[horner_smem<T, W>()];
  const T* hz = stage_horner<T, W>(horner, degree, sh);

  const int lane = threadIdx.x;
  const int s = blockIdx.x;
  int len[3], origin[3];
  bin_tile<3, W>(g, sp.bin[s], len, origin);
  int sy, sz;
  tile_strides<T, W, BX, BY>(len, sy, sz);
  const int ncell = sz * len[2];
  const int ox = lane % XL, rg = lane / XL;
  const bool x_on = ox < U;
  const int lane_off = ox + rg * sy;
  Cplx<T> acc[kRowsY][U];

  // Adds the registers to the tile cells of the box with union origin o (skipping union cells
  // past the tile: with an odd bin, a box starting at l = bin - 1 reaches one cell beyond it,
  // with zero weight), then
  // clears them. Loads first, then stores (see spread_tile).
  auto flush = [&](int o) {
    const int oz = o / sz, rem = o - oz * sz, oy = rem / sy, oxx = rem - oy * sy;
    const bool xin = x_on && oxx + ox < len[0];
    Cplx<T>* base = tile + o + lane_off;
    Cplx<T> v[kRowsY][U];
#pragma unroll
    for (int r = 0; r < kRowsY; ++r)
#pragma unroll
      for (int z = 0; z < U; ++z)
        if (xin && rg + r * RG < U && oy + rg + r * RG < len[1] && oz + z < len[2]) v[r][z] = base[z * sz + r * RG * sy];
#pragma unroll
    for (int r = 0; r < kRowsY; ++r)
#pragma unroll
      for (int z = 0; z < U; ++z) {
        if (xin && rg + r * RG < U && oy + rg + r * RG < len[1] && oz + z < len[2])
          base[z * sz + r * RG * sy] = Cplx<T>{v[r][z].re + acc[r][z].re, v[r][z].im + acc[r][z].im};
        acc[r][z] = Cplx<T>{T(0), T(0)};
      }
    __syncwarp();  // the next box's cells may be read by other lanes
  };

  PointInputs<T, 3> in(p, c, c_stride, sp.begin[s], sp.end[s], nbatch, lane);
  for (int i = lane; i < ncell; i += 32) tile[i] = Cplx<T>{T(0), T(0)};
#pragma unroll
  for (int r = 0; r < kRowsY; ++r)
#pragma unroll
    for (int z = 0; z < U; ++z) acc[r][z] = Cplx<T>{T(0), T(0)};
  in.fetch(0);
  int cur = -1;  // union origin of the box in the registers; warp-uniform
  for (int step = 0; step < in.nsteps; ++step) {
    const int b = step / in.ngroups, group = step - b * in.ngroups;
    {
      const std::int64_t left = in.j1 - in.j0 - 32 * static_cast<std::int64_t>(group);
      const int n = static_cast<int>(left < 32 ? left : 32);
      __syncwarp();  // the previous group's parameters are no longer read; the zeroed tile is visible
      if (lane < n) {
        const Cplx<T> cv = in.cv;
        int o = 0;
#pragma unroll
        for (int d = 2; d >= 0; --d) {
          T k[W];
          horner_weights<T, W>(hz, degree, in.t[d], k);
          const int l = in.i0[d] - origin[d], dd = l & 1;
          o += (l - dd) * (d == 2 ? sz : d == 1 ? sy : 1);
#pragma unroll
          for (int u = 0; u < U; ++u) {
            const T v = dd ? (u >= 1 ? k[u >= 1 ? u - 1 : 0] : T(0)) : (u < W ? k[u < W ? u : 0] : T(0));
            if (d == 0) scx[lane][u] = Cplx<T>{cv.re * v, cv.im * v};
            else if (d == 1) swy[lane][u] = v;
            else swz[lane][u] = v;
          }
        }
        sbox[lane] = o;
      }
      in.fetch(step + 1);
      __syncwarp();
      for (int q = 0; q < n; ++q) {
        const int o = sbox[q];
        if (o != cur) {
          if (cur >= 0) flush(cur);
          cur = o;
        }
        const Cplx<T> cx = x_on ? scx[q][ox] : Cplx<T>{T(0), T(0)};
        T wz[U];
#pragma unroll
        for (int z = 0; z < U; ++z) wz[z] = swz[q][z];
#pragma unroll
        for (int r = 0; r < kRowsY; ++r) {
          const int uy = rg + r * RG;
          const T wy = uy < U ? swy[q][uy < U ? uy : 0] : T(0);
          const T are = cx.re * wy, aim = cx.im * wy;
#pragma unroll
          for (int z = 0; z < U; ++z) {
            acc[r][z].re += are * wz[z];
            acc[r][z].im += aim * wz[z];
          }
        }
      }
    }
    if (group == in.ngroups - 1) {
      if (cur >= 0) flush(cur);
      cur = -1;
      __syncwarp();
      add_tile_to_grid(tile, origin, len, sy, sz, g, reinterpret_cast<T*>(grid + b * g.size), lane, 32, b + 1 < nbatch);
    }
  }
}

// Shared memory (bytes) of the tile of a warp-tile block (spread_tile, spread_tile_boxes).
template <class T, int W, bool Packed, bool Bulk = false>
std::size_t spread_tile_bytes(int dim, const int* bin) {
  const TileStrides st = warp_tile_strides<T, W, Packed, Bulk>(Bulk ? bulk_tile_len0<T, W>(bin[0]) : tile_len(bin[0], W),
                                                               dim > 1 ? tile_len(bin[1], W) : 1);
  return static_cast<std::size_t>(st.sz) * (dim > 2 ? tile_len(bin[2], W) : 1) * sizeof(Cplx<T>);
}

// One thread per sorted point gathers W^D cells.
template <class T, int D, int W>
__global__ void interp_nupts(DevPoints<T> p, DevGrid g, const T* __restrict__ horner, int degree,
                             const Cplx<T>* __restrict__ grid, Cplx<T>* __restrict__ c, std::int64_t c_stride,
                             int nbatch) {
  __shared__ alignas(16) T sh[horner_smem<T, W>()];
  const T* hz = stage_horner<T, W>(horner, degree, sh);
  const std::int64_t j = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (j >= p.m) return;
  PointFootprint<T, D, W> f;
  point_footprint<T, D, W>(p, j, g, hz, degree, f);
  const std::int64_t dst = p.perm[j];
  for (int b = 0; b < nbatch; ++b) {
    const Cplx<T>* gb = grid + b * g.size;
    T re = 0, im = 0;
    for (int kz = 0; kz < (D > 2 ? W : 1); ++kz)
      for (int ky = 0; ky < (D > 1 ? W : 1); ++ky) {
        const Cplx<T>* row = gb + row_offset(f, g, ky, kz);
        T rr = 0, ri = 0;
        for (int kx = 0; kx < W; ++kx) {
          const Cplx<T> v = row[f.idx[0][kx]];
          rr += v.re * f.k[0][kx];
          ri += v.im * f.k[0][kx];
        }
        const T wyz = row_weight(f, ky, kz);
        re += wyz * rr;
        im += wyz * ri;
      }
    c[b * c_stride + dst] = {re, im};
  }
}

// Interpolation from a shared-memory copy of a subproblem's tile (3D). The block loads the
// padded tile (tile_len cells per dimension) with coalesced reads once, then each thread gathers
// its points' W³ cells from shared memory: interp_nupts gathers the same cells through L1,
// which bounds it (ncu on case H: L1/TEX throughput 90 %).
template <class T, int D, int W>
__global__ void __launch_bounds__(128)
    interp_tile(DevPoints<T> p, DevGrid g, const T* __restrict__ horner, int degree,
                const Cplx<T>* __restrict__ grid, Cplx<T>* __restrict__ c, std::int64_t c_stride, int nbatch,
                Subproblems sp) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  Cplx<T>* tile = reinterpret_cast<Cplx<T>*>(smem_raw);
  __shared__ alignas(16) T sh[horner_smem<T, W>()];
  const T* hz = stage_horner<T, W>(horner, degree, sh);
  const int s = blockIdx.x;
  int len[3], origin[3];
  bin_tile<D, W>(g, sp.bin[s], len, origin);
  // Rows padded by a cell and planes by a row (loaded: the next grid row), interp_tile_bytes.
  // With tile_len rows and planes (21 and 13 cells at W = 6, 16x8x8 bins: strides 5 and 1 mod 16
  // cells), neighbouring points of a warp gathered from the same banks more often than with
  // these strides (6 and 4 mod 16, those of the tiles of bin + W cells before): H100, H 1.85 ->
  // 1.93 ms, I 19.5 -> 21.0.
  const int sy = len[0] + 1;
  len[1] += 1;
  const int sz = sy * len[1];
  const std::int64_t j0 = sp.begin[s], j1 = sp.end[s];
  // A point's weights and tile offsets. When the subproblem has at most one point per thread
  // (sparse problems: ~60 points on case K), they are evaluated once for all transforms
  // (H100: K 8.52 -> 8.32 ms).
  T k[D][W];
  int l[3] = {0, 0, 0};
  auto weights = [&](std::int64_t j) {
#pragma unroll
    for (int d = 0; d < D; ++d) {
      horner_weights<T, W>(hz, degree, p.t[d][j], k[d]);
      l[d] = p.i0[d][j] - origin[d];
    }
  };
  const bool one_each = j1 - j0 <= blockDim.x;
  if (one_each && j0 + threadIdx.x < j1) weights(j0 + threadIdx.x);
  for (int b = 0; b < nbatch; ++b) {
    const Cplx<T>* gb = grid + b * g.size;
    if (b > 0) __syncthreads();  // the previous transform's tile is no longer read
    // Asynchronous copies (cp.async, sm_80+): all of a thread's cells are in flight at once.
    // As plain loads and stores, each cell waited for its load before the next was issued
    // (~30 round trips to memory per thread and tile).
    for_tile_cells(origin, len, sy, sz, g, threadIdx.x, blockDim.x,
                   [&](int i, int gi) { __pipeline_memcpy_async(tile + i, gb + gi, sizeof(Cplx<T>)); });
    __pipeline_commit();
    __pipeline_wait_prior(0);
    __syncthreads();
    for (std::int64_t j = j0 + threadIdx.x; j < j1; j += blockDim.x) {
      if (!one_each) weights(j);
      T re = T(0), im = T(0);
#pragma unroll
      for (int kz = 0; kz < (D > 2 ? W : 1); ++kz)
#pragma unroll
        for (int ky = 0; ky < (D > 1 ? W : 1); ++ky) {
          const Cplx<T>* row = tile + ((l[2] + kz) * len[1] + (l[1] + ky)) * sy + l[0];
          T rr = T(0), ri = T(0);
#pragma unroll
          for (int kx = 0; kx < W; ++kx) {
            const Cplx<T> v = row[kx];
            rr += v.re * k[0][kx];
            ri += v.im * k[0][kx];
          }
          T wyz = D > 1 ? k[D > 1 ? 1 : 0][ky] : T(1);
          if constexpr (D > 2) wyz *= k[2][kz];
          re += wyz * rr;
          im += wyz * ri;
        }
      c[b * c_stride + p.perm[j]] = {re, im};
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Modes <-> fine grid with deconvolution (the same tables as the CPU backend).

struct ModeMap {
  std::int64_t n[3];
  const std::int64_t* fine_index[3];
};

// to_modes: f = fine * d1 d2 d3 (type 1). Otherwise fine = f * d1 d2 d3 (type 2; fine pre-zeroed).
// A warp takes kCopySegment modes of one row along x (lanes over consecutive modes), so that
// the row's y and z indices and factors are found once per warp; one thread per mode with 64-bit
// divisions took 5.4 us for F's 64^3 modes on an H100.
constexpr int kCopySegment = 256;

template <class T>
__global__ void copy_modes(ModeMap mm, const T* __restrict__ d0, const T* __restrict__ d1, const T* __restrict__ d2,
                           DevGrid g, Cplx<T>* fine, Cplx<T>* f, int nbatch, bool to_modes) {
  const std::int64_t nseg = (mm.n[0] + kCopySegment - 1) / kCopySegment;
  const std::int64_t items = nseg * mm.n[1] * mm.n[2] * nbatch;
  const int lane = threadIdx.x % 32;
  const std::int64_t warps = std::int64_t(gridDim.x) * (blockDim.x / 32);
  for (std::int64_t it = (blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x) / 32; it < items; it += warps) {
    const std::int64_t row = it / nseg, seg = it - row * nseg;
    const std::int64_t p2 = row % mm.n[1], rest = row / mm.n[1], p3 = rest % mm.n[2], b = rest / mm.n[2];
    const T s23 = d1[p2] * d2[p3];
    const std::int64_t grow = b * g.size + (mm.fine_index[2][p3] * g.nf[1] + mm.fine_index[1][p2]) * g.nf[0];
    Cplx<T>* frow = f + row * mm.n[0];
    const std::int64_t end = (seg + 1) * kCopySegment < mm.n[0] ? (seg + 1) * kCopySegment : mm.n[0];
    for (std::int64_t p1 = seg * kCopySegment + lane; p1 < end; p1 += 32) {
      const std::int64_t gi = grow + mm.fine_index[0][p1];
      const T sc = d0[p1] * s23;
      if (to_modes) frow[p1] = fine[gi] * sc;
      else fine[gi] = frow[p1] * sc;
    }
  }
}

}  // namespace fieldft::cuda
