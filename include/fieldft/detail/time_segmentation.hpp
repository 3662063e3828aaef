// Per-point math of the time-segmented encoding (fieldft/mri/time_segmentation.hpp), shared by
// the host loops (src/mri/time_segmented_encoding.cpp) and the CUDA kernels
// (src/cuda/time_segmentation.cu): each function computes the outputs of ONE index, so both
// backends compute the same sums in the same order.
//
// With L segments, B images of n voxels and M samples, the stacked vectors of the one batched
// NUFFT hold image (b, l) at batch index b + B·l (segments slowest):
//   expand   u[v + n(b + B·l)] = b_l(v) · x[v + n·b],             b_l(v) = exp(−iΔω_v τ_l)
//   reduce   x[v + n·b] = Σ_l conj(b_l(v)) · u[v + n(b + B·l)]     (the adjoint of expand)
//   combine  y[j + M·b] = Σ_l h_l(t_j) · u[j + M(b + B·l)]
//   spread   u[j + M(b + B·l)] = conj(h_l(t_j)) · y[j + M·b]        (the adjoint of combine)
// h is stored once per distinct readout time d (D × L, l fastest) with each sample's d, and for
// each d the range [first, last) of l with non-zero coefficients (two for Hanning weights); the
// phases b_l(v) are computed where they are used, from f_v = Δω_v/2π in Hz and τ_l in double, so
// no L phase images are stored.
#pragma once

#include <cstdint>

#include "fieldft/detail/complex.hpp"
#include "fieldft/detail/dft_math.hpp"
#include "fieldft/detail/hd.hpp"

namespace fieldft::detail::tseg {

template <class T>
struct SegmentTables {
  std::int64_t n = 0;                     // voxels of one image
  std::int64_t m = 0;                     // samples
  std::int64_t batch = 1;                 // B images
  int segments = 1;                       // L
  const double* field_hz = nullptr;       // n values: Δω_v / 2π
  const double* tau = nullptr;            // L segment times (s)
  const Cplx<T>* h = nullptr;             // D × L coefficients
  const std::int32_t* time = nullptr;     // m values: each sample's distinct time d
  const std::int32_t* range = nullptr;    // 2·D values: first, last non-zero l of row d
};

template <class T>
FIELDFT_HD Cplx<T> cmul(Cplx<T> a, Cplx<T> b) {
  return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
}
template <class T>
FIELDFT_HD Cplx<T> cmul_conj(Cplx<T> a, Cplx<T> b) {  // conj(a)·b
  return {a.re * b.re + a.im * b.im, a.re * b.im - a.im * b.re};
}

// exp(−2πi f τ): the product in double, reduced to [−½, ½] cycles there, so that float rounds
// only the reduced phase (as the field-corrected DFT does, fieldft/detail/dft_math.hpp).
template <class T>
FIELDFT_HD Cplx<T> segment_phase(double f, double tau) {
  const double q = f * tau;
  const T r = static_cast<T>(q - dft::round_nearest(q));
  T s, c;
  dft::sincos_2pi(r, &s, &c);
  return {c, -s};
}

// Index i = v + n·l in [0, n·L).
template <class T>
FIELDFT_HD void expand_point(const SegmentTables<T>& g, const Cplx<T>* x, Cplx<T>* u, std::int64_t i) {
  const std::int64_t v = i % g.n, l = i / g.n;
  const Cplx<T> p = segment_phase<T>(g.field_hz[v], g.tau[l]);
  for (std::int64_t b = 0; b < g.batch; ++b) u[v + g.n * (b + g.batch * l)] = cmul(p, x[v + g.n * b]);
}

// Index i = v + n·b in [0, n·B).
template <class T>
FIELDFT_HD void reduce_point(const SegmentTables<T>& g, const Cplx<T>* u, Cplx<T>* x, std::int64_t i) {
  const std::int64_t v = i % g.n, b = i / g.n;
  const double f = g.field_hz[v];
  Cplx<T> s{0, 0};
  for (int l = 0; l < g.segments; ++l) {
    const Cplx<T> t = cmul_conj(segment_phase<T>(f, g.tau[l]), u[v + g.n * (b + g.batch * l)]);
    s.re += t.re;
    s.im += t.im;
  }
  x[i] = s;
}

// Index i = j + M·b in [0, M·B).
template <class T>
FIELDFT_HD void combine_point(const SegmentTables<T>& g, const Cplx<T>* u, Cplx<T>* y, std::int64_t i) {
  const std::int64_t j = i % g.m, b = i / g.m;
  const std::int64_t d = g.time[j];
  const Cplx<T>* h = g.h + d * g.segments;
  Cplx<T> s{0, 0};
  for (int l = g.range[2 * d]; l < g.range[2 * d + 1]; ++l) {
    const Cplx<T> t = cmul(h[l], u[j + g.m * (b + g.batch * l)]);
    s.re += t.re;
    s.im += t.im;
  }
  y[i] = s;
}

// Index i = j + M·l in [0, M·L).
template <class T>
FIELDFT_HD void spread_point(const SegmentTables<T>& g, const Cplx<T>* y, Cplx<T>* u, std::int64_t i) {
  const std::int64_t j = i % g.m, l = i / g.m;
  const std::int64_t d = g.time[j];
  const bool inside = l >= g.range[2 * d] && l < g.range[2 * d + 1];
  const Cplx<T> h = inside ? g.h[d * g.segments + l] : Cplx<T>{0, 0};
  for (std::int64_t b = 0; b < g.batch; ++b) u[j + g.m * (b + g.batch * l)] = cmul_conj(h, y[j + g.m * b]);
}

}  // namespace fieldft::detail::tseg
