// Host-side planning shared by every backend: option validation, kernel design, fine-grid sizes
// and the deconvolution factors. A backend receives a PlanSetup and adds only its own choices
// (batch size, bin sizes, method) to the PlanInfo.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/kernel_design.hpp"
#include "fieldft/detail/fold.hpp"
#include "fieldft/nufft.hpp"

namespace fieldft::core {

struct PlanSetup {
  nufft::PlanInfo info;
  nufft::Options options;
  KernelDesign kernel;
  // Per dimension and per output position (mode ordering applied): the fine-grid index of the
  // mode (k mod nf) and the deconvolution factor 1/ψ̂(k).
  std::array<std::vector<std::int64_t>, 3> fine_index;
  std::array<std::vector<double>, 3> deconv;
  std::int64_t fine_grid_size() const {
    return info.fine_grid[0] * info.fine_grid[1] * info.fine_grid[2];
  }
};

// Validates the arguments of a plan and designs it. Throws fieldft::Error with a message naming
// the bad argument. min_eps is the smallest tolerance the precision supports, unit_roundoff its
// unit roundoff (2^-24 for float, 2^-53 for double).
PlanSetup make_plan_setup(int type, std::span<const std::int64_t> modes, int isign,
                          std::int64_t ntransf, double eps, const nufft::Options& options,
                          double min_eps, double unit_roundoff);

// The plan `s` set up again at upsampling factor sigma, its other arguments and options as they
// were: the backends' automatic factor (core::auto_upsampfac) at the first set_points. The
// result's options keep upsampfac 0 (automatic, as asked). nullopt where that setup cannot be
// made (e.g. eps below the rounding floor at sigma), with the reason in *error where given; the
// caller then keeps `s`.
std::optional<PlanSetup> setup_at_upsampfac(const PlanSetup& s, double sigma, double min_eps, double unit_roundoff,
                                            std::string* error = nullptr);

// rms over k in [-n/2, (n-1)/2] of ψ̂(0)/ψ̂(k), from phihat[k] = ψ̂(k), k = 0..n/2 (the kernel's
// transform on the fine grid): the factor by which deconvolving n modes amplifies rounding noise.
double deconvolution_gain(std::span<const double> phihat, std::int64_t n);

// Throws kEpsTooSmall when unit_roundoff·gain > eps: `what` (e.g. "the deconvolution") amplifies
// the rounding of the precision gain-fold, so eps cannot be met.
void check_rounding_floor(double eps, double unit_roundoff, double gain, double sigma, const char* what);

// Smallest even n' >= n whose only prime factors are 2, 3 and 5 (fast FFT sizes).
std::int64_t next_smooth(std::int64_t n);

// a * b, or kTooLarge naming `what` when the product overflows int64.
std::int64_t checked_mul(std::int64_t a, std::int64_t b, const char* what);

// The machine's physical memory in bytes (sysconf), 0 where unknown.
double host_memory_bytes();

// Throws kTooLarge when `bytes` of host memory for `what` exceed the machine's physical memory.
void check_host_memory(double bytes, const std::string& what);

// Throws kNonFinite naming the array and the first index whose value is NaN or Inf.
template <class T>
void check_finite(std::int64_t n, const T* v, const char* name) {
  if (v == nullptr) return;
  for (std::int64_t i = 0; i < n; ++i) {
    if (!std::isfinite(v[i])) [[unlikely]] {
      throw Error(ErrorCode::kNonFinite, std::string("non-finite value (") + std::to_string(double(v[i])) +
                                             ") in " + name + "[" + std::to_string(i) + "]; coordinates must be finite");
    }
  }
}

// Checks a count of coordinates (>= 0) and their arrays c[0..dim) named names[0..dim): present
// for every dimension when count > 0. `what` names the count in messages ("points", "targets").
template <class T>
void check_coordinate_arrays(int dim, std::int64_t count, const T* const* c, const char* const* names,
                             const char* what) {
  require(count >= 0, ErrorCode::kInvalidArgument,
          std::string("number of ") + what + " must be >= 0, got " + std::to_string(count));
  for (int d = 0; d < dim; ++d)
    require(count == 0 || c[d] != nullptr, ErrorCode::kInvalidArgument,
            std::string("coordinate array ") + names[d] + " is null but the plan has dimension " +
                std::to_string(dim));
}

// check_coordinate_arrays, then the values finite (host arrays).
template <class T>
void check_coordinates(int dim, std::int64_t count, const T* const* c, const char* const* names, const char* what) {
  check_coordinate_arrays(dim, count, c, names, what);
  for (int d = 0; d < dim; ++d) check_finite(count, c[d], names[d]);
}

// kInvalidArgument for coordinate name[index] = value beyond the fold limit `limit` of
// coordinates of type `type_name` ("float", "double"): the message of both backends.
[[noreturn]] void throw_beyond_fold_limit(const char* name, std::int64_t index, double value, double limit,
                                          const char* type_name);

// Throws throw_beyond_fold_limit for the first |v[i]| beyond detail::max_fold_coordinate<T>()
// (finite values; check_finite first).
template <class T>
void check_foldable(std::int64_t n, const T* v, const char* name) {
  if (v == nullptr) return;
  constexpr double limit = detail::max_fold_coordinate<T>();
  for (std::int64_t i = 0; i < n; ++i)
    if (!detail::within_fold_limit(static_cast<double>(v[i]), limit)) [[unlikely]]
      throw_beyond_fold_limit(name, i, static_cast<double>(v[i]), limit, sizeof(T) == sizeof(float) ? "float" : "double");
}

// Whether |v[i]| is at most the fold limit of T, rounded down to T, for every i (so also finite).
// No early exit and no branch, so that it vectorises: the exact checks, which stop at the first
// bad value, cost several times more (a tenth of set_points on the CPU); they run only where this
// fails, and decide then what is wrong.
template <class T>
bool all_surely_foldable(std::int64_t n, const T* v) {
  constexpr double limit = detail::max_fold_coordinate<T>();
  T lim = static_cast<T>(limit);
  if (static_cast<double>(lim) > limit) lim = std::nextafter(lim, T(0));
  int bad = 0;
  for (std::int64_t i = 0; i < n; ++i) bad |= !(std::fabs(v[i]) <= lim);
  return bad == 0;
}

// Checks the coordinate arrays of set_points (types 1 and 2): present for every dimension,
// finite, then within the fold limit (the CUDA backend checks in the same order).
template <class T>
void check_points(const nufft::PlanInfo& info, std::int64_t m, const T* x, const T* y, const T* z) {
  const T* c[3] = {x, y, z};
  static constexpr const char* kNames[3] = {"x", "y", "z"};
  check_coordinate_arrays(info.dim, m, c, kNames, "points");
  bool ok = true;
  for (int d = 0; d < info.dim && ok; ++d) ok = m == 0 || all_surely_foldable(m, c[d]);
  if (ok) return;
  for (int d = 0; d < info.dim; ++d) check_finite(m, c[d], kNames[d]);
  for (int d = 0; d < info.dim; ++d) check_foldable(m, c[d], kNames[d]);
}

}  // namespace fieldft::core
