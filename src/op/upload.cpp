// op::StagingBuffer (upload.hpp): a pinned host buffer that pageable values go up through.
#include "op/upload.hpp"

#include <algorithm>
#include <cstdlib>

#include "core/threads.hpp"

namespace fieldft::op {

namespace {
constexpr std::size_t kPage = 4096;      // the buffer starts and ends on page boundaries
constexpr std::size_t kAlignment = 256;  // each upload starts on this (the device copy's best)
// A host thread copies ~4-8 GB/s (2x H200 host: 8.1 GB/s on one thread alone, 27 on 4, 41 on 8;
// session 26), so one byte is ~0.25 ns of work for core::threads_for_work: a slice's 17 MB of
// k-space (64 x 1024 samples, 32 coils) take 4 threads.
constexpr double kCopyNsPerByte = 0.25;
}  // namespace

StagingBuffer::StagingBuffer(const Context& c, std::size_t bytes, int threads)
    : context_(c), threads_(std::max(1, threads)) {
  require(c.is_cuda(), ErrorCode::kInvalidArgument,
          "StagingBuffer: a buffer for copies to a CUDA device; " + c.describe() + " reads host memory directly");
  capacity_ = std::max<std::size_t>(kPage, (bytes + kPage - 1) / kPage * kPage);
  memory_ = {static_cast<std::byte*>(std::aligned_alloc(kPage, capacity_)), std::free};
  if (!memory_)
    throw Error(ErrorCode::kOutOfMemory,
                "StagingBuffer: cannot allocate " + std::to_string(capacity_) + " bytes of host memory");
#if FIELDFT_HAVE_CUDA
  why_ = cuda::host_register(memory_.get(), capacity_);
  pinned_ = why_.empty();
#else
  why_ = "this fieldft was built without CUDA";
#endif
}

StagingBuffer::~StagingBuffer() {
#if FIELDFT_HAVE_CUDA
  // Waits for the device's copies (an error path may unwind with one in flight), then unpins.
  if (pinned_) {
    const int device = context_.device();
    cuda::host_unregister(memory_.get(), std::span<const int>(&device, 1));
  }
#endif
}

void StagingBuffer::begin() {
  context_.synchronize();
  used_ = 0;
}

const void* StagingBuffer::put_rows(const void* src, std::size_t row_bytes, std::size_t rows, std::size_t pitch,
                                    const Workspace& ws) {
  require(ws.context().device() == context_.device() && ws.context().stream() == context_.stream(),
          ErrorCode::kInvalidArgument,
          "StagingBuffer: the workspace is on " + ws.context().describe() + ", the buffer's copies on " +
              context_.describe() + " (begin() waits for the buffer's stream only)");
  const std::size_t total = row_bytes * rows;
  const std::size_t at = (used_ + kAlignment - 1) / kAlignment * kAlignment;
  require(at <= capacity_ && total <= capacity_ - at, ErrorCode::kInvalidArgument,
          "StagingBuffer: " + std::to_string(total) + " bytes do not fit (" + std::to_string(capacity_) + " bytes, " +
              std::to_string(at) + " in use since begin())");
  std::byte* dst = memory_.get() + at;
  const auto* from = static_cast<const std::byte*>(src);
  // Equal byte ranges of the rows' concatenation, one per thread.
  const int nt = core::threads_for_work(static_cast<double>(total) * kCopyNsPerByte, threads_);
#pragma omp parallel for schedule(static) num_threads(nt)
  for (int t = 0; t < nt; ++t) {
    std::size_t b = total * static_cast<std::size_t>(t) / static_cast<std::size_t>(nt);
    const std::size_t e = total * static_cast<std::size_t>(t + 1) / static_cast<std::size_t>(nt);
    while (b < e) {
      const std::size_t r = b / row_bytes, o = b % row_bytes, len = std::min(row_bytes - o, e - b);
      std::memcpy(dst + b, from + r * pitch + o, len);
      b += len;
    }
  }
  used_ = at + total;
  return dst;
}

}  // namespace fieldft::op
