// Planning: fine-grid sizes, overflow checks, deconvolution factors and mode ordering.
#include <gtest/gtest.h>

#include "core/plan_setup.hpp"

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
