// Conjugate gradients on the normal equations (include/fieldft/solve/cg.hpp). Written from the
// textbook recurrences of Hestenes & Stiefel (1952) as presented by Shewchuk ("painless CG",
// 1994): every vector and scalar stays in the operator's context, so the loop below only
// enqueues work on a device unless a residual must come back to the host.
#include "fieldft/solve/cg.hpp"

#include <chrono>
#include <cmath>
#include <limits>
#include <string>

#include "fieldft/error.hpp"
#include "fieldft/op/vector_ops.hpp"

namespace fieldft::solve {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

void check_options(const char* who, const CgOptions& o) {
  const std::string w = std::string("solve::") + who + ": ";
  require(o.max_iterations >= 1, ErrorCode::kInvalidArgument,
          w + "max_iterations = " + std::to_string(o.max_iterations) + "; expected >= 1");
  require(std::isfinite(o.lambda) && o.lambda >= 0, ErrorCode::kInvalidArgument,
          w + "lambda = " + std::to_string(o.lambda) +
              "; expected a finite Tikhonov weight >= 0");
  require(!std::isnan(o.tolerance) && o.tolerance >= 0, ErrorCode::kInvalidArgument,
          w + "tolerance = " + std::to_string(o.tolerance) +
              "; expected >= 0 (0 = run all iterations)");
}

void check_pointer(const char* who, const char* name, const void* p) {
  require(p != nullptr, ErrorCode::kInvalidArgument,
          std::string("solve::") + who + ": " + name +
              " is null; expected a vector in the operator's context");
}

// Host context only: every value finite.
template <class T>
void check_finite(const char* who, const char* name, const std::complex<T>* v, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i)
    require(std::isfinite(v[i].real()) && std::isfinite(v[i].imag()), ErrorCode::kNonFinite,
            std::string("solve::") + who + ": " + name + "[" + std::to_string(i) +
                "] is not finite; expected finite values");
}

// Host context only: real, finite, non-negative weights.
template <class T>
void check_weights(const std::complex<T>* w, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) {
    const T re = w[i].real(), im = w[i].imag();
    require(std::isfinite(re) && re >= 0 && im == 0, ErrorCode::kInvalidArgument,
            "solve::cg: weights[" + std::to_string(i) + "] = (" + std::to_string(re) + ", " +
                std::to_string(im) + "); expected real, finite weights >= 0 (imaginary part 0)");
  }
}

// The CG loop on M = N + λI, N applied by apply_n. ws: 3n + 5 values of context memory (r, p, q
// and the scalars), allocated by the caller before the loop.
template <class T, class ApplyN>
CgResult run_cg(const char* who, op::VectorOps<T>& v, std::int64_t n, ApplyN&& apply_n,
                const std::complex<T>* b, std::complex<T>* x, const CgOptions& o,
                std::complex<T>* ws, Clock::time_point t0) {
  using C = std::complex<T>;
  C* r = ws;
  C* p = r + n;
  C* q = p + n;
  C* rho = q + n;       // rᴴr of the current residual
  C* rho_new = rho + 1;
  C* pq = rho + 2;      // pᴴ M p
  C* alpha = rho + 3;
  C* beta = rho + 4;
  const C lambda(static_cast<T>(o.lambda));
  const auto apply_m = [&](const C* in, C* out) {
    apply_n(in, out);
    if (o.lambda > 0) v.axpby(n, lambda, in, C(1), out);
  };

  // r = b − M x; p = r; ρ = rᴴr.
  apply_m(x, q);
  v.copy(n, b, r);
  v.axpby(n, C(-1), q, C(1), r);
  v.copy(n, r, p);
  v.dot_to(n, r, r, rho);

  CgResult result;
  const bool need_residual = o.tolerance > 0 || static_cast<bool>(o.callback);
  double r0 = 0;
  if (need_residual) {
    r0 = std::sqrt(static_cast<double>(v.norm2(n, r)));  // one host round trip before the loop
    require(std::isfinite(r0), ErrorCode::kNonFinite,
            std::string("solve::") + who +
                ": the initial residual is not finite; expected finite data, weights and initial "
                "guess");
    if (r0 == 0) {  // x already solves the system
      result.residual = 0;
      result.converged = true;
      result.seconds = seconds_since(t0);
      return result;
    }
  }
  result.residual = std::numeric_limits<double>::quiet_NaN();

  for (int k = 1; k <= o.max_iterations; ++k) {
    apply_m(p, q);
    v.dot_to(n, p, q, pq);
    v.ratio(rho, pq, alpha);      // α = ρ / pᴴMp (0 once converged)
    v.axpy(n, alpha, p, x);       // x += α p
    v.axpy(n, alpha, q, r, true); // r −= α q
    v.dot_to(n, r, r, rho_new);
    v.ratio(rho_new, rho, beta);  // β = ρ'/ρ
    v.xpay(n, r, beta, p);        // p = r + β p
    std::swap(rho, rho_new);
    result.iterations = k;
    if (!need_residual) continue;

    // The only synchronisation of an iteration, and only when asked for (tolerance / callback).
    const double rel = std::sqrt(static_cast<double>(v.norm2(n, r))) / r0;
    result.residual = rel;
    require(std::isfinite(rel), ErrorCode::kNonFinite,
            std::string("solve::") + who + ": the residual became non-finite at iteration " +
                std::to_string(k) + "; expected a Hermitian positive (semi-)definite system");
    if (o.callback && !o.callback(CgReport{k, rel, seconds_since(t0)})) {
      result.stopped = true;
      break;
    }
    if (o.tolerance > 0 && rel <= o.tolerance) break;
  }
  result.converged = need_residual && result.residual <= o.tolerance;
  result.seconds = seconds_since(t0);
  return result;
}

}  // namespace

template <class T>
CgResult cg_normal(op::LinearOperator<T>& nop, const std::complex<T>* b, std::complex<T>* x,
                   const CgOptions& options) {
  using C = std::complex<T>;
  const auto t0 = Clock::now();
  check_options("cg_normal", options);
  check_pointer("cg_normal", "b", b);
  check_pointer("cg_normal", "x", x);
  require(nop.domain_shape() == nop.codomain_shape(), ErrorCode::kShapeMismatch,
          "solve::cg_normal: " + nop.name() + " maps " + op::shape_string(nop.domain_shape()) +
              " to " + op::shape_string(nop.codomain_shape()) +
              "; expected a square (Hermitian) operator");
  const std::int64_t n = nop.domain_size();
  if (nop.context().is_host()) {
    check_finite("cg_normal", "b", b, n);
    check_finite("cg_normal", "x (initial guess)", x, n);
  }
  op::VectorOps<T> v(nop.context());
  op::Workspace work(nop.context());
  C* ws = work.get_as<C>(3 * n + 5);
  return run_cg<T>("cg_normal", v, n, [&](const C* in, C* out) { nop.apply(in, out); }, b, x,
                   options, ws, t0);
}

template <class T>
CgResult cg(op::LinearOperator<T>& a, const std::complex<T>* y, std::complex<T>* x,
            const std::complex<T>* weights, const CgOptions& options) {
  using C = std::complex<T>;
  const auto t0 = Clock::now();
  check_options("cg", options);
  check_pointer("cg", "y", y);
  check_pointer("cg", "x", x);
  const std::int64_t n = a.domain_size(), m = a.codomain_size();
  if (a.context().is_host()) {
    check_finite("cg", "y", y, m);
    check_finite("cg", "x (initial guess)", x, n);
    if (weights) check_weights(weights, m);
  }
  op::VectorOps<T> v(a.context());
  op::Workspace work(a.context());
  // Layout: r, p, q, scalars (run_cg), then b (n) and, with weights, one codomain vector.
  const std::int64_t core = 3 * n + 5;
  C* ws = work.get_as<C>(core + n + (weights ? m : 0));
  C* b = ws + core;
  if (!weights) {
    a.apply_adjoint(y, b);
    return run_cg<T>("cg", v, n, [&](const C* in, C* out) { a.apply_normal(in, out); }, b, x,
                     options, ws, t0);
  }
  C* t = b + n;
  v.mul(m, weights, y, t);  // b = Aᴴ W y
  a.apply_adjoint(t, b);
  const auto normal = [&](const C* in, C* out) {  // AᴴWA
    a.apply(in, t);
    v.mul(m, weights, t, t);
    a.apply_adjoint(t, out);
  };
  return run_cg<T>("cg", v, n, normal, b, x, options, ws, t0);
}

template CgResult cg<float>(op::LinearOperator<float>&, const std::complex<float>*,
                            std::complex<float>*, const std::complex<float>*, const CgOptions&);
template CgResult cg<double>(op::LinearOperator<double>&, const std::complex<double>*,
                             std::complex<double>*, const std::complex<double>*,
                             const CgOptions&);
template CgResult cg_normal<float>(op::LinearOperator<float>&, const std::complex<float>*,
                                   std::complex<float>*, const CgOptions&);
template CgResult cg_normal<double>(op::LinearOperator<double>&, const std::complex<double>*,
                                    std::complex<double>*, const CgOptions&);

}  // namespace fieldft::solve
