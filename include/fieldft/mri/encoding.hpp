// fieldft::mri::Encoding and the encoding operators on it (DESIGN.md §3).
//
// One geometry for every encoding model, with these units and ranges:
//   grid      {Nx, Ny} or {Nx, Ny, Nz}, each >= 1, x fastest;
//   k         k-space position of sample j per axis, in cycles per field of view, within
//             [-N_d/2, N_d/2] up to a relative 1e-5 for rounding (a value outside, e.g. in
//             radians or 1/m, is refused with kInvalidArgument naming the array and index);
//   r_v       image position of voxel v per axis, in field-of-view units: (i_d - ⌊N_d/2⌋) / N_d;
//   times     readout time of each sample, in seconds (empty: all zero);
//   field     off-resonance Δω per voxel, in rad/s (empty: none);
//   shots     shot label of each sample, integers >= 0 (empty: one shot).
// Forward model:  s_j = Σ_v m_v exp(-i (2π k_j·r_v + Δω_v t_j));  adjoint: the conjugate phase.
// Every array is validated once, at construction (NaN/Inf, lengths, ranges, products beyond
// 64 bits), and copied: the caller may free its arrays afterwards.
//
// Encoding operators (op::LinearOperator), interchangeable implementations of that model:
//   NufftEncoding   type 2 NUFFT forward, type 1 adjoint (no field map: a field map needs time
//                   segmentation or the exact DFT; NufftEncoding refuses an encoding with one);
//                   its apply_normal may take the Toeplitz form (Toeplitz, below);
//   DftEncoding     the exact field-corrected DFT (include/fieldft/mri/dft.hpp);
//   DftR2Encoding   the exact DFT with the R2* intravoxel-dephasing factor of DftR2.
// Shapes: domain {Nx, Ny[, Nz]} (+ {B} with options.batch = B > 1: B stacked images through ONE
// batched transform), codomain {M} (+ {B}). batched(K) multiplies the batch and appends {K} to
// both shapes (op::batch's contract: B = 3, K = 2 gives {Nx, Ny, 3, 2}, one transform of batch 6).
// Vectors live in the operator's context (host or CUDA device), and device calls are
// stream-ordered.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "fieldft/context.hpp"
#include "fieldft/nufft.hpp"
#include "fieldft/op/linear_operator.hpp"

namespace fieldft::mri {

template <class T>
class Encoding {
 public:
  // kz empty in 2D; times, field, shots may be empty (see above).
  Encoding(std::span<const std::int64_t> grid, std::span<const T> kx, std::span<const T> ky,
           std::span<const T> kz = {}, std::span<const T> times = {},
           std::span<const T> field = {}, std::span<const std::int32_t> shots = {});

  int dim() const noexcept { return dim_; }
  const std::array<std::int64_t, 3>& grid() const noexcept { return grid_; }  // 1 if unused
  std::int64_t num_voxels() const noexcept { return grid_[0] * grid_[1] * grid_[2]; }
  std::int64_t num_samples() const noexcept { return static_cast<std::int64_t>(k_[0].size()); }
  std::span<const T> k(int axis) const { return k_.at(static_cast<std::size_t>(axis)); }
  std::span<const T> times() const noexcept { return times_; }   // empty: all zero
  std::span<const T> field() const noexcept { return field_; }   // empty: no field map
  std::span<const std::int32_t> shots() const noexcept { return shots_; }
  bool has_field() const noexcept { return !field_.empty(); }
  std::int32_t num_shots() const noexcept { return num_shots_; }   // max label + 1 (1 if none)
  op::Shape image_shape() const;   // {Nx, Ny[, Nz]}
  op::Shape sample_shape() const;  // {M}

 private:
  int dim_ = 0;
  std::array<std::int64_t, 3> grid_{1, 1, 1};
  std::array<std::vector<T>, 3> k_;
  std::vector<T> times_, field_;
  std::vector<std::int32_t> shots_;
  std::int32_t num_shots_ = 1;
};

// How NufftEncoding::apply_normal computes AᴴA:
//   kOff   the type 2 transform, then the type 1 (LinearOperator's default);
//   kOn    a ToeplitzNormal (fieldft/mri/toeplitz.hpp) with W = I, the encoding's eps, batch and
//          nufft options: two FFTs on the 2N grid per call instead of two NUFFTs;
//   kAuto  kOn where the cost model of src/core/toeplitz.hpp says it is faster: per image, the
//          pruned FFT work on the 2N grid plus three passes over it, against the FFT work on the
//          two plans' fine grids plus M·w^d cells of spreading and of interpolation; and only
//          while the 2N grid of all B images (2^d·N·B complex values) stays within 4 GiB. At the
//          upsampling factor 2 Toeplitz is the faster at any M. toeplitz_reason() says why.
// The choice is made at construction; the Toeplitz kernel is built at the first apply_normal (or
// by prepare_normal()): an encoding used only forward, or only adjoint, never pays its set-up (a
// type 1 transform onto the 2N grid) nor its memory. That first call waits for its context's
// stream, once; later ones are stream-ordered.
enum class Toeplitz : int { kOff = 0, kOn = 1, kAuto = 2 };

struct NufftEncodingOptions {
  double eps = 1e-5;          // NUFFT tolerance (relative l2), as nufft::Plan's eps
  std::int64_t batch = 1;     // B stacked images per call (coils, shots, frames)
  nufft::Options nufft;       // method and tuning; its backend/device/stream/nthreads are ignored
                              // (the context's), and modeord is 0 (the image's order)
  Toeplitz toeplitz = Toeplitz::kAuto;  // the normal operator (above)
};

template <class T>
class ToeplitzNormal;  // fieldft/mri/toeplitz.hpp

template <class T>
class NufftEncoding final : public op::LinearOperator<T> {
 public:
  using Complex = std::complex<T>;
  NufftEncoding(std::shared_ptr<const Encoding<T>> encoding, Context context,
                NufftEncodingOptions options = {});
  ~NufftEncoding() override;

  std::string name() const override;
  void apply(const Complex* x, Complex* y) override;
  void apply_adjoint(const Complex* y, Complex* x) override;
  // AᴴA x: through the Toeplitz normal when uses_toeplitz(), else the two transforms.
  void apply_normal(const Complex* x, Complex* z) override;
  // The SENSE normal Σ_b conj(S_b) ∘ AᴴA (S_b ∘ x) of ONE image x with the batch's B images as
  // coils (maps: B·N values in context memory), through the Toeplitz normal's fused pass
  // (ToeplitzNormal::apply_sense) when uses_toeplitz() and the backend has one; false, having
  // done nothing, otherwise. mri::sense calls it.
  bool apply_sense_normal(const Complex* maps, const Complex* x, Complex* z);
  // AᴴWA as a weighted ToeplitzNormal (batch B, the same kernel for every image) when
  // uses_toeplitz() and the B blocks of w are the same M real weights >= 0; else nullptr (the
  // solvers then apply A, ·w, Aᴴ). Reads w back to the host once and builds the kernel (its own
  // type 1 transform of w): the solvers call it once, before their loop.
  typename op::LinearOperator<T>::Ptr weighted_normal(const Complex* weights) override;
  typename op::LinearOperator<T>::Ptr batched(std::int64_t k) const override;

  const Encoding<T>& encoding() const noexcept { return *encoding_; }
  std::int64_t batch() const noexcept { return options_.batch; }
  const nufft::PlanInfo& forward_info() const;  // the type 2 plan
  const nufft::PlanInfo& adjoint_info() const;  // the type 1 plan
  // The choice of options.toeplitz, made at construction, and why (the cost model's numbers).
  bool uses_toeplitz() const noexcept { return uses_toeplitz_; }
  const std::string& toeplitz_reason() const noexcept { return toeplitz_reason_; }
  // Builds the Toeplitz normal now when uses_toeplitz() and it is not built yet (else nothing).
  void prepare_normal() override;
  // The Toeplitz kernel's set-up time in seconds (ToeplitzNormal::setup_seconds); NaN until it
  // is built.
  double toeplitz_setup_seconds() const noexcept;

 private:
  // batch_shape: the trailing shape entries of the stacked images, {} or {B} as made, and
  // + {K} for each batched(K); their product is options.batch.
  NufftEncoding(std::shared_ptr<const Encoding<T>> encoding, Context context, NufftEncodingOptions options,
                op::Shape batch_shape);

  std::shared_ptr<const Encoding<T>> encoding_;
  NufftEncodingOptions options_;
  op::Shape batch_shape_;
  std::unique_ptr<nufft::Plan<T>> forward_, adjoint_;
  bool uses_toeplitz_ = false;
  std::string toeplitz_reason_;
  std::unique_ptr<ToeplitzNormal<T>> toeplitz_;  // built at the first apply_normal
};

struct DftEncodingOptions {
  std::int64_t batch = 1;  // B stacked images per call through one DFT pass
};

template <class T>
class DftEncoding : public op::LinearOperator<T> {
 public:
  using Complex = std::complex<T>;
  DftEncoding(std::shared_ptr<const Encoding<T>> encoding, Context context,
              DftEncodingOptions options = {});
  ~DftEncoding() override;

  std::string name() const override;
  void apply(const Complex* x, Complex* y) override;
  void apply_adjoint(const Complex* y, Complex* x) override;
  typename op::LinearOperator<T>::Ptr batched(std::int64_t k) const override;

  const Encoding<T>& encoding() const noexcept { return *encoding_; }
  std::int64_t batch() const noexcept { return options_.batch; }
  bool r2() const noexcept { return r2_; }

 protected:
  DftEncoding(std::shared_ptr<const Encoding<T>> encoding, Context context,
              DftEncodingOptions options, bool r2);

 private:
  // batch_shape as in NufftEncoding: {} or {B}, + {K} for each batched(K).
  DftEncoding(std::shared_ptr<const Encoding<T>> encoding, Context context, DftEncodingOptions options,
              bool r2, op::Shape batch_shape);

  struct Impl;
  std::shared_ptr<const Encoding<T>> encoding_;
  DftEncodingOptions options_;
  bool r2_ = false;
  op::Shape batch_shape_;
  std::unique_ptr<Impl> impl_;
};

// The exact DFT with the R2* factor; gradient maps from central differences of the field map.
template <class T>
class DftR2Encoding final : public DftEncoding<T> {
 public:
  DftR2Encoding(std::shared_ptr<const Encoding<T>> encoding, Context context,
                DftEncodingOptions options = {});
  std::string name() const override;
};

extern template class Encoding<float>;
extern template class Encoding<double>;
extern template class NufftEncoding<float>;
extern template class NufftEncoding<double>;
extern template class DftEncoding<float>;
extern template class DftEncoding<double>;
extern template class DftR2Encoding<float>;
extern template class DftR2Encoding<double>;

}  // namespace fieldft::mri
