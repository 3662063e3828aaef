// FISTA and its monotone variant (include/fieldft/solve/fista.hpp), written from Beck & Teboulle
// (SIAM J. Imaging Sciences 2009; IEEE TIP 2009 for MFISTA). The momentum scalars t_k and the step
// 1/L are host numbers, so nothing but reports (and MFISTA's comparison of F) waits for a device.
#include "fieldft/solve/fista.hpp"

#include <cmath>
#include <limits>
#include <string>

#include "fieldft/error.hpp"
#include "fieldft/op/vector_ops.hpp"
#include "solve/common.hpp"

namespace fieldft::solve {

namespace {

constexpr const char* kWho = "fista";

void check_options(const FistaOptions& o) {
  detail::check_iterations(kWho, "max_iterations", o.max_iterations);
  detail::check_nonnegative(kWho, "lambda", o.lambda, "l1 weight");
  detail::check_nonnegative(kWho, "lipschitz", o.lipschitz,
                            "Lipschitz constant (0 = estimate it)");
  if (o.lipschitz == 0) {
    detail::check_iterations(kWho, "power_iterations", o.power_iterations);
    require(std::isfinite(o.lipschitz_margin) && o.lipschitz_margin >= 1,
            ErrorCode::kInvalidArgument,
            detail::prefix(kWho) + "lipschitz_margin = " + std::to_string(o.lipschitz_margin) +
                "; expected a finite factor >= 1 (the power method estimates L from below)");
  }
  detail::check_tolerance(kWho, o.tolerance);
}

}  // namespace

template <class T>
Result fista(op::LinearOperator<T>& a, const std::complex<T>* y, std::complex<T>* x,
             const std::complex<T>* weights, op::LinearOperator<T>* psi, const FistaOptions& o) {
  using C = std::complex<T>;
  const auto t0 = detail::Clock::now();
  check_options(o);
  if (psi) {
    detail::check_penalty_operator(kWho, "psi", a, *psi);
    require(psi->codomain_size() == psi->domain_size(), ErrorCode::kShapeMismatch,
            detail::prefix(kWho) + "psi " + psi->name() + " maps " +
                op::shape_string(psi->domain_shape()) + " to " +
                op::shape_string(psi->codomain_shape()) +
                "; expected a unitary transform (as many coefficients as voxels)");
  }
  detail::check_data(kWho, a, y, x, weights);
  const std::int64_t n = a.domain_size(), m = a.codomain_size();
  const bool reports = o.tolerance > 0 || static_cast<bool>(o.callback);
  const bool objective = reports || o.monotone;

  op::VectorOps<T> v(a.context());
  op::Workspace work(a.context());
  enum : int { kFit, kL1, kDelta, kNorm, kReported, kPower = kReported, kScalars };
  const std::int64_t mtmp = (weights || objective) ? m : 0;  // AᴴWA's tmp; A z − y
  const std::int64_t mw = (weights && objective) ? m : 0;    // W (A z − y)
  C* const s = work.get_as<C>(kScalars + 4 * n + (psi ? n : 0) + mtmp + mw);
  C* g = s + kScalars;  // gradient step, then z − x
  C* z = g + n;         // the proximal point (g and z: the power iteration's 2n)
  C* b = z + n;         // AᴴWy
  C* vk = b + n;        // the extrapolated point v_k
  C* c = vk + n;        // Ψ coefficients
  C* tmp = c + (psi ? n : 0);
  C* wr = tmp + mtmp;
  v.fill(kScalars, C(0), s);

  const detail::WeightedNormal<T> normal(a, v, weights, tmp);
  double lip = o.lipschitz;
  if (lip == 0)
    lip = o.lipschitz_margin *
          detail::power_iteration<T>(v, n, normal, o.power_iterations, g, reinterpret_cast<T*>(s + kPower));
  require(!std::isnan(lip) && !std::isinf(lip), ErrorCode::kNonFinite,
          detail::prefix(kWho) + "the Lipschitz constant L of AᴴWA came out non-finite; expected "
                                 "finite, real weights >= 0 and a finite operator");
  require(lip > 0, ErrorCode::kInvalidArgument,
          detail::prefix(kWho) + "the Lipschitz constant L = " + std::to_string(lip) +
              " of AᴴWA is not positive; expected an operator A with A ≠ 0 on the weighted data");
  const T step = static_cast<T>(1 / lip), tau = static_cast<T>(o.lambda / lip);
  detail::weighted_adjoint(a, v, weights, tmp, y, b);

  // F(u) into the reported scalars, given Ψu (or u) in coef.
  const auto evaluate = [&](const C* u, const C* coef) {
    detail::data_misfit_to(a, v, y, weights, u, tmp, wr, s + kFit);
    v.norm1_to(n, 1, coef, reinterpret_cast<T*>(s + kL1));
  };
  const auto read_objective = [&](C* h) {
    v.to_host(kReported, s, h);
    return 0.5 * static_cast<double>(h[kFit].real()) + o.lambda * static_cast<double>(h[kL1].real());
  };

  C h[kReported];
  double f_prev = std::numeric_limits<double>::quiet_NaN();
  if (o.monotone) {  // F(x_0)
    if (psi) psi->apply(x, c);
    evaluate(x, psi ? c : x);
    f_prev = read_objective(h);
    require(std::isfinite(f_prev), ErrorCode::kNonFinite,
            detail::prefix(kWho) + "the objective at the initial guess is not finite; expected "
                                   "finite data, weights and initial guess");
  }

  Result result;
  result.residual = std::numeric_limits<double>::quiet_NaN();
  v.copy(n, x, vk);
  double t = 1;
  for (int k = 1; k <= o.max_iterations; ++k) {
    // z = prox(v − ∇f(v)/L), ∇f(v) = AᴴWA v − b.
    normal(vk, g);
    v.axpby(n, C(step), b, C(-step), g);
    v.axpby(n, C(1), vk, C(1), g);
    if (psi) {
      psi->apply(g, c);
      v.soft_threshold(n, tau, c, c);
      psi->apply_adjoint(c, z);
    } else {
      v.soft_threshold(n, tau, g, z);
    }

    double fz = std::numeric_limits<double>::quiet_NaN(), rel = fz;
    if (objective) {
      evaluate(z, psi ? c : z);  // Ψz = c exactly for a unitary Ψ
      if (reports) {
        v.copy(n, z, g);
        v.axpby(n, C(-1), x, C(1), g);
        v.norm2_to(n, g, reinterpret_cast<T*>(s + kDelta));
        v.norm2_to(n, z, reinterpret_cast<T*>(s + kNorm));
      }
      fz = read_objective(h);
      require(std::isfinite(fz), ErrorCode::kNonFinite,
              detail::prefix(kWho) + "the objective became non-finite at iteration " +
                  std::to_string(k) + "; expected finite data, weights and initial guess");
      rel = detail::relative_change(static_cast<double>(h[kDelta].real()),
                                    static_cast<double>(h[kNorm].real()));
    }

    const double t_next = (1 + std::sqrt(1 + 4 * t * t)) / 2;
    const bool accept = !o.monotone || fz <= f_prev;
    if (accept) {  // v = z + ((t − 1)/t')(z − x_{k−1}); x_k = z
      const double mom = (t - 1) / t_next;
      v.copy(n, z, vk);
      v.axpby(n, C(static_cast<T>(-mom)), x, C(static_cast<T>(1 + mom)), vk);
      v.copy(n, z, x);
      f_prev = fz;
    } else {  // x_k = x_{k−1}; v = x_k + (t/t')(z − x_k)
      const double mom = t / t_next;
      v.copy(n, x, vk);
      v.axpby(n, C(static_cast<T>(mom)), z, C(static_cast<T>(1 - mom)), vk);
    }
    t = t_next;
    result.iterations = k;
    if (reports && detail::record(kWho, o.callback, o.tolerance, k, rel, f_prev, t0, result)) break;
  }
  result.seconds = detail::seconds_since(t0);
  return result;
}

template Result fista<float>(op::LinearOperator<float>&, const std::complex<float>*,
                             std::complex<float>*, const std::complex<float>*,
                             op::LinearOperator<float>*, const FistaOptions&);
template Result fista<double>(op::LinearOperator<double>&, const std::complex<double>*,
                              std::complex<double>*, const std::complex<double>*,
                              op::LinearOperator<double>*, const FistaOptions&);

}  // namespace fieldft::solve
