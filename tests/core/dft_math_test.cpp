// fieldft/detail/dft_math.hpp on the host: round_nearest, the minimax sin/cos(πr) polynomials,
// half_angle, sincos_2pi, sinc, tile_base and tile_shape, each against the std:: functions in
// long double over its documented range, edges included.
//
// The reference is long double (x87 extended, 64-bit significand, on x86-64): its own error,
// ~1e-19 relative, is 3000x below the double unit roundoff. Where long double is no wider than
// double, the double tests skip themselves. Arguments are always reduced EXACTLY before they
// meet sinl/cosl (r = q − nearbyintl(q) in long double is exact), because π·a in long double
// for a ~ 1e3 already carries an absolute error (~1e-16) larger than what double must resolve
// near a zero of sin.
//
// Tolerances are in units of the unit roundoff u of T (2^-24 float, 2^-53 double): one correctly
// rounded operation errs by at most 1 u relative. Each bound below adds up the operations of the
// function, with the polynomial's own minimax error as documented in the header.
#include "fieldft/detail/dft_math.hpp"

#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

namespace fieldft::detail::dft {
namespace {

using LD = long double;
constexpr LD kPiL = 3.141592653589793238462643383279502884197L;

template <class T>
constexpr double unit_roundoff() {
  return std::numeric_limits<T>::epsilon() / 2;  // 2^-24 float, 2^-53 double
}

template <class T>
class DftMath : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::numeric_limits<LD>::digits < std::numeric_limits<T>::digits + 8)
      GTEST_SKIP() << "long double (" << std::numeric_limits<LD>::digits
                   << " bits) is too narrow to be the reference for this precision";
  }
};
using Precisions = ::testing::Types<float, double>;
TYPED_TEST_SUITE(DftMath, Precisions);

// Reproducible uniform values in [lo, hi), rounded to T (the mt19937_64 engine is specified by
// the standard; the conversion here is explicit, unlike std::uniform_real_distribution).
template <class T>
std::vector<T> uniform_values(std::size_t n, double lo, double hi, std::uint64_t seed) {
  std::mt19937_64 g(seed);
  std::vector<T> v(n);
  for (auto& x : v) x = static_cast<T>(lo + (hi - lo) * (static_cast<double>(g() >> 11) * 0x1p-53));
  return v;
}

// r ∈ [−½, ½]: a uniform grid, random values, and the edges (0, ±denormal, ±smallest normal,
// tiny values, ±¼, ±½ and their neighbours).
template <class T>
std::vector<T> half_interval_values() {
  std::vector<T> v = uniform_values<T>(1 << 16, -0.5, 0.5, 11);
  const int n = 1 << 17;
  for (int i = 0; i <= n; ++i) v.push_back(static_cast<T>(-0.5 + static_cast<double>(i) / n));
  const T half = T(0.5), quarter = T(0.25);
  for (T e : {T(0), std::numeric_limits<T>::denorm_min(), std::numeric_limits<T>::min(), T(1e-30), T(1e-20),
              T(1e-10), T(1e-5), quarter, std::nextafter(quarter, T(0)), std::nextafter(quarter, T(1)), half,
              std::nextafter(half, T(0))}) {
    v.push_back(e);
    v.push_back(-e);
  }
  return v;
}

// (−1)^n sin(π r) / (π a) for a = n + r: the normalised sinc, exactly reduced.
LD sinc_ref(LD a) {
  if (a == 0) return 1;
  const LD n = std::nearbyint(a), r = a - n;
  const LD sign = std::fmod(std::fabs(n), LD(2)) == 0 ? 1 : -1;
  return sign * std::sin(kPiL * r) / (kPiL * a);
}

// ---------------------------------------------------------------------------------------------
// round_nearest: (x + 1.5·2^p) − 1.5·2^p is round-to-nearest-even, EXACTLY, for |x| < 2^22
// (float) / 2^51 (double). Compared with nearbyint in the default rounding mode (to nearest,
// ties to even) by value (−0 and +0 compare equal; the header does not promise the sign of 0).

TYPED_TEST(DftMath, RoundNearestIsExactRoundToNearestEven) {
  using T = TypeParam;
  const T limit = sizeof(T) == sizeof(float) ? T(0x1p22) : T(0x1p51);
  std::vector<T> xs = uniform_values<T>(1 << 18, -8.0, 8.0, 21);
  for (T x : uniform_values<T>(1 << 17, -static_cast<double>(limit), static_cast<double>(limit), 22)) xs.push_back(x);
  // Ties go to the even neighbour; values just beside a tie go to the nearer one.
  for (int k = -40; k <= 40; ++k) {
    const T tie = static_cast<T>(k) + T(0.5);
    xs.push_back(tie);
    xs.push_back(std::nextafter(tie, T(-1e30)));
    xs.push_back(std::nextafter(tie, T(1e30)));
    xs.push_back(static_cast<T>(k));
  }
  // The top of the range: the largest half-integers, quarter-integers and values below the limit.
  for (T e : {limit - T(0.5), limit - T(1.5), limit - T(0.25), limit - T(0.75), std::nextafter(limit, T(0)),
              limit / 2 + T(0.5), T(0), std::numeric_limits<T>::denorm_min(), std::numeric_limits<T>::min()}) {
    xs.push_back(e);
    xs.push_back(-e);
  }
  int bad = 0;
  for (T x : xs) {
    const T want = std::nearbyint(x);
    const T got = round_nearest(x);
    if (got != want && ++bad <= 10) ADD_FAILURE() << "round_nearest(" << x << ") = " << got << ", want " << want;
  }
  EXPECT_EQ(bad, 0);
  // The documented tie rule, spelled out.
  EXPECT_EQ(round_nearest(T(0.5)), T(0));
  EXPECT_EQ(round_nearest(T(1.5)), T(2));
  EXPECT_EQ(round_nearest(T(2.5)), T(2));
  EXPECT_EQ(round_nearest(T(-2.5)), T(-2));
  EXPECT_EQ(round_nearest(std::nextafter(T(0.5), T(0))), T(0));
}

// ---------------------------------------------------------------------------------------------
// The minimax polynomials on r ∈ [−½, ½].
//
// sin(πr) ≈ r·S(r²): S has minimax error 1.2e-8 (float, 0.2 u) / 2.2e-18 (double, ~0 u)
// relative to S ≥ 2; its Horner evaluation ends with c0 + r²·(…) with |c0| = π, so the last
// rounding costs ≤ 1 u of S and the inner ones, damped by r² ≤ ¼ (and the coefficients' decay),
// ≤ 1.5 u together; the product with r adds 1 u. Relative error ≤ ~3.7 u: allowed 4 u, as a
// RELATIVE bound, so that the tiny arguments sinc relies on are covered as well.
// cos(πr) ≈ C(r²): minimax 4.7e-8 (float, 0.8 u) / 2.9e-17 (double, 0.3 u) absolute; Horner
// ≤ 1 u for the last step (|C| ≤ 1) plus ≤ 2.5 u from the inner steps (intermediates up to
// |c1·r²| ≈ 1.2, damped by r²). Allowed 5 u ABSOLUTE (the header's claim: C is accurate in
// absolute terms; near r = ±½, cos → 0 and no relative bound is claimed).

TYPED_TEST(DftMath, SinCosPiPolynomials) {
  using T = TypeParam;
  const double u = unit_roundoff<T>();
  double worst_s = 0, worst_c = 0;
  for (T r : half_interval_values<T>()) {
    const T r2 = r * r;
    const LD s = static_cast<LD>(r * SinCosPiPoly<T>::s(r2));
    const LD c = static_cast<LD>(SinCosPiPoly<T>::c(r2));
    const LD ws = std::sin(kPiL * r), wc = std::cos(kPiL * r);
    // Relative, except that a subnormal result has no relative accuracy: + denorm_min.
    const LD err_s = std::fabs(s - ws);
    const double es = ws == 0 ? 0.0 : static_cast<double>(err_s / std::fabs(ws));
    const double ec = static_cast<double>(std::fabs(c - wc));
    if (std::fabs(ws) >= std::numeric_limits<T>::min()) worst_s = std::max(worst_s, es);
    worst_c = std::max(worst_c, ec);
    if (err_s > 4 * u * std::fabs(ws) + std::numeric_limits<T>::denorm_min())
      ADD_FAILURE() << "r·S(r²) at r = " << r << ": relative error " << es / u << " u";
    if (ec > 5 * u) ADD_FAILURE() << "C(r²) at r = " << r << ": error " << ec / u << " u";
  }
  this->RecordProperty("sin_worst_u", std::to_string(worst_s / u));
  this->RecordProperty("cos_worst_u", std::to_string(worst_c / u));
  // Exact values where the polynomials must be exact or nearly so.
  EXPECT_EQ(T(0) * SinCosPiPoly<T>::s(T(0)), T(0));
  EXPECT_NEAR(static_cast<double>(SinCosPiPoly<T>::c(T(0))), 1.0, 2 * u);  // c0 = 1 − e_C
}

// half_angle(q): r = q − round(q) is exact (|q − n| ≤ ½ and Sterbenz), so sh and ch are the
// polynomials above at an exactly reduced argument: the same 4 u (relative) and 5 u (absolute)
// over the whole documented range |q| < 2^22, for both precisions.

TYPED_TEST(DftMath, HalfAngleOverTheRange) {
  using T = TypeParam;
  const double u = unit_roundoff<T>();
  std::vector<T> qs = uniform_values<T>(1 << 17, -0x1p22, 0x1p22, 31);
  for (T q : uniform_values<T>(1 << 17, -64, 64, 32)) qs.push_back(q);
  for (T r : half_interval_values<T>()) {
    qs.push_back(r);
    qs.push_back(r + T(1000));
  }
  for (T e : {T(0x1p22) - T(0.5), T(0x1p22) - T(0.25), T(0x1p21) + T(0.5), T(1) / 3, T(2.5), T(3.5)}) {
    qs.push_back(e);
    qs.push_back(-e);
  }
  int bad = 0;
  for (T q : qs) {
    T sh, ch;
    half_angle(q, &sh, &ch);
    const LD r = static_cast<LD>(q) - std::nearbyint(static_cast<LD>(q));
    const LD ws = std::sin(kPiL * r), wc = std::cos(kPiL * r);
    const LD err_s = std::fabs(sh - ws), ec = std::fabs(ch - wc);
    if ((err_s > 4 * u * std::fabs(ws) + std::numeric_limits<T>::denorm_min() || ec > 5 * u) && ++bad <= 10)
      ADD_FAILURE() << "half_angle(" << q << "): sin error " << static_cast<double>(err_s) / u
                    << " u (absolute), cos error " << static_cast<double>(ec) / u << " u";
  }
  EXPECT_EQ(bad, 0);
}

// sincos_2pi(q) = (2·sh·ch, 1 − 2·sh²). With |sh|, |ch| ≤ 1, sh within 4 u (relative, so
// ≤ 4 u·|sh|) and ch within 5 u:
//   sin: 2·(|ch|·4u·|sh| + |sh|·5u) + 1 u (the product's rounding; ×2 is exact)
//        ≤ 2·4u·½ + 2·5u + 1u = 15 u (|sh·ch| ≤ ½, |sh| ≤ 1); allowed 15 u.
//   cos: 4|sh|²·4u (from sh²) + 2 u (the rounding of sh² and of 2sh², ≤ 1 u of a value ≤ 2)
//        + 1 u (the subtraction) ≤ 19 u; allowed 19 u.
// Measured worst cases: ~7 u (sin) and ~10 u (float) / ~14.5 u (double) (cos, near q ≡ ½ where
// 1 − 2sh² amplifies sh's error four times). NOTE: the header's "~1e-7 (float), ~3e-16 (double)"
// is low by about that factor: 19 u is 1.1e-6 (float) and 2.1e-15 (double).

TYPED_TEST(DftMath, SinCos2PiOverTheRange) {
  using T = TypeParam;
  const double u = unit_roundoff<T>();
  std::vector<T> qs = uniform_values<T>(1 << 17, -0x1p22, 0x1p22, 41);
  for (T q : uniform_values<T>(1 << 18, -4, 4, 42)) qs.push_back(q);
  for (T r : half_interval_values<T>()) qs.push_back(r);
  for (int k = -8; k <= 8; ++k)
    for (T f : {T(0), T(0.125), T(0.25), T(0.375), T(0.5), T(-0.25)}) qs.push_back(static_cast<T>(k) + f);
  qs.push_back(T(0x1p22) - T(0.25));
  qs.push_back(-(T(0x1p22) - T(0.25)));
  double worst_s = 0, worst_c = 0;
  int bad = 0;
  for (T q : qs) {
    T s, c;
    sincos_2pi(q, &s, &c);
    const LD r = static_cast<LD>(q) - std::nearbyint(static_cast<LD>(q));
    const double es = static_cast<double>(std::fabs(s - std::sin(2 * kPiL * r)));
    const double ec = static_cast<double>(std::fabs(c - std::cos(2 * kPiL * r)));
    worst_s = std::max(worst_s, es);
    worst_c = std::max(worst_c, ec);
    if ((es > 15 * u || ec > 19 * u) && ++bad <= 10)
      ADD_FAILURE() << "sincos_2pi(" << q << "): sin error " << es / u << " u, cos error " << ec / u << " u";
  }
  EXPECT_EQ(bad, 0);
  this->RecordProperty("sin_worst_u", std::to_string(worst_s / u));
  this->RecordProperty("cos_worst_u", std::to_string(worst_c / u));
  // Exact points: q = 0 gives (0, 1) exactly; q = ±½ gives sin ≈ 0 and cos = −1 to the bound.
  T s, c;
  sincos_2pi(T(0), &s, &c);
  EXPECT_EQ(s, T(0));
  EXPECT_EQ(c, T(1));
  sincos_2pi(T(0.5), &s, &c);
  EXPECT_LE(std::fabs(static_cast<double>(c) + 1), 19 * u);
  EXPECT_LE(std::fabs(static_cast<double>(s)), 15 * u);
}

// sinc(a) = sin(πa)/(πa), sinc(0) = 1. With a = n + r, r exact and the sign (−1)^n exact, the
// error is RELATIVE everywhere: S(r²) ≤ 2.7 u (its Horner evaluation, above, relative to S ≥ 2,
// plus minimax ≤ 0.2 u), π rounded to T ≤ 1 u, and three roundings (S·(r+tiny), π·(a+tiny), the
// quotient) 3 u: ≤ 6.7 u; allowed 7 u. At a nonzero integer the result is not 0 but
// ~kTiny/(π·a) (the branch-free form adds kTiny = 1e-30 / 1e-300 to r and a): an absolute
// allowance of kTiny covers it. Range: |a| < 2^22 (float) / 2^51 (double), where round_nearest is
// exact; the R2* factor only needs |a| of a few.

TYPED_TEST(DftMath, SincOverTheRange) {
  using T = TypeParam;
  const double u = unit_roundoff<T>();
  const LD tiny = sizeof(T) == sizeof(float) ? 1e-30L : 1e-300L;
  const double top = sizeof(T) == sizeof(float) ? 0x1p22 : 0x1p51;
  std::vector<T> as = uniform_values<T>(1 << 18, -16, 16, 51);
  for (T a : uniform_values<T>(1 << 17, -top, top, 52)) as.push_back(a);
  for (T r : half_interval_values<T>()) {
    as.push_back(r);
    as.push_back(r + T(3));
    as.push_back(r - T(100));
  }
  for (int k = -50; k <= 50; ++k) {
    const T n = static_cast<T>(k);
    for (T a : {n, n + T(0.5), std::nextafter(n, T(-1e30)), std::nextafter(n, T(1e30))}) as.push_back(a);
  }
  for (T a : {T(0), -T(0), std::numeric_limits<T>::denorm_min(), std::numeric_limits<T>::min(), T(1e-25)}) {
    as.push_back(a);
    as.push_back(-a);
  }
  double worst = 0;
  int bad = 0;
  for (T a : as) {
    const T got = sinc(a);
    const LD want = sinc_ref(static_cast<LD>(a));
    const LD err = std::fabs(static_cast<LD>(got) - want);
    if (want != 0) worst = std::max(worst, static_cast<double>(err / std::fabs(want)));
    if (err > 7 * u * std::fabs(want) + tiny && ++bad <= 10)
      ADD_FAILURE() << "sinc(" << a << ") = " << got << ", want " << static_cast<double>(want) << ": relative error "
                    << static_cast<double>(err / std::fabs(want)) / u << " u";
  }
  EXPECT_EQ(bad, 0);
  this->RecordProperty("sinc_worst_u", std::to_string(worst / u));
  EXPECT_NEAR(static_cast<double>(sinc(T(0))), 1.0, 7 * u);  // S(0)/π, not exactly 1
  EXPECT_GT(sinc(T(0)), T(0));
  EXPECT_LT(std::fabs(static_cast<double>(sinc(T(1)))), 1e-25);
  EXPECT_LT(sinc(T(1.5)), T(0));  // (−1)^1 sin(π/2)/(1.5π) = −0.212
  EXPECT_GT(sinc(T(2.5)), T(0));
}

// tile_base: b = ux·csx + uy·csy + uz·csz + fref·t in double (4 products and 3 sums, each ≤ 1 u
// of the running magnitude, or fewer roundings where contracted to FMA), then b − round(b),
// exact (Sterbenz). So the result is within [−½, ½] and, modulo 1, within
// 4 u·(Σ|terms| + |b|) of the exact fractional part (u = 2^-53).

TEST(DftMathTileBase, FractionalPhaseOfATileCentre) {
  if (std::numeric_limits<LD>::digits < 61) GTEST_SKIP() << "long double too narrow";
  std::mt19937_64 g(61);
  auto uni = [&g](double lo, double hi) { return lo + (hi - lo) * (static_cast<double>(g() >> 11) * 0x1p-53); };
  const double u = 0x1p-53;
  int bad = 0;
  for (int i = 0; i < 1 << 18; ++i) {
    // |u| ≤ ½ cycles per voxel, tile centres within ±256 voxels of the grid centre, off-resonance
    // up to ±2 kHz, readouts up to 100 ms: |b| up to a few hundred cycles.
    const double ux = uni(-0.5, 0.5), uy = uni(-0.5, 0.5), uz = i % 2 ? uni(-0.5, 0.5) : 0.0;
    const double csx = std::floor(uni(-256, 256)), csy = std::floor(uni(-256, 256)),
                 csz = i % 2 ? std::floor(uni(-256, 256)) : 0.0;
    const double f = uni(-2000, 2000), t = uni(0, 0.1);
    const double got = tile_base(ux, uy, uz, t, csx, csy, csz, f);
    const LD b = static_cast<LD>(ux) * csx + static_cast<LD>(uy) * csy + static_cast<LD>(uz) * csz +
                 static_cast<LD>(f) * t;
    LD d = static_cast<LD>(got) - (b - std::nearbyint(b));
    d -= std::nearbyint(d);  // modulo 1: ±½ are the same phase
    const double bound = 4 * u *
                         (std::fabs(ux * csx) + std::fabs(uy * csy) + std::fabs(uz * csz) + std::fabs(f * t) +
                          static_cast<double>(std::fabs(b)));
    if ((!(std::fabs(got) <= 0.5) || std::fabs(static_cast<double>(d)) > bound) && ++bad <= 10)
      ADD_FAILURE() << "tile_base: got " << got << ", error " << static_cast<double>(d) << " cycles, bound " << bound;
  }
  EXPECT_EQ(bad, 0);
  // Exact cases: integer phases give 0; half-integer phases give ±½ (ties to even).
  EXPECT_EQ(tile_base(0.25, 0, 0, 0, 8, 0, 0, 0), 0.0);
  EXPECT_EQ(tile_base(0.5, 0, 0, 0, 1, 0, 0, 0), 0.5);    // 0.5 rounds to 0
  EXPECT_EQ(tile_base(0.5, 0, 0, 0, 3, 0, 0, 0), -0.5);   // 1.5 rounds to 2
  EXPECT_EQ(tile_base(0.125, -0.25, 0.5, 0.5, 4, 2, -6, 3), 0.5);  // 0.5 − 0.5 − 3 + 1.5 = −1.5 → −1.5 + 2
}

// tile_shape: 256 voxels made of whole runs, with the offset bounds the header's accuracy
// argument uses: |Σ_d u_d Δ_d| ≤ ½·Σ_d (tile_d / 2) = 5 cycles (3D), 8 cycles (2D).
TEST(DftMathTileShape, TilesHoldWholeRunsAndSmallOffsets) {
  static_assert(tile_shape(2).x == 16 && tile_shape(2).y == 16 && tile_shape(2).z == 1);
  static_assert(tile_shape(3).x == 8 && tile_shape(3).y == 4 && tile_shape(3).z == 8);
  for (int dim : {2, 3}) {
    const TileShape s = tile_shape(dim);
    EXPECT_EQ(s.x * s.y * s.z, 256) << dim << "D";
    EXPECT_EQ(s.x % kRun, 0) << dim << "D";
    const double offset_cycles = 0.5 * (s.x / 2 + s.y / 2 + (s.z > 1 ? s.z / 2 : 0));
    EXPECT_EQ(offset_cycles, dim == 3 ? 5.0 : 8.0) << dim << "D";
  }
}

}  // namespace
}  // namespace fieldft::detail::dft
