// Host values into context memory, for operators that keep tables (diagonals, coil maps,
// interpolators) at their context. Internal; not installed.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "fieldft/config.hpp"  // FIELDFT_HAVE_CUDA
#include "fieldft/error.hpp"
#include "fieldft/op/linear_operator.hpp"
#if FIELDFT_HAVE_CUDA
#include "cuda/stream.hpp"
#endif

namespace fieldft::op {

// Copies host values to the memory of `ws` (grown as needed) and returns it. Device copies are
// enqueued on the context's stream, so the memory is ready for every later use on that stream
// without a synchronisation. `values` is the caller's own (pageable) memory, which the runtime
// stages before returning.
template <class V>
V* upload(Workspace& ws, std::span<const V> values) {
  auto* p = ws.get_as<V>(static_cast<std::int64_t>(values.size()));
  const std::size_t bytes = values.size() * sizeof(V);
  const Context& c = ws.context();
  if (c.is_host()) {
    if (bytes) std::memcpy(p, values.data(), bytes);
  } else {
#if FIELDFT_HAVE_CUDA
    cuda::copy_to_device_async(p, values.data(), bytes, c.device(), c.stream());
#else
    throw Error(ErrorCode::kBackendUnavailable, "a CUDA context, but this fieldft was built without CUDA");
#endif
  }
  return p;
}
template <class V>
V* upload(Workspace& ws, const std::vector<V>& values) {
  return upload(ws, std::span<const V>(values));
}

}  // namespace fieldft::op
