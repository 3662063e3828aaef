// Template instance selection for the CUDA-core kernels; included by dft_direct_f.cu and
// dft_direct_d.cu (one translation unit per precision keeps builds parallel).
#pragma once

#include <type_traits>

#include "cuda/cuda_check.cuh"
#include "cuda/dft_direct.cuh"
#include "cuda/dft_launch.cuh"

namespace fieldft::cuda::dft {

// Calls f.template operator()<DIM, R2, CT, POLY>() for the instance that serves (p, a) in the
// forward or the adjoint direction. Instances: float: POLY 0–3 without R2, and kPolyWarps
// (warp-specialised) for the forward kernel with one image per pass (otherwise it runs as 2,
// the same share of pairs: a warp-specialised adjoint measured slower than the mixed one);
// POLY 0 with R2 (its sinc already loads the FMA pipe); double: POLY 0 (always the polynomial).
template <class T, class F>
void dispatch_direct(const Params<T>& p, const DirectArgs& a, bool forward, F&& f) {
  int poly = (std::is_same_v<T, double> || a.r2) ? 0 : (a.poly < 0 ? 0 : (a.poly > kPolyWarps ? kPolyWarps : a.poly));
  if (poly == kPolyWarps && (!forward || a.ct != 1)) poly = 2;
  auto by_poly = [&]<int DIM, bool R2, int CT>() {
    if constexpr (std::is_same_v<T, float> && !R2) {
      switch (poly) {
        case 1: return f.template operator()<DIM, R2, CT, 1>();
        case 2: return f.template operator()<DIM, R2, CT, 2>();
        case 3: return f.template operator()<DIM, R2, CT, 3>();
        case kPolyWarps:
          if constexpr (CT == 1) return f.template operator()<DIM, R2, CT, kPolyWarps>();
          [[fallthrough]];
        default: return f.template operator()<DIM, R2, CT, 0>();
      }
    } else {
      return f.template operator()<DIM, R2, CT, 0>();
    }
  };
  auto by_ct = [&]<int DIM, bool R2>() {
    if (a.ct == 1) return by_poly.template operator()<DIM, R2, 1>();
    return by_poly.template operator()<DIM, R2, 2>();
  };
  auto by_r2 = [&]<int DIM>() {
    if (a.r2) return by_ct.template operator()<DIM, true>();
    return by_ct.template operator()<DIM, false>();
  };
  if (p.dim == 3) return by_r2.template operator()<3>();
  return by_r2.template operator()<2>();
}

template <class T>
void launch_forward_direct(const Params<T>& p, const DirectArgs& a, const Cplx<T>* img,
                           Cplx<T>* out, std::int64_t out_stride) {
  dispatch_direct(p, a, true, [&]<int DIM, bool R2, int CT, int POLY>() {
    const std::int64_t fbs = forward_block_samples<T, CT, POLY>();
    const std::int64_t bx = (p.num_samples + fbs - 1) / fbs;
    if (bx == 0) return;
    const dim3 grid(static_cast<unsigned>(bx), static_cast<unsigned>(a.splits));
    dft_forward_direct<T, DIM, R2, CT, POLY><<<grid, direct_threads<T, CT, POLY>(), 0, a.stream>>>(
        p, img, out, out_stride, a.split_stride, a.per_split);
    FIELDFT_CUDA_CHECK_LAUNCH();
  });
}

template <class T>
void launch_adjoint_direct(const Params<T>& p, const DirectArgs& a, const Cplx<T>* smp,
                           Cplx<T>* out, std::int64_t out_stride) {
  const std::int64_t bx = (p.num_tiles + kAdjointTilesPerBlock - 1) / kAdjointTilesPerBlock;
  const dim3 grid(static_cast<unsigned>(bx), static_cast<unsigned>(a.splits));
  dispatch_direct(p, a, false, [&]<int DIM, bool R2, int CT, int POLY>() {
    dft_adjoint_direct<T, DIM, R2, CT, POLY><<<grid, kDirectBlock, 0, a.stream>>>(
        p, smp, out, out_stride, a.split_stride, a.per_split);
    FIELDFT_CUDA_CHECK_LAUNCH();
  });
}

template <class T>
int direct_occupancy(bool forward, const Params<T>& p, const DirectArgs& a) {
  int n = 0;
  dispatch_direct(p, a, forward, [&]<int DIM, bool R2, int CT, int POLY>() {
    if (forward)
      FIELDFT_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
          &n, dft_forward_direct<T, DIM, R2, CT, POLY>, direct_threads<T, CT, POLY>(), 0));
    else
      FIELDFT_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
          &n, dft_adjoint_direct<T, DIM, R2, CT, POLY>, kDirectBlock, 0));
  });
  return n > 0 ? n : 1;
}

template <class T>
int direct_forward_block_samples(const Params<T>& p, const DirectArgs& a) {
  int n = 0;
  dispatch_direct(p, a, true, [&]<int DIM, bool R2, int CT, int POLY>() { n = forward_block_samples<T, CT, POLY>(); });
  return n;
}

}  // namespace fieldft::cuda::dft
