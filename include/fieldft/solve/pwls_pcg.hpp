// fieldft::solve::pwls_pcg — penalised weighted least squares by preconditioned nonlinear
// conjugate gradients (DESIGN.md §1, solve layer: sees only op::LinearOperator and op::VectorOps).
//
// pwls_pcg(A, y, x, W, R, P, options) minimises, over images x (A's domain),
//     Φ(x) = ½ ‖W^{1/2}(A x − y)‖² + β Σ_k ψ(|[R x]_k|)
// with a roughness penalty on R x (R: any operator on A's images, e.g. finite differences, whose
// codomain holds the differences [R x]_k) and the potential
//     quadratic   ψ(t) = ½ t²                               (Tikhonov on R x: smooth images)
//     hyperbolic  ψ(t) = δ² (√(1 + (t/δ)²) − 1)             (≈ ½t² for t ≪ δ, ≈ δ|t| for t ≫ δ:
//                                                            edge-preserving, "hyperbolic TV")
// δ (options.delta, in the units of R x) sets where the hyperbolic potential turns from quadratic
// to linear. This is the setting of Fessler's pwls_pcg1 (Image Reconstruction Toolbox) and of
// PowerGrid (Cerjanic et al., "PowerGrid: A open source library for accelerated iterative
// magnetic resonance image reconstruction", ISMRM 2016), whose field-corrected MRI
// reconstructions use it with finite differences for R.
//
// Algorithm (Fessler, "Image Reconstruction: Algorithms and Analysis", the chapter on
// preconditioned conjugate gradients): with the negative gradient
//     g = AᴴW(y − A x) − β Rᴴ(ω ∘ R x),   ω_k = ψ'(|[Rx]_k|)/|[Rx]_k| = 1/√(1 + (|[Rx]_k|/δ)²)
// (ω = 1 for the quadratic), the preconditioned gradient p = P g (P a real positive diagonal, or
// I), the Polak–Ribière direction
//     d = p + γ d_old,   γ = max(0, Re((g − g_old)ᴴ p) / Re(g_oldᴴ p_old))   (d = p at first),
// and a step α that minimises Φ(x + α d) by line_search_iterations majorize-minimize steps from
// α = 0, each the minimiser of Huber's quadratic majorizer of ψ at the current α:
//     α ← α − Φ'(α) / (‖Ad‖²_W + β Σ ω_k(α) |[Rd]_k|²),   ω_k(α) at [R(x + αd)]_k.
// Huber's curvature ω(t) ≥ ψ''(t) majorizes the hyperbolic potential (ψ(√s) is concave in s), so
// every step lowers Φ along the line: Φ never increases from one iterate to the next. For the
// quadratic potential Φ is quadratic along the line and one step is exact (extra ones are not
// run). A x, R x and the residual are updated with the step, not recomputed, so an iteration
// applies A, Aᴴ, R and Rᴴ once each.
//
// Memory and stream order: y, x, W, P are vectors in the operators' context (A and R must share a
// place). Workspace is allocated once per call. The step α, γ and the line-search sums stay in
// context memory (VectorOps::hyperbolic_line_to / newton_step / polak_ribiere), so on a device
// an iteration only enqueues work. The ONLY host synchronisation is one per iteration when
// options.tolerance > 0 or a callback is set, to bring back the objective Φ(x_k) and the relative
// change ‖x_k − x_{k−1}‖/‖x_k‖ (fieldft/solve/report.hpp); without them the call returns after
// enqueueing and the result's residual and objective are NaN.
//
// Validation (fieldft::Error):
//   max_iterations <= 0, line_search_iterations <= 0, beta < 0 or NaN/Inf, tolerance < 0 or NaN,
//   a hyperbolic delta <= 0 or NaN/Inf → kInvalidArgument; y or x null → kInvalidArgument;
//   R's domain shape not A's → kShapeMismatch; A and R at different places → kContextMismatch;
//   on the HOST: y or the initial x with NaN/Inf → kNonFinite; a weight that is NaN/Inf, negative
//   or complex, or a preconditioner entry that is not real, finite and > 0 → kInvalidArgument.
//   On a DEVICE the values are not inspected (that would synchronise): non-finite values make the
//   objective non-finite, which throws kNonFinite when it is brought back.
#pragma once

#include <complex>

#include "fieldft/op/linear_operator.hpp"
#include "fieldft/solve/report.hpp"

namespace fieldft::solve {

enum class Potential : int {
  kQuadratic = 0,   // ψ(t) = ½t²
  kHyperbolic = 1,  // ψ(t) = δ²(√(1 + (t/δ)²) − 1)
};

struct PwlsOptions {
  int max_iterations = 30;          // >= 1
  // Stop once ‖x_k − x_{k−1}‖/‖x_k‖ <= tolerance (>= 0). 0: run all max_iterations.
  double tolerance = 0;
  double beta = 0;                  // regularisation weight β >= 0 (0: weighted least squares)
  Potential potential = Potential::kQuadratic;
  double delta = 1;                 // δ > 0 of the hyperbolic potential (ignored by the quadratic)
  int line_search_iterations = 3;   // >= 1 majorize-minimize steps per line search
  // Called after every iteration (one host synchronisation each); return false to stop.
  Callback callback;
};

// Minimises Φ above. x: the initial guess in, the solution out (A.domain_size() values); y and
// weights (or nullptr for W = I): A.codomain_size() values; preconditioner (or nullptr for I):
// A.domain_size() real positive values stored as complex with imaginary part 0, e.g. 1/diag(AᴴWA
// + βRᴴR) where that diagonal is known.
template <class T>
Result pwls_pcg(op::LinearOperator<T>& a, const std::complex<T>* y, std::complex<T>* x,
                const std::complex<T>* weights, op::LinearOperator<T>& r,
                const std::complex<T>* preconditioner, const PwlsOptions& options);

extern template Result pwls_pcg<float>(op::LinearOperator<float>&, const std::complex<float>*,
                                       std::complex<float>*, const std::complex<float>*,
                                       op::LinearOperator<float>&, const std::complex<float>*,
                                       const PwlsOptions&);
extern template Result pwls_pcg<double>(op::LinearOperator<double>&, const std::complex<double>*,
                                        std::complex<double>*, const std::complex<double>*,
                                        op::LinearOperator<double>&, const std::complex<double>*,
                                        const PwlsOptions&);

}  // namespace fieldft::solve
