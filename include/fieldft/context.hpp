// fieldft::Context — where data lives and how work is ordered (DESIGN.md §3).
//
// Every transform, operator and vector operation runs in a Context:
//   location   host memory, or the memory of CUDA device d;
//   stream     on a device, the cudaStream_t that orders the work: owned (created by the
//              context, destroyed with its last copy) or borrowed (the caller's, never
//              destroyed here; nullptr is the legacy default stream);
//   nthreads   on the host, the OpenMP threads requested (0 = omp_get_max_threads()); plans,
//              operators and vector operations use fieldft::cpu_threads_for(nthreads), which
//              caps the count (fieldft/nufft.hpp).
// Copies are cheap and share an owned stream. Two contexts are the same place when their
// locations and streams are equal; operators combined into one must share a place.
//
// Stream order: on a device, apply / apply_adjoint / apply_normal and every vector operation
// enqueue their work on the context's stream and return; nothing inside synchronises the host.
// Call synchronize() (or wait on the stream) before reading results on the host. On the host,
// calls return when the result is complete.
#pragma once

#include <memory>
#include <string>

namespace fieldft {

enum class Backend : int { kAuto = 0, kCpu = 1, kCuda = 2 };

const char* backend_name(Backend b) noexcept;          // "auto", "cpu", "cuda"
Backend parse_backend(const std::string& name);        // throws kInvalidArgument

struct Location {
  enum class Kind : int { kHost = 0, kCuda = 1 };
  Kind kind = Kind::kHost;
  int device = -1;  // CUDA device ordinal; -1 on the host

  static Location host() noexcept { return {}; }
  static Location cuda(int device) noexcept { return {Kind::kCuda, device}; }
  bool is_host() const noexcept { return kind == Kind::kHost; }
  bool is_cuda() const noexcept { return kind == Kind::kCuda; }
  Backend backend() const noexcept { return is_cuda() ? Backend::kCuda : Backend::kCpu; }
  std::string to_string() const;  // "host", "cuda:0"
  friend bool operator==(const Location&, const Location&) = default;
};

class Context {
 public:
  // The host with all OpenMP threads.
  Context() = default;

  // The host; nthreads >= 0 (0 = all). Throws kInvalidArgument for a negative count (the rule of
  // fieldft::cpu_threads_for).
  static Context host(int nthreads = 0);
  // CUDA device `device` with a new non-blocking stream owned by the context (created on that
  // device; the caller's current device is restored). Throws kBackendUnavailable without CUDA
  // or without that device.
  static Context cuda(int device = 0);
  // CUDA device `device` ordering work on the caller's stream (a cudaStream_t of that device;
  // nullptr = the legacy default stream). The stream must outlive every user of the context.
  static Context cuda(int device, void* stream);
  // The context the older option fields describe (nufft::Options / mri::DftOptions): kAuto is
  // CUDA device `device` when compiled in and a device is present, else the host. On CUDA the
  // stream is borrowed when given, else owned (own_stream) or the legacy default stream.
  static Context from_options(Backend backend, int device, void* stream, int nthreads,
                              bool own_stream);

  const Location& location() const noexcept { return location_; }
  bool is_host() const noexcept { return location_.is_host(); }
  bool is_cuda() const noexcept { return location_.is_cuda(); }
  Backend backend() const noexcept { return location_.backend(); }
  int device() const noexcept { return location_.device; }
  void* stream() const noexcept { return stream_; }  // cudaStream_t; nullptr on the host
  bool owns_stream() const noexcept { return owner_ != nullptr; }
  int nthreads() const noexcept { return nthreads_; }

  // Blocks the host until the work enqueued on this context so far is done (no-op on the host).
  // Throws kCuda when that work failed.
  void synchronize() const;

  // "host (4 threads)", "cuda:0 (own stream)", "cuda:1 (stream 0x...)"
  std::string describe() const;

  // Same location and stream (thread counts may differ).
  bool same_place(const Context& other) const noexcept {
    return location_ == other.location_ && stream_ == other.stream_;
  }

 private:
  Location location_{};
  void* stream_ = nullptr;
  std::shared_ptr<void> owner_;  // destroys an owned stream with the last copy
  int nthreads_ = 0;
};

// Throws kContextMismatch naming `what` and both places unless a and b are the same place.
void require_same_place(const Context& a, const Context& b, const std::string& what);

}  // namespace fieldft
