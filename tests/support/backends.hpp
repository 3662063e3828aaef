// Which backends a test may run on. One test body runs for every backend; where a backend is
// not compiled in or has no device, the test skips itself and says why.
#pragma once

#include <string>

#include "fieldft/nufft.hpp"

namespace fieldft::test {

// Empty when backend b can run here; otherwise a sentence saying why not.
std::string backend_unavailable_reason(Backend b);

}  // namespace fieldft::test
