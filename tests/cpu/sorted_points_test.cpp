// set_points' bin sort on the CPU (src/cpu/sorted_points.hpp): the sorted order is a permutation,
// every point sits in the bin of its own coordinates with its own first cell and Horner
// variable, the sort is stable (so the same for every thread count), and odd inputs (no point,
// one point, all points in one bin, points on the period's boundary, more threads than points)
// give the same. The bins are recomputed here with integer division, independently of the
// library's arithmetic.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <random>
#include <vector>

#include "cpu/sorted_points.hpp"
#include "fieldft/detail/fold.hpp"
#include "fieldft/detail/kernel.hpp"

namespace {

using fieldft::cpu::Grid;
using fieldft::cpu::sort_points;
using fieldft::cpu::SortedPoints;
namespace detail = fieldft::detail;

constexpr double kPi = std::numbers::pi;

// Coordinates per dimension, of type C.
template <class C>
using Coords = std::array<std::vector<C>, 3>;

template <class T, class C>
SortedPoints<T> sorted(const Grid& g, std::array<int, 3> bins, const Coords<C>& x, int nthreads) {
  const std::int64_t m = static_cast<std::int64_t>(x[0].size());
  const C* c[3] = {x[0].data(), g.dim > 1 ? x[1].data() : nullptr, g.dim > 2 ? x[2].data() : nullptr};
  SortedPoints<T> out;
  sort_points<T, C>(g, bins, m, c, nthreads, out);
  return out;
}

// Checks every property of the header's contract for points x sorted into p.
template <class T, class C>
void expect_valid(const Grid& g, std::array<int, 3> bins, const Coords<C>& x, const SortedPoints<T>& p) {
  const int dim = g.dim, slow = dim - 1, w = g.width;
  const std::int64_t m = static_cast<std::int64_t>(x[0].size());
  ASSERT_EQ(p.m, m);
  ASSERT_EQ(static_cast<std::int64_t>(p.perm.size()), m);
  // A permutation.
  std::vector<char> seen(static_cast<std::size_t>(m), 0);
  for (std::int64_t q = 0; q < m; ++q) {
    ASSERT_GE(p.perm[q], 0);
    ASSERT_LT(p.perm[q], m);
    ASSERT_FALSE(seen[p.perm[q]]) << "index " << p.perm[q] << " twice";
    seen[p.perm[q]] = 1;
  }
  // Slabs at least bins[slow] (>= w) thick, covering the slowest dimension.
  const std::int64_t nfs = g.nf[slow];
  const int nslab = p.num_slabs();
  ASSERT_GE(nslab, 1);
  EXPECT_EQ(p.slab_lo.front(), 0);
  EXPECT_EQ(p.slab_lo.back(), nfs);
  for (int s = 0; s < nslab; ++s) EXPECT_GE(p.slab_lo[s + 1] - p.slab_lo[s], std::min<std::int64_t>(bins[slow], nfs));
  // Bin ranges: nondecreasing, from 0 to m, slab classes at their first tile.
  const std::int64_t ntiles = p.tile_count[0] * p.tile_count[1], nkeys = 3 * nslab * ntiles;
  ASSERT_EQ(static_cast<std::int64_t>(p.bin_begin.size()), nkeys + 1);
  ASSERT_EQ(static_cast<std::int64_t>(p.class_begin.size()), 3 * nslab + 1);
  EXPECT_EQ(p.bin_begin[0], 0);
  EXPECT_EQ(p.bin_begin[nkeys], m);
  for (std::int64_t k = 0; k < nkeys; ++k) ASSERT_LE(p.bin_begin[k], p.bin_begin[k + 1]);
  for (std::int64_t c = 0; c <= 3 * nslab; ++c) EXPECT_EQ(p.class_begin[c], p.bin_begin[c * ntiles]);
  for (int d = 0; d < 2; ++d) {
    EXPECT_EQ(p.tile_size[d], d < slow ? bins[d] : 1);
    EXPECT_EQ(p.tile_count[d], d < slow ? (g.nf[d] + bins[d] - 1) / bins[d] : 1);
  }
  // Each point: its own first cell and Horner variable, in the bin of its coordinates, and
  // after every point of its bin with a smaller index (stable).
  for (std::int64_t k = 0; k < nkeys; ++k) {
    const std::int64_t slab_class = k / ntiles, tile = k % ntiles;
    const std::int64_t s = slab_class / 3, edge = slab_class % 3;
    for (std::int64_t q = p.bin_begin[k]; q < p.bin_begin[k + 1]; ++q) {
      const std::int64_t j = p.perm[q];
      if (q > p.bin_begin[k]) {
        ASSERT_LT(p.perm[q - 1], j) << "unstable in bin " << k;
      }
      std::int64_t want_tile = 0, cells[3] = {0, 0, 0};
      for (int d = dim - 1; d >= 0; --d) {
        const double u = detail::fold_rescale(static_cast<double>(x[d][j]), g.nf[d]);
        cells[d] = static_cast<std::int64_t>(u);
        const detail::KernelStart ks = detail::kernel_start(u, w);
        ASSERT_EQ(p.i0[d][q], ks.i0) << "point " << j << " dimension " << d;
        ASSERT_EQ(p.t[d][q], static_cast<T>(detail::horner_arg(ks.offset, w))) << "point " << j << " dimension " << d;
        if (d < slow) want_tile = want_tile * p.tile_count[d] + cells[d] / bins[d];
      }
      EXPECT_EQ(tile, want_tile) << "point " << j;
      // Slab of the point's cell; the class says where its footprint [i0, i0 + w) reaches.
      EXPECT_GE(cells[slow], p.slab_lo[s]) << "point " << j;
      EXPECT_LT(cells[slow], p.slab_lo[s + 1]) << "point " << j;
      const std::int64_t i0 = p.i0[slow][q];
      const std::int64_t want_edge = i0 < p.slab_lo[s] ? SortedPoints<T>::kLowEdge
                                     : i0 + w > p.slab_lo[s + 1] ? SortedPoints<T>::kHighEdge
                                                                : SortedPoints<T>::kInterior;
      EXPECT_EQ(edge, want_edge) << "point " << j;
    }
  }
}

template <class T>
void expect_same(const SortedPoints<T>& a, const SortedPoints<T>& b, int dim) {
  ASSERT_EQ(a.m, b.m);
  EXPECT_TRUE(std::equal(a.perm.begin(), a.perm.end(), b.perm.begin()));
  EXPECT_EQ(a.bin_begin, b.bin_begin);
  EXPECT_EQ(a.class_begin, b.class_begin);
  for (int d = 0; d < dim; ++d) {
    EXPECT_TRUE(std::equal(a.i0[d].begin(), a.i0[d].end(), b.i0[d].begin()));
    EXPECT_TRUE(std::equal(a.t[d].begin(), a.t[d].end(), b.t[d].begin()));
  }
}

template <class C>
Coords<C> uniform_points(int dim, std::int64_t m, double lo, double hi, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  Coords<C> x;
  for (int d = 0; d < dim; ++d) {
    x[d].resize(static_cast<std::size_t>(m));
    for (auto& v : x[d]) v = static_cast<C>(u(rng));
  }
  return x;
}

Grid grid(int dim, std::int64_t n, int w) {
  Grid g;
  g.dim = dim;
  for (int d = 0; d < dim; ++d) g.nf[d] = n + 6 * d;  // unequal sizes, not multiples of the bins
  g.width = w;
  return g;
}

// The plan's bins (cpu_plan.cpp configure) and odd ones: one tile per slab, slabs of exactly w.
std::array<int, 3> plan_bins(int dim, int w) {
  if (dim == 1) return {std::max(256, 2 * w), 1, 1};
  if (dim == 2) return {32, std::max(16, 2 * w), 1};
  return {16, 4, w};
}

template <class T, class C>
void check_all_thread_counts(const Grid& g, std::array<int, 3> bins, const Coords<C>& x) {
  const SortedPoints<T> one = sorted<T>(g, bins, x, 1);
  expect_valid(g, bins, x, one);
  // More chunks than threads, and more threads than points: the same sort (it is stable).
  for (int nt : {2, 3, 8}) expect_same(one, sorted<T>(g, bins, x, nt), g.dim);
}

template <class T>
class SortPoints : public ::testing::Test {};
using Precisions = ::testing::Types<float, double>;
TYPED_TEST_SUITE(SortPoints, Precisions);

TYPED_TEST(SortPoints, RandomPointsEveryDimension) {
  using T = TypeParam;
  for (int dim : {1, 2, 3})
    for (int w : {2, 7, 10}) {
      SCOPED_TRACE("dim " + std::to_string(dim) + " w " + std::to_string(w));
      const Grid g = grid(dim, dim == 1 ? 1000 : (dim == 2 ? 90 : 36), w);
      // 20000 points: several per-thread chunks of the counting passes (4096 points at least each).
      const auto x = uniform_points<T>(dim, 20000, -3 * kPi, 3 * kPi, 7 + dim);
      check_all_thread_counts<T>(g, plan_bins(dim, w), x);
      check_all_thread_counts<T>(g, {1000, 1000, w}, x);  // one tile per slab class, slabs w thick
    }
}

TYPED_TEST(SortPoints, OddInputs) {
  using T = TypeParam;
  for (int dim : {1, 2, 3}) {
    SCOPED_TRACE("dim " + std::to_string(dim));
    const int w = 7;
    const Grid g = grid(dim, 40, w);
    const auto bins = plan_bins(dim, w);
    check_all_thread_counts<T>(g, bins, Coords<T>{});  // M = 0
    check_all_thread_counts<T>(g, bins, uniform_points<T>(dim, 1, -kPi, kPi, 1));  // M = 1
    check_all_thread_counts<T>(g, bins, uniform_points<T>(dim, 3, -kPi, kPi, 2));  // fewer points than threads
    // All points in one bin (the same point 9000 times): one bin holds them all, in index order.
    Coords<T> same;
    for (int d = 0; d < dim; ++d) same[d].assign(9000, static_cast<T>(0.1 + d));
    check_all_thread_counts<T>(g, bins, same);
    // The period's boundary: ±π, 0, ±2π, the values next to them, and -tiny (folds to u = nf,
    // which is cell 0), in every dimension at once and mixed.
    const std::vector<double> edges{-kPi, kPi, 0.0, 2 * kPi, -2 * kPi, std::nextafter(kPi, 0.0),
                                    std::nextafter(-kPi, 0.0), std::nextafter(2 * kPi, 0.0), -1e-300, 1e-300,
                                    std::nextafter(0.0, -1.0)};
    Coords<T> boundary;
    for (int d = 0; d < dim; ++d)
      for (std::size_t i = 0; i < edges.size() * edges.size(); ++i)
        boundary[d].push_back(static_cast<T>(edges[(d == 0 ? i : i / edges.size()) % edges.size()]));
    check_all_thread_counts<T>(g, bins, boundary);
  }
}

// Type 3 sorts float plans' points given in double (core/type3.hpp).
TEST(SortPoints, DoubleCoordinatesOfAFloatPlan) {
  const Grid g = grid(3, 30, 6);
  const auto x = uniform_points<double>(3, 12000, -kPi, kPi, 11);
  check_all_thread_counts<float>(g, plan_bins(3, 6), x);
}

// Sorting new points into the same SortedPoints (its buffers reused) gives what a fresh one does.
TEST(SortPoints, ReusedForNewPoints) {
  const Grid g = grid(2, 64, 8);
  const auto bins = plan_bins(2, 8);
  const auto a = uniform_points<double>(2, 10000, -kPi, kPi, 3), b = uniform_points<double>(2, 7000, -kPi, kPi, 4);
  SortedPoints<double> p;
  const double* ca[3] = {a[0].data(), a[1].data(), nullptr};
  const double* cb[3] = {b[0].data(), b[1].data(), nullptr};
  sort_points<double, double>(g, bins, 10000, ca, 2, p);
  sort_points<double, double>(g, bins, 7000, cb, 2, p);
  expect_valid(g, bins, b, p);
  expect_same(p, sorted<double>(g, bins, b, 1), 2);
}

}  // namespace
