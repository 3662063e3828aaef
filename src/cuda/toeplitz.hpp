// The CUDA backend of the Toeplitz normal operator (fieldft::mri::ToeplitzNormal). A plain C++
// header: src/mri/toeplitz.cpp, compiled by the host compiler, calls it.
#pragma once

#include <memory>

#include "core/toeplitz.hpp"

namespace fieldft::cuda {

// An engine on CUDA device `device` that orders all its work on `stream` (a cudaStream_t of that
// device; nullptr = the legacy default stream), which must outlive the engine. The 2N grid of
// the B images and the batched cuFFT plans are made here; apply enqueues three kernels and four
// cuFFT executions and returns (no allocation, no host synchronisation). The caller's current
// device is restored by every call, the destructor included.
template <class T>
std::unique_ptr<core::ToeplitzEngine<T>> make_toeplitz_engine(const core::ToeplitzGeometry& g, int device,
                                                             void* stream);

}  // namespace fieldft::cuda
