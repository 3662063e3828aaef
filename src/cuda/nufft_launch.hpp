// Host-callable launchers of the NUFFT kernels, one instantiation per precision and dimension
// (nufft_launch_inst.cu.in), each dispatching on the kernel width.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "core/dispatch.hpp"
#include "cuda/mode_fft.cuh"
#include "cuda/nufft_kernels.cuh"
#include "cuda/spread_tc.cuh"

namespace fieldft::cuda {

template <class T, int D>
struct Launch {
  static void count_bins(cudaStream_t s, std::int64_t m, const T* const* x, const DevGrid& g, int* bin_count,
                         int* rank, int* bin_of);
  // The sorted points (first cells, Horner variables) and the permutation, from the points'
  // sort keys (bin_of), ranks within a key and the keys' scanned starts.
  static void write_sorted(cudaStream_t s, std::int64_t m, const T* const* x, const DevGrid& g, int width,
                           const std::int64_t* bin_start, const int* rank, const int* bin_of,
                           std::int32_t* const* i0, T* const* t, std::int64_t* perm);
  static void spread_nupts(cudaStream_t s, const DevPoints<T>& p, const DevGrid& g, int width, const T* horner,
                           int degree, const Cplx<T>* c, std::int64_t c_stride, Cplx<T>* grid, int nbatch);
  static void spread_subproblem(cudaStream_t s, const DevPoints<T>& p, const DevGrid& g, int width, const T* horner,
                                int degree, const Cplx<T>* c, std::int64_t c_stride, Cplx<T>* grid, int nbatch,
                                const Subproblems& sp, int nsub);
  static void spread_tile(cudaStream_t s, const DevPoints<T>& p, const DevGrid& g, int width, const T* horner,
                          int degree, const Cplx<T>* c, std::int64_t c_stride, Cplx<T>* grid, int nbatch,
                          const Subproblems& sp, int nsub);
  static void interp_nupts(cudaStream_t s, const DevPoints<T>& p, const DevGrid& g, int width, const T* horner,
                           int degree, const Cplx<T>* grid, Cplx<T>* c, std::int64_t c_stride, int nbatch);
  static void interp_tile(cudaStream_t s, const DevPoints<T>& p, const DevGrid& g, int width, const T* horner,
                          int degree, const Cplx<T>* grid, Cplx<T>* c, std::int64_t c_stride, int nbatch,
                          const Subproblems& sp, int nsub);
};

// Shared memory of one subproblem tile (bytes).
template <class T>
std::size_t subproblem_tile_bytes(int dim, const int* bin, int width) {
  std::size_t n = 1;
  for (int d = 0; d < dim; ++d) n *= static_cast<std::size_t>(tile_len(bin[d], width));
  return n * 2 * sizeof(T);
}

// Shared memory of one interp_tile tile (bytes): rows one cell longer, planes one row more.
template <class T>
std::size_t interp_tile_bytes(int dim, const int* bin, int width) {
  std::size_t n = 1;
  for (int d = 0; d < dim; ++d) n *= static_cast<std::size_t>(tile_len(bin[d], width) + (d < 2 ? 1 : 0));
  return n * 2 * sizeof(T);
}

// Shared memory of one warp tile (bytes): the larger of spread_tile's and spread_tile_boxes'.
template <class T>
std::size_t warp_tile_bytes(int dim, const int* bin, int width) {
  std::size_t n = 0;
  core::dispatch_width(width, [&]<int W>() {
    constexpr bool kPacked = packed_rows<3, W, kTileWarps>();
    n = std::max({spread_tile_bytes<T, W, false>(dim, bin), spread_tile_bytes<T, W, kPacked>(dim, bin),
                  spread_tile_bytes<T, W, kPacked, true>(dim, bin)});
  });
  return n;
}

template <class T>
void launch_find_non_finite(cudaStream_t s, std::int64_t m, const T* x, unsigned long long* bad);
// The last axis's FFT fused with the copy to the modes (cuda/mode_fft.cuh) over nb batches, C
// columns per block (8, 16 or 32), `threads` per block.
template <class T>
void launch_mode_fft_pass(cudaStream_t s, const ModeFftPass<T>& fp, int C, int threads, const std::int64_t* fine_index,
                          const T* deconv, const Cplx<T>* in, std::int64_t in_batch, Cplx<T>* out,
                          std::int64_t out_batch, int nb);
template <class T>
void launch_copy_modes(cudaStream_t s, const ModeMap& mm, const T* const* deconv, const DevGrid& g, Cplx<T>* fine,
                       Cplx<T>* f, int nbatch, bool to_modes);

}  // namespace fieldft::cuda
