// CUDA streams and stream-ordered memory for fieldft::Context and op::Workspace. A plain C++
// header (no cuda_runtime.h), so that the host-compiled operator layer can call it; compiled
// only when FIELDFT_HAVE_CUDA. Streams travel as void* (a cudaStream_t; nullptr is the legacy
// default stream). Every function makes `device` current for its duration and restores the
// caller's device.
#pragma once

#include <cstddef>
#include <span>
#include <string>

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
// Lets the stream-ordered pool of `device` (its default pool, which malloc_async draws from)
// keep up to `bytes` of freed memory for later allocations, instead of handing it back to the
// system at the next synchronisation, after which the next allocation maps it again (the
// pool's release threshold, raised to `bytes`, never lowered). For a caller that allocates and
// frees the same sizes again and again, e.g. slice after slice.
void retain_pool_memory(int device, std::size_t bytes);
// The free memory of `device` now, in bytes (cudaMemGetInfo), for a set-up that checks that a
// large allocation fits before it spends time on it.
std::size_t free_memory(int device);
// Throws kOutOfMemory when `need` bytes exceed the free memory of `device`:
// "<what> need(s) N MiB on CUDA device d, F MiB free; <remedy>".
void require_free_memory(int device, double need, const std::string& what, const std::string& remedy);
// Enqueues a copy of `bytes` from host memory to device memory on `stream`. A pageable source
// (new / std::vector) is staged by the runtime before the call returns, so the caller may free it
// at once; a pinned source (host_register below) is read later, when the stream reaches the
// copy, so it must stay alive and unchanged until then.
void copy_to_device_async(void* dst, const void* src, std::size_t bytes, int device, void* stream);
// The same for `rows` rows of `row_bytes` bytes, row r read at src + r·src_pitch and written
// contiguously at dst + r·row_bytes: ONE strided copy (cudaMemcpy2DAsync; a copy per row where
// the pitch exceeds the device's limit for one), e.g. one slice of every coil out of a volume.
// src_pitch >= row_bytes (else kInvalidArgument).
void copy_rows_to_device_async(void* dst, const void* src, std::size_t row_bytes, std::size_t rows,
                               std::size_t src_pitch, int device, void* stream);

// Page-locks `bytes` of host memory at `ptr` for every device (cudaHostRegister, portable), so
// that copies from it run asynchronously at full speed. Returns an empty string on success, else
// why not (the runtime's message; its error state cleared), for a caller that then copies from
// pageable memory instead. Unregister before the memory is freed.
std::string host_register(const void* ptr, std::size_t bytes);
// Undoes host_register, after waiting for all work on `devices` (those that may copy from the
// memory: on an error path a copy can still be in flight); errors cannot be reported (called
// from a destructor).
void host_unregister(const void* ptr, std::span<const int> devices) noexcept;

}  // namespace fieldft::cuda
