// fieldft::solve::max_eigenvalue — the largest eigenvalue of a Hermitian positive semi-definite
// operator by the power method (DESIGN.md §1, solve layer).
//
// max_eigenvalue(N, iterations) estimates λ_max(N) for a square N (domain shape = codomain shape)
// applied by N.apply: from a pseudo-random start v0 (VectorOps::fill_random with a fixed seed, so
// the result is reproducible and the start is almost surely not orthogonal to the top
// eigenvector), v_{k+1} = N v_k / ‖N v_k‖, and the estimate is the Rayleigh quotient v_Kᴴ N v_K of
// the last normalised iterate: `iterations` applications of N in all. The estimate is at most
// λ_max and approaches it as (λ₂/λ₁)^{2K}; a step size 1/L that needs L >= λ_max (fista) should
// add a margin. For the normal operator of some A, pass op::compose(op::adjoint(A), A).
//
// The iterations stay in context memory (VectorOps::normalize keeps ‖N v‖ there); the only
// synchronisation is the final Rayleigh quotient. Workspace (2 vectors) is allocated once.
//
// Errors: iterations <= 0 → kInvalidArgument; N not square → kShapeMismatch.
#pragma once

#include "fieldft/op/linear_operator.hpp"

namespace fieldft::solve {

template <class T>
double max_eigenvalue(op::LinearOperator<T>& n, int iterations);

extern template double max_eigenvalue<float>(op::LinearOperator<float>&, int);
extern template double max_eigenvalue<double>(op::LinearOperator<double>&, int);

}  // namespace fieldft::solve
