// Turns a runtime kernel width into a compile-time one for the spreading and interpolation
// templates of both backends (host code; nvcc compiles it in the CUDA launchers too).
#pragma once

#include <string>

#include "core/kernel_design.hpp"
#include "fieldft/error.hpp"

namespace fieldft::core {

// Calls f.template operator()<W>() with W = w, for 2 <= w <= kMaxKernelWidth.
template <class F>
void dispatch_width(int w, F&& f) {
  static_assert(kMaxKernelWidth == 16, "extend the cases below with kMaxKernelWidth");
  switch (w) {
#define FIELDFT_WIDTH_CASE(W) \
  case W:                     \
    f.template operator()<W>(); \
    break;
    FIELDFT_WIDTH_CASE(2) FIELDFT_WIDTH_CASE(3) FIELDFT_WIDTH_CASE(4) FIELDFT_WIDTH_CASE(5)
    FIELDFT_WIDTH_CASE(6) FIELDFT_WIDTH_CASE(7) FIELDFT_WIDTH_CASE(8) FIELDFT_WIDTH_CASE(9)
    FIELDFT_WIDTH_CASE(10) FIELDFT_WIDTH_CASE(11) FIELDFT_WIDTH_CASE(12) FIELDFT_WIDTH_CASE(13)
    FIELDFT_WIDTH_CASE(14) FIELDFT_WIDTH_CASE(15) FIELDFT_WIDTH_CASE(16)
#undef FIELDFT_WIDTH_CASE
    default:
      throw Error(ErrorCode::kInternal, "kernel width " + std::to_string(w) + " outside 2.." +
                                            std::to_string(kMaxKernelWidth));
  }
}

}  // namespace fieldft::core
