// Operator algebra on fieldft::op::LinearOperator (DESIGN.md §3). Every combinator returns a
// new operator that keeps shared ownership of its operands, runs in the operands' context and
// checks, at construction, that
//   - shapes agree AS SHAPES (a 64x64 image is not a 4096-sample vector), and
//   - contexts are the same place (location and stream; kContextMismatch otherwise),
// throwing kShapeMismatch / kContextMismatch with both operators' names and shapes.
//
//   compose(A, B)        A∘B: x ↦ A(Bx). Needs A.domain == B.codomain. Normal: Bᴴ(AᴴA)B, so
//                        that A's fast normal (Toeplitz) survives composition with B.
//   sum({A_i})           Σ A_i (equal domains, equal codomains). Normal: the default (A then Aᴴ).
//   vstack({A_i})        x ↦ (A_1 x; …; A_K x): equal domains; the codomain is the
//                        concatenation — codomain + {K} when all codomains are equal, else the
//                        flat {Σ sizes}. Normal: Σ A_iᴴA_i (each with its own fast normal).
//   hstack({A_i})        (x_1; …; x_K) ↦ Σ A_i x_i: equal codomains; the domain concatenates as
//                        in vstack.
//   diag(d, shape, ctx)  x ↦ d ∘ x for a fixed array d of `shape` (copied to ctx at
//                        construction); applied to inputs of shape + {K…} it broadcasts over
//                        the trailing stacked axes (see batched). Adjoint: conj(d) ∘ y.
//                        Normal: |d|² ∘ x.
//   diag_expand(d, shape, K, ctx)
//                        x ↦ (d_1 ∘ x; …; d_K ∘ x) for a fixed array d of shape + {K}: the
//                        domain is `shape`, the codomain shape + {K} (coil sensitivities:
//                        one image to K coil images in one pass). Adjoint: Σ_k conj(d_k) ∘ y_k.
//                        Normal: (Σ_k |d_k|²) ∘ x.
//   identity(shape, ctx) x ↦ x.
//   scale(α, A)          αA; adjoint conj(α)Aᴴ; normal |α|²AᴴA.
//   adjoint(A)           Aᴴ as a view (apply ↔ apply_adjoint); normal A Aᴴ. adjoint(adjoint(A))
//                        returns A itself.
//   batch(A, K)          K stacked copies of A, x_k ↦ A x_k, with domain + {K} and codomain
//                        + {K}: through A.batched(K) (one batched transform for the NUFFT and
//                        DFT encodings: never a loop of plans); operators without a batched
//                        form are applied K times in turn. batch(compose(A,B),K) batches both.
//                        Batched forms: diag, identity, and compose / sum / scale / adjoint
//                        whose operands have one (an operand without one is looped alone);
//                        vstack, hstack and diag_expand are looped.
#pragma once

#include <complex>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "fieldft/op/linear_operator.hpp"

namespace fieldft::op {

template <class T>
using OperatorPtr = std::shared_ptr<LinearOperator<T>>;

template <class T>
OperatorPtr<T> compose(OperatorPtr<T> a, OperatorPtr<T> b);
template <class T>
OperatorPtr<T> sum(std::vector<OperatorPtr<T>> terms);
template <class T>
OperatorPtr<T> vstack(std::vector<OperatorPtr<T>> blocks);
template <class T>
OperatorPtr<T> hstack(std::vector<OperatorPtr<T>> blocks);
// d: shape_size(shape) values in HOST memory (copied to the context).
template <class T>
OperatorPtr<T> diag(std::span<const std::complex<T>> d, Shape shape, Context context);
// d: shape_size(shape) · k values in HOST memory (copied to the context).
template <class T>
OperatorPtr<T> diag_expand(std::span<const std::complex<T>> d, Shape shape, std::int64_t k,
                           Context context);
template <class T>
OperatorPtr<T> identity(Shape shape, Context context);
template <class T>
OperatorPtr<T> scale(std::complex<T> alpha, OperatorPtr<T> a);
template <class T>
OperatorPtr<T> adjoint(OperatorPtr<T> a);
template <class T>
OperatorPtr<T> batch(OperatorPtr<T> a, std::int64_t k);

// Throws kShapeMismatch unless `got` equals `expected`: "<what>: expected shape 64x64, got 4096".
void require_shape(const Shape& expected, const Shape& got, const std::string& what);

}  // namespace fieldft::op
