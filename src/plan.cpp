// fieldft::nufft::Plan: validates, designs (core), and hands the work to a backend.
#include <limits>
#include <string>

#include "fieldft/config.hpp"  // first: FIELDFT_HAVE_CUDA selects the includes below
#include "core/plan_impl.hpp"
#include "core/plan_setup.hpp"
#include "cpu/cpu_plan.hpp"
#if FIELDFT_HAVE_CUDA
#include "cuda/cuda_plan.hpp"
#endif
#include "fieldft/nufft.hpp"

namespace fieldft::nufft {

namespace {
// The backend of a validated setup (options.backend is kCpu or kCuda).
template <class T>
std::unique_ptr<detail::PlanImpl<T>> make_impl(core::PlanSetup setup) {
#if FIELDFT_HAVE_CUDA
  if (setup.options.backend == Backend::kCuda) return cuda::make_cuda_plan<T>(std::move(setup));
#endif
  return cpu::make_cpu_plan<T>(std::move(setup));
}

template <class T>
core::PlanSetup plan_setup(int type, std::span<const std::int64_t> modes, int isign, std::int64_t ntransf, double eps,
                           const Options& options) {
  return core::make_plan_setup(type, modes, isign, ntransf, eps, options, min_eps<T>(),
                               std::numeric_limits<T>::epsilon() / 2);
}
}  // namespace

template <class T>
Plan<T>::Plan(int type, std::span<const std::int64_t> modes, int isign, std::int64_t ntransf, double eps,
              const Context& context, const Options& options)
    : context_(context) {
  // The context's place and threads replace the options' (the setup records the backend;
  // PlanInfo::nthreads is 0 on CUDA).
  nufft::Options resolved = options;
  resolved.backend = context_.backend();
  resolved.device = context_.is_cuda() ? context_.device() : options.device;
  resolved.stream = context_.stream();
  resolved.nthreads = context_.nthreads();
  impl_ = make_impl<T>(plan_setup<T>(type, modes, isign, ntransf, eps, resolved));
}

template <class T>
Plan<T>::Plan(int type, std::span<const std::int64_t> modes, int isign, std::int64_t ntransf, double eps,
              const Options& options) {
  nufft::Options resolved = options;
#if FIELDFT_HAVE_CUDA
  if (resolved.backend == Backend::kAuto)
    resolved.backend = cuda::device_count() > 0 ? Backend::kCuda : Backend::kCpu;
#else
  if (resolved.backend == Backend::kAuto) resolved.backend = Backend::kCpu;
#endif
  // The problem is validated before the context is made, so that its errors come first.
  core::PlanSetup setup = plan_setup<T>(type, modes, isign, ntransf, eps, resolved);
#if !FIELDFT_HAVE_CUDA
  require(resolved.backend != Backend::kCuda, ErrorCode::kBackendUnavailable,
          "this fieldft was built without CUDA (FIELDFT_CUDA=OFF or no nvcc); use backend cpu");
#endif
  context_ = Context::from_options(resolved.backend, options.device, options.stream, options.nthreads,
                                   /*own_stream=*/false);
  impl_ = make_impl<T>(std::move(setup));
}

template <class T>
Plan<T>::~Plan() = default;
template <class T>
Plan<T>::Plan(Plan&&) noexcept = default;
// The backend goes first, while the context that owns its stream is still alive.
template <class T>
Plan<T>& Plan<T>::operator=(Plan&& other) noexcept {
  if (this != &other) {
    impl_ = std::move(other.impl_);
    context_ = std::move(other.context_);
  }
  return *this;
}

namespace {
// The backend of a plan, or kInvalidState for a plan that was moved from.
template <class T>
detail::PlanImpl<T>& backend_of(const std::unique_ptr<detail::PlanImpl<T>>& impl) {
  require(impl != nullptr, ErrorCode::kInvalidState, "this plan was moved from and has no backend");
  return *impl;
}
}  // namespace

template <class T>
void Plan<T>::set_points(std::int64_t m, const T* x, const T* y, const T* z) {
  require(backend_of(impl_).info().type != 3, ErrorCode::kInvalidArgument,
          "set_points(m, x, y, z) is for type 1 and 2 plans; a type 3 plan needs its targets too: "
          "set_points(m, x, y, z, nk, s, t, u)");
  impl_->set_points(m, x, y, z);  // validates (on the device where the points are)
}

template <class T>
void Plan<T>::set_points(std::int64_t m, const T* x, const T* y, const T* z, std::int64_t nk, const T* s,
                         const T* t, const T* u) {
  const int type = backend_of(impl_).info().type;
  require(type == 3, ErrorCode::kInvalidArgument,
          "set_points with targets (nk, s, t, u) is for type 3 plans; this plan is type " + std::to_string(type) +
              ": use set_points(m, x, y, z)");
  const T* src[3] = {x, y, z};
  const T* tgt[3] = {s, t, u};
  impl_->set_points_type3(m, src, nk, tgt);
}

template <class T>
void Plan<T>::execute(const Complex* in, Complex* out) {
  require(backend_of(impl_).has_points(), ErrorCode::kInvalidState, "execute called before set_points");
  impl_->execute(in, out, false);
}

template <class T>
void Plan<T>::execute_adjoint(const Complex* in, Complex* out) {
  require(backend_of(impl_).has_points(), ErrorCode::kInvalidState, "execute_adjoint called before set_points");
  impl_->execute(in, out, true);
}

template <class T>
const PlanInfo& Plan<T>::info() const {
  return backend_of(impl_).info();
}

template class Plan<float>;
template class Plan<double>;

}  // namespace fieldft::nufft
