// Device-side data of the field-corrected DFT and small helpers shared by its kernels
// (dft_direct.cuh: CUDA cores, any precision; dft_tc.cuh: tensor cores, float, many images).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "fieldft/detail/dft_math.hpp"

namespace fieldft::cuda::dft {

namespace dm = fieldft::detail::dft;

template <class T>
struct alignas(2 * sizeof(T)) Cplx {
  T re, im;
};

// A sample's u_x, u_y, u_z (cycles per voxel) and t (s), in T for the per-pair terms ...
template <class T>
struct alignas(4 * sizeof(T)) Sample4 {
  T ux, uy, uz, t;
};
// ... and in double for the per-tile bases (dft_math.hpp tile_base).
using SampleD = Sample4<double>;

// Non-owning view of an operator's device arrays (owned by the engine, dft_engine.cu).
template <class T>
struct Params {
  int dim;
  std::int64_t n0, n1, n2;             // grid
  int ntx, nty, ntz;                   // tiles per axis
  std::int64_t num_tiles, num_voxels, num_samples;
  const Sample4<T>* __restrict__ st;   // per sample, zero-padded past num_samples
  const SampleD* __restrict__ sd;      // per sample, zero-padded
  const double* __restrict__ fref;     // per tile (Hz)
  const T* __restrict__ fp;            // per voxel: Δω/2π − fref (Hz)
  const T* __restrict__ gx;            // R2 gradient maps (Hz/voxel); null without R2
  const T* __restrict__ gy;
  const T* __restrict__ gz;
};

// Sample groups of a grouped setup (core::DftSetup::grouped; tensor-core kernels only), else all
// null: per sample the caller's index (−1: padding) and the group; per group and voxel the phase
// offset (cycles). A kernel argument of its own: adding these to Params changed the register
// allocation of the ungrouped kernels (ptxas: 80 → 96 and 128 → 136 registers, one block per SM
// less).
struct Groups {
  const std::int64_t* __restrict__ src = nullptr;
  const int* __restrict__ grp = nullptr;
  const float* __restrict__ goff = nullptr;
};

// Tile geometry at compile time.
template <int DIM>
struct Tile {
  static constexpr dm::TileShape kShape = dm::tile_shape(DIM);
  static constexpr int kX = kShape.x, kY = kShape.y, kZ = kShape.z;
  static constexpr int kVoxels = kX * kY * kZ;
  static constexpr int kRunsX = kX / dm::kRun;  // runs per row
  static constexpr int kRuns = kVoxels / dm::kRun;
  static_assert(kVoxels == 256 && kRuns == 32, "kernels assume 256-voxel tiles of 32 runs");
};

// Origin (first voxel per axis) and centre offsets cs_d = centre − ⌊N_d/2⌋ of tile b.
template <int DIM, class T>
__device__ __forceinline__ void tile_geometry(const Params<T>& p, std::int64_t b, std::int64_t* o,
                                              double* cs) {
  using Tl = Tile<DIM>;
  const std::int64_t bx = b % p.ntx;
  const std::int64_t by = (b / p.ntx) % p.nty;
  const std::int64_t bz = b / (static_cast<std::int64_t>(p.ntx) * p.nty);
  o[0] = bx * Tl::kX;
  o[1] = by * Tl::kY;
  o[2] = bz * Tl::kZ;
  cs[0] = static_cast<double>(o[0] + Tl::kX / 2 - p.n0 / 2);
  cs[1] = static_cast<double>(o[1] + Tl::kY / 2 - p.n1 / 2);
  cs[2] = static_cast<double>(o[2] + Tl::kZ / 2 - p.n2 / 2);
}

// Voxel index of tile slot e (x fastest within the tile), or −1 past the grid edge.
template <int DIM, class T>
__device__ __forceinline__ std::int64_t slot_voxel(const Params<T>& p, const std::int64_t* o, int e) {
  using Tl = Tile<DIM>;
  const std::int64_t x = o[0] + e % Tl::kX;
  const std::int64_t y = o[1] + (e / Tl::kX) % Tl::kY;
  const std::int64_t z = o[2] + e / (Tl::kX * Tl::kY);
  if (x >= p.n0 || y >= p.n1 || z >= p.n2) return -1;
  return x + p.n0 * (y + p.n1 * z);
}

template <class T>
__device__ __forceinline__ T tile_beta(const SampleD& s, const double* cs, double fref) {
  return static_cast<T>(dm::tile_base(s.ux, s.uy, s.uz, s.t, cs[0], cs[1], cs[2], fref));
}

// sin and cos of 2πq. float: the SFU (MUFU) unless kPoly; double: always the polynomial.
template <bool kPoly>
__device__ __forceinline__ void phasor(float q, float* s, float* c) {
  if constexpr (kPoly) {
    dm::sincos_2pi(q, s, c);
  } else {
    __sincosf(q * 6.28318530717958647692f, s, c);
  }
}
template <bool kPoly>
__device__ __forceinline__ void phasor(double q, double* s, double* c) {
  dm::sincos_2pi(q, s, c);
}

// The SFU's sine and cosine of x radians (MUFU.SIN/COS after a multiplication by 1/2π). The
// double overload exists for templates only: double kernels never take SFU positions.
__device__ __forceinline__ void sfu_sincos(float x, float* s, float* c) { __sincosf(x, s, c); }
__device__ __forceinline__ void sfu_sincos(double x, double* s, double* c) { sincos(x, s, c); }

// sin and cos of a pair's phase q: on the SFU (q in radians) or by the FMA-pipe polynomial (q
// in cycles). sfu is a compile-time constant at every call (unrolled loops), so this inlines to
// one of the two.
template <class T>
__device__ __forceinline__ void pair_sincos(bool sfu, T q, T* s, T* c) {
  if (sfu)
    sfu_sincos(q, s, c);
  else
    dm::sincos_2pi(q, s, c);
}

// The tiles [*b0, *b1) of the inner-sum split blockIdx.y.
template <class T>
__device__ __forceinline__ void split_tiles(const Params<T>& p, std::int64_t tiles_per_split, std::int64_t* b0,
                                            std::int64_t* b1) {
  *b0 = static_cast<std::int64_t>(blockIdx.y) * tiles_per_split;
  *b1 = *b0 + tiles_per_split < p.num_tiles ? *b0 + tiles_per_split : p.num_tiles;
}

template <int DIM, class T>
__device__ __forceinline__ T r2_factor(T ux, T uy, T uz, T gx, T gy, T gz, T t) {
  T w = dm::sinc(ux + gx * t) * dm::sinc(uy + gy * t);
  if constexpr (DIM == 3) w *= dm::sinc(uz + gz * t);
  return w;
}

}  // namespace fieldft::cuda::dft
