// fieldft::mri::Encoding: the one geometry of the encoding operators, validated once and copied.
#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <sstream>
#include <string>

#include "fieldft/error.hpp"
#include "fieldft/mri/encoding.hpp"

namespace fieldft::mri {

namespace {

// k may exceed N/2 by this fraction of N/2: trajectories computed in float reach the edge of
// k-space with a rounding error of a few 1e-7; a value in the wrong unit misses by far more.
constexpr double kRangeTolerance = 1e-5;

constexpr const char* kAxisNames[3] = {"kx", "ky", "kz"};
constexpr const char* kGridNames[3] = {"Nx", "Ny", "Nz"};

std::int64_t checked_mul(std::int64_t a, std::int64_t b, const std::string& what) {
  std::int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r))
    throw Error(ErrorCode::kTooLarge, "Encoding: " + what + " overflows 64-bit indexing (" + std::to_string(a) +
                                          " x " + std::to_string(b) + ")");
  return r;
}

void require_length(std::size_t got, std::int64_t want, const char* name, const char* what) {
  if (static_cast<std::int64_t>(got) == want) return;
  std::ostringstream os;
  os << "Encoding: " << name << " has " << got << " values, expected " << want << " (" << what << ")";
  throw Error(ErrorCode::kShapeMismatch, os.str());
}

template <class T>
void require_finite(std::span<const T> v, const char* name, const char* what) {
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (std::isfinite(v[i])) continue;
    std::ostringstream os;
    os << "Encoding: " << name << "[" << i << "] is " << v[i] << "; " << what << " must be finite";
    throw Error(ErrorCode::kNonFinite, os.str());
  }
}

// k_d within [-N_d/2, N_d/2] (relative tolerance kRangeTolerance), with a hint at the unit.
template <class T>
void require_k_range(std::span<const T> k, int axis, std::int64_t n) {
  const double half = 0.5 * static_cast<double>(n);
  const double limit = half * (1 + kRangeTolerance);
  for (std::size_t j = 0; j < k.size(); ++j) {
    const double v = static_cast<double>(k[j]);
    if (std::abs(v) <= limit) continue;
    double peak = 0;
    for (const T x : k) peak = std::max(peak, std::abs(static_cast<double>(x)));
    std::ostringstream os;
    os << "Encoding: " << kAxisNames[axis] << "[" << j << "] = " << v << " is outside [" << -half << ", " << half
       << "] (" << kGridNames[axis] << " = " << n << "; largest |" << kAxisNames[axis] << "| is " << peak
       << "); k must be in cycles per field of view (k[1/m] x FOV[m]), within [-N/2, N/2] per axis, not in "
          "radians (2 pi k / N, a NUFFT's points) or in 1/m";
    throw Error(ErrorCode::kInvalidArgument, os.str());
  }
}

}  // namespace

template <class T>
Encoding<T>::Encoding(std::span<const std::int64_t> grid, std::span<const T> kx, std::span<const T> ky,
                      std::span<const T> kz, std::span<const T> times, std::span<const T> field,
                      std::span<const std::int32_t> shots) {
  require(grid.size() == 2 || grid.size() == 3, ErrorCode::kInvalidArgument,
          "Encoding: the image grid must have 2 or 3 sizes ({Nx, Ny} or {Nx, Ny, Nz}), got " +
              std::to_string(grid.size()));
  dim_ = static_cast<int>(grid.size());
  for (int d = 0; d < dim_; ++d) {
    require(grid[d] >= 1, ErrorCode::kInvalidArgument,
            std::string("Encoding: ") + kGridNames[d] + " is " + std::to_string(grid[d]) + ", expected >= 1");
    grid_[d] = grid[d];
  }
  const std::int64_t voxels =
      checked_mul(checked_mul(grid_[0], grid_[1], "the number of voxels"), grid_[2], "the number of voxels");
  checked_mul(voxels, static_cast<std::int64_t>(sizeof(std::complex<T>)), "the image size in bytes");

  const std::int64_t m = static_cast<std::int64_t>(kx.size());
  checked_mul(std::max<std::int64_t>(m, 1), static_cast<std::int64_t>(sizeof(std::complex<T>)),
              "the sample vector size in bytes");
  require_length(ky.size(), m, "ky", "one value per sample, like kx");
  if (dim_ == 3)
    require_length(kz.size(), m, "kz", "one value per sample, like kx");
  else
    require_length(kz.size(), 0, "kz", "must be empty for a 2D grid");
  if (!times.empty()) require_length(times.size(), m, "times", "one readout time per sample, or empty");
  if (!field.empty()) require_length(field.size(), voxels, "field", "one value per voxel, or empty");
  if (!shots.empty()) require_length(shots.size(), m, "shots", "one shot label per sample, or empty");

  const std::span<const T> ks[3] = {kx, ky, kz};
  for (int d = 0; d < dim_; ++d) {
    require_finite(ks[d], kAxisNames[d], "k-space positions");
    require_k_range(ks[d], d, grid_[d]);
  }
  require_finite(times, "times", "readout times");
  require_finite(field, "field", "field map values");
  for (std::size_t j = 0; j < shots.size(); ++j) {
    if (shots[j] >= 0 && shots[j] < std::numeric_limits<std::int32_t>::max()) continue;
    throw Error(ErrorCode::kInvalidArgument, "Encoding: shots[" + std::to_string(j) + "] is " +
                                                 std::to_string(shots[j]) +
                                                 "; shot labels must be integers >= 0 (and below 2^31 - 1)");
  }

  for (int d = 0; d < dim_; ++d) k_[d].assign(ks[d].begin(), ks[d].end());
  times_.assign(times.begin(), times.end());
  field_.assign(field.begin(), field.end());
  shots_.assign(shots.begin(), shots.end());
  num_shots_ = shots_.empty() ? 1 : *std::max_element(shots_.begin(), shots_.end()) + 1;
}

template <class T>
op::Shape Encoding<T>::image_shape() const {
  return op::Shape(grid_.begin(), grid_.begin() + dim_);
}

template <class T>
op::Shape Encoding<T>::sample_shape() const {
  return {num_samples()};
}

template class Encoding<float>;
template class Encoding<double>;

}  // namespace fieldft::mri
