#include "mri/vector_ops.hpp"

namespace fieldft::mri::detail {

template <class T>
void scale_vector(Memory memory, std::complex<T>* x, std::int64_t n, std::complex<T> alpha) {
  if (n <= 0 || alpha == std::complex<T>(1)) return;
  if (memory == Memory::kDevice) {
#if FIELDFT_HAVE_CUDA
    scale_vector_device(x, n, alpha);
    return;
#else
    throw Error(ErrorCode::kBackendUnavailable, "device vector given, but fieldft was built without CUDA");
#endif
  }
#pragma omp parallel for schedule(static) if (n > (1 << 16))
  for (std::int64_t i = 0; i < n; ++i) x[i] *= alpha;
}

template void scale_vector(Memory, std::complex<float>*, std::int64_t, std::complex<float>);
template void scale_vector(Memory, std::complex<double>*, std::int64_t, std::complex<double>);

}  // namespace fieldft::mri::detail
