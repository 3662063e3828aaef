// A complex number usable in host and device code, layout-compatible with std::complex<T> and
// cuda::std::complex<T> (two T, real first), so user arrays are reinterpreted without copies.
#pragma once

#include "fieldft/detail/hd.hpp"

namespace fieldft::detail {

template <class T>
struct alignas(2 * sizeof(T)) Cplx {
  T re, im;
};

template <class T>
FIELDFT_HD Cplx<T> operator*(Cplx<T> a, T s) {
  return {a.re * s, a.im * s};
}

// n / d in double, 0 where d == 0 (a converged solver divides 0 by 0: its step must be 0, not
// NaN). d is first scaled by its largest component, so |d|² neither overflows nor underflows
// (Smith 1962's idea): the solvers' scalars pᴴq of large float problems exceed 1e19, whose square
// overflows float, and small ones underflow it.
FIELDFT_HD Cplx<double> safe_ratio(Cplx<double> n, Cplx<double> d) {
  const double ar = d.re < 0 ? -d.re : d.re, ai = d.im < 0 ? -d.im : d.im;
  const double s = ar > ai ? ar : ai;
  if (s == 0) return {0, 0};
  const double dr = d.re / s, di = d.im / s, nr = n.re / s, ni = n.im / s;
  const double d2 = dr * dr + di * di;
  return {(nr * dr + ni * di) / d2, (ni * dr - nr * di) / d2};
}

}  // namespace fieldft::detail
