// fieldft::io — 8-bit image files: PNG (grayscale or RGB) and binary PGM, written without any
// image or compression library.
//
// Pixels are row-major, the top row first, left to right in each row; an RGB pixel is three
// bytes R, G, B. PNG data are zlib streams of stored (uncompressed) deflate blocks, so a file is
// about as large as the pixels; PGM is "P5", maxval 255. Every writer creates a temporary file
// in the destination's directory and renames it onto the destination once it is complete, so
// that a failure (bad path, full disk) leaves the destination as it was and no temporary file
// behind. Failures throw fieldft::Error (kInvalidArgument for paths that cannot be written,
// kShapeMismatch when the pixel count is not width x height x channels).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

namespace fieldft::io {

enum class ImageFormat { kPgm, kPng };

// The format named by the path's extension (".pgm" or ".png", any letter case); nullopt for any
// other extension or none.
std::optional<ImageFormat> image_format_from_path(const std::string& path);

// PNG, colour type 0 (grayscale, channels = 1) or 2 (RGB, channels = 3), bit depth 8, no
// interlace. width and height in [1, 2^31 - 1].
void write_png(const std::string& path, std::int64_t width, std::int64_t height, int channels,
               std::span<const std::uint8_t> pixels);

// Binary PGM ("P5", maxval 255) of a grayscale image.
void write_pgm(const std::string& path, std::int64_t width, std::int64_t height, std::span<const std::uint8_t> pixels);

// A grayscale image in the given format.
void write_gray_image(const std::string& path, ImageFormat format, std::int64_t width, std::int64_t height,
                      std::span<const std::uint8_t> pixels);

// CRC-32 of ISO 3309 / PNG (polynomial 0xEDB88320 reflected, initial and final XOR 0xFFFFFFFF),
// continued from `crc` (the CRC of the bytes before; 0 to start): crc32("123456789") = 0xCBF43926.
std::uint32_t crc32(std::span<const std::uint8_t> bytes, std::uint32_t crc = 0) noexcept;

// Adler-32 of RFC 1950, continued from `adler` (1 to start): adler32("Wikipedia") = 0x11E60398.
std::uint32_t adler32(std::span<const std::uint8_t> bytes, std::uint32_t adler = 1) noexcept;

}  // namespace fieldft::io
