// What the SENSE-type factories (mri::sense, mri::pcsense) share: the checks of the coil maps (their
// shape against the image, and their values) and the encoding of an EncodingKind batched over the
// coils. Internal; not installed.
#pragma once

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <memory>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "fieldft/error.hpp"
#include "fieldft/mri/sense.hpp"
#include "fieldft/op/linear_operator.hpp"
#include "op/host_loops.hpp"

namespace fieldft::mri::detail {

// "(x, y[, z])" of voxel index v of an image of `image_shape` (x fastest).
inline std::string voxel_string(const op::Shape& image_shape, std::int64_t v) {
  std::ostringstream os;
  os << "(";
  for (std::size_t d = 0; d < image_shape.size(); ++d) {
    os << (d ? ", " : "") << v % image_shape[d];
    v /= image_shape[d];
  }
  os << ")";
  return os.str();
}

// The coil count of maps_shape = image_shape + {C}, after checking shapes and the data's size.
inline std::int64_t coils_of(const op::Shape& image_shape, const op::Shape& maps_shape, std::size_t maps_size,
                             const std::string& who) {
  const std::string expected = op::shape_string(image_shape) + "xC";
  require(maps_shape.size() == image_shape.size() + 1, ErrorCode::kShapeMismatch,
          who + ": the coil maps have shape " + op::shape_string(maps_shape) + ", expected " + expected +
              " (the image shape followed by the number of coils C)");
  const std::int64_t coils = maps_shape.back();
  require(coils >= 1, ErrorCode::kInvalidArgument,
          who + ": the coil maps have " + std::to_string(coils) + " coils (shape " + op::shape_string(maps_shape) +
              "), expected C >= 1");
  for (std::size_t d = 0; d < image_shape.size(); ++d)
    require(maps_shape[d] == image_shape[d], ErrorCode::kShapeMismatch,
            who + ": the coil maps have shape " + op::shape_string(maps_shape) + ", expected " + expected +
                " (the image shape followed by the number of coils C)");
  const std::int64_t want = op::shape_size(maps_shape);
  require(static_cast<std::int64_t>(maps_size) == want, ErrorCode::kShapeMismatch,
          who + ": the coil maps hold " + std::to_string(maps_size) + " values, expected " + std::to_string(want) +
              " (shape " + op::shape_string(maps_shape) + ")");
  return coils;
}

// kNonFinite at the first NaN/Inf, naming its coil and voxel.
template <class T>
void require_finite_maps(std::span<const std::complex<T>> maps, const op::Shape& image_shape, const std::string& who) {
  const std::int64_t voxels = op::shape_size(image_shape);
  // First whether any value is not finite, block by block over the host's threads (C·N values:
  // half a billion for 32 coils of 256³); then, only where one is, the first of them.
  constexpr std::int64_t kBlock = 1 << 16;
  const auto size = static_cast<std::int64_t>(maps.size());
  const std::int64_t blocks = (size + kBlock - 1) / kBlock;
  std::vector<unsigned char> bad(static_cast<std::size_t>(blocks), 0);
  op::host::for_each_index(Context::host(), blocks, size, [&](std::int64_t b) {
    bool ok = true;
    for (std::int64_t i = b * kBlock, end = std::min(size, i + kBlock); i < end; ++i)
      ok &= std::isfinite(maps[static_cast<std::size_t>(i)].real()) && std::isfinite(maps[static_cast<std::size_t>(i)].imag());
    bad[static_cast<std::size_t>(b)] = !ok;
  });
  if (std::find(bad.begin(), bad.end(), 1) == bad.end()) return;
  for (std::size_t i = 0; i < maps.size(); ++i) {
    if (std::isfinite(maps[i].real()) && std::isfinite(maps[i].imag())) continue;
    const std::int64_t coil = static_cast<std::int64_t>(i) / voxels;
    std::ostringstream os;
    os << who << ": coil map " << coil << " is " << maps[i] << " at voxel "
       << voxel_string(image_shape, static_cast<std::int64_t>(i) % voxels) << " (index " << i
       << " of the maps); coil sensitivities must be finite";
    throw Error(ErrorCode::kNonFinite, os.str());
  }
}

// options with kAuto replaced by the kind (and, for time segmentation, the normal) that
// mri::choose_field_model picks for `coils` coils at `context` (per_shot: pcSENSE's one encoding
// per shot), the choice written to *options.choice when set; other kinds as given. Defined in
// sense.cpp.
template <class T>
SenseOptions resolve_encoding_kind(const Encoding<T>& encoding, std::int64_t coils, bool per_shot,
                                   const Context& context, SenseOptions options);

// The encoding of options.encoding (kAuto resolved as above, one encoding of all samples) (NufftEncoding with options' eps, nufft and toeplitz,
// DftEncoding, or TimeSegmentedEncoding with options' time_segmentation, eps and nufft) on
// `encoding` with `batch` stacked images, at `context`. kInvalidArgument for kNufft
// with a field map and for an unknown kind; `who` starts the messages. Defined in sense.cpp.
template <class T>
op::OperatorPtr<T> batched_encoding(std::shared_ptr<const Encoding<T>> encoding, const SenseOptions& options,
                                    std::int64_t batch, Context context, const std::string& who);

}  // namespace fieldft::mri::detail
