// Internal to src/io/npy*.cpp: the pieces of the .npy format that the header parser
// (npy_header.cpp) and the reader and writer (npy.cpp) share.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "fieldft/error.hpp"

namespace fieldft::io::npy_format {

inline constexpr std::uint8_t kMagic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
inline constexpr std::size_t kMaxHeader = std::size_t{1} << 20;  // numpy itself refuses > 10000 by default

// Bytes before the header text: magic, version, header length (2 bytes in 1.0, 4 after).
inline std::uint64_t preamble_size(int major) { return major == 1 ? 10 : 12; }

[[noreturn]] inline void corrupt(const std::string& name, const std::string& what) {
  throw Error(ErrorCode::kInvalidArgument, ".npy file '" + name + "': " + what);
}

// Python's tuple text of a shape: "(2, 3)", "(4,)", "()".
inline std::string shape_text(std::span<const std::int64_t> shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  if (shape.size() == 1) s += ",";
  return s + ")";
}

}  // namespace fieldft::io::npy_format
