// Planning: fine-grid sizes, overflow checks, deconvolution factors and mode ordering.
#include <gtest/gtest.h>

#include <complex>
#include <cstdint>
#include <limits>
#include <numbers>
#include <vector>

#include "core/plan_setup.hpp"
#include "core/threads.hpp"
#include "core/type3.hpp"

using namespace fieldft;

TEST(PlanSetup, NextSmoothIsEvenAnd235) {
  for (std::int64_t n : {1, 2, 3, 7, 17, 97, 128, 129, 1000, 4097}) {
    const std::int64_t m = core::next_smooth(n);
    EXPECT_GE(m, n);
    EXPECT_EQ(m % 2, 0);
    std::int64_t r = m;
    for (int p : {2, 3, 5})
      while (r % p == 0) r /= p;
    EXPECT_EQ(r, 1) << m;
    for (std::int64_t k = n + (n % 2); k < m; k += 2) {  // and it is the smallest such
      std::int64_t q = k;
      for (int p : {2, 3, 5})
        while (q % p == 0) q /= p;
      EXPECT_NE(q, 1) << k;
    }
  }
}

TEST(PlanSetup, CheckedMulDetectsOverflow) {
  EXPECT_EQ(core::checked_mul(1 << 20, 1 << 20, "x"), std::int64_t(1) << 40);
  try {
    core::checked_mul(std::int64_t(1) << 40, std::int64_t(1) << 40, "number of modes");
    FAIL() << "no overflow detected";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kTooLarge);
    EXPECT_NE(std::string(e.what()).find("number of modes"), std::string::npos);
  }
}

TEST(PlanSetup, FineGridAndModeOrder) {
  const std::int64_t modes[2] = {10, 7};
  nufft::Options o;
  o.modeord = 1;
  const auto s = core::make_plan_setup(1, modes, 1, 1, 1e-6, o, 1e-7, 0x1.0p-24);
  EXPECT_EQ(s.info.fine_grid[0], core::next_smooth(20));
  EXPECT_GE(s.info.fine_grid[1], 2 * s.info.kernel_width);
  // FFT order for N = 10: 0..4, -5..-1; fine index of k is k mod nf.
  const std::int64_t nf = s.info.fine_grid[0];
  EXPECT_EQ(s.fine_index[0][0], 0);
  EXPECT_EQ(s.fine_index[0][4], 4);
  EXPECT_EQ(s.fine_index[0][5], nf - 5);
  EXPECT_EQ(s.fine_index[0][9], nf - 1);
  // Deconvolution is even in k: the factors of k and -k agree.
  EXPECT_DOUBLE_EQ(s.deconv[0][1], s.deconv[0][9]);
  // and grows towards the band edge (the kernel's transform decays).
  EXPECT_GT(s.deconv[0][5], s.deconv[0][0]);
}

// Spread/interpolate-only plans (nufft.hpp): the grid is the modes, each index maps to its cell
// as a mode k to k mod N (modeord 0: the cell at x = 0 in the middle), no deconvolution, and the
// rounding floor of a deconvolution does not apply (float at upsampfac 1.25, eps 1e-6 is refused
// as a transform just below).
TEST(PlanSetup, SpreadInterpOnlyGridIsTheModes) {
  const std::int64_t modes[2] = {64, 33};
  nufft::Options o;
  o.spread_interp_only = true;
  o.upsampfac = 1.25;
  for (int modeord : {0, 1}) {
    o.modeord = modeord;
    const auto s = core::make_plan_setup(2, modes, -1, 1, 1e-6, o, 1e-7, 0x1.0p-24);
    EXPECT_TRUE(s.info.spread_interp_only);
    EXPECT_EQ(s.info.fine_grid, (std::array<std::int64_t, 3>{64, 33, 1}));
    EXPECT_EQ(s.info.upsampfac, 1.25);
    for (int d = 0; d < 2; ++d) {
      const std::int64_t n = modes[d];
      for (std::int64_t p = 0; p < n; ++p) {
        EXPECT_EQ(s.fine_index[d][p], modeord == 0 ? (p - n / 2 + n) % n : p) << "dim " << d << ", index " << p;
        EXPECT_EQ(s.deconv[d][p], 1.0);
      }
    }
  }
}

TEST(PlanSetup, RefusesEpsBelowTheRoundingFloor) {
  // Float at upsampfac 1.25 and eps 1e-6 in 2D measured 3.2e-5 (the deconvolution amplifies
  // rounding); it must be refused, while upsampfac 2 reaches it and double reaches it at 1.25.
  const std::int64_t modes[2] = {64, 64};
  nufft::Options o;
  o.upsampfac = 1.25;
  try {
    core::make_plan_setup(1, modes, 1, 1, 1e-6, o, 1e-7, 0x1.0p-24);
    FAIL() << "float eps 1e-6 at upsampfac 1.25 accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kEpsTooSmall);
    EXPECT_NE(std::string(e.what()).find("rounding floor"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(core::make_plan_setup(1, modes, 1, 1, 1e-6, o, 1e-14, 0x1.0p-53));
  o.upsampfac = 2.0;
  EXPECT_NO_THROW(core::make_plan_setup(1, modes, 1, 1, 1e-6, o, 1e-7, 0x1.0p-24));
}

// Options::nthreads / DftOptions::nthreads: negative refused by name, 0 and large counts capped
// at max_cpu_threads() (min(4 x processors, the OpenMP thread limit)).
TEST(PlanSetup, CpuThreadsAreValidatedAndCapped) {
  const int cap = max_cpu_threads();
  EXPECT_GE(cap, 1);
  EXPECT_EQ(core::resolve_cpu_threads(1, "nthreads"), 1);
  EXPECT_EQ(core::resolve_cpu_threads(100000, "nthreads"), cap);
  EXPECT_EQ(cpu_threads_for(100000), cap);
  const int all = core::resolve_cpu_threads(0, "nthreads");
  EXPECT_GE(all, 1);
  EXPECT_LE(all, cap);
  try {
    core::resolve_cpu_threads(-3, "Dft: options.nthreads");
    FAIL() << "negative thread count accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("Dft: options.nthreads is -3"), std::string::npos) << e.what();
  }
  // The plan records what it uses.
  const std::int64_t modes[1] = {16};
  nufft::Options o;
  o.backend = Backend::kCpu;
  o.nthreads = 100000;
  EXPECT_EQ(core::make_plan_setup(1, modes, 1, 1, 1e-6, o, 1e-14, 0x1.0p-53).info.nthreads, cap);
  o.backend = Backend::kCuda;  // validated there too, but no CPU threads are used
  EXPECT_EQ(core::make_plan_setup(1, modes, 1, 1, 1e-6, o, 1e-14, 0x1.0p-53).info.nthreads, 0);
  o.nthreads = -1;
  EXPECT_THROW(core::make_plan_setup(1, modes, 1, 1, 1e-6, o, 1e-14, 0x1.0p-53), Error);
}

// The CPU stages' thread rule (core/threads.hpp): one thread per kMinWorkPerThreadNs of
// estimated work, at least one, never more than the plan's count; a tiny transform runs on one.
TEST(PlanSetup, CpuThreadsFollowTheWork) {
  const double unit = core::kMinWorkPerThreadNs;
  EXPECT_EQ(core::threads_for_work(0.0, 8), 1);
  EXPECT_EQ(core::threads_for_work(0.99 * unit, 8), 1);
  EXPECT_EQ(core::threads_for_work(2.5 * unit, 8), 2);
  EXPECT_EQ(core::threads_for_work(100 * unit, 8), 8);
  EXPECT_EQ(core::threads_for_work(100 * unit, 1), 1);
  EXPECT_EQ(core::threads_for_work(std::numeric_limits<double>::quiet_NaN(), 8), 1);
  EXPECT_EQ(core::threads_for_work(std::numeric_limits<double>::infinity(), 8), 8);
  // 10,000 points of a 2D type 1 at w = 7 on a 64² fine grid: about 0.5 ms of work.
  EXPECT_EQ(core::threads_for_work(1e4 * 49 + 4096 * 12, 2), 1);
}

// The type 3 cost model (core/type3.cpp) takes the direct sums for few points on a large grid
// and the grid for many points on a small one, and the plan's geometry follows it.
TEST(PlanSetup, Type3ChoosesDirectSumsWhereTheGridCostsMore) {
  const double sigma = 2.0;
  const int w = 7;
  // 10 sources and 10 targets over a box needing a grid of 5e8 points (1D): direct.
  auto c = core::type3_costs(1, sigma, w, 10, 10, 1, {5e8, 1, 1});
  EXPECT_LT(c.direct, 1e-6 * c.grid);
  // 1e5 sources and targets on a grid of 64 points: the grid.
  c = core::type3_costs(1, sigma, w, 100000, 100000, 1, {64, 1, 1});
  EXPECT_LT(c.grid, 1e-3 * c.direct);
  // The phases are shared by the transforms; each adds one multiply-add per pair.
  const auto c1 = core::type3_costs(3, sigma, w, 1000, 1000, 1, {40, 40, 40});
  const auto c8 = core::type3_costs(3, sigma, w, 1000, 1000, 8, {40, 40, 40});
  EXPECT_DOUBLE_EQ(c8.direct - c1.direct, 7 * 1000.0 * 1000.0);
  EXPECT_GT(c8.grid, 7 * c1.grid / 2);

  // type3_geometry: the automatic choice, the forced ones, and the phase bound.
  nufft::PlanInfo info;
  info.type = 3;
  info.dim = 1;
  info.upsampfac = sigma;
  info.eps = 1e-9;
  info.ntransf = 1;
  const core::KernelDesign kernel = core::design_kernel(info.eps, sigma, 1);
  const core::CoordinateRanges wide{{{-2000.0, 2000.0}, {0, 0}, {0, 0}}};
  const core::CoordinateRanges narrow{{{-1.0, 1.0}, {0, 0}, {0, 0}}};
  const double u = 0x1.0p-53;
  EXPECT_TRUE(core::type3_geometry(info, kernel, 10, 10, wide, wide, u, -1).direct);
  EXPECT_FALSE(core::type3_geometry(info, kernel, 10, 10, wide, wide, u, 0).direct);
  EXPECT_FALSE(core::type3_geometry(info, kernel, 100000, 100000, narrow, narrow, u, -1).direct);
  const auto forced = core::type3_geometry(info, kernel, 100000, 100000, narrow, narrow, u, 1);
  EXPECT_TRUE(forced.direct);
  EXPECT_EQ(forced.nf, (std::array<std::int64_t, 3>{1, 1, 1}));
  // Phases of 1e12 rad are resolved to ~1e-4 in double: never direct automatically (the grid
  // then refuses the extent), refused when forced.
  const core::CoordinateRanges huge{{{-1e6, 1e6}, {0, 0}, {0, 0}}};
  EXPECT_DOUBLE_EQ(core::type3_max_phase(1, huge, huge), 1e12);
  try {
    core::type3_geometry(info, kernel, 10, 10, huge, huge, u, -1);
    FAIL() << "a grid beyond 2^30 points accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kTooLarge) << e.what();
  }
  try {
    core::type3_geometry(info, kernel, 10, 10, huge, huge, u, 1);
    FAIL() << "unresolvable direct phases accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kEpsTooSmall) << e.what();
    EXPECT_NE(std::string(e.what()).find("direct"), std::string::npos) << e.what();
  }
}

// make_type3_setup's deconvolution factors (postfactor: ψ̂ of blocks of targets at once by
// kernel_fourier_at_many, their phasors by vector_sincos) against the scalar per-target rule
// (type3_target and std::polar, as the CUDA backend computes them), over tolerances, both precisions and 1-3 dimensions. Each ψ̂_d differs by at
// most (2·nodes + 8)·2^-53·ψ̂_d(0) (core kernel_design tests), so each factor relatively by at
// most the sum over d of that over |ψ̂_d(u_d)|; this is also checked to stay 100 times below eps,
// so that the faster evaluation cannot move a transform's error.
template <class T>
void check_type3_postfactor(int dim, double eps, double half_s) {
  nufft::PlanInfo info;
  info.type = 3;
  info.dim = dim;
  info.isign = -1;
  info.upsampfac = 2.0;
  info.eps = eps;
  info.ntransf = 1;
  info.nthreads = 2;
  const core::KernelDesign kernel = core::design_kernel(eps, info.upsampfac, dim);
  const std::int64_t m = 500, nk = 3000;
  std::vector<T> x(3 * m), s(3 * nk);
  std::uint64_t state = 12345;
  auto uniform = [&state]() {  // in [0, 1)
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<double>(state >> 11) * 0x1.0p-53;
  };
  for (auto& v : x) v = static_cast<T>(std::numbers::pi * (2 * uniform() - 1));
  for (auto& v : s) v = static_cast<T>(half_s * (2 * uniform() - 1) + 3.0);  // off-centre
  const T* xp[3] = {x.data(), x.data() + m, x.data() + 2 * m};
  const T* sp[3] = {s.data(), s.data() + nk, s.data() + 2 * nk};
  core::Type3Setup t;
  try {
    t = core::make_type3_setup<T>(info, kernel, m, xp, nk, sp, 0);
  } catch (const Error& e) {
    ASSERT_EQ(e.code(), ErrorCode::kEpsTooSmall) << e.what();  // below float's floor
    return;
  }
  const core::KernelQuadrature q = core::kernel_quadrature(kernel);
  const double psi0 = core::kernel_fourier_at(q, 0.0);
  double worst_excess = 0, worst = 0;
  for (std::int64_t k = 0; k < nk; ++k) {
    double sk[3] = {0, 0, 0}, si[3], u[3] = {0, 0, 0}, psi = 1;
    for (int d = 0; d < dim; ++d) sk[d] = static_cast<double>(sp[d][k]);
    const double phase = core::type3_target(t, q, sk, si, psi);
    core::type3_target_frequencies(t, sk, si, u);
    double bound = 0;
    for (int d = 0; d < dim; ++d)
      bound += (2.0 * q.nodes + 8) * 0x1.0p-53 * psi0 / std::abs(core::kernel_fourier_at(q, u[d]));
    const std::complex<double> expected = std::polar(1.0, info.isign * phase) / psi;
    const double rel = std::abs(t.postfactor[k] - expected) / std::abs(expected);
    worst = std::max(worst, rel);
    // + the phasor's (vector_sincos: 4e-16 a part) and the quotient's own rounding
    worst_excess = std::max(worst_excess, rel / (bound + 1e-15));
  }
  EXPECT_LE(worst_excess, 1.0) << "dim=" << dim << " eps=" << eps << " S=" << half_s;
  EXPECT_LE(worst, eps / 100) << "dim=" << dim << " eps=" << eps << " S=" << half_s;
}

TEST(PlanSetup, Type3DeconvolutionFactorsMatchTheScalarRule) {
  for (int dim = 1; dim <= 3; ++dim)
    for (double eps : {1e-2, 1e-4, 1e-6, 1e-9, 1e-12}) {
      const double half_s = dim == 1 ? 2000.0 : dim == 2 ? 60.0 : 12.0;
      check_type3_postfactor<float>(dim, eps, half_s);
      check_type3_postfactor<double>(dim, eps, half_s);
    }
  check_type3_postfactor<double>(1, 1e-9, 1e6);  // a grid of ~4e6 points: its largest frequencies
}
