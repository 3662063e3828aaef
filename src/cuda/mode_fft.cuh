// Type 1's last FFT axis fused with the copy to the modes (the plan's ModeFft): after cuFFT has
// transformed the faster axes of every grid, the last axis (length L) is transformed only for
// the columns that hold modes, and only the P outputs the modes need are kept, deconvolved and
// stored in mode order. For F (108^3 cells, 64^3 modes) it replaces cuFFT's third pass and
// copy_modes: 6.9 us against 7.9 + 4.7 on an H100.
//
// Columns are numbered g = p0 + n0·p1 over the kept modes of the faster axes; column g is at
// fine cell map0[p0] + nf0·map1[p1] (map1 null in 2D), its element t tstride further. A block
// takes C columns of consecutive g, i.e. consecutive cells along x, and runs the Stockham
// (self-sorting) formulation of the mixed-radix FFT (N. K. Govindaraju, B. Lloyd, Y. Dotsenko,
// B. Smith and J. Manferdelli, "High performance discrete Fourier transforms on graphics
// processors", SC 2008): one stage per radix of up to 12, each radix's DFT in registers; the
// first stage reads the grid, the middle ones go through shared memory, the last writes the
// kept outputs to f[g + ncol·p].
#pragma once

#include <cstdint>
#include <type_traits>
#include <utility>

#include "cuda/small_dft.cuh"
#include "fieldft/detail/complex.hpp"

namespace fieldft::cuda {

using detail::Cplx;

constexpr int kModeFftThreads = 256;    // at most, per block
constexpr int kModeFftMinBlocks = 3;    // per SM: at most 85 registers
// The radices of a pass and their order are the planner's (core::mode_fft_radices); ModeFftPass
// carries them packed.

template <class T>
struct ModeFftPass {
  int L, P, sign;
  int nradix;
  unsigned long long radices;  // 5 bits per stage, first stage lowest: their product is L
  std::int64_t ncol;           // columns: the kept modes of the faster axes
  std::int64_t n0, nf0;        // modes and fine cells along x
  std::int64_t tstride;        // cells between a column's elements (the plane or row size)
  const Cplx<T>* twiddle;      // exp(2πi·k/L), k < L (conjugated for sign < 0)
  const std::int64_t* map0;    // fine cells of the kept modes along x
  const std::int64_t* map1;    // and along y (3D; null in 2D)
  const T* dec0;               // their deconvolution factors
  const T* dec1;
};

// Where a stage's outputs go: the other shared buffer, or (the last stage) straight to this
// thread's output column, kept outputs only: kept[k] is the mode position p of transform output
// k, or -1, dec[p] its deconvolution factor, scale the column's (the faster axes').
template <class T>
struct StageOut {
  Cplx<T>* col;  // null: to shared memory
  std::int64_t stride;
  const int* kept;
  const T* dec;
  T scale;  // times dec[p]
};

// One Stockham stage of radix R on the block's C columns: the input has been transformed in
// sub-sequences of ns, the output gets sub-sequences of ns·R; tw[k] is exp(sign·2πi·k/L). This
// thread's column is c = threadIdx.x % C (the block's threads are a multiple of C); it reads
// element t of it at src[t·stride] (the grid in the first stage, else shared memory) and writes
// to b (row stride C + 1) or to out.
template <class T, int R, int C>
__device__ inline void stockham_stage(const Cplx<T>* src, std::int64_t stride, Cplx<T>* b, const Cplx<T>* tw, int L,
                                      int ns, int sign, StageOut<T> out) {
  constexpr int S = C + 1;
  const int span = L / R, step = L / (ns * R), c = threadIdx.x % C;
  const float inv_ns = 1.0f / static_cast<float>(ns);
  for (int j = threadIdx.x / C; j < span; j += blockDim.x / C) {
    const int jm = j - ns * small_quotient(j, inv_ns);
    Cplx<T> v[R];
#pragma unroll
    for (int r = 0; r < R; ++r) v[r] = src[(j + r * span) * stride];
    if (ns > 1)
#pragma unroll
      for (int r = 1; r < R; ++r) v[r] = cmul(v[r], tw[r * jm * step]);
    small_dft<T, R>(v, sign);
    const int d = (j - jm) * R + jm;
    if (out.col == nullptr) {
#pragma unroll
      for (int r = 0; r < R; ++r) b[(d + r * ns) * S + c] = v[r];
    } else {
#pragma unroll
      for (int r = 0; r < R; ++r) {
        const int p = out.kept[d + r * ns];
        if (p >= 0) out.col[p * out.stride] = v[r] * (out.dec[p] * out.scale);
      }
    }
  }
}

// Shared memory (bytes) of mode_fft_pass: the twiddles, two buffers of L rows of C + 1, the
// factors and the map from outputs to modes.
template <class T>
constexpr std::size_t mode_fft_smem(int L, int C) {
  return (static_cast<std::size_t>(L) + 2 * static_cast<std::size_t>(L) * (C + 1)) * sizeof(Cplx<T>) +
         static_cast<std::size_t>(L) * (sizeof(int) + sizeof(T));
}

// Grid: blockIdx.x over groups of C columns, blockIdx.y over the batch; blockDim.x a multiple of
// 32 up to kModeFftThreads.
template <class T, int C>
__global__ void __launch_bounds__(kModeFftThreads, kModeFftMinBlocks)
    mode_fft_pass(ModeFftPass<T> fp, const std::int64_t* __restrict__ fine_index, const T* __restrict__ deconv,
                  const Cplx<T>* __restrict__ in, std::int64_t in_batch, Cplx<T>* __restrict__ out,
                  std::int64_t out_batch) {
  constexpr int S = C + 1;
  extern __shared__ __align__(16) unsigned char mode_fft_raw[];
  const int L = fp.L, P = fp.P, tid = threadIdx.x, nt = blockDim.x;
  Cplx<T>* tw = reinterpret_cast<Cplx<T>*>(mode_fft_raw);
  Cplx<T>* a = tw + L;
  Cplx<T>* b = a + L * S;
  T* dec = reinterpret_cast<T*>(b + L * S);
  int* kept = reinterpret_cast<int*>(dec + L);
  in += blockIdx.y * in_batch;
  out += blockIdx.y * out_batch;
  const std::int64_t col0 = static_cast<std::int64_t>(blockIdx.x) * C;
  const int ncols = static_cast<int>(fp.ncol - col0 < C ? fp.ncol - col0 : C);
  for (int k = tid; k < L; k += nt) {
    tw[k] = fp.twiddle[k];
    kept[k] = -1;
  }
  __syncthreads();
  for (int p = tid; p < P; p += nt) {
    kept[fine_index[p]] = p;
    dec[p] = deconv[p];
  }
  __syncthreads();
  // This thread's column: past the last one, it reads column col0 and stores nothing.
  const int c = tid % C;
  const bool c_on = c < ncols;
  const std::int64_t g = col0 + (c_on ? c : 0), p1 = g / fp.n0, p0 = g - p1 * fp.n0;
  const std::int64_t in_col = fp.map0[p0] + (fp.map1 ? fp.nf0 * fp.map1[p1] : 0);
  const T scale = fp.dec0[p0] * (fp.map1 ? fp.dec1[p1] : T(1));
  const StageOut<T> to_shared{nullptr, 0, nullptr, nullptr, T(1)};
  const StageOut<T> to_out{out + g, fp.ncol, kept, dec, scale};
  int ns = 1;
  for (int s = 0; s < fp.nradix; ++s) {
    const int radix = static_cast<int>(fp.radices >> (5 * s) & 31u);
    const bool first = s == 0, last = s == fp.nradix - 1;
    if (last && !c_on) break;
    const Cplx<T>* src = first ? in + in_col : a + c;
    const std::int64_t stride = first ? fp.tstride : S;
    const StageOut<T> dst = last ? to_out : to_shared;
    switch (radix) {
      case 2:
        stockham_stage<T, 2, C>(src, stride, b, tw, L, ns, fp.sign, dst);
        break;
      case 3:
        stockham_stage<T, 3, C>(src, stride, b, tw, L, ns, fp.sign, dst);
        break;
      case 4:
        stockham_stage<T, 4, C>(src, stride, b, tw, L, ns, fp.sign, dst);
        break;
      case 5:
        stockham_stage<T, 5, C>(src, stride, b, tw, L, ns, fp.sign, dst);
        break;
      case 6:
        stockham_stage<T, 6, C>(src, stride, b, tw, L, ns, fp.sign, dst);
        break;
      case 8:
        stockham_stage<T, 8, C>(src, stride, b, tw, L, ns, fp.sign, dst);
        break;
      case 9:
        stockham_stage<T, 9, C>(src, stride, b, tw, L, ns, fp.sign, dst);
        break;
      default:
        stockham_stage<T, 12, C>(src, stride, b, tw, L, ns, fp.sign, dst);
        break;
    }
    if (last) break;
    ns *= radix;
    Cplx<T>* t = a;
    a = b;
    b = t;
    __syncthreads();
  }
}

}  // namespace fieldft::cuda
