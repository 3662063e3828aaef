// Element-wise vector operations the MRI layer needs, on host or device vectors. Small on
// purpose: the solvers' vector-operations interface (DESIGN.md §3) will grow out of it.
#pragma once

#include <complex>
#include <cstdint>

#include "fieldft/config.hpp"
#include "fieldft/mri/linear_operator.hpp"

namespace fieldft::mri::detail {

// x ← αx for n elements in `memory` (device: synchronous, on the current device).
template <class T>
void scale_vector(Memory memory, std::complex<T>* x, std::int64_t n, std::complex<T> alpha);

#if FIELDFT_HAVE_CUDA
// Defined in src/cuda/dft_vector_ops.cu.
template <class T>
void scale_vector_device(std::complex<T>* x, std::int64_t n, std::complex<T> alpha);
#endif

}  // namespace fieldft::mri::detail
