// Points after set_points on the CPU: folded, split into first cell + Horner variable, and
// bin-sorted. Sorting serves two purposes: neighbouring points touch neighbouring grid cells
// (cache reuse), and the points of one slab — a range of planes of the slowest dimension — are
// contiguous, which is what lets the spreader give each thread whole slabs and write without races.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "cpu/big_vector.hpp"

namespace fieldft::cpu {

struct Grid {
  int dim = 1;
  std::array<std::int64_t, 3> nf{1, 1, 1};
  int width = 2;
  int degree = 0;
  std::int64_t size() const { return nf[0] * nf[1] * nf[2]; }
};

template <class T>
struct SortedPoints {
  std::int64_t m = 0;
  BigVector<std::int64_t> perm;              // sorted position -> caller's index
  std::array<BigVector<std::int32_t>, 3> i0;  // first cell per dimension, in [-w/2, nf)
  std::array<BigVector<T>, 3> t;               // Horner variable per dimension, in [-1, 1)
  // Slabs of the slowest dimension: planes [slab_lo[s], slab_lo[s+1]). The points of slab s are
  // sorted into three classes by where their footprint reaches: kLowEdge (also below the slab),
  // kInterior, kHighEdge (also above it). Class c of slab s is the sorted range
  // [class_begin[3s + c], class_begin[3s + c + 1]); a neighbouring slab scans only an edge class.
  static constexpr int kLowEdge = 0, kInterior = 1, kHighEdge = 2;
  std::vector<std::int64_t> slab_lo, class_begin;
  int num_slabs() const { return static_cast<int>(slab_lo.size()) - 1; }
  // Tiles: within a class the points are sorted by bin of the dimensions below the slowest, bins
  // tile_size[0] cells in x and (3D) tile_size[1] in y, tile_count of them (1 where the dimension
  // is the slowest or absent). The points of class c of slab s in tile (by, bx) are the sorted
  // range [bin_begin[k], bin_begin[k + 1]), k = bin_key(3s + c, by, bx).
  std::array<std::int64_t, 2> tile_size{1, 1}, tile_count{1, 1};
  std::vector<std::int64_t> bin_begin;
  // Workspace of sort_points for coordinates given in double to a float plan (type 3), kept for
  // the next set_points; other coordinates are sorted in the storage of t.
  std::array<BigVector<double>, 3> ws_coord_double;
  std::int64_t bin_key(std::int64_t slab_class, std::int64_t by, std::int64_t bx) const {
    return (slab_class * tile_count[1] + by) * tile_count[0] + bx;
  }
};

// Folds, rescales and sorts. bins: bin sizes in cells for x, y (the dimensions below the slowest)
// and the slab thickness for the slowest dimension (>= w, so a footprint leaves its slab on one side at most).
// Coordinates of type C: the plan's T, or double for the points type 3 computes (core/type3.hpp),
// which would lose accuracy if rounded to float before the fold.
template <class T, class C = T>
void sort_points(const Grid& g, std::array<int, 3> bins, std::int64_t m, const C* const* coords,
                 int nthreads, SortedPoints<T>& out);

}  // namespace fieldft::cpu
