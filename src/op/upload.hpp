// Host values into context memory, for operators that keep tables (diagonals, coil maps,
// interpolators) at their context, and host memory pinned for such copies. Internal; not
// installed.
#pragma once

#include <cstdint>
#include <cstring>
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

}  // namespace fieldft::op
