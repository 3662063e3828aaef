// The CUDA backend of the NUFFT plan (plain C++ header: callable from non-CUDA sources).
#pragma once

#include <memory>

#include "core/plan_impl.hpp"

namespace fieldft::cuda {

template <class T>
std::unique_ptr<nufft::detail::PlanImpl<T>> make_cuda_plan(core::PlanSetup setup);

// Number of CUDA devices visible (0 without a driver); never throws.
int device_count() noexcept;

}  // namespace fieldft::cuda
