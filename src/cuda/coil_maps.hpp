// CUDA side of fieldft::mri::estimate_coil_maps (include/fieldft/mri/coil_maps.hpp), declared in
// plain C++ so that src/mri/coil_maps.cpp, compiled by the host compiler, can call it without
// cuda_runtime.h. Defined in src/cuda/coil_maps.cu. Include only under FIELDFT_HAVE_CUDA.
//
// Every function makes place.device current for its duration (restoring the caller's device)
// and enqueues on place.stream; only copy_to_host waits. Callers have validated the arguments
// (counts > 0, device pointers of the place's device); CUDA errors throw fieldft::Error(kCuda).
#pragma once

#include <complex>
#include <cstddef>
#include <cstdint>

#include "cuda/vector_ops.hpp"  // vec::Place

namespace fieldft::cuda::coil {

using vec::Place;

// out[i + m_sel·c] = w[i] · data[index[i] + m·c] for i < m_sel, c < coils: the calibration
// samples of every coil, weighted (density × window).
template <class T>
void gather_weighted(Place place, std::int64_t m, std::int64_t m_sel, std::int64_t coils,
                     const std::int64_t* index, const T* w, const std::complex<T>* data,
                     std::complex<T>* out);

// In place, images (n voxels × coils, coil slowest) → RSS maps: r_v = sqrt Σ_c |x_c,v|²; where
// r_v > threshold · max r, x_c,v · p_v / r_v with p_v = conj(x_ref,v)/|x_ref,v| (ref >= 0; 1 for
// ref = -1 or x_ref,v = 0), else 0. scratch: n + 1 values of T in device memory (r, then max r).
template <class T>
void rss_normalise(Place place, std::int64_t n, std::int64_t coils, int ref, double threshold,
                   std::complex<T>* maps, T* scratch);

// Copies `bytes` of device memory to host memory after the work enqueued on the stream, and
// waits for the copy.
void copy_to_host(void* dst, const void* src, std::size_t bytes, Place place);

}  // namespace fieldft::cuda::coil
