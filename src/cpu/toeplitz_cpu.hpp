// The CPU backend of the Toeplitz normal operator (fieldft::mri::ToeplitzNormal): FFTW plans of
// the pruned passes on the 2N grid and OpenMP loops for the padding, kernel product and crop.
#pragma once

#include <memory>

#include "core/toeplitz.hpp"

namespace fieldft::cpu {

// nthreads: the OpenMP threads, already resolved (fieldft::cpu_threads_for), >= 1. measure: plan
// the FFTs with FFTW_MEASURE (else FFTW_ESTIMATE). pruned = false transforms every line of the 2N
// grid (the same result; for bench/mri/toeplitz_bench.cpp's comparison). Allocates the 2N grid
// of all B images here.
template <class T>
std::unique_ptr<core::ToeplitzEngine<T>> make_toeplitz_engine(const core::ToeplitzGeometry& g, int nthreads,
                                                             bool measure, bool pruned = true);

}  // namespace fieldft::cpu
