// Host-side launchers of the field-corrected DFT kernels (dft_direct_*.cu, dft_tc.cu): one
// function per kernel family that picks the template instance from runtime parameters.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "cuda/dft_common.cuh"

namespace fieldft::cuda::dft {

// What every kernel family's launch takes besides its own knobs: the R2* factor on or off;
// splits × per_split covers the tiles (forward) or samples (adjoint) of the inner sum, split s
// writing at out + s·split_stride; the stream.
struct SplitArgs {
  bool r2 = false;
  std::int64_t splits = 1;
  std::int64_t per_split = 0;
  std::int64_t split_stride = 0;
  cudaStream_t stream = nullptr;
};

// CUDA-core kernels. ct: images per pass (1: polar form, 2); poly: how many of the 8 voxels of
// a run take the polynomial instead of the SFU (float only; 0–3, clamped); out holds image c at
// c·out_stride.
struct DirectArgs : SplitArgs {
  int ct = 1;
  int poly = 0;
};

template <class T>
void launch_forward_direct(const Params<T>& p, const DirectArgs& a, const Cplx<T>* img,
                           Cplx<T>* out, std::int64_t out_stride);
template <class T>
void launch_adjoint_direct(const Params<T>& p, const DirectArgs& a, const Cplx<T>* smp,
                           Cplx<T>* out, std::int64_t out_stride);
// Resident blocks per SM of the kernel launch_*_direct would use.
template <class T>
int direct_occupancy(bool forward, const Params<T>& p, const DirectArgs& a);

// Samples per forward block (of the instance a selects) / tiles per adjoint block of the
// direct kernels.
template <class T>
int direct_forward_block_samples(const Params<T>& p, const DirectArgs& a);
int direct_adjoint_block_tiles();
int direct_adjoint_stage();

// Tensor-core kernels (float). nt: n-tiles of 4 images (1, 2, 4 or 8); groups: set for a
// grouped setup (the forward's out_stride is then the caller's samples).
struct TcArgs : SplitArgs {
  int nt = 1;
  int images = 1;
  Groups groups{};
  const float* inv_scale = nullptr;
};
void launch_forward_tc(const Params<float>& p, const TcArgs& a, const uint4* frag, Cplx<float>* out,
                       std::int64_t out_stride);
void launch_adjoint_tc(const Params<float>& p, const TcArgs& a, const uint4* frag, Cplx<float>* out,
                       std::int64_t out_stride);
int tc_occupancy(bool forward, const Params<float>& p, const TcArgs& a);
int tc_forward_block_samples();
int tc_adjoint_stage();
int tc_max_images();

// Per-image scales: scale[c] = 2^−e, inv_scale[c] = 2^e with max|x_c| < 2^e. bits: images
// unsigned of scratch.
void launch_scales(const Cplx<float>* x, std::int64_t len, int images, unsigned* bits,
                   float* scale, float* inv_scale, cudaStream_t stream);
// B fragments in the layouts dft_forward_tc / dft_adjoint_tc read (count: uint4 elements
// needed, forward_frag_count / adjoint_frag_count).
std::int64_t forward_frag_count(const Params<float>& p, int nt);
std::int64_t adjoint_frag_count(std::int64_t num_samples, int nt);
void launch_forward_frags(const Params<float>& p, int nt, const Cplx<float>* img, int images,
                          const float* scale, uint4* frag, cudaStream_t stream);
// The adjoint's reads sample j of image c at smp[c·stride + j], or at smp[c·stride + src[j]]
// (zero where src[j] < 0) when src is given (grouped setups).
void launch_adjoint_frags(const Cplx<float>* smp, std::int64_t num_samples, std::int64_t stride,
                          const std::int64_t* src, int nt, int images, const float* scale, uint4* frag,
                          cudaStream_t stream);

// out[i] = Σ_s part[s·count + i] (summed in double), i < count.
template <class T>
void launch_reduce_splits(const Cplx<T>* part, std::int64_t count, std::int64_t splits, Cplx<T>* out,
                          cudaStream_t stream);

}  // namespace fieldft::cuda::dft
