#include "fieldft/runtime.hpp"

#include <fftw3.h>
#include <omp.h>

#include "fieldft/config.hpp"

namespace fieldft {

BuildInfo build_info() {
  BuildInfo b;
  b.version = FIELDFT_VERSION_STRING;
  b.cuda = FIELDFT_HAVE_CUDA;
  b.cuda_architectures = FIELDFT_HAVE_CUDA ? FIELDFT_CUDA_ARCHITECTURES : "";
  b.build_type = FIELDFT_BUILD_TYPE;
  b.compiler = FIELDFT_CXX_COMPILER;
  b.fftw_version = fftw_version;
  b.cpu_threads = omp_get_max_threads();
  return b;
}

#if !FIELDFT_HAVE_CUDA
std::vector<DeviceInfo> cuda_devices() noexcept { return {}; }
#endif

}  // namespace fieldft
