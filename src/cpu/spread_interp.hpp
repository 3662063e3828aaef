// Spreading (non-uniform -> fine grid) and interpolation (fine grid -> non-uniform) on the CPU.
#pragma once

#include <complex>
#include <cstdint>

#include "cpu/sorted_points.hpp"

namespace fieldft::cpu {

template <class T>
struct SpreadArgs {
  const Grid* grid;
  const SortedPoints<T>* pts;
  const T* horner;         // kernel table, layout of fieldft/detail/kernel.hpp, stride = width
  std::int64_t nbatch;     // transforms processed together
  std::int64_t c_stride;   // distance between transforms in the point arrays (M)
  int nthreads;
};

// grid[t] (nbatch fine grids, each grid->size() values) = Σ_j c[t][j] ψ(l − u_j). Overwrites grid.
// Race-free: each thread owns whole slabs of the slowest dimension and writes only there.
template <class T, int D>
void spread(const SpreadArgs<T>& a, const std::complex<T>* c, std::complex<T>* grid);

// c[t][j] = Σ_l grid[t][l] ψ(l − u_j).
template <class T, int D>
void interp(const SpreadArgs<T>& a, const std::complex<T>* grid, std::complex<T>* c);

}  // namespace fieldft::cpu
