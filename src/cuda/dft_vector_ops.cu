// Device side of src/mri/vector_ops.hpp.
#include <complex>

#include "cuda/cuda_check.cuh"
#include "mri/vector_ops.hpp"

namespace fieldft::mri::detail {

namespace {
template <class T>
__global__ void scale_kernel(T* __restrict__ x, std::int64_t n, T ar, T ai) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const T re = x[2 * i], im = x[2 * i + 1];
    x[2 * i] = ar * re - ai * im;
    x[2 * i + 1] = ar * im + ai * re;
  }
}
}  // namespace

template <class T>
void scale_vector_device(std::complex<T>* x, std::int64_t n, std::complex<T> alpha) {
  const std::int64_t blocks = (n + 255) / 256;
  scale_kernel<T><<<static_cast<unsigned>(blocks < 4096 ? blocks : 4096), 256>>>(
      reinterpret_cast<T*>(x), n, alpha.real(), alpha.imag());
  FIELDFT_CUDA_CHECK_LAUNCH();
  FIELDFT_CUDA_CHECK(cudaStreamSynchronize(nullptr));
}

template void scale_vector_device(std::complex<float>*, std::int64_t, std::complex<float>);
template void scale_vector_device(std::complex<double>*, std::int64_t, std::complex<double>);

}  // namespace fieldft::mri::detail
