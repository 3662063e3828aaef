// CUDA streams and stream-ordered memory behind src/cuda/stream.hpp.
#include <cuda_runtime.h>

#include <cstdint>
#include <sstream>
#include <string>

#include "cuda/cuda_check.cuh"
#include "cuda/device_utils.cuh"
#include "cuda/stream.hpp"

namespace fieldft::cuda {
namespace {
cudaStream_t as_stream(void* s) { return static_cast<cudaStream_t>(s); }
}  // namespace

void require_device(int device) {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();  // no driver or no device: not an error of a later, unrelated call
    n = 0;
  }
  require(device >= 0 && device < n, ErrorCode::kBackendUnavailable,
          "CUDA device " + std::to_string(device) + " is not available (" + std::to_string(n) + " CUDA device" +
              (n == 1 ? "" : "s") + " visible)");
}

void require_stream_on_device(int device, void* stream) {
  if (!stream) return;  // the legacy default stream exists on every device
#if CUDART_VERSION >= 12080
  int owner = -1;
  FIELDFT_CUDA_CHECK(cudaStreamGetDevice(as_stream(stream), &owner));
  require(
      owner == device, ErrorCode::kInvalidArgument,
      "the given CUDA stream belongs to device " + std::to_string(owner) + ", not to device " + std::to_string(device));
#else
  (void)device;
#endif
}

void* stream_create(int device) {
  require_device(device);
  DeviceGuard guard(device);
  cudaStream_t s = nullptr;
  // Non-blocking: the library's work does not serialise with the caller's legacy-stream work.
  FIELDFT_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  return s;
}

void stream_destroy(int device, void* stream) noexcept {
  if (!stream) return;
  try {
    DeviceGuard guard(device);
    cudaStreamDestroy(as_stream(stream));  // pending work still completes
  } catch (...) {
    // A deleter cannot report; the process is already failing if the device is gone.
  }
}

void stream_synchronize(int device, void* stream) {
  DeviceGuard guard(device);
  FIELDFT_CUDA_CHECK(cudaStreamSynchronize(as_stream(stream)));
}

void* malloc_async(std::size_t bytes, int device, void* stream) {
  DeviceGuard guard(device);
  void* p = nullptr;
  const cudaError_t e = cudaMallocAsync(&p, bytes, as_stream(stream));
  if (e == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    std::size_t free_b = 0, total_b = 0;
    cudaMemGetInfo(&free_b, &total_b);
    std::ostringstream os;
    os << "cannot allocate " << bytes / double(1 << 20) << " MiB of operator workspace on CUDA device " << device
       << " (" << free_b / double(1 << 20) << " MiB free of " << total_b / double(1 << 20)
       << " MiB); reduce the problem size or batch";
    throw Error(ErrorCode::kOutOfMemory, os.str());
  }
  check(e, "cudaMallocAsync", __FILE__, __LINE__);
  return p;
}

void retain_pool_memory(int device, std::size_t bytes) {
  DeviceGuard guard(device);
  cudaMemPool_t pool = nullptr;
  FIELDFT_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, device));
  std::uint64_t now = 0;
  FIELDFT_CUDA_CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &now));
  if (static_cast<std::uint64_t>(bytes) <= now) return;
  std::uint64_t keep = bytes;
  FIELDFT_CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));
}

std::size_t free_memory(int device) {
  DeviceGuard guard(device);
  std::size_t free_b = 0, total_b = 0;
  FIELDFT_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  return free_b;
}

void require_free_memory(int device, double need, const std::string& what, const std::string& remedy) {
  const double free_b = static_cast<double>(free_memory(device));
  if (need <= free_b) return;
  std::ostringstream os;
  os.setf(std::ios::fixed);
  os.precision(0);
  os << what << " need " << need / (1 << 20) << " MiB on CUDA device " << device << ", " << free_b / (1 << 20)
     << " MiB free; " << remedy;
  throw Error(ErrorCode::kOutOfMemory, os.str());
}

void free_async(void* ptr, int device, void* stream) noexcept {
  if (!ptr) return;
  try {
    DeviceGuard guard(device);
    cudaFreeAsync(ptr, as_stream(stream));  // a destructor path: errors cannot be reported
  } catch (...) {
  }
}

void copy_to_device_async(void* dst, const void* src, std::size_t bytes, int device, void* stream) {
  if (bytes == 0) return;
  DeviceGuard guard(device);
  FIELDFT_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, as_stream(stream)));
}

void copy_rows_to_device_async(void* dst, const void* src, std::size_t row_bytes, std::size_t rows,
                               std::size_t src_pitch, int device, void* stream) {
  if (row_bytes == 0 || rows == 0) return;
  require(src_pitch >= row_bytes, ErrorCode::kInvalidArgument,
          "copy_rows_to_device_async: the source pitch " + std::to_string(src_pitch) + " is less than a row (" +
              std::to_string(row_bytes) + " bytes)");
  DeviceGuard guard(device);
  int max_pitch = 0;
  FIELDFT_CUDA_CHECK(cudaDeviceGetAttribute(&max_pitch, cudaDevAttrMaxPitch, device));
  if (src_pitch <= static_cast<std::size_t>(max_pitch) && row_bytes <= static_cast<std::size_t>(max_pitch)) {
    FIELDFT_CUDA_CHECK(
        cudaMemcpy2DAsync(dst, row_bytes, src, src_pitch, row_bytes, rows, cudaMemcpyHostToDevice, as_stream(stream)));
    return;
  }
  // A pitch beyond what one 2D copy takes: a copy per row, as ordered.
  for (std::size_t r = 0; r < rows; ++r)
    FIELDFT_CUDA_CHECK(cudaMemcpyAsync(static_cast<char*>(dst) + r * row_bytes,
                                       static_cast<const char*>(src) + r * src_pitch, row_bytes, cudaMemcpyHostToDevice,
                                       as_stream(stream)));
}

std::string host_register(const void* ptr, std::size_t bytes) {
  if (!ptr || bytes == 0) return "nothing to pin";
  // The runtime's flags take a non-const pointer; registering does not write the memory.
  const cudaError_t e = cudaHostRegister(const_cast<void*>(ptr), bytes, cudaHostRegisterPortable);
  if (e == cudaSuccess) return {};
  cudaGetLastError();  // not sticky: clear it, so that later, unrelated checks do not see it
  return std::string("cudaHostRegister of ") + std::to_string(bytes) + " bytes -> " + cudaGetErrorString(e);
}

void host_unregister(const void* ptr, std::span<const int> devices) noexcept {
  if (!ptr) return;
  try {
    for (const int d : devices) {
      DeviceGuard guard(d);
      cudaDeviceSynchronize();  // an error here is the failed work's, reported by its own caller
    }
  } catch (...) {
  }
  cudaHostUnregister(const_cast<void*>(ptr));
  cudaGetLastError();
}

}  // namespace fieldft::cuda
