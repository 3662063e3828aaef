// .npy (src/io/npy.hpp): round trips of every element type, the header byte for byte, files
// written by hand the way numpy writes them (versions 2.0 and 3.0, Fortran order, big-endian,
// Python 2 shapes), conversions, and every kind of bad file.
#include "io/npy.hpp"

#include <sys/resource.h>

#include <csignal>
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>

#include "io_test_common.hpp"

namespace fieldft::io {
namespace {

using test::Bytes;
using test::expect_error;
using test::read_bytes;
using test::write_bytes;

class NpyTest : public test::IoTest {};

// A .npy file with the given header text (padded as numpy pads it) and data bytes.
Bytes npy_file(const std::string& dict, const Bytes& data, int major = 1) {
  const std::size_t pre = major == 1 ? 10 : 12;
  std::string h = dict;
  const std::size_t total = pre + h.size() + 1;
  h.append((total + 63) / 64 * 64 - total, ' ');
  h += '\n';
  Bytes b = {0x93, 'N', 'U', 'M', 'P', 'Y', static_cast<std::uint8_t>(major), 0};
  for (std::size_t i = 0; i < pre - 8; ++i) b.push_back(static_cast<std::uint8_t>(h.size() >> (8 * i)));
  b.insert(b.end(), h.begin(), h.end());
  b.insert(b.end(), data.begin(), data.end());
  return b;
}

template <class T>
Bytes raw(const std::vector<T>& v) {
  Bytes b(v.size() * sizeof(T));
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

template <class T>
class NpyRoundTrip : public NpyTest {};
using ElementTypes = ::testing::Types<std::int8_t, std::uint8_t, std::int16_t, std::uint16_t, std::int32_t,
                                      std::uint32_t, std::int64_t, std::uint64_t, float, double, std::complex<float>,
                                      std::complex<double>>;
TYPED_TEST_SUITE(NpyRoundTrip, ElementTypes);

TYPED_TEST(NpyRoundTrip, EveryTypeComesBackExactly) {
  using T = TypeParam;
  const std::vector<std::int64_t> shape = {3, 4, 5};
  std::vector<T> v(60);
  for (std::size_t i = 0; i < v.size(); ++i) {
    if constexpr (std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>)
      v[i] = T(static_cast<typename T::value_type>(i) * 0.25f, -static_cast<typename T::value_type>(i));
    else
      v[i] = static_cast<T>(std::is_floating_point_v<T> ? i * 0.5 - 7 : (i * 37) % 120);
  }
  const std::string p = this->path("a.npy");
  write_npy<T>(p, shape, v);
  const NpyHeader h = read_npy_header(p);
  EXPECT_EQ(h.dtype, dtype_of<T>());
  EXPECT_EQ(h.shape, shape);
  EXPECT_EQ(h.major, 1);
  EXPECT_EQ(h.data_offset % 64, 0u);  // numpy aligns the data
  const auto a = read_npy<T>(p, {.conversion = Conversion::kExact});
  EXPECT_EQ(a.shape, shape);
  EXPECT_EQ(a.data, v);
  EXPECT_EQ(a.stored, dtype_of<T>());
}

TEST_F(NpyTest, HeaderIsNumpysByteForByte) {
  const std::vector<float> v = {1, 2, 3, 4, 5, 6};
  const std::vector<std::int64_t> shape = {2, 3};
  write_npy<float>(path("a.npy"), shape, v);
  const Bytes b = read_bytes(path("a.npy"));
  // What numpy 1.x/2.x writes for np.arange(1, 7, dtype='<f4').reshape(2, 3).
  const Bytes expected = npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", raw(v));
  EXPECT_EQ(b, expected);
  // One-dimensional shapes carry the trailing comma; a scalar has ().
  write_npy<double>(path("b.npy"), std::vector<std::int64_t>{4}, std::vector<double>(4, 1.0));
  const Bytes b1 = read_bytes(path("b.npy"));
  EXPECT_NE(std::string(b1.begin(), b1.end()).find("'shape': (4,), }"), std::string::npos);
  write_npy<double>(path("c.npy"), std::vector<std::int64_t>{}, std::vector<double>{3.5});
  const auto s = read_npy<double>(path("c.npy"));
  EXPECT_TRUE(s.shape.empty());
  EXPECT_EQ(s.data, std::vector<double>{3.5});
}

TEST_F(NpyTest, EmptyArrays) {
  write_npy<float>(path("e.npy"), std::vector<std::int64_t>{0, 5}, std::vector<float>{});
  const auto a = read_npy<float>(path("e.npy"));
  EXPECT_EQ(a.shape, (std::vector<std::int64_t>{0, 5}));
  EXPECT_TRUE(a.data.empty());
}

TEST_F(NpyTest, FortranOrderIsTransposedToCOrder) {
  // Shape (2, 3) in Fortran order: memory a[0,0], a[1,0], a[0,1], a[1,1], a[0,2], a[1,2].
  const std::vector<std::int32_t> f = {0, 10, 1, 11, 2, 12};
  write_npy<std::int32_t>(path("f.npy"), std::vector<std::int64_t>{2, 3}, f, {.fortran_order = true});
  EXPECT_TRUE(read_npy_header(path("f.npy")).fortran_order);
  const auto a = read_npy<std::int32_t>(path("f.npy"));
  EXPECT_EQ(a.data, (std::vector<std::int32_t>{0, 1, 2, 10, 11, 12}));
  // Three axes: element (i, j, k) of shape (2, 3, 4) is 100 i + 10 j + k.
  std::vector<double> f3(24);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k) f3[static_cast<std::size_t>(i + 2 * j + 6 * k)] = 100 * i + 10 * j + k;
  write_npy<double>(path("f3.npy"), std::vector<std::int64_t>{2, 3, 4}, f3, {.fortran_order = true});
  const auto c = read_npy<double>(path("f3.npy"));
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k) EXPECT_EQ(c.data[static_cast<std::size_t>(12 * i + 4 * j + k)], 100 * i + 10 * j + k);
}

TEST_F(NpyTest, VersionsTwoAndThreeAndNumpyVariants) {
  const std::vector<std::int16_t> v = {1, -2, 3};
  write_bytes(path("v2.npy"), npy_file("{'descr': '<i2', 'fortran_order': False, 'shape': (3,), }", raw(v), 2));
  write_bytes(path("v3.npy"), npy_file("{\"descr\": \"<i2\", \"fortran_order\": False, \"shape\": (3L,)}", raw(v), 3));
  EXPECT_EQ(read_npy<std::int16_t>(path("v2.npy")).data, v);
  EXPECT_EQ(read_npy_header(path("v2.npy")).major, 2);
  EXPECT_EQ(read_npy<std::int16_t>(path("v3.npy")).data, v);
  // Big-endian data are swapped; bool reads as any numeric type.
  const Bytes be = {0x3f, 0x80, 0, 0, 0xc0, 0, 0, 0};  // 1.0f, -2.0f big-endian
  write_bytes(path("be.npy"), npy_file("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", be));
  EXPECT_EQ(read_npy<float>(path("be.npy")).data, (std::vector<float>{1.0f, -2.0f}));
  write_bytes(path("b.npy"), npy_file("{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }", Bytes{1, 0, 1}));
  EXPECT_EQ(read_npy<std::int32_t>(path("b.npy")).data, (std::vector<std::int32_t>{1, 0, 1}));
  EXPECT_EQ(read_npy<std::int32_t>(path("b.npy")).stored, DType::kBool);
}

TEST_F(NpyTest, Conversions) {
  write_npy<std::int16_t>(path("i2.npy"), std::vector<std::int64_t>{2}, std::vector<std::int16_t>{-7, 300});
  EXPECT_EQ(read_npy<float>(path("i2.npy")).data, (std::vector<float>{-7, 300}));  // lossless
  EXPECT_EQ(read_npy<std::complex<double>>(path("i2.npy")).data[1], std::complex<double>(300, 0));
  expect_error([&] { read_npy<std::int8_t>(path("i2.npy")); }, ErrorCode::kInvalidArgument,
               {"i2.npy", "i2", "i1", "without loss"});
  expect_error([&] { read_npy<std::int8_t>(path("i2.npy"), {.conversion = Conversion::kAny}); },
               ErrorCode::kInvalidArgument, {"element 1", "i1"});  // 300 does not fit
  expect_error([&] { read_npy<float>(path("i2.npy"), {.conversion = Conversion::kExact}); },
               ErrorCode::kInvalidArgument, {"holds i2, expected f4"});

  write_npy<double>(path("f8.npy"), std::vector<std::int64_t>{3}, std::vector<double>{1.5, -2, 1e300});
  expect_error([&] { read_npy<float>(path("f8.npy")); }, ErrorCode::kInvalidArgument, {"f8", "f4"});
  expect_error([&] { read_npy<float>(path("f8.npy"), {.conversion = Conversion::kAny}); },
               ErrorCode::kInvalidArgument, {"element 2"});  // beyond float's range
  expect_error([&] { read_npy<std::int32_t>(path("f8.npy"), {.conversion = Conversion::kAny}); },
               ErrorCode::kInvalidArgument, {"element 0"});  // 1.5 is no integer
  write_npy<double>(path("g.npy"), std::vector<std::int64_t>{2}, std::vector<double>{1.5, -2});
  EXPECT_EQ(read_npy<float>(path("g.npy"), {.conversion = Conversion::kAny}).data, (std::vector<float>{1.5f, -2.0f}));

  using C = std::complex<float>;
  write_npy<C>(path("c.npy"), std::vector<std::int64_t>{2}, std::vector<C>{{1, 0}, {2, 0}});
  EXPECT_EQ(read_npy<double>(path("c.npy"), {.conversion = Conversion::kAny}).data, (std::vector<double>{1, 2}));
  EXPECT_EQ(read_npy<std::complex<double>>(path("c.npy")).data[1], std::complex<double>(2, 0));
  write_npy<C>(path("ci.npy"), std::vector<std::int64_t>{2}, std::vector<C>{{1, 0}, {2, 1}});
  expect_error([&] { read_npy<float>(path("ci.npy"), {.conversion = Conversion::kAny}); },
               ErrorCode::kInvalidArgument, {"element 1"});
  // int64 to double is not lossless (53-bit mantissa); uint8 to int16 is.
  write_npy<std::int64_t>(path("i8.npy"), std::vector<std::int64_t>{1}, std::vector<std::int64_t>{1});
  EXPECT_THROW(read_npy<double>(path("i8.npy")), Error);
  write_npy<std::uint8_t>(path("u1.npy"), std::vector<std::int64_t>{1}, std::vector<std::uint8_t>{200});
  EXPECT_EQ(read_npy<std::int16_t>(path("u1.npy")).data[0], 200);
  EXPECT_THROW(read_npy<std::int8_t>(path("u1.npy")), Error);
}

TEST_F(NpyTest, NonFiniteValuesAreRefusedUnlessAllowed) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  write_npy<double>(path("n.npy"), std::vector<std::int64_t>{3}, std::vector<double>{0, nan, 1});
  expect_error([&] { read_npy<double>(path("n.npy")); }, ErrorCode::kNonFinite, {"n.npy", "element 1", "finite"});
  EXPECT_TRUE(std::isnan(read_npy<double>(path("n.npy"), {.allow_nonfinite = true}).data[1]));
  using C = std::complex<float>;
  write_npy<C>(path("c.npy"), std::vector<std::int64_t>{2}, std::vector<C>{{0, 0}, {1, INFINITY}});
  expect_error([&] { read_npy<C>(path("c.npy")); }, ErrorCode::kNonFinite, {"element 1"});
}

TEST_F(NpyTest, BadFilesGiveClearErrors) {
  const Bytes good = npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", Bytes(24, 0));
  const auto bad = [&](const Bytes& b, ErrorCode code, std::initializer_list<std::string> parts) {
    write_bytes(path("bad.npy"), b);
    expect_error([&] { read_npy<float>(path("bad.npy")); }, code, parts);
    expect_error([&] { parse_npy<float>(b, "mem.npy"); }, code, {});
  };
  bad({}, ErrorCode::kInvalidArgument, {"bad.npy", "not a .npy file"});
  bad(Bytes{'P', 'K', 3, 4, 0, 0, 0, 0, 0, 0, 0, 0}, ErrorCode::kInvalidArgument, {"not a .npy file"});
  Bytes v4 = good;
  v4[6] = 4;
  bad(v4, ErrorCode::kInvalidArgument, {"version 4.0", "1.0, 2.0 or 3.0"});
  bad(Bytes(good.begin(), good.begin() + 40), ErrorCode::kInvalidArgument, {"truncated"});   // inside the header
  bad(Bytes(good.begin(), good.end() - 1), ErrorCode::kInvalidArgument, {"needs 24", "has 23", "truncated"});
  Bytes extra = good;
  extra.push_back(0);
  bad(extra, ErrorCode::kInvalidArgument, {"extra bytes"});
  Bytes len = good;
  len[8] = 0xff;
  len[9] = 0xff;  // header length beyond the file
  bad(len, ErrorCode::kInvalidArgument, {"truncated"});
  bad(npy_file("{'descr': '<f4', 'shape': (2, 3), }", Bytes(24, 0)), ErrorCode::kInvalidArgument, {"lacks"});
  bad(npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), 'x': 1}", Bytes(24, 0)),
      ErrorCode::kInvalidArgument, {"unexpected header key 'x'"});
  bad(npy_file("{'descr': '<U4', 'fortran_order': False, 'shape': (2,), }", Bytes(32, 0)), ErrorCode::kNotImplemented,
      {"dtype '<U4'"});
  bad(npy_file("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }", Bytes(8, 0)),
      ErrorCode::kNotImplemented, {"structured"});
  bad(npy_file("{'descr': '<f4', 'fortran_order': maybe, 'shape': (2, 3), }", Bytes(24, 0)),
      ErrorCode::kInvalidArgument, {"True or False"});
  bad(npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (2, -3), }", Bytes(24, 0)),
      ErrorCode::kInvalidArgument, {"non-negative"});
  bad(npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3", Bytes(24, 0)), ErrorCode::kInvalidArgument,
      {"shape"});
  // A lying header: 2^40 elements claimed in a file of 24 data bytes; refused before any allocation.
  bad(npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (1048576, 1048576), }", Bytes(24, 0)),
      ErrorCode::kInvalidArgument, {"needs 4398046511104", "has 24"});
  bad(npy_file("{'descr': '<c16', 'fortran_order': False, 'shape': (4294967296, 4294967296), }", Bytes(24, 0)),
      ErrorCode::kTooLarge, {"overflows"});
  Bytes nonl = good;
  nonl[good.size() - 25] = ' ';  // the header's final newline
  bad(nonl, ErrorCode::kInvalidArgument, {"newline"});
  expect_error([&] { read_npy<float>(path("missing.npy")); }, ErrorCode::kInvalidArgument,
               {"missing.npy", "No such file"});
  expect_error([&] { read_npy<float>(dir_.string()); }, ErrorCode::kInvalidArgument, {"not a regular file"});
}

TEST_F(NpyTest, WriteChecksShapeAndIsAtomic) {
  expect_error([&] { write_npy<float>(path("a.npy"), std::vector<std::int64_t>{2, 3}, std::vector<float>(5)); },
               ErrorCode::kShapeMismatch, {"a.npy", "6 elements", "given 5"});
  expect_error([&] { write_npy<float>(path("no/such/dir/a.npy"), std::vector<std::int64_t>{1}, std::vector<float>(1)); },
               ErrorCode::kInvalidArgument, {"no/such/dir/a.npy"});
  EXPECT_THROW(write_npy<float>(dir_.string(), std::vector<std::int64_t>{1}, std::vector<float>(1)), Error);
  EXPECT_TRUE(entries().empty());

  // A write that fails half-way (file size limit) leaves the old file and no temporary file.
  write_npy<float>(path("keep.npy"), std::vector<std::int64_t>{1}, std::vector<float>{42});
  const Bytes before = read_bytes(path("keep.npy"));
  rlimit saved{};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &saved), 0);
  const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  rlimit small = saved;
  small.rlim_cur = 4096;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  EXPECT_THROW(write_npy<double>(path("keep.npy"), std::vector<std::int64_t>{10000}, std::vector<double>(10000)), Error);
  ::setrlimit(RLIMIT_FSIZE, &saved);
  std::signal(SIGXFSZ, old_handler);
  EXPECT_EQ(read_bytes(path("keep.npy")), before);
  EXPECT_EQ(entries(), std::vector<std::string>{"keep.npy"});
}

}  // namespace
}  // namespace fieldft::io
