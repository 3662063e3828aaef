// CUDA side of normals stored as a dense Gram matrix H = AᴴA (the exact-DFT pcSENSE's Gram
// normal, src/mri/pcsense_dft.cpp), declared in plain C++ so that host-compiled code can call it.
// Defined in src/cuda/gram.cu. Include only under FIELDFT_HAVE_CUDA.
//
// Every call makes `device` current for its duration (restoring the caller's device), enqueues
// its kernels on `stream` (a cudaStream_t of that device; nullptr = legacy default) and returns:
// no allocation, no synchronisation. Pointers are device memory, inputs and outputs distinct.
#pragma once

#include <complex>
#include <cstdint>

namespace fieldft::cuda::gram {

// out (n × k, column-major, column c at out + n·c) = columns v0 … v0+k−1 of the n×n identity;
// a column past the last (v0 + c ≥ n) is zero.
template <class T>
void identity_columns(int device, void* stream, std::int64_t n, std::int64_t v0, std::int64_t k,
                      std::complex<T>* out);

// Scratch (in std::complex<T> values) that product() needs for an n×n H and k columns.
std::int64_t product_scratch(std::int64_t n, std::int64_t k);

// y = H·u for an n×n H stored column-major (H[v + n·v']), u and y n × k column-major (k images).
// Bound by reading H once per 8 columns of u (8n² bytes in float); the column range is split
// over blocks whose partial sums go through `scratch` (product_scratch values) and are added in
// a fixed order: the result does not depend on the launch.
template <class T>
void product(int device, void* stream, const std::complex<T>* h, std::int64_t n, const std::complex<T>* u,
             std::int64_t k, std::complex<T>* y, std::complex<T>* scratch);

}  // namespace fieldft::cuda::gram
