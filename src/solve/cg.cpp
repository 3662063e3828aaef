// Conjugate gradients on the normal equations (include/fieldft/solve/cg.hpp). Written from the
// textbook recurrences of Hestenes & Stiefel (1952) as presented by Shewchuk ("painless CG",
// 1994): every vector and scalar stays in the operator's context, so the loop below only
// enqueues work on a device unless a residual must come back to the host.
#include "fieldft/solve/cg.hpp"

#include <string>

#include "fieldft/error.hpp"
#include "fieldft/op/vector_ops.hpp"
#include "solve/common.hpp"

namespace fieldft::solve {

namespace {

using detail::Clock;

void check_options(const char* who, const CgOptions& o) {
  detail::check_iterations(who, "max_iterations", o.max_iterations);
  detail::check_nonnegative(who, "lambda", o.lambda, "Tikhonov weight");
  detail::check_tolerance(who, o.tolerance);
  detail::check_iterations(who, "check_every", o.check_every);
}

}  // namespace

template <class T>
CgResult cg_normal(op::LinearOperator<T>& nop, const std::complex<T>* b, std::complex<T>* x,
                   const CgOptions& options) {
  using C = std::complex<T>;
  const auto t0 = Clock::now();
  check_options("cg_normal", options);
  detail::check_pointer("cg_normal", "b", b);
  detail::check_pointer("cg_normal", "x", x);
  require(nop.domain_shape() == nop.codomain_shape(), ErrorCode::kShapeMismatch,
          "solve::cg_normal: " + nop.name() + " maps " + op::shape_string(nop.domain_shape()) +
              " to " + op::shape_string(nop.codomain_shape()) +
              "; expected a square (Hermitian) operator");
  const std::int64_t n = nop.domain_size();
  if (nop.context().is_host()) {
    detail::check_finite("cg_normal", "b", b, n);
    detail::check_finite("cg_normal", "x (initial guess)", x, n);
  }
  op::VectorOps<T> v(nop.context());
  op::Workspace work(nop.context());
  C* ws = work.get_as<C>(detail::cg_workspace_size(n, options));
  return detail::run_cg<T>("cg_normal", v, n, [&](const C* in, C* out) { nop.apply(in, out); }, b,
                           x, options, ws, t0);
}

template <class T>
CgResult cg(op::LinearOperator<T>& a, const std::complex<T>* y, std::complex<T>* x,
            const std::complex<T>* weights, const CgOptions& options) {
  using C = std::complex<T>;
  const auto t0 = Clock::now();
  check_options("cg", options);
  detail::check_data("cg", a, y, x, weights);
  const std::int64_t n = a.domain_size(), m = a.codomain_size();
  op::VectorOps<T> v(a.context());
  op::Workspace work(a.context());
  // Layout: r, p, q, scalars (run_cg), then b (n) and, with weights, one codomain vector.
  const std::int64_t core = detail::cg_workspace_size(n, options);
  C* ws = work.get_as<C>(core + n + (weights ? m : 0));
  C* b = ws + core;
  C* t = weights ? b + n : nullptr;
  detail::weighted_adjoint(a, v, weights, t, y, b);  // b = AᴴWy
  const detail::WeightedNormal<T> normal(a, v, weights, t);
  return detail::run_cg<T>("cg", v, n, normal, b, x, options, ws, t0);
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
