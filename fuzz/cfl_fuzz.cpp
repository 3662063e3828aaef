// libFuzzer target: the BART .cfl/.hdr reader (src/io/cfl.hpp). An input is the header text, a
// NUL byte, then the .cfl data (cfl_seeds.cpp writes seeds so); without a NUL all of it is the
// header. Every input must end in a result or a fieldft::Error; a parsed array is also read as
// k-space, trajectory and image (the layout checks of read_cfl_kspace & co.).
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>

#include "fieldft/error.hpp"
#include "io/cfl.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto* nul = static_cast<const std::uint8_t*>(std::memchr(data, 0, size));
  const std::size_t header_size = nul ? static_cast<std::size_t>(nul - data) : size;
  const std::string_view header(reinterpret_cast<const char*>(data), header_size);
  const std::span<const std::uint8_t> body =
      nul ? std::span<const std::uint8_t>(nul + 1, size - header_size - 1) : std::span<const std::uint8_t>();
  for (const bool allow : {false, true}) {
    try {
      const auto a = fieldft::io::parse_cfl(header, body, "fuzz", {.allow_nonfinite = allow});
      std::uint64_t n = 1;
      for (const auto d : a.dims) n *= static_cast<std::uint64_t>(d);
      if (n != a.data.size()) __builtin_trap();
      try {
        const auto t = fieldft::io::trajectory_from_cfl(a, "fuzz");
        if (t.k[0].size() != static_cast<std::size_t>(t.samples * t.spokes)) __builtin_trap();
      } catch (const fieldft::Error&) {
      }
      try {
        fieldft::io::image_from_cfl(fieldft::io::CflArray(a), "fuzz");
      } catch (const fieldft::Error&) {
      }
      fieldft::io::kspace_from_cfl(fieldft::io::CflArray(a), "fuzz");
    } catch (const fieldft::Error&) {
    }
  }
  return 0;
}
