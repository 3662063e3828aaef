// One macro checks every CUDA runtime call, cuFFT call and kernel launch; the error records the
// call text, file and line.
#pragma once

#include <cuda_runtime.h>
#include <cufft.h>

#include <string>

#include "fieldft/error.hpp"

namespace fieldft::cuda {

[[noreturn]] void throw_cuda_error(const char* what, const char* call, const char* file, int line);

inline void check(cudaError_t e, const char* call, const char* file, int line) {
  if (e != cudaSuccess) [[unlikely]] throw_cuda_error(cudaGetErrorString(e), call, file, line);
}
inline void check(cufftResult r, const char* call, const char* file, int line) {
  if (r != CUFFT_SUCCESS) [[unlikely]] {
    throw_cuda_error(("cuFFT error " + std::to_string(static_cast<int>(r))).c_str(), call, file, line);
  }
}

}  // namespace fieldft::cuda

#define FIELDFT_CUDA_CHECK(call) ::fieldft::cuda::check((call), #call, __FILE__, __LINE__)
// After a kernel launch: catches launch-configuration errors without synchronising.
#define FIELDFT_CUDA_CHECK_LAUNCH() ::fieldft::cuda::check(cudaGetLastError(), "kernel launch", __FILE__, __LINE__)
