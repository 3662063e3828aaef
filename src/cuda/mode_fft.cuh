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

#include "fieldft/detail/complex.hpp"

namespace fieldft::cuda {

using detail::Cplx;

constexpr int kModeFftThreads = 256;    // at most, per block
constexpr int kModeFftMinBlocks = 3;    // per SM: at most 85 registers
constexpr int kModeFftMaxRadices = 12;  // L <= 4096 in radices of at least 2
// The radices of a stage, largest first: fewer stages, each a longer DFT in registers.
constexpr int kModeFftRadices[] = {12, 9, 8, 6, 5, 4, 3, 2};

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

// floor(j / n) for 0 <= j < 2^20 from 1/n in float: (j + 1/2)/n lies at least 1/(2n) from an
// integer, far more than the rounding of the product (~2^-23·j/n), so a truncation gives the
// quotient without an integer division.
__device__ inline int small_quotient(int j, float inv_n) {
  return __float2int_rz((static_cast<float>(j) + 0.5f) * inv_n);
}

template <class T>
__device__ inline Cplx<T> cmul(Cplx<T> a, Cplx<T> b) {
  return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
}
template <class T>
__device__ inline Cplx<T> cadd(Cplx<T> a, Cplx<T> b) {
  return {a.re + b.re, a.im + b.im};
}
template <class T>
__device__ inline Cplx<T> csub(Cplx<T> a, Cplx<T> b) {
  return {a.re - b.re, a.im - b.im};
}
// s·i·a for s = ±1.
template <class T>
__device__ inline Cplx<T> times_i(Cplx<T> a, int s) {
  return s > 0 ? Cplx<T>{-a.im, a.re} : Cplx<T>{a.im, -a.re};
}

// cos and sin of 2π·k/n at compile time (Taylor series after reduction to [-π, π]).
struct UnitRoot {
  double c, s;
};
constexpr UnitRoot unit_root(int k, int n) {
  k %= n;
  if (2 * k > n) k -= n;
  const double x = 2.0 * 3.14159265358979323846 * k / n;
  double c = 1, s = x, tc = 1, ts = x;
  for (int i = 1; i < 24; ++i) {
    tc *= -x * x / ((2 * i - 1) * (2 * i));
    ts *= -x * x / ((2 * i) * (2 * i + 1));
    c += tc;
    s += ts;
  }
  return {c, s};
}

// The first factor of a composite radix (the rest is done recursively).
constexpr int radix_head(int r) { return r % 4 == 0 ? 4 : r % 2 == 0 ? 2 : r % 3 == 0 ? 3 : 5; }

// f(std::integral_constant<int, i>) for i = 0 .. N-1, indices known at compile time.
template <class F, int... I>
__device__ inline void static_for_each(F& f, std::integer_sequence<int, I...>) {
  (f(std::integral_constant<int, I>{}), ...);
}
template <int N, class F>
__device__ inline void static_for(F&& f) {
  static_for_each(f, std::make_integer_sequence<int, N>{});
}

// In-register DFT of R values, v[q] <- sum_r v[r] exp(sign·2πi·q·r/R). R = 2, 3, 4, 5 directly;
// composite R = R1·R2 (R1 = radix_head) by one Cooley-Tukey step in registers: R2 DFTs of R1
// over n = R2·n1 + n2, twiddles exp(sign·2πi·n2·k1/R) (compile-time constants), R1 DFTs of R2,
// output k1 + R1·k2.
template <class T, int R>
__device__ inline void small_dft(Cplx<T>* v, int sign) {
  if constexpr (R != 2 && R != 3 && R != 4 && R != 5) {
    constexpr int R1 = radix_head(R), R2 = R / R1;
    Cplx<T> y[R1][R2];
    static_for<R2>([&](auto n2c) {
      constexpr int n2 = decltype(n2c)::value;
      Cplx<T> u[R1];
#pragma unroll
      for (int n1 = 0; n1 < R1; ++n1) u[n1] = v[R2 * n1 + n2];
      small_dft<T, R1>(u, sign);
      static_for<R1>([&](auto k1c) {
        constexpr int k1 = decltype(k1c)::value;
        if constexpr (n2 * k1 == 0) {
          y[k1][n2] = u[k1];
        } else {
          constexpr UnitRoot w = unit_root(n2 * k1, R);
          const T ws = sign > 0 ? static_cast<T>(w.s) : static_cast<T>(-w.s);
          y[k1][n2] = cmul(u[k1], Cplx<T>{static_cast<T>(w.c), ws});
        }
      });
    });
#pragma unroll
    for (int k1 = 0; k1 < R1; ++k1) {
      small_dft<T, R2>(y[k1], sign);
#pragma unroll
      for (int k2 = 0; k2 < R2; ++k2) v[k1 + R1 * k2] = y[k1][k2];
    }
  } else if constexpr (R == 2) {
    const Cplx<T> a = v[0], b = v[1];
    v[0] = cadd(a, b);
    v[1] = csub(a, b);
  } else if constexpr (R == 3) {
    constexpr T kS = T(0.86602540378443864676);  // sin(2π/3)
    const Cplx<T> t1 = cadd(v[1], v[2]);
    const Cplx<T> t2 = times_i(csub(v[1], v[2]) * kS, sign);
    const Cplx<T> m = csub(v[0], t1 * T(0.5));
    v[0] = cadd(v[0], t1);
    v[1] = cadd(m, t2);
    v[2] = csub(m, t2);
  } else if constexpr (R == 4) {
    const Cplx<T> t0 = cadd(v[0], v[2]), t1 = csub(v[0], v[2]), t2 = cadd(v[1], v[3]);
    const Cplx<T> t3 = times_i(csub(v[1], v[3]), sign);
    v[0] = cadd(t0, t2);
    v[2] = csub(t0, t2);
    v[1] = cadd(t1, t3);
    v[3] = csub(t1, t3);
  } else {
    static_assert(R == 5, "radices of 2, 3 and 5");
    constexpr T c1 = T(0.30901699437494742410), c2 = T(-0.80901699437494742410);  // cos(2π/5), cos(4π/5)
    constexpr T s1 = T(0.95105651629515357212), s2 = T(0.58778525229247312917);   // sin(2π/5), sin(4π/5)
    const Cplx<T> b1 = cadd(v[1], v[4]), b2 = cadd(v[2], v[3]), d1 = csub(v[1], v[4]), d2 = csub(v[2], v[3]);
    const Cplx<T> m1 = cadd(v[0], cadd(b1 * c1, b2 * c2)), m2 = cadd(v[0], cadd(b1 * c2, b2 * c1));
    const Cplx<T> e1 = times_i(cadd(d1 * s1, d2 * s2), sign), e2 = times_i(csub(d1 * s2, d2 * s1), sign);
    v[0] = cadd(v[0], cadd(b1, b2));
    v[1] = cadd(m1, e1);
    v[4] = csub(m1, e1);
    v[2] = cadd(m2, e2);
    v[3] = csub(m2, e2);
  }
}

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
