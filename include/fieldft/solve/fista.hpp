// fieldft::solve::fista — ℓ1-regularised least squares in an orthonormal transform by FISTA
// (DESIGN.md §1, solve layer: sees only op::LinearOperator and op::VectorOps).
//
// fista(A, y, x, W, Ψ, options) minimises, over images x (A's domain),
//     F(x) = f(x) + λ ‖Ψ x‖₁,   f(x) = ½ ‖W^{1/2}(A x − y)‖²,   ‖c‖₁ = Σ_k |c_k| (complex moduli)
// for a UNITARY Ψ (ΨᴴΨ = ΨΨᴴ = I: an orthonormal wavelet with periodic boundaries, an orthonormal
// DCT, …; nullptr = I, sparsity in the image itself), whose proximal map is exact:
//     prox_{τ‖Ψ·‖₁}(z) = Ψᴴ soft(Ψ z, τ),   soft(c, τ)_k = c_k max(0, 1 − τ/|c_k|).
// (For a non-unitary Ψ, e.g. finite differences or a redundant frame, that formula is not the
// proximal map: use solve::admm.) Ψ's domain must be A's domain and its codomain of the same size.
//
// Algorithm: FISTA (Beck & Teboulle, "A fast iterative shrinkage-thresholding algorithm for linear
// inverse problems", SIAM J. Imaging Sciences 2(1), 2009) with constant step 1/L:
//     v_1 = x_0, t_1 = 1
//     z_k = prox_{(λ/L)‖Ψ·‖₁}(v_k − (1/L) ∇f(v_k)),   ∇f(v) = AᴴW(A v − y)
//     t_{k+1} = (1 + √(1 + 4 t_k²)) / 2
//     plain:     x_k = z_k,  v_{k+1} = x_k + ((t_k − 1)/t_{k+1}) (x_k − x_{k−1})
//     monotone:  x_k = z_k if F(z_k) <= F(x_{k−1}), else x_{k−1};
//                v_{k+1} = x_k + (t_k/t_{k+1})(z_k − x_k) + ((t_k − 1)/t_{k+1})(x_k − x_{k−1})
// The monotone variant (MFISTA: Beck & Teboulle, "Fast gradient-based algorithms for constrained
// total variation image denoising and deblurring problems", IEEE TIP 18(11), 2009) never lets F
// increase, at the cost of evaluating F(z_k) — one more application of A (and of Ψ) and one host
// synchronisation per iteration; plain FISTA's F is not monotone. Both converge as O(1/k²) in F
// when L >= λ_max(AᴴWA), the Lipschitz constant of ∇f. AᴴWA is applied through A.apply_normal
// (a fast normal, e.g. Toeplitz) when W = I.
//
// L: options.lipschitz when > 0; otherwise lipschitz_margin · max_eigenvalue(AᴴWA,
// power_iterations) (fieldft/solve/max_eigenvalue.hpp: an estimate from below, hence the margin).
//
// Reports (fieldft/solve/report.hpp): residual = ‖z_k − x_{k−1}‖/‖z_k‖, the relative change of the
// proximal point (for plain FISTA z_k = x_k; in the monotone variant x_k may stay put while z_k
// moves, and a tolerance must not stop on that), objective = F(x_k).
//
// Memory and stream order: vectors in A's context (Ψ must share its place); workspace allocated
// once per call; t_k and 1/L are host numbers, so an iteration enqueues its work and waits only
// for reports (a callback or a tolerance, one synchronisation per iteration), for the monotone
// variant's F, and once for the power iteration of L.
//
// Validation (fieldft::Error): max_iterations <= 0, power_iterations <= 0 (when L is estimated),
// lambda < 0 or NaN/Inf, lipschitz < 0 or NaN/Inf, lipschitz_margin < 1 or NaN/Inf, tolerance < 0
// or NaN → kInvalidArgument; y or x null → kInvalidArgument; Ψ's domain not A's domain or its
// codomain of another size → kShapeMismatch; another place → kContextMismatch; on the HOST, data
// and weights as for solve::cg (kNonFinite / kInvalidArgument); a non-positive L (A = 0) →
// kInvalidArgument.
#pragma once

#include <complex>

#include "fieldft/op/linear_operator.hpp"
#include "fieldft/solve/report.hpp"

namespace fieldft::solve {

struct FistaOptions {
  int max_iterations = 50;        // >= 1
  // Stop once the relative change of the proximal point is <= tolerance (>= 0); 0: run all.
  double tolerance = 0;
  double lambda = 0;              // ℓ1 weight λ >= 0
  double lipschitz = 0;           // L >= λ_max(AᴴWA); 0: estimated by the power method
  int power_iterations = 30;      // >= 1: applications of AᴴWA for the estimate
  double lipschitz_margin = 1.05; // >= 1: the estimate is multiplied by it
  bool monotone = false;          // MFISTA (see above)
  // Called after every iteration (one host synchronisation each); return false to stop.
  Callback callback;
};

// Minimises F above. x: the initial guess in, the solution out (A.domain_size() values); y and
// weights (or nullptr for W = I): A.codomain_size() values; psi: nullptr for Ψ = I.
template <class T>
Result fista(op::LinearOperator<T>& a, const std::complex<T>* y, std::complex<T>* x,
             const std::complex<T>* weights, op::LinearOperator<T>* psi,
             const FistaOptions& options);

extern template Result fista<float>(op::LinearOperator<float>&, const std::complex<float>*,
                                    std::complex<float>*, const std::complex<float>*,
                                    op::LinearOperator<float>*, const FistaOptions&);
extern template Result fista<double>(op::LinearOperator<double>&, const std::complex<double>*,
                                     std::complex<double>*, const std::complex<double>*,
                                     op::LinearOperator<double>*, const FistaOptions&);

}  // namespace fieldft::solve
