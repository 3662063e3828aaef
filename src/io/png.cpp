#include "io/png.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <vector>

#include "fieldft/error.hpp"
#include "io/atomic_file.hpp"

namespace fieldft::io {

namespace {

void check_size(std::int64_t width, std::int64_t height, int channels, std::span<const std::uint8_t> pixels,
                const char* format) {
  constexpr std::int64_t kMaxSide = 0x7fffffff;  // PNG's limit; PGM readers share it in practice
  require(width >= 1 && width <= kMaxSide && height >= 1 && height <= kMaxSide, ErrorCode::kInvalidArgument,
          std::string(format) + " image of " + std::to_string(width) + " x " + std::to_string(height) +
              " pixels: each side must be in [1, 2^31 - 1]");
  const auto expected =
      static_cast<std::uint64_t>(width) * static_cast<std::uint64_t>(height) * static_cast<std::uint64_t>(channels);
  require(pixels.size() == expected, ErrorCode::kShapeMismatch,
          std::string(format) + " image of " + std::to_string(width) + " x " + std::to_string(height) + " x " +
              std::to_string(channels) + " bytes given " + std::to_string(pixels.size()) + " bytes");
}

void put_be32(std::vector<std::uint8_t>& out, std::uint32_t v) {
  for (int s = 24; s >= 0; s -= 8) out.push_back(static_cast<std::uint8_t>(v >> s));
}

// One PNG chunk: length, type, data, CRC of type and data.
void write_chunk(AtomicFile& f, const char (&type)[5], std::span<const std::uint8_t> data) {
  std::vector<std::uint8_t> head;
  put_be32(head, static_cast<std::uint32_t>(data.size()));
  head.insert(head.end(), type, type + 4);
  const std::uint32_t crc = crc32(data, crc32(std::span(head).subspan(4)));
  std::vector<std::uint8_t> tail;
  put_be32(tail, crc);
  f.write(head);
  f.write(data);
  f.write(tail);
}

}  // namespace

std::uint32_t crc32(std::span<const std::uint8_t> bytes, std::uint32_t crc) noexcept {
  static const std::array<std::uint32_t, 256> kTable = [] {
    std::array<std::uint32_t, 256> t{};
    for (std::uint32_t n = 0; n < 256; ++n) {
      std::uint32_t c = n;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[n] = c;
    }
    return t;
  }();
  crc = ~crc;
  for (std::uint8_t b : bytes) crc = kTable[(crc ^ b) & 0xffu] ^ (crc >> 8);
  return ~crc;
}

std::uint32_t adler32(std::span<const std::uint8_t> bytes, std::uint32_t adler) noexcept {
  constexpr std::uint32_t kMod = 65521;
  // 5552 is the longest run whose sums cannot overflow 32 bits before the modulo (RFC 1950).
  constexpr std::size_t kRun = 5552;
  std::uint32_t a = adler & 0xffffu, b = adler >> 16;
  for (std::size_t i = 0; i < bytes.size(); i += kRun) {
    const std::size_t end = std::min(bytes.size(), i + kRun);
    for (std::size_t j = i; j < end; ++j) {
      a += bytes[j];
      b += a;
    }
    a %= kMod;
    b %= kMod;
  }
  return (b << 16) | a;
}

std::optional<ImageFormat> image_format_from_path(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (ext == ".pgm") return ImageFormat::kPgm;
  if (ext == ".png") return ImageFormat::kPng;
  return std::nullopt;
}

void write_png(const std::string& path, std::int64_t width, std::int64_t height, int channels,
               std::span<const std::uint8_t> pixels) {
  require(channels == 1 || channels == 3, ErrorCode::kInvalidArgument,
          "PNG: channels must be 1 (grayscale) or 3 (RGB), got " + std::to_string(channels));
  check_size(width, height, channels, pixels, "PNG");
  AtomicFile f(path);
  static constexpr std::uint8_t kSignature[] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  f.write(kSignature, sizeof kSignature);

  std::vector<std::uint8_t> ihdr;
  put_be32(ihdr, static_cast<std::uint32_t>(width));
  put_be32(ihdr, static_cast<std::uint32_t>(height));
  // Bit depth 8; colour type 0 (gray) or 2 (RGB); deflate; adaptive filtering; no interlace.
  ihdr.insert(ihdr.end(), {8, static_cast<std::uint8_t>(channels == 1 ? 0 : 2), 0, 0, 0});
  write_chunk(f, "IHDR", ihdr);

  // The filtered image is each row preceded by its filter type, 0 (none). It goes out as one
  // stored deflate block per IDAT chunk, so nothing larger than a block is ever held.
  const auto row = static_cast<std::uint64_t>(width) * static_cast<std::uint64_t>(channels);
  const auto total = static_cast<std::uint64_t>(height) * (row + 1);
  constexpr std::uint64_t kMaxBlock = 65535;  // LEN of a stored block is 16 bits
  std::uint64_t done = 0, y = 0, x = 0;       // x: position in row y, 0 = its filter byte
  std::uint32_t adler = 1;
  std::vector<std::uint8_t> chunk;
  while (done < total) {
    const std::uint64_t len = std::min(kMaxBlock, total - done);
    const bool last = done + len == total;
    chunk.clear();
    if (done == 0) chunk.insert(chunk.end(), {0x78, 0x01});  // zlib: deflate, 32 KiB window
    const auto l16 = static_cast<std::uint16_t>(len), n16 = static_cast<std::uint16_t>(~len);
    chunk.insert(chunk.end(), {static_cast<std::uint8_t>(last ? 1 : 0), static_cast<std::uint8_t>(l16),
                               static_cast<std::uint8_t>(l16 >> 8), static_cast<std::uint8_t>(n16),
                               static_cast<std::uint8_t>(n16 >> 8)});
    const std::size_t data_start = chunk.size();
    for (std::uint64_t left = len; left > 0;) {
      if (x == 0) {
        chunk.push_back(0);
        x = 1;
        --left;
        continue;
      }
      const std::uint64_t n = std::min(left, row + 1 - x);
      const std::uint8_t* src = pixels.data() + y * row + (x - 1);
      chunk.insert(chunk.end(), src, src + n);
      left -= n;
      x += n;
      if (x == row + 1) {
        x = 0;
        ++y;
      }
    }
    adler = adler32(std::span(chunk).subspan(data_start), adler);
    if (last) put_be32(chunk, adler);
    write_chunk(f, "IDAT", chunk);
    done += len;
  }
  write_chunk(f, "IEND", {});
  f.commit();
}

void write_pgm(const std::string& path, std::int64_t width, std::int64_t height, std::span<const std::uint8_t> pixels) {
  check_size(width, height, 1, pixels, "PGM");
  AtomicFile f(path);
  const std::string header = "P5\n" + std::to_string(width) + " " + std::to_string(height) + "\n255\n";
  f.write(header.data(), header.size());
  f.write(pixels);
  f.commit();
}

void write_gray_image(const std::string& path, ImageFormat format, std::int64_t width, std::int64_t height,
                      std::span<const std::uint8_t> pixels) {
  if (format == ImageFormat::kPng)
    write_png(path, width, height, 1, pixels);
  else
    write_pgm(path, width, height, pixels);
}

}  // namespace fieldft::io
