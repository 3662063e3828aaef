// The CPU backend of the field-corrected DFT (fieldft::mri::Dft / DftR2).
#pragma once

#include <memory>

#include "core/dft_setup.hpp"

namespace fieldft::cpu {

// nthreads: the OpenMP threads, already resolved (fieldft::cpu_threads_for), >= 1.
template <class T>
std::unique_ptr<core::DftEngine<T>> make_dft_engine(std::shared_ptr<const core::DftSetup> setup, int nthreads);

}  // namespace fieldft::cpu
