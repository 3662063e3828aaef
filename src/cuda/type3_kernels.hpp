// Device helpers of the type 3 NUFFT (cuda_plan.cu): the per-point factors and coordinates of
// core/type3.hpp, the diagonal scalings by the factors, and the narrowing of sorted-point data
// computed from double coordinates.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "core/type3.hpp"
#include "fieldft/detail/complex.hpp"

namespace fieldft::cuda {

// Sources x (g.dim device arrays of m) -> their grid coordinates x_grid (double) and prephase
// factors; targets s (nk) -> their inner type 2 coordinates s_inner (double) and postfactors:
// core::type3_source and core::type3_target, one thread per point.
template <class T>
void launch_type3_sources(cudaStream_t s, const core::Type3Geometry& g, std::int64_t m, const T* const* x,
                          double* const* x_grid, detail::Cplx<T>* prephase);
template <class T>
void launch_type3_targets(cudaStream_t s, const core::Type3Geometry& g, const core::KernelQuadrature& q,
                          std::int64_t nk, const T* const* sc, double* const* s_inner, detail::Cplx<T>* postfactor);

// out[b·n + i] = in[b·n + i] · factor[i] (conj(factor[i]) when conj_factor), b < nbatch, i < n.
// in may equal out.
template <class T>
void launch_scale_by_factor(cudaStream_t s, std::int64_t n, int nbatch, const detail::Cplx<T>* in,
                            const detail::Cplx<T>* factor, bool conj_factor, detail::Cplx<T>* out);

// Type 3 direct sums (PlanInfo::type3_direct) of ntransf transforms: out[t·n_out + o] =
// Σ_i in[t·n_in + i] exp(i·sign·s_o·x_i) (core::type3_direct_phase, in double), coordinates as dim
// device arrays.
template <class T>
void launch_type3_direct_sums(cudaStream_t s, int dim, double sign, std::int64_t n_out, const T* const* out_coords,
                              std::int64_t n_in, const T* const* in_coords, std::int64_t ntransf,
                              const detail::Cplx<T>* in, detail::Cplx<T>* out);

// out[i] = T(in[i]), i < n.
template <class T, class C>
void launch_narrow(cudaStream_t s, std::int64_t n, const C* in, T* out);

}  // namespace fieldft::cuda
