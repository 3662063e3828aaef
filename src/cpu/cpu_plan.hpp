// The CPU backend of the NUFFT plan.
#pragma once

#include <memory>

#include "core/plan_impl.hpp"

namespace fieldft::cpu {

template <class T>
std::unique_ptr<nufft::detail::PlanImpl<T>> make_cpu_plan(core::PlanSetup setup);

}  // namespace fieldft::cpu
