// fieldft::mri::pcsense — multi-shot phase-corrected SENSE (pcSENSE) as ONE operator
// (DESIGN.md §3).
//
// Liu, Bammer, Kim, Moseley et al., "Self-navigated interleaved spiral (SNAILS): application to
// high-resolution diffusion tensor imaging", Magn. Reson. Med. 52:1388–1396, 2004; Liu, Moseley
// & Bammer, "Simultaneous phase correction and SENSE reconstruction for navigated multi-shot DWI
// with non-Cartesian k-space sampling", MRM 54:1412–1422, 2005; Truong & Guidon,
// "High-resolution multishot spiral diffusion tensor imaging with inherent correction of
// motion-induced phase errors", MRM 71(2):790–796, 2014.
//
//   y_{s,c} = E_s (S_c ∘ e^{+iφ_s} ∘ x),   s = 0 … S−1 (shots),  c = 0 … C−1 (coils)
//
// x: one image {Nx, Ny[, Nz]}, the shot-independent (phase-corrected) image. S_c: coil maps,
// `maps` of shape image + {C} (S_c(v) at v + voxels·c), as in mri::sense. φ_s: the phase map of
// shot s in radians (real), `phase_maps` of shape image + {S} (φ_s(v) at v + voxels·s). E_s: the
// encoding model of fieldft/mri/encoding.hpp restricted to the samples whose shot label
// (Encoding::shots) is s, with their own k-space positions and readout times and the common field
// map: s_j = Σ_v m_v exp(−i(2π k_j·r_v + Δω_v t_j)).
//
// Sign convention (ONE, for every encoding): the forward model MULTIPLIES the image by
// e^{+iφ_s}. φ_s is therefore the phase that shot s adds to the object's magnetisation — the
// phase of shot s's own image minus that of x, m_s = x·e^{iφ_s}, where "shot s's image" is what
// the adjoint (or a least-squares inverse) of THIS encoding model gives for that shot's data.
// That is how the maps are estimated in practice (Liu et al. 2004, Truong & Guidon 2014: the
// phase of a low-resolution image of each shot, from the fully sampled centre of its spiral), and
// with this convention such an estimate is used as it is, without conjugation. It implies data in
// the Encoding's convention, k-space samples s_j of exp(−i2πk·r): data acquired or stored with the
// opposite sign (exp(+i2πk·r), e.g. another package's NUFFT sign) give conjugated shot images, and
// their phase estimates must be negated (or the data conjugated) before they are used here.
//
//   codomain {M, C}: the samples of all shots in the ORIGINAL sample order of the Encoding,
//                    sample j of coil c at j + M·c (the user's k-space array, unreordered);
//   adjoint:  x = Σ_s e^{−iφ_s} ∘ Σ_c conj(S_c) ∘ E_sᴴ y_{s,c}
//   normal:   Σ_s e^{−iφ_s} ∘ Σ_c conj(S_c) ∘ E_sᴴE_s (S_c ∘ e^{iφ_s} ∘ x), through each E_s's own
//             normal operator (a NufftEncoding's Toeplitz normal keeps working).
// Per shot: ONE encoding batched over the C coils (one type 2 / type 1 NUFFT or one DFT pass for
// all coils, never a loop over coils). The coil × shot-phase product S_c e^{iφ_s} x is formed on
// the fly by one pass over the image (host loops or one CUDA kernel), from the C maps and the S
// phase factors e^{iφ_s} (computed once, in double, at construction): no S·C product maps are
// stored. The shot's samples are gathered from / scattered to the original order by one pass
// in the operator's context (on a device: kernels on its stream; no allocation per call, no host
// synchronisation). Scratch: 2·voxels·C + max_s M_s·C values, kept between calls.
//
// Encodings of a shot (options):
//   encoding = kNufft   NufftEncoding (eps, nufft, toeplitz as in SenseOptions; no field map);
//   encoding = kDft     DftEncoding: the exact field-corrected DFT with the field map and times;
//                       with one_pass (the default) on a CUDA device in float with C >= 3 coils
//                       (the DFT's tensor-core path), instead ONE DFT pass over all shots:
//                       y_{j,c} = Σ_v E_jv e^{iφ_{s(j)}(v)} (S_c ∘ x)(v), the shot's phase inside
//                       the exponential, the C coil images S_c ∘ x shared by every shot, the
//                       shots as sample groups of one DFT (src/mri/pcsense_dft.hpp); the same
//                       operator (within the DFT's float accuracy), one launch per direction
//                       instead of S, scratch voxels·C + M·C;
//                       with gram (off by default), where the one pass runs: the normal through
//                       the stored Gram matrix H = Σ_s e^{−iφ_s} E_sᴴE_s e^{iφ_s} (voxels²
//                       complex values, 2 GiB at 128²; the same for every coil), AᴴA x =
//                       Σ_c conj(S_c) ∘ H(S_c ∘ x): one dense product per normal, bound by reading
//                       H, instead of two DFT passes. H is built by prepare_normal (which the
//                       solvers call before their loop) from voxels/32 DFT passes of 32 unit
//                       images; an exact normal of the same model (within the float DFT's
//                       accuracy). It pays when many normals share one trajectory, field map and
//                       shot phases. kOutOfMemory (naming the sizes) where H does not fit;
//   encoding = kTimeSegmented  TimeSegmentedEncoding of the shot's samples (eps, nufft and
//                       time_segmentation as in SenseOptions): L is chosen per shot, from that
//                       shot's readout times and the common field map;
//   encoding = kAuto    (the default) kNufft without a field map, else kDft or kTimeSegmented by
//                       mri::choose_field_model with per_shot (fieldft/mri/field_model.hpp): one
//                       choice for all shots, written to *options.choice when set;
//   shot_encoding       a callable (shot_encoding, batch) -> operator that builds any other
//                       encoding of the shot's samples batched over `batch` = C coils, e.g. time
//                       segmentation:  [&](auto e, std::int64_t b) {
//                         return std::make_shared<TimeSegmentedEncoding<T>>(e, context, {.batch = b}); }
//                       It must return an operator at `context` (same device and stream) with
//                       voxels·C domain and M_s·C codomain values (image + {C} -> {M_s, C}); when
//                       set, it replaces `encoding`, eps, nufft and toeplitz.
// The shot's Encoding handed to a callable has the shot's k-space positions and times (in the
// original order of its samples), the full field map, and no shot labels.
//
// maps, phase_maps: HOST memory, copied to the context at construction (the caller may free
// them afterwards). maps_shape: image + {C}; phase_shape: image + {S}, S = encoding.num_shots()
// (a single-shot encoding, without labels, takes image + {1}).
//
// Errors (fieldft::Error), each naming what was expected and what was given:
//   kShapeMismatch    maps_shape not image + {C}, or maps.size() not its size (mri::sense's
//                     checks); phase_shape not image + {S}: a different image shape, or phase
//                     maps for a number of shots other than the labels give; phase_maps.size() not
//                     shape_size(phase_shape); a callable's operator of the wrong sizes;
//   kInvalidArgument  a null encoding; C < 1; a shot label in 0 … S−1 with no samples; kNufft
//                     with a field map; an unknown encoding kind; kTimeSegmented's option errors
//                     and an accuracy no L reaches for some shot; options.eps as the NUFFT
//                     refuses it; a callable that returns null;
//   kNonFinite        a NaN or Inf in the maps (naming coil and voxel) or in the phase maps
//                     (naming shot and voxel);
//   kContextMismatch  a callable's operator at another place than `context`;
//   kOutOfMemory      gram: the Gram matrix does not fit in the device's free memory (at
//                     prepare_normal or the first normal);
//   kBackendUnavailable  a CUDA context in a build without CUDA.
#pragma once

#include <complex>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>

#include "fieldft/context.hpp"
#include "fieldft/mri/encoding.hpp"
#include "fieldft/mri/sense.hpp"
#include "fieldft/nufft.hpp"
#include "fieldft/op/combinators.hpp"

namespace fieldft::mri {

// Builds the encoding of one shot's samples batched over `batch` images (see above).
template <class T>
using ShotEncodingFactory =
    std::function<op::OperatorPtr<T>(std::shared_ptr<const Encoding<T>> shot_encoding, std::int64_t batch)>;

template <class T>
struct PcSenseOptions {
  EncodingKind encoding = EncodingKind::kAuto;  // kAuto: as in SenseOptions, planned per shot
  double eps = 1e-5;                       // kNufft: NufftEncodingOptions::eps
  nufft::Options nufft{};                  // kNufft: NufftEncodingOptions::nufft
  Toeplitz toeplitz = Toeplitz::kAuto;     // kNufft: NufftEncodingOptions::toeplitz
  TimeSegmentationOptions time_segmentation{};  // kTimeSegmented: as SenseOptions::time_segmentation
  int iterations = 30;                     // kAuto: as SenseOptions::iterations
  FieldModelChoice* choice = nullptr;      // kAuto: as SenseOptions::choice
  ShotEncodingFactory<T> shot_encoding{};  // set: replaces the fields above
  bool one_pass = true;  // kDft (also as kAuto's choice): all shots in one DFT pass where it runs (see above); false: per shot
  bool gram = false;     // with one_pass, where it runs: the normal through the stored Gram matrix (see above)
};

template <class T>
op::OperatorPtr<T> pcsense(std::shared_ptr<const Encoding<T>> encoding, std::span<const std::complex<T>> maps,
                           const op::Shape& maps_shape, std::span<const T> phase_maps, const op::Shape& phase_shape,
                           Context context, const PcSenseOptions<T>& options = {});

extern template op::OperatorPtr<float> pcsense<float>(std::shared_ptr<const Encoding<float>>,
                                                      std::span<const std::complex<float>>, const op::Shape&,
                                                      std::span<const float>, const op::Shape&, Context,
                                                      const PcSenseOptions<float>&);
extern template op::OperatorPtr<double> pcsense<double>(std::shared_ptr<const Encoding<double>>,
                                                        std::span<const std::complex<double>>, const op::Shape&,
                                                        std::span<const double>, const op::Shape&, Context,
                                                        const PcSenseOptions<double>&);

}  // namespace fieldft::mri
