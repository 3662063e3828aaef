// CUDA kernels of the time-segmented encoding (declarations and contract in
// src/cuda/time_segmentation.hpp): grid-stride loops over the indices of each pass, each
// evaluating the per-point function shared with the host (include/fieldft/detail/time_segmentation.hpp).
// The tables travel by value as a kernel argument (pointers and sizes), so a launch needs no
// device memory of its own. Consecutive threads take consecutive voxels or samples, so every
// read and write of the stacked vectors is coalesced.
#include <cuda_runtime.h>

#include <complex>
#include <cstdint>

#include "cuda/cuda_check.cuh"
#include "cuda/device_utils.cuh"
#include "cuda/grid_stride.cuh"
#include "cuda/time_segmentation.hpp"

namespace fieldft::cuda::tseg {

namespace {

namespace dt = detail::tseg;
using detail::Cplx;

enum class Pass : int { kExpand, kReduce, kCombine, kSpread };

template <class T, Pass kPass>
__global__ void pass_kernel(SegmentTables<T> g, std::int64_t count, const Cplx<T>* __restrict__ in,
                            Cplx<T>* __restrict__ out) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    if constexpr (kPass == Pass::kExpand)
      dt::expand_point(g, in, out, i);
    else if constexpr (kPass == Pass::kReduce)
      dt::reduce_point(g, in, out, i);
    else if constexpr (kPass == Pass::kCombine)
      dt::combine_point(g, in, out, i);
    else
      dt::spread_point(g, in, out, i);
  }
}

template <class T, Pass kPass>
void launch(int device, void* stream, const SegmentTables<T>& g, std::int64_t count, const std::complex<T>* in,
            std::complex<T>* out) {
  if (count == 0) return;
  DeviceGuard guard(device);
  pass_kernel<T, kPass><<<stride_blocks(count), kStrideThreads, 0, static_cast<cudaStream_t>(stream)>>>(
      g, count, reinterpret_cast<const Cplx<T>*>(in), reinterpret_cast<Cplx<T>*>(out));
  FIELDFT_CUDA_CHECK_LAUNCH();
}

template <class T>
__global__ void phase_images_kernel(const T* __restrict__ field, const double* __restrict__ tau, std::int64_t n,
                                    std::int64_t count, Cplx<T>* __restrict__ b) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
    const std::int64_t l = i / n, v = i - l * n;
    const T phase = field ? -field[v] * static_cast<T>(tau[l]) : T(0);
    T sn, cs;
    if constexpr (sizeof(T) == 4)
      sincosf(phase, &sn, &cs);  // the accurate ones (not __sincosf): phases reach hundreds of radians
    else
      sincos(phase, &sn, &cs);
    b[i] = Cplx<T>{cs, sn};
  }
}

}  // namespace

template <class T>
void phase_images(int device, void* stream, const T* field, const double* tau, std::int64_t n, int segs,
                  std::complex<T>* b) {
  const std::int64_t count = n * segs;
  if (count == 0) return;
  DeviceGuard guard(device);
  phase_images_kernel<T><<<stride_blocks(count), kStrideThreads, 0, static_cast<cudaStream_t>(stream)>>>(
      field, tau, n, count, reinterpret_cast<Cplx<T>*>(b));
  FIELDFT_CUDA_CHECK_LAUNCH();
}

template <class T>
void expand(int device, void* stream, const SegmentTables<T>& g, const std::complex<T>* x, std::complex<T>* u) {
  launch<T, Pass::kExpand>(device, stream, g, g.n * g.segments, x, u);
}

template <class T>
void reduce(int device, void* stream, const SegmentTables<T>& g, const std::complex<T>* u, std::complex<T>* x) {
  launch<T, Pass::kReduce>(device, stream, g, g.n * g.batch, u, x);
}

template <class T>
void combine(int device, void* stream, const SegmentTables<T>& g, const std::complex<T>* u, std::complex<T>* y) {
  launch<T, Pass::kCombine>(device, stream, g, g.m * g.batch, u, y);
}

template <class T>
void spread(int device, void* stream, const SegmentTables<T>& g, const std::complex<T>* y, std::complex<T>* u) {
  launch<T, Pass::kSpread>(device, stream, g, g.m * g.segments, y, u);
}

#define FIELDFT_TSEG_INSTANTIATE(T)                                                                        \
  template void expand<T>(int, void*, const SegmentTables<T>&, const std::complex<T>*, std::complex<T>*);  \
  template void reduce<T>(int, void*, const SegmentTables<T>&, const std::complex<T>*, std::complex<T>*);  \
  template void combine<T>(int, void*, const SegmentTables<T>&, const std::complex<T>*, std::complex<T>*); \
  template void spread<T>(int, void*, const SegmentTables<T>&, const std::complex<T>*, std::complex<T>*);  \
  template void phase_images<T>(int, void*, const T*, const double*, std::int64_t, int, std::complex<T>*);

FIELDFT_TSEG_INSTANTIATE(float)
FIELDFT_TSEG_INSTANTIATE(double)

#undef FIELDFT_TSEG_INSTANTIATE

}  // namespace fieldft::cuda::tseg
