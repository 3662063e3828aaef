// The Toeplitz normal operator's cost model (src/core/toeplitz.hpp): the pruned FFT work and the
// choice of Toeplitz::kAuto.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <complex>

#include "core/toeplitz.hpp"
#include "fieldft/error.hpp"

namespace fieldft::core {
namespace {

ToeplitzGeometry square(int dim, std::int64_t n, std::int64_t batch = 1) {
  ToeplitzGeometry g;
  g.dim = dim;
  for (int d = 0; d < dim; ++d) g.n[d] = n;
  g.batch = batch;
  return g;
}

// A full FFT of the 2N grid: dim passes of (2n)^dim · log2(2n) units each.
double full_units(int dim, std::int64_t n) {
  const double l = 2.0 * static_cast<double>(n);
  return dim * std::pow(l, dim) * std::log2(l);
}

TEST(ToeplitzCost, PrunedPassesSaveAQuarterIn2DAndFiveTwelfthsIn3D) {
  EXPECT_DOUBLE_EQ(toeplitz_fft_units(square(2, 64)) / full_units(2, 64), 0.75);
  EXPECT_DOUBLE_EQ(toeplitz_fft_units(square(3, 32)) / full_units(3, 32), 7.0 / 12.0);
}

// A periodic axis (integer k: L = N) halves its cells and prunes nothing along it: a 3D stack
// with z periodic has 2N·2N·N cells; its FFT units are the x pass over N·N lines, the y pass
// over 2N·N, both of 2N points, and the N-point z pass over 2N·2N lines: 2/3 of the non-periodic
// pruned work at N = 32 (the z pass was already pruned in x and y). The fused CUDA path refuses a
// periodic x or y.
TEST(ToeplitzCost, PeriodicAxisTakesNCells) {
  ToeplitzGeometry g = square(3, 32);
  g.periodic = {false, false, true};
  EXPECT_EQ(g.padded(), (std::array<std::int64_t, 3>{64, 64, 32}));
  EXPECT_EQ(g.padded_cells(), 64 * 64 * 32);
  EXPECT_TRUE(g.any_periodic());
  const double units = 32.0 * 32 * 64 * 6 + 64.0 * 32 * 64 * 6 + 64.0 * 64 * 32 * 5;  // x, y, z passes
  EXPECT_DOUBLE_EQ(toeplitz_fft_units(g), units);
  EXPECT_DOUBLE_EQ(toeplitz_fft_units(g) / toeplitz_fft_units(square(3, 32)), 2.0 / 3.0);
  EXPECT_EQ(toeplitz_grid_string(g), "64x64x32 (z periodic)");
  EXPECT_EQ(toeplitz_grid_string(square(2, 8)), "16x16");
  ToeplitzGeometry f = square(2, 64);
  EXPECT_TRUE(fused_toeplitz_geometry(f));
  f.periodic[1] = true;
  EXPECT_FALSE(fused_toeplitz_geometry(f));
}

// The fused CUDA path takes 2D grids and 3D stacks (z stacked: each plane a 2D problem) whose
// 2N_x and 2N_y are powers of two in [16, 2048]; a periodic but unstacked z, a periodic x or y,
// 3D without a stack, and other in-plane sizes take the cuFFT path.
TEST(ToeplitzCost, FusedPathTakes2DAndStacksOfPowerOfTwoPlanes) {
  EXPECT_TRUE(fused_toeplitz_geometry(square(2, 8)));
  EXPECT_TRUE(fused_toeplitz_geometry(square(2, 1024)));
  EXPECT_FALSE(fused_toeplitz_geometry(square(2, 4)));
  EXPECT_FALSE(fused_toeplitz_geometry(square(2, 2048)));
  EXPECT_FALSE(fused_toeplitz_geometry(square(2, 12)));
  ToeplitzGeometry g = square(3, 128);
  g.n[2] = 37;  // any number of planes
  EXPECT_FALSE(fused_toeplitz_geometry(g));
  g.periodic[2] = true;
  EXPECT_FALSE(fused_toeplitz_geometry(g)) << "periodic z, not stacked: its FFT along z is needed";
  g.stacked = true;
  EXPECT_TRUE(fused_toeplitz_geometry(g));
  g.n[1] = 12;
  EXPECT_FALSE(fused_toeplitz_geometry(g));
  g.n[1] = 128;
  g.periodic[0] = true;
  EXPECT_FALSE(fused_toeplitz_geometry(g));
  ToeplitzGeometry lines = square(2, 64);  // a 2D stack along y: 1D planes
  lines.periodic[1] = true;
  lines.stacked = true;
  EXPECT_FALSE(fused_toeplitz_geometry(lines));
}

// The CUDA cuFFT path's chunks: R3's 3D 128³ float grids (134 MB each) four at a time, its C·K
// images split evenly (80 → 20 chunks of 4; 9 at most 4 → 3 of 3), small grids all at once, a
// grid above the budget alone, and an explicit budget in bytes.
TEST(ToeplitzCost, ChunksFitTheBudgetEvenly) {
  const std::size_t cf = sizeof(std::complex<float>), cd = sizeof(std::complex<double>);
  EXPECT_EQ(toeplitz_chunk(square(3, 128, 80), cf), 4);
  EXPECT_EQ(toeplitz_chunk(square(3, 128, 80), cd), 2);
  EXPECT_EQ(toeplitz_chunk(square(3, 128, 9), cf), 3);
  EXPECT_EQ(toeplitz_chunk(square(3, 128, 1), cf), 1);
  EXPECT_EQ(toeplitz_chunk(square(2, 20, 60), cf), 60);
  EXPECT_EQ(toeplitz_chunk(square(3, 512, 3), cf), 1);
  auto g = square(2, 10, 7);
  g.chunk_bytes = 2.0 * 400 * cf;  // two grids of 20²
  EXPECT_EQ(toeplitz_chunk(g, cf), 2);  // 7 in 4 chunks of 2, the last with 1
  EXPECT_NO_THROW(check_chunk_bytes(0, "test"));
  EXPECT_THROW(check_chunk_bytes(-1, "test"), Error);
  EXPECT_THROW(check_chunk_bytes(std::nan(""), "test"), Error);
}

TEST(ToeplitzCost, AtUpsamplingTwoToeplitzWinsForAnyM) {
  const auto g = square(2, 256, 8);
  const NufftShape sigma2{{512, 512, 1}, 7};
  for (std::int64_t m : {0, 1000, 100000}) {
    const auto c = choose_toeplitz(g, sigma2, sigma2, m, sizeof(std::complex<float>));
    EXPECT_TRUE(c.toeplitz) << c.reason;
    EXPECT_LT(c.toeplitz_units, c.nufft_units);
    EXPECT_NE(c.reason.find("Toeplitz"), std::string::npos);
  }
}

TEST(ToeplitzCost, SmallFineGridAndFewSamplesKeepTheNufft) {
  const auto g = square(3, 64);
  const NufftShape sigma125{{80, 80, 80}, 4};
  const auto few = choose_toeplitz(g, sigma125, sigma125, 1000, sizeof(std::complex<float>));
  EXPECT_FALSE(few.toeplitz) << few.reason;
  const auto many = choose_toeplitz(g, sigma125, sigma125, 10'000'000, sizeof(std::complex<float>));
  EXPECT_TRUE(many.toeplitz) << many.reason;
}

TEST(ToeplitzCost, TooLargeAGridKeepsTheNufft) {
  const auto g = square(3, 256, 32);  // 8 · 256³ · 32 complex floats: 32 GiB
  const NufftShape sigma2{{512, 512, 512}, 7};
  const auto c = choose_toeplitz(g, sigma2, sigma2, 1'000'000, sizeof(std::complex<float>));
  EXPECT_FALSE(c.toeplitz);
  EXPECT_NE(c.reason.find("GiB"), std::string::npos) << c.reason;
}

}  // namespace
}  // namespace fieldft::core
