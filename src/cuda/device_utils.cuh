// Small device-management helpers shared by every CUDA engine (NUFFT plan, field-corrected DFT).
#pragma once

#include <cuda_runtime.h>

#include "cuda/cuda_check.cuh"

namespace fieldft::cuda {

// Makes `device` current for the lifetime of the guard, then restores the caller's device, so
// that a call into the library never changes which device the caller's own code runs on.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device) {
    FIELDFT_CUDA_CHECK(cudaGetDevice(&previous_));
    if (previous_ != device) FIELDFT_CUDA_CHECK(cudaSetDevice(device));
  }
  ~DeviceGuard() { cudaSetDevice(previous_); }  // no check: a destructor must not throw
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = 0;
};

// True when p points to device or managed memory. A failed query (say, a pointer the runtime
// has never seen) means "not device memory"; its sticky error is cleared so that it does not
// surface at the next unrelated check.
inline bool is_device_pointer(const void* p) {
  if (!p) return false;
  cudaPointerAttributes a{};
  if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged;
}

}  // namespace fieldft::cuda
