// Host values into context memory, for operators that keep tables (diagonals, coil maps,
// interpolators) at their context, and host memory pinned for such copies. Internal; not
// installed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "fieldft/config.hpp"  // FIELDFT_HAVE_CUDA
#include "fieldft/error.hpp"
#include "fieldft/op/linear_operator.hpp"
#if FIELDFT_HAVE_CUDA
#include "cuda/stream.hpp"
#endif

namespace fieldft::op {

// Copies host values to the memory of `ws` (grown as needed) and returns it. Device copies are
// enqueued on the context's stream, so the memory is ready for every later use on that stream
// without a synchronisation. Pageable `values` are staged by the runtime before the call returns;
// pinned ones (PinnedHost below) are read when the stream reaches the copy, so they must stay
// alive and unchanged until the stream has passed it.
template <class V>
V* upload(Workspace& ws, std::span<const V> values) {
  auto* p = ws.get_as<V>(static_cast<std::int64_t>(values.size()));
  const std::size_t bytes = values.size() * sizeof(V);
  const Context& c = ws.context();
  if (c.is_host()) {
    if (bytes) std::memcpy(p, values.data(), bytes);
  } else {
#if FIELDFT_HAVE_CUDA
    cuda::copy_to_device_async(p, values.data(), bytes, c.device(), c.stream());
#else
    throw Error(ErrorCode::kBackendUnavailable, "a CUDA context, but this fieldft was built without CUDA");
#endif
  }
  return p;
}
template <class V>
V* upload(Workspace& ws, const std::vector<V>& values) {
  return upload(ws, std::span<const V>(values));
}

// `rows` rows of `row` values, row r read at values + r·pitch, into the memory of `ws` one after
// another (row r at r·row), as upload does for contiguous values (the same ordering and pinned
// source rules): one strided copy on a device, e.g. slice z of every coil of a volume.
template <class V>
V* upload_rows(Workspace& ws, const V* values, std::int64_t row, std::int64_t rows, std::int64_t pitch) {
  require(row >= 0 && rows >= 0 && pitch >= row, ErrorCode::kInvalidArgument,
          "upload_rows: " + std::to_string(rows) + " rows of " + std::to_string(row) + " values at a pitch of " +
              std::to_string(pitch) + "; expected counts >= 0 and pitch >= row");
  auto* p = ws.get_as<V>(row * rows);
  const Context& c = ws.context();
  if (c.is_host()) {
    for (std::int64_t r = 0; r < rows; ++r)
      if (row) std::memcpy(p + r * row, values + r * pitch, static_cast<std::size_t>(row) * sizeof(V));
  } else {
#if FIELDFT_HAVE_CUDA
    cuda::copy_rows_to_device_async(p, values, static_cast<std::size_t>(row) * sizeof(V),
                                    static_cast<std::size_t>(rows), static_cast<std::size_t>(pitch) * sizeof(V),
                                    c.device(), c.stream());
#else
    throw Error(ErrorCode::kBackendUnavailable, "a CUDA context, but this fieldft was built without CUDA");
#endif
  }
  return p;
}

// Host memory page-locked for the copies of `devices` while this lives (cuda::host_register), so
// that upload / upload_rows from it run asynchronously. Where it cannot be (a build without CUDA,
// the system's limit on locked memory), the memory stays pageable: pinned() is false and why()
// says why, and the uploads still work, staged. The memory must outlive this; the destructor
// waits for the devices' work (a copy may still be in flight where the caller unwinds from an
// error) before it unpins.
class PinnedHost {
 public:
  PinnedHost() = default;
  PinnedHost(const void* ptr, std::size_t bytes, std::vector<int> devices) : devices_(std::move(devices)) {
#if FIELDFT_HAVE_CUDA
    why_ = cuda::host_register(ptr, bytes);
    if (why_.empty()) ptr_ = ptr;
#else
    (void)ptr;
    (void)bytes;
    why_ = "this fieldft was built without CUDA";
#endif
  }
  ~PinnedHost() {
#if FIELDFT_HAVE_CUDA
    cuda::host_unregister(ptr_, devices_);
#endif
  }
  PinnedHost(PinnedHost&& o) noexcept
      : ptr_(std::exchange(o.ptr_, nullptr)), devices_(std::move(o.devices_)), why_(std::move(o.why_)) {}
  PinnedHost& operator=(PinnedHost&&) = delete;
  PinnedHost(const PinnedHost&) = delete;
  PinnedHost& operator=(const PinnedHost&) = delete;

  bool pinned() const noexcept { return ptr_ != nullptr; }
  const std::string& why() const noexcept { return why_; }

 private:
  const void* ptr_ = nullptr;
  std::vector<int> devices_;
  std::string why_;
};

// The stream-ordered memory pool of `c`'s device keeps up to `bytes` of freed memory for later
// allocations (cuda::retain_pool_memory) instead of mapping it again after each synchronisation;
// nothing on the host.
inline void retain_pool_memory(const Context& c, double bytes) {
#if FIELDFT_HAVE_CUDA
  if (c.is_cuda() && bytes > 0) cuda::retain_pool_memory(c.device(), static_cast<std::size_t>(bytes));
#else
  (void)c;
  (void)bytes;
#endif
}

// A host buffer page-locked once, through which pageable values go up to the device of a CUDA
// context ("bounce buffer"): upload / upload_rows copy the values into it on up to `threads`
// host threads, then enqueue one asynchronous copy from it on the context's stream. The bus
// reads pinned memory at ~50 GB/s, while the driver stages pageable memory on the calling thread
// at ~6 GB/s; and pinning a whole 2 GB stack costs ~0.13 s more to lock and 0.04 s to unlock
// than the copies it saves (2x H200, docs/benchmarks.md, session 26). The buffer is filled from
// its start again after begin(), which waits for the context's stream to pass the previous
// copies out of it. Where the memory cannot be pinned (the system's limit on locked memory)
// pinned() is false, why() says why, and the copies still work, staged by the driver.
class StagingBuffer {
 public:
  StagingBuffer(const Context& c, std::size_t bytes, int threads);
  ~StagingBuffer();
  StagingBuffer(const StagingBuffer&) = delete;
  StagingBuffer& operator=(const StagingBuffer&) = delete;

  // Waits until the context's stream has passed every copy out of the buffer; the next upload
  // fills it from its start.
  void begin();
  // As op::upload_rows / op::upload into `ws` (of this buffer's context), through the buffer;
  // kInvalidArgument when the values do not fit in what begin() left free.
  template <class V>
  V* upload_rows(Workspace& ws, const V* values, std::int64_t row, std::int64_t rows, std::int64_t pitch) {
    require(row >= 0 && rows >= 0 && pitch >= row, ErrorCode::kInvalidArgument,
            "StagingBuffer::upload_rows: " + std::to_string(rows) + " rows of " + std::to_string(row) +
                " values at a pitch of " + std::to_string(pitch) + "; expected counts >= 0 and pitch >= row");
    const auto* staged = static_cast<const V*>(put_rows(values, static_cast<std::size_t>(row) * sizeof(V),
                                                        static_cast<std::size_t>(rows),
                                                        static_cast<std::size_t>(pitch) * sizeof(V), ws));
    return op::upload(ws, std::span<const V>(staged, static_cast<std::size_t>(row * rows)));  // the free function
  }
  template <class V>
  V* upload(Workspace& ws, std::span<const V> values) {
    const auto n = static_cast<std::int64_t>(values.size());
    return upload_rows(ws, values.data(), n, 1, n);
  }

  bool pinned() const noexcept { return pinned_; }
  const std::string& why() const noexcept { return why_; }
  std::size_t capacity() const noexcept { return capacity_; }

 private:
  // Copies the rows into the buffer after what is already there (on threads_ threads); returns
  // where they start.
  const void* put_rows(const void* src, std::size_t row_bytes, std::size_t rows, std::size_t pitch,
                       const Workspace& ws);

  Context context_;
  int threads_ = 1;
  std::size_t capacity_ = 0, used_ = 0;
  std::unique_ptr<std::byte, void (*)(void*)> memory_{nullptr, nullptr};
  bool pinned_ = false;
  std::string why_;
};

}  // namespace fieldft::op
