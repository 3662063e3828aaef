// BART .cfl/.hdr (src/io/cfl.hpp): the files as BART writes them, round trips of every layout
// (k-space, trajectory, images, coil maps), the mapping from fieldft's layouts, and bad files.
#include "io/cfl.hpp"

#include <cmath>
#include <complex>
#include <cstring>
#include <limits>

#include "io/parallel_pieces.hpp"
#include "io_test_common.hpp"

namespace fieldft::io {
namespace {

using test::Bytes;
using test::expect_error;
using test::read_bytes;
using test::write_bytes;
using test::write_text;
using C = std::complex<float>;

class CflTest : public test::IoTest {};

std::vector<C> ramp(std::size_t n) {
  std::vector<C> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = C(static_cast<float>(i), -0.5f * static_cast<float>(i));
  return v;
}

TEST_F(CflTest, FilesAreWhatBartWrites) {
  const std::vector<std::int64_t> dims = {2, 3};
  const auto v = ramp(6);
  write_cfl(path("x"), dims, v);
  const Bytes hdr = read_bytes(path("x.hdr"));
  const std::string text(hdr.begin(), hdr.end());
  EXPECT_EQ(text.rfind("# Dimensions\n2 3 1 1 1 1 1 1 1 1 1 1 1 1 1 1 \n", 0), 0u) << text;  // 16 dims, as BART
  const Bytes cfl = read_bytes(path("x.cfl"));
  ASSERT_EQ(cfl.size(), 6 * sizeof(C));
  EXPECT_EQ(std::memcmp(cfl.data(), v.data(), cfl.size()), 0);  // float32 re, im, first index fastest
  const CflArray a = read_cfl(path("x.cfl"));                   // any of name, name.cfl, name.hdr
  EXPECT_EQ(a.dims.size(), 16u);
  EXPECT_EQ(a.dims[0], 2);
  EXPECT_EQ(a.dims[1], 3);
  EXPECT_EQ(a.data, v);
  EXPECT_EQ(read_cfl_dims(path("x.hdr")), a.dims);
}

TEST_F(CflTest, ReadsHeadersAsBartWritesThem) {
  // BART v0.8's header, with the sections after the dimensions.
  write_text(path("b.hdr"),
             "# Dimensions\n1 4 2 1 1 1 1 1 1 1 1 1 1 1 1 1 \n# Command\nnufft traj img ksp \n# Files\n >ksp <img "
             "<traj\n# Creator\nBART v0.8.00\n");
  const auto v = ramp(8);
  write_bytes(path("b.cfl"), Bytes(reinterpret_cast<const std::uint8_t*>(v.data()),
                                   reinterpret_cast<const std::uint8_t*>(v.data() + v.size())));
  const BartKspace k = read_cfl_kspace(path("b"));
  EXPECT_EQ(k.samples, 4);
  EXPECT_EQ(k.spokes, 2);
  EXPECT_EQ(k.coils, 1);
  EXPECT_EQ(k.data, v);
  // Short headers (fewer than 16 dimensions) and CRLF line ends.
  write_text(path("s.hdr"), "# Dimensions\r\n8\r\n");
  write_bytes(path("s.cfl"), Bytes(64, 0));
  EXPECT_EQ(read_cfl(path("s")).dims, std::vector<std::int64_t>{8});
}

TEST_F(CflTest, KspaceLayout) {
  // fieldft: M = samples * spokes samples per coil, readout fastest, coils slowest = BART's
  // [1, samples, spokes, coils].
  const auto v = ramp(5 * 3 * 2);
  write_cfl_kspace(path("k"), 5, 3, 2, v);
  EXPECT_EQ(read_cfl_dims(path("k")), bart_kspace_dims(5, 3, 2));
  EXPECT_EQ(bart_kspace_dims(5, 3, 2)[0], 1);
  const BartKspace k = read_cfl_kspace(path("k"));
  EXPECT_EQ(k.samples, 5);
  EXPECT_EQ(k.spokes, 3);
  EXPECT_EQ(k.coils, 2);
  EXPECT_EQ(k.data, v);
  // Sample s of spoke p of coil c is element s + 5 p + 15 c, BART's [0, s, p, c].
  EXPECT_EQ(k.data[2 + 5 * 1 + 15 * 1], v[22]);
  // Coil images are not k-space.
  write_cfl_image(path("im"), std::vector<std::int64_t>{4, 3}, 2, ramp(24));
  expect_error([&] { read_cfl_kspace(path("im")); }, ErrorCode::kShapeMismatch,
               {"im", "[1, samples, spokes, coils]", "dimension 0 is 4"});
}

TEST_F(CflTest, TrajectoryLayoutAndUnits) {
  // 2D: BART [3, samples, spokes] with row 2 zero; k copied unchanged (both in cycles/FOV).
  const std::vector<double> kx = {-32, -16, 0, 16, 31.5, 0.25}, ky = {0, 1, 2, 3, 4, -5};
  write_cfl_trajectory<double>(path("t"), 3, 2, kx, ky);
  EXPECT_EQ(read_cfl_dims(path("t")), bart_trajectory_dims(3, 2));
  const CflArray raw = read_cfl(path("t"));
  for (std::size_t j = 0; j < 6; ++j) {
    EXPECT_EQ(raw.data[3 * j], C(static_cast<float>(kx[j]), 0));
    EXPECT_EQ(raw.data[3 * j + 1], C(static_cast<float>(ky[j]), 0));
    EXPECT_EQ(raw.data[3 * j + 2], C(0, 0));
  }
  const BartTrajectory t = read_cfl_trajectory(path("t"));
  EXPECT_EQ(t.dim, 2);
  EXPECT_EQ(t.samples, 3);
  EXPECT_EQ(t.spokes, 2);
  EXPECT_EQ(t.k[0], std::vector<float>(kx.begin(), kx.end()));
  EXPECT_EQ(t.k[1], std::vector<float>(ky.begin(), ky.end()));
  // 3D.
  const std::vector<float> fx = {1, 2}, fy = {3, 4}, fz = {5, -6};
  write_cfl_trajectory<float>(path("t3"), 2, 1, fx, fy, fz);
  const BartTrajectory t3 = read_cfl_trajectory(path("t3"));
  EXPECT_EQ(t3.dim, 3);
  EXPECT_EQ(t3.k[2], fz);
  // Wrong sizes, non-finite k, imaginary parts.
  expect_error([&] { write_cfl_trajectory<float>(path("w"), 3, 1, fx, fy); }, ErrorCode::kShapeMismatch, {"3 values"});
  const std::vector<float> bad = {1, NAN};
  expect_error([&] { write_cfl_trajectory<float>(path("w"), 2, 1, fx, bad); }, ErrorCode::kNonFinite, {"sample 1"});
  write_cfl(path("ti"), bart_trajectory_dims(1, 1), std::vector<C>{{1, 0}, {2, 0.5f}, {0, 0}});
  expect_error([&] { read_cfl_trajectory(path("ti")); }, ErrorCode::kInvalidArgument, {"imaginary"});
  write_cfl(path("tk"), bart_kspace_dims(2, 1), ramp(2));
  expect_error([&] { read_cfl_trajectory(path("tk")); }, ErrorCode::kShapeMismatch, {"trajectory", "dimension 0 is 1"});
}

TEST_F(CflTest, ImagesAndCoilMaps) {
  // fieldft {Nx, Ny} + {C}, x fastest = BART [x, y, 1, coils].
  const std::vector<std::int64_t> shape2 = {4, 3};
  const auto maps = ramp(4 * 3 * 2);
  write_cfl_image(path("maps"), shape2, 2, maps);
  EXPECT_EQ(read_cfl_dims(path("maps")), bart_image_dims(shape2, 2));
  const BartImage m = read_cfl_image(path("maps"));
  EXPECT_EQ(m.shape, shape2);
  EXPECT_EQ(m.coils, 2);
  EXPECT_EQ(m.data, maps);
  const std::vector<std::int64_t> shape3 = {4, 3, 2};
  write_cfl_image(path("vol"), shape3, 1, ramp(24));
  const BartImage v = read_cfl_image(path("vol"));
  EXPECT_EQ(v.shape, shape3);
  EXPECT_EQ(v.coils, 1);
  // A dataset with a 5th dimension (BART's MAPS) is not an image of this layout.
  std::vector<std::int64_t> d5 = bart_image_dims(shape2, 1);
  d5[4] = 2;
  write_cfl(path("two_sets"), d5, ramp(24));
  expect_error([&] { read_cfl_image(path("two_sets")); }, ErrorCode::kShapeMismatch, {"dimension 4 is 2"});
  expect_error([&] { write_cfl_image(path("x"), shape2, 3, maps); }, ErrorCode::kShapeMismatch, {"36 values", "given 24"});
}

TEST_F(CflTest, BadFilesGiveClearErrors) {
  const auto pair = [&](const std::string& hdr, std::size_t cfl_bytes) {
    write_text(path("d.hdr"), hdr);
    write_bytes(path("d.cfl"), Bytes(cfl_bytes, 0));
  };
  pair("# Dimensions\n2 3\n", 47);
  expect_error([&] { read_cfl(path("d")); }, ErrorCode::kInvalidArgument, {"d.cfl", "need 48", "has 47", "truncated"});
  pair("# Dimensions\n2 3\n", 49);
  expect_error([&] { read_cfl(path("d")); }, ErrorCode::kInvalidArgument, {"extra bytes"});
  pair("# Dimensions\n2 0 3\n", 0);
  expect_error([&] { read_cfl(path("d")); }, ErrorCode::kInvalidArgument, {"d.hdr", "dimension 1 is 0"});
  pair("# Dimensions\n2 -3\n", 48);
  expect_error([&] { read_cfl(path("d")); }, ErrorCode::kInvalidArgument, {"positive integers"});
  pair("# Dimensions\n2 3x\n", 48);
  expect_error([&] { read_cfl(path("d")); }, ErrorCode::kInvalidArgument, {"malformed"});
  pair("2 3\n", 48);
  expect_error([&] { read_cfl(path("d")); }, ErrorCode::kInvalidArgument, {"no '# Dimensions'"});
  pair("# Dimensions\n", 48);
  expect_error([&] { read_cfl(path("d")); }, ErrorCode::kInvalidArgument, {"ends after"});
  pair("# Dimensions\n\n", 48);
  expect_error([&] { read_cfl(path("d")); }, ErrorCode::kInvalidArgument, {"no dimensions"});
  // A lying header (2^48 values) against a small file: refused before allocating.
  pair("# Dimensions\n16777216 16777216\n", 48);
  expect_error([&] { read_cfl(path("d")); }, ErrorCode::kInvalidArgument, {"need 2251799813685248", "has 48"});
  pair("# Dimensions\n72057594037927936 72057594037927936\n", 48);
  expect_error([&] { read_cfl(path("d")); }, ErrorCode::kTooLarge, {"overflows"});
  write_text(path("d.hdr"), std::string(70000, '#'));
  expect_error([&] { read_cfl(path("d")); }, ErrorCode::kInvalidArgument, {"short text file"});
  // Missing files.
  write_text(path("h.hdr"), "# Dimensions\n2\n");
  expect_error([&] { read_cfl(path("h")); }, ErrorCode::kInvalidArgument, {"h.cfl", "No such file"});
  expect_error([&] { read_cfl(path("none")); }, ErrorCode::kInvalidArgument, {"none.hdr"});
  // NaN in the data.
  std::vector<C> v = ramp(4);
  v[3] = C(0, std::numeric_limits<float>::quiet_NaN());
  write_cfl(path("n"), std::vector<std::int64_t>{4}, v);
  expect_error([&] { read_cfl(path("n")); }, ErrorCode::kNonFinite, {"n.cfl", "element 3"});
  EXPECT_TRUE(std::isnan(read_cfl(path("n"), {.allow_nonfinite = true}).data[3].imag()));
  // The layouts of an array in memory check that its dims describe its data.
  expect_error([&] { kspace_from_cfl(CflArray{{1, 2, 2}, ramp(3)}, "mem"); }, ErrorCode::kShapeMismatch, {"mem", "3 values"});
  expect_error([&] { trajectory_from_cfl(CflArray{{3, 0}, {}}, "mem"); }, ErrorCode::kInvalidArgument, {"mem"});
  EXPECT_EQ(image_from_cfl(CflArray{{2, 2}, ramp(4)}, "mem").shape, (std::vector<std::int64_t>{2, 2}));
  // The in-memory parser (the fuzz target's entry) agrees.
  const std::string hdr = "# Dimensions\n2 3\n";
  EXPECT_EQ(parse_cfl(hdr, Bytes(48, 0), "mem").data.size(), 6u);
  EXPECT_THROW(parse_cfl(hdr, Bytes(40, 0), "mem"), Error);
}

// A large array (12M values, 96 MiB) is read in parallel pieces and scanned for NaN/Inf in
// parallel pieces (io/input_file.cpp, io/parallel_pieces.hpp): the same values, and the first bad
// value named where several pieces hold one.
TEST_F(CflTest, LargeArraysReadAndCheckedInPieces) {
  const std::size_t n = std::size_t{12} << 20;
  std::vector<C> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = C(static_cast<float>(i % 1000003), static_cast<float>(i % 7));
  write_cfl(path("big"), std::vector<std::int64_t>{static_cast<std::int64_t>(n)}, v);
  EXPECT_TRUE(read_cfl(path("big")).data == v);
  const std::size_t first = (std::size_t{9} << 20) + 5, later = (std::size_t{11} << 20) + 1;
  v[later] = C(std::numeric_limits<float>::infinity(), 0);
  v[first] = C(0, std::numeric_limits<float>::quiet_NaN());
  write_cfl(path("big"), std::vector<std::int64_t>{static_cast<std::int64_t>(n)}, v);
  expect_error([&] { read_cfl(path("big")); }, ErrorCode::kNonFinite,
               {"big.cfl", "element " + std::to_string(first) + ";"});
  // The scan alone, at the edges of its pieces and with nothing to find.
  for (const std::size_t at : {std::size_t{0}, (std::size_t{4} << 20) - 1, std::size_t{4} << 20, n - 1})
    EXPECT_EQ(first_where(n, [at](std::size_t i) { return i >= at; }), at);
  EXPECT_EQ(first_where(n, [](std::size_t) { return false; }), n);
  EXPECT_EQ(first_where(0, [](std::size_t) { return true; }), 0u);
}

TEST_F(CflTest, WritesAreAtomic) {
  expect_error([&] { write_cfl(path("x"), std::vector<std::int64_t>{2, 0}, std::vector<C>{}); },
               ErrorCode::kInvalidArgument, {">= 1"});
  expect_error([&] { write_cfl(path("x"), std::vector<std::int64_t>{2, 2}, ramp(3)); }, ErrorCode::kShapeMismatch,
               {"4 values", "given 3"});
  expect_error([&] { write_cfl(path("nodir/x"), std::vector<std::int64_t>{1}, ramp(1)); }, ErrorCode::kInvalidArgument,
               {"nodir/x"});
  EXPECT_TRUE(entries().empty());
  // A directory in the way of the .hdr: the .cfl must not appear either.
  std::filesystem::create_directory(path("y.hdr"));
  EXPECT_THROW(write_cfl(path("y"), std::vector<std::int64_t>{1}, ramp(1)), Error);
  EXPECT_EQ(entries(), std::vector<std::string>{"y.hdr"});
}

}  // namespace
}  // namespace fieldft::io
