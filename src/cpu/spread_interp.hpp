// Spreading (non-uniform -> fine grid) and interpolation (fine grid -> non-uniform) on the CPU.
#pragma once

#include <complex>
#include <cstdint>

#include "cpu/sorted_points.hpp"

namespace fieldft::cpu {

// SIMD-friendly lane counts for kernel width w: the y/z kernels use yz_lanes<T>(w) values, the x
// kernel is stored interleaved (each weight twice, for re and im) in x_lanes<T>(w) values; both
// whole 32-byte vectors of T (AVX2: 8 floats or 4 doubles), so that no vector of a row is padding
// alone (w = 10 in double: 20 values in 5 vectors, not 24 in 6).
template <class T>
constexpr int simd_lanes() { return static_cast<int>(32 / sizeof(T)); }
template <class T>
constexpr int yz_lanes(int w) { return (w + simd_lanes<T>() - 1) / simd_lanes<T>() * simd_lanes<T>(); }
template <class T>
constexpr int x_lanes(int w) { return (2 * w + simd_lanes<T>() - 1) / simd_lanes<T>() * simd_lanes<T>(); }

template <class T>
struct SpreadArgs {
  const Grid* grid;
  const SortedPoints<T>* pts;
  const T* horner_x;       // x kernel table (fieldft/detail/kernel.hpp layout), columns doubled, stride x_lanes
  const T* horner_yz;      // y and z kernel table, stride yz_lanes
  std::int64_t nbatch;     // transforms processed together
  std::int64_t c_stride;   // distance between transforms in the point arrays (M)
  int nthreads;
  std::complex<T>* halo = nullptr;  // spreading in 2D and 3D: spread_halo_cells(...) values of workspace
  // Method kPrecomputed: the points' kernel weights (precompute_weights below), read instead of
  // evaluating the Horner tables; nullptr: evaluated per point as they are needed.
  const T* weights = nullptr;
};

// Precomputed kernel weights (Method::kPrecomputed). Stored separably: per sorted point j and
// dimension d the yz_lanes<T>(w) values ψ(i0_d + i − u_d) (zero past w) at
// weights[(j·dim + d)·yz_lanes<T>(w)], not the w^dim products of the footprint: dim·w values
// instead of w^dim (3D, w = 7: 21 instead of 343, so 2M points take 0.2 GB instead of 2.7 GB in
// float), and the loops already form each footprint row's product with one multiply, so stored
// products would save that multiply while reading ~16x more memory per point. The x weights are
// doubled (re, im) when loaded, which keeps the store at half the size of the doubled table.
// Values are those load_point computes (same table, same Horner order in T), so results agree
// with the on-the-fly path to rounding. Sorted point order keeps spreading race-free exactly as today
// (the slab and tile ranges of SortedPoints index the weights too).
template <class T>
std::int64_t precomputed_weight_values(const Grid& g, std::int64_t m) {
  return m * g.dim * yz_lanes<T>(g.width);
}
template <class T, int D>
void precompute_weights(const Grid& g, const SortedPoints<T>& p, const T* horner_yz, int nthreads, T* weights);

// Workspace of spread for nbatch transforms: in 2D and 3D every slab's halo, the w + 2 planes of
// the slowest dimension around it that its points reach (added into the grid after all slabs).
template <class T>
std::int64_t spread_halo_cells(const Grid& g, const SortedPoints<T>& p, std::int64_t nbatch) {
  if (g.dim < 2) return 0;
  return nbatch * p.num_slabs() * (g.width + 2) * (g.size() / g.nf[g.dim - 1]);
}

// Strengths c and results are in the plan's sorted point order (the caller gathers and scatters
// with the permutation), so these loops stream through them.
// grid[t] (nbatch fine grids, each grid->size() values) = Σ_j c[t][j] ψ(l − u_j). Overwrites grid.
// Race-free without atomics: each thread owns whole slabs of the slowest dimension and writes
// only there (1D) or there and in the slab's own halo buffer, which a second pass adds in (2D, 3D).
template <class T, int D>
void spread(const SpreadArgs<T>& a, const std::complex<T>* c, std::complex<T>* grid);

// c[t][j] = Σ_l grid[t][l] ψ(l − u_j).
template <class T, int D>
void interp(const SpreadArgs<T>& a, const std::complex<T>* grid, std::complex<T>* c);

}  // namespace fieldft::cpu
