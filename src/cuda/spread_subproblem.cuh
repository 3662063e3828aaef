// Spreading by shared-memory subproblems with shared-memory atomics (Method::kSubproblem).
#pragma once

#include "cuda/nufft_device.cuh"

namespace fieldft::cuda {

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

}  // namespace fieldft::cuda
