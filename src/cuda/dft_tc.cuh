// Field-corrected DFT of many images at once on tensor cores (float). Included by dft_tc.cu only
// (it defines non-template kernels).
//
// For C images the transform is a complex matrix product, S = E·X (forward, E_jv the phasors,
// X the C images as columns) or M = Eᴴ·S (adjoint). Written over the reals with the complex
// parts interleaved along the inner dimension,
//     [Re S_c, Im S_c] = Σ_v [Re E, Im E]_jv · [[Re X, Im X], [−Im X, Re X]]_vc,
// it maps onto mma.m16n8k16 (fp16 inputs, fp32 accumulation): A = the phasors, generated in
// registers by each thread for exactly the fragment elements it holds (never stored), B = the
// images, pre-arranged in fragment order by dft_*_frags. Each phasor is computed once and used
// for all C images (up to 32 per pass).
//
// Precision: fp16 has an 11-bit significand, so every value is split as x = hi + lo (both
// fp16) and the product is formed as Ahi·Bhi + Ahi·Blo + Alo·Bhi ("3-pass" split; the dropped
// Alo·Blo is below 2^-22). B is scaled per image by a power of two so that |x| ≤ 1 (no fp16
// overflow); values far below an image's maximum keep an absolute, not a relative, precision
// of ~2^-24 of that maximum. The tensor cores accumulate with truncation, so an accumulator is
// moved into a double (in shared memory) after every 32 k-steps, before the truncation bias
// of long sums builds up.
#pragma once

#include <cuda_fp16.h>

#include "cuda/dft_common.cuh"

namespace fieldft::cuda::dft {

inline constexpr int kTcBlock = 128;            // 4 warps
inline constexpr int kTcForwardSamples = 128;   // samples per forward block: 4 warps × 2 m-tiles
inline constexpr int kTcAdjointStage = 256;     // samples staged per adjoint stage (32 k-steps)
inline constexpr int kTcMaxImages = 32;         // images per pass: NT ≤ 8 n-tiles of 4 images

// Dynamic shared memory of a TC kernel with NT n-tiles: the double accumulators.
constexpr int tc_smem_bytes(int nt) { return 2 * nt * 4 * kTcBlock * static_cast<int>(sizeof(double)); }

__device__ __forceinline__ std::uint32_t half2_bits(__half2 h) {
  return *reinterpret_cast<std::uint32_t*>(&h);
}

// (re, im) → fp16 pairs hi, lo with hi + lo = (re, im) to ~2^-22 (for |re|, |im| ≤ 1).
__device__ __forceinline__ void split_half2(float re, float im, std::uint32_t* hi, std::uint32_t* lo) {
  const __half2 h = __floats2half2_rn(re, im);
  const float2 hf = __half22float2(h);
  *hi = half2_bits(h);
  *lo = half2_bits(__floats2half2_rn(re - hf.x, im - hf.y));
}

// D += A·B for one m16n8k16 fragment (PTX ISA "Matrix Fragments for mma.m16n8k16").
__device__ __forceinline__ void mma_16816(float* d, const std::uint32_t* a, std::uint32_t b0,
                                          std::uint32_t b1) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
      "{%8,%9}, {%0,%1,%2,%3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// One B fragment element pair for value x of image c: column g of the n-tile is image g/2,
// real output part for even g ((Re x, −Im x) down the K pair), imaginary for odd g (Im x, Re x).
__device__ __forceinline__ void b_pair(Cplx<float> x, bool odd, float* k0, float* k1) {
  *k0 = odd ? x.im : x.re;
  *k1 = odd ? x.re : -x.im;
}

// hi/lo halves of lane's B pair for element i of src (image c, scaled by scale[c]); zero where
// valid is false (past the grid or sample range, or an image slot beyond the last image).
__device__ __forceinline__ void b_halves(const Cplx<float>* __restrict__ src, std::int64_t i, bool valid,
                                         const float* __restrict__ scale, int c, int g, std::uint32_t* hi,
                                         std::uint32_t* lo) {
  Cplx<float> x{0.f, 0.f};
  if (valid) {
    x = src[i];
    x.re *= scale[c];
    x.im *= scale[c];
  }
  float k0, k1;
  b_pair(x, g & 1, &k0, &k1);
  split_half2(k0, k1, hi, lo);
}

// ---- per-image scaling -------------------------------------------------------------------

// bits[c] = max over the vector of max(|Re|, |Im|), as float bits (order-preserving for ≥ 0).
__global__ void dft_absmax(const Cplx<float>* __restrict__ x, std::int64_t len, std::int64_t stride,
                           unsigned* __restrict__ bits) {
  const int c = blockIdx.y;
  float m = 0.f;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < len;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const Cplx<float> v = x[c * stride + i];
    m = fmaxf(m, fmaxf(fabsf(v.re), fabsf(v.im)));
  }
  for (int off = 16; off > 0; off >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, off));
  if ((threadIdx.x & 31) == 0) atomicMax(bits + c, __float_as_uint(m));
}

// scale[c] = 2^−e with max < 2^e, so that scaled values are < 1; inv_scale[c] = 2^e.
__global__ void dft_scales(const unsigned* __restrict__ bits, int images, float* __restrict__ scale,
                           float* __restrict__ inv_scale) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= images) return;
  const float m = __uint_as_float(bits[c]);
  int e = 0;
  if (m > 0.f) frexpf(m, &e);
  scale[c] = ldexpf(1.f, -e);
  inv_scale[c] = ldexpf(1.f, e);
}

// Forward B fragments: frag[((b·32 + run)·NT + nt)·32 + lane] for tile b, run, n-tile, lane.
template <int DIM, int NT>
__global__ void dft_forward_frags(Params<float> p, const Cplx<float>* __restrict__ img, int images,
                                  const float* __restrict__ scale, uint4* __restrict__ frag) {
  using Tl = Tile<DIM>;
  const std::int64_t idx = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  const std::int64_t total = p.num_tiles * Tl::kRuns * NT * 32;
  if (idx >= total) return;
  const int lane = static_cast<int>(idx % 32);
  const int nt = static_cast<int>((idx / 32) % NT);
  const int run = static_cast<int>((idx / (32 * NT)) % Tl::kRuns);
  const std::int64_t b = idx / (32 * NT * Tl::kRuns);
  const int g = lane >> 2, t4 = lane & 3;
  const int c = nt * 4 + g / 2;
  std::int64_t o[3];
  double cs[3];
  tile_geometry<DIM>(p, b, o, cs);
  std::uint32_t hi[2], lo[2];
#pragma unroll
  for (int k = 0; k < 2; ++k) {
    const std::int64_t v = slot_voxel<DIM>(p, o, run * dm::kRun + t4 + 4 * k);
    b_halves(img, c * p.num_voxels + v, v >= 0 && c < images, scale, c, g, &hi[k], &lo[k]);
  }
  frag[idx] = make_uint4(hi[0], hi[1], lo[0], lo[1]);
}

// Adjoint B fragments: frag[(κ·NT + nt)·32 + lane] for k-step κ (samples 8κ … 8κ+7). Sample j
// of image c is smp[c·stride + j], or, with src (grouped setups), smp[c·stride + src[j]] and
// zero where src[j] < 0 (padding).
template <int NT>
__global__ void dft_adjoint_frags(const Cplx<float>* __restrict__ smp, std::int64_t num_samples,
                                  std::int64_t stride, const std::int64_t* __restrict__ src,
                                  std::int64_t ksteps, int images, const float* __restrict__ scale,
                                  uint4* __restrict__ frag) {
  const std::int64_t idx = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (idx >= ksteps * NT * 32) return;
  const int lane = static_cast<int>(idx % 32);
  const int nt = static_cast<int>((idx / 32) % NT);
  const std::int64_t kappa = idx / (32 * NT);
  const int g = lane >> 2, t4 = lane & 3;
  const int c = nt * 4 + g / 2;
  std::uint32_t hi[2], lo[2];
#pragma unroll
  for (int k = 0; k < 2; ++k) {
    const std::int64_t j = kappa * 8 + t4 + 4 * k;
    bool valid = j < num_samples && c < images;
    std::int64_t i = j;
    if (valid && src != nullptr) {
      i = src[j];
      valid = i >= 0;
    }
    b_halves(smp, c * stride + i, valid, scale, c, g, &hi[k], &lo[k]);
  }
  frag[idx] = make_uint4(hi[0], hi[1], lo[0], lo[1]);
}

// ---- the products --------------------------------------------------------------------------

template <int NT>
__device__ __forceinline__ void mma_3pass(float (&d)[2][NT][4], const std::uint32_t (&ahi)[2][4],
                                          const std::uint32_t (&alo)[2][4], const uint4& bf, int nt) {
#pragma unroll
  for (int mt = 0; mt < 2; ++mt) {
    mma_16816(d[mt][nt], ahi[mt], bf.x, bf.y);
    mma_16816(d[mt][nt], ahi[mt], bf.z, bf.w);
    mma_16816(d[mt][nt], alo[mt], bf.x, bf.y);
  }
}

// Clears the MMA accumulators d and this thread's column of the double sums `outer`.
template <int NT>
__device__ __forceinline__ void zero_accumulators(float (&d)[2][NT][4], double* outer, int tid) {
  for (int k = 0; k < 2 * NT * 4; ++k) outer[k * kTcBlock + tid] = 0.0;
#pragma unroll
  for (int mt = 0; mt < 2; ++mt)
#pragma unroll
    for (int nt = 0; nt < NT; ++nt)
#pragma unroll
      for (int k = 0; k < 4; ++k) d[mt][nt][k] = 0.f;
}

template <int NT>
__device__ __forceinline__ void flush_accumulators(float (&d)[2][NT][4], double* outer, int tid) {
#pragma unroll
  for (int mt = 0; mt < 2; ++mt)
#pragma unroll
    for (int nt = 0; nt < NT; ++nt)
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        outer[((mt * NT + nt) * 4 + k) * kTcBlock + tid] += static_cast<double>(d[mt][nt][k]);
        d[mt][nt][k] = 0.f;
      }
}

// Forward: a warp owns 32 samples (2 m-tiles); k-steps are the runs of 8 voxels of each tile.
// out: image c at out + c·out_stride (already unscaled by inv_scale); sample j at j, or with
// kGroups at gr.src[j] (none for padding). kGroups: the block's samples are one group (a group
// starts at a multiple of 256 samples), whose phase offsets join the per-voxel terms.
template <int DIM, bool kR2, int NT, bool kGroups>
__global__ void __launch_bounds__(kTcBlock)
    dft_forward_tc(Params<float> p, const uint4* __restrict__ frag, Cplx<float>* __restrict__ out,
                   std::int64_t out_stride, std::int64_t split_stride, int images,
                   const float* __restrict__ inv_scale, std::int64_t tiles_per_split, Groups gr) {
  using Tl = Tile<DIM>;
  extern __shared__ double outer[];  // [2·NT·4][kTcBlock]
  __shared__ float sfp[Tl::kVoxels];
  __shared__ float4 sg[kR2 ? Tl::kVoxels : 1];
  __shared__ float sgo[kGroups ? Tl::kVoxels : 1];
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, g = lane >> 2, t4 = lane & 3;
  const std::int64_t jw = static_cast<std::int64_t>(blockIdx.x) * kTcForwardSamples + warp * 32;
  const float* __restrict__ goff = nullptr;
  if constexpr (kGroups)
    goff = gr.goff + static_cast<std::int64_t>(gr.grp[static_cast<std::int64_t>(blockIdx.x) * kTcForwardSamples]) *
                         p.num_voxels;

  // Sample s = 2·mt + h of this thread is row g + 8h of m-tile mt.
  float ux[4], uy[4], uz[4], tt[4];
#pragma unroll
  for (int s = 0; s < 4; ++s) {
    const Sample4<float> v = p.st[jw + (s >> 1) * 16 + (s & 1) * 8 + g];
    ux[s] = v.ux;
    uy[s] = v.uy;
    uz[s] = v.uz;
    tt[s] = v.t;
  }
  float d[2][NT][4];
  zero_accumulators<NT>(d, outer, tid);

  std::int64_t b0, b1;
  split_tiles(p, tiles_per_split, &b0, &b1);
  for (std::int64_t b = b0; b < b1; ++b) {
    std::int64_t o[3];
    double cs[3];
    tile_geometry<DIM>(p, b, o, cs);
    __syncthreads();
    for (int e = tid; e < Tl::kVoxels; e += kTcBlock) {
      const std::int64_t v = slot_voxel<DIM>(p, o, e);
      sfp[e] = v >= 0 ? p.fp[v] : 0.f;
      if constexpr (kR2)
        sg[e] = v >= 0 ? make_float4(p.gx[v], p.gy[v], DIM == 3 ? p.gz[v] : 0.f, 0.f)
                       : make_float4(0.f, 0.f, 0.f, 0.f);
      if constexpr (kGroups) sgo[e] = v >= 0 ? goff[v] : 0.f;
    }
    __syncthreads();
    const double fref = p.fref[b];
    float beta[4];
#pragma unroll
    for (int s = 0; s < 4; ++s)
      beta[s] = tile_beta<float>(p.sd[jw + (s >> 1) * 16 + (s & 1) * 8 + g], cs, fref);

#pragma unroll 1
    for (int run = 0; run < Tl::kRuns; ++run) {
      const int rx = run % Tl::kRunsX;
      const int ry = (run / Tl::kRunsX) % Tl::kY;
      const int rz = run / (Tl::kRunsX * Tl::kY);
      const float dxc = float(rx * dm::kRun - Tl::kX / 2) + 3.5f;
      const float dy = float(ry - Tl::kY / 2), dz = float(rz - Tl::kZ / 2);
      // This thread's voxels in the run: t4 and t4 + 4 (A columns 2t4.. and 2t4+8..).
      float fpv[2], civ[2];
      float4 gv[2];
      [[maybe_unused]] float shift[2];
#pragma unroll
      for (int vh = 0; vh < 2; ++vh) {
        const int e = run * dm::kRun + t4 + 4 * vh;
        fpv[vh] = sfp[e];
        if constexpr (kR2) gv[vh] = sg[e];
        civ[vh] = float(t4 + 4 * vh) - 3.5f;
        if constexpr (kGroups) shift[vh] = (vh ? 0.5f : 0.f) + sgo[e];
      }
      std::uint32_t ahi[2][4], alo[2][4];
#pragma unroll
      for (int s = 0; s < 4; ++s) {
        float q0 = beta[s] + ux[s] * dxc + uy[s] * dy + uz[s] * dz;
        q0 -= dm::round_nearest(q0);
#pragma unroll
        for (int vh = 0; vh < 2; ++vh) {
          // Voxels t4 + 4 are evaluated half a cycle on and negated, e^{−iθ} = −e^{−i(θ+π)}, so
          // that the mean error of the SFU cancels between the two halves (see dft_direct.cuh).
          // With groups the half cycle and the group's offset are one per-run constant.
          float q;
          if constexpr (kGroups)
            q = q0 + shift[vh] + ux[s] * civ[vh] + fpv[vh] * tt[s];
          else
            q = q0 + (vh ? 0.5f : 0.f) + ux[s] * civ[vh] + fpv[vh] * tt[s];
          float sn, cn;
          phasor<false>(q, &sn, &cn);
          if constexpr (kR2) {
            const float w = r2_factor<DIM>(ux[s], uy[s], uz[s], gv[vh].x, gv[vh].y, gv[vh].z, tt[s]);
            sn *= w;
            cn *= w;
          }
          // E = e^{−iθ}; fragment register (vh, h) = 2·vh + h of m-tile s/2.
          const float re = vh ? -cn : cn, im = vh ? sn : -sn;
          split_half2(re, im, &ahi[s >> 1][2 * vh + (s & 1)], &alo[s >> 1][2 * vh + (s & 1)]);
        }
      }
      const uint4* fr = frag + ((b * Tl::kRuns + run) * NT) * 32 + lane;
#pragma unroll
      for (int nt = 0; nt < NT; ++nt) mma_3pass<NT>(d, ahi, alo, __ldg(fr + nt * 32), nt);
    }
    flush_accumulators<NT>(d, outer, tid);
  }
  out += blockIdx.y * split_stride;
#pragma unroll
  for (int mt = 0; mt < 2; ++mt)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const std::int64_t j = jw + mt * 16 + h * 8 + g;
      if (j >= p.num_samples) continue;
      std::int64_t jo = j;  // the caller's index of sample j
      if constexpr (kGroups) {
        jo = gr.src[j];
        if (jo < 0) continue;  // padding
      }
#pragma unroll
      for (int nt = 0; nt < NT; ++nt) {
        const int c = nt * 4 + t4;
        if (c >= images) continue;
        const double re = outer[((mt * NT + nt) * 4 + 2 * h) * kTcBlock + tid];
        const double im = outer[((mt * NT + nt) * 4 + 2 * h + 1) * kTcBlock + tid];
        const double is = inv_scale[c];
        out[c * out_stride + jo] = Cplx<float>{static_cast<float>(re * is), static_cast<float>(im * is)};
      }
    }
}

// Adjoint: block = half a tile (16 runs, 128 voxels), a warp owns 4 runs (2 m-tiles: rows
// 0–7 one run, 8–15 the next); k-steps are 8 samples. Thread rows g, g+8 of both m-tiles are
// the voxels at x = g of its warp's 4 runs. kGroups: each stage of 256 samples is one group
// (splits are whole stages), whose phase offsets at the thread's voxels are loaded per stage.
template <int DIM, bool kR2, int NT, bool kGroups>
__global__ void __launch_bounds__(kTcBlock)
    dft_adjoint_tc(Params<float> p, const uint4* __restrict__ frag, Cplx<float>* __restrict__ out,
                   std::int64_t out_stride, std::int64_t split_stride, int images,
                   const float* __restrict__ inv_scale, std::int64_t samples_per_split, Groups gr) {
  using Tl = Tile<DIM>;
  extern __shared__ double outer[];
  __shared__ float4 ssm[kTcAdjointStage];
  __shared__ float sbeta[kTcAdjointStage];
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31, g = lane >> 2, t4 = lane & 3;
  const std::int64_t b = blockIdx.x >> 1;
  const int run0 = (blockIdx.x & 1) * 16 + warp * 4;

  std::int64_t o[3];
  double cs[3];
  tile_geometry<DIM>(p, b, o, cs);
  const double fref = p.fref[b];
  std::int64_t vox[4];
  float dxv[4], dyv[4], dzv[4], fpv[4], gxv[4], gyv[4], gzv[4];
#pragma unroll
  for (int rho = 0; rho < 4; ++rho) {
    const int e = (run0 + rho) * dm::kRun + g;
    vox[rho] = slot_voxel<DIM>(p, o, e);
    dxv[rho] = float(e % Tl::kX - Tl::kX / 2);
    dyv[rho] = float((e / Tl::kX) % Tl::kY - Tl::kY / 2);
    dzv[rho] = float(e / (Tl::kX * Tl::kY) - Tl::kZ / 2);
    const bool in = vox[rho] >= 0;
    fpv[rho] = in ? p.fp[vox[rho]] : 0.f;
    gxv[rho] = (kR2 && in) ? p.gx[vox[rho]] : 0.f;
    gyv[rho] = (kR2 && in) ? p.gy[vox[rho]] : 0.f;
    gzv[rho] = (kR2 && in && DIM == 3) ? p.gz[vox[rho]] : 0.f;
  }
  float d[2][NT][4];
  zero_accumulators<NT>(d, outer, tid);

  const std::int64_t j0 = static_cast<std::int64_t>(blockIdx.y) * samples_per_split;
  const std::int64_t j1 =
      j0 + samples_per_split < p.num_samples ? j0 + samples_per_split : p.num_samples;
  float gph[4] = {0.f, 0.f, 0.f, 0.f};
  for (std::int64_t js = j0; js < j1; js += kTcAdjointStage) {
    if constexpr (kGroups) {
      const float* __restrict__ go = gr.goff + static_cast<std::int64_t>(gr.grp[js]) * p.num_voxels;
#pragma unroll
      for (int rho = 0; rho < 4; ++rho) gph[rho] = vox[rho] >= 0 ? go[vox[rho]] : 0.f;
    }
    __syncthreads();
    for (int u = tid; u < kTcAdjointStage; u += kTcBlock) {
      const std::int64_t j = js + u;
      const bool in = j < j1;
      const Sample4<float> v = in ? p.st[j] : Sample4<float>{0.f, 0.f, 0.f, 0.f};
      ssm[u] = make_float4(v.ux, v.uy, v.uz, v.t);
      sbeta[u] = in ? tile_beta<float>(p.sd[j], cs, fref) : 0.f;
    }
    __syncthreads();
    const std::int64_t left = j1 - js;
    const int ksteps = left >= kTcAdjointStage ? kTcAdjointStage / 8 : static_cast<int>((left + 7) / 8);
#pragma unroll 1
    for (int ks = 0; ks < ksteps; ++ks) {
      std::uint32_t ahi[2][4], alo[2][4];
#pragma unroll
      for (int sh = 0; sh < 2; ++sh) {
        const int u = ks * 8 + t4 + 4 * sh;
        const float4 s = ssm[u];
        // Samples t4 + 4: half a cycle on and negated (bias cancellation, as in the forward).
        const float beta = sbeta[u] + (sh ? 0.5f : 0.f);
#pragma unroll
        for (int rho = 0; rho < 4; ++rho) {
          // With groups in 2D (u_z = 0, no z offset) the group offset takes the z term's place.
          float q;
          if constexpr (kGroups && DIM == 2)
            q = beta + s.x * dxv[rho] + s.y * dyv[rho] + gph[rho] + fpv[rho] * s.w;
          else if constexpr (kGroups)
            q = beta + s.x * dxv[rho] + s.y * dyv[rho] + s.z * dzv[rho] + gph[rho] + fpv[rho] * s.w;
          else
            q = beta + s.x * dxv[rho] + s.y * dyv[rho] + s.z * dzv[rho] + fpv[rho] * s.w;
          // FRND, not the two-FADD form: here the FMA pipe is the busier one and the SFU pipe,
          // where FRND runs, has room (the kernel waits on the tensor cores).
          q -= rintf(q);
          float sn, cn;
          phasor<false>(q, &sn, &cn);
          if constexpr (kR2) {
            const float w = r2_factor<DIM>(s.x, s.y, s.z, gxv[rho], gyv[rho], gzv[rho], s.w);
            sn *= w;
            cn *= w;
          }
          // Aᴴ element e^{+iθ}; register (sample half sh, row half h) = 2·sh + h of m-tile ρ/2.
          const float re = sh ? -cn : cn, im = sh ? -sn : sn;
          split_half2(re, im, &ahi[rho >> 1][2 * sh + (rho & 1)], &alo[rho >> 1][2 * sh + (rho & 1)]);
        }
      }
      const uint4* fr = frag + ((js / 8 + ks) * NT) * 32 + lane;
#pragma unroll
      for (int nt = 0; nt < NT; ++nt) mma_3pass<NT>(d, ahi, alo, __ldg(fr + nt * 32), nt);
    }
    flush_accumulators<NT>(d, outer, tid);
  }
  out += blockIdx.y * split_stride;
#pragma unroll
  for (int rho = 0; rho < 4; ++rho) {
    if (vox[rho] < 0) continue;
    const int mt = rho >> 1, h = rho & 1;
#pragma unroll
    for (int nt = 0; nt < NT; ++nt) {
      const int c = nt * 4 + t4;
      if (c >= images) continue;
      const double re = outer[((mt * NT + nt) * 4 + 2 * h) * kTcBlock + tid];
      const double im = outer[((mt * NT + nt) * 4 + 2 * h + 1) * kTcBlock + tid];
      const double is = inv_scale[c];
      out[c * out_stride + vox[rho]] =
          Cplx<float>{static_cast<float>(re * is), static_cast<float>(im * is)};
    }
  }
}

}  // namespace fieldft::cuda::dft
