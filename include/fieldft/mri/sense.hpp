// fieldft::mri::sense — the SENSE forward model as ONE operator (DESIGN.md §3).
//
// Pruessmann, Weiger, Scheidegger & Boesiger, "SENSE: sensitivity encoding for fast MRI", Magn.
// Reson. Med. 42:952–962, 1999; non-Cartesian form: Pruessmann, Weiger, Börnert & Boesiger,
// "Advances in sensitivity encoding with arbitrary k-space trajectories", MRM 46:638–651, 2001.
//
//   y_c = E (S_c ∘ x),   c = 0 … C−1
//
// x: one image {Nx, Ny[, Nz]}; S_c: the sensitivity of coil c (complex, dimensionless), given as
// `maps` of shape image + {C} (S_c(v) at index v + voxels·c, x fastest, coils slowest); E: the
// encoding model of fieldft/mri/encoding.hpp, s_j = Σ_v m_v exp(−i(2π k_j·r_v + Δω_v t_j)); y: the
// samples of all coils, shape {M, C} (sample j of coil c at index j + M·c).
//   adjoint:  x = Σ_c conj(S_c) ∘ Eᴴ y_c
//   normal:   Σ_c conj(S_c) ∘ EᴴE (S_c ∘ x), through E's own normal operator (a Toeplitz E keeps
//             it).
// The operator is E_C ∘ diag_expand(maps) (as op::compose(E_C, op::diag_expand(maps)) would be)
// with E_C the encoding batched over the C coils: ONE type 2 / type 1 NUFFT (or ONE DFT pass)
// over all coils per call, never a loop. Its normal takes one fused pass where E_C is a
// NufftEncoding with a Toeplitz normal on a backend that fuses (CUDA: in 2D with 2N_d powers of
// two in [16, 2048] expansion, FFTs, kernel and coil combination in three kernels, reading and
// writing each coil's rows once; elsewhere the cuFFT passes with the expansion in the pad and the
// combination in the crop; NufftEncoding::apply_sense_normal), else the three steps above.
// k-space weights (density compensation, noise whitening) belong to the solvers
// (solve::cg's weights), not to this operator.
//
// Factories:
//   sense<T>(encoding, maps, maps_shape, context, options)
//       builds E_C from the geometry with batch C: a NufftEncoding (options.encoding = kNufft, no
//       field map), a DftEncoding (kDft, exact, with the field map and readout times) or a
//       TimeSegmentedEncoding (kTimeSegmented: the field map and times through the NUFFT, L chosen
//       from options.time_segmentation.accuracy; fieldft/mri/time_segmentation.hpp); kAuto (the
//       default): kNufft without a field map, else kDft or kTimeSegmented (Toeplitz normal or not,
//       time_segmentation.toeplitz set to kOn or kOff) by mri::choose_field_model, reported in
//       *options.choice.
//   sense<T>(batched_encoding, maps, maps_shape)
//       takes a ready batched encoding operator E_C (domain image + {C}, e.g. a NufftEncoding or
//       DftEncoding made with batch C, or op::batch(E, C)); the result lives in its context.
//   sense<T>(batched_encoding, ContextMaps<T>{maps, owner}, maps_shape)
//       as the second form, with maps that are ALREADY in the encoding's context memory (device
//       memory of its device for a CUDA context, host memory for the host): they are borrowed,
//       not copied, and `owner` (may be null) is kept alive with the operator (and its batched
//       forms), so that the memory outlives every use. Contract: the maps are finite and the
//       caller checked it (they are never read on the host here: no kNonFinite from this form),
//       and they stay unchanged while the operator lives; on a device, writes to them must be
//       ordered before the operator's work (the context's stream). For callers that cut many
//       problems' maps out of one volume already checked (`fieldft recon` slice by slice).
// maps: HOST memory (copied to the context at construction; the caller may free it afterwards),
// except in the third form. maps_shape: image + {C}, the C++ shape (x fastest); C =
// maps_shape.back().
//
// Errors (fieldft::Error):
//   kShapeMismatch  maps_shape is not the encoding's image shape + {C} ("expected 32x32xC, got
//                   …"), or maps.size() is not shape_size(maps_shape) (expected vs got); the ready
//                   operator's domain is not maps_shape;
//   kInvalidArgument  C < 1; a null encoding or operator; options.eps as the NUFFT refuses it;
//                   kNufft with an encoding that has a field map (the message names kTimeSegmented
//                   and kDft); kTimeSegmented's option errors and "no L up to max_segments reaches
//                   the accuracy" (TimeSegmentedEncoding's);
//   kNonFinite      a NaN or Inf in the maps, naming the coil and the voxel (x, y[, z]) (first
//                   and second forms).
#pragma once

#include <complex>
#include <cstdint>
#include <memory>
#include <span>

#include "fieldft/context.hpp"
#include "fieldft/mri/encoding.hpp"
#include "fieldft/mri/time_segmentation.hpp"
#include "fieldft/nufft.hpp"
#include "fieldft/op/combinators.hpp"

namespace fieldft::mri {

enum class EncodingKind : int {
  kNufft = 0,  // NufftEncoding: type 2 / type 1 NUFFT, accurate to eps; no field map
  kDft = 1,    // DftEncoding: the exact field-corrected DFT
  kTimeSegmented = 2,  // TimeSegmentedEncoding: the field-corrected model through the NUFFT
  // kNufft without a field map; with one, kDft or kTimeSegmented (and its Toeplitz normal or not)
  // by predicted cost at time_segmentation.accuracy (mri::choose_field_model,
  // fieldft/mri/field_model.hpp), the choice written to options.choice when that is set.
  kAuto = 3,
};

struct FieldModelChoice;  // fieldft/mri/field_model.hpp

struct SenseOptions {
  // kAuto (the default) is kNufft for an encoding without a field map, as kNufft was before it.
  EncodingKind encoding = EncodingKind::kAuto;
  double eps = 1e-5;       // kNufft, kTimeSegmented: the NUFFT tolerance (NufftEncodingOptions::eps)
  nufft::Options nufft{};  // kNufft, kTimeSegmented: method and tuning (NufftEncodingOptions::nufft)
  Toeplitz toeplitz = Toeplitz::kAuto;  // kNufft: the normal operator (NufftEncodingOptions::toeplitz)
  // kTimeSegmented: accuracy, interpolator, max_segments and segments; its eps, batch and nufft
  // are not read (eps and nufft above, and the coil count, are used).
  TimeSegmentationOptions time_segmentation{};
  int iterations = 30;                 // kAuto: the normal applications the choice plans for
  FieldModelChoice* choice = nullptr;  // kAuto: where the choice and its reason go (may be null)
};

// Coil maps in an operator context's memory, for the third form of sense(): `values` (voxels x C,
// coil slowest, as `maps` above) and what keeps them alive (may be null where the caller
// outlives the operator).
template <class T>
struct ContextMaps {
  std::span<const std::complex<T>> values;
  std::shared_ptr<const void> owner;
};

template <class T>
op::OperatorPtr<T> sense(std::shared_ptr<const Encoding<T>> encoding, std::span<const std::complex<T>> maps,
                         const op::Shape& maps_shape, Context context, const SenseOptions& options = {});

template <class T>
op::OperatorPtr<T> sense(op::OperatorPtr<T> batched_encoding, std::span<const std::complex<T>> maps,
                         const op::Shape& maps_shape);

template <class T>
op::OperatorPtr<T> sense(op::OperatorPtr<T> batched_encoding, ContextMaps<T> maps, const op::Shape& maps_shape);

// The field-corrected Toeplitz normal that `op` built (prepare_normal, or its first
// apply_normal): mri::sense on a TimeSegmentedEncoding (its SENSE form), or a
// TimeSegmentedEncoding itself; null for any other operator and before it is built. Which normal
// a solve used, for reports: its name() (L', grid, a stacked axis), kernel_bytes(),
// setup_parts(). Both operators also name it in their name() once built.
template <class T>
const FieldToeplitzNormal<T>* field_toeplitz_normal(const op::LinearOperator<T>& op);

extern template const FieldToeplitzNormal<float>* field_toeplitz_normal<float>(const op::LinearOperator<float>&);
extern template const FieldToeplitzNormal<double>* field_toeplitz_normal<double>(const op::LinearOperator<double>&);
extern template op::OperatorPtr<float> sense<float>(std::shared_ptr<const Encoding<float>>,
                                                    std::span<const std::complex<float>>, const op::Shape&,
                                                    Context, const SenseOptions&);
extern template op::OperatorPtr<double> sense<double>(std::shared_ptr<const Encoding<double>>,
                                                      std::span<const std::complex<double>>, const op::Shape&,
                                                      Context, const SenseOptions&);
extern template op::OperatorPtr<float> sense<float>(op::OperatorPtr<float>, std::span<const std::complex<float>>,
                                                    const op::Shape&);
extern template op::OperatorPtr<double> sense<double>(op::OperatorPtr<double>,
                                                      std::span<const std::complex<double>>, const op::Shape&);
extern template op::OperatorPtr<float> sense<float>(op::OperatorPtr<float>, ContextMaps<float>, const op::Shape&);
extern template op::OperatorPtr<double> sense<double>(op::OperatorPtr<double>, ContextMaps<double>, const op::Shape&);

}  // namespace fieldft::mri
