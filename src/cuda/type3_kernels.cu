#include <algorithm>

#include "cuda/cuda_check.cuh"
#include "cuda/type3_kernels.hpp"

namespace fieldft::cuda {

namespace {

constexpr int kScaleThreads = 256;

unsigned blocks_for(std::int64_t n) {
  return static_cast<unsigned>(std::clamp<std::int64_t>((n + kScaleThreads - 1) / kScaleThreads, 1, 1 << 20));
}

template <class T>
__global__ void scale_by_factor(std::int64_t n, std::int64_t total, const detail::Cplx<T>* in,
                                const detail::Cplx<T>* __restrict__ factor, bool conj_factor, detail::Cplx<T>* out) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < total;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    const detail::Cplx<T> a = in[i], f = factor[i % n];
    const T fi = conj_factor ? -f.im : f.im;
    out[i] = {a.re * f.re - a.im * fi, a.re * fi + a.im * f.re};
  }
}

template <class T, class C>
__global__ void narrow(std::int64_t n, const C* __restrict__ in, T* __restrict__ out) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n;
       i += std::int64_t(gridDim.x) * blockDim.x)
    out[i] = static_cast<T>(in[i]);
}

}  // namespace

template <class T>
void launch_scale_by_factor(cudaStream_t s, std::int64_t n, int nbatch, const detail::Cplx<T>* in,
                            const detail::Cplx<T>* factor, bool conj_factor, detail::Cplx<T>* out) {
  const std::int64_t total = n * nbatch;
  if (total == 0) return;
  scale_by_factor<T><<<blocks_for(total), kScaleThreads, 0, s>>>(n, total, in, factor, conj_factor, out);
  FIELDFT_CUDA_CHECK_LAUNCH();
}

template <class T, class C>
void launch_narrow(cudaStream_t s, std::int64_t n, const C* in, T* out) {
  if (n == 0) return;
  narrow<T, C><<<blocks_for(n), kScaleThreads, 0, s>>>(n, in, out);
  FIELDFT_CUDA_CHECK_LAUNCH();
}

template void launch_scale_by_factor<float>(cudaStream_t, std::int64_t, int, const detail::Cplx<float>*,
                                            const detail::Cplx<float>*, bool, detail::Cplx<float>*);
template void launch_scale_by_factor<double>(cudaStream_t, std::int64_t, int, const detail::Cplx<double>*,
                                             const detail::Cplx<double>*, bool, detail::Cplx<double>*);
template void launch_narrow<float, double>(cudaStream_t, std::int64_t, const double*, float*);
template void launch_narrow<double, double>(cudaStream_t, std::int64_t, const double*, double*);

}  // namespace fieldft::cuda
