// CUDA side of dense Gram-matrix normals (declarations and contract in src/cuda/gram.hpp).
//
// The product y = H·u reads H column by column ("row form"): a thread owns kRows rows of y
// (v = first + t + kThreads·r, so that each load instruction of a warp reads 32 consecutive
// values of a column) for up to kMaxCols columns of u, and walks a slice of kSlice columns v' of
// H, multiplying H[v, v'] by u[v', c], which every thread of the block reads from the same
// shared-memory word (a broadcast). Per value of H: one 8-byte load and 4·kMaxCols FMAs, so the
// kernel is bound by reading H. Slices of the column range run in separate blocks (enough blocks
// for the device at n = 128²: 16 row blocks × 16 slices); their partial sums are added by a
// second kernel in slice order. cuBLAS's cgemm on the same product (H conjugate-transposed, 8
// columns) took 1.29 ms per R4 normal on an H100, about half the bandwidth (docs/benchmarks.md).
#include <cuda_runtime.h>

#include <complex>
#include <cstdint>

#include "cuda/cuda_check.cuh"
#include "cuda/device_utils.cuh"
#include "cuda/gram.hpp"

namespace fieldft::cuda::gram {

namespace {

constexpr int kThreads = 256;
constexpr int kRows = 4;                               // rows of y per thread
constexpr std::int64_t kBlockRows = kThreads * kRows;  // rows of y per block
constexpr int kStage = 256;                            // columns of H per shared-memory stage of u
constexpr std::int64_t kSlice = 1024;                  // columns of H per block
constexpr int kMaxCols = 8;                            // columns of u per pass over H

template <class T>
struct alignas(2 * sizeof(T)) Cplx {
  T re, im;
};

cudaStream_t stream_of(void* s) { return static_cast<cudaStream_t>(s); }

std::int64_t slices_of(std::int64_t n) { return (n + kSlice - 1) / kSlice; }

template <class T>
__global__ void set_ones(std::int64_t n, std::int64_t v0, std::int64_t k, Cplx<T>* out) {
  const std::int64_t c = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (c < k && v0 + c < n) out[c * n + v0 + c] = Cplx<T>{T(1), T(0)};
}

// partial[(s·k + c0 + c)·n + v] = Σ_{v' in slice s} H[v, v'] u[v', c0 + c], c < KC.
template <class T, int KC>
__global__ void __launch_bounds__(kThreads)
    product_slices(const Cplx<T>* __restrict__ h, std::int64_t n, const Cplx<T>* __restrict__ u, std::int64_t k,
                   std::int64_t c0, Cplx<T>* __restrict__ partial) {
  __shared__ Cplx<T> su[kStage * KC];
  const std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * kBlockRows + threadIdx.x;
  const std::int64_t s = blockIdx.y;
  const std::int64_t col0 = s * kSlice, col1 = col0 + kSlice < n ? col0 + kSlice : n;
  T re[kRows][KC], im[kRows][KC];
#pragma unroll
  for (int r = 0; r < kRows; ++r)
#pragma unroll
    for (int c = 0; c < KC; ++c) re[r][c] = im[r][c] = T(0);
  bool in[kRows];
#pragma unroll
  for (int r = 0; r < kRows; ++r) in[r] = first + kThreads * r < n;
  for (std::int64_t stage = col0; stage < col1; stage += kStage) {
    const int len = static_cast<int>(col1 - stage < kStage ? col1 - stage : kStage);
    __syncthreads();  // the previous stage's u is no longer read
    for (int i = threadIdx.x; i < len * KC; i += kThreads) {
      const int j = i % len, c = i / len;  // consecutive threads read consecutive v' of one column
      su[j * KC + c] = u[(c0 + c) * n + stage + j];
    }
    __syncthreads();
    const Cplx<T>* col = h + stage * n + first;
#pragma unroll 4
    for (int j = 0; j < len; ++j, col += n) {
      Cplx<T> x[kRows];
#pragma unroll
      for (int r = 0; r < kRows; ++r) x[r] = in[r] ? col[kThreads * r] : Cplx<T>{T(0), T(0)};
#pragma unroll
      for (int c = 0; c < KC; ++c) {
        const Cplx<T> w = su[j * KC + c];
#pragma unroll
        for (int r = 0; r < kRows; ++r) {
          re[r][c] = fma(x[r].re, w.re, fma(-x[r].im, w.im, re[r][c]));
          im[r][c] = fma(x[r].re, w.im, fma(x[r].im, w.re, im[r][c]));
        }
      }
    }
  }
#pragma unroll
  for (int r = 0; r < kRows; ++r)
    if (in[r])
#pragma unroll
      for (int c = 0; c < KC; ++c) partial[(s * k + c0 + c) * n + first + kThreads * r] = Cplx<T>{re[r][c], im[r][c]};
}

// y[c·n + v] = Σ_s partial[(s·k + c)·n + v], in slice order.
template <class T>
__global__ void add_slices(std::int64_t n, std::int64_t k, std::int64_t slices, const Cplx<T>* __restrict__ partial,
                           Cplx<T>* __restrict__ y) {
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n * k;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    T re = T(0), im = T(0);
    for (std::int64_t s = 0; s < slices; ++s) {
      const Cplx<T> p = partial[s * n * k + i];
      re += p.re;
      im += p.im;
    }
    y[i] = Cplx<T>{re, im};
  }
}

template <class T, int KC>
void launch_slices(cudaStream_t st, const Cplx<T>* h, std::int64_t n, const Cplx<T>* u, std::int64_t k, std::int64_t c0,
                   Cplx<T>* partial) {
  const dim3 grid(static_cast<unsigned>((n + kBlockRows - 1) / kBlockRows), static_cast<unsigned>(slices_of(n)));
  product_slices<T, KC><<<grid, kThreads, 0, st>>>(h, n, u, k, c0, partial);
}

// launch_slices<T, cols> for cols in 1 … KC (a kernel per column count: the accumulators are
// registers, sized at compile time).
template <class T, int KC = kMaxCols>
void launch_cols(int cols, cudaStream_t st, const Cplx<T>* h, std::int64_t n, const Cplx<T>* u, std::int64_t k,
                 std::int64_t c0, Cplx<T>* partial) {
  if constexpr (KC > 1) {
    if (cols < KC) return launch_cols<T, KC - 1>(cols, st, h, n, u, k, c0, partial);
  }
  launch_slices<T, KC>(st, h, n, u, k, c0, partial);
}

}  // namespace

std::int64_t product_scratch(std::int64_t n, std::int64_t k) { return slices_of(n) * n * k; }

template <class T>
void identity_columns(int device, void* stream, std::int64_t n, std::int64_t v0, std::int64_t k,
                      std::complex<T>* out) {
  if (n == 0 || k == 0) return;
  DeviceGuard guard(device);
  FIELDFT_CUDA_CHECK(cudaMemsetAsync(out, 0, static_cast<std::size_t>(n * k) * sizeof(std::complex<T>),
                                     stream_of(stream)));
  constexpr int kOnes = 128;
  set_ones<T><<<static_cast<unsigned>((k + kOnes - 1) / kOnes), kOnes, 0, stream_of(stream)>>>(
      n, v0, k, reinterpret_cast<Cplx<T>*>(out));
  FIELDFT_CUDA_CHECK_LAUNCH();
}

template <class T>
void product(int device, void* stream, const std::complex<T>* h, std::int64_t n, const std::complex<T>* u,
             std::int64_t k, std::complex<T>* y, std::complex<T>* scratch) {
  if (n == 0 || k == 0) return;
  DeviceGuard guard(device);
  const cudaStream_t st = stream_of(stream);
  const auto* hc = reinterpret_cast<const Cplx<T>*>(h);
  const auto* uc = reinterpret_cast<const Cplx<T>*>(u);
  auto* partial = reinterpret_cast<Cplx<T>*>(scratch);
  for (std::int64_t c0 = 0; c0 < k; c0 += kMaxCols) {
    launch_cols<T>(static_cast<int>(k - c0 < kMaxCols ? k - c0 : kMaxCols), st, hc, n, uc, k, c0, partial);
    FIELDFT_CUDA_CHECK_LAUNCH();
  }
  const std::int64_t total = n * k, blocks = (total + kThreads - 1) / kThreads;
  add_slices<T><<<static_cast<unsigned>(blocks < 4096 ? blocks : 4096), kThreads, 0, st>>>(
      n, k, slices_of(n), partial, reinterpret_cast<Cplx<T>*>(y));
  FIELDFT_CUDA_CHECK_LAUNCH();
}

template void identity_columns<float>(int, void*, std::int64_t, std::int64_t, std::int64_t, std::complex<float>*);
template void identity_columns<double>(int, void*, std::int64_t, std::int64_t, std::int64_t, std::complex<double>*);
template void product<float>(int, void*, const std::complex<float>*, std::int64_t, const std::complex<float>*,
                             std::int64_t, std::complex<float>*, std::complex<float>*);
template void product<double>(int, void*, const std::complex<double>*, std::int64_t, const std::complex<double>*,
                              std::int64_t, std::complex<double>*, std::complex<double>*);

}  // namespace fieldft::cuda::gram
