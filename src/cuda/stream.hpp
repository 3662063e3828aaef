// CUDA streams and stream-ordered memory for fieldft::Context and op::Workspace. A plain C++
// header (no cuda_runtime.h), so that the host-compiled operator layer can call it; compiled
// only when FIELDFT_HAVE_CUDA. Streams travel as void* (a cudaStream_t; nullptr is the legacy
// default stream). Every function makes `device` current for its duration and restores the
// caller's device.
#pragma once

#include <cstddef>

namespace fieldft::cuda {

// Throws kBackendUnavailable unless `device` is a visible CUDA device (the message says how many
// there are).
void require_device(int device);
// Throws kInvalidArgument when `stream` (not nullptr) belongs to a device other than `device`.
void require_stream_on_device(int device, void* stream);

// A new cudaStreamNonBlocking stream on `device`.
void* stream_create(int device);
// Destroys a stream made by stream_create; errors cannot be reported (called from a deleter).
void stream_destroy(int device, void* stream) noexcept;
// Blocks until the work enqueued on `stream` is done; throws kCuda when it failed.
void stream_synchronize(int device, void* stream);

// cudaMallocAsync / cudaFreeAsync on `stream`: ordered after the work already enqueued there, no
// host synchronisation. Allocation failure throws kOutOfMemory with the size and free memory.
void* malloc_async(std::size_t bytes, int device, void* stream);
void free_async(void* ptr, int device, void* stream) noexcept;
// The free memory of `device` now, in bytes (cudaMemGetInfo), for a set-up that checks that a
// large allocation fits before it spends time on it.
std::size_t free_memory(int device);
// Enqueues a copy of `bytes` from host memory to device memory on `stream`. The source must be
// pageable memory (new / std::vector): the runtime stages it before returning, so the caller may
// free it at once (a pinned source would be read later, when the stream reaches the copy).
void copy_to_device_async(void* dst, const void* src, std::size_t bytes, int device, void* stream);

}  // namespace fieldft::cuda
