// Sparsifying operators for regularised reconstruction (DESIGN.md §3): first differences (the
// roughness and total-variation penalties) and orthonormal wavelets (l1-wavelet penalties), as
// op::LinearOperator on host or CUDA contexts, float and double. Finite differences (forward,
// adjoint and normal) take one pass over the image; the wavelet one pass per split axis and level.
// On a device every call is stream-ordered, and no call allocates after the first (the wavelet's
// scratch image). Arrays are x fastest (include/fieldft/op/linear_operator.hpp).
//
// ---- finite_difference(shape, axes, context, boundary) ---------------------------------------
// Domain `shape` (an image of any number of axes, 1 to 8, every extent >= 1); codomain
// shape + {A}, A = axes.size(): the A difference images one after the other,
//
//   (Dx)_{i,a} = x_{i + e_{axes[a]}} − x_i,
//
// with the boundary deciding the last index along each axis:
//   kPeriodic  circular: x_{i+e} wraps to index 0. The null space is exactly the images that are
//              constant along the differenced axes; DᴴD is the circulant Laplacian,
//              Σ_a 2x_i − x_{i+e_a} − x_{i−e_a}.
//   kNeumann   no difference across the border: (Dx)_{i,a} = 0 at the last index along axis a
//              (the image is reflected, x_{n} := x_{n−1}); DᴴD is the Laplacian with zero-flux
//              borders: Σ over the existing neighbours m of i of (x_i − x_m).
// The adjoint is the negative divergence, (Dᴴy)_i = Σ_a y_{i−e_a,a} − y_{i,a} (each term where
// its difference exists). apply_normal computes DᴴD in one pass. The overload without `axes`
// differences along every axis, 0, 1, …, of `shape`. Along an axis of extent 1 the differences
// are 0. batched(K): K stacked images, shape + {K} → shape + {A, K}, in one pass.
//
// ---- wavelet(shape, levels, context, kind) -------------------------------------------------
// The orthonormal separable discrete wavelet transform with periodic boundary (Mallat 1989,
// "A theory for multiresolution signal decomposition", IEEE TPAMI 11(7); Daubechies 1992,
// "Ten Lectures on Wavelets", SIAM, ch. 5–6). Domain and codomain are
// both `shape` (1 to 8 axes, every extent >= 1); the coefficients replace the image:
//
//   Level ℓ = 1, 2, …, levels transforms the block B_ℓ = [0, m_0) × [0, m_1) × … (B_1 = the whole
//   image). Along each axis whose block extent m is EVEN, one 1D analysis step maps every line
//   v_0..v_{m−1} of the block to
//     low  (approximation)  u_j       = Σ_k h_k v_{(2j+k) mod m},   j = 0..m/2−1,
//     high (detail)         u_{m/2+j} = Σ_k g_k v_{(2j+k) mod m},   g_k = (−1)^k h_{L−1−k},
//   in place along that axis. The next block keeps the low half of every split axis (m/2) and the
//   full extent of every unsplit one. An axis whose block extent is odd is not split at that
//   level or any later one, so any shape works: extents of 1 and odd extents simply stay whole,
//   and a 64x48x5 volume gets a 2D transform of each of its 5 slices.
//
// So the coefficients are in Mallat's pyramid layout: the all-low corner of the last level (the
// approximation) at the origin, and for each level and each non-empty subset of its split axes
// the detail band that is high along that subset, at the corresponding offsets m/2. The
// transform is orthonormal (‖Wx‖ = ‖x‖); its adjoint is its inverse (synthesis, levels in
// reverse) and its normal the identity (a copy).
//
// levels must be in [1, wavelet_max_levels(shape)]: a level needs at least one axis of even
// extent in its block (kInvalidArgument otherwise, naming the largest valid levels).
//
// Filters (low-pass h, L taps, sums Σ h_k = √2, orthonormal: Σ_k h_k h_{k+2m} = δ_m):
//   kHaar         L = 2: h = (1, 1)/√2 — one vanishing moment: piecewise constant images have
//                 nonzero detail coefficients only where a block of the level straddles a jump.
//   kDaubechies4  L = 4, Daubechies' D4 ("db2" in MATLAB and PyWavelets): the shortest filter with
//                 two vanishing moments, Σ_k (−1)^k k^p h_k = 0 for p = 0, 1, so detail
//                 coefficients of linear ramps vanish (away from the periodic wrap). Solving the
//                 four conditions Σh = √2, Σh² = 1, h_0h_2 + h_1h_3 = 0, Σ(−1)^k k h_k = 0
//                 gives two solutions, mirror images of each other; the one Daubechies
//                 tabulates, with its energy first (extremal phase; Daubechies 1988, CPAM 41(7);
//                 1992, table 6.1), is
//                 h = (1+√3, 3+√3, 3−√3, 1−√3) / (4√2).
// Periodization (circular convolution, indices mod m) keeps the conditions, hence
// orthonormality, for every even extent m — Σ_q Σ_k h_k h_{k+2j+qm} = [2j ≡ 0 mod m] —
// including extents shorter than the filter (D4 on 2 samples reduces to Haar).
// batched(K): K stacked images (shape + {K}), each transformed alone, in the same passes.
//
// ---- errors -------------------------------------------------------------------------------
// kInvalidArgument: a shape with no axes, more than 8 axes, or an extent < 1; empty axes, an
// axis outside [0, ndim), a repeated axis; levels < 1 or above wavelet_max_levels(shape); an
// unknown boundary or wavelet. kBackendUnavailable: a CUDA context in a build without CUDA.
#pragma once

#include <cstdint>
#include <vector>

#include "fieldft/op/combinators.hpp"
#include "fieldft/op/linear_operator.hpp"

namespace fieldft::op {

enum class Boundary : int { kPeriodic = 0, kNeumann = 1 };
enum class Wavelet : int { kHaar = 0, kDaubechies4 = 1 };

const char* boundary_name(Boundary b) noexcept;  // "periodic", "neumann"
const char* wavelet_name(Wavelet w) noexcept;    // "haar", "daubechies4"

template <class T>
OperatorPtr<T> finite_difference(Shape shape, std::vector<int> axes, Context context,
                                 Boundary boundary = Boundary::kPeriodic);
// Every axis of `shape`, in order 0, 1, ….
template <class T>
OperatorPtr<T> finite_difference(Shape shape, Context context, Boundary boundary = Boundary::kPeriodic);

template <class T>
OperatorPtr<T> wavelet(Shape shape, int levels, Context context, Wavelet kind = Wavelet::kHaar);

// The most levels wavelet() accepts for `shape`: the number of times some extent can be halved
// while halving every even extent at each step (0 when every extent is odd). Validates `shape`.
int wavelet_max_levels(const Shape& shape);

// The low-pass analysis filter h of a wavelet, in double (the high-pass is g_k = (−1)^k h_{L−1−k}).
std::vector<double> wavelet_lowpass(Wavelet kind);

}  // namespace fieldft::op
