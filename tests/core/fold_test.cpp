// Fold and rescale of coordinates and the kernel's first cell.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include "fieldft/detail/fold.hpp"

using namespace fieldft::detail;

TEST(Fold, MapsPeriodicallyIntoTheGrid) {
  const std::int64_t nf = 64;
  const double pi = std::numbers::pi;
  EXPECT_DOUBLE_EQ(fold_rescale(0.0, nf), 0.0);
  EXPECT_NEAR(fold_rescale(-pi, nf), 32.0, 1e-12);  // x = -π is cell nf/2
  EXPECT_NEAR(fold_rescale(pi / 2, nf), 16.0, 1e-12);
  for (double x : {0.3, -2.9, 3.14159, 1e3, -1e4 + 0.1, 123456.789}) {
    const double u = fold_rescale(x, nf);
    EXPECT_GE(u, 0.0);
    EXPECT_LT(u, static_cast<double>(nf));
    // Same point one and ten periods away lands on the same cell (to rounding of x itself).
    EXPECT_NEAR(fold_rescale(x + 2 * pi, nf), u, 1e-9 * (1 + std::abs(x)) * nf);
    EXPECT_NEAR(fold_rescale(x - 20 * pi, nf), u, 1e-9 * (1 + std::abs(x)) * nf);
  }
  // Just below 2π must not round up to nf.
  EXPECT_LT(fold_rescale(std::nextafter(2 * pi, 0.0), nf), static_cast<double>(nf));
}

TEST(Fold, KernelStartCoversTheSupport) {
  for (int w : {2, 3, 7, 16})
    for (double u : {0.0, 0.5, 3.999, 10.25, 63.9}) {
      const KernelStart ks = kernel_start(u, w);
      EXPECT_GE(ks.offset, -0.5 * w - 1e-12);
      EXPECT_LT(ks.offset, -0.5 * w + 1.0);
      EXPECT_NEAR(static_cast<double>(ks.i0) - u, ks.offset, 1e-12);
    }
  EXPECT_EQ(wrap_index(-3, 64), 61);
  EXPECT_EQ(wrap_index(64, 64), 0);
  EXPECT_EQ(wrap_index(5, 64), 5);
}

// The fold limit of set_points (nufft.hpp): 2π·2^(digits(T) − 7); at it, adjacent values of T
// are 2π/64 apart or less, beyond it more.
TEST(Fold, LimitWhereTheTypeStillPlacesAPointInItsPeriod) {
  const double lf = max_fold_coordinate<float>(), ld = max_fold_coordinate<double>();
  EXPECT_NEAR(lf, 8.235e5, 1e2);
  EXPECT_NEAR(ld, 4.4214e14, 1e10);
  const double pi = std::numbers::pi;
  const float below_f = std::nextafter(static_cast<float>(lf), 0.0f);
  EXPECT_LE(std::nextafter(below_f, 1e30f) - below_f, 2 * pi / 64 + 1e-12);
  EXPECT_GT(std::nextafter(2 * static_cast<float>(lf), 1e30f) - 2 * static_cast<float>(lf), 2 * pi / 64);
  EXPECT_LE(std::nextafter(std::nextafter(ld, 0.0), 1e300) - std::nextafter(ld, 0.0), 2 * pi / 64 + 1e-12);
  EXPECT_TRUE(within_fold_limit(ld, ld));
  EXPECT_TRUE(within_fold_limit(-ld, ld));
  EXPECT_FALSE(within_fold_limit(std::nextafter(ld, 1e300), ld));
  EXPECT_FALSE(within_fold_limit(-1e300, ld));
  EXPECT_FALSE(within_fold_limit(std::nan(""), ld));  // callers check finiteness first
}
