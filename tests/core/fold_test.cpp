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
