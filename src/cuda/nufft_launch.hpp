// Host-callable launchers of the NUFFT kernels, one instantiation per precision and dimension
// (nufft_launch_inst.cu.in), each dispatching on the kernel width.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "core/dispatch.hpp"
#include "fieldft/nufft.hpp"
#include "cuda/mode_fft.cuh"
#include "cuda/copy_modes.cuh"
#include "cuda/interp.cuh"
#include "cuda/sort.cuh"
#include "cuda/spread_nupts.cuh"
#include "cuda/spread_subproblem.cuh"
#include "cuda/spread_tile.cuh"
#include "cuda/spread_tile_boxes.cuh"
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
  // Method kPrecomputed: the kernel weights of the sorted points p (p.w ignored) into w
  // (DevPoints::w's layout, core::cuda_precomputed_bytes).
  static void store_weights(cudaStream_t s, const DevPoints<T>& p, const DevGrid& g, int width, const T* horner,
                            int degree, T* w);
  static void spread_nupts(cudaStream_t s, const DevPoints<T>& p, const DevGrid& g, int width, const T* horner,
                           int degree, const Cplx<T>* c, std::int64_t c_stride, Cplx<T>* grid, int nbatch);
  static void spread_subproblem(cudaStream_t s, const DevPoints<T>& p, const DevGrid& g, int width, const T* horner,
                                int degree, const Cplx<T>* c, std::int64_t c_stride, Cplx<T>* grid, int nbatch,
                                const Subproblems& sp, int nsub);
  // Warp tiles (Method::kOutputDriven) in the planner's variant (PlanInfo::spread_kernel).
  static void spread_tile(cudaStream_t s, const DevPoints<T>& p, const DevGrid& g, int width, const T* horner,
                          int degree, const Cplx<T>* c, std::int64_t c_stride, Cplx<T>* grid, int nbatch,
                          const Subproblems& sp, int nsub, nufft::SpreadKernel variant);
  static void interp_nupts(cudaStream_t s, const DevPoints<T>& p, const DevGrid& g, int width, const T* horner,
                           int degree, const Cplx<T>* grid, Cplx<T>* c, std::int64_t c_stride, int nbatch);
  // 3D only (the planner takes it nowhere else): kInternal for D < 3.
  static void interp_tile(cudaStream_t s, const DevPoints<T>& p, const DevGrid& g, int width, const T* horner,
                          int degree, const Cplx<T>* grid, Cplx<T>* c, std::int64_t c_stride, int nbatch,
                          const Subproblems& sp, int nsub);
};

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
