// CUDA kernels of phase-corrected SENSE (declarations and contract in src/cuda/pcsense.hpp):
// grid-stride loops, one thread per voxel (expand, reduce) or per sample of one coil (gather,
// scatter), each evaluating the per-point function shared with the host
// (include/fieldft/detail/pcsense.hpp).
#include <cuda_runtime.h>

#include <complex>
#include <cstdint>

#include "cuda/cuda_check.cuh"
#include "cuda/device_utils.cuh"
#include "cuda/pcsense.hpp"
#include "fieldft/detail/pcsense.hpp"

namespace fieldft::cuda::pcsense {

namespace {

namespace dp = detail::pcsense;
using detail::Cplx;

constexpr int kThreads = 256;
constexpr std::int64_t kMaxGrid = 8192;  // grid cap; a grid-stride loop covers the rest

unsigned grid_for(std::int64_t n) {
  const std::int64_t blocks = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(blocks < kMaxGrid ? blocks : kMaxGrid);
}

__device__ __forceinline__ std::int64_t first_index() {
  return static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ std::int64_t grid_stride() { return static_cast<std::int64_t>(gridDim.x) * blockDim.x; }

// std::complex<T> has the layout of Cplx<T> (two T, real first; device allocations are aligned
// far beyond 2·sizeof(T)).
template <class T>
const Cplx<T>* cplx(const std::complex<T>* p) {
  return reinterpret_cast<const Cplx<T>*>(p);
}
template <class T>
Cplx<T>* cplx(std::complex<T>* p) {
  return reinterpret_cast<Cplx<T>*>(p);
}

template <class T>
__global__ void expand_kernel(std::int64_t n, std::int64_t coils, const Cplx<T>* __restrict__ maps,
                              const Cplx<T>* __restrict__ phase, const Cplx<T>* __restrict__ x,
                              Cplx<T>* __restrict__ out) {
  for (std::int64_t v = first_index(); v < n; v += grid_stride()) dp::expand_point(n, coils, maps, phase, x, out, v);
}

template <class T>
__global__ void reduce_kernel(std::int64_t n, std::int64_t coils, const Cplx<T>* __restrict__ maps,
                              const Cplx<T>* __restrict__ phase, const Cplx<T>* __restrict__ in,
                              Cplx<T>* __restrict__ out, bool accumulate) {
  for (std::int64_t v = first_index(); v < n; v += grid_stride())
    dp::reduce_point(n, coils, maps, phase, in, out, accumulate, v);
}

template <class T>
__global__ void gather_kernel(std::int64_t m, std::int64_t m_s, std::int64_t count,
                              const std::int64_t* __restrict__ index, const Cplx<T>* __restrict__ y,
                              Cplx<T>* __restrict__ w) {
  for (std::int64_t t = first_index(); t < count; t += grid_stride()) dp::gather_point(m, m_s, index, y, w, t);
}

template <class T>
__global__ void scatter_kernel(std::int64_t m, std::int64_t m_s, std::int64_t count,
                               const std::int64_t* __restrict__ index, const Cplx<T>* __restrict__ w,
                               Cplx<T>* __restrict__ y) {
  for (std::int64_t t = first_index(); t < count; t += grid_stride()) dp::scatter_point(m, m_s, index, w, y, t);
}

cudaStream_t stream_of(void* s) { return static_cast<cudaStream_t>(s); }

}  // namespace

template <class T>
void expand(int device, void* stream, std::int64_t n, std::int64_t coils, const std::complex<T>* maps,
            const std::complex<T>* phase, const std::complex<T>* x, std::complex<T>* out) {
  if (n == 0) return;
  DeviceGuard guard(device);
  expand_kernel<T>
      <<<grid_for(n), kThreads, 0, stream_of(stream)>>>(n, coils, cplx(maps), cplx(phase), cplx(x), cplx(out));
  FIELDFT_CUDA_CHECK_LAUNCH();
}

template <class T>
void reduce(int device, void* stream, std::int64_t n, std::int64_t coils, const std::complex<T>* maps,
            const std::complex<T>* phase, const std::complex<T>* in, std::complex<T>* out, bool accumulate) {
  if (n == 0) return;
  DeviceGuard guard(device);
  reduce_kernel<T><<<grid_for(n), kThreads, 0, stream_of(stream)>>>(n, coils, cplx(maps), cplx(phase), cplx(in),
                                                                    cplx(out), accumulate);
  FIELDFT_CUDA_CHECK_LAUNCH();
}

template <class T>
void gather(int device, void* stream, std::int64_t m, std::int64_t m_s, std::int64_t coils, const std::int64_t* index,
            const std::complex<T>* y, std::complex<T>* w) {
  const std::int64_t count = m_s * coils;
  if (count == 0) return;
  DeviceGuard guard(device);
  gather_kernel<T><<<grid_for(count), kThreads, 0, stream_of(stream)>>>(m, m_s, count, index, cplx(y), cplx(w));
  FIELDFT_CUDA_CHECK_LAUNCH();
}

template <class T>
void scatter(int device, void* stream, std::int64_t m, std::int64_t m_s, std::int64_t coils, const std::int64_t* index,
             const std::complex<T>* w, std::complex<T>* y) {
  const std::int64_t count = m_s * coils;
  if (count == 0) return;
  DeviceGuard guard(device);
  scatter_kernel<T><<<grid_for(count), kThreads, 0, stream_of(stream)>>>(m, m_s, count, index, cplx(w), cplx(y));
  FIELDFT_CUDA_CHECK_LAUNCH();
}

#define FIELDFT_PCSENSE_INSTANTIATE(T)                                                                            \
  template void expand<T>(int, void*, std::int64_t, std::int64_t, const std::complex<T>*, const std::complex<T>*, \
                          const std::complex<T>*, std::complex<T>*);                                              \
  template void reduce<T>(int, void*, std::int64_t, std::int64_t, const std::complex<T>*, const std::complex<T>*, \
                          const std::complex<T>*, std::complex<T>*, bool);                                        \
  template void gather<T>(int, void*, std::int64_t, std::int64_t, std::int64_t, const std::int64_t*,              \
                          const std::complex<T>*, std::complex<T>*);                                              \
  template void scatter<T>(int, void*, std::int64_t, std::int64_t, std::int64_t, const std::int64_t*,             \
                           const std::complex<T>*, std::complex<T>*);

FIELDFT_PCSENSE_INSTANTIATE(float)
FIELDFT_PCSENSE_INSTANTIATE(double)

#undef FIELDFT_PCSENSE_INSTANTIATE

}  // namespace fieldft::cuda::pcsense
