// fieldft::mri::ToeplitzNormal — the normal operator AᴴWA of the NUFFT encoding model as a
// convolution, applied with FFTs on a grid of twice the image size (DESIGN.md §3).
//
// Model (fieldft/mri/encoding.hpp, no field map): s_j = Σ_m x_m exp(−i 2π k_j·r_m) with
// r_m = (m_d − ⌊N_d/2⌋)/N_d per axis, k in cycles per field of view, W = diag(w_j) real >= 0.
// Since r_n − r_m = (n − m)/N depends only on the voxel offset,
//   (AᴴWA x)_n = Σ_m p(n − m) x_m,   p(d) = Σ_j w_j exp(+i 2π Σ_a k_{j,a} d_a / N_a),
// for integer offsets d_a in (−N_a, N_a): a (multilevel) Toeplitz matrix, Hermitian since
// p(−d) = conj p(d). Wajer & Pruessmann, "Major speedup of reconstruction for sensitivity
// encoding with arbitrary trajectories", ISMRM 2001 p. 767; Fessler, Lee, Olafsson, Shi & Noll,
// "Toeplitz-based iterative image reconstruction for MRI with correction for object motion",
// IEEE TSP 53(9), 2005; Baron, Dwork, Pauly & Nishimura, "Rapid compressed sensing reconstruction
// of 3D non-Cartesian MRI", MRM 79(5), 2018.
//
// Set-up (once, timed: setup_seconds()): p on the 2N grid is ONE type 1 NUFFT of the weights,
// f[q] = Σ_j w_j exp(+i q·x_j) with 2N_a modes per axis at the encoding's own points
// x_{j,a} = 2π k_{j,a}/N_a, so f[q] = p(q) for q_a in [−N_a, N_a); in FFT order (modeord 1) the
// array is already the first column of the circulant matrix of size ∏ 2N_a that embeds the
// Toeplitz one (offset d at index d mod 2N_a; index N_a is never used). The kernel is the real
// part of its FFT divided by ∏ 2N_a: the FFT of p's Hermitian part, which the exact p equals, so
// the operator is Hermitian to rounding whatever the NUFFT's error.
// Apply, per image (L_a = 2N_a; N_a on a periodic axis, below): zero-pad x to the L grid (x in
// the first N_a of each axis), FFT, multiply
// by the kernel, inverse FFT, keep the first N_a of each axis. The FFTs exploit the padding
// (pruned passes: src/cpu/toeplitz_cpu.cpp, src/cuda/toeplitz.cu), and the B images go through
// one batched FFT.
//
// Periodic axes: where every k_{j,a} of an axis is an integer (a stack's k_z, on the Cartesian
// grid), exp(+i 2π k_{j,a} d_a / N_a) is N_a-periodic in d_a, so p is, and the normal is ALREADY
// circulant of length N_a along that axis: the embedding takes L_a = N_a there instead of 2N_a
// (no pad, no crop; the type 1 transform N_a modes), half the cells per such axis, exactly the
// same operator. Detected at construction (integer within eps/(20π): the kernel's extra error is
// then at most eps/10, see src/mri/toeplitz_psf.hpp), once per kernel; options.periodic_axes =
// false pads every axis (for comparisons). name() and embedding_grid() report the grid.
//
// Stacked last axis: where the last axis is periodic and the samples are ONE in-plane pattern
// repeated, with the same weights, on each of its N planes (a full stack of spirals or stars,
// planes slowest in the sample order: src/mri/toeplitz_psf.hpp, stacked_last_axis), p vanishes
// at every nonzero offset of that axis, so the normal is the identity along it times one
// in-plane convolution: the kernel is one plane (∏ of the other L_a values) and apply transforms
// the other axes only, plane by plane (no FFT along the stack; the same operator). Detected at
// construction; options.stacked_axis = false keeps the last axis transformed. name() reports it.
//
// Accuracy: p is accurate to the type 1 transform's eps (relative l2); for a generic x the
// relative error of the result is about eps, then the rounding of T in the FFTs.
//
// Shapes and layout: square, domain = codomain = image {Nx, Ny[, Nz]} (+ {B} for batch B > 1:
// B stacked images, e.g. coils), x fastest, as the encoding operators. apply = apply_adjoint =
// AᴴWA; apply_normal is the operator's own normal (AᴴWA)², by the default. batched(k) stacks
// k·B images (shape + {k}) and shares the kernel (no new set-up; setup_seconds() is the
// original's). Vectors live in the operator's context; on a device every apply is
// stream-ordered and allocates nothing (the 2N grid, kernel and cuFFT plans are made at
// construction; the construction synchronises the stream once, to time the set-up). Memory:
// ∏L_a·B complex values (the grid; 2^d·N·B without periodic axes) and ∏L_a values of T (the
// kernel; one plane of it on a stacked axis).
//
// Errors (fieldft::Error): null encoding, or an encoding with a field map (field maps need time
// segmentation), → kInvalidArgument; weights of a length other than M (or 0) → kShapeMismatch;
// a NaN or Inf weight → kNonFinite, a negative one → kInvalidArgument (each naming the index);
// options.batch < 1 → kInvalidArgument; eps outside the NUFFT's range → the NUFFT's error.
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

struct ToeplitzOptions {
  double eps = 1e-5;       // tolerance of the type 1 transform that computes p (nufft::Plan's eps)
  std::int64_t batch = 1;  // B stacked images per call (coils), through one batched FFT
  nufft::Options nufft;    // method and tuning of that transform; backend, device, stream and
                           // nthreads are the context's, modeord is 1. (The CPU engine plans its
                           // own FFT passes with FFTW_MEASURE, on one image, whatever fft_planning
                           // says: FFTW_ESTIMATE's strided passes are about ten times slower.)
  double chunk_bytes = 0;  // CUDA: the B images' 2N grids are transformed in chunks of at most
                           // this many bytes (at least one image; the fused path's row buffers
                           // take half); 0: core::kToeplitzChunkBytes, 512 MiB (src/core/toeplitz.hpp)
  bool periodic_axes = true;  // an axis whose k are all integers takes L = N, not 2N (above);
                              // false: every axis 2N (the same operator; for tests and timings)
  bool stacked_axis = true;   // a stacked last axis is not transformed (above); false: it is
                              // (the same operator; for tests and timings)
};

template <class T>
class ToeplitzNormal final : public op::LinearOperator<T> {
 public:
  using Complex = std::complex<T>;

  // weights: M values in host memory, read during this call (empty: W = I).
  ToeplitzNormal(std::shared_ptr<const Encoding<T>> encoding, Context context, std::span<const T> weights = {},
                 ToeplitzOptions options = {});
  ~ToeplitzNormal() override;

  std::string name() const override;
  void apply(const Complex* x, Complex* z) override;
  void apply_adjoint(const Complex* x, Complex* z) override;  // the same: the operator is Hermitian
  typename op::LinearOperator<T>::Ptr batched(std::int64_t k) const override;
  // The SENSE normal operator of ONE image x with the B = batch() images as its coils, in one
  // fused pass where the backend has one (CUDA, every grid: its fused kernels in 2D and on 3D
  // stacks for 2N_x, 2N_y powers of two in [16, 2048], else its cuFFT passes with S_b in the pad and the sum in the
  // crop):
  //   z = Σ_b conj(S_b) ∘ T (S_b ∘ x),  maps: the B·N values of S (image + {B}, context memory),
  // x and z: one image (N values) each, in context memory, not overlapping. Returns false, having
  // done nothing, elsewhere: the caller expands, applies and combines (mri::sense does).
  bool apply_sense(const Complex* maps, const Complex* x, Complex* z);

  const Encoding<T>& encoding() const noexcept { return *encoding_; }
  std::int64_t batch() const noexcept { return options_.batch; }
  bool weighted() const noexcept;
  // The embedding grid L_d (x first, 1 beyond dim): 2N_d, or N_d on a periodic axis (above).
  std::array<std::int64_t, 3> embedding_grid() const;
  std::array<bool, 3> periodic_axes() const noexcept { return periodic_; }
  bool stacked_axis() const noexcept { return stacked_; }  // the last axis is a stack (above)
  // Wall time of the set-up in seconds, measured at construction: the engine (2N grid, FFT
  // plans), the type 1 transform with its plan, and the kernel's FFT, up to the stream's
  // completion.
  double setup_seconds() const noexcept;

 private:
  struct Kernel;  // the kernel in context memory and its set-up facts, shared by batched copies
  // weights: the caller's (read only when kernel is null: the stack's detection).
  ToeplitzNormal(std::shared_ptr<const Encoding<T>> encoding, Context context, ToeplitzOptions options,
                 op::Shape batch_shape, std::shared_ptr<const Kernel> kernel, std::span<const T> weights);
  void make_engine();

  std::shared_ptr<const Encoding<T>> encoding_;
  ToeplitzOptions options_;
  op::Shape batch_shape_;
  std::shared_ptr<const Kernel> kernel_;
  std::array<bool, 3> periodic_{false, false, false};  // after kernel_: initialised from it
  bool stacked_ = false;                               // likewise
  struct Engine;  // the backend's engine (src/core/toeplitz.hpp)
  std::unique_ptr<Engine> engine_;
  double engine_seconds_ = 0;  // making the engine (grid, FFT plans), part of the set-up
};

extern template class ToeplitzNormal<float>;
extern template class ToeplitzNormal<double>;

}  // namespace fieldft::mri
