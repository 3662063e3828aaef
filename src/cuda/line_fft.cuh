// A power-of-two FFT of one line of L values, held in registers by a group of L/8 threads that
// exchange through shared memory between stages: the building block of the fused Toeplitz
// kernels (toeplitz.cu), which load a line from global memory, transform it, work on it and
// store it without a pass of their own over memory.
//
// The Stockham (self-sorting) formulation of Govindaraju, Lloyd, Dotsenko, Smith & Manferdelli,
// "High performance discrete Fourier transforms on graphics processors", SC 2008: stage s of
// radix R maps the input, transformed in sub-sequences of length ns, to sub-sequences of length
// ns·R; butterfly j (j < L/R) takes legs j + r·L/R (r < R), twiddles leg r by
// w^(r·(j mod ns)·L/(ns·R)) (w = exp(∓2πi/L)), runs an R-point DFT and writes leg r to
// d(j) + r·ns with d(j) = (j − j mod ns)·R + j mod ns.
//
// Register layout: thread t of the group (t < L/8) holds v[m] = element t + m·L/8 of the line,
// m < 8. This is the layout in which EVERY stage reads its legs (butterfly j = t + q·L/8 of a
// radix-R stage reads slots q + r·(8/R)), and the layout in which the LAST stage writes them
// (there ns·R = L, so d(j) = j and leg r lands at j + r·L/R, slot q + r·(8/R) again). So a line
// is loaded into v with coalesced reads (consecutive t, consecutive addresses), transformed,
// and is in v, in natural order, when line_fft returns: a forward transform, a pointwise
// product and an inverse transform run back to back in registers, and only the exchanges
// between stages touch shared memory. Stages: one of radix 2 or 4 first when log2 L is not a
// multiple of 3, then radix 8 (log2 L / 3 of them): L = 512 takes three stages, two exchanges.
//
// Shared memory: each line has its own buffer; element p sits at buf[pad(p) · stride], where
// pad(p) = p + p/8 breaks the bank conflicts of the stride-8 writes of the first stage and
// stride lets a block interleave several lines (stride = lines, for columns read together).
#pragma once

#include "cuda/small_dft.cuh"

namespace fieldft::cuda {

// log2 of a power of two, at compile time.
constexpr int log2_exact(int n) { return n <= 1 ? 0 : 1 + log2_exact(n / 2); }
constexpr bool is_power_of_two(long long n) { return n > 0 && (n & (n - 1)) == 0; }

// Lines that line_fft handles: 16 <= L <= 2048, a power of two.
constexpr int kLineFftMin = 16, kLineFftMax = 2048;

// Elements of one line's padded shared buffer.
constexpr int line_fft_padded(int L) { return L + L / 8; }
__device__ __forceinline__ int line_fft_pad(int p) { return p + (p >> 3); }

namespace line_fft_detail {

// The radix of stage s for length L: the odd factor (2 or 4) first, then eights.
template <int L>
constexpr int radix(int s) {
  constexpr int rem = log2_exact(L) % 3;
  return s == 0 && rem != 0 ? (rem == 1 ? 2 : 4) : 8;
}
template <int L>
constexpr int stages() {
  return log2_exact(L) / 3 + (log2_exact(L) % 3 != 0 ? 1 : 0);
}
// ns before stage s: the product of the earlier radices.
template <int L>
constexpr int span_before(int s) {
  int ns = 1;
  for (int i = 0; i < s; ++i) ns *= radix<L>(i);
  return ns;
}

// One radix-R stage on this thread's 8 values (its 8/R butterflies), in place: on return v[q +
// r·(8/R)] holds leg r of butterfly t + q·L/8. tw[k] = exp(−2πi·k/L); SIGN +1 conjugates it.
template <class T, int L, int R, int NS, int SIGN>
__device__ __forceinline__ void stage(Cplx<T> (&v)[8], int t, const Cplx<T>* __restrict__ tw) {
  constexpr int Q = 8 / R, TG = L / 8, STEP = L / (NS * R);
#pragma unroll
  for (int q = 0; q < Q; ++q) {
    Cplx<T> u[R];
#pragma unroll
    for (int r = 0; r < R; ++r) u[r] = v[q + r * Q];
    if constexpr (NS > 1) {
      const int jm = (t + q * TG) & (NS - 1);
#pragma unroll
      for (int r = 1; r < R; ++r) {
        Cplx<T> w = tw[r * jm * STEP];
        if constexpr (SIGN > 0) w.im = -w.im;
        u[r] = cmul(u[r], w);
      }
    }
    small_dft<T, R>(u, SIGN);
#pragma unroll
    for (int r = 0; r < R; ++r) v[q + r * Q] = u[r];
  }
}

// After a stage that is not the last: legs to their Stockham positions in shared memory, then
// every thread reads its slots t + m·L/8 for the next stage. Two barriers: all writes land
// before any read, all reads are done before the buffer is written again.
template <class T, int L, int R, int NS>
__device__ __forceinline__ void exchange(Cplx<T> (&v)[8], int t, Cplx<T>* buf, int stride) {
  constexpr int Q = 8 / R, TG = L / 8;
#pragma unroll
  for (int q = 0; q < Q; ++q) {
    const int j = t + q * TG, jm = j & (NS - 1), d = (j - jm) * R + jm;
#pragma unroll
    for (int r = 0; r < R; ++r) buf[line_fft_pad(d + r * NS) * stride] = v[q + r * Q];
  }
  __syncthreads();
#pragma unroll
  for (int m = 0; m < 8; ++m) v[m] = buf[line_fft_pad(t + m * TG) * stride];
  __syncthreads();
}

template <class T, int L, int SIGN, int S>
__device__ __forceinline__ void run(Cplx<T> (&v)[8], int t, Cplx<T>* buf, int stride, const Cplx<T>* tw) {
  if constexpr (S < stages<L>()) {
    constexpr int R = radix<L>(S), NS = span_before<L>(S);
    stage<T, L, R, NS, SIGN>(v, t, tw);
    if constexpr (S + 1 < stages<L>()) {
      exchange<T, L, R, NS>(v, t, buf, stride);
      run<T, L, SIGN, S + 1>(v, t, buf, stride, tw);
    }
  }
}

}  // namespace line_fft_detail

// v ← DFT(v) with exp(SIGN·2πi·jk/L), unnormalised, for the line whose element t + m·L/8 is
// v[m] (t = this thread's index in the line's group of L/8 threads). buf: the line's shared
// buffer (line_fft_padded(L) elements at `stride`); tw: exp(−2πi·k/L) for k < L. Every thread
// of the block must call it (it has barriers), with the same L.
template <class T, int L, int SIGN>
__device__ __forceinline__ void line_fft(Cplx<T> (&v)[8], int t, Cplx<T>* buf, int stride, const Cplx<T>* tw) {
  static_assert(is_power_of_two(L) && L >= kLineFftMin && L <= kLineFftMax, "L: a power of two in [16, 2048]");
  line_fft_detail::run<T, L, SIGN, 0>(v, t, buf, stride, tw);
}

}  // namespace fieldft::cuda
