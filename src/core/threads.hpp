// CPU thread counts: the one validation of Options::nthreads and mri::DftOptions::nthreads
// (fieldft/nufft.hpp documents the rule and the cap).
#pragma once

#include <string>

namespace fieldft::core {

// The OpenMP threads used for a requested count: kInvalidArgument naming `option` (e.g.
// "nthreads", "Dft: options.nthreads") when requested < 0; 0 → omp_get_max_threads(); both then
// capped at max_cpu_threads().
int resolve_cpu_threads(int requested, const std::string& option);

}  // namespace fieldft::core
