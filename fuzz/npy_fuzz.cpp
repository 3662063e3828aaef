// libFuzzer target: the .npy reader (src/io/npy.hpp) on arbitrary bytes. Every input must end
// in a result or a fieldft::Error; anything else (a crash, another exception, a sanitizer
// report, an allocation beyond the input's size) is a bug.
#include <complex>
#include <cstdint>
#include <span>

#include "fieldft/error.hpp"
#include "io/npy.hpp"

namespace {

template <class T>
void read(std::span<const std::uint8_t> bytes, fieldft::io::NpyReadOptions options) {
  try {
    const auto a = fieldft::io::parse_npy<T>(bytes, "fuzz.npy", options);
    std::uint64_t n = 1;
    for (const auto d : a.shape) n *= static_cast<std::uint64_t>(d);
    if (n != a.data.size()) __builtin_trap();  // shape and data must agree
  } catch (const fieldft::Error&) {
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using fieldft::io::Conversion;
  const std::span<const std::uint8_t> bytes(data, size);
  read<std::complex<double>>(bytes, {.conversion = Conversion::kLossless});
  read<float>(bytes, {.conversion = Conversion::kAny, .allow_nonfinite = true});
  read<std::int32_t>(bytes, {.conversion = Conversion::kAny});
  read<std::uint8_t>(bytes, {.conversion = Conversion::kAny});
  return 0;
}
