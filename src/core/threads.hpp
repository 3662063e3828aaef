// CPU thread counts: the one validation of Options::nthreads and mri::DftOptions::nthreads
// (fieldft/nufft.hpp documents the rule and the cap).
#pragma once

#include <string>

namespace fieldft::core {

// The OpenMP threads used for a requested count: kInvalidArgument naming `option` (e.g.
// "nthreads", "Dft: options.nthreads") when requested < 0; 0 → omp_get_max_threads(); both then
// capped at max_cpu_threads().
int resolve_cpu_threads(int requested, const std::string& option);

// Work below which a further thread does not pay: one thread per kMinWorkPerThreadNs of
// estimated single-thread time. Starting and joining a parallel region costs microseconds on an
// idle machine, but on a busy one each region waits until the scheduler runs every thread of it
// (a time slice, milliseconds): a transform of 0.3 ms on one thread took up to 350 ms on two
// (issue 29). With 1 ms per thread the most a stage can lose by running on fewer threads is
// about 1 ms.
inline constexpr double kMinWorkPerThreadNs = 1e6;

// The threads a stage of estimated single-thread time `work_ns` uses out of `nthreads` (already
// resolved): floor(work_ns / kMinWorkPerThreadNs), at least 1, at most nthreads.
int threads_for_work(double work_ns, int nthreads);

}  // namespace fieldft::core
