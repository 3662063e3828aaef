// Device helpers of the type 3 NUFFT (cuda_plan.cu): the diagonal scalings by the factors of
// core/type3.hpp, and the narrowing of sorted-point data computed from double coordinates.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "fieldft/detail/complex.hpp"

namespace fieldft::cuda {

// out[b·n + i] = in[b·n + i] · factor[i] (conj(factor[i]) when conj_factor), b < nbatch, i < n.
// in may equal out.
template <class T>
void launch_scale_by_factor(cudaStream_t s, std::int64_t n, int nbatch, const detail::Cplx<T>* in,
                            const detail::Cplx<T>* factor, bool conj_factor, detail::Cplx<T>* out);

// out[i] = T(in[i]), i < n.
template <class T, class C>
void launch_narrow(cudaStream_t s, std::int64_t n, const C* in, T* out);

}  // namespace fieldft::cuda
