// Definitions of the launchers; included by the generated per-(precision, dimension) units.
#pragma once

#include <algorithm>
#include <string>

#include "core/dispatch.hpp"
#include "cuda/cuda_check.cuh"
#include "cuda/nufft_launch.hpp"
#include "fieldft/error.hpp"

namespace fieldft::cuda {

constexpr int kThreads = 256;

// Blocks of a grid-stride loop over n items (capped: the loop covers the rest).
inline unsigned grid_for(std::int64_t n, int threads = kThreads) {
  return static_cast<unsigned>(std::max<std::int64_t>(1, std::min<std::int64_t>((n + threads - 1) / threads, 1 << 20)));
}

// Blocks of a kernel with one unit of `per_block` items per block and no grid-stride loop: all
// of them (the x dimension takes up to 2^31 − 1 blocks).
inline unsigned blocks_for(std::int64_t n, int per_block) {
  const std::int64_t b = std::max<std::int64_t>(1, (n + per_block - 1) / per_block);
  require(b < (std::int64_t{1} << 31), ErrorCode::kInvalidArgument,
          std::to_string(n) + " points need more than 2^31 - 1 thread blocks");
  return static_cast<unsigned>(b);
}


template <class T, int D>
void Launch<T, D>::count_bins(cudaStream_t s, std::int64_t m, const T* const* x, const DevGrid& g, int* bin_count,
                              int* rank, int* bin_of) {
  fieldft::cuda::count_bins<T, D><<<grid_for(m), kThreads, 0, s>>>(m, x[0], x[1], x[2], g, bin_count, rank, bin_of);
  FIELDFT_CUDA_CHECK_LAUNCH();
}

template <class T, int D>
void Launch<T, D>::write_sorted(cudaStream_t s, std::int64_t m, const T* const* x, const DevGrid& g, int width,
                                const std::int64_t* bin_start, const int* rank, const int* bin_of,
                                std::int32_t* const* i0, T* const* t, std::int64_t* perm) {
  fieldft::cuda::scatter_perm<std::int64_t><<<grid_for(m), kThreads, 0, s>>>(m, bin_start, rank, bin_of, perm);
  FIELDFT_CUDA_CHECK_LAUNCH();
  fieldft::cuda::gather_sorted<T, D><<<grid_for(m), kThreads, 0, s>>>(m, x[0], x[1], x[2], g, width, perm, i0[0],
                                                                      i0[1], i0[2], t[0], t[1], t[2]);
  FIELDFT_CUDA_CHECK_LAUNCH();
}

template <class T, int D>
void Launch<T, D>::store_weights(cudaStream_t s, const DevPoints<T>& p, const DevGrid& g, int width, const T* horner,
                                 int degree, T* w) {
  if (p.m == 0) return;
  core::dispatch_width(width, [&]<int W>() {
    fieldft::cuda::store_point_weights<T, D, W><<<blocks_for(p.m, 128), 128, 0, s>>>(p, g, horner, degree, w);
  });
  FIELDFT_CUDA_CHECK_LAUNCH();
}

template <class T, int D>
void Launch<T, D>::spread_nupts(cudaStream_t s, const DevPoints<T>& p, const DevGrid& g, int width, const T* horner,
                                int degree, const Cplx<T>* c, std::int64_t c_stride, Cplx<T>* grid, int nbatch) {
  if (p.m == 0) return;
  // Two instances per width: weights stored at set_points (Method kPrecomputed, p.w) or evaluated.
  core::dispatch_width(width, [&]<int W>() {
    auto kernel =
        p.w != nullptr ? fieldft::cuda::spread_nupts<T, D, W, true> : fieldft::cuda::spread_nupts<T, D, W, false>;
    kernel<<<blocks_for(p.m, 128), 128, 0, s>>>(p, g, horner, degree, c, c_stride, grid, nbatch);
  });
  FIELDFT_CUDA_CHECK_LAUNCH();
}

template <class T, int D>
void Launch<T, D>::spread_subproblem(cudaStream_t s, const DevPoints<T>& p, const DevGrid& g, int width,
                                     const T* horner, int degree, const Cplx<T>* c, std::int64_t c_stride,
                                     Cplx<T>* grid, int nbatch, const Subproblems& sp, int nsub) {
  if (nsub == 0) return;
  const std::size_t smem = subproblem_tile_bytes<T>(D, g.bin, width);
  core::dispatch_width(width, [&]<int W>() {
    auto kernel = fieldft::cuda::spread_subproblem<T, D, W>;
    FIELDFT_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
    kernel<<<nsub, kThreads, smem, s>>>(p, g, horner, degree, c, c_stride, grid, nbatch, sp);
  });
  FIELDFT_CUDA_CHECK_LAUNCH();
}

template <class T, int D>
void Launch<T, D>::spread_tile(cudaStream_t s, const DevPoints<T>& p, const DevGrid& g, int width, const T* horner,
                               int degree, const Cplx<T>* c, std::int64_t c_stride, Cplx<T>* grid, int nbatch,
                               const Subproblems& sp, int nsub, nufft::SpreadKernel variant) {
  using nufft::SpreadKernel;
  if (nsub == 0) return;
  core::dispatch_width(width, [&]<int W>() {
    if (variant == SpreadKernel::kTensorCore || variant == SpreadKernel::kTensorCoreBulk) {
      if constexpr (std::is_same_v<T, float> && D == 3 && tc_width_fits<W>()) {
        const auto kernel = variant == SpreadKernel::kTensorCoreBulk ? spread_tc<W, true> : spread_tc<W, false>;
        kernel<<<nsub, 32 * kTcWarps, 0, s>>>(p, g, horner, degree, c, c_stride, grid, nbatch, sp);
        return;
      }
      throw Error(ErrorCode::kInternal, "tensor-core tiles planned outside float 3D W <= 8");
    }
    constexpr int K = D == 3 ? kTileWarps : 1;
    constexpr bool kPacked = packed_rows<D, W, K>();
    std::size_t smem = spread_tile_bytes<T, W, kPacked>(D, g.bin);
    auto kernel = fieldft::cuda::spread_tile<T, D, W, 0, 0, K>;
    int threads = 32 * K;
    if (variant != SpreadKernel::kTile) {
      bool instantiated = false;
      if constexpr (D == 3 && W <= 8) {
        constexpr int BX = kTileBins[0], BY = kTileBins[1];
        instantiated = true;
        if (variant == SpreadKernel::kTileFixed) kernel = fieldft::cuda::spread_tile<T, D, W, BX, BY, K>;
        if (variant == SpreadKernel::kTileFixedBulk) {
          kernel = fieldft::cuda::spread_tile<T, D, W, BX, BY, K, true>;
          smem = spread_tile_bytes<T, W, kPacked, true>(D, g.bin);
        }
        if (variant == SpreadKernel::kTileBoxes || variant == SpreadKernel::kTileBoxesFixed) {
          if constexpr (W <= 7) {
            kernel = variant == SpreadKernel::kTileBoxesFixed ? fieldft::cuda::spread_tile_boxes<T, W, BX, BY>
                                                              : fieldft::cuda::spread_tile_boxes<T, W>;
            threads = 32;
            smem = spread_tile_bytes<T, W, false>(D, g.bin);
          } else {
            instantiated = false;
          }
        }
      }
      require(instantiated, ErrorCode::kInternal,
              std::string("spreading variant ") + nufft::spread_kernel_name(variant) + " planned where it has no instance");
    }
    FIELDFT_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
    kernel<<<nsub, threads, smem, s>>>(p, g, horner, degree, c, c_stride, grid, nbatch, sp);
  });
  FIELDFT_CUDA_CHECK_LAUNCH();
}

template <class T, int D>
void Launch<T, D>::interp_nupts(cudaStream_t s, const DevPoints<T>& p, const DevGrid& g, int width, const T* horner,
                                int degree, const Cplx<T>* grid, Cplx<T>* c, std::int64_t c_stride, int nbatch) {
  if (p.m == 0) return;
  core::dispatch_width(width, [&]<int W>() {
    auto kernel =
        p.w != nullptr ? fieldft::cuda::interp_nupts<T, D, W, true> : fieldft::cuda::interp_nupts<T, D, W, false>;
    kernel<<<blocks_for(p.m, 128), 128, 0, s>>>(p, g, horner, degree, grid, c, c_stride, nbatch);
  });
  FIELDFT_CUDA_CHECK_LAUNCH();
}

template <class T, int D>
void Launch<T, D>::interp_tile(cudaStream_t s, const DevPoints<T>& p, const DevGrid& g, int width, const T* horner,
                               int degree, const Cplx<T>* grid, Cplx<T>* c, std::int64_t c_stride, int nbatch,
                               const Subproblems& sp, int nsub) {
  if (nsub == 0) return;
  if constexpr (D == 3) {
    const std::size_t smem = interp_tile_bytes<T>(D, g.bin, width);
    core::dispatch_width(width, [&]<int W>() {
      auto kernel = fieldft::cuda::interp_tile<T, D, W>;
      FIELDFT_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
      kernel<<<nsub, 128, smem, s>>>(p, g, horner, degree, grid, c, c_stride, nbatch, sp);
    });
    FIELDFT_CUDA_CHECK_LAUNCH();
  } else {
    (void)p, (void)g, (void)horner, (void)degree, (void)grid, (void)c, (void)c_stride, (void)nbatch, (void)sp;
    throw Error(ErrorCode::kInternal, "tile interpolation planned outside 3D");
  }
}

}  // namespace fieldft::cuda
