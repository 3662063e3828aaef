// Host values to fresh memory at a context: how an operator keeps its fixed arrays (diagonals,
// coil maps) where its vectors live. Private to the operator and MRI layers.
#pragma once

#include <complex>
#include <cstring>
#include <span>

#include "fieldft/config.hpp"  // first: FIELDFT_HAVE_CUDA selects the includes below
#include "fieldft/error.hpp"
#include "fieldft/op/linear_operator.hpp"
#if FIELDFT_HAVE_CUDA
#include "cuda/stream.hpp"
#endif

namespace fieldft::op {

// Copies host values to fresh memory at the context. Device copies are enqueued on the context's
// stream, so the memory is ready for every later use on that stream without a synchronisation.
// `values` is the caller's own (pageable) memory, which the runtime stages before returning.
template <class T>
inline std::complex<T>* upload(Workspace& ws, std::span<const std::complex<T>> values) {
  auto* p = ws.get_as<std::complex<T>>(static_cast<std::int64_t>(values.size()));
  const std::size_t bytes = values.size() * sizeof(std::complex<T>);
  const Context& c = ws.context();
  if (c.is_host()) {
    if (bytes) std::memcpy(p, values.data(), bytes);
  } else {
#if FIELDFT_HAVE_CUDA
    cuda::copy_to_device_async(p, values.data(), bytes, c.device(), c.stream());
#else
    throw Error(ErrorCode::kBackendUnavailable, "this fieldft was built without CUDA");
#endif
  }
  return p;
}

}  // namespace fieldft::op
