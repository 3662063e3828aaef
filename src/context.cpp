// fieldft::Context: where data lives, the stream that orders device work, the host threads.
#include "fieldft/context.hpp"

#include <sstream>

#include "fieldft/config.hpp"  // first: FIELDFT_HAVE_CUDA selects the includes below
#include "fieldft/error.hpp"
#include "fieldft/nufft.hpp"  // cpu_threads_for: the one thread rule of plans, operators and contexts
#if FIELDFT_HAVE_CUDA
#include "cuda/cuda_plan.hpp"  // device_count(), the test src/plan.cpp uses for kAuto
#include "cuda/stream.hpp"
#endif

namespace fieldft {

#if !FIELDFT_HAVE_CUDA
namespace {
[[noreturn]] void throw_no_cuda() {
  throw Error(ErrorCode::kBackendUnavailable,
              "a CUDA context was requested, but this fieldft was built without CUDA "
              "(FIELDFT_CUDA=OFF or no nvcc); use the host (Context::host(), backend cpu)");
}
}  // namespace
#endif

std::string Location::to_string() const { return is_cuda() ? "cuda:" + std::to_string(device) : "host"; }

Context Context::host(int nthreads) {
  (void)cpu_threads_for(nthreads);  // kInvalidArgument for nthreads < 0, as plans and operators
  Context c;
  c.nthreads_ = nthreads;
  return c;
}

Context Context::cuda(int device) {
#if FIELDFT_HAVE_CUDA
  Context c;
  c.location_ = Location::cuda(device);
  c.stream_ = cuda::stream_create(device);  // checks the device
  // The deleter runs with the last copy and destroys the stream on its own device.
  c.owner_ = std::shared_ptr<void>(c.stream_, [device](void* s) { cuda::stream_destroy(device, s); });
  return c;
#else
  (void)device;
  throw_no_cuda();
#endif
}

Context Context::cuda(int device, void* stream) {
#if FIELDFT_HAVE_CUDA
  cuda::require_device(device);
  cuda::require_stream_on_device(device, stream);
  Context c;
  c.location_ = Location::cuda(device);
  c.stream_ = stream;
  return c;
#else
  (void)device;
  (void)stream;
  throw_no_cuda();
#endif
}

Context Context::from_options(Backend backend, int device, void* stream, int nthreads, bool own_stream) {
  (void)cpu_threads_for(nthreads);
#if FIELDFT_HAVE_CUDA
  if (backend == Backend::kAuto) backend = cuda::device_count() > 0 ? Backend::kCuda : Backend::kCpu;
#else
  if (backend == Backend::kAuto) backend = Backend::kCpu;
#endif
  if (backend != Backend::kCuda) return host(nthreads);
  Context c = stream ? cuda(device, stream) : own_stream ? cuda(device) : cuda(device, nullptr);
  c.nthreads_ = nthreads;  // host-side work of a device context (planning, sorting) may use them
  return c;
}

void Context::synchronize() const {
  if (is_host()) return;
#if FIELDFT_HAVE_CUDA
  cuda::stream_synchronize(device(), stream_);
#else
  throw_no_cuda();  // unreachable: no CUDA context can be made without CUDA
#endif
}

std::string Context::describe() const {
  std::ostringstream os;
  os << location_.to_string();
  if (is_host()) {
    // The threads a plan or operator in this context uses (cpu_threads_for: capped).
    const int used = cpu_threads_for(nthreads_);
    if (nthreads_ > 0)
      os << " (" << used << (used == 1 ? " thread)" : " threads)");
    else
      os << " (all " << used << " threads)";
  } else if (owns_stream()) {
    os << " (own stream)";
  } else if (stream_ == nullptr) {
    os << " (default stream)";
  } else {
    os << " (stream " << stream_ << ")";
  }
  return os.str();
}

void require_same_place(const Context& a, const Context& b, const std::string& what) {
  if (a.same_place(b)) return;
  throw Error(ErrorCode::kContextMismatch, what + ": operands in different places (" + a.describe() + " vs " +
                                               b.describe() + "); every operand must share one location and stream");
}

}  // namespace fieldft
