// RAII owner of a device allocation. Allocation failure becomes kOutOfMemory with the size and
// the device's free memory in the message; the destructor never throws.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <utility>

#include "cuda/cuda_check.cuh"

namespace fieldft::cuda {

void* device_alloc(std::size_t bytes, const char* what);  // throws kOutOfMemory / kCuda

template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t n, const char* what = "device buffer")
      : ptr_(n ? static_cast<T*>(device_alloc(n * sizeof(T), what)) : nullptr), size_(n) {}
  ~DeviceBuffer() { reset(); }
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)), size_(std::exchange(o.size_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      reset();
      ptr_ = std::exchange(o.ptr_, nullptr);
      size_ = std::exchange(o.size_, 0);
    }
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void reset() noexcept {
    if (ptr_) cudaFree(ptr_);  // errors here cannot be reported from a destructor
    ptr_ = nullptr;
    size_ = 0;
  }
  // n elements, reallocated only when n differs from the size (contents are then undefined).
  void resize(std::size_t n, const char* what = "device buffer") {
    if (n != size_) *this = DeviceBuffer(n, what);
  }
  T* get() const noexcept { return ptr_; }
  std::size_t size() const noexcept { return size_; }
  std::size_t bytes() const noexcept { return size_ * sizeof(T); }

 private:
  T* ptr_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace fieldft::cuda
