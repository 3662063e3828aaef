// CUDA runtime helpers: error reporting, allocation, device query.
#include <sstream>

#include "cuda/cuda_check.cuh"
#include "cuda/device_buffer.cuh"
#include "fieldft/runtime.hpp"

namespace fieldft::cuda {

void throw_cuda_error(const char* what, const char* call, const char* file, int line) {
  std::ostringstream os;
  os << "CUDA call failed: " << call << " -> " << what << " (" << file << ":" << line << ")";
  throw Error(ErrorCode::kCuda, os.str());
}

void* device_alloc(std::size_t bytes, const char* what) {
  void* p = nullptr;
  const cudaError_t e = cudaMalloc(&p, bytes);
  if (e == cudaErrorMemoryAllocation) {
    cudaGetLastError();  // clear the sticky-free error state
    std::size_t free_b = 0, total_b = 0;
    cudaMemGetInfo(&free_b, &total_b);
    std::ostringstream os;
    os << "cannot allocate " << bytes / double(1 << 20) << " MiB on the GPU for " << what << " ("
       << free_b / double(1 << 20) << " MiB free of " << total_b / double(1 << 20)
       << " MiB); reduce the problem size or batch";
    throw Error(ErrorCode::kOutOfMemory, os.str());
  }
  check(e, "cudaMalloc", __FILE__, __LINE__);
  return p;
}

}  // namespace fieldft::cuda

namespace fieldft {

std::vector<DeviceInfo> cuda_devices() noexcept {
  std::vector<DeviceInfo> out;
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();
    return out;
  }
  int current = 0;
  cudaGetDevice(&current);
  for (int i = 0; i < n; ++i) {
    cudaDeviceProp p{};
    if (cudaGetDeviceProperties(&p, i) != cudaSuccess) continue;
    DeviceInfo d;
    d.id = i;
    d.name = p.name;
    d.cc_major = p.major;
    d.cc_minor = p.minor;
    d.total_memory = p.totalGlobalMem;
    d.multiprocessors = p.multiProcessorCount;
    if (cudaSetDevice(i) == cudaSuccess) {
      std::size_t f = 0, t = 0;
      if (cudaMemGetInfo(&f, &t) == cudaSuccess) d.free_memory = f;
    }
    out.push_back(d);
  }
  cudaSetDevice(current);
  cudaGetLastError();
  return out;
}

}  // namespace fieldft
