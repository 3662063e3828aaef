// Penalised weighted least squares by preconditioned nonlinear CG (include/fieldft/solve/
// pwls_pcg.hpp). Written from the PCG chapter of Fessler's "Image Reconstruction: Algorithms and
// Analysis" (Polak–Ribière directions, a line search by Huber-curvature majorize-minimize steps):
// the scalars γ and α stay in context memory, so the loop enqueues work on a device and waits only
// when a report is asked for.
#include "fieldft/solve/pwls_pcg.hpp"

#include <limits>
#include <string>

#include "fieldft/error.hpp"
#include "fieldft/op/vector_ops.hpp"
#include "solve/common.hpp"

namespace fieldft::solve {

namespace {

constexpr const char* kWho = "pwls_pcg";

void check_options(const PwlsOptions& o) {
  detail::check_iterations(kWho, "max_iterations", o.max_iterations);
  detail::check_iterations(kWho, "line_search_iterations", o.line_search_iterations);
  detail::check_nonnegative(kWho, "beta", o.beta, "regularisation weight");
  detail::check_tolerance(kWho, o.tolerance);
  require(o.potential == Potential::kQuadratic || o.potential == Potential::kHyperbolic,
          ErrorCode::kInvalidArgument,
          detail::prefix(kWho) + "potential = " + std::to_string(static_cast<int>(o.potential)) +
              "; expected Potential::kQuadratic or Potential::kHyperbolic");
  if (o.potential == Potential::kHyperbolic)
    detail::check_positive(kWho, "delta", o.delta, "scale δ of the hyperbolic potential");
}

}  // namespace

template <class T>
Result pwls_pcg(op::LinearOperator<T>& a, const std::complex<T>* y, std::complex<T>* x,
                const std::complex<T>* weights, op::LinearOperator<T>& r,
                const std::complex<T>* preconditioner, const PwlsOptions& o) {
  using C = std::complex<T>;
  const auto t0 = detail::Clock::now();
  check_options(o);
  detail::check_penalty_operator(kWho, "R", a, r);
  detail::check_data(kWho, a, y, x, weights);
  const std::int64_t n = a.domain_size(), m = a.codomain_size(), p = r.codomain_size();
  if (preconditioner && a.context().is_host())
    detail::check_diagonal(kWho, "preconditioner", preconditioner, n, true);
  const bool penalised = o.beta > 0;
  const bool reports = o.tolerance > 0 || static_cast<bool>(o.callback);
  // The quadratic is the hyperbolic potential with δ = ∞ (weights 1, value ½|t|²).
  const T delta = o.potential == Potential::kHyperbolic ? static_cast<T>(o.delta)
                                                        : std::numeric_limits<T>::infinity();
  const T beta = static_cast<T>(o.beta);
  const int steps = o.potential == Potential::kQuadratic ? 1 : o.line_search_iterations;

  op::VectorOps<T> v(a.context());
  op::Workspace work(a.context());
  // Scalars first (the reported ones together, for one to_host), then the vectors.
  enum : int { kAlpha, kFit, kPsi, kDelta, kNorm, kReported, kData = kReported, kPenalty = kData + 2,
               kNow, kBefore, kCross, kGamma, kScalars };
  const std::int64_t pr = penalised ? p : 0;
  const std::int64_t sizes = kScalars + 4 * n + (preconditioner ? n : 0) + (weights ? 3 : 2) * m +
                             3 * pr + (pr + 1) / 2;
  C* const s = work.get_as<C>(sizes);
  C* g = s + kScalars;  // negative gradient
  C* g_old = g + n;
  C* d = g_old + n;     // search direction
  C* t = d + n;         // Rᴴ(ω ∘ Rx)
  C* pg = preconditioner ? t + n : g;  // P g
  C* res = t + n + (preconditioner ? n : 0);  // y − A x
  C* ad = res + m;                            // A d
  C* wr = weights ? ad + m : res;             // W res; with weights also W A d in the line search
  C* rx = (weights ? wr : ad) + m;            // R x
  C* rd = rx + pr;                            // R d
  C* wrx = rd + pr;                           // ω ∘ R x
  T* omega = reinterpret_cast<T*>(wrx + pr);  // ω (pr real values)
  C* alpha = s + kAlpha;
  C* data = s + kData;  // {(A d)ᴴ W res, (A d)ᴴ W (A d)}: two values
  C* pen = s + kPenalty;
  C* now = s + kNow;
  C* before = s + kBefore;
  v.fill(kScalars, C(0), s);

  // res = y − A x; R x; W res.
  a.apply(x, ad);
  v.copy(m, y, res);
  v.axpby(m, C(-1), ad, C(1), res);
  if (penalised) r.apply(x, rx);
  if (weights) v.mul(m, weights, res, wr);

  Result result;
  result.residual = std::numeric_limits<double>::quiet_NaN();
  for (int k = 1; k <= o.max_iterations; ++k) {
    // g = AᴴW(y − Ax) − β Rᴴ(ω ∘ Rx); p = P g.
    a.apply_adjoint(wr, g);
    if (penalised) {
      v.hyperbolic_weights(p, delta, rx, omega);
      v.mul_real(p, omega, rx, wrx);
      r.apply_adjoint(wrx, t);
      v.axpby(n, C(-beta), t, C(1), g);
    }
    if (preconditioner) v.mul(n, preconditioner, g, pg);

    // Polak–Ribière(+) direction.
    v.dot_to(n, g, pg, now);
    if (k == 1) {
      v.copy(n, pg, d);
    } else {
      v.dot_to(n, g_old, pg, s + kCross);
      v.polak_ribiere(now, s + kCross, before, s + kGamma);
      v.xpay(n, pg, s + kGamma, d);
    }
    std::swap(now, before);
    std::swap(g, g_old);
    if (!preconditioner) pg = g;

    // Line search on α from 0: Φ'(α) = α (Ad)ᴴW(Ad) − (Ad)ᴴW res + β Σ ω (Rd)ᴴ(Rx + αRd).
    a.apply(d, ad);
    v.dot_to(m, ad, wr, data);
    if (weights) {
      v.mul(m, weights, ad, wr);  // wr holds W A d until the update below restores W res
      v.dot_to(m, ad, wr, data + 1);
    } else {
      v.dot_to(m, ad, ad, data + 1);
    }
    if (penalised) r.apply(d, rd);
    v.fill(1, C(0), alpha);
    for (int step = 0; step < steps; ++step) {
      if (penalised) v.hyperbolic_line_to(p, delta, rx, rd, alpha, pen);
      v.newton_step(data, pen, beta, alpha);
    }

    // x += α d; res −= α A d; R x += α R d.
    v.axpy(n, alpha, d, x);
    v.axpy(m, alpha, ad, res, true);
    if (penalised) v.axpy(p, alpha, rd, rx);
    if (weights) v.mul(m, weights, res, wr);
    result.iterations = k;
    if (!reports) continue;

    // One round trip: α, ‖W^{1/2}res‖², Σψ(Rx), ‖d‖², ‖x‖².
    v.dot_to(m, res, wr, s + kFit);
    if (penalised) v.hyperbolic_sum_to(p, delta, rx, reinterpret_cast<T*>(s + kPsi));
    v.norm2_to(n, d, reinterpret_cast<T*>(s + kDelta));
    v.norm2_to(n, x, reinterpret_cast<T*>(s + kNorm));
    C h[kReported];
    v.to_host(kReported, s, h);
    const double step = h[kAlpha].real();
    const double objective = 0.5 * static_cast<double>(h[kFit].real()) +
                             o.beta * static_cast<double>(h[kPsi].real());
    const double rel = detail::relative_change(step * step * static_cast<double>(h[kDelta].real()),
                                               static_cast<double>(h[kNorm].real()));
    if (detail::record(kWho, o.callback, o.tolerance, k, rel, objective, t0, result)) break;
  }
  result.seconds = detail::seconds_since(t0);
  return result;
}

template Result pwls_pcg<float>(op::LinearOperator<float>&, const std::complex<float>*,
                                std::complex<float>*, const std::complex<float>*,
                                op::LinearOperator<float>&, const std::complex<float>*,
                                const PwlsOptions&);
template Result pwls_pcg<double>(op::LinearOperator<double>&, const std::complex<double>*,
                                 std::complex<double>*, const std::complex<double>*,
                                 op::LinearOperator<double>&, const std::complex<double>*,
                                 const PwlsOptions&);

}  // namespace fieldft::solve
