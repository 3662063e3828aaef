// fieldft::nufft::Plan: validates, designs (core), and hands the work to a backend.
#include <string>

#include "core/plan_impl.hpp"
#include "core/plan_setup.hpp"
#include "cpu/cpu_plan.hpp"
#include "fieldft/config.hpp"
#include "fieldft/nufft.hpp"
#include "fieldft/runtime.hpp"

namespace fieldft::nufft {

template <class T>
Plan<T>::Plan(int type, std::span<const std::int64_t> modes, int isign, std::int64_t ntransf, double eps,
              const Options& options) {
  core::PlanSetup setup = core::make_plan_setup(type, modes, isign, ntransf, eps, options, min_eps<T>());
  Backend backend = options.backend;
  if (backend == Backend::kCuda) {
    throw Error(ErrorCode::kBackendUnavailable,
                FIELDFT_HAVE_CUDA
                    ? "the CUDA NUFFT backend is not available in this version of fieldft yet; use backend cpu"
                    : "this fieldft was built without CUDA (FIELDFT_CUDA=OFF or no nvcc); use backend cpu");
  }
  impl_ = cpu::make_cpu_plan<T>(std::move(setup));
}

template <class T>
Plan<T>::~Plan() = default;
template <class T>
Plan<T>::Plan(Plan&&) noexcept = default;
template <class T>
Plan<T>& Plan<T>::operator=(Plan&&) noexcept = default;

template <class T>
void Plan<T>::set_points(std::int64_t m, const T* x, const T* y, const T* z) {
  core::check_points(impl_->info(), m, x, y, z);
  impl_->set_points(m, x, y, z);
}

template <class T>
void Plan<T>::execute(const Complex* in, Complex* out) {
  require(impl_->has_points(), ErrorCode::kInvalidState, "execute called before set_points");
  impl_->execute(in, out, false);
}

template <class T>
void Plan<T>::execute_adjoint(const Complex* in, Complex* out) {
  require(impl_->has_points(), ErrorCode::kInvalidState, "execute_adjoint called before set_points");
  impl_->execute(in, out, true);
}

template <class T>
const PlanInfo& Plan<T>::info() const {
  return impl_->info();
}

template class Plan<float>;
template class Plan<double>;

}  // namespace fieldft::nufft
