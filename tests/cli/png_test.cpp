// fieldft::io image writers (src/io/png.hpp): the files are read back by a decoder written here
// independently of the writer (bitwise CRC-32, Adler-32 from its definition, stored deflate
// blocks parsed by hand), and failed writes must leave the destination untouched.
#include "io/png.hpp"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <csignal>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <span>
#include <string>
#include <vector>

#include "fieldft/error.hpp"

namespace fieldft::io {
namespace {

namespace fs = std::filesystem;
using Bytes = std::vector<std::uint8_t>;

// A fresh directory per test, removed afterwards.
class PngTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("fieldft_png_test_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::vector<std::string> entries() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir_)) names.push_back(e.path().filename());
    return names;
  }
  fs::path dir_;
};

Bytes read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(f), {});
}

std::uint32_t be32(const Bytes& b, std::size_t at) {
  return std::uint32_t{b[at]} << 24 | std::uint32_t{b[at + 1]} << 16 | std::uint32_t{b[at + 2]} << 8 | b[at + 3];
}

// CRC-32 bit by bit, straight from the polynomial (the writer uses a table).
std::uint32_t slow_crc(const std::uint8_t* p, std::size_t n) {
  std::uint32_t c = 0xFFFFFFFFu;
  for (std::size_t i = 0; i < n; ++i) {
    c ^= p[i];
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
  }
  return ~c;
}

// Adler-32 with the modulo after every byte (the writer defers it).
std::uint32_t slow_adler(const Bytes& b) {
  std::uint32_t a = 1, s = 0;
  for (auto x : b) {
    a = (a + x) % 65521;
    s = (s + a) % 65521;
  }
  return s << 16 | a;
}

struct Decoded {
  std::uint32_t width = 0, height = 0;
  int bit_depth = 0, colour_type = 0;
  Bytes pixels;
};

// Decodes a PNG of stored deflate blocks and filter type 0, checking every field on the way.
Decoded decode_png(const Bytes& f) {
  Decoded d;
  const Bytes signature{0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  EXPECT_TRUE(f.size() >= 8 && Bytes(f.begin(), f.begin() + 8) == signature);
  Bytes zlib;
  std::vector<std::string> types;
  for (std::size_t at = 8; at + 12 <= f.size();) {
    const std::uint32_t len = be32(f, at);
    const std::string type(f.begin() + at + 4, f.begin() + at + 8);
    EXPECT_LE(at + 12 + len, f.size()) << type;
    EXPECT_EQ(be32(f, at + 8 + len), slow_crc(f.data() + at + 4, len + 4)) << "CRC of " << type;
    const Bytes body(f.begin() + at + 8, f.begin() + at + 8 + len);
    if (type == "IHDR") {
      EXPECT_EQ(len, 13u);
      d.width = be32(body, 0);
      d.height = be32(body, 4);
      d.bit_depth = body[8];
      d.colour_type = body[9];
      EXPECT_EQ(body[10], 0);  // compression
      EXPECT_EQ(body[11], 0);  // filter method
      EXPECT_EQ(body[12], 0);  // interlace
    } else if (type == "IDAT") {
      zlib.insert(zlib.end(), body.begin(), body.end());
    }
    types.push_back(type);
    at += 12 + len;
    if (type == "IEND") {
      EXPECT_EQ(at, f.size());
    }
  }
  EXPECT_TRUE(types.size() >= 3 && types.front() == "IHDR" && types.back() == "IEND");

  // zlib: CMF, FLG, stored blocks, Adler-32 of the filtered image.
  EXPECT_TRUE(zlib.size() >= 6);
  if (zlib.size() < 6) return d;
  EXPECT_EQ(zlib[0] & 0x0f, 8);  // deflate
  EXPECT_EQ((zlib[0] * 256 + zlib[1]) % 31, 0);
  EXPECT_EQ(zlib[1] & 0x20, 0);  // no preset dictionary
  Bytes raw;
  std::size_t at = 2;
  for (bool final = false; !final && at + 5 <= zlib.size();) {
    final = zlib[at] & 1;
    EXPECT_EQ(zlib[at] >> 1, 0) << "not a stored block";
    const unsigned len = zlib[at + 1] | zlib[at + 2] << 8, nlen = zlib[at + 3] | zlib[at + 4] << 8;
    EXPECT_EQ(len ^ 0xffffu, nlen);
    raw.insert(raw.end(), zlib.begin() + at + 5, zlib.begin() + at + 5 + len);
    at += 5 + len;
  }
  EXPECT_EQ(at + 4, zlib.size());
  EXPECT_EQ(be32(zlib, at), slow_adler(raw));

  const std::size_t channels = d.colour_type == 2 ? 3 : 1, row = d.width * channels;
  EXPECT_EQ(raw.size(), d.height * (row + 1));
  for (std::size_t y = 0; y < d.height && (y + 1) * (row + 1) <= raw.size(); ++y) {
    EXPECT_EQ(raw[y * (row + 1)], 0) << "filter type of row " << y;
    d.pixels.insert(d.pixels.end(), raw.begin() + y * (row + 1) + 1, raw.begin() + (y + 1) * (row + 1));
  }
  return d;
}

Bytes pattern(std::size_t n) {
  Bytes b(n);
  for (std::size_t i = 0; i < n; ++i) b[i] = static_cast<std::uint8_t>((i * 7 + i / 251) & 0xff);
  return b;
}

TEST(PngChecksums, KnownValues) {
  const std::string digits = "123456789", wiki = "Wikipedia";
  const auto span = [](const std::string& s) {
    return std::span(reinterpret_cast<const std::uint8_t*>(s.data()), s.size());
  };
  EXPECT_EQ(crc32(span(digits)), 0xCBF43926u);
  EXPECT_EQ(crc32(span(digits).subspan(4), crc32(span(digits).first(4))), 0xCBF43926u);
  EXPECT_EQ(adler32(span(wiki)), 0x11E60398u);
  const Bytes big = pattern(100000);  // longer than the writer's deferred-modulo run
  EXPECT_EQ(adler32(big), slow_adler(big));
  EXPECT_EQ(crc32(big), slow_crc(big.data(), big.size()));
}

TEST(PngFormat, FromExtension) {
  EXPECT_EQ(image_format_from_path("a/b.png"), ImageFormat::kPng);
  EXPECT_EQ(image_format_from_path("B.PNG"), ImageFormat::kPng);
  EXPECT_EQ(image_format_from_path("x.pgm"), ImageFormat::kPgm);
  EXPECT_EQ(image_format_from_path("x.jpg"), std::nullopt);
  EXPECT_EQ(image_format_from_path("png"), std::nullopt);
  EXPECT_EQ(image_format_from_path("x.png.txt"), std::nullopt);
}

// 300 x 250 gray: the filtered image spans two stored blocks.
TEST_F(PngTest, GrayRoundTrip) {
  const Bytes px = pattern(300 * 250);
  write_png(path("g.png"), 300, 250, 1, px);
  const Decoded d = decode_png(read_file(path("g.png")));
  EXPECT_EQ(d.width, 300u);
  EXPECT_EQ(d.height, 250u);
  EXPECT_EQ(d.bit_depth, 8);
  EXPECT_EQ(d.colour_type, 0);
  EXPECT_EQ(d.pixels, px);
  EXPECT_EQ(entries(), std::vector<std::string>{"g.png"});  // no temporary file left
}

TEST_F(PngTest, RgbRoundTrip) {
  const Bytes px = pattern(3 * 41 * 37);
  write_png(path("c.png"), 41, 37, 3, px);
  const Decoded d = decode_png(read_file(path("c.png")));
  EXPECT_EQ(d.width, 41u);
  EXPECT_EQ(d.height, 37u);
  EXPECT_EQ(d.colour_type, 2);
  EXPECT_EQ(d.pixels, px);
}

// One pixel, and one row longer than a stored block: the block edges fall inside a row.
TEST_F(PngTest, ExtremeShapes) {
  write_png(path("one.png"), 1, 1, 1, Bytes{200});
  EXPECT_EQ(decode_png(read_file(path("one.png"))).pixels, Bytes{200});
  const Bytes row = pattern(3 * 70000);
  write_png(path("row.png"), 70000, 1, 3, row);
  EXPECT_EQ(decode_png(read_file(path("row.png"))).pixels, row);
}

TEST_F(PngTest, Pgm) {
  const Bytes px = pattern(5 * 3);
  write_gray_image(path("p.pgm"), ImageFormat::kPgm, 5, 3, px);
  Bytes want{'P', '5', '\n', '5', ' ', '3', '\n', '2', '5', '5', '\n'};
  want.insert(want.end(), px.begin(), px.end());
  EXPECT_EQ(read_file(path("p.pgm")), want);
}

TEST_F(PngTest, BadArgumentsWriteNothing) {
  const Bytes px = pattern(12);
  EXPECT_THROW(write_png(path("a.png"), 4, 3, 2, px), Error);     // channels
  EXPECT_THROW(write_png(path("a.png"), 5, 3, 1, px), Error);     // pixel count
  EXPECT_THROW(write_png(path("a.png"), 0, 3, 1, {}), Error);     // empty
  EXPECT_THROW(write_pgm(path("a.pgm"), 4, 4, px), Error);        // pixel count
  EXPECT_THROW(write_png(path("no/a.png"), 4, 3, 1, px), Error);  // missing directory
  fs::create_directory(path("d.png"));
  EXPECT_THROW(write_png(path("d.png"), 4, 3, 1, px), Error);  // a directory
  EXPECT_EQ(entries(), std::vector<std::string>{"d.png"});
}

// A write that fails half way (here: the file size limit) leaves the old file as it was and no
// temporary file behind.
TEST_F(PngTest, FailedWriteKeepsOldFile) {
  const Bytes old = pattern(10);
  write_pgm(path("keep.pgm"), 10, 1, old);
  const Bytes before = read_file(path("keep.pgm"));

  rlimit saved{};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &saved), 0);
  const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);  // write() then fails with EFBIG
  rlimit small = saved;
  small.rlim_cur = 4096;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  const Bytes px = pattern(200 * 100);
  EXPECT_THROW(write_pgm(path("keep.pgm"), 200, 100, px), Error);
  EXPECT_THROW(write_png(path("keep.png"), 200, 100, 1, px), Error);
  ::setrlimit(RLIMIT_FSIZE, &saved);
  std::signal(SIGXFSZ, old_handler);

  EXPECT_EQ(read_file(path("keep.pgm")), before);
  EXPECT_EQ(entries(), std::vector<std::string>{"keep.pgm"});
}

}  // namespace
}  // namespace fieldft::io
