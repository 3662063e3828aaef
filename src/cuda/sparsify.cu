// CUDA kernels of the sparsifying operators (declarations and contract in src/cuda/sparsify.hpp):
// grid-stride loops over the output elements, each evaluating the per-point function shared with
// the host (include/fieldft/detail/sparsify.hpp). The geometry travels by value as a kernel
// argument (a few hundred bytes), so a launch needs no device memory of its own. The stencils
// read neighbours at the strides of the image; L1/L2 serve the reuse between threads.
#include <cuda_runtime.h>

#include <complex>
#include <cstdint>

#include "cuda/cuda_check.cuh"
#include "cuda/device_utils.cuh"
#include "cuda/sparsify.hpp"

namespace fieldft::cuda::sparsify {

namespace {

namespace ds = detail::sparsify;
using detail::Cplx;

constexpr int kThreads = 256;
constexpr std::int64_t kMaxGrid = 8192;  // grid cap; a grid-stride loop covers the rest

unsigned grid_for(std::int64_t n) {
  const std::int64_t blocks = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(blocks < kMaxGrid ? blocks : kMaxGrid);
}

__device__ __forceinline__ std::int64_t first_index() {
  return static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ std::int64_t grid_stride() { return static_cast<std::int64_t>(gridDim.x) * blockDim.x; }

enum class DiffKind : int { kForward, kAdjoint, kNormal };

template <class T, DiffKind kKind>
__global__ void diff_kernel(DiffGeometry g, std::int64_t count, const Cplx<T>* __restrict__ in,
                            Cplx<T>* __restrict__ out) {
  for (std::int64_t i = first_index(); i < count; i += grid_stride()) {
    if constexpr (kKind == DiffKind::kForward)
      ds::diff_forward_point(g, in, out, i);
    else if constexpr (kKind == DiffKind::kAdjoint)
      ds::diff_adjoint_point(g, in, out, i);
    else
      ds::diff_normal_point(g, in, out, i);
  }
}

template <class T>
__global__ void wavelet_pass_kernel(WaveletPass<T> p, std::int64_t count, const Cplx<T>* __restrict__ src,
                                    Cplx<T>* __restrict__ dst) {
  for (std::int64_t t = first_index(); t < count; t += grid_stride()) ds::wavelet_pass_point(p, src, dst, t);
}

using ds::as_cplx;

template <class T, DiffKind kKind>
void launch_diff(int device, void* stream, const DiffGeometry& g, std::int64_t count, const std::complex<T>* in,
                 std::complex<T>* out) {
  if (count == 0) return;
  DeviceGuard guard(device);
  diff_kernel<T, kKind><<<grid_for(count), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(g, count, as_cplx(in),
                                                                                            as_cplx(out));
  FIELDFT_CUDA_CHECK_LAUNCH();
}

}  // namespace

template <class T>
void diff_forward(int device, void* stream, const DiffGeometry& g, std::int64_t count, const std::complex<T>* x,
                  std::complex<T>* y) {
  launch_diff<T, DiffKind::kForward>(device, stream, g, count, x, y);
}

template <class T>
void diff_adjoint(int device, void* stream, const DiffGeometry& g, std::int64_t count, const std::complex<T>* y,
                  std::complex<T>* x) {
  launch_diff<T, DiffKind::kAdjoint>(device, stream, g, count, y, x);
}

template <class T>
void diff_normal(int device, void* stream, const DiffGeometry& g, std::int64_t count, const std::complex<T>* x,
                 std::complex<T>* z) {
  launch_diff<T, DiffKind::kNormal>(device, stream, g, count, x, z);
}

template <class T>
void wavelet_pass(int device, void* stream, const WaveletPass<T>& p, std::int64_t count, const std::complex<T>* src,
                  std::complex<T>* dst) {
  if (count == 0) return;
  DeviceGuard guard(device);
  wavelet_pass_kernel<T><<<grid_for(count), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(p, count, as_cplx(src),
                                                                                             as_cplx(dst));
  FIELDFT_CUDA_CHECK_LAUNCH();
}

#define FIELDFT_SPARSIFY_INSTANTIATE(T)                                                                             \
  template void diff_forward<T>(int, void*, const DiffGeometry&, std::int64_t, const std::complex<T>*,              \
                                std::complex<T>*);                                                                   \
  template void diff_adjoint<T>(int, void*, const DiffGeometry&, std::int64_t, const std::complex<T>*,              \
                                std::complex<T>*);                                                                   \
  template void diff_normal<T>(int, void*, const DiffGeometry&, std::int64_t, const std::complex<T>*,               \
                               std::complex<T>*);                                                                    \
  template void wavelet_pass<T>(int, void*, const WaveletPass<T>&, std::int64_t, const std::complex<T>*,            \
                                std::complex<T>*);

FIELDFT_SPARSIFY_INSTANTIATE(float)
FIELDFT_SPARSIFY_INSTANTIATE(double)

#undef FIELDFT_SPARSIFY_INSTANTIATE

}  // namespace fieldft::cuda::sparsify
