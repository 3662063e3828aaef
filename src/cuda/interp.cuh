// Interpolation: one thread per sorted point (interp_nupts), or from a shared-memory copy of
// each subproblem's tile (interp_tile, 3D).
#pragma once

#include "cuda/nufft_device.cuh"

namespace fieldft::cuda {

// One thread per sorted point gathers W^D cells.
template <class T, int D, int W, bool Pre>
__global__ void interp_nupts(DevPoints<T> p, DevGrid g, const T* __restrict__ horner, int degree,
                             const Cplx<T>* __restrict__ grid, Cplx<T>* __restrict__ c, std::int64_t c_stride,
                             int nbatch) {
  __shared__ alignas(16) T sh[Pre ? 1 : horner_smem<T, W>()];
  std::int64_t j = 0;
  PointFootprint<T, D, W> f;
  if (!thread_point_footprint<T, D, W, Pre>(p, g, horner, degree, sh, j, f)) return;
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

}  // namespace fieldft::cuda
