// Field-corrected DFT on CUDA cores: one kernel per direction, any precision, with or without
// the R2* factor, for CT images per pass (CT = 1: the image/sample vector in polar form, CT > 1:
// one phasor shared by the CT images).
//
// Forward: a thread owns kR samples (outputs in registers); the block walks voxel tiles (or the
// tiles of its split, blockIdx.y), staging each tile in shared memory. Adjoint: a warp owns one
// tile (a thread one run of 8 voxels along x); the block stages 128 samples at a time.
// Phases follow fieldft/detail/dft_math.hpp: a double base per (sample, tile), small float terms
// per pair. In float, both the polynomial (FMA pipe) and the SFU give sines and cosines, so
// that both pipes work: either kPoly of every 8 pairs of each thread (sfu_pair below; the
// adjoint, and the forward with kPoly 0–3) or whole warps of one kind (the forward's default,
// kPolyWarps).
// Sums: per tile (forward) or per 128 samples (adjoint) in T, then in double.
#pragma once

#include <type_traits>

#include "cuda/dft_common.cuh"

namespace fieldft::cuda::dft {

inline constexpr int kDirectBlock = 128;

// Samples per thread of the forward kernel: 8 in float with one image per pass (the registers
// then just fit 4 blocks per SM), half that where each pair carries more state.
template <class T, int CT>
struct DirectConfig {
  static constexpr int kR = (std::is_same_v<T, float> && CT == 1) ? 8 : 4;
};

// kPoly value of the warp-specialised float forward kernel: in a block of 16 warps the first
// four (one per warp scheduler, since warp w of a block runs on scheduler w mod 4) take all
// their pairs from the polynomial and the other twelve all from the SFU. Each scheduler then
// holds three warps that keep the SFU's queue full and one that fills the issue slots they
// leave, instead of four warps that each alternate between SFU-heavy and SFU-free stretches of
// one mixed instruction stream (which the compiler groups that way) and tend to hit the same
// stretch at the same time.
inline constexpr int kPolyWarps = 4;
template <class T, int CT, int kPoly>
constexpr bool warp_specialised() {
  return std::is_same_v<T, float> && CT == 1 && kPoly == kPolyWarps;
}
// Threads of a forward or adjoint block.
template <class T, int CT, int kPoly>
constexpr int direct_threads() {
  return warp_specialised<T, CT, kPoly>() ? 4 * kDirectBlock : kDirectBlock;
}
// Resident blocks per SM the compiler must allow for (0: its own choice). A warp-specialised
// block fills an SM's warp schedulers by itself and may use 128 registers per thread.
template <class T, int CT, int kPoly>
constexpr int direct_min_blocks() {
  return warp_specialised<T, CT, kPoly>() ? 1 : 0;
}
// Samples covered by one forward block.
template <class T, int CT, int kPoly>
constexpr int forward_block_samples() {
  return direct_threads<T, CT, kPoly>() * DirectConfig<T, CT>::kR;
}

// Shared-memory slot of one voxel: field offset and, in polar form, |m|, 2|m| and arg m / 2π,
// in cycles; the same in radians (the SFU's input unit) in VoxelRad.
template <class T>
struct alignas(4 * sizeof(T)) VoxelSlot {
  T fp, arg, amp, amp2;
};
template <class T>
struct alignas(2 * sizeof(T)) VoxelRad {
  T fp, arg;
};
template <class T>
struct alignas(4 * sizeof(T)) Grad3 {
  T gx, gy, gz, pad;
};

// Which pairs take their sine and cosine from the SFU (float only) and which from the
// polynomial (FMA pipe): in the forward kernel, samples r ≥ kPoly of a thread's 8; in the
// adjoint kernel, positions i ≥ kPoly of a thread's run of 8 voxels. Either way every group of
// 8 consecutive pairs in the source mixes both kinds, so that one warp keeps both pipes busy
// (the compiler still groups a warp's polynomial pairs ahead of its SFU pairs: kPolyWarps).
// SFU pairs keep their phase in radians (one multiplication less per pair), polynomial pairs
// in cycles.
template <class T, int kPoly>
__device__ constexpr bool sfu_pair(int k) {
  return std::is_same_v<T, float> && k >= kPoly;
}
template <class T, int kPoly>
__device__ constexpr T phase_unit(int k) {
  return sfu_pair<T, kPoly>(k) ? T(dm::kTwoPi) : T(1);
}

// Bias cancellation. The SFU's sine/cosine error has a small nonzero mean over uniformly spread
// phases (~1e-8 in cos, measured on the H100). Summed over N voxels of one sign (amplitudes in
// polar form are ≥ 0, and real images are mostly positive) it grows like N while the signal
// grows like √N: 5e-6 relative at 64³. So odd positions of a run (forward) and odd samples
// (adjoint) are evaluated half a cycle away with the sign of the amplitude flipped,
// m e^{−2πiq} = (−m) e^{−2πi(q + ½)}, and the mean errors of the two halves cancel.
constexpr bool shifted(std::int64_t i) { return (i & 1) != 0; }

// out: image c's outputs start at out + c·out_stride, split blockIdx.y's at
// out + blockIdx.y·split_stride. img: image c at img + c·num_voxels.
template <class T, int DIM, bool kR2, int CT, int kPoly>
__global__ void __launch_bounds__(direct_threads<T, CT, kPoly>(), direct_min_blocks<T, CT, kPoly>())
    dft_forward_direct(Params<T> p, const Cplx<T>* __restrict__ img, Cplx<T>* __restrict__ out,
                       std::int64_t out_stride, std::int64_t split_stride,
                       std::int64_t tiles_per_split) {
  using Tl = Tile<DIM>;
  constexpr int kR = DirectConfig<T, CT>::kR;
  constexpr bool kPolar = CT == 1;
  // Polar form without R2: polynomial pairs accumulate from the half angle directly.
  constexpr bool kHalfAngle = kPolar && !kR2;
  constexpr T kTwoPi = T(dm::kTwoPi);
  constexpr T kTwoPiInv = T(1.0 / dm::kTwoPi);
  __shared__ VoxelSlot<T> slot[Tl::kVoxels];
  __shared__ VoxelRad<T> slot_rad[Tl::kVoxels];
  __shared__ Cplx<T> sm[kPolar ? 1 : CT][kPolar ? 1 : Tl::kVoxels];
  __shared__ Grad3<T> sg[kR2 ? Tl::kVoxels : 1];
  constexpr int kThreads = direct_threads<T, CT, kPoly>();
  constexpr bool kSpecialised = warp_specialised<T, CT, kPoly>();
  __shared__ T s_amp[kThreads / 32];  // per warp: Σ amp over the slots it staged

  const int tid = threadIdx.x;
  const std::int64_t j_base = static_cast<std::int64_t>(blockIdx.x) * forward_block_samples<T, CT, kPoly>();
  T ux[kR], uy[kR], uz[kR], tt[kR];
#pragma unroll
  for (int r = 0; r < kR; ++r) {
    const Sample4<T> s = p.st[j_base + r * kThreads + tid];  // padded: always in bounds
    ux[r] = s.ux;
    uy[r] = s.uy;
    uz[r] = s.uz;
    tt[r] = s.t;
  }
  double dre[CT][kR], dim[CT][kR];
#pragma unroll
  for (int c = 0; c < CT; ++c)
#pragma unroll
    for (int r = 0; r < kR; ++r) dre[c][r] = dim[c][r] = 0.0;

  std::int64_t b0, b1;
  split_tiles(p, tiles_per_split, &b0, &b1);
  for (std::int64_t b = b0; b < b1; ++b) {
    std::int64_t o[3];
    double cs[3];
    tile_geometry<DIM>(p, b, o, cs);
    __syncthreads();  // the previous tile's slots are no longer read
    T staged_amp = T(0);
    for (int e = tid; e < Tl::kVoxels; e += kThreads) {
      const int i = e % dm::kRun;
      const T sign = shifted(i) ? T(-1) : T(1);
      const std::int64_t v = slot_voxel<DIM>(p, o, e);
      VoxelSlot<T> sl{T(0), T(0), T(0), T(0)};
      Grad3<T> gr{T(0), T(0), T(0), T(0)};  // past the edge: zero weight, finite factor
      if (v >= 0) {
        sl.fp = p.fp[v];
        if constexpr (kPolar) {
          const Cplx<T> m = img[v];
          const T a = (m.re == T(0) && m.im == T(0)) ? T(0) : atan2(m.im, m.re) * kTwoPiInv;
          sl.amp = sign * hypot(m.re, m.im);
          sl.amp2 = sl.amp + sl.amp;
          staged_amp += sl.amp;
          sl.arg = shifted(i) ? a - T(0.5) : a;
        }
        if constexpr (kR2) gr = Grad3<T>{p.gx[v], p.gy[v], DIM == 3 ? p.gz[v] : T(0), T(0)};
      }
      slot[e] = sl;
      slot_rad[e] = VoxelRad<T>{sl.fp * kTwoPi, sl.arg * kTwoPi};
      if constexpr (kR2) sg[e] = gr;
      if constexpr (!kPolar) {
#pragma unroll
        for (int c = 0; c < CT; ++c) {
          const Cplx<T> m = v >= 0 ? img[c * p.num_voxels + v] : Cplx<T>{T(0), T(0)};
          sm[c][e] = Cplx<T>{sign * m.re, sign * m.im};
        }
      }
    }
    if constexpr (kHalfAngle) {
#pragma unroll
      for (int k = 16; k > 0; k /= 2) staged_amp += __shfl_xor_sync(0xffffffffu, staged_amp, k);
      if (tid % 32 == 0) s_amp[tid / 32] = staged_amp;
    }
    __syncthreads();

    // Σ amp of the tile: the "1" of cos 2θ = 1 − 2 sin²θ for the half-angle pairs.
    T sum_amp = T(0);
    if constexpr (kHalfAngle) {
#pragma unroll
      for (int w = 0; w < kThreads / 32; ++w) sum_amp += s_amp[w];
    }
    // Phase of each sample at the tile centre, reduced to [−½, ½] cycles, plus the x offset of
    // the run centre when a tile row is a single run (3D). The run bases below add y and z
    // offsets without a second reduction: |base| stays below 4 cycles (3D) or 7 (2D), well
    // inside the range where a float phase keeps ~1e-7-cycle resolution.
    const double fref = p.fref[b];
    constexpr T kRowX = T(-Tl::kX / 2) + T(3.5);  // centre of a tile's first run along x
    T beta[kR];
#pragma unroll
    for (int r = 0; r < kR; ++r) {
      beta[r] = tile_beta<T>(p.sd[j_base + r * kThreads + tid], cs, fref);
      if constexpr (Tl::kRunsX == 1) beta[r] += ux[r] * kRowX;
    }

    // The pairs of this tile, with kP of each thread's 8 samples on the polynomial.
    auto tile_pairs = [&]<int kP>() {
      T are[CT][kR], aim[CT][kR];
#pragma unroll
      for (int c = 0; c < CT; ++c)
#pragma unroll
        for (int r = 0; r < kR; ++r) are[c][r] = aim[c][r] = T(0);

#pragma unroll 1
      for (int run = 0; run < Tl::kRuns; ++run) {
        [[maybe_unused]] const int rx = run % Tl::kRunsX;
        const int ry = (run / Tl::kRunsX) % Tl::kY;
        const int rz = run / (Tl::kRunsX * Tl::kY);
        // Offsets from the tile centre: the row's y and z (and the run centre along x if a row
        // holds several runs).
        const T dy = T(ry - Tl::kY / 2), dz = T(rz - Tl::kZ / 2);
        // Run-centre phase of each sample in the unit of its kind; and half a cycle on for the
        // shifted positions of the Cartesian form.
        T q0[kR], q0h[kR];
#pragma unroll
        for (int r = 0; r < kR; ++r) {
          T q = beta[r] + uy[r] * dy + uz[r] * dz;
          if constexpr (Tl::kRunsX > 1) q += ux[r] * (T(rx * dm::kRun) + kRowX);
          q0[r] = q * phase_unit<T, kP>(r);
          q0h[r] = (q + T(0.5)) * phase_unit<T, kP>(r);
        }
#pragma unroll
        for (int i = 0; i < dm::kRun; ++i) {
          const int e = run * dm::kRun + i;
          const VoxelSlot<T> sl = slot[e];
          const VoxelRad<T> slr = slot_rad[e];
          [[maybe_unused]] Grad3<T> gr{};
          if constexpr (kR2) gr = sg[e];
          [[maybe_unused]] Cplx<T> m[CT];
          if constexpr (!kPolar) {
#pragma unroll
            for (int c = 0; c < CT; ++c) m[c] = sm[c][e];
          }
          const T ci = T(i) - T(3.5);
#pragma unroll
          for (int r = 0; r < kR; ++r) {
            const bool sfu = sfu_pair<T, kP>(r);  // compile-time: the loops are unrolled
            const T base = (!kPolar && shifted(i)) ? q0h[r] : q0[r];
            T q = base + ux[r] * (ci * phase_unit<T, kP>(r)) + (sfu ? slr.fp : sl.fp) * tt[r];
            if constexpr (kPolar) q -= sfu ? slr.arg : sl.arg;
            if (!sfu && kHalfAngle) {
              // A·cos 2θ = A − 2A sin²θ, A·sin 2θ = 2A sinθ cosθ; the A's go in through sum_amp.
              T sh, ch;
              dm::half_angle(q, &sh, &ch);
              const T x = sh * sl.amp2;
              are[0][r] -= x * sh;
              aim[0][r] -= x * ch;
              continue;
            }
            T sn, cn;
            pair_sincos(sfu, q, &sn, &cn);
            if constexpr (kPolar) {
              T a = sl.amp;
              if constexpr (kR2) a *= r2_factor<DIM>(ux[r], uy[r], uz[r], gr.gx, gr.gy, gr.gz, tt[r]);
              are[0][r] += a * cn;
              aim[0][r] -= a * sn;
            } else {
              if constexpr (kR2) {
                const T w = r2_factor<DIM>(ux[r], uy[r], uz[r], gr.gx, gr.gy, gr.gz, tt[r]);
                sn *= w;
                cn *= w;
              }
              // m e^{−iθ} = (mr cos θ + mi sin θ) + i (mi cos θ − mr sin θ)
#pragma unroll
              for (int c = 0; c < CT; ++c) {
                are[c][r] += m[c].re * cn + m[c].im * sn;
                aim[c][r] += m[c].im * cn - m[c].re * sn;
              }
            }
          }
        }
      }
#pragma unroll
      for (int c = 0; c < CT; ++c)
#pragma unroll
        for (int r = 0; r < kR; ++r) {
          const bool half = kHalfAngle && !sfu_pair<T, kP>(r);
          dre[c][r] += static_cast<double>(are[c][r]) + (half ? static_cast<double>(sum_amp) : 0.0);
          dim[c][r] += static_cast<double>(aim[c][r]);
        }
    };
    if constexpr (kSpecialised) {
      if (tid < kDirectBlock)  // warps 0–3
        tile_pairs.template operator()<DirectConfig<T, CT>::kR>();
      else
        tile_pairs.template operator()<0>();
    } else {
      tile_pairs.template operator()<kPoly>();
    }
  }
  out += blockIdx.y * split_stride;
#pragma unroll
  for (int r = 0; r < kR; ++r) {
    const std::int64_t j = j_base + r * kThreads + tid;
    if (j >= p.num_samples) continue;
#pragma unroll
    for (int c = 0; c < CT; ++c)
      out[c * out_stride + j] = Cplx<T>{static_cast<T>(dre[c][r]), static_cast<T>(dim[c][r])};
  }
}

// Block: 4 warps = 4 consecutive tiles. smp: sample vector c at smp + c·num_samples. out: image
// c at out + c·out_stride. Samples [blockIdx.y·samples_per_split, …) of this split.
inline constexpr int kAdjointTilesPerBlock = kDirectBlock / 32;

template <class T, int DIM, bool kR2, int CT, int kPoly>
__global__ void __launch_bounds__(kDirectBlock)
    dft_adjoint_direct(Params<T> p, const Cplx<T>* __restrict__ smp, Cplx<T>* __restrict__ out,
                       std::int64_t out_stride, std::int64_t split_stride,
                       std::int64_t samples_per_split) {
  using Tl = Tile<DIM>;
  constexpr bool kPolar = CT == 1;
  constexpr bool kHalfAngle = kPolar && !kR2;
  constexpr int kStage = kDirectBlock;
  constexpr T kTwoPi = T(dm::kTwoPi);
  constexpr T kTwoPiInv = T(1.0 / dm::kTwoPi);
  __shared__ Sample4<T> ss[kStage];
  __shared__ T sw[kAdjointTilesPerBlock][kStage];  // tile base (+ arg s / 2π in polar form)
  __shared__ Cplx<T> sv[CT][kStage];               // polar: (|s|, 2|s|)
  // Double sums of each thread's outputs, in shared memory rather than registers: the freed
  // registers let the sample loop run 8 samples deep.
  __shared__ double acc[2 * CT * dm::kRun][kDirectBlock];

  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const std::int64_t tile0 = static_cast<std::int64_t>(blockIdx.x) * kAdjointTilesPerBlock;
  const std::int64_t b = tile0 + warp;
  const bool active = b < p.num_tiles;

  // This thread's run: 8 voxels along x.
  const int rx = lane % Tl::kRunsX;
  const int ry = (lane / Tl::kRunsX) % Tl::kY;
  const int rz = lane / (Tl::kRunsX * Tl::kY);
  const T dxc = T(rx * dm::kRun - Tl::kX / 2) + T(3.5);
  const T dy = T(ry - Tl::kY / 2), dz = T(rz - Tl::kZ / 2);
  T fp[dm::kRun], gx[kR2 ? dm::kRun : 1], gy[kR2 ? dm::kRun : 1], gz[kR2 ? dm::kRun : 1];
  std::int64_t o[3];
  {
    double cs[3];
    tile_geometry<DIM>(p, active ? b : 0, o, cs);
#pragma unroll
    for (int i = 0; i < dm::kRun; ++i) {
      const std::int64_t v = active ? slot_voxel<DIM>(p, o, lane * dm::kRun + i) : -1;
      fp[i] = v >= 0 ? p.fp[v] * phase_unit<T, kPoly>(i) : T(0);
      if constexpr (kR2) {
        gx[i] = v >= 0 ? p.gx[v] : T(0);
        gy[i] = v >= 0 ? p.gy[v] : T(0);
        gz[i] = (DIM == 3 && v >= 0) ? p.gz[v] : T(0);
      }
    }
  }
#pragma unroll
  for (int k = 0; k < 2 * CT * dm::kRun; ++k) acc[k][tid] = 0.0;

  const std::int64_t j0 = static_cast<std::int64_t>(blockIdx.y) * samples_per_split;
  const std::int64_t j1 =
      j0 + samples_per_split < p.num_samples ? j0 + samples_per_split : p.num_samples;
  for (std::int64_t js = j0; js < j1; js += kStage) {
    __syncthreads();
    {
      const std::int64_t j = js + tid;
      const bool in = j < j1;
      // Odd samples are evaluated half a cycle on with their value negated (see shifted()).
      const T sign = shifted(j) ? T(-1) : T(1);
      ss[tid] = in ? p.st[j] : Sample4<T>{T(0), T(0), T(0), T(0)};
      T base_add = shifted(j) ? T(0.5) : T(0);
      if constexpr (kPolar) {
        const Cplx<T> s = in ? smp[j] : Cplx<T>{T(0), T(0)};
        const T a = hypot(s.re, s.im);
        sv[0][tid] = Cplx<T>{sign * a, T(2) * sign * a};
        base_add += (s.re == T(0) && s.im == T(0)) ? T(0) : atan2(s.im, s.re) * kTwoPiInv;
      } else {
#pragma unroll
        for (int c = 0; c < CT; ++c) {
          const Cplx<T> s = in ? smp[c * p.num_samples + j] : Cplx<T>{T(0), T(0)};
          sv[c][tid] = Cplx<T>{sign * s.re, sign * s.im};
        }
      }
      const SampleD sdj = in ? p.sd[j] : SampleD{0.0, 0.0, 0.0, 0.0};
#pragma unroll
      for (int w = 0; w < kAdjointTilesPerBlock; ++w) {
        const std::int64_t bw = tile0 + w;
        T beta = T(0);
        if (bw < p.num_tiles) {
          std::int64_t o[3];
          double cs[3];
          tile_geometry<DIM>(p, bw, o, cs);
          beta = tile_beta<T>(sdj, cs, p.fref[bw]);
        }
        sw[w][tid] = beta + base_add;  // s e^{2πiφ} = |s| e^{2πi(φ + arg s/2π)}
      }
    }
    __syncthreads();
    if (!active) continue;

    T are[CT][dm::kRun], aim[CT][dm::kRun];
#pragma unroll
    for (int c = 0; c < CT; ++c)
#pragma unroll
      for (int i = 0; i < dm::kRun; ++i) are[c][i] = aim[c][i] = T(0);
    T sum_amp = T(0);  // Σ |s| of this stage (the "1" of cos 2θ = 1 − 2 sin²θ)
    const int nstage = j1 - js < kStage ? static_cast<int>(j1 - js) : kStage;
    // Eight samples at a time give the scheduler independent pairs; double has no registers
    // to spare for that.
    constexpr int kUnroll = std::is_same_v<T, float> ? 8 : 1;
#pragma unroll kUnroll
    for (int jj = 0; jj < nstage; ++jj) {
      const Sample4<T> s = ss[jj];
      Cplx<T> v[CT];
#pragma unroll
      for (int c = 0; c < CT; ++c) v[c] = sv[c][jj];
      T q0 = sw[warp][jj] + s.ux * dxc + s.uy * dy + s.uz * dz;
      q0 -= dm::round_nearest(q0);
      const T q0r = q0 * kTwoPi;
      if constexpr (kHalfAngle) sum_amp += v[0].re;
#pragma unroll
      for (int i = 0; i < dm::kRun; ++i) {
        const bool sfu = sfu_pair<T, kPoly>(i);
        const T unit = phase_unit<T, kPoly>(i);
        const T q = (sfu ? q0r : q0) + s.ux * ((T(i) - T(3.5)) * unit) + fp[i] * s.t;
        if (!sfu && kHalfAngle) {
          T sh, ch;
          dm::half_angle(q, &sh, &ch);
          const T x = sh * v[0].im;  // 2|s| sinθ
          are[0][i] -= x * sh;
          aim[0][i] += x * ch;
          continue;
        }
        T sn, cn;
        pair_sincos(sfu, q, &sn, &cn);
        T w = T(1);
        if constexpr (kR2) w = r2_factor<DIM>(s.ux, s.uy, s.uz, gx[i], gy[i], gz[i], s.t);
        if constexpr (kPolar) {
          const T a = v[0].re * w;
          are[0][i] += a * cn;
          aim[0][i] += a * sn;
        } else {
          if constexpr (kR2) {
            sn *= w;
            cn *= w;
          }
          // s e^{iθ} = (sr cos θ − si sin θ) + i (si cos θ + sr sin θ)
#pragma unroll
          for (int c = 0; c < CT; ++c) {
            are[c][i] += v[c].re * cn - v[c].im * sn;
            aim[c][i] += v[c].im * cn + v[c].re * sn;
          }
        }
      }
    }
#pragma unroll
    for (int c = 0; c < CT; ++c)
#pragma unroll
      for (int i = 0; i < dm::kRun; ++i) {
        const bool poly_half = kHalfAngle && !sfu_pair<T, kPoly>(i);
        acc[2 * (c * dm::kRun + i)][tid] +=
            static_cast<double>(are[c][i]) + (poly_half ? static_cast<double>(sum_amp) : 0.0);
        acc[2 * (c * dm::kRun + i) + 1][tid] += static_cast<double>(aim[c][i]);
      }
  }
  if (!active) return;
  out += blockIdx.y * split_stride;
#pragma unroll
  for (int i = 0; i < dm::kRun; ++i) {
    const std::int64_t v = slot_voxel<DIM>(p, o, lane * dm::kRun + i);
    if (v < 0) continue;
#pragma unroll
    for (int c = 0; c < CT; ++c)
      out[c * out_stride + v] = Cplx<T>{static_cast<T>(acc[2 * (c * dm::kRun + i)][tid]),
                                        static_cast<T>(acc[2 * (c * dm::kRun + i) + 1][tid])};
  }
}

}  // namespace fieldft::cuda::dft
