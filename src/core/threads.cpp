#include "core/threads.hpp"

#include <omp.h>

#include <algorithm>

#include "fieldft/error.hpp"
#include "fieldft/nufft.hpp"

namespace fieldft {

int max_cpu_threads() noexcept {
  // More threads than a few per processor only oversubscribe; far more (nthreads = 100000) make
  // the OpenMP runtime fail to create them and abort the process.
  const int per_procs = 4 * std::max(1, omp_get_num_procs());
  const int limit = omp_get_thread_limit();
  return std::max(1, limit > 0 ? std::min(per_procs, limit) : per_procs);
}

int cpu_threads_for(int requested) { return core::resolve_cpu_threads(requested, "nthreads"); }

namespace core {

int resolve_cpu_threads(int requested, const std::string& option) {
  require(requested >= 0, ErrorCode::kInvalidArgument,
          option + " is " + std::to_string(requested) +
              "; expected 0 (all OpenMP threads) or a positive thread count (at most " +
              std::to_string(max_cpu_threads()) + " are used)");
  const int want = requested > 0 ? requested : omp_get_max_threads();
  return std::clamp(want, 1, max_cpu_threads());
}

int threads_for_work(double work_ns, int nthreads) {
  const double fit = work_ns / kMinWorkPerThreadNs;
  if (!(fit >= 1.0)) return 1;  // also NaN
  return fit >= nthreads ? std::max(nthreads, 1) : static_cast<int>(fit);
}

}  // namespace core
}  // namespace fieldft
