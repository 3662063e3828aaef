// The .npy header: the preamble, the dict literal and the checks of the shape against the
// file's size (npy.hpp states the format).
#include <algorithm>
#include <cstring>
#include <limits>
#include <string_view>

#include "fieldft/error.hpp"
#include "io/input_file.hpp"
#include "io/npy.hpp"
#include "io/npy_format.hpp"

namespace fieldft::io {

using npy_format::corrupt;
using npy_format::kMagic;
using npy_format::kMaxHeader;
using npy_format::preamble_size;
using npy_format::shape_text;

namespace {

// A recursive-descent reader of the header's dict literal: string keys; values are strings,
// True/False or tuples of integers (Python 2's "3L" suffix accepted).
class DictParser {
 public:
  DictParser(std::string_view s, const std::string& name) : s_(s), name_(name) {}

  NpyHeader parse() {
    NpyHeader h;
    bool have_descr = false, have_order = false, have_shape = false;
    expect('{');
    while (true) {
      skip();
      if (peek() == '}') break;
      const std::string key = string();
      expect(':');
      if (key == "descr") {
        skip();
        if (peek() == '[')
          throw Error(ErrorCode::kNotImplemented, ".npy file '" + name_ +
                                                      "': structured dtypes are not supported (expected a plain numeric dtype)");
        descr(string(), h);
        have_descr = true;
      } else if (key == "fortran_order") {
        h.fortran_order = boolean();
        have_order = true;
      } else if (key == "shape") {
        h.shape = tuple();
        have_shape = true;
      } else {
        corrupt(name_, "unexpected header key '" + key + "' (expected descr, fortran_order, shape)");
      }
      skip();
      if (peek() == ',') {
        ++i_;
        continue;
      }
      if (peek() != '}') corrupt(name_, "header: expected ',' or '}' at offset " + std::to_string(i_));
    }
    ++i_;
    skip();
    if (i_ != s_.size()) corrupt(name_, "header: text after the dict");
    if (!have_descr || !have_order || !have_shape)
      corrupt(name_, "header lacks one of 'descr', 'fortran_order', 'shape'");
    return h;
  }

 private:
  char peek() const { return i_ < s_.size() ? s_[i_] : '\0'; }
  void skip() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r')) ++i_;
  }
  void expect(char c) {
    skip();
    if (peek() != c) corrupt(name_, std::string("header: expected '") + c + "' at offset " + std::to_string(i_));
    ++i_;
  }
  std::string string() {
    skip();
    const char q = peek();
    if (q != '\'' && q != '"') corrupt(name_, "header: expected a quoted string at offset " + std::to_string(i_));
    ++i_;
    const auto end = s_.find(q, i_);
    if (end == std::string_view::npos) corrupt(name_, "header: unterminated string");
    std::string out(s_.substr(i_, end - i_));
    i_ = end + 1;
    return out;
  }
  bool boolean() {
    skip();
    if (s_.substr(i_, 4) == "True") {
      i_ += 4;
      return true;
    }
    if (s_.substr(i_, 5) == "False") {
      i_ += 5;
      return false;
    }
    corrupt(name_, "header: fortran_order must be True or False");
  }
  std::vector<std::int64_t> tuple() {
    expect('(');
    std::vector<std::int64_t> dims;
    while (true) {
      skip();
      if (peek() == ')') break;
      if (peek() < '0' || peek() > '9') corrupt(name_, "header: shape entries must be non-negative integers");
      std::int64_t v = 0;
      while (peek() >= '0' && peek() <= '9') {
        if (v > (std::numeric_limits<std::int64_t>::max() - 9) / 10) corrupt(name_, "header: shape entry too large");
        v = 10 * v + (peek() - '0');
        ++i_;
      }
      if (peek() == 'L') ++i_;
      dims.push_back(v);
      if (dims.size() > 64) corrupt(name_, "header: more than 64 dimensions");
      skip();
      if (peek() == ',') {
        ++i_;
        continue;
      }
      if (peek() != ')') corrupt(name_, "header: expected ',' or ')' in the shape");
    }
    ++i_;
    return dims;
  }
  void descr(const std::string& d, NpyHeader& h) {
    std::string t = d;
    char order = '|';
    if (!t.empty() && (t[0] == '<' || t[0] == '>' || t[0] == '|' || t[0] == '=')) {
      order = t[0];
      t = t.substr(1);
    }
    static const std::pair<const char*, DType> kNames[] = {
        {"?", DType::kBool},       {"b1", DType::kBool},      {"i1", DType::kInt8},      {"u1", DType::kUInt8},
        {"i2", DType::kInt16},     {"u2", DType::kUInt16},    {"i4", DType::kInt32},     {"u4", DType::kUInt32},
        {"i8", DType::kInt64},     {"u8", DType::kUInt64},    {"f4", DType::kFloat32},   {"f8", DType::kFloat64},
        {"c8", DType::kComplex64}, {"c16", DType::kComplex128}};
    for (const auto& [n, dt] : kNames)
      if (t == n) {
        h.dtype = dt;
        h.big_endian = order == '>' && dtype_size(dt) > 1;
        return;
      }
    throw Error(ErrorCode::kNotImplemented,
                ".npy file '" + name_ + "': dtype '" + d +
                    "' is not supported (expected bool, int8-64, uint8-64, float32/64 or complex64/128)");
  }

  std::string_view s_;
  const std::string& name_;
  std::size_t i_ = 0;
};


}  // namespace

const char* dtype_name(DType t) noexcept {
  switch (t) {
    case DType::kBool: return "b1";
    case DType::kInt8: return "i1";
    case DType::kUInt8: return "u1";
    case DType::kInt16: return "i2";
    case DType::kUInt16: return "u2";
    case DType::kInt32: return "i4";
    case DType::kUInt32: return "u4";
    case DType::kInt64: return "i8";
    case DType::kUInt64: return "u8";
    case DType::kFloat32: return "f4";
    case DType::kFloat64: return "f8";
    case DType::kComplex64: return "c8";
    case DType::kComplex128: return "c16";
  }
  return "?";
}

std::size_t dtype_size(DType t) noexcept {
  switch (t) {
    case DType::kBool:
    case DType::kInt8:
    case DType::kUInt8: return 1;
    case DType::kInt16:
    case DType::kUInt16: return 2;
    case DType::kInt32:
    case DType::kUInt32:
    case DType::kFloat32: return 4;
    case DType::kInt64:
    case DType::kUInt64:
    case DType::kFloat64:
    case DType::kComplex64: return 8;
    case DType::kComplex128: return 16;
  }
  return 1;
}

NpyHeader parse_npy_header(std::span<const std::uint8_t> bytes, std::uint64_t file_size, const std::string& name) {
  if (bytes.size() < 10 || std::memcmp(bytes.data(), kMagic, 6) != 0)
    corrupt(name, "not a .npy file (expected the magic \"\\x93NUMPY\" and a version)");
  const int major = bytes[6], minor = bytes[7];
  if (major < 1 || major > 3 || minor != 0)
    corrupt(name, "format version " + std::to_string(major) + "." + std::to_string(minor) +
                      " is not supported (expected 1.0, 2.0 or 3.0)");
  const std::uint64_t pre = preamble_size(major);
  if (bytes.size() < pre) corrupt(name, "truncated header");
  std::uint64_t len = bytes[8] | (std::uint64_t{bytes[9]} << 8);
  if (major > 1) len |= (std::uint64_t{bytes[10]} << 16) | (std::uint64_t{bytes[11]} << 24);
  if (len > kMaxHeader) corrupt(name, "header of " + std::to_string(len) + " bytes (at most 1 MiB expected)");
  if (pre + len > file_size || pre + len > bytes.size())
    corrupt(name, "truncated: the header needs " + std::to_string(pre + len) + " bytes, the file has " +
                      std::to_string(file_size));
  std::string_view text(reinterpret_cast<const char*>(bytes.data() + pre), len);
  if (text.empty() || text.back() != '\n') corrupt(name, "header does not end with a newline");
  if (major < 3)
    for (const char c : text)
      if (static_cast<unsigned char>(c) > 127) corrupt(name, "non-ASCII header in a version 1/2 file");
  NpyHeader h = DictParser(text, name).parse();
  h.major = major;
  h.minor = minor;
  h.data_offset = pre + len;
  const std::uint64_t data = checked_bytes(h.shape, dtype_size(h.dtype), "'" + name + "'");
  h.count = data / dtype_size(h.dtype);
  if (file_size - h.data_offset != data)
    corrupt(name, "the header's shape " + shape_text(h.shape) + " of " + dtype_name(h.dtype) + " needs " +
                      std::to_string(data) + " data bytes, the file has " + std::to_string(file_size - h.data_offset) +
                      (file_size - h.data_offset < data ? " (truncated)" : " (extra bytes)"));
  return h;
}

NpyHeader read_npy_header(const std::string& path) {
  const InputFile f(path, ".npy file");
  std::vector<std::uint8_t> head(static_cast<std::size_t>(std::min<std::uint64_t>(f.size(), 12)));
  f.read(0, head.data(), head.size());
  if (head.size() >= 10 && std::memcmp(head.data(), kMagic, 6) == 0 && head[6] >= 1 && head[6] <= 3) {
    const std::uint64_t pre = preamble_size(head[6]);
    if (head.size() >= pre) {
      std::uint64_t len = head[8] | (std::uint64_t{head[9]} << 8);
      if (head[6] > 1) len |= (std::uint64_t{head[10]} << 16) | (std::uint64_t{head[11]} << 24);
      head.resize(static_cast<std::size_t>(std::min<std::uint64_t>(f.size(), pre + std::min<std::uint64_t>(len, kMaxHeader))));
      f.read(0, head.data(), head.size());
    }
  }
  return parse_npy_header(head, f.size(), path);
}

}  // namespace fieldft::io
