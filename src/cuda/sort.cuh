// Point validation and the bin sort of the NUFFT's points (count, scatter, gather).
#pragma once

#include "cuda/nufft_device.cuh"

namespace fieldft::cuda {

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

// First index (atomicMin) of a finite coordinate beyond the fold limit (detail::within_fold_limit,
// the CPU's test); *bad starts at ULLONG_MAX. Run after find_non_finite, as the CPU checks.
template <class T>
__global__ void find_beyond_fold_limit(std::int64_t m, const T* __restrict__ x, double limit, unsigned long long* bad) {
  for (std::int64_t j = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; j < m;
       j += std::int64_t(gridDim.x) * blockDim.x)
    if (!fieldft::detail::within_fold_limit(static_cast<double>(x[j]), limit))
      atomicMin(bad, static_cast<unsigned long long>(j));
}

}  // namespace fieldft::cuda
