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

}  // namespace fieldft::detail
