// Cosine and sine in plain arithmetic that the compiler vectorises (no libm call, no branch), for
// host loops over many arguments: the type 3 factors of set_points (core/type3.cpp) and the
// kernel's Fourier transform at many frequencies (core/kernel_design.cpp).
//
// For |x| <= kMaxVectorTrigArg. x = n·π + r with n the integer nearest x/π, so that
// cos x = (−1)^n cos r, sin x = (−1)^n sin r and |r| <= π/2. n is rounded by adding 1.5·2^52
// (for |x/π| < 2^51; n is then the low bits of the sum's significand, its parity the last) and
// subtracting it again. π is split as kPi1 + kPi2 with kPi1 of 33 significant bits, so n·kPi1 is
// exact for |n| < 2^20 and x − n·kPi1 is exact (Sterbenz; x itself for n = 0); the split's
// remainder, 7e-27, times |n| stays below 1e-20. cos r and sin r are their Taylor polynomials to
// r^20 and r^21, truncated below (π/2)^22/22! = 1.9e-17 and (π/2)^23/23! = 1.3e-18; Horner's
// rounding in r² <= 2.47 adds a few units of 2^-53. In all the error is below
// 4e-16 (unit-tested against std::cos and std::sin, tests/core/kernel_design_test.cpp). Callers
// take the scalar functions beyond kMaxVectorTrigArg.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>

namespace fieldft::core {

inline constexpr double kMaxVectorTrigArg = 1048576.0;  // 2^20 > |x|: |n| < 2^20

namespace vector_trig_detail {

// r = x − n·π and the sign bit (−1)^n, as described above.
inline double reduce(double x, std::uint64_t& sign) {
  constexpr double kInvPi = 0x1.45f306dc9c883p-2;
  constexpr double kPi1 = 0x1.921fb54400000p+1;
  constexpr double kPi2 = 0x1.0b4611a626331p-33;
  constexpr double kRound = 0x1.8p52;
  const double rounded = x * kInvPi + kRound;  // n in the low bits of the significand
  const double n = rounded - kRound;
  sign = std::bit_cast<std::uint64_t>(rounded) << 63;
  return (x - n * kPi1) - n * kPi2;
}

// Taylor coefficients in r², highest first: cos r to r^20 (1/20!, −1/18!, …, 1), sin r / r to
// r^20 (1/21!, −1/19!, …, 1).
inline constexpr double kCosTaylor[] = {
    0x1.e542ba4020225p-62,  -0x1.6827863b97d97p-53, 0x1.ae7f3e733b81fp-45, -0x1.93974a8c07c9dp-37,
    0x1.1eed8eff8d898p-29,  -0x1.27e4fb7789f5cp-22, 0x1.a01a01a01a01ap-16, -0x1.6c16c16c16c17p-10,
    0x1.5555555555555p-5,   -0.5,                   1.0};
inline constexpr double kSinTaylor[] = {
    0x1.71b8ef6dcf572p-66,  -0x1.2f49b46814157p-57, 0x1.952c77030ad4ap-49, -0x1.ae7f3e733b81fp-41,
    0x1.6124613a86d09p-33,  -0x1.ae64567f544e4p-26, 0x1.71de3a556c734p-19, -0x1.a01a01a01a01ap-13,
    0x1.1111111111111p-7,   -0x1.5555555555555p-3,  1.0};

template <std::size_t N>
inline double horner(const double (&c)[N], double s) {
  double v = c[0];
  for (std::size_t i = 1; i < N; ++i) v = v * s + c[i];
  return v;
}

inline double flip(double v, std::uint64_t sign) { return std::bit_cast<double>(std::bit_cast<std::uint64_t>(v) ^ sign); }

}  // namespace vector_trig_detail

// cos x for |x| <= kMaxVectorTrigArg.
inline double vector_cos(double x) {
  using namespace vector_trig_detail;
  std::uint64_t sign;
  const double r = reduce(x, sign);
  return flip(horner(kCosTaylor, r * r), sign);
}

// cos x and sin x for |x| <= kMaxVectorTrigArg.
inline void vector_sincos(double x, double& c, double& s) {
  using namespace vector_trig_detail;
  std::uint64_t sign;
  const double r = reduce(x, sign);
  const double r2 = r * r;
  c = flip(horner(kCosTaylor, r2), sign);
  s = flip(r * horner(kSinTaylor, r2), sign);
}

}  // namespace fieldft::core
