// CPU loops of the field-corrected DFT. The math per pair is fieldft/detail/dft_math.hpp; here
// are only the loops: vector lanes over samples (forward) or over a tile's voxels (adjoint).
#include "cpu/dft_cpu_kernels.hpp"

#include <algorithm>

#include "fieldft/detail/dft_math.hpp"

#if defined(__GNUC__) && (defined(__x86_64__) || defined(_M_X64)) && !defined(__clang__)
#define FIELDFT_DFT_CLONES __attribute__((target_clones("default", "arch=x86-64-v3", "arch=x86-64-v4")))
#else
#define FIELDFT_DFT_CLONES
#endif

#if defined(__GNUC__)
#define FIELDFT_DFT_INLINE [[gnu::always_inline]] inline
#else
#define FIELDFT_DFT_INLINE inline
#endif

namespace fieldft::cpu::dft {

namespace {

namespace dm = fieldft::detail::dft;

// Π_d sinc(u_d + G_d t): the R2* factor of one pair.
template <class T, bool k3D>
FIELDFT_DFT_INLINE T r2_factor(T ux, T uy, T uz, T gx, T gy, T gz, T t) {
  T b = dm::sinc(ux + gx * t) * dm::sinc(uy + gy * t);
  if constexpr (k3D) b *= dm::sinc(uz + gz * t);
  return b;
}

// Adds v_c·e^{∓iθ} over N lanes for each image c (value v_c = vals[c·stride]) to the image's
// accumulators are/aim + c·N, given cos θ and sin θ per lane: e^{−iθ} (forward) when kConj,
// e^{+iθ} (adjoint) otherwise. Images with v_c = 0 are skipped.
template <bool kConj, int N, class T>
FIELDFT_DFT_INLINE void accumulate_images(const std::complex<T>* vals, std::int64_t stride, std::int64_t nimg,
                                          const T* __restrict ec, const T* __restrict es, T* are, T* aim) {
  for (std::int64_t c = 0; c < nimg; ++c) {
    const std::complex<T> val = vals[c * stride];
    const T vr = val.real(), vi = val.imag();
    if (vr == T(0) && vi == T(0)) continue;
    T* __restrict ar = are + c * N;
    T* __restrict ai = aim + c * N;
    if constexpr (kConj) {
      // v e^{−iθ} = (vr cos θ + vi sin θ) + i (vi cos θ − vr sin θ)
#pragma omp simd
      for (int l = 0; l < N; ++l) {
        ar[l] += vr * ec[l] + vi * es[l];
        ai[l] += vi * ec[l] - vr * es[l];
      }
    } else {
      // v e^{iθ} = (vr cos θ − vi sin θ) + i (vi cos θ + vr sin θ)
#pragma omp simd
      for (int l = 0; l < N; ++l) {
        ar[l] += vr * ec[l] - vi * es[l];
        ai[l] += vi * ec[l] + vr * es[l];
      }
    }
  }
}

template <class T, bool kR2, bool k3D>
FIELDFT_DFT_INLINE void forward_lanes(const CpuView<T>& v, const T* amp, const T* arg,
                                      const std::complex<T>* img, std::complex<T>* out,
                                      std::int64_t j0, T* work, double* dwork) {
  constexpr int S = kLanes;
  const std::int64_t nimg = v.images;
  T* __restrict beta = work;
  T* __restrict ec = beta + S;
  T* __restrict es = ec + S;
  T* __restrict are = es + S;
  T* __restrict aim = are + nimg * S;
  // Each tile's 256 terms are summed in T, the tile sums in double: the rounding error of the
  // sum over N voxels then grows like √256 instead of √N (√N·6e-8 = 3e-5 at 64³ in float).
  double* __restrict dre = dwork;
  double* __restrict dimag = dre + nimg * S;
  std::fill(dre, dre + 2 * nimg * S, 0.0);
  const T* __restrict ux = v.ux + j0;
  const T* __restrict uy = v.uy + j0;
  const T* __restrict uz = v.uz + j0;
  const T* __restrict tt = v.t + j0;
  const double* __restrict uxd = v.uxd + j0;
  const double* __restrict uyd = v.uyd + j0;
  const double* __restrict uzd = v.uzd + j0;
  const double* __restrict td = v.td + j0;

  for (std::int64_t b = 0; b < v.num_tiles; ++b) {
    const double csx = v.csx[b], csy = v.csy[b], csz = v.csz[b], fref = v.fref[b];
#pragma omp simd
    for (int s = 0; s < S; ++s)
      beta[s] = static_cast<T>(dm::tile_base(uxd[s], uyd[s], uzd[s], td[s], csx, csy, csz, fref));
    std::fill(are, are + 2 * nimg * S, T(0));
    const std::int64_t slot0 = b * kTileVoxels;
    for (int e = 0; e < kTileVoxels; ++e) {
      const std::int64_t vi = v.vidx[slot0 + e];
      if (vi < 0) continue;
      const T dx = v.dx[slot0 + e], dy = v.dy[slot0 + e], dz = v.dz[slot0 + e];
      const T fp = v.fp[slot0 + e];
      T gx = 0, gy = 0, gz = 0;
      if constexpr (kR2) {
        gx = v.gx[slot0 + e];
        gy = v.gy[slot0 + e];
        gz = v.gz[slot0 + e];
      }
      if (nimg == 1) {
        // Polar form: m e^{−2πiφ} = |m| e^{−2πi(φ − arg m/2π)}, two FMAs per pair.
        const T a = amp[vi], ph = arg[vi];
        if (a == T(0)) continue;
#pragma omp simd
        for (int s = 0; s < S; ++s) {
          const T q = beta[s] + ux[s] * dx + uy[s] * dy + uz[s] * dz + fp * tt[s] - ph;
          T sn, cs;
          dm::sincos_2pi(q, &sn, &cs);
          T w = a;
          if constexpr (kR2) w *= r2_factor<T, k3D>(ux[s], uy[s], uz[s], gx, gy, gz, tt[s]);
          are[s] += w * cs;
          aim[s] -= w * sn;
        }
      } else {
#pragma omp simd
        for (int s = 0; s < S; ++s) {
          const T q = beta[s] + ux[s] * dx + uy[s] * dy + uz[s] * dz + fp * tt[s];
          T sn, cs;
          dm::sincos_2pi(q, &sn, &cs);
          if constexpr (kR2) {
            const T w = r2_factor<T, k3D>(ux[s], uy[s], uz[s], gx, gy, gz, tt[s]);
            sn *= w;
            cs *= w;
          }
          ec[s] = cs;
          es[s] = sn;
        }
        accumulate_images<true, S>(img + vi, v.num_voxels, nimg, ec, es, are, aim);
      }
    }
#pragma omp simd
    for (std::int64_t i = 0; i < 2 * nimg * S; ++i) dre[i] += are[i];
  }
  const int jn = static_cast<int>(std::min<std::int64_t>(S, v.num_samples - j0));
  for (std::int64_t c = 0; c < nimg; ++c)
    for (int s = 0; s < jn; ++s)
      out[c * v.num_samples + j0 + s] =
          std::complex<T>(static_cast<T>(dre[c * S + s]), static_cast<T>(dimag[c * S + s]));
}

template <class T, bool kR2, bool k3D>
FIELDFT_DFT_INLINE void adjoint_tile(const CpuView<T>& v, const T* amp, const T* arg,
                                     const std::complex<T>* smp, std::complex<T>* out,
                                     std::int64_t b, T* work, double* dwork) {
  constexpr int V = kTileVoxels;
  const std::int64_t nimg = v.images;
  T* __restrict ec = work;
  T* __restrict es = ec + V;
  T* __restrict are = es + V;
  T* __restrict aim = are + nimg * V;
  std::fill(are, are + 2 * nimg * V, T(0));
  // Blocks of kSampleBlock terms are summed in T, the block sums in double (see forward_lanes).
  double* __restrict dre = dwork;
  double* __restrict dimag = dre + nimg * V;
  std::fill(dre, dre + 2 * nimg * V, 0.0);
  const std::int64_t slot0 = b * V;
  const T* __restrict dx = v.dx + slot0;
  const T* __restrict dy = v.dy + slot0;
  const T* __restrict dz = v.dz + slot0;
  const T* __restrict fp = v.fp + slot0;
  const T* __restrict gx = kR2 ? v.gx + slot0 : nullptr;
  const T* __restrict gy = kR2 ? v.gy + slot0 : nullptr;
  const T* __restrict gz = kR2 ? v.gz + slot0 : nullptr;
  const double csx = v.csx[b], csy = v.csy[b], csz = v.csz[b], fref = v.fref[b];
  auto flush = [&] {
#pragma omp simd
    for (std::int64_t i = 0; i < 2 * nimg * V; ++i) {
      dre[i] += are[i];
      are[i] = T(0);
    }
  };

  for (std::int64_t j = 0; j < v.num_samples; ++j) {
    if (j % kSampleBlock == 0 && j > 0) flush();
    T a = 1, w;
    const T beta = static_cast<T>(
        dm::tile_base(v.uxd[j], v.uyd[j], v.uzd[j], v.td[j], csx, csy, csz, fref));
    if (nimg == 1) {
      a = amp[j];
      if (a == T(0)) continue;
      w = beta + arg[j];  // s e^{2πiφ} = |s| e^{2πi(φ + arg s/2π)}
    } else {
      w = beta;
    }
    const T ux = v.ux[j], uy = v.uy[j], uz = v.uz[j], t = v.t[j];
    if (nimg == 1) {
#pragma omp simd
      for (int e = 0; e < V; ++e) {
        const T q = w + ux * dx[e] + uy * dy[e] + uz * dz[e] + fp[e] * t;
        T sn, cs;
        dm::sincos_2pi(q, &sn, &cs);
        T f = a;
        if constexpr (kR2) f *= r2_factor<T, k3D>(ux, uy, uz, gx[e], gy[e], gz[e], t);
        are[e] += f * cs;
        aim[e] += f * sn;
      }
    } else {
#pragma omp simd
      for (int e = 0; e < V; ++e) {
        const T q = w + ux * dx[e] + uy * dy[e] + uz * dz[e] + fp[e] * t;
        T sn, cs;
        dm::sincos_2pi(q, &sn, &cs);
        if constexpr (kR2) {
          const T f = r2_factor<T, k3D>(ux, uy, uz, gx[e], gy[e], gz[e], t);
          sn *= f;
          cs *= f;
        }
        ec[e] = cs;
        es[e] = sn;
      }
      accumulate_images<false, V>(smp + j, v.num_samples, nimg, ec, es, are, aim);
    }
  }
  flush();
  for (int e = 0; e < V; ++e) {
    const std::int64_t vi = v.vidx[slot0 + e];
    if (vi < 0) continue;
    for (std::int64_t c = 0; c < nimg; ++c)
      out[c * v.num_voxels + vi] =
          std::complex<T>(static_cast<T>(dre[c * V + e]), static_cast<T>(dimag[c * V + e]));
  }
}

template <class T>
FIELDFT_DFT_INLINE void forward_dispatch(const CpuView<T>& v, const T* amp, const T* arg,
                                         const std::complex<T>* img, std::complex<T>* out,
                                         std::int64_t j0, T* work, double* dwork) {
  if (v.r2) {
    if (v.dim == 3)
      forward_lanes<T, true, true>(v, amp, arg, img, out, j0, work, dwork);
    else
      forward_lanes<T, true, false>(v, amp, arg, img, out, j0, work, dwork);
  } else {
    forward_lanes<T, false, false>(v, amp, arg, img, out, j0, work, dwork);
  }
}

template <class T>
FIELDFT_DFT_INLINE void adjoint_dispatch(const CpuView<T>& v, const T* amp, const T* arg,
                                         const std::complex<T>* smp, std::complex<T>* out,
                                         std::int64_t b, T* work, double* dwork) {
  if (v.r2) {
    if (v.dim == 3)
      adjoint_tile<T, true, true>(v, amp, arg, smp, out, b, work, dwork);
    else
      adjoint_tile<T, true, false>(v, amp, arg, smp, out, b, work, dwork);
  } else {
    adjoint_tile<T, false, false>(v, amp, arg, smp, out, b, work, dwork);
  }
}

}  // namespace

FIELDFT_DFT_CLONES
void dft_cpu_forward_lanes(const CpuView<float>& v, const float* amp, const float* arg,
                           const std::complex<float>* img, std::complex<float>* out,
                           std::int64_t j0, float* work, double* dwork) {
  forward_dispatch<float>(v, amp, arg, img, out, j0, work, dwork);
}

FIELDFT_DFT_CLONES
void dft_cpu_forward_lanes(const CpuView<double>& v, const double* amp, const double* arg,
                           const std::complex<double>* img, std::complex<double>* out,
                           std::int64_t j0, double* work, double* dwork) {
  forward_dispatch<double>(v, amp, arg, img, out, j0, work, dwork);
}

FIELDFT_DFT_CLONES
void dft_cpu_adjoint_tile(const CpuView<float>& v, const float* amp, const float* arg,
                          const std::complex<float>* smp, std::complex<float>* out, std::int64_t b,
                          float* work, double* dwork) {
  adjoint_dispatch<float>(v, amp, arg, smp, out, b, work, dwork);
}

FIELDFT_DFT_CLONES
void dft_cpu_adjoint_tile(const CpuView<double>& v, const double* amp, const double* arg,
                          const std::complex<double>* smp, std::complex<double>* out,
                          std::int64_t b, double* work, double* dwork) {
  adjoint_dispatch<double>(v, amp, arg, smp, out, b, work, dwork);
}

const char* dft_cpu_isa() noexcept {
#if defined(__GNUC__) && (defined(__x86_64__) || defined(_M_X64)) && !defined(__clang__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("x86-64-v4")) return "x86-64-v4 (AVX-512)";
  if (__builtin_cpu_supports("x86-64-v3")) return "x86-64-v3 (AVX2, FMA)";
  return "x86-64 (SSE2)";
#else
  return "compiler default";
#endif
}

}  // namespace fieldft::cpu::dft
