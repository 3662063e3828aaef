#include <algorithm>

#include "cuda/cuda_check.cuh"
#include "cuda/type3_kernels.hpp"

namespace fieldft::cuda {

namespace {

constexpr int kScaleThreads = 256;

unsigned blocks_for(std::int64_t n) {
  return static_cast<unsigned>(std::clamp<std::int64_t>((n + kScaleThreads - 1) / kScaleThreads, 1, 1 << 20));
}

template <class T>
__global__ void scale_by_factor(std::int64_t n, std::int64_t total, const detail::Cplx<T>* in,
                                const detail::Cplx<T>* __restrict__ factor, bool conj_factor, detail::Cplx<T>* out) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < total;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    const detail::Cplx<T> a = in[i], f = factor[i % n];
    const T fi = conj_factor ? -f.im : f.im;
    out[i] = {a.re * f.re - a.im * fi, a.re * fi + a.im * f.re};
  }
}

template <class T>
struct Coords {
  const T* c[3];
};
struct Outputs {
  double* c[3];
};

template <class T>
__global__ void type3_sources(core::Type3Geometry g, std::int64_t m, Coords<T> x, Outputs xg,
                              detail::Cplx<T>* __restrict__ prephase) {
  for (std::int64_t j = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; j < m;
       j += std::int64_t(gridDim.x) * blockDim.x) {
    double xj[3] = {0, 0, 0}, grid[3] = {0, 0, 0};
    for (int d = 0; d < g.dim; ++d) xj[d] = static_cast<double>(x.c[d][j]);
    const double phase = g.isign * core::type3_source(g, xj, grid);
    for (int d = 0; d < g.dim; ++d) xg.c[d][j] = grid[d];
    double sn = 0, cs = 0;
    ::sincos(phase, &sn, &cs);
    prephase[j] = {static_cast<T>(cs), static_cast<T>(sn)};
  }
}

template <class T>
__global__ void type3_targets(core::Type3Geometry g, core::KernelQuadrature q, std::int64_t nk, Coords<T> s,
                              Outputs si, detail::Cplx<T>* __restrict__ postfactor) {
  for (std::int64_t k = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; k < nk;
       k += std::int64_t(gridDim.x) * blockDim.x) {
    double sk[3] = {0, 0, 0}, inner[3] = {0, 0, 0}, psi = 1;
    for (int d = 0; d < g.dim; ++d) sk[d] = static_cast<double>(s.c[d][k]);
    const double phase = g.isign * core::type3_target(g, q, sk, inner, psi);
    for (int d = 0; d < g.dim; ++d) si.c[d][k] = inner[d];
    double sn = 0, cs = 0;
    ::sincos(phase, &sn, &cs);
    postfactor[k] = {static_cast<T>(cs / psi), static_cast<T>(sn / psi)};
  }
}

template <class T, class C>
__global__ void narrow(std::int64_t n, const C* __restrict__ in, T* __restrict__ out) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n;
       i += std::int64_t(gridDim.x) * blockDim.x)
    out[i] = static_cast<T>(in[i]);
}

// Type 3 direct sums (PlanInfo::type3_direct): one thread per output and up to kDirectBatch
// transforms, each pair's phase computed once for them in double (core::type3_direct_phase, the
// CPU backend's arithmetic). Chosen only where the terms are few (core::type3_costs), so the
// plain loop over the inputs, whose coordinates every thread of a warp reads at once, suffices.
constexpr int kDirectBatch = 4;
constexpr int kDirectThreads = 128;
constexpr int kDirectMaxBlocksY = 65535;

template <class T>
__global__ void type3_direct_sums(int dim, double sign, std::int64_t n_out, Coords<T> oc, std::int64_t n_in,
                                  Coords<T> ic, std::int64_t t_first, std::int64_t ntransf,
                                  const detail::Cplx<T>* __restrict__ in, detail::Cplx<T>* __restrict__ out) {
  const std::int64_t t0 = t_first + std::int64_t(blockIdx.y) * kDirectBatch;
  const int nb = static_cast<int>(min(std::int64_t(kDirectBatch), ntransf - t0));
  for (std::int64_t o = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; o < n_out;
       o += std::int64_t(gridDim.x) * blockDim.x) {
    double so[3] = {0, 0, 0};
    for (int d = 0; d < dim; ++d) so[d] = static_cast<double>(oc.c[d][o]);
    double re[kDirectBatch] = {}, im[kDirectBatch] = {};
    for (std::int64_t i = 0; i < n_in; ++i) {
      double xi[3] = {0, 0, 0};
      for (int d = 0; d < dim; ++d) xi[d] = static_cast<double>(ic.c[d][i]);
      double sn = 0, cs = 0;
      ::sincos(core::type3_direct_phase(dim, sign, so, xi), &sn, &cs);
#pragma unroll
      for (int b = 0; b < kDirectBatch; ++b)
        if (b < nb) {
          const detail::Cplx<T> a = in[(t0 + b) * n_in + i];
          re[b] += static_cast<double>(a.re) * cs - static_cast<double>(a.im) * sn;
          im[b] += static_cast<double>(a.re) * sn + static_cast<double>(a.im) * cs;
        }
    }
#pragma unroll
    for (int b = 0; b < kDirectBatch; ++b)
      if (b < nb) out[(t0 + b) * n_out + o] = {static_cast<T>(re[b]), static_cast<T>(im[b])};
  }
}

}  // namespace

template <class T>
void launch_scale_by_factor(cudaStream_t s, std::int64_t n, int nbatch, const detail::Cplx<T>* in,
                            const detail::Cplx<T>* factor, bool conj_factor, detail::Cplx<T>* out) {
  const std::int64_t total = n * nbatch;
  if (total == 0) return;
  scale_by_factor<T><<<blocks_for(total), kScaleThreads, 0, s>>>(n, total, in, factor, conj_factor, out);
  FIELDFT_CUDA_CHECK_LAUNCH();
}

template <class T>
void launch_type3_sources(cudaStream_t s, const core::Type3Geometry& g, std::int64_t m, const T* const* x,
                          double* const* x_grid, detail::Cplx<T>* prephase) {
  if (m == 0) return;
  type3_sources<T><<<blocks_for(m), kScaleThreads, 0, s>>>(g, m, Coords<T>{{x[0], x[1], x[2]}},
                                                           Outputs{{x_grid[0], x_grid[1], x_grid[2]}}, prephase);
  FIELDFT_CUDA_CHECK_LAUNCH();
}

template <class T>
void launch_type3_targets(cudaStream_t s, const core::Type3Geometry& g, const core::KernelQuadrature& q,
                          std::int64_t nk, const T* const* sc, double* const* s_inner, detail::Cplx<T>* postfactor) {
  if (nk == 0) return;
  type3_targets<T><<<blocks_for(nk), kScaleThreads, 0, s>>>(g, q, nk, Coords<T>{{sc[0], sc[1], sc[2]}},
                                                            Outputs{{s_inner[0], s_inner[1], s_inner[2]}}, postfactor);
  FIELDFT_CUDA_CHECK_LAUNCH();
}

template <class T, class C>
void launch_narrow(cudaStream_t s, std::int64_t n, const C* in, T* out) {
  if (n == 0) return;
  narrow<T, C><<<blocks_for(n), kScaleThreads, 0, s>>>(n, in, out);
  FIELDFT_CUDA_CHECK_LAUNCH();
}

template void launch_scale_by_factor<float>(cudaStream_t, std::int64_t, int, const detail::Cplx<float>*,
                                            const detail::Cplx<float>*, bool, detail::Cplx<float>*);
template void launch_scale_by_factor<double>(cudaStream_t, std::int64_t, int, const detail::Cplx<double>*,
                                             const detail::Cplx<double>*, bool, detail::Cplx<double>*);
template void launch_type3_sources<float>(cudaStream_t, const core::Type3Geometry&, std::int64_t, const float* const*,
                                          double* const*, detail::Cplx<float>*);
template void launch_type3_sources<double>(cudaStream_t, const core::Type3Geometry&, std::int64_t,
                                           const double* const*, double* const*, detail::Cplx<double>*);
template void launch_type3_targets<float>(cudaStream_t, const core::Type3Geometry&, const core::KernelQuadrature&,
                                          std::int64_t, const float* const*, double* const*, detail::Cplx<float>*);
template void launch_type3_targets<double>(cudaStream_t, const core::Type3Geometry&, const core::KernelQuadrature&,
                                           std::int64_t, const double* const*, double* const*, detail::Cplx<double>*);
template void launch_narrow<float, double>(cudaStream_t, std::int64_t, const double*, float*);
template void launch_narrow<double, double>(cudaStream_t, std::int64_t, const double*, double*);


template <class T>
void launch_type3_direct_sums(cudaStream_t s, int dim, double sign, std::int64_t n_out, const T* const* out_coords,
                              std::int64_t n_in, const T* const* in_coords, std::int64_t ntransf,
                              const detail::Cplx<T>* in, detail::Cplx<T>* out) {
  const Coords<T> oc{{out_coords[0], out_coords[1], out_coords[2]}};
  const Coords<T> ic{{in_coords[0], in_coords[1], in_coords[2]}};
  const unsigned blocks_x =
      static_cast<unsigned>(std::clamp<std::int64_t>((n_out + kDirectThreads - 1) / kDirectThreads, 1, 1 << 20));
  const std::int64_t per_launch = std::int64_t(kDirectBatch) * kDirectMaxBlocksY;
  for (std::int64_t t0 = 0; t0 < ntransf; t0 += per_launch) {
    const std::int64_t chunks = (std::min(per_launch, ntransf - t0) + kDirectBatch - 1) / kDirectBatch;
    type3_direct_sums<T><<<dim3(blocks_x, static_cast<unsigned>(chunks)), kDirectThreads, 0, s>>>(
        dim, sign, n_out, oc, n_in, ic, t0, ntransf, in, out);
    FIELDFT_CUDA_CHECK_LAUNCH();
  }
}

template void launch_type3_direct_sums<float>(cudaStream_t, int, double, std::int64_t, const float* const*,
                                              std::int64_t, const float* const*, std::int64_t,
                                              const detail::Cplx<float>*, detail::Cplx<float>*);
template void launch_type3_direct_sums<double>(cudaStream_t, int, double, std::int64_t, const double* const*,
                                               std::int64_t, const double* const*, std::int64_t,
                                               const detail::Cplx<double>*, detail::Cplx<double>*);

}  // namespace fieldft::cuda
