#include "support/backends.hpp"

#include "fieldft/config.hpp"
#include "fieldft/runtime.hpp"

namespace fieldft::test {

std::string backend_unavailable_reason(Backend b) {
  if (b != Backend::kCuda) return {};
#if FIELDFT_HAVE_CUDA
  if (cuda_devices().empty())
    return "CUDA backend compiled in, but no CUDA device is visible (fieldft::cuda_devices() is "
           "empty): skipping";
  return {};
#else
  return "this fieldft build has no CUDA backend (FIELDFT_HAVE_CUDA is 0): skipping";
#endif
}

}  // namespace fieldft::test
