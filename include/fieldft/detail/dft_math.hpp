// Per-pair math of the field-corrected DFT, shared by the CPU and CUDA backends.
//
// The operator (fieldft/mri/dft.hpp) sums exp(∓2πi φ_jv) over sample/voxel pairs with the phase
// in cycles
//     φ_jv = Σ_d k_dj r_dv + f_v t_j,   r_dv = (i_dv − ⌊N_d/2⌋)/N_d,   f_v = Δω_v / 2π  (Hz).
// φ reaches tens of cycles (2π·48 ≈ 300 rad for a 64³ grid, more for strong fields), and float
// rounding of φ itself costs |φ|·6e-8 cycles, i.e. a relative error of ~1e-5 (the design's
// kernel, which rounds 2π·k·r in float, measured 2.2e-4). So the large part of φ never meets
// float arithmetic:
//
//  * voxels are grouped in tiles (tile_shape); tile b has an integer centre c_b and a reference
//    frequency f_b (midrange of its field map);
//  * per (sample, tile) a base β_jb = frac(Σ_d u_dj (c_bd − ⌊N_d/2⌋) + f_b t_j) is computed in
//    double and reduced to [−½, ½] cycles before it is rounded to T (tile_base), with
//    u_dj = k_dj / N_d (cycles per voxel);
//  * per pair only small terms remain: φ_jv ≡ β_jb + Σ_d u_dj (i_dv − c_bd) + f'_v t_j with
//    integer offsets |i − c| ≤ tile/2 and f'_v = f_v − f_b, so |φ| stays at a few cycles and its
//    float rounding at ~1e-7 cycles;
//  * sin and cos of 2π·φ come from reduction by the nearest integer, a minimax polynomial for
//    sin(πr), cos(πr) on |r| ≤ ½ and the double-angle formulas (sincos_2pi). The CUDA float
//    kernels evaluate part of the pairs with the SFU instead (src/cuda/dft_kernels.cuh), which
//    is accurate to ~4e-7 absolute on these small arguments.
//
// The R2* factor of DftR2 is Π_d sinc(u_dj + G_dv t_j) with the normalised sinc (sinc(0) = 1)
// and G in Hz per voxel; see fieldft/mri/dft.hpp for its derivation.
//
// Arithmetic is written as a*b + c: nvcc contracts it to FMA, host compilers do where the target
// has FMA. No std::fma on the host: in a baseline (SSE2) build it is a library call that blocks
// vectorisation.
#pragma once

#include <cmath>
#include <cstdint>

#include "fieldft/detail/hd.hpp"

// Host compilers must inline these into the vectorised loops (an out-of-line call blocks
// vectorisation), hence always_inline; under nvcc FIELDFT_HD already forces inlining.
#if defined(__CUDACC__) || !defined(__GNUC__)
#define FIELDFT_DFT_HD FIELDFT_HD
#else
#define FIELDFT_DFT_HD inline __attribute__((always_inline))
#endif

namespace fieldft::detail::dft {

// Voxels of one tile: kTileX × kTileY × kTileZ, x fastest. A tile is made of runs of kRun
// consecutive voxels along x (the unit a CUDA thread or a vector lane walks with constant y, z).
struct TileShape {
  int x, y, z;
};
inline constexpr int kRun = 8;
FIELDFT_DFT_HD constexpr TileShape tile_shape(int dim) {
  // 3D: offsets |Δx| ≤ 4, |Δy| ≤ 2, |Δz| ≤ 4 voxels, so |Σ u·Δ| ≤ 5 cycles for |u| ≤ ½.
  // 2D: |Δx|, |Δy| ≤ 8, |Σ u·Δ| ≤ 8 cycles. Both tiles hold 256 voxels = 32 runs.
  return dim == 3 ? TileShape{8, 4, 8} : TileShape{16, 16, 1};
}

inline constexpr double kPi = 3.14159265358979323846264338327950288;
inline constexpr double kTwoPi = 6.28318530717958647692528676655900577;

// Round to nearest (ties to even) by the magic-number form (x + 1.5·2^p) − 1.5·2^p, exact for
// |x| < 2^22 (float) / 2^51 (double), far beyond the phases here. Why not rint: on the host it
// keeps loops vectorisable without SSE4.1, and on the GPU FRND runs on the same quarter-rate
// pipe as the SFU sine and cosine, which the float kernels keep saturated; two FADDs do not.
FIELDFT_DFT_HD float round_nearest(float x) {
  constexpr float kMagic = 12582912.0f;  // 1.5 · 2^23
  return (x + kMagic) - kMagic;
}
FIELDFT_DFT_HD double round_nearest(double x) {
  constexpr double kMagic = 6755399441055744.0;  // 1.5 · 2^52
  return (x + kMagic) - kMagic;
}

// Minimax polynomials on r ∈ [−½, ½] (Remez, absolute error):
//   sin(πr) ≈ r·S(r²), cos(πr) ≈ C(r²).
// float: S of degree 4 in r² (max error 1.2e-8), C of degree 4 (4.7e-8);
// double: S of degree 8 (2.2e-18), C of degree 8 (2.9e-17).
template <class T>
struct SinCosPiPoly;
template <>
struct SinCosPiPoly<float> {
  FIELDFT_DFT_HD static float s(float r2) {
    return 3.141592503e+00f +
           r2 * (-5.167704105e+00f +
                 r2 * (2.550000191e+00f + r2 * (-5.979065299e-01f + r2 * 7.700755447e-02f)));
  }
  FIELDFT_DFT_HD static float c(float r2) {
    return 9.999999535e-01f +
           r2 * (-4.934792859e+00f +
                 r2 * (4.058411914e+00f + r2 * (-1.331880163e+00f + r2 * 2.196968020e-01f)));
  }
};
template <>
struct SinCosPiPoly<double> {
  FIELDFT_DFT_HD static double s(double r2) {
    return 3.14159265358979312e+00 +
           r2 * (-5.16771278004997026e+00 +
                 r2 * (2.55016403987734241e+00 +
                       r2 * (-5.99264529320508221e-01 +
                             r2 * (8.21458866007254707e-02 +
                                   r2 * (-7.37043076349324418e-03 +
                                         r2 * (4.66301117607161063e-04 +
                                               r2 * (-2.19068633504045883e-05 +
                                                     r2 * 7.73274393802351472e-07)))))));
  }
  FIELDFT_DFT_HD static double c(double r2) {
    return 1.00000000000000000e+00 +
           r2 * (-4.93480220054467900e+00 +
                 r2 * (4.05871212641675072e+00 +
                       r2 * (-1.33526276885289863e+00 +
                             r2 * (2.35330630296532867e-01 +
                                   r2 * (-2.58068902943616417e-02 +
                                         r2 * (1.92956414147223295e-03 +
                                               r2 * (-1.04586908125933262e-04 +
                                                     r2 * 4.17067808048838124e-06)))))));
  }
};

// sin(πr) and cos(πr) for r = q − round(q) ∈ [−½, ½]: the half angle of 2πq. With them,
// sin 2πq = 2·sh·ch and cos 2πq = 1 − 2·sh² (the double-angle formulas); a caller that only
// accumulates A·cos and A·sin can fold the 2 and the 1 into its sums (src/cuda/dft_direct.cuh).
template <class T>
FIELDFT_DFT_HD void half_angle(T q, T* sh, T* ch) {
  const T r = q - round_nearest(q);
  const T r2 = r * r;
  *sh = r * SinCosPiPoly<T>::s(r2);
  *ch = SinCosPiPoly<T>::c(r2);
}

// sin(2πq) and cos(2πq) for |q| < 2^22. Absolute error of the sine ~1e-7 (float), ~3e-16
// (double); the cosine, formed as 1 − 2·sin²(πq), quadruples the half-angle sine's error near
// q ≡ ½: up to ~6e-7 (float), ~1.6e-15 (double) (measured in tests/core/dft_math_test.cpp).
template <class T>
FIELDFT_DFT_HD void sincos_2pi(T q, T* s, T* c) {
  T sh, ch;
  half_angle(q, &sh, &ch);
  *s = T(2) * sh * ch;
  *c = T(1) - T(2) * sh * sh;
}

// Normalised sinc, sin(πa)/(πa), sinc(0) = 1. a = n + r, |r| ≤ ½: sin(πa) = (−1)^n sin(πr) =
// (−1)^n r·S(r²), so sinc(a) = (−1)^n S(r²)·(r/a)/π. Adding a tiny constant to r and a makes
// r/a exactly 1 for n = 0 (r = a) including a = 0, and changes nothing for |a| ≥ ½. Written
// without branches or selects so that vector loops stay vectorised.
template <class T>
FIELDFT_DFT_HD T sinc(T a) {
  constexpr T kTiny = sizeof(T) == sizeof(float) ? T(1e-30f) : T(1e-300);
  const T n = round_nearest(a);
  const T r = a - n;
  const T half = T(0.5) * n;
  const T p = half - round_nearest(half);  // 0 for even n, ±½ for odd n
  const T sign = T(1) - T(8) * p * p;     // (−1)^n
  return sign * SinCosPiPoly<T>::s(r * r) * (r + kTiny) / (T(kPi) * (a + kTiny));
}

// β = frac(Σ_d u_d·(c_d − ⌊N_d/2⌋) + f_ref·t) in [−½, ½] cycles: the phase of a sample at the
// centre of a tile. Arguments in double whatever the operator's precision (see the top).
// cs_d = c_d − ⌊N_d/2⌋ (integer-valued).
FIELDFT_DFT_HD double tile_base(double ux, double uy, double uz, double t, double csx, double csy,
                            double csz, double fref) {
  const double b = ux * csx + uy * csy + uz * csz + fref * t;
  return b - round_nearest(b);
}

}  // namespace fieldft::detail::dft
