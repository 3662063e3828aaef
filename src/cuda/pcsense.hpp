// CUDA side of phase-corrected SENSE (include/fieldft/mri/pcsense.hpp), declared in plain C++ so
// that src/mri/pcsense.cpp, compiled by the host compiler, can call it without cuda_runtime.h.
// Defined in src/cuda/pcsense.cu. Include only under FIELDFT_HAVE_CUDA.
//
// Every function makes `device` current for its duration (restoring the caller's device),
// enqueues ONE kernel on `stream` (a cudaStream_t of that device; nullptr = legacy default) and
// returns: no allocation, no synchronisation. The kernels evaluate the per-point functions of
// include/fieldft/detail/pcsense.hpp (layouts there). Callers have validated the sizes; pointers
// are device memory, inputs and outputs distinct.
#pragma once

#include <complex>
#include <cstdint>

namespace fieldft::cuda::pcsense {

// out[v + n·c] = S_c(v) · P(v) · x(v), v < n, c < coils.
template <class T>
void expand(int device, void* stream, std::int64_t n, std::int64_t coils, const std::complex<T>* maps,
            const std::complex<T>* phase, const std::complex<T>* x, std::complex<T>* out);

// out(v) (+)= conj(P(v)) Σ_c conj(S_c(v)) in[v + n·c]; added when `accumulate`, else written.
template <class T>
void reduce(int device, void* stream, std::int64_t n, std::int64_t coils, const std::complex<T>* maps,
            const std::complex<T>* phase, const std::complex<T>* in, std::complex<T>* out, bool accumulate);

// w[i + m_s·c] = y[index[i] + m·c] for i < m_s, c < coils (gather); scatter is the reverse.
template <class T>
void gather(int device, void* stream, std::int64_t m, std::int64_t m_s, std::int64_t coils, const std::int64_t* index,
            const std::complex<T>* y, std::complex<T>* w);
template <class T>
void scatter(int device, void* stream, std::int64_t m, std::int64_t m_s, std::int64_t coils, const std::int64_t* index,
             const std::complex<T>* w, std::complex<T>* y);

}  // namespace fieldft::cuda::pcsense
