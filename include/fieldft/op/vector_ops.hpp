// fieldft::op::VectorOps — the vector algebra of the solvers (DESIGN.md §3), on host vectors
// (OpenMP) or CUDA device vectors, in one Context. Complex vectors are interleaved
// (std::complex<T>); n counts complex elements. Pointers live where the context says (host
// memory, or device/managed memory of the context's device).
//
// On a device every operation is stream-ordered: it enqueues on the context's stream (with the
// context's device made current, the caller's restored) and returns; nothing synchronises the host
// except dot(), norm2() and to_host(), which must bring numbers back. The *_to variants leave
// their result in context memory (a device pointer on CUDA, a host pointer on the host) so that a
// solver loop needs no host round trip; the overloads of axpby taking scalar POINTERS (and axpy,
// xpay, ratio, newton_step, polak_ribiere) read their scalars from context memory, which is how
// such a result feeds the next step. No operation allocates or frees memory except the first
// reduction (a 16 KiB device workspace, stream-ordered) and the first dot()/norm2() (a pinned host
// scalar). On the host, loops of fewer than 32768 elements run on the calling thread; larger ones
// use context.nthreads() OpenMP threads.
//
// Reductions (dot, norm2, normalize, norm1_to, hyperbolic_sum_to, hyperbolic_line_to and the *_to
// forms) accumulate in double for both precisions and are deterministic: the same n and data give
// the same bits every time. On the host the result is also independent of the thread count (the
// chunking depends only on n); on a device it is independent of the device model too (the grid
// depends only on n). Host and device results differ by rounding. VectorOps keeps a small
// workspace for reductions: one object per thread.
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
//   mul_real(n, w, x, out)     out_i = w_i x_i for REAL w (out may alias x)
//   fill_random(n, seed, x)    x_i = (u, v) with u, v uniform in [-1, 1) from a counter-based
//                              hash (SplitMix64) of (seed, i): the same values on every backend
//                              and thread count (start vectors of power iterations, test data)
//   normalize(n, x, norm)      norm = ‖x‖ (one real T in context memory), then x = x / ‖x‖
//                              (x unchanged when ‖x‖ = 0)
//   to_host(n, x, host)        host = x for n values in context memory (waits for the stream):
//                              how a solver brings several scalars back in one round trip
//
// Proximal and penalty operations of the regularised solvers (include/fieldft/solve/). A GROUP is
// {x[i + n·j] : j < k} (the k stacked components of element i, e.g. the k finite differences of
// one voxel); with k = 1 every element is its own group and ‖group‖ = |x_i|.
//   soft_threshold(n, tau, x, out)
//                              out_i = x_i · max(0, 1 − τ/|x_i|): the proximal map of τ‖·‖₁ for
//                              complex x (the phase kept, the magnitude shrunk by τ; 0 where
//                              |x_i| <= τ). τ >= 0 finite. out may alias x.
//   soft_threshold_stacked(n, k, tau, x, out)
//                              out[i + n·j] = x[i + n·j] · max(0, 1 − τ/g_i), g_i = ‖group i‖:
//                              the proximal map of τ Σ_i g_i (isotropic total variation). out may
//                              alias x.
//   norm1_to(n, k, x, result)  result = Σ_{i<n} g_i (one real T in context memory): ‖x‖₁ for
//                              k = 1, the mixed ℓ2,1 norm (isotropic TV value) for k > 1
//   hyperbolic_weights(n, delta, x, w)
//                              w_i = ψ'(|x_i|)/|x_i| = 1/√(1 + (|x_i|/δ)²) (real), the weights of
//                              the hyperbolic potential ψ(t) = δ²(√(1 + (t/δ)²) − 1); its gradient
//                              with respect to x is w ∘ x. δ > 0; δ = +∞ gives the quadratic
//                              ½|t|² (w = 1). w must not overlap x.
//   hyperbolic_sum_to(n, delta, x, result)
//                              result = Σ ψ(|x_i|) (one real T in context memory; evaluated as
//                              |x|²/(√(1 + (|x|/δ)²) + 1), which has no cancellation for small |x|)
//   hyperbolic_line_to(n, delta, u, v, alpha, result)
//                              with t = u + α v (α: the real part of one Complex in context
//                              memory) and w_i = 1/√(1 + (|t_i|/δ)²), result (one Complex in
//                              context memory) = (Σ w_i Re(conj(v_i) t_i), Σ w_i |v_i|²): the
//                              derivative of Σ ψ(|u + α v|) along v and its Huber curvature
//                              (the line search of solve::pwls_pcg)
//   newton_step(data, penalty, beta, alpha)
//                              α ← α − (α Re c − Re g + β Re p) / (Re c + β Im p) for data =
//                              {g, c} (two Complex), penalty = p (one Complex, from
//                              hyperbolic_line_to) and α (one Complex; the imaginary part is set
//                              to 0), all in context memory: one majorize-minimize (Huber) step
//                              on f(α) = ½‖r − α a‖² + β Σ ψ(|u + α v|) with g = aᴴr, c = aᴴa.
//                              α is left unchanged where the denominator is not positive and
//                              finite. β >= 0 finite.
//   polak_ribiere(now, cross, before, gamma)
//                              γ = max(0, (Re now − Re cross) / Re before), 0 where Re before is
//                              not positive and finite (one Complex each in context memory; the
//                              imaginary part of γ is 0): the Polak–Ribière(+) coefficient
//                              from now = gᴴPg, cross = g_oldᴴPg, before = g_oldᴴPg_old
//
// "May alias" means the very same pointer; partial overlaps are never allowed. Sums over a
// stacked axis add j = 0, 1, … in order in T.
//
// Errors (fieldft::Error): n < 0 or k < 0 → kInvalidArgument; τ < 0, β < 0, δ <= 0 or any of
// them NaN (δ = +∞ allowed, τ and β finite) → kInvalidArgument; a null pointer for an operand of
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
  void mul_real(std::int64_t n, const T* w, const Complex* x, Complex* out);
  void fill_random(std::int64_t n, std::uint64_t seed, Complex* x);
  void normalize(std::int64_t n, Complex* x, T* norm);
  void to_host(std::int64_t n, const Complex* x, Complex* host);

  // Proximal maps and penalties (see the list above).
  void soft_threshold(std::int64_t n, T tau, const Complex* x, Complex* out);
  void soft_threshold_stacked(std::int64_t n, std::int64_t k, T tau, const Complex* x,
                              Complex* out);
  void norm1_to(std::int64_t n, std::int64_t k, const Complex* x, T* result);
  void hyperbolic_weights(std::int64_t n, T delta, const Complex* x, T* w);
  void hyperbolic_sum_to(std::int64_t n, T delta, const Complex* x, T* result);
  void hyperbolic_line_to(std::int64_t n, T delta, const Complex* u, const Complex* v,
                          const Complex* alpha, Complex* result);
  void newton_step(const Complex* data, const Complex* penalty, T beta, Complex* alpha);
  void polak_ribiere(const Complex* now, const Complex* cross, const Complex* before,
                     Complex* gamma);

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
