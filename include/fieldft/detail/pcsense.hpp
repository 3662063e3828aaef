// Per-point math of phase-corrected SENSE (fieldft/mri/pcsense.hpp), shared by the host loops
// (src/mri/pcsense.cpp) and the CUDA kernels (src/cuda/pcsense.cu): each function computes the
// outputs of ONE voxel or ONE sample, so both backends compute the same sums in the same order.
//
// Layouts: an image of n voxels; coil maps S and coil images of C coils, S_c(v) at v + n·c; the
// phase factor P = e^{iφ_s} of one shot, n values; samples of all coils in the ORIGINAL order,
// sample j of coil c at j + m·c; those of one shot in its own order, i + m_s·c, with
// index[i] the original position of the shot's sample i.
#pragma once

#include <cstdint>

#include "fieldft/detail/complex.hpp"
#include "fieldft/detail/hd.hpp"

namespace fieldft::detail::pcsense {

template <class T>
FIELDFT_HD Cplx<T> cmul(Cplx<T> a, Cplx<T> b) {
  return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
}
// conj(a)·b
template <class T>
FIELDFT_HD Cplx<T> cmul_conj(Cplx<T> a, Cplx<T> b) {
  return {a.re * b.re + a.im * b.im, a.re * b.im - a.im * b.re};
}

// out[v + n·c] = S_c(v) · (P(v) · x(v)) for every coil c: the coil images of the phased image.
template <class T>
FIELDFT_HD void expand_point(std::int64_t n, std::int64_t coils, const Cplx<T>* maps, const Cplx<T>* phase,
                             const Cplx<T>* x, Cplx<T>* out, std::int64_t v) {
  const Cplx<T> px = cmul(phase[v], x[v]);
  for (std::int64_t c = 0; c < coils; ++c) out[v + n * c] = cmul(maps[v + n * c], px);
}

// The adjoint of expand_point: out(v) = conj(P(v)) · Σ_c conj(S_c(v)) · in[v + n·c], summed
// c = 0, 1, … in T; with `accumulate` added to out(v) (the sum over shots), else written.
template <class T>
FIELDFT_HD void reduce_point(std::int64_t n, std::int64_t coils, const Cplx<T>* maps, const Cplx<T>* phase,
                             const Cplx<T>* in, Cplx<T>* out, bool accumulate, std::int64_t v) {
  Cplx<T> s{T(0), T(0)};
  for (std::int64_t c = 0; c < coils; ++c) {
    const Cplx<T> t = cmul_conj(maps[v + n * c], in[v + n * c]);
    s.re += t.re;
    s.im += t.im;
  }
  const Cplx<T> r = cmul_conj(phase[v], s);
  if (accumulate) {
    out[v].re += r.re;
    out[v].im += r.im;
  } else {
    out[v] = r;
  }
}

// Element t = i + m_s·c of a shot's samples: w[t] = y[index[i] + m·c] (gather), or the reverse
// (scatter). Together the shots' index arrays are a permutation of 0 … m−1, so the scatters of
// all shots write every sample of y exactly once.
FIELDFT_HD std::int64_t original_position(std::int64_t m, std::int64_t m_s, const std::int64_t* index, std::int64_t t) {
  return index[t % m_s] + m * (t / m_s);
}

template <class T>
FIELDFT_HD void gather_point(std::int64_t m, std::int64_t m_s, const std::int64_t* index, const Cplx<T>* y, Cplx<T>* w,
                             std::int64_t t) {
  w[t] = y[original_position(m, m_s, index, t)];
}

template <class T>
FIELDFT_HD void scatter_point(std::int64_t m, std::int64_t m_s, const std::int64_t* index, const Cplx<T>* w, Cplx<T>* y,
                              std::int64_t t) {
  y[original_position(m, m_s, index, t)] = w[t];
}

}  // namespace fieldft::detail::pcsense
