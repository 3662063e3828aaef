// fieldft::mri::TimeSegmentedEncoding — the field-corrected encoding model through the NUFFT by
// time segmentation, with the number of segments L chosen from a requested accuracy (DESIGN.md §3).
//
// Model (fieldft/mri/encoding.hpp): s_j = Σ_v m_v exp(−i(2π k_j·r_v + Δω_v t_j)), Δω in rad/s,
// t in s. Time segmentation writes the off-resonance factor as L separable terms,
//     exp(−iΔω t) ≈ Σ_{l<L} h_l(t) · exp(−iΔω τ_l),
// so that the operator is
//     forward  s_j = Σ_l h_l(t_j) · NUFFT2(b_l ∘ m)_j,        b_l(v) = exp(−iΔω_v τ_l),
//     adjoint  m_v = Σ_l conj(b_l(v)) · NUFFT1(conj(h_l) ∘ s)_v,
// an exact adjoint pair up to the NUFFT's own eps (the type 2 and type 1 plans of NufftEncoding,
// isign −1 forward). Segment times τ_l are uniform over [t_min, t_max] of the readout times.
// Interpolators (Sutton, Noll & Fessler, IEEE TMI 22(2) 2003; Noll et al., IEEE TMI 10(4) 1991;
// src/core/time_segmentation.hpp has the formulas):
//   kLeastSquares  h(t) minimises the error over the field map's histogram, weighted by it
//                  (with a small ridge); converges fast in L;
//   kHanning       raised-cosine weights between the two neighbouring segments; simple, but its
//                  error is first order in Δω·Δτ, so it needs several times more segments.
//
// Choosing L: the smallest L in 1 … options.max_segments whose worst-case relative phase error
//     max_{t, Δω} |exp(−iΔω t) − Σ_l h_l(t) exp(−iΔω τ_l)|
// over every readout time and the field map's histogram (every occupied bin's centre and edges)
// is <= options.accuracy; options.segments > 0 forces L instead (the error is then reported, not
// required). The operator's own error against the exact model (DftEncoding) is about this phase
// error plus the NUFFT's eps times report().amplification (max_t Σ_l |h_l(t)|, the growth of the
// NUFFT's error through the sum over l); in relative l2 over the samples it is usually well
// below the worst case, which only the extreme field values at the worst times reach.
//
// Without a field map (or with a constant one), or without readout times, the phase factor is
// exact with L = 1: the operator is then NufftEncoding with at most a constant phase per readout
// time. Such an encoding is
// accepted, not refused, so that callers need not switch operators by data.
//
// Implementation: ONE batched type 2 NUFFT of L·B images forward and ONE batched type 1 of L·B
// sample vectors adjoint (a NufftEncoding of batch L·B on the encoding's trajectory), around two
// small passes per direction (fieldft/detail/time_segmentation.hpp): expand x → b_l ∘ x for all l
// and combine Σ_l h_l(t_j)·u_{l,j} forward, their adjoints backward. The phases b_l(v) are computed
// in the passes from the field map (no L phase images are stored); h is stored once per distinct
// readout time (D × L values, D = the number of distinct times, usually one readout's samples)
// with one index per sample. Memory per operator: that table, the field map (N doubles), and
// scratch of L·B·(N + M) complex values for the stacked images and samples.
//
// Shapes, batch and context as NufftEncoding: domain {Nx, Ny[, Nz]} (+ {B}), codomain {M} (+ {B}),
// batched(K) appends {K} and multiplies the batch (one NUFFT of batch L·B·K; the interpolator is
// shared, not redesigned). On a device every call is stream-ordered and allocates nothing after
// the first; the design (host, double) and the table upload happen at construction.
//
// Errors (fieldft::Error): a null encoding → kInvalidArgument; accuracy not finite or <= 0,
// max_segments or segments outside 1 … 1024 (segments 0 = automatic), an unknown interpolator,
// batch < 1 → kInvalidArgument; no L up to max_segments reaching the accuracy → kInvalidArgument,
// naming the best error reached and at which L; eps out of the NUFFT's range → the NUFFT's error.
// NaN/Inf in the field map or times are refused by Encoding itself.
#pragma once

#include <complex>
#include <cstdint>
#include <memory>
#include <string>

#include "fieldft/context.hpp"
#include "fieldft/detail/time_segmentation.hpp"
#include "fieldft/mri/encoding.hpp"
#include "fieldft/mri/field_toeplitz.hpp"
#include "fieldft/nufft.hpp"
#include "fieldft/op/linear_operator.hpp"

namespace fieldft::mri {

enum class SegmentInterpolator : int { kLeastSquares = 0, kHanning = 1 };

struct TimeSegmentationOptions {
  double accuracy = 1e-3;  // worst-case relative phase error to reach (above), > 0
  SegmentInterpolator interpolator = SegmentInterpolator::kLeastSquares;
  int max_segments = 64;   // the largest L tried, 1 … 1024
  int segments = 0;        // 0: choose L from accuracy; else use this L (1 … 1024)
  double eps = 1e-5;       // the NUFFT's tolerance (relative l2), as NufftEncodingOptions::eps
  std::int64_t batch = 1;  // B stacked images per call (coils, shots, frames)
  nufft::Options nufft;    // as NufftEncodingOptions::nufft
  // The normal operator: kOn / kAuto take the field-corrected Toeplitz normal
  // (fieldft/mri/field_toeplitz.hpp, its kernels built by prepare_normal() — the solvers call it
  // before their loop — or else at the first apply_normal, with this accuracy and eps) where
  // FieldToeplitzNormal::supported says the context can run it (the CPU and CUDA, 2D and 3D) and
  // its kernels fit the memory; kOff, and elsewhere, the forward and adjoint passes (L·B NUFFTs
  // each way). mri::sense with this encoding takes the SENSE form of the same normal.
  Toeplitz toeplitz = Toeplitz::kAuto;
};

struct TimeSegmentationReport {
  int segments = 0;               // L
  SegmentInterpolator interpolator = SegmentInterpolator::kLeastSquares;
  double worst_error = 0;         // the worst-case relative phase error achieved at L
  double accuracy = 0;            // the one requested
  bool forced = false;            // L came from options.segments
  double amplification = 0;       // max_t Σ_l |h_l(t)| (>= 1 for a useful interpolator)
  std::int64_t distinct_times = 0;  // D: rows of h
  std::int64_t field_bins = 0;      // occupied bins of the field map's histogram
  double design_seconds = 0;      // the interpolator's design and the choice of L (host)
  std::string reason;             // one line: how L came about
};

// The interpolator design and the choice of L alone, without plans or memory: what a
// TimeSegmentedEncoding with these options would report (the errors above, thrown likewise).
template <class T>
TimeSegmentationReport plan_time_segmentation(const Encoding<T>& encoding, const TimeSegmentationOptions& options);

template <class T>
class TimeSegmentedEncoding final : public op::LinearOperator<T> {
 public:
  using Complex = std::complex<T>;
  TimeSegmentedEncoding(std::shared_ptr<const Encoding<T>> encoding, Context context,
                        TimeSegmentationOptions options = {});
  ~TimeSegmentedEncoding() override;

  // "TimeSegmentedEncoding(N -> M, L l[, batch B][, normal FieldToeplitzNormal(...)])": the
  // normal once built (toeplitz_normal()).
  std::string name() const override;
  void apply(const Complex* x, Complex* y) override;
  void apply_adjoint(const Complex* y, Complex* x) override;
  typename op::LinearOperator<T>::Ptr batched(std::int64_t k) const override;

  const Encoding<T>& encoding() const noexcept { return *encoding_; }
  std::int64_t batch() const noexcept { return options_.batch; }
  const TimeSegmentationOptions& options() const noexcept { return options_; }
  const std::shared_ptr<const Encoding<T>>& encoding_ptr() const noexcept { return encoding_; }
  // AᴴA: the field-corrected Toeplitz normal per image when uses_toeplitz(), else the default.
  void apply_normal(const Complex* x, Complex* z) override;
  // Builds that Toeplitz normal now when uses_toeplitz() and it is not built yet (else nothing;
  // uses_toeplitz() turns false where it cannot be built: the passes instead).
  void prepare_normal() override;
  // Its field-corrected Toeplitz kernels split over ranks (op::NormalShare, FieldToeplitzOptions::share).
  bool can_share_normal() const override;
  void prepare_normal_shared(const op::NormalShare& share) override;
  bool uses_toeplitz() const noexcept { return uses_toeplitz_; }
  // That normal once prepare_normal has built it (its name() reports L', the grid and a stacked
  // axis; kernel_bytes() its memory), else null.
  const FieldToeplitzNormal<T>* toeplitz_normal() const noexcept { return field_normal_.get(); }
  // The Toeplitz normal's set-up time in seconds (FieldToeplitzNormal::setup_seconds); NaN until
  // it is built.
  double toeplitz_setup_seconds() const noexcept;
  int segments() const noexcept;
  const TimeSegmentationReport& report() const noexcept;
  // The NUFFT of batch L·B underneath (its plans' choices: forward_info(), adjoint_info()).
  const NufftEncoding<T>& nufft() const noexcept { return *nufft_; }

 private:
  struct Tables;  // the interpolator in context memory and the report, shared by batched copies
  struct Stacks {  // this operator's tables (its batch) and its scratch for the L·B stacked vectors
    ::fieldft::detail::tseg::SegmentTables<T> tables;
    Complex* images;
    Complex* samples;
  };
  Stacks stacks();
  TimeSegmentedEncoding(std::shared_ptr<const Encoding<T>> encoding, Context context,
                        TimeSegmentationOptions options, op::Shape batch_shape, std::shared_ptr<const Tables> tables);

  std::shared_ptr<const Encoding<T>> encoding_;
  TimeSegmentationOptions options_;
  op::Shape batch_shape_;
  std::shared_ptr<const Tables> tables_;
  std::unique_ptr<NufftEncoding<T>> nufft_;
  bool uses_toeplitz_ = false;
  std::unique_ptr<FieldToeplitzNormal<T>> field_normal_;  // built by prepare_normal
};

extern template class TimeSegmentedEncoding<float>;
extern template class TimeSegmentedEncoding<double>;

}  // namespace fieldft::mri
