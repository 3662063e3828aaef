// ADMM in scaled form for ℓ1 / total-variation penalties (include/fieldft/solve/admm.hpp), from
// Boyd et al. (2011), §3.1.1 and §6.4. The x-update runs the CG loop of solve::cg_normal on
// AᴴWA + ρRᴴR in workspace allocated here once, so no iteration allocates.
#include "fieldft/solve/admm.hpp"

#include <limits>
#include <string>

#include "fieldft/error.hpp"
#include "fieldft/op/vector_ops.hpp"
#include "solve/common.hpp"

namespace fieldft::solve {

namespace {

constexpr const char* kWho = "admm";

void check_options(const AdmmOptions& o) {
  detail::check_iterations(kWho, "max_iterations", o.max_iterations);
  detail::check_iterations(kWho, "cg_iterations", o.cg_iterations);
  detail::check_nonnegative(kWho, "lambda", o.lambda, "l1 weight");
  detail::check_positive(kWho, "rho", o.rho, "augmented-Lagrangian weight");
  detail::check_tolerance(kWho, o.tolerance);
}

}  // namespace

template <class T>
Result admm(op::LinearOperator<T>& a, const std::complex<T>* y, std::complex<T>* x,
            const std::complex<T>* weights, op::LinearOperator<T>& r, const AdmmOptions& o) {
  using C = std::complex<T>;
  const auto t0 = detail::Clock::now();
  check_options(o);
  detail::check_penalty_operator(kWho, "R", a, r);
  require(!o.isotropic || !r.codomain_shape().empty(), ErrorCode::kInvalidArgument,
          detail::prefix(kWho) + "isotropic grouping needs an axis to group over, but " + r.name() +
              " has a scalar codomain; expected R's codomain shape + {naxes}");
  detail::check_data(kWho, a, y, x, weights);
  const std::int64_t n = a.domain_size(), m = a.codomain_size(), p = r.codomain_size();
  // Groups of the shrinkage: k stacked components of p/k entries (k = 1: anisotropic).
  const std::int64_t k = o.isotropic ? r.codomain_shape().back() : 1;
  const std::int64_t groups = k > 0 ? p / k : 0;
  const bool reports = o.tolerance > 0 || static_cast<bool>(o.callback);
  const T rho = static_cast<T>(o.rho), tau = static_cast<T>(o.lambda / o.rho);

  op::VectorOps<T> v(a.context());
  op::Workspace work(a.context());
  enum : int { kFit, kL1, kDelta, kNorm, kReported, kScalars = kReported };
  CgOptions inner;  // the x-update's CG: no residuals, only enqueued work
  inner.max_iterations = o.cg_iterations;
  const std::int64_t cg_size = detail::cg_workspace_size(n, inner);
  const std::int64_t mtmp = (weights || reports) ? m : 0;  // AᴴWA's tmp; A x − y
  const std::int64_t mw = (weights && reports) ? m : 0;    // W (A x − y)
  C* const s = work.get_as<C>(kScalars + cg_size + (reports ? 4 : 3) * n + 3 * p + mtmp + mw);
  C* cg_ws = s + kScalars;
  C* b0 = cg_ws + cg_size;  // AᴴWy
  C* b = b0 + n;            // the x-update's right-hand side
  C* tn = b + n;            // Rᴴ(z − u), then RᴴR's output inside CG
  C* x_prev = tn + n;       // reports only
  C* z = x_prev + (reports ? n : 0);
  C* u = z + p;
  C* w = u + p;             // z − u, then R x + u
  C* tmp = w + p;
  C* wr = tmp + mtmp;
  v.fill(kScalars, C(0), s);

  detail::weighted_adjoint(a, v, weights, tmp, y, b0);
  r.apply(x, z);
  v.fill(p, C(0), u);

  // AᴴWA + ρRᴴR, tn as scratch (free while CG runs).
  const detail::WeightedNormal<T> data_normal(a, v, weights, tmp);
  r.prepare_normal();
  const auto normal = [&](const C* in, C* out) {
    data_normal(in, out);
    r.apply_normal(in, tn);
    v.axpby(n, C(rho), tn, C(1), out);
  };

  Result result;
  result.residual = std::numeric_limits<double>::quiet_NaN();
  for (int it = 1; it <= o.max_iterations; ++it) {
    // x = argmin ½‖W^{1/2}(Ax − y)‖² + (ρ/2)‖Rx − z + u‖²: b = AᴴWy + ρRᴴ(z − u).
    v.copy(p, z, w);
    v.axpby(p, C(-1), u, C(1), w);
    r.apply_adjoint(w, tn);
    v.copy(n, b0, b);
    v.axpby(n, C(rho), tn, C(1), b);
    if (reports) v.copy(n, x, x_prev);
    detail::run_cg<T>(kWho, v, n, normal, b, x, inner, cg_ws, t0);

    // z = soft(Rx + u, λ/ρ); u = Rx + u − z.
    r.apply(x, w);
    if (reports) v.norm1_to(groups, k, w, reinterpret_cast<T*>(s + kL1));  // ‖Rx‖ before + u
    v.axpby(p, C(1), u, C(1), w);
    v.soft_threshold_stacked(groups, k, tau, w, z);
    v.copy(p, w, u);
    v.axpby(p, C(-1), z, C(1), u);
    result.iterations = it;
    if (!reports) continue;

    detail::data_misfit_to(a, v, y, weights, x, tmp, wr, s + kFit);
    v.axpby(n, C(1), x, C(-1), x_prev);  // x_prev = x − x_prev
    v.norm2_to(n, x_prev, reinterpret_cast<T*>(s + kDelta));
    v.norm2_to(n, x, reinterpret_cast<T*>(s + kNorm));
    C h[kReported];
    v.to_host(kReported, s, h);
    const double objective = 0.5 * static_cast<double>(h[kFit].real()) +
                             o.lambda * static_cast<double>(h[kL1].real());
    const double rel = detail::relative_change(static_cast<double>(h[kDelta].real()),
                                               static_cast<double>(h[kNorm].real()));
    if (detail::record(kWho, o.callback, o.tolerance, it, rel, objective, t0, result)) break;
  }
  result.seconds = detail::seconds_since(t0);
  return result;
}

template Result admm<float>(op::LinearOperator<float>&, const std::complex<float>*,
                            std::complex<float>*, const std::complex<float>*,
                            op::LinearOperator<float>&, const AdmmOptions&);
template Result admm<double>(op::LinearOperator<double>&, const std::complex<double>*,
                             std::complex<double>*, const std::complex<double>*,
                             op::LinearOperator<double>&, const AdmmOptions&);

}  // namespace fieldft::solve
