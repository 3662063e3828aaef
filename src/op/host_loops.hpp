// The host loops of the operator layer (src/op/vector_ops.cpp, src/op/sparsify.cpp): one rule for
// when a loop goes parallel and with how many OpenMP threads. Internal; not installed.
#pragma once

#include <cstdint>

#include "fieldft/context.hpp"
#include "fieldft/nufft.hpp"  // cpu_threads_for

namespace fieldft::op::host {

inline constexpr std::int64_t kParallelMin = 32768;  // elements touched below which a loop stays serial

// Threads for a loop that touches `work` elements: 1 below kParallelMin (no parallel region),
// else the context's threads by the rule of plans and operators (cpu_threads_for, capped).
inline int team_size(const Context& c, std::int64_t work) {
  if (work < kParallelMin) return 1;
  return cpu_threads_for(c.nthreads());
}

// f(i) for i in [0, n); `work` is the number of elements the whole loop touches.
template <class F>
void for_each_index(const Context& c, std::int64_t n, std::int64_t work, const F& f) {
  const int nt = team_size(c, work);
  if (nt <= 1) {
    for (std::int64_t i = 0; i < n; ++i) f(i);
    return;
  }
#pragma omp parallel for schedule(static) num_threads(nt)
  for (std::int64_t i = 0; i < n; ++i) f(i);
}

}  // namespace fieldft::op::host
