// Per-element math of the proximal and penalty operations of op::VectorOps
// (fieldft/op/vector_ops.hpp), written once for the host loops and the CUDA kernels.
//
//   shrink(g, τ)              max(0, 1 − τ/g): the factor of soft thresholding a value (or group)
//                             of magnitude g (0 for g <= τ, so g = 0 gives 0, never 0/0)
//   hyperbolic_weight(s, κ)   1/√(1 + s κ) with s = |t|², κ = 1/δ²: ψ'(|t|)/|t| of the hyperbolic
//                             potential ψ(t) = δ²(√(1 + (t/δ)²) − 1); κ = 0 (δ = ∞) gives 1, the
//                             weight of the quadratic ½t²
//   hyperbolic_value(s, κ)    ψ(|t|) = s / (√(1 + s κ) + 1), the same value without the
//                             cancellation of √(1 + sκ) − 1 for small s; ½ s when κ = 0
//   uniform_pm1(seed, i)      a value in [-1, 1] from SplitMix64 (Steele, Lea & Flood, "Fast
//                             splittable pseudorandom number generators", OOPSLA 2014) of
//                             seed + (i + 1)·φ·2⁶⁴: a counter-based generator, so element i does
//                             not depend on the thread that computes it
//   newton_update(α, g, c, p, q, β)
//                             α − (α c − g + β p)/(c + β q), or α where the denominator is not
//                             positive and finite
//   polak_ribiere_plus(now, cross, before)
//                             max(0, (now − cross)/before), 0 where before is not positive and
//                             finite
#pragma once

#include <cmath>
#include <cstdint>

#include "fieldft/detail/hd.hpp"

namespace fieldft::detail {

FIELDFT_HD float hd_sqrt(float x) { return ::sqrtf(x); }
FIELDFT_HD double hd_sqrt(double x) { return ::sqrt(x); }

// x is finite and > 0 (false for NaN and +∞; inf − inf is NaN).
template <class T>
FIELDFT_HD bool positive_finite(T x) {
  return x > T(0) && x - x == T(0);
}

template <class T>
FIELDFT_HD T shrink(T g, T tau) {
  return g > tau ? T(1) - tau / g : T(0);
}

template <class T>
FIELDFT_HD T hyperbolic_weight(T abs2, T inv_delta2) {
  return T(1) / hd_sqrt(T(1) + abs2 * inv_delta2);
}

template <class T>
FIELDFT_HD T hyperbolic_value(T abs2, T inv_delta2) {
  return abs2 / (hd_sqrt(T(1) + abs2 * inv_delta2) + T(1));
}

FIELDFT_HD std::uint64_t splitmix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

FIELDFT_HD double uniform_pm1(std::uint64_t seed, std::uint64_t i) {
  const std::uint64_t z = splitmix64(seed + (i + 1) * 0x9E3779B97F4A7C15ull);
  return static_cast<double>(z >> 11) * 0x1p-52 - 1.0;  // 53 random bits onto [-1, 1)
}

template <class T>
FIELDFT_HD T newton_update(T alpha, T g, T c, T p, T q, T beta) {
  const T den = c + beta * q;
  return positive_finite(den) ? alpha - (alpha * c - g + beta * p) / den : alpha;
}

template <class T>
FIELDFT_HD T polak_ribiere_plus(T now, T cross, T before) {
  if (!positive_finite(before)) return T(0);
  const T gamma = (now - cross) / before;
  return gamma > T(0) ? gamma : T(0);
}

}  // namespace fieldft::detail
