// fieldft::op::VectorOps: argument checks, dispatch on the context, and the host loops (OpenMP).
// The CUDA side is src/cuda/vector_ops.cu, reached through the plain C++ declarations of
// src/cuda/vector_ops.hpp.
//
// Host reductions are deterministic whatever the thread count: the n elements are cut into a
// number of chunks that depends only on n (at most kMaxChunks), each chunk is summed in double
// with four interleaved accumulators combined in a fixed order, and the chunk sums are added in
// chunk order. Threads only decide who computes which chunk.
#include "fieldft/op/vector_ops.hpp"

#include <omp.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <utility>

#include "fieldft/config.hpp"
#include "fieldft/detail/complex.hpp"
#include "fieldft/detail/prox.hpp"
#include "fieldft/error.hpp"
#include "op/host_loops.hpp"

#if FIELDFT_HAVE_CUDA
#include "cuda/vector_ops.hpp"
#endif

namespace fieldft::op {

namespace {

constexpr std::int64_t kChunkMin = 4096;      // reduction chunk length, until kMaxChunks is hit
constexpr std::int64_t kMaxChunks = 1024;

// ---- argument checks --------------------------------------------------------------------------

std::string where(const char* op) { return std::string("VectorOps::") + op + ": "; }

void check_count(const char* op, const char* name, std::int64_t v) {
  require(v >= 0, ErrorCode::kInvalidArgument,
          where(op) + name + " = " + std::to_string(v) + " is negative; expected " + name +
              " >= 0");
}

void check_pointer(const char* op, const char* name, const void* p, std::int64_t n) {
  require(p != nullptr || n == 0, ErrorCode::kInvalidArgument,
          where(op) + "pointer " + name + " is null for " + std::to_string(n) +
              " elements; expected an array in the context's memory");
}

void check_result(const char* op, const void* p) {
  require(p != nullptr, ErrorCode::kInvalidArgument,
          where(op) + "pointer result is null; expected room for one value in the context's "
                      "memory (written even when n = 0)");
}

// A real parameter of a proximal or penalty operation: finite and >= 0 (τ, β), or > 0 and possibly
// +∞ (δ).
void check_nonnegative(const char* op, const char* name, double v) {
  require(std::isfinite(v) && v >= 0, ErrorCode::kInvalidArgument,
          where(op) + name + " = " + std::to_string(v) + "; expected a finite value >= 0");
}
void check_delta(const char* op, double delta) {
  require(delta > 0, ErrorCode::kInvalidArgument,
          where(op) + "delta = " + std::to_string(delta) +
              "; expected the hyperbolic potential's scale δ > 0 (+infinity for the quadratic)");
}

// n·k elements of a stacked operand; kTooLarge when that overflows 64-bit indexing.
std::int64_t stacked_size(const char* op, std::int64_t n, std::int64_t k) {
  check_count(op, "n", n);
  check_count(op, "k", k);
  require(k == 0 || n <= std::numeric_limits<std::int64_t>::max() / k, ErrorCode::kTooLarge,
          where(op) + "n * k = " + std::to_string(n) + " * " + std::to_string(k) +
              " overflows 64-bit indexing; expected n * k < 2^63");
  return n * k;
}

// ---- host loops -------------------------------------------------------------------------------

using host::for_each_index;  // src/op/host_loops.hpp
using host::team_size;

template <class T>
std::complex<T> cmul(std::complex<T> a, std::complex<T> b) {  // no Annex G NaN recovery: plain
  return {a.real() * b.real() - a.imag() * b.imag(), a.real() * b.imag() + a.imag() * b.real()};
}
template <class T>
std::complex<T> cconj_mul(std::complex<T> a, std::complex<T> b) {  // conj(a) b
  return {a.real() * b.real() + a.imag() * b.imag(), a.real() * b.imag() - a.imag() * b.real()};
}

struct Sum2 {
  double re = 0.0, im = 0.0;
};

// Σ over [0, n) of chunk_sum(begin, end), with chunk boundaries and combination order fixed by n.
template <class F>
Sum2 chunked_sum(const Context& c, std::int64_t n, const F& chunk_sum) {
  if (n == 0) return {};
  const std::int64_t nchunks = std::min((n + kChunkMin - 1) / kChunkMin, kMaxChunks);
  const std::int64_t len = (n + nchunks - 1) / nchunks;
  std::array<Sum2, kMaxChunks> parts;
  auto one = [&](std::int64_t ch) {
    const std::int64_t b = std::min(n, ch * len), e = std::min(n, b + len);
    parts[static_cast<std::size_t>(ch)] = chunk_sum(b, e);
  };
  const int nt = team_size(c, n);
  if (nt <= 1) {
    for (std::int64_t ch = 0; ch < nchunks; ++ch) one(ch);
  } else {
#pragma omp parallel for schedule(static) num_threads(nt)
    for (std::int64_t ch = 0; ch < nchunks; ++ch) one(ch);
  }
  Sum2 s;
  for (std::int64_t ch = 0; ch < nchunks; ++ch) {
    s.re += parts[static_cast<std::size_t>(ch)].re;
    s.im += parts[static_cast<std::size_t>(ch)].im;
  }
  return s;
}

// Σ conj(x_i) y_i over [b, e) in double, four interleaved accumulators.
template <class T>
Sum2 dot_chunk(const std::complex<T>* x, const std::complex<T>* y, std::int64_t b,
               std::int64_t e) {
  double re[4] = {0, 0, 0, 0}, im[4] = {0, 0, 0, 0};
  std::int64_t i = b;
  for (; i + 4 <= e; i += 4) {
    for (int l = 0; l < 4; ++l) {
      const double xr = x[i + l].real(), xi = x[i + l].imag();
      const double yr = y[i + l].real(), yi = y[i + l].imag();
      re[l] += xr * yr + xi * yi;
      im[l] += xr * yi - xi * yr;
    }
  }
  for (; i < e; ++i) {
    const double xr = x[i].real(), xi = x[i].imag(), yr = y[i].real(), yi = y[i].imag();
    re[0] += xr * yr + xi * yi;
    im[0] += xr * yi - xi * yr;
  }
  return {(re[0] + re[1]) + (re[2] + re[3]), (im[0] + im[1]) + (im[2] + im[3])};
}

template <class T>
Sum2 norm2_chunk(const std::complex<T>* x, std::int64_t b, std::int64_t e) {
  double s[4] = {0, 0, 0, 0};
  std::int64_t i = b;
  for (; i + 4 <= e; i += 4) {
    for (int l = 0; l < 4; ++l) {
      const double xr = x[i + l].real(), xi = x[i + l].imag();
      s[l] += xr * xr + xi * xi;
    }
  }
  for (; i < e; ++i) {
    const double xr = x[i].real(), xi = x[i].imag();
    s[0] += xr * xr + xi * xi;
  }
  return {(s[0] + s[1]) + (s[2] + s[3]), 0.0};
}

template <class T>
void host_axpby(const Context& c, std::int64_t n, std::complex<T> a, const std::complex<T>* x,
                std::complex<T> b, std::complex<T>* y) {
  if (b == std::complex<T>(0)) {
    for_each_index(c, n, n, [=](std::int64_t i) { y[i] = cmul(a, x[i]); });
  } else {
    for_each_index(c, n, n, [=](std::int64_t i) {
      const std::complex<T> ax = cmul(a, x[i]), by = cmul(b, y[i]);
      y[i] = {ax.real() + by.real(), ax.imag() + by.imag()};
    });
  }
}

}  // namespace

// ---- object -----------------------------------------------------------------------------------

template <class T>
struct VectorOps<T>::Impl {
  explicit Impl(const Context& c)
      : context(c)
#if FIELDFT_HAVE_CUDA
        ,
        workspace(::fieldft::cuda::vec::Place{c.device(), c.stream()})
#endif
  {
  }
  // A copy of the context keeps an owned stream alive until the workspace is released on it
  // (members are destroyed in reverse order).
  Context context;
#if FIELDFT_HAVE_CUDA
  ::fieldft::cuda::vec::Workspace workspace;  // unused (never allocated) on the host
#endif
};

template <class T>
VectorOps<T>::VectorOps(Context context) : context_(std::move(context)) {
#if !FIELDFT_HAVE_CUDA
  require(!context_.is_cuda(), ErrorCode::kBackendUnavailable,
          "VectorOps: the context is CUDA device " + std::to_string(context_.device()) +
              ", but this fieldft build has no CUDA backend (FIELDFT_HAVE_CUDA is 0); expected a "
              "host context");
#endif
  impl_ = std::make_unique<Impl>(context_);
}

template <class T>
VectorOps<T>::~VectorOps() = default;
template <class T>
VectorOps<T>::VectorOps(VectorOps&&) noexcept = default;
template <class T>
VectorOps<T>& VectorOps<T>::operator=(VectorOps&&) noexcept = default;

namespace {

// Throws kInvalidState for an object whose state was moved away.
template <class P>
void check_alive(const P& impl, const char* op) {
  require(impl != nullptr, ErrorCode::kInvalidState,
          where(op) + "this VectorOps was moved from; expected a constructed object");
}

#if FIELDFT_HAVE_CUDA
::fieldft::cuda::vec::Place place_of(const Context& c) { return {c.device(), c.stream()}; }
#endif

}  // namespace

// Every operation: check the object and the arguments, return for an empty range, then run on the
// device or the host.
#if FIELDFT_HAVE_CUDA
#define FIELDFT_ON_DEVICE(call)                                 \
  if (context_.is_cuda()) {                                     \
    ::fieldft::cuda::vec::call;                                 \
    return;                                                     \
  }
#else
#define FIELDFT_ON_DEVICE(call)
#endif

template <class T>
void VectorOps<T>::copy(std::int64_t n, const Complex* x, Complex* y) {
  check_alive(impl_, "copy");
  check_count("copy", "n", n);
  check_pointer("copy", "x", x, n);
  check_pointer("copy", "y", y, n);
  if (n == 0 || x == y) return;
  FIELDFT_ON_DEVICE(copy<T>(place_of(context_), n, x, y))
  const int nt = team_size(context_, n);
  if (nt <= 1) {
    std::memcpy(y, x, static_cast<std::size_t>(n) * sizeof(Complex));
    return;
  }
  const std::int64_t len = (n + nt - 1) / nt;
#pragma omp parallel for schedule(static) num_threads(nt)
  for (int t = 0; t < nt; ++t) {
    const std::int64_t b = std::min(n, t * len), e = std::min(n, b + len);
    if (e > b) std::memcpy(y + b, x + b, static_cast<std::size_t>(e - b) * sizeof(Complex));
  }
}

template <class T>
void VectorOps<T>::fill(std::int64_t n, Complex value, Complex* x) {
  check_alive(impl_, "fill");
  check_count("fill", "n", n);
  check_pointer("fill", "x", x, n);
  if (n == 0) return;
  FIELDFT_ON_DEVICE(fill<T>(place_of(context_), n, value, x))
  for_each_index(context_, n, n, [=](std::int64_t i) { x[i] = value; });
}

template <class T>
void VectorOps<T>::scale(std::int64_t n, Complex a, Complex* x) {
  check_alive(impl_, "scale");
  check_count("scale", "n", n);
  check_pointer("scale", "x", x, n);
  if (n == 0 || a == Complex(1)) return;
  FIELDFT_ON_DEVICE(scale<T>(place_of(context_), n, a, x))
  for_each_index(context_, n, n, [=](std::int64_t i) { x[i] = cmul(a, x[i]); });
}

template <class T>
void VectorOps<T>::axpby(std::int64_t n, Complex a, const Complex* x, Complex b, Complex* y) {
  check_alive(impl_, "axpby");
  check_count("axpby", "n", n);
  check_pointer("axpby", "x", x, n);
  check_pointer("axpby", "y", y, n);
  if (n == 0) return;
  FIELDFT_ON_DEVICE(axpby<T>(place_of(context_), n, a, x, b, y))
  host_axpby(context_, n, a, x, b, y);
}

template <class T>
void VectorOps<T>::axpby(std::int64_t n, const Complex* a, const Complex* x, const Complex* b,
                         Complex* y) {
  check_alive(impl_, "axpby");
  check_count("axpby", "n", n);
  check_pointer("axpby", "a", a, n);
  check_pointer("axpby", "x", x, n);
  check_pointer("axpby", "b", b, n);
  check_pointer("axpby", "y", y, n);
  if (n == 0) return;
  FIELDFT_ON_DEVICE(axpby<T>(place_of(context_), n, a, x, b, y))
  host_axpby(context_, n, *a, x, *b, y);  // read once, before y is written
}

template <class T>
void VectorOps<T>::axpy(std::int64_t n, const Complex* a, const Complex* x, Complex* y,
                        bool negate) {
  check_alive(impl_, "axpy");
  check_count("axpy", "n", n);
  check_pointer("axpy", "a", a, n);
  check_pointer("axpy", "x", x, n);
  check_pointer("axpy", "y", y, n);
  if (n == 0) return;
  FIELDFT_ON_DEVICE(axpy<T>(place_of(context_), n, a, x, y, negate))
  const Complex s = negate ? -*a : *a;  // read once, before y is written
  host_axpby(context_, n, s, x, Complex(1), y);
}

template <class T>
void VectorOps<T>::xpay(std::int64_t n, const Complex* x, const Complex* a, Complex* y) {
  check_alive(impl_, "xpay");
  check_count("xpay", "n", n);
  check_pointer("xpay", "x", x, n);
  check_pointer("xpay", "a", a, n);
  check_pointer("xpay", "y", y, n);
  if (n == 0) return;
  FIELDFT_ON_DEVICE(xpay<T>(place_of(context_), n, x, a, y))
  host_axpby(context_, n, Complex(1), x, Complex(*a), y);
}

template <class T>
void VectorOps<T>::ratio(const Complex* num, const Complex* den, Complex* out) {
  check_alive(impl_, "ratio");
  check_result("ratio", num);
  check_result("ratio", den);
  check_result("ratio", out);
  FIELDFT_ON_DEVICE(ratio<T>(place_of(context_), num, den, out))
  const detail::Cplx<double> q = detail::safe_ratio({double(num->real()), double(num->imag())},
                                                    {double(den->real()), double(den->imag())});
  *out = Complex(static_cast<T>(q.re), static_cast<T>(q.im));
}

template <class T>
void VectorOps<T>::mul(std::int64_t n, const Complex* a, const Complex* b, Complex* out) {
  check_alive(impl_, "mul");
  check_count("mul", "n", n);
  check_pointer("mul", "a", a, n);
  check_pointer("mul", "b", b, n);
  check_pointer("mul", "out", out, n);
  if (n == 0) return;
  FIELDFT_ON_DEVICE(mul<T>(place_of(context_), n, a, b, out, false))
  for_each_index(context_, n, n, [=](std::int64_t i) { out[i] = cmul(a[i], b[i]); });
}

template <class T>
void VectorOps<T>::conj_mul(std::int64_t n, const Complex* a, const Complex* b, Complex* out) {
  check_alive(impl_, "conj_mul");
  check_count("conj_mul", "n", n);
  check_pointer("conj_mul", "a", a, n);
  check_pointer("conj_mul", "b", b, n);
  check_pointer("conj_mul", "out", out, n);
  if (n == 0) return;
  FIELDFT_ON_DEVICE(mul<T>(place_of(context_), n, a, b, out, true))
  for_each_index(context_, n, n, [=](std::int64_t i) { out[i] = cconj_mul(a[i], b[i]); });
}

template <class T>
void VectorOps<T>::mul_stacked(std::int64_t n, std::int64_t k, const Complex* d, const Complex* x,
                               Complex* out) {
  check_alive(impl_, "mul_stacked");
  const std::int64_t total = stacked_size("mul_stacked", n, k);
  check_pointer("mul_stacked", "d", d, n);
  check_pointer("mul_stacked", "x", x, total);
  check_pointer("mul_stacked", "out", out, total);
  if (total == 0) return;
  FIELDFT_ON_DEVICE(mul_stacked<T>(place_of(context_), n, k, d, x, out, false))
  for_each_index(context_, n, total, [=](std::int64_t i) {
    const Complex di = d[i];
    for (std::int64_t j = 0; j < k; ++j) out[i + n * j] = cmul(di, x[i + n * j]);
  });
}

template <class T>
void VectorOps<T>::conj_mul_stacked(std::int64_t n, std::int64_t k, const Complex* d,
                                    const Complex* x, Complex* out) {
  check_alive(impl_, "conj_mul_stacked");
  const std::int64_t total = stacked_size("conj_mul_stacked", n, k);
  check_pointer("conj_mul_stacked", "d", d, n);
  check_pointer("conj_mul_stacked", "x", x, total);
  check_pointer("conj_mul_stacked", "out", out, total);
  if (total == 0) return;
  FIELDFT_ON_DEVICE(mul_stacked<T>(place_of(context_), n, k, d, x, out, true))
  for_each_index(context_, n, total, [=](std::int64_t i) {
    const Complex di = d[i];
    for (std::int64_t j = 0; j < k; ++j) out[i + n * j] = cconj_mul(di, x[i + n * j]);
  });
}

template <class T>
void VectorOps<T>::sum_stacked(std::int64_t n, std::int64_t k, const Complex* x, Complex* out) {
  check_alive(impl_, "sum_stacked");
  const std::int64_t total = stacked_size("sum_stacked", n, k);
  check_pointer("sum_stacked", "x", x, total);
  check_pointer("sum_stacked", "out", out, n);
  if (n == 0) return;  // k == 0 still writes out = 0
  FIELDFT_ON_DEVICE(sum_stacked<T>(place_of(context_), n, k, x, out))
  for_each_index(context_, n, total, [=](std::int64_t i) {
    T re = 0, im = 0;
    for (std::int64_t j = 0; j < k; ++j) {
      re += x[i + n * j].real();
      im += x[i + n * j].imag();
    }
    out[i] = {re, im};
  });
}

template <class T>
void VectorOps<T>::expand_mul(std::int64_t n, std::int64_t k, const Complex* d, const Complex* x,
                              Complex* out) {
  check_alive(impl_, "expand_mul");
  const std::int64_t total = stacked_size("expand_mul", n, k);
  check_pointer("expand_mul", "d", d, total);
  check_pointer("expand_mul", "x", x, n);
  check_pointer("expand_mul", "out", out, total);
  if (total == 0) return;
  FIELDFT_ON_DEVICE(expand_mul<T>(place_of(context_), n, k, d, x, out))
  for_each_index(context_, n, total, [=](std::int64_t i) {
    const Complex xi = x[i];
    for (std::int64_t j = 0; j < k; ++j) out[i + n * j] = cmul(d[i + n * j], xi);
  });
}

template <class T>
void VectorOps<T>::conj_mul_sum(std::int64_t n, std::int64_t k, const Complex* d, const Complex* y,
                                Complex* out) {
  check_alive(impl_, "conj_mul_sum");
  const std::int64_t total = stacked_size("conj_mul_sum", n, k);
  check_pointer("conj_mul_sum", "d", d, total);
  check_pointer("conj_mul_sum", "y", y, total);
  check_pointer("conj_mul_sum", "out", out, n);
  if (n == 0) return;  // k == 0 still writes out = 0
  FIELDFT_ON_DEVICE(conj_mul_sum<T>(place_of(context_), n, k, d, y, out))
  for_each_index(context_, n, total, [=](std::int64_t i) {
    T re = 0, im = 0;
    for (std::int64_t j = 0; j < k; ++j) {
      const Complex t = cconj_mul(d[i + n * j], y[i + n * j]);
      re += t.real();
      im += t.imag();
    }
    out[i] = {re, im};
  });
}

template <class T>
void VectorOps<T>::abs2(std::int64_t n, const Complex* x, T* out) {
  check_alive(impl_, "abs2");
  check_count("abs2", "n", n);
  check_pointer("abs2", "x", x, n);
  check_pointer("abs2", "out", out, n);
  if (n == 0) return;
  FIELDFT_ON_DEVICE(abs2<T>(place_of(context_), n, x, out))
  for_each_index(context_, n, n, [=](std::int64_t i) {
    out[i] = x[i].real() * x[i].real() + x[i].imag() * x[i].imag();
  });
}

template <class T>
typename VectorOps<T>::Complex VectorOps<T>::dot(std::int64_t n, const Complex* x,
                                                 const Complex* y) {
  check_alive(impl_, "dot");
  check_count("dot", "n", n);
  check_pointer("dot", "x", x, n);
  check_pointer("dot", "y", y, n);
#if FIELDFT_HAVE_CUDA
  if (context_.is_cuda())
    return ::fieldft::cuda::vec::dot<T>(place_of(context_), impl_->workspace, n, x, y);
#endif
  const Sum2 s = chunked_sum(context_, n, [=](std::int64_t b, std::int64_t e) {
    return dot_chunk(x, y, b, e);
  });
  return {static_cast<T>(s.re), static_cast<T>(s.im)};
}

template <class T>
T VectorOps<T>::norm2(std::int64_t n, const Complex* x) {
  check_alive(impl_, "norm2");
  check_count("norm2", "n", n);
  check_pointer("norm2", "x", x, n);
#if FIELDFT_HAVE_CUDA
  if (context_.is_cuda())
    return ::fieldft::cuda::vec::norm2<T>(place_of(context_), impl_->workspace, n, x);
#endif
  const Sum2 s = chunked_sum(context_, n, [=](std::int64_t b, std::int64_t e) {
    return norm2_chunk(x, b, e);
  });
  return static_cast<T>(s.re);
}

template <class T>
void VectorOps<T>::dot_to(std::int64_t n, const Complex* x, const Complex* y, Complex* result) {
  check_alive(impl_, "dot_to");
  check_count("dot_to", "n", n);
  check_pointer("dot_to", "x", x, n);
  check_pointer("dot_to", "y", y, n);
  check_result("dot_to", result);
  FIELDFT_ON_DEVICE(dot_to<T>(place_of(context_), impl_->workspace, n, x, y, result))
  const Sum2 s = chunked_sum(context_, n, [=](std::int64_t b, std::int64_t e) {
    return dot_chunk(x, y, b, e);
  });
  *result = {static_cast<T>(s.re), static_cast<T>(s.im)};
}

template <class T>
void VectorOps<T>::norm2_to(std::int64_t n, const Complex* x, T* result) {
  check_alive(impl_, "norm2_to");
  check_count("norm2_to", "n", n);
  check_pointer("norm2_to", "x", x, n);
  check_result("norm2_to", result);
  FIELDFT_ON_DEVICE(norm2_to<T>(place_of(context_), impl_->workspace, n, x, result))
  const Sum2 s = chunked_sum(context_, n, [=](std::int64_t b, std::int64_t e) {
    return norm2_chunk(x, b, e);
  });
  *result = static_cast<T>(s.re);
}

template <class T>
void VectorOps<T>::mul_real(std::int64_t n, const T* w, const Complex* x, Complex* out) {
  check_alive(impl_, "mul_real");
  check_count("mul_real", "n", n);
  check_pointer("mul_real", "w", w, n);
  check_pointer("mul_real", "x", x, n);
  check_pointer("mul_real", "out", out, n);
  if (n == 0) return;
  FIELDFT_ON_DEVICE(mul_real<T>(place_of(context_), n, w, x, out))
  for_each_index(context_, n, n, [=](std::int64_t i) { out[i] = {w[i] * x[i].real(), w[i] * x[i].imag()}; });
}

template <class T>
void VectorOps<T>::fill_random(std::int64_t n, std::uint64_t seed, Complex* x) {
  check_alive(impl_, "fill_random");
  check_count("fill_random", "n", n);
  check_pointer("fill_random", "x", x, n);
  if (n == 0) return;
  FIELDFT_ON_DEVICE(fill_random<T>(place_of(context_), n, seed, x))
  for_each_index(context_, n, n, [=](std::int64_t i) {
    const auto k = static_cast<std::uint64_t>(i);
    x[i] = {static_cast<T>(detail::uniform_pm1(seed, 2 * k)),
            static_cast<T>(detail::uniform_pm1(seed, 2 * k + 1))};
  });
}

template <class T>
void VectorOps<T>::normalize(std::int64_t n, Complex* x, T* norm) {
  check_alive(impl_, "normalize");
  check_count("normalize", "n", n);
  check_pointer("normalize", "x", x, n);
  check_result("normalize", norm);
  FIELDFT_ON_DEVICE(normalize<T>(place_of(context_), impl_->workspace, n, x, norm))
  const Sum2 s = chunked_sum(context_, n, [=](std::int64_t b, std::int64_t e) {
    return norm2_chunk(x, b, e);
  });
  const double nrm = std::sqrt(s.re);
  *norm = static_cast<T>(nrm);
  if (nrm > 0) {
    const T inv = static_cast<T>(1 / nrm);
    for_each_index(context_, n, n, [=](std::int64_t i) { x[i] *= inv; });
  }
}

template <class T>
void VectorOps<T>::to_host(std::int64_t n, const Complex* x, Complex* host) {
  check_alive(impl_, "to_host");
  check_count("to_host", "n", n);
  check_pointer("to_host", "x", x, n);
  check_pointer("to_host", "host", host, n);
  if (n == 0) return;
  FIELDFT_ON_DEVICE(to_host<T>(place_of(context_), n, x, host))
  std::memcpy(host, x, static_cast<std::size_t>(n) * sizeof(Complex));
}

template <class T>
void VectorOps<T>::soft_threshold(std::int64_t n, T tau, const Complex* x, Complex* out) {
  check_alive(impl_, "soft_threshold");
  check_nonnegative("soft_threshold", "tau", tau);
  soft_threshold_stacked(n, 1, tau, x, out);
}

template <class T>
void VectorOps<T>::soft_threshold_stacked(std::int64_t n, std::int64_t k, T tau, const Complex* x,
                                          Complex* out) {
  check_alive(impl_, "soft_threshold_stacked");
  const std::int64_t total = stacked_size("soft_threshold_stacked", n, k);
  check_nonnegative("soft_threshold_stacked", "tau", tau);
  check_pointer("soft_threshold_stacked", "x", x, total);
  check_pointer("soft_threshold_stacked", "out", out, total);
  if (total == 0) return;
  FIELDFT_ON_DEVICE(soft_threshold_stacked<T>(place_of(context_), n, k, tau, x, out))
  for_each_index(context_, n, total, [=](std::int64_t i) {
    T g2 = 0;
    for (std::int64_t j = 0; j < k; ++j) g2 += std::norm(x[i + n * j]);
    const T f = detail::shrink(std::sqrt(g2), tau);
    for (std::int64_t j = 0; j < k; ++j) out[i + n * j] = x[i + n * j] * f;
  });
}

template <class T>
void VectorOps<T>::norm1_to(std::int64_t n, std::int64_t k, const Complex* x, T* result) {
  check_alive(impl_, "norm1_to");
  const std::int64_t total = stacked_size("norm1_to", n, k);
  check_pointer("norm1_to", "x", x, total);
  check_result("norm1_to", result);
  FIELDFT_ON_DEVICE(norm1_to<T>(place_of(context_), impl_->workspace, n, k, x, result))
  const Sum2 s = chunked_sum(context_, n, [=](std::int64_t b, std::int64_t e) {
    double acc = 0;
    for (std::int64_t i = b; i < e; ++i) {
      double g2 = 0;
      for (std::int64_t j = 0; j < k; ++j) {
        const double re = x[i + n * j].real(), im = x[i + n * j].imag();
        g2 += re * re + im * im;
      }
      acc += std::sqrt(g2);
    }
    return Sum2{acc, 0.0};
  });
  *result = static_cast<T>(s.re);
}

template <class T>
void VectorOps<T>::hyperbolic_weights(std::int64_t n, T delta, const Complex* x, T* w) {
  check_alive(impl_, "hyperbolic_weights");
  check_count("hyperbolic_weights", "n", n);
  check_delta("hyperbolic_weights", delta);
  check_pointer("hyperbolic_weights", "x", x, n);
  check_pointer("hyperbolic_weights", "w", w, n);
  if (n == 0) return;
  const T kappa = T(1) / (delta * delta);  // 0 for δ = ∞
  FIELDFT_ON_DEVICE(hyperbolic_weights<T>(place_of(context_), n, kappa, x, w))
  for_each_index(context_, n, n,
                 [=](std::int64_t i) { w[i] = detail::hyperbolic_weight(std::norm(x[i]), kappa); });
}

template <class T>
void VectorOps<T>::hyperbolic_sum_to(std::int64_t n, T delta, const Complex* x, T* result) {
  check_alive(impl_, "hyperbolic_sum_to");
  check_count("hyperbolic_sum_to", "n", n);
  check_delta("hyperbolic_sum_to", delta);
  check_pointer("hyperbolic_sum_to", "x", x, n);
  check_result("hyperbolic_sum_to", result);
  const double kappa = 1.0 / (static_cast<double>(delta) * delta);
  FIELDFT_ON_DEVICE(hyperbolic_sum_to<T>(place_of(context_), impl_->workspace, n, kappa, x, result))
  const Sum2 s = chunked_sum(context_, n, [=](std::int64_t b, std::int64_t e) {
    double acc = 0;
    for (std::int64_t i = b; i < e; ++i) {
      const double re = x[i].real(), im = x[i].imag();
      acc += detail::hyperbolic_value(re * re + im * im, kappa);
    }
    return Sum2{acc, 0.0};
  });
  *result = static_cast<T>(s.re);
}

template <class T>
void VectorOps<T>::hyperbolic_line_to(std::int64_t n, T delta, const Complex* u, const Complex* v,
                                      const Complex* alpha, Complex* result) {
  check_alive(impl_, "hyperbolic_line_to");
  check_count("hyperbolic_line_to", "n", n);
  check_delta("hyperbolic_line_to", delta);
  check_pointer("hyperbolic_line_to", "u", u, n);
  check_pointer("hyperbolic_line_to", "v", v, n);
  check_result("hyperbolic_line_to", alpha);
  check_result("hyperbolic_line_to", result);
  const double kappa = 1.0 / (static_cast<double>(delta) * delta);
  FIELDFT_ON_DEVICE(
      hyperbolic_line_to<T>(place_of(context_), impl_->workspace, n, kappa, u, v, alpha, result))
  const double a = alpha->real();
  const Sum2 s = chunked_sum(context_, n, [=](std::int64_t b, std::int64_t e) {
    Sum2 acc;
    for (std::int64_t i = b; i < e; ++i) {
      const double vr = v[i].real(), vi = v[i].imag();
      const double tr = u[i].real() + a * vr, ti = u[i].imag() + a * vi;
      const double w = detail::hyperbolic_weight(tr * tr + ti * ti, kappa);
      acc.re += w * (vr * tr + vi * ti);
      acc.im += w * (vr * vr + vi * vi);
    }
    return acc;
  });
  *result = {static_cast<T>(s.re), static_cast<T>(s.im)};
}

template <class T>
void VectorOps<T>::newton_step(const Complex* data, const Complex* penalty, T beta,
                               Complex* alpha) {
  check_alive(impl_, "newton_step");
  check_result("newton_step", data);
  check_result("newton_step", penalty);
  check_result("newton_step", alpha);
  check_nonnegative("newton_step", "beta", beta);
  FIELDFT_ON_DEVICE(newton_step<T>(place_of(context_), data, penalty, beta, alpha))
  *alpha = {detail::newton_update(alpha->real(), data[0].real(), data[1].real(), penalty->real(),
                                  penalty->imag(), beta),
            T(0)};
}

template <class T>
void VectorOps<T>::polak_ribiere(const Complex* now, const Complex* cross, const Complex* before,
                                 Complex* gamma) {
  check_alive(impl_, "polak_ribiere");
  check_result("polak_ribiere", now);
  check_result("polak_ribiere", cross);
  check_result("polak_ribiere", before);
  check_result("polak_ribiere", gamma);
  FIELDFT_ON_DEVICE(polak_ribiere<T>(place_of(context_), now, cross, before, gamma))
  *gamma = {detail::polak_ribiere_plus(now->real(), cross->real(), before->real()), T(0)};
}

#undef FIELDFT_ON_DEVICE

template class VectorOps<float>;
template class VectorOps<double>;

}  // namespace fieldft::op
