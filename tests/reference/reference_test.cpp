// Tests of the oracles (fieldft/reference.hpp), independent of the NUFFT: small cases worked out
// by hand, and identities that tie the sums to each other (adjoint pairs, type 3 on integer
// targets, mode-order permutations, the field-corrected DFT as a type-3 sum). Every other test of
// the project trusts these sums, so they are checked against nothing that they compute themselves.
//
// Thresholds: a direct sum of n terms of magnitude ≤ 1 is exact to ~n·u·Σ|terms| in the worst case
// and ~sqrt(n)·u typically (u = 1.1e-16); with n ≤ 5000 here, 1e-12 relative is a bound with
// margin, while any wrong sign, mode or layout gives O(1).
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <numbers>
#include <vector>

#include "fieldft/error.hpp"
#include "fieldft/reference.hpp"
#include "support/gtest_helpers.hpp"
#include "support/measures.hpp"
#include "support/random_data.hpp"

namespace fieldft::test {
namespace {

using reference::Points;
constexpr double kPi = std::numbers::pi;
constexpr double kSumTol = 1e-12;
const cdouble kI(0, 1);

Points points1(std::vector<double> x) { return Points{1, std::move(x), {}, {}}; }

void expect_near_all(const std::vector<cdouble>& got, const std::vector<cdouble>& want,
                     double tol = 1e-14) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i)
    EXPECT_LE(std::abs(got[i] - want[i]), tol) << "entry " << i << ": got " << got[i] << ", want "
                                                << want[i];
}

// f[k] = 1 + i·e^{±ikπ/2} at k = -2..1 for x = {0, π/2}, c = {1, i}:
//   isign +1: k=-2: 1 + i·(-1) = 1-i; k=-1: 1 + i·(-i) = 2; k=0: 1+i; k=1: 1 + i·i = 0.
//   isign -1: k=-2: 1-i; k=-1: 1 + i·i = 0; k=0: 1+i; k=1: 1 + i·(-i) = 2.
// FFT order lists k = 0, 1, -2, -1.
TEST(ReferenceOracle, Type1ByHand1D) {
  const Points p = points1({0.0, kPi / 2});
  const std::vector<cdouble> c = {1.0, kI};
  const std::vector<std::int64_t> n = {4};
  expect_near_all(reference::nufft_type1(p, c, n, +1, 0), {1.0 - kI, 2.0, 1.0 + kI, 0.0});
  expect_near_all(reference::nufft_type1(p, c, n, -1, 0), {1.0 - kI, 0.0, 1.0 + kI, 2.0});
  expect_near_all(reference::nufft_type1(p, c, n, +1, 1), {1.0 + kI, 0.0, 1.0 - kI, 2.0});
  // Odd N: k = -1, 0, 1 (modeord 0) and 0, 1, -1 (modeord 1); x = π/2, c = 1: f = e^{ikπ/2}.
  const Points q = points1({kPi / 2});
  const std::vector<cdouble> one = {1.0};
  expect_near_all(reference::nufft_type1(q, one, std::vector<std::int64_t>{3}, 1, 0), {-kI, 1.0, kI});
  expect_near_all(reference::nufft_type1(q, one, std::vector<std::int64_t>{3}, 1, 1), {1.0, kI, -kI});
}

// c_j = Σ_k f_k e^{ikx_j}: with f = δ at k = 1 (N = 4, modeord 0 index 3), c_j = e^{ix_j}.
TEST(ReferenceOracle, Type2ByHand1D) {
  const Points p = points1({kPi / 2, kPi, -kPi / 2});
  const std::vector<cdouble> f = {0.0, 0.0, 0.0, 1.0};
  const std::vector<std::int64_t> n = {4};
  expect_near_all(reference::nufft_type2(p, f, n, +1, 0), {kI, -1.0, -kI});
  expect_near_all(reference::nufft_type2(p, f, n, -1, 0), {-kI, -1.0, kI});
  // f = δ at k = -2 (index 0): c_j = e^{-2ix_j} = {-1, 1, -1}.
  const std::vector<cdouble> g = {1.0, 0.0, 0.0, 0.0};
  expect_near_all(reference::nufft_type2(p, g, n, +1, 0), {-1.0, 1.0, -1.0});
}

// Column-major layout with x fastest. N = (2, 3), one point at (π/2, 0), c = 1:
// f[k1, k2] = e^{i k1 π/2} depends on k1 only: k1 = -1 → -i, k1 = 0 → 1, so the array alternates.
// (y fastest would give {-i, -i, -i, 1, 1, 1}.)
TEST(ReferenceOracle, LayoutIsColumnMajorXFastest) {
  const Points p2{2, {kPi / 2}, {0.0}, {}};
  const std::vector<cdouble> one = {1.0};
  expect_near_all(reference::nufft_type1(p2, one, std::vector<std::int64_t>{2, 3}, 1, 0),
                  {-kI, 1.0, -kI, 1.0, -kI, 1.0});
  // N = (1, 2, 2), point (0, 0, π/2): f = e^{i k3 π/2}, k3 = -1 → -i (first half), 0 → 1.
  const Points p3{3, {0.0}, {0.0}, {kPi / 2}};
  expect_near_all(reference::nufft_type1(p3, one, std::vector<std::int64_t>{1, 2, 2}, 1, 0),
                  {-kI, -kI, 1.0, 1.0});
  // Type 2 with f = δ at (k1, k2) = (0, 1): index (0 + 1) + 2·(1 + 1) = 5; point (0, π/2) → i.
  std::vector<cdouble> f(6, 0.0);
  f[5] = 1.0;
  const Points q{2, {0.0}, {kPi / 2}, {}};
  expect_near_all(reference::nufft_type2(q, f, std::vector<std::int64_t>{2, 3}, 1, 0), {kI});
}

// Type 1 with isign s and type 2 with -s are adjoint: <T1 c, f> = <c, T2 f>.
TEST(ReferenceOracle, Type1AndType2AreAdjoint) {
  const std::vector<std::vector<std::int64_t>> shapes = {{33}, {12, 9}, {6, 5, 4}};
  for (const auto& modes : shapes) {
    const int dim = static_cast<int>(modes.size());
    const auto pts = random_points<double>(dim, 400, 300 + dim);
    const auto c = random_complex<double>(pts.size(), 301);
    const auto f = random_complex<double>(num_modes(modes), 302);
    for (int isign : {1, -1})
      for (int modeord : {0, 1}) {
        const auto t1 = reference::nufft_type1(pts.exact, c, modes, isign, modeord);
        const auto t2 = reference::nufft_type2(pts.exact, f, modes, -isign, modeord);
        EXPECT_LE(adjointness_defect<double>(c, t1, f, t2), kSumTol)
            << "dim " << dim << ", isign " << isign << ", modeord " << modeord;
      }
  }
}

// Type 3 on the integer mode vectors (listed by an independent enumeration) is type 1.
TEST(ReferenceOracle, Type3OnIntegerTargetsIsType1) {
  const std::vector<std::vector<std::int64_t>> shapes = {{17}, {8, 7}, {5, 4, 6}};
  for (const auto& modes : shapes) {
    const int dim = static_cast<int>(modes.size());
    const auto pts = random_points<double>(dim, 300, 310 + dim);
    const auto c = random_complex<double>(pts.size(), 311);
    Points targets{dim, {}, {}, {}};
    std::vector<double>* axes[3] = {&targets.x, &targets.y, &targets.z};
    for (std::int64_t i = 0; i < num_modes(modes); ++i) {
      const auto k = mode_of_index(i, modes, 0);
      for (int d = 0; d < dim; ++d) axes[d]->push_back(static_cast<double>(k[d]));
    }
    for (int isign : {1, -1}) {
      const auto t3 = reference::nufft_type3(pts.exact, c, targets, isign);
      const auto t1 = reference::nufft_type1(pts.exact, c, modes, isign, 0);
      EXPECT_LE(rel_error(t3, t1), kSumTol) << "dim " << dim << ", isign " << isign;
    }
  }
}

// modeord 1 stores the same numbers as modeord 0, permuted into FFT order.
TEST(ReferenceOracle, FftModeOrderIsAPermutation) {
  const std::vector<std::vector<std::int64_t>> shapes = {{10}, {11}, {6, 7}, {4, 5, 3}};
  for (const auto& modes : shapes) {
    const int dim = static_cast<int>(modes.size());
    const auto pts = random_points<double>(dim, 200, 320 + dim);
    const auto perm = modeord_permutation(modes);
    // Type 1: f1[perm[i]] = f0[i].
    const auto c = random_complex<double>(pts.size(), 321);
    const auto f0 = reference::nufft_type1(pts.exact, c, modes, 1, 0);
    const auto f1 = reference::nufft_type1(pts.exact, c, modes, 1, 1);
    std::vector<cdouble> f1_back(f0.size());
    for (std::size_t i = 0; i < f0.size(); ++i) f1_back[i] = f1[perm[i]];
    EXPECT_LE(rel_error(f1_back, f0), 1e-15) << "type 1, dim " << dim;
    // Type 2: permuting the input with the order leaves the output unchanged.
    const auto g0 = random_complex<double>(num_modes(modes), 322);
    std::vector<cdouble> g1(g0.size());
    for (std::size_t i = 0; i < g0.size(); ++i) g1[perm[i]] = g0[i];
    EXPECT_LE(rel_error(reference::nufft_type2(pts.exact, g1, modes, -1, 1),
                        reference::nufft_type2(pts.exact, g0, modes, -1, 0)),
              kSumTol)
        << "type 2, dim " << dim;
  }
}

// The *_at variants compute the same sums at the requested outputs, in the requested order.
TEST(ReferenceOracle, SubsetsMatchFullSums) {
  const std::vector<std::int64_t> modes = {9, 8};
  const auto pts = random_points<double>(2, 150, 330);
  const auto c = random_complex<double>(pts.size(), 331);
  const auto f = random_complex<double>(num_modes(modes), 332);
  const std::vector<std::int64_t> which_modes = {71, 0, 5, 5, 40};
  const std::vector<std::int64_t> which_points = {149, 3, 77, 0};
  for (int modeord : {0, 1}) {
    const auto full1 = reference::nufft_type1(pts.exact, c, modes, 1, modeord);
    const auto sub1 = reference::nufft_type1_at(pts.exact, c, modes, 1, modeord, which_modes);
    const auto full2 = reference::nufft_type2(pts.exact, f, modes, -1, modeord);
    const auto sub2 = reference::nufft_type2_at(pts.exact, f, modes, -1, modeord, which_points);
    for (std::size_t i = 0; i < which_modes.size(); ++i)
      EXPECT_LE(std::abs(sub1[i] - full1[which_modes[i]]), 1e-13) << "mode " << which_modes[i];
    for (std::size_t i = 0; i < which_points.size(); ++i)
      EXPECT_LE(std::abs(sub2[i] - full2[which_points[i]]), 1e-13) << "point " << which_points[i];
  }
}

// Points are 2π-periodic. Shifting by m·2π (|m| ≤ 1000) changes the double coordinate by its
// rounding only (≤ |x|·u ≈ 7e-13 rad), i.e. phases by ≤ k·7e-13 ≈ 1e-11 at |k| ≤ 16.
TEST(ReferenceOracle, CoordinatesArePeriodic) {
  const std::vector<std::int64_t> modes = {32};
  const auto pts = random_points<double>(1, 300, 340);
  Rng rng(341);
  auto shifted = pts.exact;
  for (auto& x : shifted.x) x += 2 * kPi * static_cast<double>(rng.integer(-1000, 1000));
  const auto c = random_complex<double>(pts.size(), 342);
  EXPECT_LE(rel_error(reference::nufft_type1(shifted, c, modes, 1, 0),
                      reference::nufft_type1(pts.exact, c, modes, 1, 0)),
            1e-10);
  const auto f = random_complex<double>(32, 343);
  EXPECT_LE(rel_error(reference::nufft_type2(shifted, f, modes, 1, 0),
                      reference::nufft_type2(pts.exact, f, modes, 1, 0)),
            1e-10);
}

// s = exp(-i(2π k·r + Δω t)):
//   2D: k = (1, 0), r = (0.25, 0), Δω = 100 rad/s, t = π/200 s → exp(-i(π/2 + π/2)) = -1;
//   3D: k = (0, 0, 2), r = (0, 0, 0.125), Δω = 0 → exp(-iπ/2) = -i.
// The adjoint uses the conjugate phase.
TEST(ReferenceOracle, FieldDftByHand) {
  const Points k2{2, {1.0}, {0.0}, {}};
  const Points r2{2, {0.25}, {0.0}, {}};
  const std::vector<double> w2 = {100.0}, t2 = {kPi / 200};
  const std::vector<cdouble> one = {1.0};
  expect_near_all(reference::field_dft_forward(k2, r2, w2, t2, one), {-1.0});
  const Points k3{3, {0.0}, {0.0}, {2.0}};
  const Points r3{3, {0.0}, {0.0}, {0.125}};
  const std::vector<double> w3 = {0.0}, t3 = {1e-3};
  expect_near_all(reference::field_dft_forward(k3, r3, w3, t3, one), {-kI});
  expect_near_all(reference::field_dft_adjoint(k3, r3, w3, t3, one), {kI});
  // Two voxels, two samples: s_j = Σ_v m_v e^{-i 2π k_j r_v}; k = 1, 2 (x), r = 0, 0.5 (x).
  // s_1 = m_0 + m_1 e^{-iπ} = m_0 - m_1; s_2 = m_0 + m_1 e^{-2iπ} = m_0 + m_1.
  const Points kk{2, {1.0, 2.0}, {0.0, 0.0}, {}};
  const Points rr{2, {0.0, 0.5}, {0.0, 0.0}, {}};
  const std::vector<double> zero2 = {0.0, 0.0};
  const std::vector<cdouble> m = {2.0, kI};
  expect_near_all(reference::field_dft_forward(kk, rr, zero2, zero2, m), {2.0 - kI, 2.0 + kI});
}

struct FieldProblem {
  Points ksp, pos;
  std::vector<double> field, times;
};

// A 2D or 3D problem in the units of DESIGN.md §3: k in cycles/FOV within [-N/2, N/2), r in FOV
// units within [-1/2, 1/2), Δω within ±2π·100 Hz, t within a 30 ms readout.
FieldProblem field_problem(int dim, std::int64_t samples, std::int64_t voxels, std::uint64_t seed) {
  FieldProblem p;
  p.ksp = random_points<double>(dim, samples, seed, -16.0, 16.0).exact;
  p.pos = random_points<double>(dim, voxels, seed + 1, -0.5, 0.5).exact;
  Rng rng(seed + 2);
  for (std::int64_t v = 0; v < voxels; ++v) p.field.push_back(rng.uniform(-2 * kPi * 100, 2 * kPi * 100));
  for (std::int64_t j = 0; j < samples; ++j) p.times.push_back(rng.uniform(0.0, 0.03));
  return p;
}

TEST(ReferenceOracle, FieldDftForwardAndAdjointAreAdjoint) {
  for (int dim : {2, 3}) {
    const auto p = field_problem(dim, 300, 200, 350 + dim);
    const auto m = random_complex<double>(p.pos.size(), 351);
    const auto s = random_complex<double>(p.ksp.size(), 352);
    const auto fm = reference::field_dft_forward(p.ksp, p.pos, p.field, p.times, m);
    const auto ahs = reference::field_dft_adjoint(p.ksp, p.pos, p.field, p.times, s);
    EXPECT_LE(adjointness_defect<double>(m, fm, s, ahs), kSumTol) << "dim " << dim;
  }
}

// The field-corrected DFT is a type-3 sum with sources (2π r, Δω) and targets (k, t), isign -1,
// one dimension more than the image (so 2D with a field, 3D without one, within the 3D limit of
// type 3). Phases reach ~2π·16·0.5·3 + 2π·100·0.03 ≈ 170 rad; rounding them costs ≤ 170·u per
// term, so 1e-11 relative is a bound.
TEST(ReferenceOracle, FieldDftIsType3AfterUnitConversion) {
  const auto p = field_problem(2, 250, 180, 360);
  const auto m = random_complex<double>(p.pos.size(), 361);
  Points src{3, {}, {}, {}}, tgt{3, p.ksp.x, p.ksp.y, p.times};
  for (std::int64_t v = 0; v < p.pos.size(); ++v) {
    src.x.push_back(2 * kPi * p.pos.x[v]);
    src.y.push_back(2 * kPi * p.pos.y[v]);
    src.z.push_back(p.field[v]);
  }
  EXPECT_LE(rel_error(reference::field_dft_forward(p.ksp, p.pos, p.field, p.times, m),
                      reference::nufft_type3(src, m, tgt, -1)),
            1e-11);
  // The adjoint: sources and targets swap, sign +1.
  const auto s = random_complex<double>(p.ksp.size(), 362);
  EXPECT_LE(rel_error(reference::field_dft_adjoint(p.ksp, p.pos, p.field, p.times, s),
                      reference::nufft_type3(tgt, s, src, +1)),
            1e-11);
  // 3D without a field.
  const auto q = field_problem(3, 200, 150, 363);
  const std::vector<double> no_field(q.pos.size(), 0.0);
  Points src3{3, {}, {}, {}};
  for (std::int64_t v = 0; v < q.pos.size(); ++v) {
    src3.x.push_back(2 * kPi * q.pos.x[v]);
    src3.y.push_back(2 * kPi * q.pos.y[v]);
    src3.z.push_back(2 * kPi * q.pos.z[v]);
  }
  const auto m3 = random_complex<double>(q.pos.size(), 364);
  EXPECT_LE(rel_error(reference::field_dft_forward(q.ksp, q.pos, no_field, q.times, m3),
                      reference::nufft_type3(src3, m3, q.ksp, -1)),
            1e-11);
}

// ||a - b|| / ||b||: a = (1, 0), b = (1, 1) gives 1/sqrt(2); 0 when both are zero.
TEST(ReferenceOracle, RelativeL2Error) {
  const std::vector<cdouble> b = {1.0, 1.0};
  const std::vector<std::complex<double>> ad = {1.0, 0.0};
  const std::vector<std::complex<float>> af = {1.0f, 0.0f};
  EXPECT_NEAR(rel_error(ad, b), 1 / std::sqrt(2.0), 1e-15);
  EXPECT_NEAR(rel_error(af, b), 1 / std::sqrt(2.0), 1e-15);
  const std::vector<cdouble> z = {0.0, 0.0};
  EXPECT_EQ(rel_error(std::vector<cdouble>{0.0, 0.0}, z), 0.0);
  // Float input is not rounded further: 1 + 2^-20 differs from 1 by exactly 2^-20.
  const std::vector<std::complex<float>> close = {{1.0f + 0x1.0p-20f, 0.0f}};
  EXPECT_EQ(rel_error(close, std::vector<cdouble>{1.0}), 0x1.0p-20);
  EXPECT_TRUE(throws_error([&] { rel_error(std::vector<cdouble>{1.0}, b); },
                           ErrorCode::kShapeMismatch));
}

// The oracles refuse inconsistent arguments rather than reading out of bounds.
TEST(ReferenceOracle, RejectsInconsistentArguments) {
  const auto pts = random_points<double>(2, 10, 370);
  const auto c = random_complex<double>(10, 371);
  EXPECT_TRUE(throws_error([&] { reference::nufft_type1(pts.exact, c, std::vector<std::int64_t>{4}, 1); },
                           ErrorCode::kShapeMismatch));
  EXPECT_TRUE(throws_error(
      [&] { reference::nufft_type1(pts.exact, std::span(c).first(9), std::vector<std::int64_t>{4, 4}, 1); },
      ErrorCode::kShapeMismatch));
  EXPECT_TRUE(throws_error(
      [&] { reference::nufft_type2(pts.exact, c, std::vector<std::int64_t>{4, 4}, 1); },
      ErrorCode::kShapeMismatch));
  const std::vector<std::int64_t> bad = {16};
  EXPECT_TRUE(throws_error(
      [&] { reference::nufft_type1_at(pts.exact, c, std::vector<std::int64_t>{4, 4}, 1, 0, bad); },
      ErrorCode::kInvalidArgument));
}

}  // namespace
}  // namespace fieldft::test
