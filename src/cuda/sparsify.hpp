// CUDA side of the sparsifying operators (include/fieldft/op/sparsify.hpp), declared in plain C++
// so that src/op/sparsify.cpp, compiled by the host compiler, can call it without
// cuda_runtime.h. Defined in src/cuda/sparsify.cu. Include only under FIELDFT_HAVE_CUDA.
//
// Every function makes `device` current for its duration (restoring the caller's device),
// enqueues ONE kernel on `stream` (a cudaStream_t of that device; nullptr = legacy default) and
// returns: no allocation, no synchronisation. The kernels evaluate the per-point functions of
// include/fieldft/detail/sparsify.hpp, one thread per output element. Callers have validated the
// geometry; pointers are device memory, inputs and outputs distinct.
#pragma once

#include <complex>
#include <cstdint>

#include "fieldft/detail/sparsify.hpp"

namespace fieldft::cuda::sparsify {

using detail::sparsify::DiffGeometry;
using detail::sparsify::WaveletPass;

// Over `count` = n·K domain elements: y = Dx, x = Dᴴy, z = DᴴDx.
template <class T>
void diff_forward(int device, void* stream, const DiffGeometry& g, std::int64_t count, const std::complex<T>* x,
                  std::complex<T>* y);
template <class T>
void diff_adjoint(int device, void* stream, const DiffGeometry& g, std::int64_t count, const std::complex<T>* y,
                  std::complex<T>* x);
template <class T>
void diff_normal(int device, void* stream, const DiffGeometry& g, std::int64_t count, const std::complex<T>* x,
                 std::complex<T>* z);

// One pass over `count` = block·K elements.
template <class T>
void wavelet_pass(int device, void* stream, const WaveletPass<T>& p, std::int64_t count, const std::complex<T>* src,
                  std::complex<T>* dst);

}  // namespace fieldft::cuda::sparsify
