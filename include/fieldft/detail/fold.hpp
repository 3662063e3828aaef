// Fold and rescale of coordinates onto the fine grid, shared by the CPU and GPU backends.
//
// A coordinate x (radians, 2π-periodic) maps to the fine-grid coordinate u = nf·frac(x / 2π) in
// [0, nf): fine-grid cell l sits at x = 2πl/nf. The arithmetic is done in double even for float
// data: u reaches nf (thousands of cells) and float rounding of u alone would cost ~nf·6e-8 cells.
// The result is split into the integer first cell i0 = ⌈u − w/2⌉ (may be negative or run past nf;
// the spreader wraps it) and the offset x = i0 − u ∈ [−w/2, −w/2 + 1), which is small and
// therefore exact enough in float.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

#include "fieldft/detail/hd.hpp"

namespace fieldft::detail {

constexpr double kInvTwoPi = 0.15915494309189533576888376337251436;

// Largest |x| that set_points folds for coordinates of type T: 2π·2^(digits(T) − 7), about
// 4.4e14 for double and 8.2e5 for float. Beyond it T cannot place a point within 1/64 of the
// period (adjacent values of T are 2π/64 ≈ 0.1 rad or more apart) and the fold, in double, errs
// by a comparable part of the period, so the position of the point within its period, all that
// a periodic coordinate means, is lost: mode k would see a phase error of ~0.1·|k| rad or more.
template <class T>
constexpr double max_fold_coordinate() {
  return 6.283185307179586476925286766559 * static_cast<double>(std::int64_t(1) << (std::numeric_limits<T>::digits - 7));
}

// Whether a finite coordinate is within the fold limit (max_fold_coordinate<T>() as `limit`).
// The one test of the limit, shared by the CPU and CUDA validation of set_points.
FIELDFT_HD bool within_fold_limit(double x, double limit) { return ::fabs(x) <= limit; }

FIELDFT_HD double fold_rescale(double x, std::int64_t nf) {
  double t = x * kInvTwoPi;
  t -= ::floor(t);
  double u = t * static_cast<double>(nf);
  // t < 1 always, but t * nf can round up to nf.
  return u < static_cast<double>(nf) ? u : 0.0;
}

struct KernelStart {
  std::int64_t i0;  // first fine-grid cell touched
  double offset;    // i0 - u, in [-w/2, -w/2 + 1)
};

FIELDFT_HD KernelStart kernel_start(double u, int w) {
  double s = ::ceil(u - 0.5 * w);
  return {static_cast<std::int64_t>(s), s - u};
}

// Wraps a cell index that is at most one period outside [0, nf).
FIELDFT_HD std::int64_t wrap_index(std::int64_t i, std::int64_t nf) {
  return i < 0 ? i + nf : (i >= nf ? i - nf : i);
}

}  // namespace fieldft::detail
