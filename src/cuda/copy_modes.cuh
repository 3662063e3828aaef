// Modes <-> fine grid with deconvolution (the same tables as the CPU backend).
#pragma once

#include "cuda/nufft_device.cuh"

namespace fieldft::cuda {

struct ModeMap {
  std::int64_t n[3];
  const std::int64_t* fine_index[3];
};

// to_modes: f = fine * d1 d2 d3 (type 1). Otherwise fine = f * d1 d2 d3 (type 2; fine pre-zeroed).
// A warp takes kCopySegment modes of one row along x (lanes over consecutive modes), so that
// the row's y and z indices and factors are found once per warp; one thread per mode with 64-bit
// divisions took 5.4 us for F's 64^3 modes on an H100.
constexpr int kCopySegment = 256;

template <class T>
__global__ void copy_modes(ModeMap mm, const T* __restrict__ d0, const T* __restrict__ d1, const T* __restrict__ d2,
                           DevGrid g, Cplx<T>* fine, Cplx<T>* f, int nbatch, bool to_modes) {
  const std::int64_t nseg = (mm.n[0] + kCopySegment - 1) / kCopySegment;
  const std::int64_t items = nseg * mm.n[1] * mm.n[2] * nbatch;
  const int lane = threadIdx.x % 32;
  const std::int64_t warps = std::int64_t(gridDim.x) * (blockDim.x / 32);
  for (std::int64_t it = (blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x) / 32; it < items; it += warps) {
    const std::int64_t row = it / nseg, seg = it - row * nseg;
    const std::int64_t p2 = row % mm.n[1], rest = row / mm.n[1], p3 = rest % mm.n[2], b = rest / mm.n[2];
    const T s23 = d1[p2] * d2[p3];
    const std::int64_t grow = b * g.size + (mm.fine_index[2][p3] * g.nf[1] + mm.fine_index[1][p2]) * g.nf[0];
    Cplx<T>* frow = f + row * mm.n[0];
    const std::int64_t end = (seg + 1) * kCopySegment < mm.n[0] ? (seg + 1) * kCopySegment : mm.n[0];
    for (std::int64_t p1 = seg * kCopySegment + lane; p1 < end; p1 += 32) {
      const std::int64_t gi = grow + mm.fine_index[0][p1];
      const T sc = d0[p1] * s23;
      if (to_modes) frow[p1] = fine[gi] * sc;
      else fine[gi] = frow[p1] * sc;
    }
  }
}

}  // namespace fieldft::cuda
