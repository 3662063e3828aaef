// CUDA side of the time-segmented encoding (include/fieldft/mri/time_segmentation.hpp), declared
// in plain C++ so that src/mri/time_segmented_encoding.cpp, compiled by the host compiler, can
// call it without cuda_runtime.h. Defined in src/cuda/time_segmentation.cu. Include only under
// FIELDFT_HAVE_CUDA.
//
// Every function makes `device` current for its duration (restoring the caller's device),
// enqueues ONE kernel on `stream` (a cudaStream_t of that device; nullptr = legacy default) and
// returns: no allocation, no synchronisation. The kernels evaluate the per-point functions of
// include/fieldft/detail/time_segmentation.hpp (which states the four passes and the layout), one
// thread per index. The tables' pointers and the vectors are device memory, inputs and outputs
// distinct; callers have validated the geometry.
#pragma once

#include <complex>

#include "fieldft/detail/time_segmentation.hpp"

namespace fieldft::cuda::tseg {

using detail::tseg::SegmentTables;

// u (n·L·B) from x (n·B).
template <class T>
void expand(int device, void* stream, const SegmentTables<T>& g, const std::complex<T>* x, std::complex<T>* u);
// x (n·B) from u (n·L·B).
template <class T>
void reduce(int device, void* stream, const SegmentTables<T>& g, const std::complex<T>* u, std::complex<T>* x);
// y (M·B) from u (M·L·B).
template <class T>
void combine(int device, void* stream, const SegmentTables<T>& g, const std::complex<T>* u, std::complex<T>* y);
// u (M·L·B) from y (M·B).
template <class T>
void spread(int device, void* stream, const SegmentTables<T>& g, const std::complex<T>* y, std::complex<T>* u);

// b (n·segs): b[v + n·l] = exp(−i·field[v]·τ_l) with the phase formed in T, as the host's
// mri::FieldToeplitzNormal does (field null: all ones). field: n values, tau: segs values, both
// device memory.
template <class T>
void phase_images(int device, void* stream, const T* field, const double* tau, std::int64_t n, int segs,
                  std::complex<T>* b);

}  // namespace fieldft::cuda::tseg
