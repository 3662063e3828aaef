// Per-point math of the sparsifying operators (fieldft/op/sparsify.hpp), shared by the host loops
// (src/op/sparsify.cpp) and the CUDA kernels (src/cuda/sparsify.cu): each function computes ONE
// output element from its inputs, so both backends compute the same sums in the same order.
//
// Arrays are interleaved complex (Cplx<T>), x fastest, with K stacked images last (image b at
// offset b·n). Index arithmetic is 64-bit throughout.
#pragma once

#include <complex>
#include <cstdint>

#include "fieldft/detail/complex.hpp"
#include "fieldft/detail/hd.hpp"

namespace fieldft::detail::sparsify {

constexpr int kMaxAxes = 8;  // image axes (and differenced axes) an operator may have
constexpr int kMaxTaps = 8;  // wavelet filter length

// Operator vectors (std::complex<T>, the same layout: two T, real first) seen as Cplx<T>. Their
// allocations are aligned far beyond 2·sizeof(T) and operators offset them by whole elements,
// so the alignment Cplx<T> declares holds.
template <class T>
const Cplx<T>* as_cplx(const std::complex<T>* p) {
  return reinterpret_cast<const Cplx<T>*>(p);
}
template <class T>
Cplx<T>* as_cplx(std::complex<T>* p) {
  return reinterpret_cast<Cplx<T>*>(p);
}

template <class T>
FIELDFT_HD Cplx<T> cadd(Cplx<T> a, Cplx<T> b) {
  return {a.re + b.re, a.im + b.im};
}
template <class T>
FIELDFT_HD Cplx<T> csub(Cplx<T> a, Cplx<T> b) {
  return {a.re - b.re, a.im - b.im};
}

// ---------------------------------------------------------------------------------------------
// First differences. Domain: K images of n elements; codomain: K blocks of `naxes` difference
// images, (Dx)[l + n·(a + naxes·b)] for element l of image b along differenced axis a.

struct DiffGeometry {
  std::int64_t n = 0;                // elements of one image
  int naxes = 0;                     // differenced axes
  std::int64_t stride[kMaxAxes]{};   // element stride of each differenced axis
  std::int64_t extent[kMaxAxes]{};   // its extent
  bool periodic = true;              // else Neumann: no difference across the last index
};

// Index of the difference along axis a at element i (global domain index, image b = i / n).
FIELDFT_HD std::int64_t diff_index(const DiffGeometry& g, std::int64_t i, int a) {
  const std::int64_t b = i / g.n;
  return i + g.n * (a + static_cast<std::int64_t>(g.naxes - 1) * b);
}

// Whether element i has a forward (i + e_a) / backward (i − e_a) neighbour along axis a, and
// where it is (wrapped when periodic). An axis of extent 1 is its own periodic neighbour.
struct Neighbour {
  bool exists;
  std::int64_t index;
};

FIELDFT_HD Neighbour forward_neighbour(const DiffGeometry& g, std::int64_t i, int a) {
  const std::int64_t s = g.stride[a], e = g.extent[a], c = (i / s) % e;
  if (c + 1 < e) return {true, i + s};
  return {g.periodic, i - (e - 1) * s};
}

FIELDFT_HD Neighbour backward_neighbour(const DiffGeometry& g, std::int64_t i, int a) {
  const std::int64_t s = g.stride[a], e = g.extent[a], c = (i / s) % e;
  if (c > 0) return {true, i - s};
  return {g.periodic, i + (e - 1) * s};
}

// y_{i,a} = x_{i+e_a} − x_i (0 where the forward neighbour does not exist), for every axis a.
template <class T>
FIELDFT_HD void diff_forward_point(const DiffGeometry& g, const Cplx<T>* x, Cplx<T>* y, std::int64_t i) {
  const Cplx<T> xi = x[i];
  for (int a = 0; a < g.naxes; ++a) {
    const Neighbour f = forward_neighbour(g, i, a);
    y[diff_index(g, i, a)] = f.exists ? csub(x[f.index], xi) : Cplx<T>{T(0), T(0)};
  }
}

// (Dᴴy)_i = Σ_a y_{i−e_a,a} − y_{i,a}, each term present where the difference it comes from
// exists: the negative divergence.
template <class T>
FIELDFT_HD void diff_adjoint_point(const DiffGeometry& g, const Cplx<T>* y, Cplx<T>* x, std::int64_t i) {
  Cplx<T> s{T(0), T(0)};
  for (int a = 0; a < g.naxes; ++a) {
    const Neighbour b = backward_neighbour(g, i, a);
    if (b.exists) s = cadd(s, y[diff_index(g, b.index, a)]);
    if (forward_neighbour(g, i, a).exists) s = csub(s, y[diff_index(g, i, a)]);
  }
  x[i] = s;
}

// (DᴴDx)_i = Σ_a Σ_{existing neighbours m of i along a} (x_i − x_m): the graph Laplacian of the
// grid (periodic: the circulant 2x_i − x_{i+e_a} − x_{i−e_a}).
template <class T>
FIELDFT_HD void diff_normal_point(const DiffGeometry& g, const Cplx<T>* x, Cplx<T>* z, std::int64_t i) {
  const Cplx<T> xi = x[i];
  Cplx<T> s{T(0), T(0)};
  for (int a = 0; a < g.naxes; ++a) {
    const Neighbour f = forward_neighbour(g, i, a), b = backward_neighbour(g, i, a);
    if (f.exists) s = cadd(s, csub(xi, x[f.index]));
    if (b.exists) s = cadd(s, csub(xi, x[b.index]));
  }
  z[i] = s;
}

// ---------------------------------------------------------------------------------------------
// One 1D pass of a periodized two-channel filter bank along one axis of a block: the corner
// [0, extent_a) of every axis of K images (image b at offset b·n). Along the pass axis the block
// has an even extent m; a line v_0..v_{m−1} maps to (analysis) low-pass coefficients in the first
// half and high-pass ones in the second,
//   u_j = Σ_k lo_k v_{(2j+k) mod m},   u_{m/2+j} = Σ_k hi_k v_{(2j+k) mod m},   j < m/2,
// and back (synthesis, the transpose):
//   v_i = Σ_{k ≡ i (mod 2)} lo_k u_j + hi_k u_{m/2+j},   j = ((i − k) mod m) / 2.
// kCopy copies the block unchanged. Elements outside the block are not touched.

enum class PassKind : int { kAnalysis = 0, kSynthesis = 1, kCopy = 2 };

template <class T>
struct WaveletPass {
  int ndim = 0;                      // image axes
  std::int64_t stride[kMaxAxes]{};   // element strides of the full image
  std::int64_t extent[kMaxAxes]{};   // the block's extents
  std::int64_t n = 0;                // elements of one full image (the stride of the stack)
  std::int64_t block = 0;            // elements of one block: Π extent
  int axis = 0;                      // the pass axis
  PassKind kind = PassKind::kCopy;
  int taps = 0;
  T lo[kMaxTaps]{}, hi[kMaxTaps]{};
};

// Output element t of the pass, t in [0, block·K): reads src, writes dst (distinct arrays).
template <class T>
FIELDFT_HD void wavelet_pass_point(const WaveletPass<T>& p, const Cplx<T>* src, Cplx<T>* dst, std::int64_t t) {
  const std::int64_t b = t / p.block;
  std::int64_t r = t - b * p.block, offset = b * p.n, c = 0;
  for (int d = 0; d < p.ndim; ++d) {
    const std::int64_t cd = r % p.extent[d];
    r /= p.extent[d];
    offset += cd * p.stride[d];
    if (d == p.axis) c = cd;
  }
  if (p.kind == PassKind::kCopy) {
    dst[offset] = src[offset];
    return;
  }
  const std::int64_t s = p.stride[p.axis], m = p.extent[p.axis], half = m / 2;
  const Cplx<T>* line = src + (offset - c * s);
  Cplx<T> v{T(0), T(0)};
  if (p.kind == PassKind::kAnalysis) {
    const bool low = c < half;
    const std::int64_t j = low ? c : c - half;
    const T* f = low ? p.lo : p.hi;
    for (int k = 0; k < p.taps; ++k) v = cadd(v, line[((2 * j + k) % m) * s] * f[k]);
  } else {
    for (int k = c % 2 == 0 ? 0 : 1; k < p.taps; k += 2) {
      const std::int64_t j = (((c - k) % m + m) % m) / 2;
      v = cadd(v, cadd(line[j * s] * p.lo[k], line[(half + j) * s] * p.hi[k]));
    }
  }
  dst[offset] = v;
}

}  // namespace fieldft::detail::sparsify
