// CUDA steps of the Pipe–Menon density compensation (src/cuda/density.hpp): element-wise
// grid-stride kernels on interleaved complex values, 64-bit indices.
#include <cuda_runtime.h>

#include <complex>
#include <cstdint>
#include <vector>

#include "cuda/cuda_check.cuh"
#include "cuda/density.hpp"
#include "cuda/device_utils.cuh"

namespace fieldft::cuda::density {

namespace {

constexpr int kThreads = 256;
constexpr std::int64_t kMaxGrid = 4096;

cudaStream_t stream_of(vec::Place p) { return static_cast<cudaStream_t>(p.stream); }

unsigned grid_for(std::int64_t n) {
  const std::int64_t blocks = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(blocks < kMaxGrid ? blocks : kMaxGrid);
}

__device__ __forceinline__ std::int64_t first_index() {
  return static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ std::int64_t grid_stride() { return static_cast<std::int64_t>(gridDim.x) * blockDim.x; }

// w and d interleaved (re, im).
template <class T>
__global__ void divide_by_abs_kernel(std::int64_t n, T* w, const T* d) {
  for (std::int64_t i = first_index(); i < n; i += grid_stride()) {
    const T inv = T(1) / hypot(d[2 * i], d[2 * i + 1]);
    w[2 * i] *= inv;
    w[2 * i + 1] *= inv;
  }
}

}  // namespace

template <class T>
void divide_by_abs(vec::Place place, std::int64_t n, std::complex<T>* w, const std::complex<T>* d) {
  DeviceGuard guard(place.device);
  divide_by_abs_kernel<T><<<grid_for(n), kThreads, 0, stream_of(place)>>>(n, reinterpret_cast<T*>(w),
                                                                         reinterpret_cast<const T*>(d));
  FIELDFT_CUDA_CHECK_LAUNCH();
}

template <class T>
void download_real(vec::Place place, std::int64_t n, const std::complex<T>* w, T* host) {
  DeviceGuard guard(place.device);
  std::vector<std::complex<T>> staged(static_cast<std::size_t>(n));
  FIELDFT_CUDA_CHECK(cudaMemcpyAsync(staged.data(), w, static_cast<std::size_t>(n) * sizeof(std::complex<T>),
                                     cudaMemcpyDeviceToHost, stream_of(place)));
  FIELDFT_CUDA_CHECK(cudaStreamSynchronize(stream_of(place)));
  for (std::int64_t j = 0; j < n; ++j) host[j] = staged[static_cast<std::size_t>(j)].real();
}

#define FIELDFT_DENSITY_INSTANTIATE(T)                                                                  \
  template void divide_by_abs<T>(vec::Place, std::int64_t, std::complex<T>*, const std::complex<T>*); \
  template void download_real<T>(vec::Place, std::int64_t, const std::complex<T>*, T*);

FIELDFT_DENSITY_INSTANTIATE(float)
FIELDFT_DENSITY_INSTANTIATE(double)

#undef FIELDFT_DENSITY_INSTANTIATE

}  // namespace fieldft::cuda::density
