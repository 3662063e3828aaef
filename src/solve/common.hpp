// What the solvers of src/solve share (private): argument checks, the CG loop (used by cg,
// cg_normal and the x-update of admm), the power iteration (max_eigenvalue and fista), the
// weighted normal operator AᴴWA, the data term of the objectives, and the per-iteration report.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "fieldft/error.hpp"
#include "fieldft/op/combinators.hpp"  // require_shape
#include "fieldft/op/linear_operator.hpp"
#include "fieldft/op/vector_ops.hpp"
#include "fieldft/solve/cg.hpp"
#include "fieldft/solve/report.hpp"

namespace fieldft::solve::detail {

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

inline std::string prefix(const char* who) { return std::string("solve::") + who + ": "; }

// ---- argument checks --------------------------------------------------------------------------

inline void check_pointer(const char* who, const char* name, const void* p) {
  require(p != nullptr, ErrorCode::kInvalidArgument,
          prefix(who) + name + " is null; expected a vector in the operator's context");
}

inline void check_iterations(const char* who, const char* name, int v) {
  require(v >= 1, ErrorCode::kInvalidArgument,
          prefix(who) + name + " = " + std::to_string(v) + "; expected >= 1");
}

// A regularisation weight or similar: finite and >= 0.
inline void check_nonnegative(const char* who, const char* name, double v, const char* what) {
  require(std::isfinite(v) && v >= 0, ErrorCode::kInvalidArgument,
          prefix(who) + name + " = " + std::to_string(v) + "; expected a finite " + what + " >= 0");
}

inline void check_positive(const char* who, const char* name, double v, const char* what) {
  require(std::isfinite(v) && v > 0, ErrorCode::kInvalidArgument,
          prefix(who) + name + " = " + std::to_string(v) + "; expected a finite " + what + " > 0");
}

inline void check_tolerance(const char* who, double v) {
  require(!std::isnan(v) && v >= 0, ErrorCode::kInvalidArgument,
          prefix(who) + "tolerance = " + std::to_string(v) +
              "; expected >= 0 (0 = run all iterations)");
}

// A penalty operator R (or transform Ψ) acts on A's images: same domain shape, same place.
template <class T>
void check_penalty_operator(const char* who, const char* name, const op::LinearOperator<T>& a,
                            const op::LinearOperator<T>& r) {
  op::require_shape(a.domain_shape(), r.domain_shape(),
                    prefix(who) + "the domain of " + name + " " + r.name() +
                        " (it acts on the images of " + a.name() + ")");
  require_same_place(a.context(), r.context(), prefix(who) + a.name() + " and " + r.name());
}

// Host context only: every value finite.
template <class T>
void check_finite(const char* who, const char* name, const std::complex<T>* v, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i)
    require(std::isfinite(v[i].real()) && std::isfinite(v[i].imag()), ErrorCode::kNonFinite, [&] {
      return std::string(prefix(who) + name + "[" + std::to_string(i) + "] is not finite; expected finite values");
    });
}

// Host context only: a real diagonal, finite, >= 0 (strictly > 0 with `positive`).
template <class T>
void check_diagonal(const char* who, const char* name, const std::complex<T>* w, std::int64_t n,
                    bool positive = false) {
  for (std::int64_t i = 0; i < n; ++i) {
    const T re = w[i].real(), im = w[i].imag();
    require(std::isfinite(re) && (positive ? re > 0 : re >= 0) && im == 0, ErrorCode::kInvalidArgument, [&] {
      return std::string(prefix(who) + name + "[" + std::to_string(i) + "] = (" + std::to_string(re) + ", " +
                         std::to_string(im) + "); expected real, finite " + name + (positive ? " > 0" : " >= 0") +
                         " (imaginary part 0)");
    });
  }
}

// The checks every solver of ½‖W^{1/2}(Ax − y)‖² + … makes on its data (values: host only).
template <class T>
void check_data(const char* who, const op::LinearOperator<T>& a, const std::complex<T>* y,
                const std::complex<T>* x, const std::complex<T>* weights) {
  check_pointer(who, "y", y);
  check_pointer(who, "x", x);
  if (!a.context().is_host()) return;
  check_finite(who, "y", y, a.codomain_size());
  check_finite(who, "x (initial guess)", x, a.domain_size());
  if (weights) check_diagonal(who, "weights", weights, a.codomain_size());
}

// ---- operators --------------------------------------------------------------------------------

// out = AᴴWA in: A's own normal (a fast one, e.g. Toeplitz) when W = I, else A, w ∘ ·, Aᴴ through
// tmp (A.codomain_size() values).
template <class T>
void weighted_normal(op::LinearOperator<T>& a, op::VectorOps<T>& v, const std::complex<T>* weights,
                     std::complex<T>* tmp, const std::complex<T>* in, std::complex<T>* out) {
  if (!weights) {
    a.apply_normal(in, out);
    return;
  }
  a.apply(in, tmp);
  v.mul(a.codomain_size(), weights, tmp, tmp);
  a.apply_adjoint(tmp, out);
}

// AᴴWA for a solver's loop, chosen and built once before it: A's weighted_normal where A has one
// (a weighted Toeplitz kernel, built here: the set-up reads W back to the host once), else
// weighted_normal above; without weights, A's apply_normal, prepared here (prepare_normal: its
// Toeplitz kernels built now, not inside the first iteration). So a weighted solve keeps a fast
// normal operator, as an unweighted one does through apply_normal.
template <class T>
class WeightedNormal {
 public:
  WeightedNormal(op::LinearOperator<T>& a, op::VectorOps<T>& v, const std::complex<T>* weights, std::complex<T>* tmp)
      : a_(a), v_(v), weights_(weights), tmp_(tmp), fast_(weights ? a.weighted_normal(weights) : nullptr) {
    if (!weights) a.prepare_normal();
  }
  void operator()(const std::complex<T>* in, std::complex<T>* out) const {
    if (fast_) {
      fast_->apply(in, out);
    } else {
      weighted_normal(a_, v_, weights_, tmp_, in, out);
    }
  }
  bool fast() const noexcept { return fast_ != nullptr; }

 private:
  op::LinearOperator<T>& a_;
  op::VectorOps<T>& v_;
  const std::complex<T>* weights_;
  std::complex<T>* tmp_;
  op::OperatorPtr<T> fast_;
};

// b = AᴴWy through tmp (A.codomain_size() values).
template <class T>
void weighted_adjoint(op::LinearOperator<T>& a, op::VectorOps<T>& v, const std::complex<T>* weights,
                      std::complex<T>* tmp, const std::complex<T>* y, std::complex<T>* b) {
  if (!weights) {
    a.apply_adjoint(y, b);
    return;
  }
  v.mul(a.codomain_size(), weights, y, tmp);
  a.apply_adjoint(tmp, b);
}

// result = (A x − y)ᴴ W (A x − y) (twice the data term; the real part matters), through r and, with
// weights, wr (A.codomain_size() values each).
template <class T>
void data_misfit_to(op::LinearOperator<T>& a, op::VectorOps<T>& v, const std::complex<T>* y,
                    const std::complex<T>* weights, const std::complex<T>* x, std::complex<T>* r,
                    std::complex<T>* wr, std::complex<T>* result) {
  using C = std::complex<T>;
  const std::int64_t m = a.codomain_size();
  a.apply(x, r);
  v.axpby(m, C(-1), y, C(1), r);
  if (weights) v.mul(m, weights, r, wr);
  v.dot_to(m, r, weights ? wr : r, result);
}

// ---- loops ------------------------------------------------------------------------------------

// The iterations between run_cg's host round trips for the residual: none without a tolerance or
// a callback (one slot pair of ρ then suffices), else options.check_every, at most the run.
inline int cg_batch(const CgOptions& o) {
  if (o.tolerance <= 0 && !o.callback) return 1;
  return std::max(1, std::min(o.check_every, o.max_iterations));
}

// The context memory run_cg needs (complex values): r, p, q, the scalars pᴴMp, α, β, and a ring
// of cg_batch(o) + 1 values of ρ.
inline std::int64_t cg_workspace_size(std::int64_t n, const CgOptions& o) { return 3 * n + 3 + cg_batch(o) + 1; }

// The CG loop on M = N + λI, N applied by apply_n (Hestenes & Stiefel 1952; the notation of
// Shewchuk 1994, §B2; see fieldft/solve/cg.hpp). ws: cg_workspace_size(n, o) values of context
// memory, allocated by the caller before the loop. With tolerance 0 and no callback it only
// enqueues work. Otherwise ρ_k = ‖r_k‖² (which the recurrence computes anyway) goes into a ring of
// B + 1 values (B = cg_batch(o)); every B iterations, and after the last, the ring comes back to
// the host in one round trip, and the iterations since the previous one are reported in order:
// ‖r_k‖/‖r_0‖ = √(ρ_k/ρ_0). ρ_0 comes back with the first batch: until then nothing waits.
template <class T, class ApplyN>
Result run_cg(const char* who, op::VectorOps<T>& v, std::int64_t n, ApplyN&& apply_n,
              const std::complex<T>* b, std::complex<T>* x, const CgOptions& o,
              std::complex<T>* ws, Clock::time_point t0) {
  using C = std::complex<T>;
  C* r = ws;
  C* p = r + n;
  C* q = p + n;
  C* pq = q + n;  // pᴴ M p
  C* alpha = pq + 1;
  C* beta = pq + 2;
  C* rho = pq + 3;  // the ring: ρ_k at rho[k mod (batch + 1)]
  const int batch = cg_batch(o);
  const int ring = batch + 1;
  const C lambda(static_cast<T>(o.lambda));
  const auto apply_m = [&](const C* in, C* out) {
    apply_n(in, out);
    if (o.lambda > 0) v.axpby(n, lambda, in, C(1), out);
  };

  // r = b − M x; p = r; ρ_0 = rᴴr.
  apply_m(x, q);
  v.copy(n, b, r);
  v.axpby(n, C(-1), q, C(1), r);
  v.copy(n, r, p);
  v.dot_to(n, r, r, rho);

  Result result;
  result.residual = std::numeric_limits<double>::quiet_NaN();
  const bool need_residual = o.tolerance > 0 || static_cast<bool>(o.callback);
  std::vector<C> back(need_residual ? static_cast<std::size_t>(ring) : 0);
  double r0 = -1;  // ‖r_0‖, known after the first round trip
  int reported = 0;
  bool reached = false;  // ‖r_i‖/‖r_0‖ <= tolerance at some iteration i reported
  for (int k = 1; k <= o.max_iterations; ++k) {
    C* const rho_old = rho + (k - 1) % ring;
    C* const rho_new = rho + k % ring;
    apply_m(p, q);
    v.dot_to(n, p, q, pq);
    v.ratio(rho_old, pq, alpha);   // α = ρ / pᴴMp (0 once converged)
    v.axpy(n, alpha, p, x);        // x += α p
    v.axpy(n, alpha, q, r, true);  // r −= α q
    v.dot_to(n, r, r, rho_new);
    v.ratio(rho_new, rho_old, beta);  // β = ρ'/ρ
    v.xpay(n, r, beta, p);            // p = r + β p
    result.iterations = k;
    if (!need_residual || (k - reported < batch && k < o.max_iterations)) continue;

    // The only synchronisation: once a batch (every iteration with check_every = 1).
    v.to_host(ring, rho, back.data());
    const auto rho_at = [&](int i) { return static_cast<double>(back[static_cast<std::size_t>(i % ring)].real()); };
    if (r0 < 0) {
      r0 = std::sqrt(std::max(rho_at(0), 0.0));
      require(std::isfinite(r0), ErrorCode::kNonFinite,
              prefix(who) +
                  "the initial residual is not finite; expected finite data, weights and initial "
                  "guess");
      if (r0 == 0) {  // x already solved the system: every step since was 0 (ratio's 0/0 = 0)
        result.iterations = 0;
        result.residual = 0;
        result.converged = true;
        result.seconds = seconds_since(t0);
        return result;
      }
    }
    // Every iteration done is reported, unless the callback said stop; the result is x's own
    // (iteration k), also where the tolerance was reached earlier in the batch.
    for (int i = reported + 1; i <= k; ++i) {
      const double rel = std::sqrt(std::max(rho_at(i), 0.0)) / r0;
      result.residual = rel;
      require(std::isfinite(rel), ErrorCode::kNonFinite,
              prefix(who) + "the residual became non-finite at iteration " + std::to_string(i) +
                  "; expected a Hermitian positive (semi-)definite system");
      if (!result.stopped && o.callback && !o.callback(Report{i, rel, seconds_since(t0)})) result.stopped = true;
      if (rel <= o.tolerance) reached = true;  // with tolerance 0: an exact solution
    }
    reported = k;
    if (reached || result.stopped) break;
  }
  result.converged = reached;
  result.seconds = seconds_since(t0);
  return result;
}

// The largest eigenvalue of a Hermitian positive semi-definite N (applied by apply_n) by the
// power method: v0 pseudo-random (VectorOps::fill_random, fixed seed), v ← Nv/‖Nv‖ for
// iterations − 1 steps, then the Rayleigh quotient vᴴNv. Every step stays in context memory; the
// only synchronisation is the final dot. ws: 2n values.
template <class T, class ApplyN>
double power_iteration(op::VectorOps<T>& v, std::int64_t n, ApplyN&& apply_n, int iterations,
                       std::complex<T>* ws, T* norm) {
  std::complex<T>* x = ws;
  std::complex<T>* q = ws + n;
  v.fill_random(n, 0x5eedF1E1D0F7ull, x);
  v.normalize(n, x, norm);
  for (int k = 1; k < iterations; ++k) {
    apply_n(x, q);
    v.normalize(n, q, norm);
    std::swap(x, q);
  }
  apply_n(x, q);
  return static_cast<double>(v.dot(n, x, q).real());
}

// Records iteration k (its relative change and objective, just brought back) in `result`, reports
// it, and says whether the solver stops: the callback returned false, or rel <= tolerance.
inline bool record(const char* who, const Callback& callback, double tolerance, int k, double rel,
                   double objective, Clock::time_point t0, Result& result) {
  require(std::isfinite(objective) && std::isfinite(rel), ErrorCode::kNonFinite,
          prefix(who) + "the objective became non-finite at iteration " + std::to_string(k) +
              "; expected finite data, weights and initial guess");
  result.iterations = k;
  result.residual = rel;
  result.objective = objective;
  result.converged = tolerance > 0 && rel <= tolerance;
  if (callback && !callback(Report{k, rel, seconds_since(t0), objective})) {
    result.stopped = true;
    return true;
  }
  return result.converged;
}

// ‖x_k − x_{k−1}‖/‖x_k‖ from the squared norms; when x_k = 0 the change is all of x_{k−1}: 1, or 0
// when nothing changed.
inline double relative_change(double delta2, double x2) {
  if (x2 > 0) return std::sqrt(delta2 / x2);
  return delta2 > 0 ? 1.0 : 0.0;
}

}  // namespace fieldft::solve::detail
