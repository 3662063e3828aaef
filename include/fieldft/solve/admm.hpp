// fieldft::solve::admm — ℓ1-regularised least squares with a general sparsifying operator (total
// variation) by the alternating direction method of multipliers (DESIGN.md §1, solve layer).
//
// admm(A, y, x, W, R, options) minimises, over images x (A's domain),
//     F(x) = ½ ‖W^{1/2}(A x − y)‖² + λ Σ_i g_i(R x)
// for any operator R on A's images (finite differences for total variation, a redundant frame, …;
// no orthonormality needed, unlike fista), with
//     anisotropic (default)   g_i = |[Rx]_i| for every entry of R's codomain: ‖Rx‖₁;
//     isotropic               g_i = (Σ_j |[Rx]_{i,j}|²)^{1/2} over R's LAST codomain axis j (the
//                             stacked difference axis of op::finite_difference, codomain
//                             shape + {naxes}): the isotropic TV, a mixed ℓ2,1 norm.
//
// Algorithm: ADMM in scaled form (Boyd, Parikh, Chu, Peleato & Eckstein, "Distributed
// optimization and statistical learning via the alternating direction method of multipliers",
// Foundations and Trends in Machine Learning 3(1), 2011, §3.1.1 and §6.4) on the split z = Rx:
//     x_{k+1} = argmin ½‖W^{1/2}(Ax − y)‖² + (ρ/2)‖Rx − z_k + u_k‖²
//             = solution of (AᴴWA + ρRᴴR) x = AᴴWy + ρRᴴ(z_k − u_k)
//     z_{k+1} = soft(R x_{k+1} + u_k, λ/ρ)        (grouped over the last axis when isotropic)
//     u_{k+1} = u_k + R x_{k+1} − z_{k+1}
// from z_0 = R x_0, u_0 = 0. The x-update is inexact: cg_iterations steps of conjugate gradients
// (the loop of solve::cg_normal) warm-started from x_k, which is how ADMM is run for imaging
// (Boyd §4.3); AᴴWA uses A.apply_normal (a fast normal) when W = I, and RᴴR R.apply_normal, both
// prepared before the loop (prepare_normal).
// ρ > 0 changes the speed, not the minimiser; the problem is solved for any ρ, but ρ of the order
// of the data term's curvature λ_max(AᴴWA)/λ_max(RᴴR) balances the two parts of the x-update.
//
// Reports (fieldft/solve/report.hpp): residual = ‖x_k − x_{k−1}‖/‖x_k‖, objective = F(x_k) (one
// more application of A and one host synchronisation per iteration, only when reports are asked
// for: a callback or a tolerance). ADMM's F is not monotone in general.
//
// Memory and stream order: vectors in A's context (R must share its place); workspace allocated
// once per call (no allocation per iteration, also not in the inner CG); without reports an
// iteration only enqueues work on a device.
//
// Validation (fieldft::Error): max_iterations <= 0, cg_iterations <= 0, lambda < 0 or NaN/Inf,
// rho <= 0 or NaN/Inf, tolerance < 0 or NaN → kInvalidArgument; isotropic with an R whose codomain
// has no axis → kInvalidArgument; y or x null → kInvalidArgument; R's domain not A's domain →
// kShapeMismatch; another place → kContextMismatch; on the HOST, data and weights as for
// solve::cg (kNonFinite / kInvalidArgument).
#pragma once

#include <complex>

#include "fieldft/op/linear_operator.hpp"
#include "fieldft/solve/report.hpp"

namespace fieldft::solve {

struct AdmmOptions {
  int max_iterations = 30;  // >= 1 outer iterations
  // Stop once ‖x_k − x_{k−1}‖/‖x_k‖ <= tolerance (>= 0); 0: run all.
  double tolerance = 0;
  double lambda = 0;        // ℓ1 weight λ >= 0
  double rho = 1;           // augmented-Lagrangian weight ρ > 0
  int cg_iterations = 5;    // >= 1 CG steps per x-update
  bool isotropic = false;   // group over R's last codomain axis (isotropic TV)
  // Called after every iteration (one host synchronisation each); return false to stop.
  Callback callback;
};

// Minimises F above. x: the initial guess in, the solution out (A.domain_size() values); y and
// weights (or nullptr for W = I): A.codomain_size() values.
template <class T>
Result admm(op::LinearOperator<T>& a, const std::complex<T>* y, std::complex<T>* x,
            const std::complex<T>* weights, op::LinearOperator<T>& r, const AdmmOptions& options);

extern template Result admm<float>(op::LinearOperator<float>&, const std::complex<float>*,
                                   std::complex<float>*, const std::complex<float>*,
                                   op::LinearOperator<float>&, const AdmmOptions&);
extern template Result admm<double>(op::LinearOperator<double>&, const std::complex<double>*,
                                    std::complex<double>*, const std::complex<double>*,
                                    op::LinearOperator<double>&, const AdmmOptions&);

}  // namespace fieldft::solve
