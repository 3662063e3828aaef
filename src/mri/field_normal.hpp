// The field-corrected Toeplitz normal of a time-segmented model, for TimeSegmentedEncoding's own
// normal and mri::sense's on it (private to src/mri).
#pragma once

#include <algorithm>
#include <complex>
#include <cstdint>
#include <memory>

#include "fieldft/error.hpp"
#include "fieldft/mri/field_toeplitz.hpp"
#include "fieldft/mri/time_segmentation.hpp"

namespace fieldft::mri::detail {

// A FieldToeplitzNormal at the model's accuracy and eps (context_maps: C·N coil maps in context
// memory, or null), or null where no L' up to max(128, 2·max_segments) (at most 1024) reaches
// the accuracy for the field DIFFERENCE, which spans twice the field's range, or where its
// kernels do not fit the device's memory (kOutOfMemory): the caller then keeps the forward and
// adjoint passes, which need no kernels. share: the ranks that split the kernels
// (FieldToeplitzOptions::share; collective when its size > 1).
template <class T>
std::unique_ptr<FieldToeplitzNormal<T>> field_normal_or_null(std::shared_ptr<const Encoding<T>> encoding,
                                                             const Context& context,
                                                             const std::complex<T>* context_maps, std::int64_t coils,
                                                             const TimeSegmentationOptions& t,
                                                             const op::NormalShare& share = {}) {
  FieldToeplitzOptions o;
  o.accuracy = t.accuracy;
  o.max_segments = std::min(1024, std::max(128, 2 * t.max_segments));
  o.eps = t.eps;
  o.nufft = t.nufft;
  o.share = share;
  try {
    if (context_maps)
      return FieldToeplitzNormal<T>::with_context_maps(std::move(encoding), context, context_maps, coils, {}, o);
    return std::make_unique<FieldToeplitzNormal<T>>(std::move(encoding), context, std::span<const std::complex<T>>(),
                                                    1, std::span<const T>(), o);
  } catch (const Error& e) {
    // The difference design fell short, or the kernels do not fit.
    if (e.code() == ErrorCode::kInvalidArgument || e.code() == ErrorCode::kOutOfMemory) return nullptr;
    throw;
  }
}

}  // namespace fieldft::mri::detail
