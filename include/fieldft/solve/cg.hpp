// fieldft::solve::cg — conjugate gradients on the (weighted, Tikhonov-regularised) normal
// equations (DESIGN.md §1, solve layer: sees only op::LinearOperator and op::VectorOps).
//
// cg(A, y, x, W, options) minimises, over images x (A's domain),
//     f(x) = ‖W^{1/2} (A x − y)‖² + λ ‖x‖²
// by solving its normal equations
//     (Aᴴ W A + λ I) x = Aᴴ W y
// with conjugate gradients. W is diagonal with real entries w_j >= 0 (k-space weights, e.g. a
// density compensation or noise whitening), given as a vector of A.codomain_size() complex values
// whose imaginary parts are 0, or nullptr for W = I. With W = I the normal operator is
// A.apply_normal (so a fast normal operator, e.g. Toeplitz, is used), prepared before the loop
// (A.prepare_normal(): Toeplitz kernels are built then, not in the first iteration); with weights it is
// A.weighted_normal(w) where A has one (a NufftEncoding or SENSE operator with a Toeplitz normal
// gets a weighted Toeplitz kernel, built once before the loop: the set-up reads W back to the
// host once), else A.apply, then w ∘ ·, then A.apply_adjoint. fista and admm do the same.
//
// cg_normal(N, b, x, options) solves (N + λ I) x = b for a square operator N that is Hermitian
// and positive semi-definite (positive definite when λ = 0), applying N with N.apply. cg() is
// cg_normal on N = AᴴWA and b = AᴴWy.
//
// Iteration (Hestenes & Stiefel 1952; the notation of Shewchuk, "An Introduction to the
// Conjugate Gradient Method Without the Agonizing Pain", 1994, §B2), with M = N + λI:
//     r = b − M x,  p = r,  ρ = rᴴr
//     repeat:  q = M p;  α = ρ / pᴴq;  x += α p;  r −= α q;  ρ' = rᴴr;  β = ρ'/ρ;  p = r + β p
// The iterates decrease f monotonically (they minimise the M-norm of the error over growing Krylov
// spaces). A step whose denominator is exactly 0 (a converged problem) is 0, never NaN.
//
// Memory and stream order: y, x, W (and b) are vectors in the operator's context (host pointers,
// or device pointers of its CUDA device). Workspace (b, r, p, q, the scalars, and one codomain
// vector with weights) is allocated once per call, before the loop; the scalars ρ, α, β stay in
// context memory (VectorOps::dot_to / ratio / axpy / xpay), so on a device an iteration enqueues
// its work and never waits for it. The ONLY host synchronisation is the residual ‖r‖ = √ρ
// brought back (with ‖r0‖ in the first) once per iteration, or once per options.check_every
// iterations, when options.tolerance > 0 or a callback is set. With tolerance 0 and no
// callback, cg() on a device enqueues all iterations and returns without waiting: x is ready
// once the context's stream reaches the end (context().synchronize()), and the result's
// residual is NaN (not computed).
//
// Validation (fieldft::Error):
//   max_iterations <= 0, lambda < 0 or NaN/Inf, tolerance < 0 or NaN → kInvalidArgument;
//   y, x or b null → kInvalidArgument; weights of the wrong context size are the caller's duty;
//   N not square (cg_normal) → kShapeMismatch;
//   on the HOST: y, b or the initial x with NaN/Inf → kNonFinite; a weight that is NaN/Inf,
//   negative or has a nonzero imaginary part → kInvalidArgument (it names the index).
//   On a DEVICE the values of y, b, x and W are not inspected (that would synchronise the stream):
//   non-finite values show up as a non-finite residual, which throws kNonFinite when the residual
//   is brought back (tolerance > 0 or a callback), and as NaN in x otherwise; negative weights
//   make the problem indefinite and are not detected there.
#pragma once

#include <complex>

#include "fieldft/op/linear_operator.hpp"
#include "fieldft/solve/report.hpp"

namespace fieldft::solve {

// One report per iteration, after its update of x (fieldft/solve/report.hpp); residual =
// ‖r‖/‖r0‖ of the normal equations, objective NaN (cg does not evaluate f).
using CgReport = Report;

struct CgOptions {
  int max_iterations = 30;  // >= 1
  // Stop once ‖r‖/‖r0‖ <= tolerance (>= 0). 0: run all max_iterations (no host round trip).
  double tolerance = 0;
  double lambda = 0;        // Tikhonov weight λ >= 0
  // Called for every iteration (brings its residual onto the host: after it, or with its batch,
  // see check_every); return false to stop.
  Callback callback;
  // Iterations between the host round trips for the residual (>= 1; used only with a tolerance
  // or a callback). 1: the residual of each iteration comes back after it. B > 1: the residuals
  // stay in context memory and come back every B iterations (and after the last), B at a time;
  // the callback then sees them in order, late, and the tolerance stops at the end of the batch
  // in which it was reached, so x may have up to B − 1 iterations more than needed (iterations
  // and residual describe the x returned). On a device, B = max_iterations runs the whole solve
  // without waiting for it until the end: what many small solves sharing a device want.
  int check_every = 1;
};

// iterations: updates of x done (0 when r0 = 0); residual: final ‖r‖/‖r0‖, NaN when not computed
// (tolerance 0, no callback); converged: residual <= tolerance (or r0 = 0).
using CgResult = Result;

// Minimises ‖W^{1/2}(A x − y)‖² + λ‖x‖² (see above). x: the initial guess in, the solution out
// (A.domain_size() values); y and weights (or nullptr): A.codomain_size() values.
template <class T>
CgResult cg(op::LinearOperator<T>& a, const std::complex<T>* y, std::complex<T>* x,
            const std::complex<T>* weights, const CgOptions& options);

// Solves (N + λI) x = b for a Hermitian positive (semi-)definite square N (see above).
template <class T>
CgResult cg_normal(op::LinearOperator<T>& n, const std::complex<T>* b, std::complex<T>* x,
                   const CgOptions& options);

extern template CgResult cg<float>(op::LinearOperator<float>&, const std::complex<float>*,
                                   std::complex<float>*, const std::complex<float>*,
                                   const CgOptions&);
extern template CgResult cg<double>(op::LinearOperator<double>&, const std::complex<double>*,
                                    std::complex<double>*, const std::complex<double>*,
                                    const CgOptions&);
extern template CgResult cg_normal<float>(op::LinearOperator<float>&, const std::complex<float>*,
                                          std::complex<float>*, const CgOptions&);
extern template CgResult cg_normal<double>(op::LinearOperator<double>&,
                                           const std::complex<double>*, std::complex<double>*,
                                           const CgOptions&);

}  // namespace fieldft::solve
