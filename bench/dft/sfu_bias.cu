// Diagnostic: mean and maximum error of the phasor approximations the float kernels use, over
// phases spread uniformly in [−span, span] cycles: the SFU (__sincosf(2πq), MUFU) and the
// polynomial (fieldft/detail/dft_math.hpp sincos_2pi). A nonzero mean error (bias) adds up
// coherently over voxels of a positive image, so it is worth knowing.
#include <cuda_runtime.h>

#include <cstdio>

#include "fieldft/detail/dft_math.hpp"

namespace fieldft::bench {

namespace {

__global__ void bias_kernel(long long n, double span, double* acc) {
  double s_sfu = 0, c_sfu = 0, s_poly = 0, c_poly = 0, mx_sfu = 0, mx_poly = 0;
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    const float q = static_cast<float>(-span + 2 * span * (i + 0.5) / n);
    double se, ce;
    sincospi(2.0 * static_cast<double>(q), &se, &ce);
    float s, c;
    __sincosf(q * 6.28318530717958647692f, &s, &c);
    s_sfu += s - se;
    c_sfu += c - ce;
    mx_sfu = fmax(mx_sfu, fmax(fabs(s - se), fabs(c - ce)));
    fieldft::detail::dft::sincos_2pi(q, &s, &c);
    s_poly += s - se;
    c_poly += c - ce;
    mx_poly = fmax(mx_poly, fmax(fabs(s - se), fabs(c - ce)));
  }
  atomicAdd(acc + 0, s_sfu);
  atomicAdd(acc + 1, c_sfu);
  atomicAdd(acc + 2, s_poly);
  atomicAdd(acc + 3, c_poly);
  // Maxima of non-negative doubles compare like their bit patterns.
  atomicMax(reinterpret_cast<unsigned long long*>(acc + 4), __double_as_longlong(mx_sfu));
  atomicMax(reinterpret_cast<unsigned long long*>(acc + 5), __double_as_longlong(mx_poly));
}

}  // namespace

void print_phasor_bias() {
  const long long n = 1ll << 26;
  for (double span : {0.5, 4.0}) {
    double* d = nullptr;
    cudaMalloc(&d, 6 * sizeof(double));
    cudaMemset(d, 0, 6 * sizeof(double));
    bias_kernel<<<1024, 256>>>(n, span, d);
    double h[6];
    cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost);
    cudaFree(d);
    std::printf("phasor error over q in [-%.1f, %.1f] cycles: SFU mean (sin %.2e, cos %.2e) max %.2e | "
                "polynomial mean (sin %.2e, cos %.2e) max %.2e\n",
                span, span, h[0] / n, h[1] / n, h[4], h[2] / n, h[3] / n, h[5]);
  }
}

}  // namespace fieldft::bench
