// The coil-split SENSE problem of the dist tests: a small 2D spiral acquisition with C coils and
// NUFFT encoding, its whole operator, and the operator of one coil share (split(C, K, r): that
// share's maps, and rows j + M·c of the data for its coils c). Everything is a deterministic
// function of fixed seeds, so every rank (or device thread) builds the same problem.
#pragma once

#include <complex>
#include <cstdint>
#include <memory>
#include <span>
#include <type_traits>
#include <vector>

#include "fieldft/context.hpp"
#include "fieldft/dist.hpp"
#include "fieldft/mri/encoding.hpp"
#include "fieldft/mri/sense.hpp"
#include "fieldft/mri/simulate.hpp"
#include "fieldft/mri/time_segmentation.hpp"
#include "fieldft/op/combinators.hpp"
#include "fieldft/solve/cg.hpp"
#include "fieldft/solve/max_eigenvalue.hpp"
#include "support/random_data.hpp"

namespace fieldft::test {

template <class T>
class SplitSense {
 public:
  using Complex = std::complex<T>;
  static constexpr std::int64_t kCoils = 4;

  SplitSense() {
    const auto t = mri::spiral_trajectory(grid_, {.interleaves = 4, .samples = 60});
    kx_.assign(t.kx.begin(), t.kx.end());
    ky_.assign(t.ky.begin(), t.ky.end());
    samples_ = static_cast<std::int64_t>(kx_.size());
    const auto maps = mri::coil_maps(grid_, kCoils);
    maps_.assign(maps.begin(), maps.end());
    const auto phantom = mri::shepp_logan(grid_);
    truth_.assign(phantom.begin(), phantom.end());
  }

  std::int64_t voxels() const { return grid_[0] * grid_[1]; }
  std::int64_t samples() const { return samples_; }
  const std::vector<Complex>& truth() const { return truth_; }

  // SENSE over coils [share.begin, share.end) at c.
  op::OperatorPtr<T> part(const Context& c, dist::Share share) const {
    auto enc = std::make_shared<const mri::Encoding<T>>(std::span<const std::int64_t>(grid_),
                                                        std::span<const T>(kx_), std::span<const T>(ky_));
    const std::vector<Complex> maps(maps_.begin() + share.begin * voxels(), maps_.begin() + share.end * voxels());
    op::Shape shape(grid_.begin(), grid_.end());
    shape.push_back(share.size());
    return mri::sense<T>(enc, maps, shape, c, {.encoding = mri::EncodingKind::kNufft, .eps = eps()});
  }
  op::OperatorPtr<T> whole(const Context& c) const { return part(c, {0, kCoils}); }

  // This share's rows of whole-problem k-space data y ({M, C}).
  std::vector<Complex> rows(const std::vector<Complex>& y, dist::Share share) const {
    return std::vector<Complex>(y.begin() + share.begin * samples_, y.begin() + share.end * samples_);
  }
  // Whole-problem data: the whole operator (on the host) applied to the phantom.
  std::vector<Complex> data() const {
    auto a = whole(Context::host(1));
    std::vector<Complex> y(static_cast<std::size_t>(a->codomain_size()));
    a->apply(truth_.data(), y.data());
    return y;
  }

  // A Tikhonov weight for the tests' CG: a tenth of λ_max(AᴴA) (the power method,
  // solve::max_eigenvalue), so that the system's condition number is at most 11 and CG's
  // iterates depend on rounding only as much as the normal operator does (an unregularised,
  // ill-conditioned system amplifies a last-bit difference in the coil sums by orders of
  // magnitude within 15 iterations).
  double lambda() const {
    auto a = whole(Context::host(1));
    auto n = op::compose<T>(op::adjoint<T>(a), a);
    return 0.1 * solve::max_eigenvalue<T>(*n, 30);
  }

  static double eps() { return std::is_same_v<T, float> ? 1e-4 : 1e-9; }

 private:
  std::vector<std::int64_t> grid_{16, 12};
  std::vector<T> kx_, ky_;
  std::int64_t samples_ = 0;
  std::vector<Complex> maps_, truth_;
};

// The field-corrected coil split (as bench/scale/coil_split_bench.cpp at a small size): a 2D
// spiral with readout times over 8 ms and a ±60 Hz field map, C = 4 coils,
// mri::sense of kind kTimeSegmented (a TimeSegmentedEncoding of batch C_r) per coil share (its normal the
// field-corrected Toeplitz one, FieldToeplitzNormal with L' of about 5 kernels). `scale` scales k
// (a different trajectory per rank: parts of DIFFERENT problems). Deterministic on every rank.
template <class T>
class FieldSplitSense {
 public:
  using Complex = std::complex<T>;
  static constexpr std::int64_t kCoils = 4;

  explicit FieldSplitSense(double scale = 1) {
    const auto t = mri::spiral_trajectory(grid_, {.interleaves = 4, .samples = 80});
    const auto times = mri::readout_times(t, 8e-3 / 80);
    mri::FieldMapOptions fo;
    fo.max_hz = 60;
    const auto field = mri::field_map(grid_, fo);
    for (std::size_t j = 0; j < t.kx.size(); ++j) {
      kx_.push_back(static_cast<T>(scale * t.kx[j]));
      ky_.push_back(static_cast<T>(scale * t.ky[j]));
    }
    times_.assign(times.begin(), times.end());
    field_.assign(field.begin(), field.end());
    const auto maps = mri::coil_maps(grid_, kCoils);
    maps_.assign(maps.begin(), maps.end());
    encoding_ = std::make_shared<const mri::Encoding<T>>(std::span<const std::int64_t>(grid_), kx_, ky_,
                                                         std::span<const T>(), times_, field_);
  }

  std::int64_t voxels() const { return grid_[0] * grid_[1]; }
  const std::shared_ptr<const mri::Encoding<T>>& encoding() const { return encoding_; }
  // This share's maps (image + {C_r}).
  std::vector<Complex> maps(dist::Share share) const {
    return std::vector<Complex>(maps_.begin() + share.begin * voxels(), maps_.begin() + share.end * voxels());
  }
  static mri::TimeSegmentationOptions options(std::int64_t batch) {
    mri::TimeSegmentationOptions o;
    o.accuracy = 1e-3;
    o.eps = std::is_same_v<T, float> ? 1e-4 : 1e-9;
    o.batch = batch;
    return o;
  }
  // SENSE over coils [share.begin, share.end) at c, on the time-segmented encoding.
  op::OperatorPtr<T> part(const Context& c, dist::Share share) const {
    const auto m = maps(share);
    mri::SenseOptions o;
    o.encoding = mri::EncodingKind::kTimeSegmented;
    o.time_segmentation = options(share.size());
    o.eps = o.time_segmentation.eps;
    return mri::sense<T>(encoding_, m, {grid_[0], grid_[1], share.size()}, c, o);
  }

 private:
  std::vector<std::int64_t> grid_{24, 20};
  std::vector<T> kx_, ky_, times_, field_;
  std::vector<Complex> maps_;
  std::shared_ptr<const mri::Encoding<T>> encoding_;
};

// The dist tests' CG: `iterations` steps with Tikhonov weight λ, no tolerance and no callback
// (so on a device it only enqueues).
inline solve::CgOptions cg_options(int iterations, double lambda) {
  solve::CgOptions o;
  o.max_iterations = iterations;
  o.lambda = lambda;
  return o;
}

}  // namespace fieldft::test
