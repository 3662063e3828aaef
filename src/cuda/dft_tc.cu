// Tensor-core field-corrected DFT: launchers, per-image scaling, fragment preparation, and the
// reduction of split partial sums (shared with the CUDA-core path).
#include "cuda/cuda_check.cuh"
#include "cuda/dft_launch.cuh"
#include "cuda/dft_tc.cuh"

namespace fieldft::cuda::dft {

namespace {

template <class F>
void dispatch_tc(const Params<float>& p, const TcArgs& a, F&& f) {
  // Grouped setups are never R2* ones (the engine refuses them): no such instances.
  auto by_groups = [&]<int DIM, bool R2, int NT>() {
    if constexpr (!R2)
      if (a.groups.src != nullptr) return f.template operator()<DIM, R2, NT, true>();
    return f.template operator()<DIM, R2, NT, false>();
  };
  auto by_nt = [&]<int DIM, bool R2>() {
    switch (a.nt) {
      case 1: return by_groups.template operator()<DIM, R2, 1>();
      case 2: return by_groups.template operator()<DIM, R2, 2>();
      case 4: return by_groups.template operator()<DIM, R2, 4>();
      default: return by_groups.template operator()<DIM, R2, 8>();
    }
  };
  auto by_r2 = [&]<int DIM>() {
    if (a.r2) return by_nt.template operator()<DIM, true>();
    return by_nt.template operator()<DIM, false>();
  };
  if (p.dim == 3) return by_r2.template operator()<3>();
  return by_r2.template operator()<2>();
}

template <class K>
void allow_smem(K kernel, int bytes) {
  FIELDFT_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
}

template <class T>
__global__ void dft_reduce_splits(const Cplx<T>* __restrict__ part, std::int64_t count,
                                  std::int64_t splits, Cplx<T>* __restrict__ out) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    double re = 0, im = 0;
    for (std::int64_t s = 0; s < splits; ++s) {
      const Cplx<T> v = part[s * count + i];
      re += static_cast<double>(v.re);
      im += static_cast<double>(v.im);
    }
    out[i] = Cplx<T>{static_cast<T>(re), static_cast<T>(im)};
  }
}

unsigned grid_for(std::int64_t n, int block) {
  const std::int64_t g = (n + block - 1) / block;
  return static_cast<unsigned>(g < 65535 * 16 ? (g > 0 ? g : 1) : 65535 * 16);
}

}  // namespace

void launch_forward_tc(const Params<float>& p, const TcArgs& a, const uint4* frag, Cplx<float>* out,
                       std::int64_t out_stride) {
  const std::int64_t bx = (p.num_samples + kTcForwardSamples - 1) / kTcForwardSamples;
  if (bx == 0) return;
  const dim3 grid(static_cast<unsigned>(bx), static_cast<unsigned>(a.splits));
  dispatch_tc(p, a, [&]<int DIM, bool R2, int NT, bool G>() {
    constexpr int kSmem = tc_smem_bytes(NT);
    allow_smem(dft_forward_tc<DIM, R2, NT, G>, kSmem);
    dft_forward_tc<DIM, R2, NT, G><<<grid, kTcBlock, kSmem, a.stream>>>(
        p, frag, out, out_stride, a.split_stride, a.images, a.inv_scale, a.per_split, a.groups);
    FIELDFT_CUDA_CHECK_LAUNCH();
  });
}

void launch_adjoint_tc(const Params<float>& p, const TcArgs& a, const uint4* frag, Cplx<float>* out,
                       std::int64_t out_stride) {
  const dim3 grid(static_cast<unsigned>(2 * p.num_tiles), static_cast<unsigned>(a.splits));
  dispatch_tc(p, a, [&]<int DIM, bool R2, int NT, bool G>() {
    constexpr int kSmem = tc_smem_bytes(NT);
    allow_smem(dft_adjoint_tc<DIM, R2, NT, G>, kSmem);
    dft_adjoint_tc<DIM, R2, NT, G><<<grid, kTcBlock, kSmem, a.stream>>>(
        p, frag, out, out_stride, a.split_stride, a.images, a.inv_scale, a.per_split, a.groups);
    FIELDFT_CUDA_CHECK_LAUNCH();
  });
}

int tc_occupancy(bool forward, const Params<float>& p, const TcArgs& a) {
  int n = 0;
  dispatch_tc(p, a, [&]<int DIM, bool R2, int NT, bool G>() {
    constexpr int kSmem = tc_smem_bytes(NT);
    if (forward) {
      allow_smem(dft_forward_tc<DIM, R2, NT, G>, kSmem);
      FIELDFT_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, dft_forward_tc<DIM, R2, NT, G>,
                                                                       kTcBlock, kSmem));
    } else {
      allow_smem(dft_adjoint_tc<DIM, R2, NT, G>, kSmem);
      FIELDFT_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, dft_adjoint_tc<DIM, R2, NT, G>,
                                                                       kTcBlock, kSmem));
    }
  });
  return n > 0 ? n : 1;
}

int tc_forward_block_samples() { return kTcForwardSamples; }
int tc_adjoint_stage() { return kTcAdjointStage; }
int tc_max_images() { return kTcMaxImages; }

void launch_scales(const Cplx<float>* x, std::int64_t len, int images, unsigned* bits, float* scale,
                   float* inv_scale, cudaStream_t stream) {
  FIELDFT_CUDA_CHECK(cudaMemsetAsync(bits, 0, sizeof(unsigned) * images, stream));
  if (len > 0) {
    const std::int64_t blocks = (len + 255) / 256;
    const dim3 grid(static_cast<unsigned>(blocks < 1024 ? blocks : 1024), static_cast<unsigned>(images));
    dft_absmax<<<grid, 256, 0, stream>>>(x, len, len, bits);
    FIELDFT_CUDA_CHECK_LAUNCH();
  }
  dft_scales<<<(images + 127) / 128, 128, 0, stream>>>(bits, images, scale, inv_scale);
  FIELDFT_CUDA_CHECK_LAUNCH();
}

std::int64_t forward_frag_count(const Params<float>& p, int nt) {
  return p.num_tiles * 32 * nt * 32;
}

std::int64_t adjoint_frag_count(std::int64_t num_samples, int nt) {
  return (num_samples + 7) / 8 * nt * 32;
}

void launch_forward_frags(const Params<float>& p, int nt, const Cplx<float>* img, int images,
                          const float* scale, uint4* frag, cudaStream_t stream) {
  const std::int64_t n = forward_frag_count(p, nt);
  if (n == 0) return;
  const unsigned grid = static_cast<unsigned>((n + 255) / 256);
  auto go = [&]<int DIM, int NT>() {
    dft_forward_frags<DIM, NT><<<grid, 256, 0, stream>>>(p, img, images, scale, frag);
    FIELDFT_CUDA_CHECK_LAUNCH();
  };
  auto by_nt = [&]<int DIM>() {
    switch (nt) {
      case 1: return go.template operator()<DIM, 1>();
      case 2: return go.template operator()<DIM, 2>();
      case 4: return go.template operator()<DIM, 4>();
      default: return go.template operator()<DIM, 8>();
    }
  };
  if (p.dim == 3)
    by_nt.template operator()<3>();
  else
    by_nt.template operator()<2>();
}

void launch_adjoint_frags(const Cplx<float>* smp, std::int64_t num_samples, std::int64_t stride,
                          const std::int64_t* src, int nt, int images, const float* scale, uint4* frag,
                          cudaStream_t stream) {
  const std::int64_t ksteps = (num_samples + 7) / 8;
  const std::int64_t n = adjoint_frag_count(num_samples, nt);
  if (n == 0) return;
  const unsigned grid = static_cast<unsigned>((n + 255) / 256);
  auto go = [&]<int NT>() {
    dft_adjoint_frags<NT><<<grid, 256, 0, stream>>>(smp, num_samples, stride, src, ksteps, images, scale, frag);
    FIELDFT_CUDA_CHECK_LAUNCH();
  };
  switch (nt) {
    case 1: go.template operator()<1>(); break;
    case 2: go.template operator()<2>(); break;
    case 4: go.template operator()<4>(); break;
    default: go.template operator()<8>(); break;
  }
}

template <class T>
void launch_reduce_splits(const Cplx<T>* part, std::int64_t count, std::int64_t splits, Cplx<T>* out,
                          cudaStream_t stream) {
  if (count == 0) return;
  dft_reduce_splits<T><<<grid_for(count, 256), 256, 0, stream>>>(part, count, splits, out);
  FIELDFT_CUDA_CHECK_LAUNCH();
}

template void launch_reduce_splits<float>(const Cplx<float>*, std::int64_t, std::int64_t, Cplx<float>*,
                                          cudaStream_t);
template void launch_reduce_splits<double>(const Cplx<double>*, std::int64_t, std::int64_t,
                                           Cplx<double>*, cudaStream_t);

}  // namespace fieldft::cuda::dft
