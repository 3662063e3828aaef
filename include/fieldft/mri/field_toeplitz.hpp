// fieldft::mri::FieldToeplitzNormal — the normal operator of the field-corrected (SENSE) model as
// a sum of Toeplitz convolutions, one per time segment of the field DIFFERENCE (DESIGN.md §3).
//
// Model (fieldft/mri/encoding.hpp): s_j = Σ_v m_v exp(−i(2π k_j·r_v + ω_v t_j)), ω the field map
// in rad/s, W = diag(w_j) real >= 0; with coil maps S_c the SENSE model E(S_c ∘ x). Then
//   (AᴴWA x)_n = Σ_m x_m Σ_j w_j exp(+2πi k_j·(r_n − r_m)) exp(+i(ω_n − ω_m) t_j),
// which is no longer shift invariant. Time segmentation of the DIFFERENCE Δ = ω_n − ω_m,
//   exp(+iΔt) ≈ Σ_{l<L} h_l(t) exp(+iΔτ_l)
// (the least-squares interpolator of src/core/time_segmentation.hpp designed over the histogram
// of Δ, i.e. the field histogram's autocorrelation, symmetric about 0), splits it into
//   AᴴWA ≈ Σ_l diag(conj b_l) T_l diag(b_l),   b_l(v) = exp(−iω_v τ_l),
// with T_l the Toeplitz operator of the point-spread function p_l(d) = Σ_j w_j h_l(t_j)
// exp(+2πi k_j·d/N): complex weights, so its kernel on the 2N grid is the complex FFT of p_l (no
// Hermitian projection). For SENSE, Σ_c conj(S_c) of that applied to S_c ∘ x.
// Why this factorisation: Fessler et al.'s time-segmented Toeplitz (IEEE TSP 53(9), 2005) takes
// the model's own L segments and needs a kernel per segment PAIR, L² FFT-domain products per coil
// (L(L+1)/2 kernels); segmenting the difference needs L' kernels and L' FFT pairs per coil, with
// L' a little above L (the difference spans twice the field range, but its histogram is peaked at
// 0), and it reuses the SENSE Toeplitz machinery unchanged: the C·L' images (coil c, segment l)
// are the coils of one fused pass whose factor S_c·b_l is formed on the fly (the L' phase images
// are stored once, never per coil) and whose kernel is picked per segment.
//
// Periodic axes (as ToeplitzNormal, fieldft/mri/toeplitz.hpp): where every k_{j,a} of an axis is
// an integer (a stack's k_z), each p_l is N_a-periodic along it (the same samples, the same k),
// so the kernels and grids take L_a = N_a there instead of 2N_a: half the cells and FFT work
// per such axis, the same operator. options.periodic_axes = false pads every axis. A stacked
// last axis (ToeplitzOptions): the same in-plane samples, weights and readout times on every
// plane, so each p_l vanishes off the plane and its kernel is one plane, applied plane by plane
// without an FFT along the stack (options.stacked_axis = false transforms it).
//
// Accuracy: each term's phase factor is within `accuracy` (worst case over the readout times and
// the difference histogram), so the operator is within about accuracy·Σ_l|h_l| of the exact
// AᴴWA, plus the type 1 transforms' eps (tested against the exact DFT normal).
// Backends: the CPU engine; on CUDA every 2D and 3D grid, through the engine's fused path (2D,
// or a 3D stack plane by plane, with 2N_x and 2N_y powers of two in [16, 2048]) or its cuFFT path
// (src/cuda/toeplitz.cu), whose pad forms S_c·b_l·x and whose crop sums the conjugate products, chunk by chunk of the
// C·L' images. Shapes: domain = codomain = the image; apply = apply_adjoint (Hermitian up to the approximation).
// Vectors in the context's memory; every apply is stream-ordered, allocates nothing. Set-up (timed): the difference
// design on the host, L' type 1 transforms and FFTs. Memory (∏L_a = 2^d·N without periodic axes): L' complex kernels of
// ∏L_a values (kernel_bytes()), L' phase images and the maps; and the engine's grids: C·L' of ∏L_a on the CPU, one
// chunk of core::kToeplitzChunkBytes at most on CUDA (the fused path's row buffers hold half of each chunk image's
// grid) and on the cuFFT path (plus cuFFT's work area). On a device the kernels are checked against the free memory
// before the type 1 transforms: kOutOfMemory, with the numbers, when they do not fit.
#pragma once

#include <array>
#include <complex>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "fieldft/context.hpp"
#include "fieldft/mri/encoding.hpp"
#include "fieldft/nufft.hpp"
#include "fieldft/op/linear_operator.hpp"

namespace fieldft::mri {

struct FieldToeplitzOptions {
  double accuracy = 1e-3;  // worst-case relative error of the difference phase factor, > 0
  int max_segments = 64;   // the largest L' tried
  double eps = 1e-5;       // the type 1 transforms' tolerance
  nufft::Options nufft;    // their method and tuning (backend, device, stream: the context's)
  double chunk_bytes = 0;  // as ToeplitzOptions::chunk_bytes (CUDA's cuFFT path; 0: 512 MiB)
  bool periodic_axes = true;  // as ToeplitzOptions::periodic_axes (false: every axis 2N)
  bool stacked_axis = true;   // as ToeplitzOptions::stacked_axis (false: the stack is transformed)
  // Ranks that split the L' kernels (op::NormalShare; size 1, the default: none): kernel l is built
  // on rank l mod K and broadcast from it. Collective when size > 1: every rank of the group
  // constructs its operator with its share, for the same encoding (coil shares of one problem;
  // their maps may differ). The ranks first agree (share.agree_max) on failures and on a
  // fingerprint of what the kernels depend on (grid, points, times, weights, the interpolator):
  // when a rank failed it throws its error and the others build all kernels themselves; when the
  // fingerprints differ every rank builds all; a share inconsistent with the ranks taking part
  // (sizes that differ, ranks not 0 … size−1) is kShapeMismatch on every rank.
  op::NormalShare share;
};

template <class T>
class FieldToeplitzNormal final : public op::LinearOperator<T> {
 public:
  using Complex = std::complex<T>;
  // maps: C·N values (image + {C}, host memory) or empty (no coils); weights: M values >= 0 or
  // empty (W = I). Both are read during this call.
  FieldToeplitzNormal(std::shared_ptr<const Encoding<T>> encoding, Context context,
                      std::span<const Complex> maps = {}, std::int64_t coils = 1, std::span<const T> weights = {},
                      FieldToeplitzOptions options = {});
  // The same with the maps already in context memory (C·N values that must outlive the
  // operator; mri::sense passes its own).
  static std::unique_ptr<FieldToeplitzNormal> with_context_maps(std::shared_ptr<const Encoding<T>> encoding,
                                                                Context context, const Complex* context_maps,
                                                                std::int64_t coils, std::span<const T> weights = {},
                                                                FieldToeplitzOptions options = {});
  ~FieldToeplitzNormal() override;

  std::string name() const override;
  void apply(const Complex* x, Complex* z) override;
  void apply_adjoint(const Complex* x, Complex* z) override;

  int segments() const noexcept;           // L'
  double worst_error() const noexcept;     // of the difference interpolator at L'
  double setup_seconds() const noexcept;   // wall time of the construction
  double kernel_bytes() const noexcept;    // memory of the L' kernels: L'·∏L_d complex values
  // The embedding grid L_d (x first, 1 beyond dim): 2N_d, or N_d on a periodic axis (above).
  std::array<std::int64_t, 3> embedding_grid() const noexcept;
  std::array<bool, 3> periodic_axes() const noexcept;
  bool stacked_axis() const noexcept;      // the last axis is a stack (above)
  int kernels_built() const noexcept;      // of the L' kernels, those this rank computed (L' unless shared)
  // Where setup_seconds() went, in seconds of wall time (each part ends with the context
  // synchronised): design (the field map's quantiles and the difference interpolator, host),
  // phases (the L' phase images, made where the normal runs, and the maps into the context),
  // engine (the Toeplitz engine: FFT plans, grids), kernels (the type 1 plan and this rank's
  // transforms and FFTs), broadcast (the shared kernels from the ranks that made them; 0 unless
  // shared). What is left of setup_seconds() is validation and the ranks' agreement.
  struct SetupParts {
    double design = 0, phases = 0, engine = 0, kernels = 0, broadcast = 0;
  };
  SetupParts setup_parts() const noexcept;
  // Whether `context` can run one for `encoding` (the CPU and CUDA, every 2D and 3D grid; the
  // memory is checked at construction).
  static bool supported(const Encoding<T>& encoding, const Context& context);

 private:
  struct Empty {};
  FieldToeplitzNormal(std::shared_ptr<const Encoding<T>> encoding, Context context, Empty);
  void build(std::span<const Complex> maps, const Complex* context_maps, std::int64_t coils, std::span<const T> weights,
             const FieldToeplitzOptions& options);
  void make_engine(const FieldToeplitzOptions& options, std::span<const T> weights);
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

extern template class FieldToeplitzNormal<float>;
extern template class FieldToeplitzNormal<double>;

}  // namespace fieldft::mri
