// Building blocks of the FFTs that fieldft runs inside its own kernels (mode_fft.cuh, the
// type 1 mode copy; line_fft.cuh, the Toeplitz engine): complex arithmetic on Cplx, compile-time
// unit roots, a compile-time loop and the in-register DFT of a small radix.
#pragma once

#include <cstdint>
#include <type_traits>
#include <utility>

#include "fieldft/detail/complex.hpp"

namespace fieldft::cuda {

using detail::Cplx;

// floor(j / n) for 0 <= j < 2^20 from 1/n in float: (j + 1/2)/n lies at least 1/(2n) from an
// integer, far more than the rounding of the product (~2^-23·j/n), so a truncation gives the
// quotient without an integer division.
__device__ inline int small_quotient(int j, float inv_n) {
  return __float2int_rz((static_cast<float>(j) + 0.5f) * inv_n);
}

template <class T>
__device__ inline Cplx<T> cmul(Cplx<T> a, Cplx<T> b) {
  return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
}
template <class T>
__device__ inline Cplx<T> cadd(Cplx<T> a, Cplx<T> b) {
  return {a.re + b.re, a.im + b.im};
}
template <class T>
__device__ inline Cplx<T> csub(Cplx<T> a, Cplx<T> b) {
  return {a.re - b.re, a.im - b.im};
}
// s·i·a for s = ±1.
template <class T>
__device__ inline Cplx<T> times_i(Cplx<T> a, int s) {
  return s > 0 ? Cplx<T>{-a.im, a.re} : Cplx<T>{a.im, -a.re};
}

// cos and sin of 2π·k/n at compile time (Taylor series after reduction to [-π, π]).
struct UnitRoot {
  double c, s;
};
constexpr UnitRoot unit_root(int k, int n) {
  k %= n;
  if (2 * k > n) k -= n;
  const double x = 2.0 * 3.14159265358979323846 * k / n;
  double c = 1, s = x, tc = 1, ts = x;
  for (int i = 1; i < 24; ++i) {
    tc *= -x * x / ((2 * i - 1) * (2 * i));
    ts *= -x * x / ((2 * i) * (2 * i + 1));
    c += tc;
    s += ts;
  }
  return {c, s};
}

// The first factor of a composite radix (the rest is done recursively).
constexpr int radix_head(int r) { return r % 4 == 0 ? 4 : r % 2 == 0 ? 2 : r % 3 == 0 ? 3 : 5; }

// f(std::integral_constant<int, i>) for i = 0 .. N-1, indices known at compile time.
template <class F, int... I>
__device__ inline void static_for_each(F& f, std::integer_sequence<int, I...>) {
  (f(std::integral_constant<int, I>{}), ...);
}
template <int N, class F>
__device__ inline void static_for(F&& f) {
  static_for_each(f, std::make_integer_sequence<int, N>{});
}

// In-register DFT of R values, v[q] <- sum_r v[r] exp(sign·2πi·q·r/R). R = 2, 3, 4, 5 directly;
// composite R = R1·R2 (R1 = radix_head) by one Cooley-Tukey step in registers: R2 DFTs of R1
// over n = R2·n1 + n2, twiddles exp(sign·2πi·n2·k1/R) (compile-time constants), R1 DFTs of R2,
// output k1 + R1·k2.
template <class T, int R>
__device__ inline void small_dft(Cplx<T>* v, int sign) {
  if constexpr (R != 2 && R != 3 && R != 4 && R != 5) {
    constexpr int R1 = radix_head(R), R2 = R / R1;
    Cplx<T> y[R1][R2];
    static_for<R2>([&](auto n2c) {
      constexpr int n2 = decltype(n2c)::value;
      Cplx<T> u[R1];
#pragma unroll
      for (int n1 = 0; n1 < R1; ++n1) u[n1] = v[R2 * n1 + n2];
      small_dft<T, R1>(u, sign);
      static_for<R1>([&](auto k1c) {
        constexpr int k1 = decltype(k1c)::value;
        if constexpr (n2 * k1 == 0) {
          y[k1][n2] = u[k1];
        } else {
          constexpr UnitRoot w = unit_root(n2 * k1, R);
          const T ws = sign > 0 ? static_cast<T>(w.s) : static_cast<T>(-w.s);
          y[k1][n2] = cmul(u[k1], Cplx<T>{static_cast<T>(w.c), ws});
        }
      });
    });
#pragma unroll
    for (int k1 = 0; k1 < R1; ++k1) {
      small_dft<T, R2>(y[k1], sign);
#pragma unroll
      for (int k2 = 0; k2 < R2; ++k2) v[k1 + R1 * k2] = y[k1][k2];
    }
  } else if constexpr (R == 2) {
    const Cplx<T> a = v[0], b = v[1];
    v[0] = cadd(a, b);
    v[1] = csub(a, b);
  } else if constexpr (R == 3) {
    constexpr T kS = T(0.86602540378443864676);  // sin(2π/3)
    const Cplx<T> t1 = cadd(v[1], v[2]);
    const Cplx<T> t2 = times_i(csub(v[1], v[2]) * kS, sign);
    const Cplx<T> m = csub(v[0], t1 * T(0.5));
    v[0] = cadd(v[0], t1);
    v[1] = cadd(m, t2);
    v[2] = csub(m, t2);
  } else if constexpr (R == 4) {
    const Cplx<T> t0 = cadd(v[0], v[2]), t1 = csub(v[0], v[2]), t2 = cadd(v[1], v[3]);
    const Cplx<T> t3 = times_i(csub(v[1], v[3]), sign);
    v[0] = cadd(t0, t2);
    v[2] = csub(t0, t2);
    v[1] = cadd(t1, t3);
    v[3] = csub(t1, t3);
  } else {
    static_assert(R == 5, "radices of 2, 3 and 5");
    constexpr T c1 = T(0.30901699437494742410), c2 = T(-0.80901699437494742410);  // cos(2π/5), cos(4π/5)
    constexpr T s1 = T(0.95105651629515357212), s2 = T(0.58778525229247312917);   // sin(2π/5), sin(4π/5)
    const Cplx<T> b1 = cadd(v[1], v[4]), b2 = cadd(v[2], v[3]), d1 = csub(v[1], v[4]), d2 = csub(v[2], v[3]);
    const Cplx<T> m1 = cadd(v[0], cadd(b1 * c1, b2 * c2)), m2 = cadd(v[0], cadd(b1 * c2, b2 * c1));
    const Cplx<T> e1 = times_i(cadd(d1 * s1, d2 * s2), sign), e2 = times_i(csub(d1 * s2, d2 * s1), sign);
    v[0] = cadd(v[0], cadd(b1, b2));
    v[1] = cadd(m1, e1);
    v[4] = csub(m1, e1);
    v[2] = cadd(m2, e2);
    v[3] = csub(m2, e2);
  }
}

}  // namespace fieldft::cuda
