// fieldft::op::VectorOps — the vector algebra of the solvers (DESIGN.md §3), on host vectors
// (OpenMP) or CUDA device vectors, in one Context. Complex vectors are interleaved
// (std::complex<T>); n counts complex elements. Pointers live where the context says (host
// memory, or device/managed memory of the context's device).
//
// On a device every operation is stream-ordered: it enqueues on the context's stream (with the
// context's device made current, the caller's restored) and returns; nothing synchronises the host
// except the scalar-returning dot() and norm2(), which must bring a number back. Their *_to
// variants leave the result in context memory (a device pointer on CUDA, a host pointer on the
// host) so that a solver loop needs no host round trip; the overloads of axpby taking scalar
// POINTERS read α and β from context memory, which is how such a result feeds the next step.
// No operation allocates or frees memory except the first reduction (a 16 KiB device workspace,
// stream-ordered) and the first dot()/norm2() (a pinned host scalar). On the host, loops of fewer
// than 32768 elements run on the calling thread; larger ones use context.nthreads() OpenMP threads.
//
// Reductions (dot, norm2 and their *_to) accumulate in double for both precisions and are
// deterministic: the same n and data give the same bits every time. On the host the result is
// also independent of the thread count (the chunking depends only on n); on a device it is
// independent of the device model too (the grid depends only on n). Host and device results
// differ by rounding. VectorOps keeps a small workspace for reductions: one object per thread.
//
//   copy(n, x, y)              y = x                  (y == x allowed; no other overlap)
//   fill(n, v, x)              x = v
//   scale(n, a, x)             x = a x
//   axpby(n, a, x, b, y)       y = a x + b y          (b = 0 does not read y; x == y allowed)
//   axpby(n, &a, x, &b, y)     the same with a, b read from context memory when the operation runs
//                              (stream-ordered); *b == 0 does not read y either. a and b must not
//                              point into y.
//   mul(n, a, b, out)          out = a ∘ b            (out may alias a or b)
//   conj_mul(n, a, b, out)     out = conj(a) ∘ b      (out may alias a or b)
//   mul_stacked(n, k, d, x, out)       out[i + n·j] = d[i] x[i + n·j], j < k   (broadcast d;
//                                      out may alias x)
//   conj_mul_stacked(n, k, d, x, out)  out[i + n·j] = conj(d[i]) x[i + n·j]   (out may alias x)
//   sum_stacked(n, k, x, out)  out[i] = Σ_{j<k} x[i + n·j]   (coil combination; out may alias x,
//                              i.e. the sum lands in the first block; k = 0 gives out = 0)
//   expand_mul(n, k, d, x, out)        out[i + n·j] = d[i + n·j] x[i]     (x ↦ coil images;
//                                      out may alias d, not x)
//   conj_mul_sum(n, k, d, y, out)      out[i] = Σ_{j<k} conj(d[i + n·j]) y[i + n·j]  (its adjoint;
//                                      out may alias d or y; k = 0 gives out = 0)
//   dot(n, x, y)               Σ conj(x_i) y_i         (0 for n = 0)
//   norm2(n, x)                Σ |x_i|²  (the SQUARED 2-norm; 0 for n = 0)
//   abs2(n, x, out)            out_i = |x_i|² (real; out must not overlap x)
//
// "May alias" means the very same pointer; partial overlaps are never allowed. Sums over a
// stacked axis add j = 0, 1, … in order in T.
//
// Errors (fieldft::Error): n < 0 or k < 0 → kInvalidArgument; a null pointer for an operand of
// n > 0 elements, or a null result of *_to → kInvalidArgument (n = 0 is valid everywhere and
// touches no operand); n·k beyond 64-bit indexing → kTooLarge; a CUDA context in a build without
// CUDA → kBackendUnavailable (at construction); any operation on a moved-from object →
// kInvalidState; a failed CUDA call → kCuda (asynchronous failures surface at the next call that
// synchronises, e.g. dot() or Context::synchronize()).
#pragma once

#include <complex>
#include <cstdint>
#include <memory>

#include "fieldft/context.hpp"

namespace fieldft::op {

template <class T>
class VectorOps {
 public:
  using Complex = std::complex<T>;

  // Throws kBackendUnavailable for a CUDA context in a build without CUDA. Allocates nothing.
  explicit VectorOps(Context context);
  ~VectorOps();
  VectorOps(VectorOps&&) noexcept;
  VectorOps& operator=(VectorOps&&) noexcept;
  VectorOps(const VectorOps&) = delete;
  VectorOps& operator=(const VectorOps&) = delete;

  const Context& context() const noexcept { return context_; }

  void copy(std::int64_t n, const Complex* x, Complex* y);
  void fill(std::int64_t n, Complex value, Complex* x);
  void scale(std::int64_t n, Complex a, Complex* x);
  void axpby(std::int64_t n, Complex a, const Complex* x, Complex b, Complex* y);
  // a and b: one Complex each in context memory (e.g. written by dot_to), not inside y.
  void axpby(std::int64_t n, const Complex* a, const Complex* x, const Complex* b, Complex* y);
  // The steps of a solver whose scalars stay in context memory (a, num, den, out: one Complex
  // each there, e.g. written by dot_to):
  //   axpy(n, a, x, y[, negate])  y = y ± a x
  //   xpay(n, x, a, y)            y = x + a y
  //   ratio(num, den, out)        out = num / den, and 0 where den == 0 (a converged solver
  //                               divides 0 by 0; the step must then be 0, not NaN)
  void axpy(std::int64_t n, const Complex* a, const Complex* x, Complex* y, bool negate = false);
  void xpay(std::int64_t n, const Complex* x, const Complex* a, Complex* y);
  void ratio(const Complex* num, const Complex* den, Complex* out);
  void mul(std::int64_t n, const Complex* a, const Complex* b, Complex* out);
  void conj_mul(std::int64_t n, const Complex* a, const Complex* b, Complex* out);
  void mul_stacked(std::int64_t n, std::int64_t k, const Complex* d, const Complex* x, Complex* out);
  void conj_mul_stacked(std::int64_t n, std::int64_t k, const Complex* d, const Complex* x,
                        Complex* out);
  void sum_stacked(std::int64_t n, std::int64_t k, const Complex* x, Complex* out);
  void expand_mul(std::int64_t n, std::int64_t k, const Complex* d, const Complex* x, Complex* out);
  void conj_mul_sum(std::int64_t n, std::int64_t k, const Complex* d, const Complex* y,
                    Complex* out);
  void abs2(std::int64_t n, const Complex* x, T* out);

  // Scalars on the host (synchronises a device stream).
  Complex dot(std::int64_t n, const Complex* x, const Complex* y);
  T norm2(std::int64_t n, const Complex* x);
  // Scalars left in context memory (stream-ordered on a device).
  void dot_to(std::int64_t n, const Complex* x, const Complex* y, Complex* result);
  void norm2_to(std::int64_t n, const Complex* x, T* result);

 private:
  struct Impl;  // device reduction workspace (and a copy of the context that keeps its stream alive)
  Context context_;
  std::unique_ptr<Impl> impl_;
};

extern template class VectorOps<float>;
extern template class VectorOps<double>;

}  // namespace fieldft::op
