// CUDA side of fieldft::mri::estimate_coil_maps (declarations and contract in
// src/cuda/coil_maps.hpp): the calibration gather and the RSS normalisation.
//
// The RSS normalisation is three launches on the stream: per-voxel r_v, one block for max r
// (max is exact and order-independent, so the result is deterministic), and the per-voxel
// division, which reads the max from device memory: no host round trip.
#include <cuda_runtime.h>

#include <cmath>
#include <complex>
#include <cstdint>

#include "cuda/coil_maps.hpp"
#include "cuda/cuda_check.cuh"
#include "cuda/device_utils.cuh"

namespace fieldft::cuda::coil {

namespace {

constexpr int kThreads = 256;
constexpr std::int64_t kMaxGrid = 4096;
constexpr int kMaxThreads = 1024;  // the single block of the max reduction

cudaStream_t stream_of(Place p) { return static_cast<cudaStream_t>(p.stream); }

unsigned grid_for(std::int64_t n) {
  const std::int64_t blocks = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(blocks < kMaxGrid ? blocks : kMaxGrid);
}

__device__ __forceinline__ std::int64_t first_index() {
  return static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ std::int64_t grid_stride() {
  return static_cast<std::int64_t>(gridDim.x) * blockDim.x;
}

// Complex values as two T: std::complex<T> has the layout of T[2].
template <class T>
__global__ void gather_kernel(std::int64_t m, std::int64_t m_sel, std::int64_t coils,
                              const std::int64_t* index, const T* w, const T* data, T* out) {
  for (std::int64_t i = first_index(); i < m_sel; i += grid_stride()) {
    const std::int64_t j = index[i];
    const T wi = w[i];
    for (std::int64_t c = 0; c < coils; ++c) {
      const std::int64_t src = j + m * c, dst = i + m_sel * c;
      out[2 * dst] = wi * data[2 * src];
      out[2 * dst + 1] = wi * data[2 * src + 1];
    }
  }
}

template <class T>
__global__ void rss_kernel(std::int64_t n, std::int64_t coils, const T* x, T* r) {
  for (std::int64_t v = first_index(); v < n; v += grid_stride()) {
    double s = 0;
    for (std::int64_t c = 0; c < coils; ++c) {
      const double re = x[2 * (v + n * c)], im = x[2 * (v + n * c) + 1];
      s += re * re + im * im;
    }
    r[v] = static_cast<T>(sqrt(s));
  }
}

// One block: r[n] = max_v r[v].
template <class T>
__global__ void max_kernel(std::int64_t n, T* r) {
  __shared__ T s[kMaxThreads];
  T m = T(0);
  for (std::int64_t v = threadIdx.x; v < n; v += blockDim.x) m = r[v] > m ? r[v] : m;
  s[threadIdx.x] = m;
  __syncthreads();
  for (int o = blockDim.x / 2; o > 0; o >>= 1) {
    if (threadIdx.x < o && s[threadIdx.x + o] > s[threadIdx.x]) s[threadIdx.x] = s[threadIdx.x + o];
    __syncthreads();
  }
  if (threadIdx.x == 0) r[n] = s[0];
}

template <class T>
__global__ void normalise_kernel(std::int64_t n, std::int64_t coils, int ref, T threshold, const T* r,
                                 T* x) {
  const T cut = threshold * r[n];
  for (std::int64_t v = first_index(); v < n; v += grid_stride()) {
    const T rv = r[v];
    T pr = T(0), pi = T(0);  // p_v / r_v, or 0 outside the mask
    if (rv > cut && rv > T(0)) {
      pr = T(1) / rv;
      if (ref >= 0) {
        const T ar = x[2 * (v + n * ref)], ai = x[2 * (v + n * ref) + 1];
        const T a = hypot(ar, ai);
        if (a > T(0)) {
          pr = ar / (a * rv);
          pi = -ai / (a * rv);
        }
      }
    }
    for (std::int64_t c = 0; c < coils; ++c) {
      const std::int64_t e = v + n * c;
      const T xr = x[2 * e], xi = x[2 * e + 1];
      x[2 * e] = xr * pr - xi * pi;
      x[2 * e + 1] = xr * pi + xi * pr;
    }
  }
}

}  // namespace

template <class T>
void gather_weighted(Place place, std::int64_t m, std::int64_t m_sel, std::int64_t coils,
                     const std::int64_t* index, const T* w, const std::complex<T>* data,
                     std::complex<T>* out) {
  DeviceGuard guard(place.device);
  gather_kernel<T><<<grid_for(m_sel), kThreads, 0, stream_of(place)>>>(
      m, m_sel, coils, index, w, reinterpret_cast<const T*>(data), reinterpret_cast<T*>(out));
  FIELDFT_CUDA_CHECK_LAUNCH();
}

template <class T>
void rss_normalise(Place place, std::int64_t n, std::int64_t coils, int ref, double threshold,
                   std::complex<T>* maps, T* scratch) {
  DeviceGuard guard(place.device);
  const cudaStream_t s = stream_of(place);
  T* x = reinterpret_cast<T*>(maps);
  rss_kernel<T><<<grid_for(n), kThreads, 0, s>>>(n, coils, x, scratch);
  FIELDFT_CUDA_CHECK_LAUNCH();
  max_kernel<T><<<1, kMaxThreads, 0, s>>>(n, scratch);
  FIELDFT_CUDA_CHECK_LAUNCH();
  normalise_kernel<T><<<grid_for(n), kThreads, 0, s>>>(n, coils, ref, static_cast<T>(threshold), scratch, x);
  FIELDFT_CUDA_CHECK_LAUNCH();
}

void copy_to_host(void* dst, const void* src, std::size_t bytes, Place place) {
  DeviceGuard guard(place.device);
  FIELDFT_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, stream_of(place)));
  FIELDFT_CUDA_CHECK(cudaStreamSynchronize(stream_of(place)));
}

#define FIELDFT_COIL_INSTANTIATE(T)                                                                    \
  template void gather_weighted<T>(Place, std::int64_t, std::int64_t, std::int64_t, const std::int64_t*, \
                                   const T*, const std::complex<T>*, std::complex<T>*);                \
  template void rss_normalise<T>(Place, std::int64_t, std::int64_t, int, double, std::complex<T>*, T*);
FIELDFT_COIL_INSTANTIATE(float)
FIELDFT_COIL_INSTANTIATE(double)
#undef FIELDFT_COIL_INSTANTIATE

}  // namespace fieldft::cuda::coil
