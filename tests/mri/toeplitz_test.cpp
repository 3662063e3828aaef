// mri::ToeplitzNormal (fieldft/mri/toeplitz.hpp) and NufftEncoding's Toeplitz normal, on the
// backend under test (FIELDFT_TEST_BACKEND):
//   - against the exact AᴴWA: fieldft::reference's direct sums in double (forward, times w_j,
//     adjoint), 2D and 3D, odd and even N, float and double, with and without weights, batch 1
//     and 3;
//   - NufftEncoding::apply_normal with Toeplitz::kOn against kOff, alone and inside a SENSE
//     compose (which must reach the Toeplitz normal through compose's forwarding), and batched;
//   - periodic axes (integer k, a stack's k_z: L = N): exact, on against off, the detection's
//     line, and (CPU) the engine with an axis forced periodic for off-grid k, which must be wrong;
//   - bad input: NaN, negative and wrongly sized weights, an encoding with a field map;
//   - the generic operator battery (support/operator_battery.hpp).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <complex>
#include <cstdint>
#include <limits>
#include <memory>
#include <numbers>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "fieldft/mri/encoding.hpp"
#include "fieldft/mri/field_toeplitz.hpp"
#include "fieldft/mri/time_segmentation.hpp"
#include "fieldft/mri/toeplitz.hpp"
#include "fieldft/mri/sense.hpp"
#include "fieldft/op/combinators.hpp"
#include "fieldft/solve/cg.hpp"
#include "support/operator_battery.hpp"
#if FIELDFT_TEST_BACKEND == 1  // the engine below the operator: private headers (CPU executable only)
#include "core/toeplitz.hpp"
#include "cpu/toeplitz_cpu.hpp"
#include "mri/toeplitz_psf.hpp"
#endif

namespace fieldft::test {
namespace {

using op::OperatorPtr;

// The type 1 tolerance of the kernel: well above the rounding of T, so that the comparisons
// below measure the method.
template <class T>
constexpr double toeplitz_eps() {
  return sizeof(T) == sizeof(float) ? 1e-4 : 1e-9;
}

// A random trajectory over the whole k-space box [-N/2, N/2) per axis (rounded to T; the oracle
// reads the same values), M samples, and optional weights uniform in [0.2, 2). on_grid >= 0: that
// axis takes integer k (a stack's k_z: the Toeplitz normal's periodic axis) plus `offset` (off
// the grid when not an integer).
template <class T>
struct Case {
  std::vector<std::int64_t> grid;
  std::int64_t voxels = 1;
  std::vector<T> k[3], w;
  reference::Points ksp, pos;
  std::shared_ptr<const mri::Encoding<T>> encoding;
};

// Voxel positions, voxel count and encoding of a case whose grid, k and weights are set.
template <class T>
void finish_case(Case<T>& c) {
  const int dim = static_cast<int>(c.grid.size());
  for (auto g : c.grid) c.voxels *= g;
  c.pos = voxel_positions(c.grid);
  c.encoding = std::make_shared<const mri::Encoding<T>>(std::span<const std::int64_t>(c.grid),
                                                        std::span<const T>(c.k[0]), std::span<const T>(c.k[1]),
                                                        dim == 3 ? std::span<const T>(c.k[2]) : std::span<const T>());
}

template <class T>
Case<T> make_case(std::vector<std::int64_t> grid, std::int64_t m, std::uint64_t seed, bool weights, int on_grid = -1,
                  double offset = 0) {
  Case<T> c;
  c.grid = grid;
  const int dim = static_cast<int>(grid.size());
  Rng rng(seed);
  std::vector<double>* kd[3] = {&c.ksp.x, &c.ksp.y, &c.ksp.z};
  c.ksp.dim = dim;
  for (int d = 0; d < dim; ++d) {
    const double half = static_cast<double>(grid[static_cast<std::size_t>(d)]) / 2;
    for (std::int64_t j = 0; j < m; ++j) {
      double u = rng.uniform(-half, half);
      if (d == on_grid) {  // the nearest integer plus offset, moved by whole cycles into [-N/2, N/2]
        u = std::floor(u + 0.5) + offset;
        while (u > half) u -= 1;
        while (u < -half) u += 1;
      }
      const T v = static_cast<T>(u);
      c.k[d].push_back(v);
      kd[d]->push_back(static_cast<double>(v));
    }
  }
  if (weights)
    for (std::int64_t j = 0; j < m; ++j) c.w.push_back(static_cast<T>(rng.uniform(0.2, 2.0)));
  finish_case(c);
  return c;
}

// A stack along the last axis (include/fieldft/mri/toeplitz.hpp, "Stacked last axis"): `per_plane`
// random in-plane samples (and weights uniform in [0.2, 2) when asked) repeated on each of the
// N_last planes k_last = p − ⌊N_last/2⌋, planes slowest, as mri::spiral_trajectory lays a stack out.
template <class T>
Case<T> make_stack_case(std::vector<std::int64_t> grid, std::int64_t per_plane, std::uint64_t seed, bool weights) {
  Case<T> c;
  c.grid = grid;
  const int dim = static_cast<int>(grid.size()), last = dim - 1;
  const std::int64_t planes = grid[static_cast<std::size_t>(last)];
  Rng rng(seed);
  std::vector<T> in_plane[2], w;
  for (int d = 0; d < last; ++d)
    for (std::int64_t j = 0; j < per_plane; ++j) {
      const double half = static_cast<double>(grid[static_cast<std::size_t>(d)]) / 2;
      in_plane[d].push_back(static_cast<T>(rng.uniform(-half, half)));
    }
  if (weights)
    for (std::int64_t j = 0; j < per_plane; ++j) w.push_back(static_cast<T>(rng.uniform(0.2, 2.0)));
  std::vector<double>* kd[3] = {&c.ksp.x, &c.ksp.y, &c.ksp.z};
  c.ksp.dim = dim;
  for (std::int64_t p = 0; p < planes; ++p)
    for (std::int64_t j = 0; j < per_plane; ++j) {
      for (int d = 0; d < last; ++d) c.k[d].push_back(in_plane[d][static_cast<std::size_t>(j)]);
      c.k[last].push_back(static_cast<T>(p - planes / 2));
      if (weights) c.w.push_back(w[static_cast<std::size_t>(j)]);
    }
  for (int d = 0; d < dim; ++d)
    for (const T v : c.k[d]) kd[d]->push_back(static_cast<double>(v));
  finish_case(c);
  return c;
}

template <class T>
std::shared_ptr<mri::ToeplitzNormal<T>> make_toeplitz(const Case<T>& c, const Context& ctx, std::int64_t batch,
                                                     double chunk_bytes = 0, bool periodic_axes = true) {
  mri::ToeplitzOptions o;
  o.eps = toeplitz_eps<T>();
  o.batch = batch;
  o.chunk_bytes = chunk_bytes;
  o.periodic_axes = periodic_axes;
  return std::make_shared<mri::ToeplitzNormal<T>>(c.encoding, ctx, std::span<const T>(c.w), o);
}

template <class T>
OperatorPtr<T> make_nufft(const Case<T>& c, const Context& ctx, std::int64_t batch, mri::Toeplitz t) {
  mri::NufftEncodingOptions o;
  o.eps = toeplitz_eps<T>();
  o.batch = batch;
  o.toeplitz = t;
  return std::make_shared<mri::NufftEncoding<T>>(c.encoding, ctx, o);
}

template <class T>
std::vector<std::complex<T>> run_normal(op::LinearOperator<T>& a, const std::vector<std::complex<T>>& x) {
  ContextVector<T> in(a.context(), a.domain_size()), out(a.context(), a.domain_size());
  in.upload(x);
  a.apply_normal(in.get(), out.get());
  return out.download();
}

class ToeplitzTest : public ::testing::Test {
 protected:
  void SetUp() override { FIELDFT_TEST_SKIP_UNLESS_AVAILABLE(kBackend); }
};
template <class T>
class ToeplitzTyped : public ToeplitzTest {};
using Precisions = ::testing::Types<float, double>;
TYPED_TEST_SUITE(ToeplitzTyped, Precisions);

// Threshold 3·eps + the FFT rounding of T. The kernel p is one type 1 transform, accurate to eps
// in relative l2 (the library's criterion, met with room by the accuracy tests); for a random x
// the error of the result is the error of p convolved with x, whose relative size is that of p
// weighted by the overlap counts ∏(N_d − |d_a|), about eps: 3·eps leaves room for that
// weighting. The FFTs on the 2N grid (≤ 2·12 points per axis here) and the Hermitian
// projection add a few ulps of T: 1e-5 in float, nothing visible in double.
template <class T>
double oracle_tolerance() {
  return 3 * toeplitz_eps<T>() + (sizeof(T) == sizeof(float) ? 1e-5 : 0.0);
}

// The exact AᴴWA (c.w, or W = I when empty) of each of the `batch` images of x against got,
// within oracle_tolerance; returns the largest relative error.
template <class T>
double expect_exact_normal(const Case<T>& c, const std::vector<std::complex<T>>& x,
                           const std::vector<std::complex<T>>& got, std::int64_t batch) {
  const std::int64_t n = c.voxels, m = static_cast<std::int64_t>(c.k[0].size());
  const std::vector<double> zeros_v(static_cast<std::size_t>(n), 0.0), zeros_m(static_cast<std::size_t>(m), 0.0);
  double worst = 0;
  for (std::int64_t b = 0; b < batch; ++b) {
    SCOPED_TRACE(::testing::Message() << "image " << b << " of " << batch);
    const std::vector<cdouble> xb(x.begin() + b * n, x.begin() + (b + 1) * n);
    auto s = reference::field_dft_forward(c.ksp, c.pos, zeros_v, zeros_m, xb);
    for (std::size_t j = 0; j < c.w.size(); ++j) s[j] *= static_cast<double>(c.w[j]);
    const auto want = reference::field_dft_adjoint(c.ksp, c.pos, zeros_v, zeros_m, s);
    const std::vector<std::complex<T>> gb(got.begin() + b * n, got.begin() + (b + 1) * n);
    const double e = rel_error(gb, want);
    EXPECT_LE(e, oracle_tolerance<T>());
    worst = std::max(worst, e);
  }
  return worst;
}

TYPED_TEST(ToeplitzTyped, MatchesTheExactWeightedNormal) {
  using T = TypeParam;
  struct Geometry {
    std::vector<std::int64_t> grid;
    std::int64_t samples;
  };
  // {16, 8} and {8, 32}: 2N powers of two, the fused path of the CUDA engine; the others its cuFFT path.
  const Geometry geometries[] = {{{12, 10}, 160}, {{11, 9}, 130}, {{16, 8}, 200},
                                 {{8, 32}, 300},  {{8, 7, 6}, 420}, {{7, 6, 5}, 260}};
  std::uint64_t seed = 400;
  double worst = 0;
  for (const auto& [grid, m] : geometries)
    for (bool weights : {false, true})
      for (std::int64_t batch : {1, 3}) {
        const auto c = make_case<T>(grid, m, ++seed, weights);
        auto t = make_toeplitz<T>(c, battery_context(), batch);
        SCOPED_TRACE(t->name());
        EXPECT_EQ(t->weighted(), weights);
        EXPECT_TRUE(std::isfinite(t->setup_seconds()) && t->setup_seconds() >= 0);
        const auto x = random_complex<T>(c.voxels * batch, seed + 1000);
        const auto got = battery_detail::run_apply(*t, x, false);
        const auto got_adjoint = battery_detail::run_apply(*t, x, true);
        EXPECT_EQ(got, got_adjoint) << "apply_adjoint must be apply (the operator is Hermitian)";
        worst = std::max(worst, expect_exact_normal(c, x, got, batch));
      }
  std::printf("[ Toeplitz vs exact AᴴWA, %s, eps %.0e ] largest relative error %.2e (threshold %.2e)\n",
              sizeof(T) == sizeof(float) ? "float" : "double", toeplitz_eps<T>(), worst, oracle_tolerance<T>());
}

// Periodic axes (include/fieldft/mri/toeplitz.hpp): an axis of integer k (a stack's k_z, or
// Cartesian phase-encoding lines in 2D) takes L = N, not 2N, and the operator is still the exact
// AᴴWA within oracle_tolerance: 3D stacks along z (the R3 geometry; even and odd N), 2D with y on
// the grid (odd N_y: ∏L_d not a multiple of 4, the CPU engine's image stride; {16, 8}: 2N powers
// of two, which the CUDA engine's fused path must leave to its cuFFT path) and with x on the grid.
// With options.periodic_axes = false the same operator on the 2N grid: the two agree within twice
// the tolerance (each within it of the exact one).
TYPED_TEST(ToeplitzTyped, PeriodicAxisMatchesTheExactNormal) {
  using T = TypeParam;
  struct Geometry {
    std::vector<std::int64_t> grid;
    std::int64_t samples;
    int axis;
  };
  const Geometry geometries[] = {{{8, 7, 6}, 420, 2}, {{7, 6, 5}, 260, 2}, {{11, 7}, 150, 1},
                                 {{16, 8}, 200, 1},   {{9, 10}, 150, 0}};
  std::uint64_t seed = 1400;
  double worst = 0;
  for (const auto& [grid, m, axis] : geometries)
    for (bool weights : {false, true})
      for (std::int64_t batch : {1, 3}) {
        const auto c = make_case<T>(grid, m, ++seed, weights, axis);
        auto t = make_toeplitz<T>(c, battery_context(), batch);
        auto full = make_toeplitz<T>(c, battery_context(), batch, 0, /*periodic_axes=*/false);
        SCOPED_TRACE(t->name());
        for (int d = 0; d < static_cast<int>(grid.size()); ++d) {
          EXPECT_EQ(t->periodic_axes()[d], d == axis) << "axis " << d;
          EXPECT_EQ(t->embedding_grid()[d], (d == axis ? 1 : 2) * grid[d]) << "axis " << d;
          EXPECT_FALSE(full->periodic_axes()[d]);
          EXPECT_EQ(full->embedding_grid()[d], 2 * grid[d]);
        }
        EXPECT_NE(t->name().find(std::string(1, "xyz"[axis]) + " periodic"), std::string::npos);
        const auto x = random_complex<T>(c.voxels * batch, seed + 1000);
        const auto got = battery_detail::run_apply(*t, x, false);
        EXPECT_EQ(got, battery_detail::run_apply(*t, x, true)) << "apply_adjoint must be apply";
        worst = std::max(worst, expect_exact_normal(c, x, got, batch));
        EXPECT_LE(battery_detail::rel_diff(got, battery_detail::run_apply(*full, x, false)), 2 * oracle_tolerance<T>())
            << "periodic axes on and off";
      }
  std::printf("[ Toeplitz with a periodic axis vs exact AᴴWA, %s ] largest relative error %.2e (threshold %.2e)\n",
              sizeof(T) == sizeof(float) ? "float" : "double", worst, oracle_tolerance<T>());
}

// A stacked last axis (include/fieldft/mri/toeplitz.hpp): the same in-plane samples and weights on
// every plane of a periodic last axis. The kernel is one plane and the last axis is not
// transformed, and the operator is still the exact AᴴWA within oracle_tolerance: 3D stacks along z
// (even and odd N_z) and a 2D stack along y (Cartesian lines of identical x samples). With
// options.stacked_axis = false the same operator with the last axis transformed: the two agree
// within twice the tolerance. A wrong scale or a skipped FFT that mattered would fail the exact
// comparison (the kernel's plane replaces N_last planes).
TYPED_TEST(ToeplitzTyped, StackedAxisMatchesTheExactNormal) {
  using T = TypeParam;
  struct Geometry {
    std::vector<std::int64_t> grid;
    std::int64_t per_plane;
  };
  // {16, 8, 5}: 2N_x, 2N_y powers of two, the CUDA engine's fused path plane by plane; the others
  // its cuFFT path.
  const Geometry geometries[] = {{{8, 7, 6}, 70}, {{7, 6, 5}, 52}, {{11, 7}, 21}, {{16, 8, 5}, 90}};
  std::uint64_t seed = 1700;
  double worst = 0;
  for (const auto& [grid, per_plane] : geometries)
    for (bool weights : {false, true})
      for (std::int64_t batch : {1, 3}) {
        const auto c = make_stack_case<T>(grid, per_plane, ++seed, weights);
        auto t = make_toeplitz<T>(c, battery_context(), batch);
        mri::ToeplitzOptions o;
        o.eps = toeplitz_eps<T>();
        o.batch = batch;
        o.stacked_axis = false;
        mri::ToeplitzNormal<T> transformed(c.encoding, battery_context(), std::span<const T>(c.w), o);
        SCOPED_TRACE(t->name());
        const int last = static_cast<int>(grid.size()) - 1;
        EXPECT_TRUE(t->stacked_axis());
        EXPECT_TRUE(t->periodic_axes()[static_cast<std::size_t>(last)]);
        EXPECT_FALSE(transformed.stacked_axis());
        EXPECT_NE(t->name().find(std::string(1, "xyz"[last]) + " stacked"), std::string::npos);
        const auto x = random_complex<T>(c.voxels * batch, seed + 1000);
        const auto got = battery_detail::run_apply(*t, x, false);
        EXPECT_EQ(got, battery_detail::run_apply(*t, x, true)) << "apply_adjoint must be apply";
        worst = std::max(worst, expect_exact_normal(c, x, got, batch));
        EXPECT_LE(battery_detail::rel_diff(got, battery_detail::run_apply(transformed, x, false)),
                  2 * oracle_tolerance<T>())
            << "stacked axis on and off";
        // A batched copy shares the kernel and the geometry.
        auto twice = t->batched(2);
        const auto x2 = random_complex<T>(c.voxels * batch * 2, seed + 2000);
        const auto got2 = battery_detail::run_apply(*twice, x2, false);
        EXPECT_LE(battery_detail::rel_diff(got2, battery_detail::run_apply(*transformed.batched(2), x2, false)),
                  2 * oracle_tolerance<T>())
            << "batched";
      }
  std::printf("[ Toeplitz with a stacked axis vs exact AᴴWA, %s ] largest relative error %.2e (threshold %.2e)\n",
              sizeof(T) == sizeof(float) ? "float" : "double", worst, oracle_tolerance<T>());
}

// The stack's detection (src/mri/toeplitz_psf.hpp, stacked_last_axis) takes only identical planes
// of distinct k: one in-plane sample moved, one plane's weights changed, two planes on the same
// k_z, or the option off, and the last axis is transformed (still periodic, still exact); planes
// in another order of k_z stay a stack.
TYPED_TEST(ToeplitzTyped, StackDetectionNeedsIdenticalPlanesOfDistinctK) {
  using T = TypeParam;
  const std::vector<std::int64_t> grid{8, 7, 6};
  const std::int64_t per_plane = 40;
  const auto base = make_stack_case<T>(grid, per_plane, 1800, true);
  const auto rebuilt = [&](Case<T> c) {  // the encoding of the edited k (and oracle points)
    c.ksp = reference::Points{};
    c.ksp.dim = 3;
    std::vector<double>* kd[3] = {&c.ksp.x, &c.ksp.y, &c.ksp.z};
    for (int d = 0; d < 3; ++d)
      for (const T v : c.k[d]) kd[d]->push_back(static_cast<double>(v));
    c.voxels = 1;
    finish_case(c);
    return c;
  };
  const auto check = [&](const Case<T>& c, bool stacked, const char* what) {
    SCOPED_TRACE(what);
    auto t = make_toeplitz<T>(c, battery_context(), 1);
    EXPECT_EQ(t->stacked_axis(), stacked);
    EXPECT_TRUE(t->periodic_axes()[2]);
    const auto x = random_complex<T>(c.voxels, 1801);
    expect_exact_normal(c, x, battery_detail::run_apply(*t, x, false), 1);
  };
  check(base, true, "the stack");
  Case<T> moved = base;
  moved.k[0][static_cast<std::size_t>(3 * per_plane + 5)] += static_cast<T>(0.25);
  check(rebuilt(moved), false, "one in-plane sample of plane 3 moved");
  Case<T> weighted = base;
  weighted.w[static_cast<std::size_t>(2 * per_plane + 1)] *= static_cast<T>(1.5);
  check(weighted, false, "one weight of plane 2 changed");
  Case<T> twice = base;  // plane 1 on plane 0's k_z: plane 0's k_z twice, plane 1's never
  for (std::int64_t j = 0; j < per_plane; ++j) twice.k[2][static_cast<std::size_t>(per_plane + j)] = twice.k[2][0];
  check(rebuilt(twice), false, "two planes on one k_z");
  Case<T> reordered = base;  // planes 0 and 5 swap their k_z: still all distinct
  for (std::int64_t j = 0; j < per_plane; ++j)
    std::swap(reordered.k[2][static_cast<std::size_t>(j)], reordered.k[2][static_cast<std::size_t>(5 * per_plane + j)]);
  check(rebuilt(reordered), true, "planes in another order");
#if FIELDFT_TEST_BACKEND == 1  // the detection itself (a private header)
  EXPECT_TRUE(
      mri::detail::stacked_last_axis(*base.encoding, {false, false, true}, std::span<const T>(base.w), false, true));
  EXPECT_FALSE(mri::detail::stacked_last_axis(*base.encoding, {false, false, true}, std::span<const T>(base.w), false,
                                              /*enabled=*/false));
  EXPECT_FALSE(
      mri::detail::stacked_last_axis(*base.encoding, {false, false, false}, std::span<const T>(base.w), false, true))
      << "a stack needs the periodic last axis";
#endif
}

#if FIELDFT_TEST_BACKEND == 1  // the detection itself (a private header)
// The scans of the detection in chunks over a host context's threads (enough samples for several)
// give the serial answer: a difference in the last chunk, in any of the arrays compared, is found.
TYPED_TEST(ToeplitzTyped, StackDetectionOnThreadsFindsALateDifference) {
  using T = TypeParam;
  const std::vector<std::int64_t> grid{8, 8, 4};
  const std::int64_t per_plane = 30000, m = 4 * per_plane;
  std::vector<T> k[3], times(static_cast<std::size_t>(m));
  for (auto& a : k) a.resize(static_cast<std::size_t>(m));
  for (std::int64_t j = 0; j < m; ++j) {
    const std::int64_t i = j % per_plane;
    k[0][static_cast<std::size_t>(j)] = static_cast<T>(std::sin(0.01 * static_cast<double>(i)) * 3.5);
    k[1][static_cast<std::size_t>(j)] = static_cast<T>(std::cos(0.013 * static_cast<double>(i)) * 3.5);
    k[2][static_cast<std::size_t>(j)] = static_cast<T>(j / per_plane - 2);
    times[static_cast<std::size_t>(j)] = static_cast<T>(1e-6 * static_cast<double>(i));
  }
  const Context threads = Context::host(4);
  const auto detect = [&](int array, std::int64_t at, T change) {
    std::vector<T> a[4] = {k[0], k[1], k[2], times};
    if (array >= 0) a[array][static_cast<std::size_t>(at)] += change;
    const mri::Encoding<T> e(std::span<const std::int64_t>(grid), a[0], a[1], a[2], a[3]);
    const auto serial = mri::detail::periodic_axes(e, 1e-5, true);
    const auto periodic = mri::detail::periodic_axes(e, 1e-5, true, &threads);
    EXPECT_EQ(periodic, serial);
    const bool stacked = mri::detail::stacked_last_axis(e, periodic, {}, true, true, &threads);
    EXPECT_EQ(stacked, mri::detail::stacked_last_axis(e, periodic, {}, true, true));
    return std::pair{periodic[2], stacked};
  };
  EXPECT_EQ(detect(-1, 0, 0), std::pair(true, true));
  EXPECT_EQ(detect(2, m - 3, static_cast<T>(0.25)), std::pair(false, false)) << "k_z off the integers";
  EXPECT_EQ(detect(2, m - 3, static_cast<T>(-1)), std::pair(true, false)) << "one k_z of the last plane differs";
  EXPECT_EQ(detect(0, m - 3, static_cast<T>(0.25)), std::pair(true, false)) << "k_x of the last plane";
  EXPECT_EQ(detect(1, m - 3, static_cast<T>(0.25)), std::pair(true, false)) << "k_y of the last plane";
  EXPECT_EQ(detect(3, m - 3, static_cast<T>(1e-6)), std::pair(true, false)) << "a time of the last plane";
}
#endif

// The detection: k off the integers by more than eps/(20π) (src/mri/toeplitz_psf.hpp) keeps the
// 2N axis — here k_z = integer + 0.25, and + 1e-3 (well above the tolerance at either eps) — and
// the operator is still exact; integers shifted by a whole number stay periodic.
TYPED_TEST(ToeplitzTyped, OffGridAxisIsNotPeriodic) {
  using T = TypeParam;
  std::uint64_t seed = 1450;
  for (double offset : {0.25, 1e-3, -1.0}) {
    SCOPED_TRACE(::testing::Message() << "k_z offset " << offset);
    const auto c = make_case<T>({8, 7, 6}, 300, ++seed, true, 2, offset);
    auto t = make_toeplitz<T>(c, battery_context(), 1);
    const bool on_grid = offset == std::floor(offset);
    EXPECT_EQ(t->periodic_axes()[2], on_grid);
    EXPECT_EQ(t->embedding_grid()[2], on_grid ? 6 : 12);
    EXPECT_FALSE(t->periodic_axes()[0] || t->periodic_axes()[1]);
    const auto x = random_complex<T>(c.voxels, seed + 1000);
    expect_exact_normal(c, x, battery_detail::run_apply(*t, x, false), 1);
  }
}

// kOn against kOff: each is AᴴA to within its error, Toeplitz about eps (above) and the NUFFT
// pair about 2·eps (each transform within eps), so they agree within 4·eps — the threshold the
// encoding battery gives the NUFFT's normal (encoding_battery_test.cpp) — plus float rounding.
template <class T>
double normal_tolerance() {
  return 4 * toeplitz_eps<T>() + (sizeof(T) == sizeof(float) ? 1e-5 : 0.0);
}

TYPED_TEST(ToeplitzTyped, NufftEncodingNormalWithAndWithoutToeplitz) {
  using T = TypeParam;
  const Context ctx = test_context();
  struct Geometry {
    std::vector<std::int64_t> grid;
    std::int64_t samples;
    int on_grid;  // a stack's axis (periodic in the Toeplitz normal), or -1
  };
  for (const auto& [grid, m, on_grid] : {Geometry{{16, 11}, 240, -1}, Geometry{{9, 8, 6}, 500, -1},
                                         Geometry{{9, 8, 6}, 500, 2}}) {
    const auto c = make_case<T>(grid, m, 501, false, on_grid);
    auto on = make_nufft<T>(c, ctx, 2, mri::Toeplitz::kOn);
    auto off = make_nufft<T>(c, ctx, 2, mri::Toeplitz::kOff);
    auto* on_enc = dynamic_cast<mri::NufftEncoding<T>*>(on.get());
    auto* off_enc = dynamic_cast<mri::NufftEncoding<T>*>(off.get());
    ASSERT_TRUE(on_enc && off_enc);
    EXPECT_TRUE(on_enc->uses_toeplitz()) << on_enc->toeplitz_reason();
    EXPECT_FALSE(off_enc->uses_toeplitz()) << off_enc->toeplitz_reason();
    EXPECT_TRUE(std::isnan(on_enc->toeplitz_setup_seconds())) << "built before the first apply_normal";
    const auto x = random_complex<T>(on->domain_size(), 502);
    const auto zt = run_normal(*on, x), zn = run_normal(*off, x);
    const double d = battery_detail::rel_diff(zt, zn);
    EXPECT_LE(d, normal_tolerance<T>()) << on->name();
    std::printf("[ %s: Toeplitz vs NUFFT pair normal ] relative difference %.2e (threshold %.2e)\n",
                on->name().c_str(), d, normal_tolerance<T>());
    EXPECT_TRUE(std::isfinite(on_enc->toeplitz_setup_seconds()));
    EXPECT_TRUE(std::isnan(off_enc->toeplitz_setup_seconds()));

    // batched(k) keeps the option, and its normal is the stacked one.
    auto ob = op::batch<T>(on, 2);
    auto* ob_enc = dynamic_cast<mri::NufftEncoding<T>*>(ob.get());
    ASSERT_NE(ob_enc, nullptr);
    EXPECT_TRUE(ob_enc->uses_toeplitz());
    std::vector<std::complex<T>> x2 = x;
    x2.insert(x2.end(), x.begin(), x.end());
    const auto zb = run_normal(*ob, x2);  // its own kernel, from the same transform: rounding apart
    const std::int64_t n = on->domain_size();
    EXPECT_LE(battery_detail::rel_diff(std::vector<std::complex<T>>(zb.begin(), zb.begin() + n), zt),
              default_tolerance<T>());
    EXPECT_LE(battery_detail::rel_diff(std::vector<std::complex<T>>(zb.begin() + n, zb.end()), zt),
              default_tolerance<T>());
  }
}

// SENSE: compose(F, diag_expand(maps)) forwards its normal as Sᴴ(FᴴF)S, so the encoding's
// Toeplitz normal is used without the caller asking (the lazily built kernel shows it).
TYPED_TEST(ToeplitzTyped, SenseComposeUsesTheToeplitzNormal) {
  using T = TypeParam;
  const Context ctx = test_context();
  const auto c = make_case<T>({14, 12}, 220, 511, false);
  const std::int64_t coils = 4;
  const auto maps = random_complex<T>(c.voxels * coils, 512);
  auto expand = op::diag_expand<T>(maps, c.encoding->image_shape(), coils, ctx);
  auto on = make_nufft<T>(c, ctx, coils, mri::Toeplitz::kAuto);
  auto off = make_nufft<T>(c, ctx, coils, mri::Toeplitz::kOff);
  auto* on_enc = dynamic_cast<mri::NufftEncoding<T>*>(on.get());
  ASSERT_TRUE(on_enc->uses_toeplitz()) << "kAuto at upsampling factor 2: " << on_enc->toeplitz_reason();
  auto a_on = op::compose<T>(on, expand), a_off = op::compose<T>(off, expand);
  const auto x = random_complex<T>(c.voxels, 513);
  const auto zt = run_normal(*a_on, x), zn = run_normal(*a_off, x);
  EXPECT_TRUE(std::isfinite(on_enc->toeplitz_setup_seconds())) << "the compose did not reach the Toeplitz normal";
  EXPECT_LE(battery_detail::rel_diff(zt, zn), normal_tolerance<T>());
}

// Weighted normals for the solvers: NufftEncoding::weighted_normal and mri::sense's give a
// weighted Toeplitz kernel when the weights are the same for every coil (equal to A, ·w, Aᴴ
// within normal_tolerance, as kOn against kOff above), nothing when they differ between coils;
// solve::cg with weights reaches the same image through a Toeplitz SENSE operator (which takes
// the weighted kernel) and through a NUFFT-pair one (which applies A, ·w, Aᴴ): their normals
// differ by about eps, which ten well-conditioned iterations (λ = 10 against eigenvalues of about
// M·w ≈ 200) amplify by at most a few, hence 20·eps.
TYPED_TEST(ToeplitzTyped, WeightedNormalsForTheSolvers) {
  using T = TypeParam;
  using C = std::complex<T>;
  const Context ctx = test_context();
  const std::int64_t m = 220, coils = 3;
  const auto c = make_case<T>({16, 8}, m, 541, true);
  auto enc = make_nufft<T>(c, ctx, coils, mri::Toeplitz::kOn);
  std::vector<C> w(static_cast<std::size_t>(m * coils));
  for (std::int64_t i = 0; i < m * coils; ++i) w[static_cast<std::size_t>(i)] = C(c.w[static_cast<std::size_t>(i % m)], 0);
  ContextVector<T> wd(ctx, m * coils);
  wd.upload(w);
  const auto weighted = [&](op::LinearOperator<T>& a, const std::vector<C>& x) {
    auto y = battery_detail::run_apply(a, x, false);
    for (std::size_t i = 0; i < y.size(); ++i) y[i] *= w[i];
    return battery_detail::run_apply(a, y, true);
  };

  auto n = enc->weighted_normal(wd.get());
  ASSERT_NE(n, nullptr) << "a Toeplitz NufftEncoding has a weighted normal";
  auto* tn = dynamic_cast<mri::ToeplitzNormal<T>*>(n.get());
  ASSERT_NE(tn, nullptr);
  EXPECT_TRUE(tn->weighted());
  const auto x = random_complex<T>(c.voxels * coils, 542);
  EXPECT_LE(battery_detail::rel_diff(battery_detail::run_apply(*n, x, false), weighted(*enc, x)), normal_tolerance<T>());

  std::vector<C> per_coil = w;
  per_coil[static_cast<std::size_t>(m)] *= T(2);
  ContextVector<T> pd(ctx, m * coils);
  pd.upload(per_coil);
  EXPECT_EQ(enc->weighted_normal(pd.get()), nullptr) << "weights that differ between coils have no Toeplitz kernel";
  EXPECT_EQ(make_nufft<T>(c, ctx, coils, mri::Toeplitz::kOff)->weighted_normal(wd.get()), nullptr);

  const auto maps = random_complex<T>(c.voxels * coils, 543);
  const op::Shape maps_shape{16, 8, coils};
  auto s = mri::sense<T>(enc, maps, maps_shape);
  auto sn = s->weighted_normal(wd.get());
  ASSERT_NE(sn, nullptr) << "mri::sense forwards the encoding's weighted normal";
  const auto x1 = random_complex<T>(c.voxels, 544);
  EXPECT_LE(battery_detail::rel_diff(battery_detail::run_apply(*sn, x1, false), weighted(*s, x1)), normal_tolerance<T>());

  auto s_off = mri::sense<T>(make_nufft<T>(c, ctx, coils, mri::Toeplitz::kOff), maps, maps_shape);
  ContextVector<T> yd(ctx, m * coils), xa(ctx, c.voxels), xb(ctx, c.voxels);
  yd.upload(battery_detail::run_apply(*s, random_complex<T>(c.voxels, 545), false));
  const std::vector<C> zero(static_cast<std::size_t>(c.voxels), C(0));
  xa.upload(zero);
  xb.upload(zero);
  solve::CgOptions o;
  o.max_iterations = 10;
  o.lambda = 10;
  solve::cg<T>(*s, yd.get(), xa.get(), wd.get(), o);
  solve::cg<T>(*s_off, yd.get(), xb.get(), wd.get(), o);
  EXPECT_LE(battery_detail::rel_diff(xa.download(), xb.download()), 20 * toeplitz_eps<T>() + default_tolerance<T>());
}

// FieldToeplitzNormal (fieldft/mri/field_toeplitz.hpp) against the exact field-corrected AᴴWA
// and its SENSE form Σ_c conj(S_c) AᴴWA (S_c ·): the direct sums in double with the field map
// (smooth, up to ±150 Hz) and readout times (a 10 ms readout in 8 interleaves of M/8 samples, so
// that times repeat as in a real readout). The difference interpolator keeps every phase factor
// within the accuracy (1e-3) with coefficients of l1 norm Σ_l|h_l| (about 1–3 here), and the
// kernels add the type 1 transforms' eps: 5·accuracy leaves room for both, in 2D and 3D alike
// (the bound is per phase factor and per kernel, whatever the dimension). Grids: {16, 8} (the
// CUDA fused path), {12, 10} and the 3D {12, 10, 8} (its cuFFT path). A third operator takes
// chunks of two images (chunk_bytes: two grids), so that the CUDA cuFFT path runs several chunks
// and a partial last one (3·L' images): the same operator up to the summation order. The last
// grid is a stack along z (integer k_z): its kernels and grids take the periodic z axis (L_z =
// N_z), and the operator with options.periodic_axes = false (2N_z) agrees with it to rounding
// and the kernels' eps (the same segments, the same interpolator).
TYPED_TEST(ToeplitzTyped, FieldCorrectedNormalMatchesTheExactOne) {
  using T = TypeParam;
  const Context ctx = test_context();
  const double accuracy = 1e-3, tol = 5 * accuracy + 3 * toeplitz_eps<T>();
  const std::vector<std::pair<std::vector<std::int64_t>, int>> grids{
      {{16, 8}, -1}, {{12, 10}, -1}, {{12, 10, 8}, -1}, {{12, 10, 8}, 2}};
  std::uint64_t seed = 800;
  for (const auto& [grid, on_grid] : grids) {
    const std::int64_t m = grid.size() == 3 ? 640 : 320, coils = 3;
    const auto c = make_case<T>(grid, m, ++seed, true, on_grid);
    const std::int64_t n = c.voxels;
    std::vector<T> times(static_cast<std::size_t>(m)), field(static_cast<std::size_t>(n));
    for (std::int64_t j = 0; j < m; ++j) times[static_cast<std::size_t>(j)] = static_cast<T>(10e-3 * static_cast<double>(j % (m / 8)) / static_cast<double>(m / 8));
    for (std::int64_t v = 0; v < n; ++v)
      field[static_cast<std::size_t>(v)] = static_cast<T>(2 * std::numbers::pi * 150 *
                                                          std::sin(0.7 * static_cast<double>(v % grid[0]) + 0.3 * static_cast<double>(v / grid[0])));
    auto enc = std::make_shared<const mri::Encoding<T>>(
        std::span<const std::int64_t>(c.grid), std::span<const T>(c.k[0]), std::span<const T>(c.k[1]),
        grid.size() == 3 ? std::span<const T>(c.k[2]) : std::span<const T>(), std::span<const T>(times),
        std::span<const T>(field));
    const auto maps = random_complex<T>(n * coils, ++seed);
    mri::FieldToeplitzOptions o;
    o.accuracy = accuracy;
    o.eps = toeplitz_eps<T>();
    mri::FieldToeplitzNormal<T> plain(enc, ctx, {}, 1, std::span<const T>(c.w), o);
    mri::FieldToeplitzNormal<T> sense(enc, ctx, maps, coils, std::span<const T>(c.w), o);
    const double cells = (1 << grid.size()) * static_cast<double>(n) / (on_grid >= 0 ? 2 : 1);  // ∏ L_d
    o.chunk_bytes = 2.0 * cells * sizeof(std::complex<T>);
    mri::FieldToeplitzNormal<T> chunked(enc, ctx, maps, coils, std::span<const T>(c.w), o);
    o.chunk_bytes = 0;
    o.periodic_axes = false;
    mri::FieldToeplitzNormal<T> full(enc, ctx, maps, coils, std::span<const T>(c.w), o);
    SCOPED_TRACE(sense.name());
    EXPECT_EQ(sense.kernel_bytes(), static_cast<double>(sense.segments()) * cells * sizeof(std::complex<T>));
    EXPECT_EQ(full.kernel_bytes(), static_cast<double>(full.segments()) * (1 << grid.size()) * static_cast<double>(n) *
                                       sizeof(std::complex<T>));
    for (int d = 0; d < static_cast<int>(grid.size()); ++d) {
      EXPECT_EQ(sense.periodic_axes()[d], d == on_grid);
      EXPECT_EQ(sense.embedding_grid()[d], (d == on_grid ? 1 : 2) * grid[d]);
      EXPECT_FALSE(full.periodic_axes()[d]);
    }
    EXPECT_GE(plain.segments(), 2) << "a ±150 Hz field over 10 ms needs several segments";
    EXPECT_LE(plain.worst_error(), accuracy);
    const auto parts = sense.setup_parts();  // the set-up's parts: each its own, within the whole
    for (double p : {parts.design, parts.phases, parts.engine, parts.kernels, parts.broadcast}) EXPECT_GE(p, 0.0);
    EXPECT_GT(parts.kernels, 0.0) << "the L' type 1 transforms were timed";
    EXPECT_LE(parts.design + parts.phases + parts.engine + parts.kernels + parts.broadcast, sense.setup_seconds());
    const std::vector<double> fd(field.begin(), field.end()), td(times.begin(), times.end());
    const auto exact = [&](const std::vector<cdouble>& x) {
      auto s = reference::field_dft_forward(c.ksp, c.pos, fd, td, x);
      for (std::int64_t j = 0; j < m; ++j) s[static_cast<std::size_t>(j)] *= static_cast<double>(c.w[static_cast<std::size_t>(j)]);
      return reference::field_dft_adjoint(c.ksp, c.pos, fd, td, s);
    };
    const auto x = random_complex<T>(n, ++seed);
    const std::vector<cdouble> xd(x.begin(), x.end());
    const double e_plain = rel_error(battery_detail::run_apply(plain, x, false), exact(xd));
    std::vector<cdouble> want(static_cast<std::size_t>(n), cdouble(0));
    for (std::int64_t b = 0; b < coils; ++b) {
      std::vector<cdouble> sx(static_cast<std::size_t>(n));
      for (std::int64_t v = 0; v < n; ++v) sx[static_cast<std::size_t>(v)] = cdouble(maps[static_cast<std::size_t>(b * n + v)]) * xd[static_cast<std::size_t>(v)];
      const auto a = exact(sx);
      for (std::int64_t v = 0; v < n; ++v) want[static_cast<std::size_t>(v)] += std::conj(cdouble(maps[static_cast<std::size_t>(b * n + v)])) * a[static_cast<std::size_t>(v)];
    }
    const auto z_sense = battery_detail::run_apply(sense, x, false);
    const double e_sense = rel_error(z_sense, want);
    EXPECT_LE(e_plain, tol);
    EXPECT_LE(e_sense, tol);
    EXPECT_LE(battery_detail::rel_diff(battery_detail::run_apply(chunked, x, false), z_sense), default_tolerance<T>())
        << "chunks of two images";
    // Each within oracle_tolerance of the same operator (the same segments and interpolator).
    EXPECT_LE(battery_detail::rel_diff(battery_detail::run_apply(full, x, false), z_sense), 2 * oracle_tolerance<T>())
        << "periodic axes on and off";
    std::printf("[ %s, L' %d: vs the exact field-corrected normal ] plain %.2e, SENSE %.2e (threshold %.2e)\n",
                sense.name().c_str(), sense.segments(), e_plain, e_sense, tol);

    // TimeSegmentedEncoding and mri::sense on it take this normal by themselves (kAuto): the
    // same AᴴA as their forward then adjoint passes, each within the accuracy.
    mri::TimeSegmentationOptions to;
    to.accuracy = accuracy;
    to.eps = toeplitz_eps<T>();
    to.batch = coils;
    auto ts_on = std::make_shared<mri::TimeSegmentedEncoding<T>>(enc, ctx, to);
    to.toeplitz = mri::Toeplitz::kOff;
    auto ts_off = std::make_shared<mri::TimeSegmentedEncoding<T>>(enc, ctx, to);
    EXPECT_TRUE(ts_on->uses_toeplitz());
    EXPECT_FALSE(ts_off->uses_toeplitz());
    const auto xc = random_complex<T>(n * coils, ++seed);
    EXPECT_LE(battery_detail::rel_diff(run_normal(*ts_on, xc), run_normal(*ts_off, xc)), tol) << "encoding";
    op::Shape ms(grid.begin(), grid.end());
    ms.push_back(coils);
    auto s_on = mri::sense<T>(ts_on, maps, ms), s_off = mri::sense<T>(ts_off, maps, ms);
    EXPECT_LE(battery_detail::rel_diff(run_normal(*s_on, x), run_normal(*s_off, x)), tol) << "SENSE";
  }
}

// op::LinearOperator::prepare_normal builds the Toeplitz normal before any apply_normal: the
// field-corrected one of a TimeSegmentedEncoding (3D, the CUDA engine's cuFFT path) and of
// mri::sense on it, and NufftEncoding's through op::scale and op::compose, which forward it. It
// is idempotent and apply_normal then builds nothing more (the set-up time read back does not
// change); the normal is the one built lazily at the first apply_normal, to rounding (two
// instances: FFTW's measured plans may differ).
TYPED_TEST(ToeplitzTyped, PrepareNormalBuildsOnceBeforeTheFirstApply) {
  using T = TypeParam;
  const Context ctx = test_context();
  const std::vector<std::int64_t> grid{12, 10, 8};
  const std::int64_t m = 600, coils = 3;
  const auto c = make_case<T>(grid, m, 901, false);
  const std::int64_t n = c.voxels;
  std::vector<T> times(static_cast<std::size_t>(m)), field(static_cast<std::size_t>(n));
  for (std::int64_t j = 0; j < m; ++j) times[static_cast<std::size_t>(j)] = static_cast<T>(1e-5 * static_cast<double>(j % 100));
  for (std::int64_t v = 0; v < n; ++v) field[static_cast<std::size_t>(v)] = static_cast<T>(600 * std::sin(0.5 * static_cast<double>(v)));
  auto enc = std::make_shared<const mri::Encoding<T>>(
      std::span<const std::int64_t>(c.grid), std::span<const T>(c.k[0]), std::span<const T>(c.k[1]),
      std::span<const T>(c.k[2]), std::span<const T>(times), std::span<const T>(field));
  mri::TimeSegmentationOptions to;
  to.accuracy = 1e-3;
  to.eps = toeplitz_eps<T>();
  auto prepared = std::make_shared<mri::TimeSegmentedEncoding<T>>(enc, ctx, to);
  auto lazy = std::make_shared<mri::TimeSegmentedEncoding<T>>(enc, ctx, to);
  ASSERT_TRUE(prepared->uses_toeplitz());
  EXPECT_TRUE(std::isnan(prepared->toeplitz_setup_seconds())) << "built before it was asked for";
  EXPECT_EQ(prepared->toeplitz_normal(), nullptr);
  EXPECT_EQ(prepared->name().find("normal"), std::string::npos) << prepared->name();
  op::LinearOperator<T>& base = *prepared;
  base.prepare_normal();
  const double s = prepared->toeplitz_setup_seconds();
  EXPECT_GT(s, 0.0);
  // Once built, the normal is reachable and named in the operator's name (what a report prints).
  ASSERT_NE(prepared->toeplitz_normal(), nullptr);
  EXPECT_NE(prepared->name().find(", normal " + prepared->toeplitz_normal()->name()), std::string::npos)
      << prepared->name();
  base.prepare_normal();
  EXPECT_EQ(prepared->toeplitz_setup_seconds(), s) << "prepare_normal built it again";
  const auto x = random_complex<T>(n, 902);
  const auto zp = run_normal(*prepared, x);
  EXPECT_EQ(prepared->toeplitz_setup_seconds(), s) << "apply_normal built it again";
  EXPECT_TRUE(std::isnan(lazy->toeplitz_setup_seconds()));
  EXPECT_LE(battery_detail::rel_diff(zp, run_normal(*lazy, x)), default_tolerance<T>());
  EXPECT_GT(lazy->toeplitz_setup_seconds(), 0.0) << "the first apply_normal builds it";

  to.batch = coils;
  const auto maps = random_complex<T>(n * coils, 903);
  op::Shape ms(grid.begin(), grid.end());
  ms.push_back(coils);
  auto sp = mri::sense<T>(std::make_shared<mri::TimeSegmentedEncoding<T>>(enc, ctx, to), maps, ms);
  auto sl = mri::sense<T>(std::make_shared<mri::TimeSegmentedEncoding<T>>(enc, ctx, to), maps, ms);
  sp->prepare_normal();
  sp->prepare_normal();
  EXPECT_NE(sp->name().find("normal FieldToeplitzNormal("), std::string::npos) << sp->name();
  ASSERT_NE(mri::field_toeplitz_normal<T>(*sp), nullptr);
  EXPECT_NE(mri::field_toeplitz_normal<T>(*sp)->name().find("3 coils"), std::string::npos) << "its SENSE form";
  EXPECT_EQ(mri::field_toeplitz_normal<T>(*sl), nullptr) << "not built yet";
  EXPECT_EQ(mri::field_toeplitz_normal<T>(*prepared), prepared->toeplitz_normal());
  EXPECT_LE(battery_detail::rel_diff(run_normal(*sp, x), run_normal(*sl, x)), default_tolerance<T>()) << "SENSE";

  auto nufft = make_nufft<T>(c, ctx, 1, mri::Toeplitz::kOn);
  auto* ne = dynamic_cast<mri::NufftEncoding<T>*>(nufft.get());
  ASSERT_NE(ne, nullptr);
  const auto d = random_complex<T>(n, 904);
  auto chain = op::scale<T>(std::complex<T>(2, 0), op::compose<T>(nufft, op::diag<T>(d, enc->image_shape(), ctx)));
  EXPECT_TRUE(std::isnan(ne->toeplitz_setup_seconds()));
  chain->prepare_normal();
  EXPECT_GT(ne->toeplitz_setup_seconds(), 0.0) << "scale and compose forward prepare_normal";
  EXPECT_EQ(mri::field_toeplitz_normal<T>(*chain), nullptr) << "no field-corrected normal there";
}

// A kernel shared by batched copies: no new set-up, same results per image.
TYPED_TEST(ToeplitzTyped, BatchedSharesTheKernel) {
  using T = TypeParam;
  const auto c = make_case<T>({10, 9}, 120, 521, true);
  auto t = make_toeplitz<T>(c, battery_context(), 1);
  auto tb = op::batch<T>(t, 3);
  auto* tbb = dynamic_cast<mri::ToeplitzNormal<T>*>(tb.get());
  ASSERT_NE(tbb, nullptr) << "op::batch looped instead of one batched FFT";
  EXPECT_EQ(tbb->batch(), 3);
  EXPECT_EQ(tb->domain_shape(), (op::Shape{10, 9, 3}));
  EXPECT_EQ(tbb->setup_seconds(), t->setup_seconds());
  const auto x = random_complex<T>(c.voxels, 522);
  const auto z1 = battery_detail::run_apply(*t, x, false);
  std::vector<std::complex<T>> x3;
  for (int i = 0; i < 3; ++i) x3.insert(x3.end(), x.begin(), x.end());
  const auto z3 = battery_detail::run_apply(*tb, x3, false);
  for (std::int64_t b = 0; b < 3; ++b)
    EXPECT_LE(battery_detail::rel_diff(std::vector<std::complex<T>>(z3.begin() + b * c.voxels,
                                                                    z3.begin() + (b + 1) * c.voxels),
                                       z1),
              default_tolerance<T>());
}

// The field-corrected normal on a stack (FieldToeplitzOptions::stacked_axis): the same in-plane
// samples, weights and readout times on every k_z plane (times repeat per plane as in a stack of
// spirals), a smooth 3D field map. Its kernels are one plane each (kernel_bytes), and the plain and
// SENSE forms match the exact field-corrected normals within the tolerance of
// FieldCorrectedNormalMatchesTheExactOne (5·accuracy + the kernels' eps), and the same operator with
// the stack transformed (stacked_axis = false) within twice the transforms' tolerance. Times that
// differ between planes (one plane's readout shifted) are not a stack.
template <class T>
void expect_field_stack_matches_exact(const std::vector<std::int64_t>& grid) {
  const Context ctx = test_context();
  const double accuracy = 1e-3, tol = 5 * accuracy + 3 * toeplitz_eps<T>();
  const std::int64_t per_plane = 80, coils = 3;
  const auto c = make_stack_case<T>(grid, per_plane, 1900 + static_cast<std::uint64_t>(grid[0]), true);
  const std::int64_t n = c.voxels, m = static_cast<std::int64_t>(c.k[0].size());
  std::vector<T> times(static_cast<std::size_t>(m)), field(static_cast<std::size_t>(n));
  for (std::int64_t j = 0; j < m; ++j)  // 8 interleaves of 10 samples per plane, a 10 ms readout
    times[static_cast<std::size_t>(j)] = static_cast<T>(10e-3 * static_cast<double>(j % 10) / 10.0);
  for (std::int64_t v = 0; v < n; ++v)
    field[static_cast<std::size_t>(v)] = static_cast<T>(2 * std::numbers::pi * 150 *
                                                        std::sin(0.7 * static_cast<double>(v % grid[0]) +
                                                                 0.3 * static_cast<double>((v / grid[0]) % grid[1]) +
                                                                 0.5 * static_cast<double>(v / (grid[0] * grid[1]))));
  const auto encoding = [&](const std::vector<T>& t) {
    return std::make_shared<const mri::Encoding<T>>(std::span<const std::int64_t>(c.grid), std::span<const T>(c.k[0]),
                                                    std::span<const T>(c.k[1]), std::span<const T>(c.k[2]),
                                                    std::span<const T>(t), std::span<const T>(field));
  };
  const auto enc = encoding(times);
  const auto maps = random_complex<T>(n * coils, 1901);
  mri::FieldToeplitzOptions o;
  o.accuracy = accuracy;
  o.eps = toeplitz_eps<T>();
  mri::FieldToeplitzNormal<T> plain(enc, ctx, {}, 1, std::span<const T>(c.w), o);
  mri::FieldToeplitzNormal<T> sense(enc, ctx, maps, coils, std::span<const T>(c.w), o);
  o.stacked_axis = false;
  mri::FieldToeplitzNormal<T> transformed(enc, ctx, maps, coils, std::span<const T>(c.w), o);
  SCOPED_TRACE(sense.name());
  EXPECT_TRUE(plain.stacked_axis() && sense.stacked_axis());
  EXPECT_FALSE(transformed.stacked_axis());
  EXPECT_NE(sense.name().find("z stacked"), std::string::npos);
  const double plane = 4.0 * static_cast<double>(grid[0] * grid[1]);  // 2N_x · 2N_y
  EXPECT_EQ(sense.kernel_bytes(), static_cast<double>(sense.segments()) * plane * sizeof(std::complex<T>));
  EXPECT_EQ(transformed.kernel_bytes(), static_cast<double>(transformed.segments()) * plane *
                                            static_cast<double>(grid[2]) * sizeof(std::complex<T>));
  const std::vector<double> fd(field.begin(), field.end()), td(times.begin(), times.end());
  const auto exact = [&](const std::vector<cdouble>& x) {
    auto s = reference::field_dft_forward(c.ksp, c.pos, fd, td, x);
    for (std::int64_t j = 0; j < m; ++j)
      s[static_cast<std::size_t>(j)] *= static_cast<double>(c.w[static_cast<std::size_t>(j)]);
    return reference::field_dft_adjoint(c.ksp, c.pos, fd, td, s);
  };
  const auto x = random_complex<T>(n, 1902);
  const std::vector<cdouble> xd(x.begin(), x.end());
  const double e_plain = rel_error(battery_detail::run_apply(plain, x, false), exact(xd));
  std::vector<cdouble> want(static_cast<std::size_t>(n), cdouble(0));
  for (std::int64_t b = 0; b < coils; ++b) {
    std::vector<cdouble> sx(static_cast<std::size_t>(n));
    for (std::int64_t v = 0; v < n; ++v)
      sx[static_cast<std::size_t>(v)] =
          cdouble(maps[static_cast<std::size_t>(b * n + v)]) * xd[static_cast<std::size_t>(v)];
    const auto a = exact(sx);
    for (std::int64_t v = 0; v < n; ++v)
      want[static_cast<std::size_t>(v)] +=
          std::conj(cdouble(maps[static_cast<std::size_t>(b * n + v)])) * a[static_cast<std::size_t>(v)];
  }
  const auto z_sense = battery_detail::run_apply(sense, x, false);
  EXPECT_LE(e_plain, tol);
  EXPECT_LE(rel_error(z_sense, want), tol);
  EXPECT_LE(battery_detail::rel_diff(battery_detail::run_apply(transformed, x, false), z_sense),
            2 * oracle_tolerance<T>())
      << "stacked axis on and off";
  std::printf("[ %s, L' %d: vs the exact field-corrected normal ] plain %.2e, SENSE %.2e (threshold %.2e)\n",
              sense.name().c_str(), sense.segments(), e_plain, rel_error(z_sense, want), tol);

  std::vector<T> shifted = times;  // plane 1's readout 1 ms later: the planes differ
  for (std::int64_t j = per_plane; j < 2 * per_plane; ++j) shifted[static_cast<std::size_t>(j)] += static_cast<T>(1e-3);
  o.stacked_axis = true;
  mri::FieldToeplitzNormal<T> other(encoding(shifted), ctx, {}, 1, std::span<const T>(c.w), o);
  EXPECT_FALSE(other.stacked_axis()) << "times that differ between planes";
  EXPECT_TRUE(other.periodic_axes()[2]);
}

TYPED_TEST(ToeplitzTyped, FieldCorrectedStackedAxisMatchesTheExactOne) {
  // {16, 8, 4}: the CUDA engine's fused path plane by plane; {12, 10, 8} its cuFFT path.
  for (const auto& grid : {std::vector<std::int64_t>{12, 10, 8}, std::vector<std::int64_t>{16, 8, 4}}) {
    SCOPED_TRACE(op::shape_string(grid));
    expect_field_stack_matches_exact<TypeParam>(grid);
  }
}

#if FIELDFT_TEST_BACKEND == 1
// What the detection protects, with the engine below the operator (src/core/toeplitz.hpp): the
// CPU engine with the z axis FORCED periodic (L_z = N_z, a type 1 transform of N_z modes) is the
// exact normal for integer k_z and far from it for k_z = integer + 0.25 (the wrapped offsets take
// p(d − N_z) = p(d), off by exp(−2πi k_z) per sample); periodic_axes draws the line at
// eps/(20π): half of it is periodic (and exact), twice it is not (double: float cannot place k
// that close to an integer).
TYPED_TEST(ToeplitzTyped, ForcedPeriodicAxisNeedsIntegerK) {
  using T = TypeParam;
  using C = std::complex<T>;
  const Context host = Context::host();
  const auto forced = [&](const Case<T>& c, const std::vector<C>& x) {
    core::ToeplitzGeometry g = mri::detail::toeplitz_geometry(*c.encoding, 1, {false, false, true});
    auto engine = cpu::make_toeplitz_engine<T>(g, 1, /*measure=*/false);
    mri::detail::PsfTransform<T> psf(*c.encoding, g, host, toeplitz_eps<T>(), nufft::Options{});
    std::vector<C> strengths(c.w.size());
    for (std::size_t j = 0; j < c.w.size(); ++j) strengths[j] = C(c.w[j], 0);
    psf.execute(strengths.data(), engine->psf_buffer());
    std::vector<T> kernel(static_cast<std::size_t>(g.padded_cells()));
    engine->make_kernel(kernel.data());
    std::vector<C> z(x.size());
    engine->apply(kernel.data(), x.data(), z.data());
    return z;
  };
  std::uint64_t seed = 1500;
  const auto on = make_case<T>({8, 7, 6}, 300, ++seed, true, 2);
  const auto x = random_complex<T>(on.voxels, ++seed);
  expect_exact_normal(on, x, forced(on, x), 1);
  const auto off = make_case<T>({8, 7, 6}, 300, ++seed, true, 2, 0.25);
  const auto zeros = std::vector<double>(static_cast<std::size_t>(off.voxels), 0.0);
  auto s = reference::field_dft_forward(off.ksp, off.pos, zeros, std::vector<double>(off.w.size(), 0.0),
                                        std::vector<cdouble>(x.begin(), x.end()));
  for (std::size_t j = 0; j < s.size(); ++j) s[j] *= static_cast<double>(off.w[j]);
  const auto want = reference::field_dft_adjoint(off.ksp, off.pos, zeros, std::vector<double>(off.w.size(), 0.0), s);
  const double wrong = rel_error(forced(off, x), want);
  EXPECT_GT(wrong, 100 * oracle_tolerance<T>()) << "a periodic z axis for k_z off the grid must be wrong";
  std::printf("[ z forced periodic, k_z = integer + 0.25, %s ] relative error %.2e (the exact k_z: within %.2e)\n",
              sizeof(T) == sizeof(float) ? "float" : "double", wrong, oracle_tolerance<T>());
  EXPECT_FALSE(mri::detail::periodic_axes(*off.encoding, toeplitz_eps<T>(), true)[2]);
  EXPECT_FALSE(mri::detail::periodic_axes(*on.encoding, toeplitz_eps<T>(), false)[2]) << "disabled";
  if constexpr (sizeof(T) == sizeof(double)) {
    const double tol = mri::detail::periodic_tolerance(toeplitz_eps<T>());
    const auto near = make_case<T>({8, 7, 6}, 300, ++seed, true, 2, 0.5 * tol);
    EXPECT_TRUE(mri::detail::periodic_axes(*near.encoding, toeplitz_eps<T>(), true)[2]);
    auto t = make_toeplitz<T>(near, host, 1);
    ASSERT_TRUE(t->periodic_axes()[2]);
    expect_exact_normal(near, x, battery_detail::run_apply(*t, x, false), 1);
    const auto far = make_case<T>({8, 7, 6}, 300, ++seed, true, 2, 2 * tol);
    EXPECT_FALSE(mri::detail::periodic_axes(*far.encoding, toeplitz_eps<T>(), true)[2]);
  }
}
#endif

#if FIELDFT_TEST_BACKEND == 2
// The device engine against the host engine (FFTW) for one case and 1 and 5 images: the plain
// apply, and the SENSE form (ToeplitzNormal::apply_sense) against expand, apply, combine on the
// host. Each engine's kernel comes from its own type 1 NUFFT within eps of p, so they agree
// within 2·eps (the battery's parity) plus rounding.
template <class T>
void expect_device_matches_host(const Case<T>& c, std::uint64_t& seed, double chunk_bytes = 0) {
  using C = std::complex<T>;
  const double tol = 2 * toeplitz_eps<T>() + default_tolerance<T>();
  const std::int64_t n = c.voxels;
  for (std::int64_t coils : {1, 5}) {
    SCOPED_TRACE(::testing::Message() << op::shape_string(c.encoding->image_shape()) << ", " << coils << " images");
    auto host = make_toeplitz<T>(c, Context::host(), coils);
    auto dev = make_toeplitz<T>(c, test_context(), coils, chunk_bytes);
    const auto x = random_complex<T>(n * coils, ++seed);
    const auto zh = battery_detail::run_apply(*host, x, false);
    EXPECT_LE(battery_detail::rel_diff(battery_detail::run_apply(*dev, x, false), zh), tol) << "plain apply";

    const auto maps = random_complex<T>(n * coils, ++seed), x1 = random_complex<T>(n, ++seed);
    std::vector<C> expanded(static_cast<std::size_t>(n * coils)), want(static_cast<std::size_t>(n), C(0));
    for (std::int64_t b = 0; b < coils; ++b)
      for (std::int64_t v = 0; v < n; ++v) expanded[b * n + v] = maps[b * n + v] * x1[v];
    const auto applied = battery_detail::run_apply(*host, expanded, false);
    for (std::int64_t b = 0; b < coils; ++b)
      for (std::int64_t v = 0; v < n; ++v) want[v] += std::conj(maps[b * n + v]) * applied[b * n + v];
    ContextVector<T> md(dev->context(), n * coils), xd(dev->context(), n), zd(dev->context(), n);
    md.upload(maps);
    xd.upload(x1);
    ASSERT_TRUE(dev->apply_sense(md.get(), xd.get(), zd.get())) << "the device has a SENSE form for every grid";
    EXPECT_LE(battery_detail::rel_diff(zd.download(), want), tol) << "apply_sense";
    if (coils == 1) {
      EXPECT_FALSE(host->apply_sense(md.get(), xd.get(), zd.get())) << "the host has no fused form";
    }
  }
}

// The fused path of the CUDA engine (2D, 2N_d powers of two in [16, 2048]; src/cuda/toeplitz.cu)
// at every line length it instantiates, along rows and along columns; 5 coils leave the row
// kernel's coil loop a partial last round at every line length.
TYPED_TEST(ToeplitzTyped, FusedPathAtEveryLineLengthMatchesTheHost) {
  using T = TypeParam;
  const std::pair<std::int64_t, std::int64_t> sizes[] = {{8, 1024}, {1024, 8}, {16, 512}, {512, 16},
                                                         {32, 256}, {256, 32}, {64, 128}, {128, 64}};
  std::uint64_t seed = 700;
  for (const auto& [nx, ny] : sizes) expect_device_matches_host<T>(make_case<T>({nx, ny}, 2000, ++seed, true), seed);
}

// The fused path on 3D stacks (each z plane a 2D problem with the one plane kernel), odd and even
// N_z, rows longer and shorter than columns, with all images in one chunk and in chunks of two
// images (chunk_bytes: two 2N grids), so that 5 images take three chunks and the SENSE form adds
// the later chunks' sums into the first's; and a 2D grid in chunks.
TYPED_TEST(ToeplitzTyped, FusedPathOnStacksAndInChunksMatchesTheHost) {
  using T = TypeParam;
  const std::pair<std::vector<std::int64_t>, std::int64_t> cases[] = {
      {{16, 8, 5}, 90}, {{8, 32, 4}, 120}, {{64, 16, 3}, 200}, {{32, 16}, 0}};
  std::uint64_t seed = 1600;
  for (const auto& [grid, per_plane] : cases) {
    const auto c =
        per_plane > 0 ? make_stack_case<T>(grid, per_plane, ++seed, true) : make_case<T>(grid, 400, ++seed, true);
    const auto t = make_toeplitz<T>(c, test_context(), 1);
    EXPECT_EQ(t->stacked_axis(), per_plane > 0);
    const auto l = t->embedding_grid();  // L_z = N_z on the stacks
    const double cells = static_cast<double>(l[0] * l[1] * l[2]);
    for (double chunk_bytes : {0.0, 2 * cells * sizeof(std::complex<T>)}) {
      SCOPED_TRACE(::testing::Message() << t->name() << ", chunk_bytes " << chunk_bytes);
      expect_device_matches_host<T>(c, seed, chunk_bytes);
    }
  }
}

// Its cuFFT path (every other geometry), odd and even N in 2D and 3D, with all images in one
// chunk and in chunks of two (chunk_bytes: two grids), so that 5 images take three chunks, the
// last one partial.
TYPED_TEST(ToeplitzTyped, CufftPathInChunksMatchesTheHost) {
  using T = TypeParam;
  const std::vector<std::int64_t> grids[] = {{12, 10}, {11, 9}, {8, 7, 6}, {7, 6, 5}};
  std::uint64_t seed = 750;
  for (const auto& grid : grids) {
    const auto c = make_case<T>(grid, 400, ++seed, true);
    const double two_grids = 2.0 * (1 << grid.size()) * static_cast<double>(c.voxels) * sizeof(std::complex<T>);
    for (double chunk_bytes : {0.0, two_grids}) {
      SCOPED_TRACE(::testing::Message() << "chunk_bytes " << chunk_bytes);
      expect_device_matches_host<T>(c, seed, chunk_bytes);
    }
  }
}

// Periodic axes (L_d = N_d, integer k): the cuFFT path with a periodic last axis (3D stacks, even
// and odd N_z: no plane to zero, none pruned), a periodic y in 2D (odd N_y) and {16, 8} with y
// periodic (2N powers of two: the fused path must refuse it, core::fused_toeplitz_geometry), a
// periodic x; all images in one chunk and in chunks of two grids.
TYPED_TEST(ToeplitzTyped, PeriodicAxisMatchesTheHost) {
  using T = TypeParam;
  const std::pair<std::vector<std::int64_t>, int> cases[] = {
      {{8, 7, 6}, 2}, {{7, 6, 5}, 2}, {{11, 7}, 1}, {{16, 8}, 1}, {{9, 10}, 0}};
  std::uint64_t seed = 1550;
  for (const auto& [grid, axis] : cases) {
    const auto c = make_case<T>(grid, 400, ++seed, true, axis);
    const auto cells = make_toeplitz<T>(c, test_context(), 1)->embedding_grid();
    ASSERT_EQ(cells[axis], grid[axis]) << "periodic";
    const double two_grids = 2.0 * static_cast<double>(cells[0] * cells[1] * cells[2]) * sizeof(std::complex<T>);
    for (double chunk_bytes : {0.0, two_grids}) {
      SCOPED_TRACE(::testing::Message() << "periodic axis " << axis << ", chunk_bytes " << chunk_bytes);
      expect_device_matches_host<T>(c, seed, chunk_bytes);
    }
  }
}
#endif

TEST_F(ToeplitzTest, RefusesBadInput) {
  const auto c = make_case<float>({8, 6}, 40, 531, false);
  const Context ctx = battery_context();
  auto make = [&](std::vector<float> w, std::shared_ptr<const mri::Encoding<float>> e, std::int64_t batch = 1) {
    return [=] {
      mri::ToeplitzOptions o;
      o.eps = 1e-4;
      o.batch = batch;
      (void)mri::ToeplitzNormal<float>(e, ctx, w, o);
    };
  };
  std::vector<float> w(40, 1.f);
  auto nan = w;
  nan[3] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(throws_error(make(nan, c.encoding), ErrorCode::kNonFinite, {"weights[3]", "finite"}));
  auto inf = w;
  inf[5] = std::numeric_limits<float>::infinity();
  EXPECT_TRUE(throws_error(make(inf, c.encoding), ErrorCode::kNonFinite, {"weights[5]"}));
  auto negative = w;
  negative[7] = -0.5f;
  EXPECT_TRUE(throws_error(make(negative, c.encoding), ErrorCode::kInvalidArgument, {"weights[7]", ">= 0"}));
  EXPECT_TRUE(throws_error(make(std::vector<float>(39, 1.f), c.encoding), ErrorCode::kShapeMismatch,
                           {"weights", "39", "40"}));
  EXPECT_TRUE(throws_error(make(w, c.encoding, 0), ErrorCode::kInvalidArgument, {"batch", ">= 1"}));
  EXPECT_TRUE(throws_error(make(w, nullptr), ErrorCode::kInvalidArgument, {"null"}));
  const std::vector<float> field(48, 100.f);
  auto with_field = std::make_shared<const mri::Encoding<float>>(
      std::span<const std::int64_t>(c.grid), std::span<const float>(c.k[0]), std::span<const float>(c.k[1]),
      std::span<const float>(), std::span<const float>(), std::span<const float>(field));
  EXPECT_TRUE(throws_error(make(w, with_field), ErrorCode::kInvalidArgument, {"field map", "time segmentation"}));
  mri::NufftEncodingOptions o;
  o.toeplitz = static_cast<mri::Toeplitz>(7);
  EXPECT_TRUE(throws_error([&] { (void)mri::NufftEncoding<float>(c.encoding, ctx, o); }, ErrorCode::kInvalidArgument,
                           {"toeplitz", "kAuto"}));
}

// ---------------------------------------------------------------------------------------------
// The generic battery. ToeplitzNormal is linear, Hermitian by construction (a real kernel between
// an FFT and its inverse) and carries no state between calls, so linearity, adjointness, normal
// and repeat keep the rounding-level defaults. Host and device instances compute their kernels
// with their own NUFFT (possibly another kernel width or fine grid), each within eps of p:
// parity 2·eps.

template <class T>
bool register_toeplitz(const std::string& p) {
  const OperatorTolerances tol{.parity = 2 * toeplitz_eps<T>() + default_tolerance<T>()};
  auto reg = [&](const std::string& name, OperatorFactory<T> f) {
    register_operator_battery<T>(name + p, std::move(f), tol, __FILE__, __LINE__);
  };
  reg("ToeplitzNormal2D", [](const Context& c) { return make_toeplitz<T>(make_case<T>({12, 9}, 150, 601, false), c, 1); });
  reg("ToeplitzNormal2DWeightedBatch3",
      [](const Context& c) { return make_toeplitz<T>(make_case<T>({11, 10}, 150, 602, true), c, 3); });
  reg("ToeplitzNormal3DWeighted",
      [](const Context& c) { return make_toeplitz<T>(make_case<T>({7, 6, 5}, 300, 603, true), c, 1); });
  reg("ToeplitzNormal3DStackWeighted",  // z periodic (integer k_z): L_z = N_z
      [](const Context& c) { return make_toeplitz<T>(make_case<T>({7, 6, 5}, 300, 610, true, 2), c, 1); });
  reg("ToeplitzNormal2DPeriodicYBatch3",
      [](const Context& c) { return make_toeplitz<T>(make_case<T>({11, 7}, 150, 611, true, 1), c, 3); });
  reg("BatchOfToeplitzNormal3D", [](const Context& c) {
    return op::batch<T>(make_toeplitz<T>(make_case<T>({6, 6, 4}, 200, 604, false), c, 2), 2);
  });
  // FieldToeplitzNormal (SENSE form, weighted, 2 coils) on {16, 8}, the device's fused path, and
  // on {20, 12} and {12, 10, 8} (also as a stack along z: periodic z), its cuFFT path: Hermitian
  // only up to the difference interpolator
  // (accuracy 1e-3, measured ~2e-5 against the exact normal), hence 5·accuracy for adjointness
  // and parity (each backend within that of the exact AᴴWA).
  const double f = 5e-3;
  const OperatorTolerances ftol{.adjointness = f, .normal = default_tolerance<T>(), .parity = f};
  const auto field_toeplitz = [&](const std::string& name, std::vector<std::int64_t> grid, std::int64_t m,
                                  std::uint64_t seed, int on_grid = -1) {
    register_operator_battery<T>(name + p, [grid, m, seed, on_grid](const Context& c) -> OperatorPtr<T> {
      const auto q = make_case<T>(grid, m, seed, true, on_grid);
      std::vector<T> times(static_cast<std::size_t>(m)), field(static_cast<std::size_t>(q.voxels));
      for (std::size_t j = 0; j < times.size(); ++j) times[j] = static_cast<T>(1e-3 * static_cast<double>(j % 30) / 3);
      for (std::size_t v = 0; v < field.size(); ++v) field[v] = static_cast<T>(600 * std::sin(0.5 * static_cast<double>(v)));
      auto enc = std::make_shared<const mri::Encoding<T>>(
          std::span<const std::int64_t>(q.grid), std::span<const T>(q.k[0]), std::span<const T>(q.k[1]),
          grid.size() == 3 ? std::span<const T>(q.k[2]) : std::span<const T>(), std::span<const T>(times),
          std::span<const T>(field));
      const auto maps = random_complex<T>(q.voxels * 2, seed + 1);
      mri::FieldToeplitzOptions o;
      o.accuracy = 1e-3;
      o.eps = toeplitz_eps<T>();
      return std::make_shared<mri::FieldToeplitzNormal<T>>(enc, c, maps, 2, std::span<const T>(q.w), o);
    }, ftol, __FILE__, __LINE__);
  };
  field_toeplitz("FieldToeplitzNormalSense2D", {16, 8}, 240, 605);
  field_toeplitz("FieldToeplitzNormalSense2DNonPowerOfTwo", {20, 12}, 300, 607);
  field_toeplitz("FieldToeplitzNormalSense3D", {12, 10, 8}, 600, 609);
  field_toeplitz("FieldToeplitzNormalSense3DStack", {12, 10, 8}, 600, 612, 2);  // z periodic
  return true;
}

[[maybe_unused]] const bool registered = register_toeplitz<float>("Float") && register_toeplitz<double>("Double");

}  // namespace
}  // namespace fieldft::test
