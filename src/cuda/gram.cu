// CUDA side of dense Gram-matrix normals (declarations and contract in src/cuda/gram.hpp).
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <complex>
#include <cstdint>
#include <string>

#include "cuda/cuda_check.cuh"
#include "cuda/device_utils.cuh"
#include "cuda/gram.hpp"
#include "fieldft/error.hpp"

namespace fieldft::cuda::gram {

namespace {

cudaStream_t stream_of(void* s) { return static_cast<cudaStream_t>(s); }
cublasHandle_t handle_of(void* h) { return static_cast<cublasHandle_t>(h); }

void check_cublas(cublasStatus_t status, const char* what) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  const ErrorCode code = status == CUBLAS_STATUS_ALLOC_FAILED       ? ErrorCode::kOutOfMemory
                         : status == CUBLAS_STATUS_NOT_INITIALIZED ? ErrorCode::kBackendUnavailable
                                                                   : ErrorCode::kInternal;
  throw Error(code, std::string("cuBLAS ") + what + " failed with status " + std::to_string(static_cast<int>(status)));
}

template <class T>
__global__ void set_ones(std::int64_t n, std::int64_t v0, std::int64_t k, T* out) {
  const std::int64_t c = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c < k && v0 + c < n) out[2 * (c * n + v0 + c)] = T(1);
}

}  // namespace

template <class T>
void identity_columns(int device, void* stream, std::int64_t n, std::int64_t v0, std::int64_t k,
                      std::complex<T>* out) {
  if (n == 0 || k == 0) return;
  DeviceGuard guard(device);
  FIELDFT_CUDA_CHECK(cudaMemsetAsync(out, 0, static_cast<std::size_t>(n * k) * sizeof(std::complex<T>),
                                     stream_of(stream)));
  constexpr int kThreads = 128;
  set_ones<T><<<static_cast<unsigned>((k + kThreads - 1) / kThreads), kThreads, 0, stream_of(stream)>>>(
      n, v0, k, reinterpret_cast<T*>(out));
  FIELDFT_CUDA_CHECK_LAUNCH();
}

template <class T>
HermitianProduct<T>::HermitianProduct(int device, void* stream) : device_(device) {
  DeviceGuard guard(device);
  cublasHandle_t h = nullptr;
  check_cublas(cublasCreate(&h), "cublasCreate");
  handle_ = h;
  check_cublas(cublasSetStream(h, stream_of(stream)), "cublasSetStream");
}

template <class T>
HermitianProduct<T>::~HermitianProduct() {
  if (!handle_) return;
  DeviceGuard guard(device_);
  cublasDestroy(handle_of(handle_));
}

template <class T>
void HermitianProduct<T>::apply(const std::complex<T>* h, std::int64_t n, const std::complex<T>* u,
                                std::int64_t k, std::complex<T>* y) const {
  if (n == 0 || k == 0) return;
  DeviceGuard guard(device_);
  const int ni = static_cast<int>(n), ki = static_cast<int>(k);
  if constexpr (sizeof(T) == sizeof(float)) {
    const cuComplex one{1.f, 0.f}, zero{0.f, 0.f};
    check_cublas(cublasCgemm(handle_of(handle_), CUBLAS_OP_C, CUBLAS_OP_N, ni, ki, ni, &one,
                             reinterpret_cast<const cuComplex*>(h), ni, reinterpret_cast<const cuComplex*>(u), ni,
                             &zero, reinterpret_cast<cuComplex*>(y), ni),
                 "cublasCgemm");
  } else {
    const cuDoubleComplex one{1.0, 0.0}, zero{0.0, 0.0};
    check_cublas(cublasZgemm(handle_of(handle_), CUBLAS_OP_C, CUBLAS_OP_N, ni, ki, ni, &one,
                             reinterpret_cast<const cuDoubleComplex*>(h), ni,
                             reinterpret_cast<const cuDoubleComplex*>(u), ni, &zero,
                             reinterpret_cast<cuDoubleComplex*>(y), ni),
                 "cublasZgemm");
  }
}

template void identity_columns<float>(int, void*, std::int64_t, std::int64_t, std::int64_t, std::complex<float>*);
template void identity_columns<double>(int, void*, std::int64_t, std::int64_t, std::int64_t, std::complex<double>*);
template class HermitianProduct<float>;
template class HermitianProduct<double>;

}  // namespace fieldft::cuda::gram
