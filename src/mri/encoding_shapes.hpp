// Shapes of the encoding operators (NufftEncoding, DftEncoding): the geometry's shape followed by
// the stacked batch axes ({} for batch 1, {B}, then one axis more per batched(K)).
#pragma once

#include <cstdint>
#include <string>

#include "fieldft/error.hpp"
#include "fieldft/op/linear_operator.hpp"

namespace fieldft::mri::detail {

// The batch axes of options.batch for operator `who`: {} for 1, {batch} above; < 1 is refused.
inline op::Shape initial_batch_shape(std::int64_t batch, const std::string& who) {
  require(batch >= 1, ErrorCode::kInvalidArgument,
          who + ": options.batch is " + std::to_string(batch) + ", expected >= 1");
  return batch > 1 ? op::Shape{batch} : op::Shape{};
}

// The batch of batched(k) for operator `who` of batch `batch`: k < 1 → kInvalidArgument, a product
// beyond 64 bits → kTooLarge.
inline std::int64_t batched_batch(const std::string& who, std::int64_t batch, std::int64_t k) {
  require(k >= 1, ErrorCode::kInvalidArgument, who + ".batched(" + std::to_string(k) + "): expected k >= 1");
  std::int64_t product = 0;
  require(!__builtin_mul_overflow(batch, k, &product), ErrorCode::kTooLarge,
          who + ".batched(" + std::to_string(k) + "): the batch overflows 64 bits");
  return product;
}

// a followed by b.
inline op::Shape joined(op::Shape a, const op::Shape& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

}  // namespace fieldft::mri::detail
