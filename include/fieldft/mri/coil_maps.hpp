// fieldft::mri::estimate_coil_maps — coil sensitivity maps from the data themselves (DESIGN.md §3).
//
// Data: C coils of M samples each of one Encoding (layout C × M, coil slowest), in the memory of
// the context; maps: C images of the encoding's grid (layout {Nx, Ny[, Nz], C}, x fastest, coil
// slowest), written to the context's memory, in the convention of op::diag_expand, so that a
// SENSE model is compose(NufftEncoding{batch = C}, diag_expand(maps)).
//
// Units as in mri::Encoding: k in cycles per field of view. The encoding's readout times and
// field map are ignored: the maps come from the centre of k-space, where the off-resonance
// phase accrued during the readout blurs the image by far less than the calibration resolution.
//
// Density weights w_j (the area of k-space sample j stands for): options.density (M values on
// the host), else the cell count w_j = 1 / #{samples in the unit cell of sample j}, the cells
// being the cubes of side 1 cycle/FOV centred on the integer points of k-space (the Nyquist
// cells of the grid). For Cartesian data that is w = 1; for radial data it grows ~ |k| as the
// ramp filter does; for any trajectory it approximates the Voronoi area without geometry.
//
// kRss — low-resolution coil images normalised by their root-sum-of-squares:
//   calibration samples  |k_j| <= R (R = options.calibration_radius, a ball in cycles/FOV);
//   coil images          x_c = Eᴴ (h ∘ w ∘ y_c),  h_j = window(|k_j| / R)   (one adjoint NUFFT
//                        of batch C over the calibration samples only);
//   window               Hann, h(ρ) = (1 + cos πρ) / 2 (default): the sharp edge of a box
//                        (h = 1) rings (Gibbs) with period ~1/R across the whole image, and that
//                        ringing would be divided into every map; Hann trades it for a wider
//                        (≈ 2×) main lobe, harmless for smooth sensitivities;
//   RSS                  r_v = sqrt(Σ_c |x_c,v|²);
//   maps                 S_c,v = x_c,v / r_v · p_v where r_v > threshold · max_v r_v, else 0.
// Because x_c ≈ S_c · m (low-pass), the RSS maps are the true maps divided by their own RSS and
// multiplied by the object's low-resolution phase e^{i∠m}: RSS normalisation leaves the OBJECT's
// phase in the maps (harmless for SENSE: the reconstruction then carries m·e^{-i∠m}, a real
// image up to the resolution of the calibration). p_v removes it relative to a coil:
// reference_coil = r >= 0 gives p_v = conj(x_r,v) / |x_r,v| (so map r is real and >= 0; the
// maps then carry the coil phases relative to coil r), reference_coil = -1 (default for kRss)
// gives p_v = 1.
// Σ_c |S_c,v|² = 1 wherever the mask keeps v.
//
// kEspirit — the eigenvalue approach of Uecker et al., "ESPIRiT — an eigenvalue approach to
// autocalibrating parallel MRI: where SENSE meets GRAPPA", Magn. Reson. Med. 71:990–1001 (2014):
//   1. Cartesian calibration k-space: y_c(κ) for the integer points |κ_d| <= ⌊R⌋ of a cube
//      (calibration size n = 2⌊R⌋ + 1 per axis), gridded from ALL samples with the density
//      weights: y_c(κ) = Σ_v e^{-2πi κ·r_v} [Eᴴ(w ∘ y_c)]_v (adjoint NUFFT of batch C, then a
//      forward NUFFT at the points κ: the band-limited (Dirichlet) interpolation onto the grid;
//      exact, up to the factor N, for Cartesian data);
//   2. the calibration matrix A: one row per position of a kernel window Q of ks points per
//      axis inside the calibration cube, the C·ks^d values of all coils in it;
//   3. the signal subspace V∥ = {v_k: σ_k >= kernel_threshold · σ_1}: the leading eigenvectors
//      (eigenvalues σ_k²) of Σ_p a_p a_pᴴ, a_p the rows of A as column vectors, so that V∥ spans
//      the rows themselves (they are the conjugated right singular vectors of A); computed by a
//      dense Hermitian eigensolver in double;
//   4. per voxel the C × C matrix G(r) = U(r) U(r)ᴴ, U_c,k(r) = |Q|^{-1/2} Σ_q v_k[c, q] e^{2πi q·r}:
//      the image-domain form of the projection (1/|Q|) Σ_q R_qᴴ V∥V∥ᴴ R_q. Its eigenvalues lie in
//      [0, 1], and the coil sensitivities are its eigenvector of eigenvalue 1 (the data are a
//      fixed point of the projection);
//   5. maps = that eigenvector (power iteration from the gridded coil images) where its
//      eigenvalue >= eigen_threshold (the crop: below it the voxel lies outside the object's
//      support or the calibration does not explain it), else 0; unit norm, Σ_c |S_c|² = 1.
//   The eigenvector's phase is arbitrary; it is fixed so that map r = max(reference_coil, 0) is
//   real and >= 0 (coil phases relative to coil r; no object phase).
//   Kernel size ks: options.kernel_size, 0 = 6 in 2D and 4 in 3D (the eigensolver works on
//   C·ks^d unknowns). kEspirit runs its steps 2–5 on the host: on a CUDA context step 1 runs on the
//   device, the calibration k-space (C·n^d values) and the gridded images come to the host, and
//   the maps go back to the context's memory (a synchronising set-up step, not stream-ordered).
//
// kRss on a CUDA context is stream-ordered on the context's stream: the set-up (sample
// selection, weights, the NUFFT plan) is host work; the data and maps never leave the device,
// and the call returns before the maps are computed (synchronise the context before reading).
//
// Errors (fieldft::Error): coils < 1, a calibration radius <= 0 or beyond the grid (R must be at
// most min_d N_d / 2; for kEspirit the calibration size must exceed the kernel size), no
// calibration sample, thresholds outside their ranges, reference_coil outside [-1, C), a
// negative density → kInvalidArgument; data not C·M values, maps not N·C values, density not M
// values → kShapeMismatch; NaN/Inf in the density, or in the data on a HOST context (device data
// are not scanned) → kNonFinite; more than 2048 ESPIRiT unknowns C·ks^d → kTooLarge (the
// eigensolver is O((C·ks^d)³): use a smaller kernel or fewer, compressed coils).
#pragma once

#include <complex>
#include <cstdint>
#include <span>

#include "fieldft/context.hpp"
#include "fieldft/mri/encoding.hpp"

namespace fieldft::mri {

enum class CoilMapMethod : int { kRss = 0, kEspirit = 1 };
enum class CalibrationWindow : int { kHann = 0, kBox = 1 };

struct CoilMapOptions {
  CoilMapMethod method = CoilMapMethod::kRss;
  // R in cycles/FOV: the ball of calibration samples (kRss) or the half-width ⌊R⌋ of the
  // Cartesian calibration cube (kEspirit). 0 < R <= min_d N_d / 2. The default, 12, is a 25-point
  // calibration region: enough for coil sensitivities, which vary over a fraction of the FOV.
  double calibration_radius = 12.0;
  CalibrationWindow window = CalibrationWindow::kHann;  // kRss only
  std::span<const double> density = {};  // M weights on the host, >= 0; empty: cell counting
  double threshold = 0.05;      // kRss mask: r_v > threshold · max r, in [0, 1)
  int reference_coil = -1;      // phase reference (see above); -1: none (kRss), coil 0 (kEspirit)
  int kernel_size = 0;          // kEspirit: ks (0: 6 in 2D, 4 in 3D), >= 2
  double kernel_threshold = 0.02;  // kEspirit: keep σ_k >= kernel_threshold · σ_1, in (0, 1)
  double eigen_threshold = 0.9;    // kEspirit crop: keep voxels with eigenvalue >= it, in [0, 1)
  double eps = 1e-5;            // tolerance of the NUFFTs (relative l2)
};

struct CoilMapInfo {
  std::int64_t calibration_samples = 0;  // samples used (kRss: inside the ball; kEspirit: all)
  std::int64_t kernel_rank = 0;          // kEspirit: dim V∥; 0 for kRss
  int kernel_size = 0;                   // kEspirit: ks; 0 for kRss
  std::int64_t calibration_size = 0;     // kEspirit: n = 2⌊R⌋ + 1 per axis; 0 for kRss
};

// data: C·M values, maps: N·C values (N = encoding.num_voxels()), both in context memory (spans
// of device pointers on a CUDA context: only their lengths are read on the host).
template <class T>
CoilMapInfo estimate_coil_maps(const Encoding<T>& encoding, const Context& context,
                               std::span<const std::complex<T>> data, std::int64_t coils,
                               const CoilMapOptions& options, std::span<std::complex<T>> maps);

extern template CoilMapInfo estimate_coil_maps<float>(const Encoding<float>&, const Context&,
                                                      std::span<const std::complex<float>>, std::int64_t,
                                                      const CoilMapOptions&, std::span<std::complex<float>>);
extern template CoilMapInfo estimate_coil_maps<double>(const Encoding<double>&, const Context&,
                                                       std::span<const std::complex<double>>, std::int64_t,
                                                       const CoilMapOptions&, std::span<std::complex<double>>);

}  // namespace fieldft::mri
