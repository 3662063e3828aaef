// CUDA steps of mri::density_compensation (src/mri/density.cpp), declared in plain C++ so that
// the host-compiled MRI layer can call them without cuda_runtime.h. Defined in
// src/cuda/density.cu. Include only under FIELDFT_HAVE_CUDA.
//
// Each function makes place.device current for its duration (restoring the caller's device) and
// enqueues on place.stream; only download_real waits for it. Callers have validated n > 0 and the
// pointers (device memory of place.device); CUDA runtime errors throw fieldft::Error(kCuda).
#pragma once

#include <complex>
#include <cstdint>

#include "cuda/vector_ops.hpp"  // vec::Place

namespace fieldft::cuda::density {

// The Pipe–Menon step: w_j = w_j / |d_j| for j < n (d_j = (G w)_j, never 0 for a positive
// kernel: it holds the point's own Σ_l ψ² > 0).
template <class T>
void divide_by_abs(vec::Place place, std::int64_t n, std::complex<T>* w, const std::complex<T>* d);

// host[j] = Re(w[j]) for j < n: copies the device values to the host and waits for the stream.
template <class T>
void download_real(vec::Place place, std::int64_t n, const std::complex<T>* w, T* host);

}  // namespace fieldft::cuda::density
