// The spreading kernel and its piecewise polynomial evaluation, shared by the CPU and GPU backends.
//
// Kernel: "exponential of semicircle" (ES), φ(z) = exp(β(√(1−z²) − 1)) for |z| ≤ 1, else 0
// (Barnett, Magland, af Klinteberg, SIAM J. Sci. Comput. 41(5), 2019). In fine-grid cells a
// point at rescaled coordinate u touches the w cells l = i0 … i0+w−1, i0 = ⌈u − w/2⌉, with
// weight ψ(l − u) = φ(2(l − u)/w). Why ES: its Fourier transform decays like the best known
// (Kaiser–Bessel) kernels, giving w ≈ log10(1/ε)+1 at σ = 2, yet it needs only exp and sqrt, and
// the Horner form below removes even those from the hot loops.
//
// Piecewise polynomial: with x = i0 − u ∈ [−w/2, −w/2 + 1), cell k (0 ≤ k < w) has weight
// φ(2(x + k)/w). Each cell gets its own polynomial P_k(t) of degree `degree` in the local variable
// t = 2(x + w/2) − 1 ∈ [−1, 1). Coefficients are stored highest degree first, w_pad per degree,
// so that the w values of one point are a vector operation:
//   coef[(degree − p) * w_pad + k] = coefficient of t^p in P_k  (w_pad >= w, extra columns 0).
#pragma once

#include <cmath>

#include "fieldft/detail/hd.hpp"

namespace fieldft::detail {

// The exact kernel, for building tables and for tests.
FIELDFT_HD double es_kernel(double z, double beta) {
  if (!(z >= -1.0 && z <= 1.0)) return 0.0;
  return ::exp(beta * (::sqrt(1.0 - z * z) - 1.0));
}

// Local Horner variable of a point whose first cell is i0 = ceil(u - w/2): x = i0 - u.
template <class T>
FIELDFT_HD T horner_arg(T x, int w) {
  return T(2) * x + T(w - 1);
}

// Evaluates N polynomials stored with stride N (the table above with w_pad = N) at t into
// out[0 .. N). N = w on the GPU; the CPU pads N to whole SIMD vectors (zero columns give zeros)
// and may store columns twice so that the result is already interleaved for complex data.
template <int N, class T>
FIELDFT_HD void eval_kernel_horner(const T* __restrict__ coef, int degree, T t, T* __restrict__ out) {
  T acc[N];  // a local array stays in registers; accumulating in `out` would go through memory
  for (int k = 0; k < N; ++k) acc[k] = coef[k];
  for (int p = 1; p <= degree; ++p) {
    const T* c = coef + p * N;
    FIELDFT_SIMD
    for (int k = 0; k < N; ++k) acc[k] = acc[k] * t + c[k];
  }
  for (int k = 0; k < N; ++k) out[k] = acc[k];
}

}  // namespace fieldft::detail
