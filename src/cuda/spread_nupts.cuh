// Spreading, one thread per sorted point with global atomics (Method::kNuptsDriven, and
// kPrecomputed with the weights stored at set_points, see thread_point_footprint).
#pragma once

#include "cuda/nufft_device.cuh"

namespace fieldft::cuda {

// One thread per sorted point, atomic adds into the fine grid in global memory.
template <class T, int D, int W, bool Pre>
__global__ void spread_nupts(DevPoints<T> p, DevGrid g, const T* __restrict__ horner, int degree,
                             const Cplx<T>* __restrict__ c, std::int64_t c_stride, Cplx<T>* __restrict__ grid,
                             int nbatch) {
  __shared__ alignas(16) T sh[Pre ? 1 : horner_smem<T, W>()];
  std::int64_t j = 0;
  PointFootprint<T, D, W> f;
  if (!thread_point_footprint<T, D, W, Pre>(p, g, horner, degree, sh, j, f)) return;
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

}  // namespace fieldft::cuda
