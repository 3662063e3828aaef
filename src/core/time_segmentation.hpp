// Time segmentation of the off-resonance phase: the interpolator design and the choice of the
// number of segments L from a requested accuracy (host-only math in double; used by
// src/mri/time_segmented_encoding.cpp, unit-tested in tests/core/time_segmentation_test.cpp).
//
// Model (fieldft/mri/encoding.hpp): s_j = Σ_v m_v exp(−i(2π k_j·r_v + Δω_v t_j)). Time
// segmentation replaces the phase factor by a sum of L separable terms,
//     exp(−iΔω t) ≈ Σ_{l<L} h_l(t) · exp(−iΔω τ_l),
// so that s_j ≈ Σ_l h_l(t_j) · NUFFT2(b_l ∘ m)_j with b_l(v) = exp(−iΔω_v τ_l). Segment times
// τ_l are uniform over the readout: τ_l = t_min + l·(t_max − t_min)/(L − 1), τ_0 the midpoint for
// L = 1.
//
// Interpolators h (one row of L coefficients per distinct readout time):
//   kLeastSquares  for each time t, h(t) minimises Σ_b w_b |exp(−iω_b t) − Σ_l h_l exp(−iω_b τ_l)|²
//                  + λ‖h‖² over the field map's histogram (points ω_b: every occupied bin's
//                  centre and edges, weights w_b: the fraction of voxels in the bin split 1/4,
//                  1/2, 1/4 over left edge, centre, right edge): the normal equations (G + λI) h = r(t) with
//                  G_{ll'} = Σ_b w_b exp(iω_b(τ_l − τ_l')) (the same for every t, factored once by
//                  Cholesky) and r_l(t) = Σ_b w_b exp(iω_b(τ_l − t)). Sutton, Noll & Fessler,
//                  "Fast, iterative image reconstruction for MRI in the presence of field
//                  inhomogeneities", IEEE TMI 22(2), 2003 (the histogram-weighted least-squares
//                  interpolator); Fessler, Lee, Olafsson, Shi & Noll, IEEE TSP 53(9), 2005.
//                  The ridge λ = (kRidgeFraction · accuracy)², at least kMinRidge (G's diagonal
//                  is Σ_b w_b = 1), keeps Σ_l |h_l| small: G has eigenvalues near zero as L
//                  grows, and without the ridge h grows into large cancelling coefficients that
//                  amplify the NUFFT's error in the sum over l. Tied to the accuracy, it costs a
//                  small part of it (docs/architecture.md has the measured trade-off against L).
//   kHanning       Noll, Meyer, Pauly, Nishimura & Macovski, "A homogeneity correction method
//                  for magnetic resonance imaging with time-varying gradients", IEEE TMI 10(4),
//                  1991: Hanning (raised-cosine) weights between the two neighbouring segment
//                  times, h_l = cos²(πa/2), h_{l+1} = sin²(πa/2) at t = τ_l + a·Δτ, a ∈ [0, 1)
//                  (they sum to 1). Its error is first order in Δω·Δτ (about 0.105·Δω·Δτ), so it
//                  needs many more segments than least squares for the same accuracy.
//
// Error measure: the worst-case relative error of the phase approximation,
//     max_{t, ω} |exp(−iωt) − Σ_l h_l(t) exp(−iωτ_l)|   (|exp(−iωt)| = 1),
// over every distinct readout time t and every occupied bin of the field map's histogram, each
// bin evaluated at its centre and both edges (so the extremes ω_min and ω_max are included).
// Bins are narrow against the readout: width·(t_max − t_min) <= kBinPhase radians (at most
// kMaxBins bins, at least kMinBins for a field of more than one value), so the phase error varies
// little within a bin. The least-squares fit runs over the same points as the error (each bin's
// weight split 1/4, 1/2, 1/4 over its left edge, centre and right edge): a fit at the centres
// alone leaves the edges, where the worst case is taken, unconstrained, and with fewer occupied
// bins than segments (a short readout: ω·T of a tenth of a radian fits in one bin) the error
// stalled near (ω_max − ω_min)·T/4 whatever L (issue 23; ShortReadoutsReachTightAccuracies).
//
// Choosing L: the smallest L in 1 … max_segments whose worst-case error <= accuracy. Each L is
// first screened at a subset of the readout times (about 8 per segment gap, picked among the
// actual times, so a rejection is exact: the subset's maximum cannot exceed the full one); only
// an L that passes the screen is evaluated at every distinct time. None passing → Error
// (kInvalidArgument) naming the best error reached and at which L. One field value (or no field
// map) or one readout time: L = 1 is exact, h_0(t) = exp(−iω(t − τ_0)), error 0.
#pragma once

#include <complex>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace fieldft::core {

// Real values read in place, float or double: the operators' own field maps and readout times,
// which a copy to double would cost 8 bytes a value of memory traffic (134 MB at 256³).
class RealSpan {
 public:
  RealSpan() = default;
  RealSpan(std::span<const double> v) : double_(v) {}
  RealSpan(std::span<const float> v) : float_(v), single_(true) {}
  RealSpan(const std::vector<double>& v) : double_(v) {}
  RealSpan(const std::vector<float>& v) : float_(v), single_(true) {}
  std::size_t size() const noexcept { return single_ ? float_.size() : double_.size(); }
  bool empty() const noexcept { return size() == 0; }
  // fn(the values as a span of their own type); fn returns the same type for both.
  template <class F>
  decltype(auto) visit(F&& fn) const {
    return single_ ? fn(float_) : fn(double_);
  }

 private:
  std::span<const double> double_;
  std::span<const float> float_;
  bool single_ = false;
};

enum class SegmentInterpolator : int { kLeastSquares = 0, kHanning = 1 };
const char* segment_interpolator_name(SegmentInterpolator i) noexcept;  // "least-squares", "Hanning"

inline constexpr int kMaxSegmentsLimit = 1024;  // max_segments may not exceed this
inline constexpr int kMaxBins = 4096;           // histogram bins at most
inline constexpr int kMinBins = 16;             // histogram bins at least (a field of more than one value)
inline constexpr double kBinPhase = 0.2;        // rad: bin width × readout span, at most (when bins allow)
inline constexpr double kRidgeFraction = 0.1;   // the least-squares ridge: λ = (0.1 · accuracy)²
inline constexpr double kMinRidge = 1e-14;      // λ at least (G stays positive definite in double)

// λ of the least-squares interpolator for a requested accuracy.
double least_squares_ridge(double accuracy);

// Uniform segment times over [t_min, t_max] (see the top); L >= 1.
std::vector<double> segment_times(int segments, double t_min, double t_max);

// The field map's histogram (occupied bins only).
struct FieldHistogram {
  std::vector<double> centres;  // rad/s, increasing
  std::vector<double> weights;  // fraction of voxels per bin (sum 1)
  std::vector<double> points;   // evaluation points of the worst case: every centre and both edges
  std::vector<double> point_weights;  // the least-squares fit's weight of each point (sum 1)
  // Each centre and point as a multiple q of half a bin: ω = ω_min + q·width/2 (q = 2b + 1 for
  // the centre of bin b), so that a row of exp(−iωt) is one recurrence over the half bins.
  std::vector<std::int32_t> centre_steps, point_steps;
  double width = 0;             // bin width in rad/s (0 for a constant field)
  double omega_min = 0, omega_max = 0;
  std::int64_t bins = 0;        // bins over [ω_min, ω_max], occupied or not
};
// field: Δω per voxel in rad/s (empty: no field map, a single bin at 0); span: t_max − t_min;
// nthreads: OpenMP threads of the count (resolve_cpu_threads' rule).
FieldHistogram field_histogram(RealSpan field, double span, int nthreads = 0);

// A sample of the field DIFFERENCE ω_a − ω_b whose histogram stands for Δ's (the field histogram's
// autocorrelation, symmetric about 0): all pairwise differences of `quantiles` quantiles of the
// field (its minimum and maximum among them), so its extremes are ±(ω_max − ω_min). The design of
// the field-corrected Toeplitz normal's difference interpolator (mri/field_toeplitz.hpp) and its
// planning for a choice by cost (mri/field_model.hpp) take it. Empty for an empty field; the
// values must be finite (Encoding checks them). The quantiles are exact order statistics, found by
// a selection over counted bins (no sort of the N values); nthreads: OpenMP threads of the passes
// over the field (resolve_cpu_threads' rule).
std::vector<double> field_difference_sample(RealSpan field, int quantiles, int nthreads = 0);

// The distinct readout times (sorted) and, per sample, the index of its time among them.
struct DistinctTimes {
  std::vector<double> values;
  std::vector<std::int32_t> index;  // one per sample
};
// times: per sample in seconds; empty means M samples all at t = 0 (samples is M then);
// nthreads: OpenMP threads (resolve_cpu_threads' rule).
DistinctTimes distinct_times(RealSpan times, std::int64_t samples, int nthreads = 0);

// An interpolator for given segment times: coefficients h (D × L, l fastest, one row per distinct
// time), and for each row the range [first, last) of l holding its non-zero coefficients (the
// whole [0, L) for least squares, at most two for Hanning).
struct SegmentInterpolation {
  std::vector<std::complex<double>> coefficients;
  std::vector<std::int32_t> first, last;
  double worst_error = 0;     // the worst case over the rows computed (above)
  double amplification = 0;   // max over rows of Σ_l |h_l|: how much the NUFFT's error can grow
};
// h for the times `times` (any subset of the readout's; D rows), with the error at each; ridge:
// λ of the least-squares interpolator (least_squares_ridge), unused by Hanning.
SegmentInterpolation interpolate_segments(SegmentInterpolator kind, const FieldHistogram& hist,
                                          std::span<const double> segment_times, std::span<const double> times,
                                          double ridge);

struct TimeSegmentationRequest {
  RealSpan field;                  // rad/s per voxel; empty: none
  RealSpan times;                  // s per sample; empty: all zero
  std::int64_t samples = 0;        // M (needed when times is empty)
  double accuracy = 1e-3;          // worst-case relative phase error to reach, > 0
  SegmentInterpolator interpolator = SegmentInterpolator::kLeastSquares;
  int max_segments = 64;           // 1 … kMaxSegmentsLimit
  int segments = 0;                // 0: choose L; else this L (1 … kMaxSegmentsLimit), error reported
  int nthreads = 0;                // OpenMP threads of the design (resolve_cpu_threads' rule)
};

struct TimeSegmentationDesign {
  int segments = 0;
  SegmentInterpolator interpolator = SegmentInterpolator::kLeastSquares;
  std::vector<double> segment_times;  // τ_l
  DistinctTimes times;                // distinct readout times and each sample's index
  SegmentInterpolation interpolation; // D × L coefficients, their ranges, worst error, amplification
  double accuracy = 0;                // requested
  bool forced = false;                // L was given (request.segments), not chosen
  std::int64_t field_bins = 0;        // occupied histogram bins
  double seconds = 0;                 // wall time of the design
  std::string reason;                 // one line: how L came about
};

// Validates the request (kInvalidArgument: accuracy not finite or <= 0, max_segments or segments
// out of range, NaN/Inf in field or times, times of a length other than samples) and designs the
// interpolator (above). Throws kInvalidArgument when no L up to max_segments reaches the accuracy.
TimeSegmentationDesign design_time_segmentation(const TimeSegmentationRequest& request);

}  // namespace fieldft::core
