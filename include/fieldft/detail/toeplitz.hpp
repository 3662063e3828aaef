// Per-point math of the Toeplitz engines' SENSE and field-corrected forms (src/core/toeplitz.hpp),
// shared by the CPU engine (src/cpu/toeplitz_cpu.cpp) and the CUDA engine (src/cuda/toeplitz.cu):
// the factor that makes image b of the pass out of the one image x, and its conjugate back.
//
// The B images of one image x of n voxels are b = c + C·l for coil c < C and segment l < K
// (K = B / C; the plain SENSE form has K = 1), image b = S_c ∘ b_l ∘ x with the coil maps S
// (S_c(v) at maps[v + n·c]; null: C = 1, S = 1) and the segment phases b_l (b_l(v) at
// phases[v + n·l]; null: K = 1, b = 1). The combination is z = Σ_b conj(S_c ∘ b_l) ∘ (image b's
// result).
#pragma once

#include <cstdint>

#include "fieldft/detail/complex.hpp"
#include "fieldft/detail/hd.hpp"

namespace fieldft::detail::toeplitz {

template <class T>
struct SenseImages {
  std::int64_t n = 0;      // voxels of the image
  std::int64_t coils = 1;  // C
  const Cplx<T>* maps = nullptr;
  const Cplx<T>* phases = nullptr;
};

// S_c(v)·b_l(v) of image b = c + C·l.
template <class T>
FIELDFT_HD Cplx<T> factor(const SenseImages<T>& s, std::int64_t b, std::int64_t v) {
  Cplx<T> f = s.maps ? s.maps[(b % s.coils) * s.n + v] : Cplx<T>{1, 0};
  if (s.phases) {
    const Cplx<T> p = s.phases[(b / s.coils) * s.n + v];
    f = Cplx<T>{f.re * p.re - f.im * p.im, f.re * p.im + f.im * p.re};
  }
  return f;
}

// Image b's value at voxel v: factor(b, v)·x(v).
template <class T>
FIELDFT_HD Cplx<T> image_value(const SenseImages<T>& s, std::int64_t b, std::int64_t v, Cplx<T> xv) {
  const Cplx<T> f = factor(s, b, v);
  return {f.re * xv.re - f.im * xv.im, f.re * xv.im + f.im * xv.re};
}

// acc + conj(factor(b, v))·r: image b's result r at voxel v added to the combination.
template <class T>
FIELDFT_HD Cplx<T> combine_value(const SenseImages<T>& s, std::int64_t b, std::int64_t v, Cplx<T> r, Cplx<T> acc) {
  const Cplx<T> f = factor(s, b, v);
  return {acc.re + f.re * r.re + f.im * r.im, acc.im + f.re * r.im - f.im * r.re};
}

}  // namespace fieldft::detail::toeplitz
