// Writes the seed corpus of npy_fuzz into the directory argv[1]: files from fieldft's .npy
// writer (every dtype, C and Fortran order, 0 to 4 axes), and variants of them that the writer
// does not produce (format versions 2.0 and 3.0, big-endian, a bool array).
#include <complex>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "io/npy.hpp"

namespace {

namespace fs = std::filesystem;
using fieldft::io::write_npy;

template <class T>
void seed(const fs::path& dir, const std::string& name, std::vector<std::int64_t> shape, bool fortran = false) {
  std::size_t n = 1;
  for (const auto d : shape) n *= static_cast<std::size_t>(d);
  std::vector<T> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<T>(static_cast<int>(i % 7) - 3);
  write_npy<T>((dir / name).string(), shape, v, {.fortran_order = fortran});
}

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}
void put(const fs::path& p, const std::string& s) { std::ofstream(p, std::ios::binary) << s; }

// A version 1.0 file rewritten as version `major` (4-byte header length, padding redone).
std::string with_version(const std::string& v1, int major) {
  const std::size_t len = static_cast<unsigned char>(v1[8]) | (static_cast<std::size_t>(static_cast<unsigned char>(v1[9])) << 8);
  std::string dict = v1.substr(10, len);
  while (!dict.empty() && (dict.back() == ' ' || dict.back() == '\n')) dict.pop_back();
  const std::size_t total = 12 + dict.size() + 1;
  dict.append((total + 63) / 64 * 64 - total, ' ');
  dict += '\n';
  std::string out = v1.substr(0, 6);
  out += static_cast<char>(major);
  out += '\0';
  for (int b = 0; b < 4; ++b) out += static_cast<char>((dict.size() >> (8 * b)) & 0xff);
  return out + dict + v1.substr(10 + len);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  const fs::path dir = argv[1];
  fs::create_directories(dir);
  seed<float>(dir, "f4_2d.npy", {3, 4});
  seed<double>(dir, "f8_3d_fortran.npy", {2, 3, 2}, true);
  seed<std::complex<float>>(dir, "c8_2d.npy", {4, 2});
  seed<std::complex<double>>(dir, "c16_1d.npy", {5});
  seed<std::int8_t>(dir, "i1.npy", {6});
  seed<std::uint8_t>(dir, "u1_fortran.npy", {2, 3}, true);
  seed<std::int16_t>(dir, "i2.npy", {2, 2});
  seed<std::uint16_t>(dir, "u2.npy", {3});
  seed<std::int32_t>(dir, "i4_4d.npy", {1, 2, 1, 2});
  seed<std::uint32_t>(dir, "u4.npy", {2});
  seed<std::int64_t>(dir, "i8.npy", {2});
  seed<std::uint64_t>(dir, "u8_scalar.npy", {});
  seed<float>(dir, "f4_empty.npy", {0, 3});
  // Variants: version 2.0 (4-byte header length), 3.0, big-endian, bool.
  put(dir / "f4_v2.npy", with_version(slurp(dir / "f4_2d.npy"), 2));
  put(dir / "f4_v3.npy", with_version(slurp(dir / "f4_2d.npy"), 3));
  std::string be = slurp(dir / "i2.npy");
  be.replace(be.find("<i2"), 3, ">i2");
  put(dir / "i2_big_endian.npy", be);
  std::string b1 = slurp(dir / "u1_fortran.npy");
  b1.replace(b1.find("|u1"), 3, "|b1");
  put(dir / "b1.npy", b1);
  return 0;
}
