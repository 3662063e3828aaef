// fieldft::mri::density_compensation — sampling density compensation weights by the iterative
// method of Pipe & Menon (MRM 41:179–186, 1999, "Sampling density compensation in MRI:
// rationale and an iterative numerical solution"), on the CPU or a CUDA device.
//
// Problem. A gridding reconstruction x = Aᴴ W y (Encoding's model, fieldft/mri/encoding.hpp:
// s_j = Σ_v m_v exp(−2πi k_j·r_v)) needs weights w_j that undo the uneven density of the samples
// k_j: then Aᴴ W A is close to the identity for images whose spectrum the samples cover. Pipe and
// Menon ask that the weighted samples, convolved with a kernel G, be uniform AT the samples:
//   Σ_l G(k_j − k_l) w_l = 1 for every j,
// and solve it by the fixed-point iteration, from w = 1,
//   w_j ← w_j / |Σ_l G(k_j − k_l) w_l|.
// Here G w = C Cᴴ w: Cᴴ spreads the samples onto a grid with the NUFFT kernel and C interpolates
// back (nufft::Plan's spread/interpolate-only passes, fieldft/nufft.hpp), so that
//   G(k_j, k_l) = Σ_cells Ψ_j(cell) Ψ_l(cell),
// the kernel's discrete autocorrelation: symmetric, non-negative, and positive on the diagonal,
// so every step is defined. On a device all iterations stay there (no host round trip).
//
// Grid and kernel. k-space is periodic in this model (the samples at k and k + N_d of an image
// of N_d voxels are the same measurement), so the grid covers one period per axis with
// n_d = max(⌈σ N_d⌉, 2w) cells, σ = DensityOptions::oversampling: cell spacing N_d/n_d ≈ 1/σ
// cycles per field of view, points x_d = 2π k_d / N_d as for NufftEncoding. The kernel is the
// NUFFT's ES kernel designed for tolerance `eps` at upsampling factor σ (width w, shape β: the
// PlanInfo of a plan with those options). What matters is its image-domain profile ψ̂ (Zwart,
// Johnson & Pipe, MRM 67:701–710, 2012, "Efficient sample density estimation by combining
// gridding and an optimized kernel"): G w = 1 equalises the point-spread function only where
// ψ̂² is not small, and replicas of it (at |r| = 1 field of view for Nyquist-spaced samples)
// must fall where ψ̂² is. On this grid, position r (fields of view) is frequency r/σ cycles per
// cell, so the kernel's passband |ξ| <= 1/(2σ) is the field of view |r| <= 1/2 and its stopband
// |ξ| >= 1 − 1/(2σ) begins at |r| = σ − 1/2: σ = 1.5 (the default) puts it at the first replica.
//
// Normalisation. In the limit of dense samples with density ρ (samples per (cycle/FOV)^dim),
// Σ_l G(k_j − k_l) w_l ≈ ρ w ∫G, and ∫G dk = Π_d ψ̂_d(0)² / σ_d with ψ̂(0) = ∫ψ (cells) and
// σ_d = n_d / N_d. The weights returned are the converged ones times ∫G / N_vox,
// i.e. w_j ≈ (the k-space area, in (cycles/FOV)^dim, that sample j stands for) / N_vox. So
// Aᴴ W A reproduces the images whose spectrum the samples cover with unit gain: its point-spread
// function p(r) = Σ_j w_j exp(2πi k_j·r) peaks at p(0) = Σ_j w_j = (covered k-space area) / N_vox,
// which is 1 for full Cartesian sampling (w_j = 1/N_vox) and about π/4 for a radial or spiral
// disc of radius N/2 in a square N × N grid (the iteration over-weights the outermost samples of
// a covered region a little: Σ_j w_j = 1.02·π/4 for the 64² radial trajectory of the tests); a
// constant image is reproduced with gain 1 wherever the samples cover k = 0 densely.
//
// Only the trajectory matters: the encoding's readout times, field map and shot labels are
// ignored (a field-corrected reconstruction weighs its samples by the same density).
//
// Errors (fieldft::Error): iterations < 1, oversampling outside [1.25, 2.25] or NaN, an
// encoding with no samples → kInvalidArgument; eps as nufft::Plan's (kInvalidArgument,
// kEpsTooSmall); a null weights pointer → kInvalidArgument; a CUDA context without CUDA →
// kBackendUnavailable.
#pragma once

#include <complex>
#include <vector>

#include "fieldft/context.hpp"
#include "fieldft/mri/encoding.hpp"
#include "fieldft/nufft.hpp"

namespace fieldft::mri {

struct DensityOptions {
  // Pipe–Menon iterations, >= 1. The gridding error of the smooth phantom of
  // tests/mri/density_test.cpp (radial and spiral, 64², defaults otherwise) falls from 4.5% after
  // 10 iterations to 2.1% after 20, 1.2-1.4% after 30 and 0.8-1.0% after 40 (docs/architecture.md):
  // the weights near the k-space centre, where the density changes within a kernel width, are the
  // last to settle; each iteration costs one spreading and one interpolation of the samples.
  int iterations = 30;
  // σ: grid cells per cycle/FOV and the upsampling factor the kernel is designed for, in
  // [1.25, 2.25]. At σ = 1.5 the kernel's passband is the field of view (|r| <= 1/2) and its
  // stopband begins at |r| = σ − 1/2 = 1, where Nyquist-spaced samples put the first replica of
  // the point-spread function: the replicas then do not enter G w, so Nyquist-sampled and densely
  // sampled regions get weights of the same scale. Above 1.5 the replicas do enter (full
  // Cartesian sampling: weights 6.5% low at σ = 1.75 and 12% at σ = 2, eps 1e-2); below it the
  // kernel is wider in k-space and converges more slowly.
  double oversampling = 1.5;
  // The kernel's tolerance, as nufft::Plan's eps: width w and shape β (w = 4 at σ = 1.5). The
  // weights of full Cartesian sampling are constant to a few eps per dimension (the kernel's
  // lattice sums ripple with the samples' offsets from the grid cells; measured at most 3.6·eps
  // per dimension at eps 1e-2 and 1e-4).
  double eps = 1e-2;
  // Method and bins of the spreading plan; backend, device, stream and nthreads are the
  // context's, and upsampfac, modeord and spread_interp_only are set here.
  nufft::Options nufft;
};

// The M = encoding.num_samples() weights on the host, computed in `context` (host threads, or a
// CUDA device with all iterations there).
template <class T>
std::vector<T> density_compensation(const Encoding<T>& encoding, const Context& context,
                                    const DensityOptions& options = {});

// The same weights written to `weights` in context memory (a host pointer, or device memory of
// the context's device) as M complex values with zero imaginary part, ready for
// op::VectorOps::mul or a diagonal operator. On a device the iterations are enqueued on the
// context's stream with no host round trip between them; the call itself is not free of host
// waits (the plan it makes sorts the points at set_points, and releasing it frees device
// memory), so treat it as set-up, not as a step inside a solver loop. As for any stream-ordered
// call, context.synchronize() before reading the weights on the host.
template <class T>
void density_compensation_to(const Encoding<T>& encoding, const Context& context, std::complex<T>* weights,
                             const DensityOptions& options = {});

extern template std::vector<float> density_compensation<float>(const Encoding<float>&, const Context&,
                                                               const DensityOptions&);
extern template std::vector<double> density_compensation<double>(const Encoding<double>&, const Context&,
                                                                 const DensityOptions&);
extern template void density_compensation_to<float>(const Encoding<float>&, const Context&, std::complex<float>*,
                                                    const DensityOptions&);
extern template void density_compensation_to<double>(const Encoding<double>&, const Context&,
                                                     std::complex<double>*, const DensityOptions&);

}  // namespace fieldft::mri
