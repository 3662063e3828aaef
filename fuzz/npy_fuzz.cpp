// libFuzzer target: the .npy reader (src/io/npy.hpp) on arbitrary bytes, in memory and as a file. Every input must end
// in a result or a fieldft::Error; anything else (a crash, another exception, a sanitizer
// report, an allocation beyond the input's size) is a bug.
#include <sys/mman.h>
#include <unistd.h>

#include <complex>
#include <cstdint>
#include <span>
#include <string>

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

// The file reader (read_npy: read_npy_header's own preamble handling, then the same decoding)
// on the same bytes, through an in-memory file: no disk traffic per input.
void read_file(std::span<const std::uint8_t> bytes) {
  static const int fd = ::memfd_create("npy_fuzz", 0);
  static const std::string path = "/proc/self/fd/" + std::to_string(fd);
  if (fd < 0 || ::ftruncate(fd, 0) != 0 ||
      ::pwrite(fd, bytes.data(), bytes.size(), 0) != static_cast<ssize_t>(bytes.size()))
    __builtin_trap();
  try {
    const auto a = fieldft::io::read_npy<std::complex<float>>(path, {.conversion = fieldft::io::Conversion::kAny});
    std::uint64_t n = 1;
    for (const auto d : a.shape) n *= static_cast<std::uint64_t>(d);
    if (n != a.data.size()) __builtin_trap();
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
  read_file(bytes);
  return 0;
}
