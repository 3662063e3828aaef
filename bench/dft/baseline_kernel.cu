// See baseline_kernel.cuh. Compiled without --use_fast_math: sincosf is the accurate libdevice
// routine with its own range reduction of the radian argument.
#include <cuda_runtime.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "baseline_kernel.cuh"

namespace fieldft::bench {

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

constexpr float kTwoPi = 6.283185307179586f;

// s_j = Σ_k m_k exp(−i(2π k_j·r_k + Δω_k t_j))
__global__ void baseline_forward(int m, int n, const float* kx, const float* ky, const float* kz,
                                 const float* t, const float* x, const float* y, const float* z,
                                 const float* dw, const float2* img, float2* out) {
  const int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= m) return;
  float sr = 0.f, si = 0.f;
  for (int k = 0; k < n; ++k) {
    const float ph = kTwoPi * (kx[j] * x[k] + ky[j] * y[k] + kz[j] * z[k]) + dw[k] * t[j];
    float s, c;
    sincosf(ph, &s, &c);
    const float2 v = img[k];
    sr += v.x * c + v.y * s;
    si += v.y * c - v.x * s;
  }
  out[j] = make_float2(sr, si);
}

// m_k = Σ_j s_j exp(+i(2π k_j·r_k + Δω_k t_j))
__global__ void baseline_adjoint(int m, int n, const float* kx, const float* ky, const float* kz,
                                 const float* t, const float* x, const float* y, const float* z,
                                 const float* dw, const float2* smp, float2* out) {
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= n) return;
  float sr = 0.f, si = 0.f;
  for (int j = 0; j < m; ++j) {
    const float ph = kTwoPi * (kx[j] * x[k] + ky[j] * y[k] + kz[j] * z[k]) + dw[k] * t[j];
    float s, c;
    sincosf(ph, &s, &c);
    const float2 v = smp[j];
    sr += v.x * c - v.y * s;
    si += v.y * c + v.x * s;
  }
  out[k] = make_float2(sr, si);
}

template <class T>
T* upload(const std::vector<T>& v) {
  T* d = nullptr;
  check(cudaMalloc(&d, std::max<std::size_t>(v.size(), 1) * sizeof(T)), "cudaMalloc");
  check(cudaMemcpy(d, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy");
  return d;
}

}  // namespace

BaselineResult run_baseline(const BaselineProblem& p, const std::vector<std::complex<float>>& image,
                            const std::vector<std::complex<float>>& samples, int repeat) {
  float *kx = upload(p.kx), *ky = upload(p.ky), *kz = upload(p.kz), *t = upload(p.t);
  float *x = upload(p.x), *y = upload(p.y), *z = upload(p.z), *dw = upload(p.dw);
  auto* img = upload(image);
  auto* smp = upload(samples);
  float2 *fout = nullptr, *aout = nullptr;
  check(cudaMalloc(&fout, sizeof(float2) * p.num_samples), "cudaMalloc");
  check(cudaMalloc(&aout, sizeof(float2) * p.num_voxels), "cudaMalloc");
  cudaEvent_t e0, e1;
  check(cudaEventCreate(&e0), "event");
  check(cudaEventCreate(&e1), "event");
  BaselineResult r;
  r.forward_ms = r.adjoint_ms = 1e30;
  const int block = 256;
  for (int rep = 0; rep < repeat; ++rep) {
    float ms = 0;
    check(cudaEventRecord(e0), "record");
    baseline_forward<<<(p.num_samples + block - 1) / block, block>>>(
        p.num_samples, p.num_voxels, kx, ky, kz, t, x, y, z, dw, reinterpret_cast<const float2*>(img), fout);
    check(cudaGetLastError(), "baseline_forward launch");
    check(cudaEventRecord(e1), "record");
    check(cudaEventSynchronize(e1), "sync");
    check(cudaEventElapsedTime(&ms, e0, e1), "elapsed");
    r.forward_ms = std::min<double>(r.forward_ms, ms);
    check(cudaEventRecord(e0), "record");
    baseline_adjoint<<<(p.num_voxels + block - 1) / block, block>>>(
        p.num_samples, p.num_voxels, kx, ky, kz, t, x, y, z, dw, reinterpret_cast<const float2*>(smp), aout);
    check(cudaGetLastError(), "baseline_adjoint launch");
    check(cudaEventRecord(e1), "record");
    check(cudaEventSynchronize(e1), "sync");
    check(cudaEventElapsedTime(&ms, e0, e1), "elapsed");
    r.adjoint_ms = std::min<double>(r.adjoint_ms, ms);
  }
  r.forward_out.resize(p.num_samples);
  r.adjoint_out.resize(p.num_voxels);
  check(cudaMemcpy(r.forward_out.data(), fout, sizeof(float2) * p.num_samples, cudaMemcpyDeviceToHost), "copy");
  check(cudaMemcpy(r.adjoint_out.data(), aout, sizeof(float2) * p.num_voxels, cudaMemcpyDeviceToHost), "copy");
  for (void* ptr : {static_cast<void*>(kx), static_cast<void*>(ky), static_cast<void*>(kz), static_cast<void*>(t),
                    static_cast<void*>(x), static_cast<void*>(y), static_cast<void*>(z), static_cast<void*>(dw),
                    static_cast<void*>(img), static_cast<void*>(smp), static_cast<void*>(fout), static_cast<void*>(aout)})
    cudaFree(ptr);
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  return r;
}

}  // namespace fieldft::bench
