// Launch geometry of grid-stride kernels (one thread per element, the loop covering what the
// capped grid does not). For new kernels; sparsify.cu, vector_ops.cu, coil_maps.cu and
// density.cu still carry their own copy of the same rule.
#pragma once

#include <cstdint>

namespace fieldft::cuda {

inline constexpr int kStrideThreads = 256;
inline constexpr std::int64_t kStrideMaxBlocks = 8192;

// Blocks of kStrideThreads for n elements, at most kStrideMaxBlocks.
inline unsigned stride_blocks(std::int64_t n) {
  const std::int64_t blocks = (n + kStrideThreads - 1) / kStrideThreads;
  return static_cast<unsigned>(blocks < kStrideMaxBlocks ? blocks : kStrideMaxBlocks);
}

}  // namespace fieldft::cuda
