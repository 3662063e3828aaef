#include "io/npy.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <utility>

#include "fieldft/error.hpp"
#include "io/atomic_file.hpp"
#include "io/input_file.hpp"
#include "io/npy_format.hpp"

namespace fieldft::io {

static_assert(std::endian::native == std::endian::little, "the .npy writer assumes a little-endian host");

using npy_format::corrupt;
using npy_format::kMagic;
using npy_format::shape_text;

namespace {

template <class T>
struct IsComplex : std::false_type {};
template <class U>
struct IsComplex<std::complex<U>> : std::true_type {};

// Whether every value of S is a value of T.
template <class S, class T>
constexpr bool lossless() {
  if constexpr (std::is_same_v<S, T>) {
    return true;
  } else if constexpr (std::is_same_v<S, bool>) {
    return true;  // 0 and 1 are values of every type here
  } else if constexpr (IsComplex<T>::value) {
    using U = typename T::value_type;
    if constexpr (IsComplex<S>::value)
      return lossless<typename S::value_type, U>();
    else
      return lossless<S, U>();
  } else if constexpr (IsComplex<S>::value) {
    return false;
  } else if constexpr (std::is_floating_point_v<T>) {
    if constexpr (std::is_floating_point_v<S>)
      return sizeof(S) <= sizeof(T);
    else
      return std::numeric_limits<S>::digits <= std::numeric_limits<T>::digits;
  } else if constexpr (std::is_floating_point_v<S>) {
    return false;
  } else {  // integers (bool counts as unsigned)
    return std::cmp_greater_equal(std::numeric_limits<S>::min(), std::numeric_limits<T>::min()) &&
           std::cmp_less_equal(std::numeric_limits<S>::max(), std::numeric_limits<T>::max());
  }
}

template <class V>
bool finite(const V& v) {
  if constexpr (IsComplex<V>::value)
    return std::isfinite(v.real()) && std::isfinite(v.imag());
  else if constexpr (std::is_floating_point_v<V>)
    return std::isfinite(v);
  else
    return true;
}

// One real value v of type S as a T, or false when it does not survive (an integer out of
// range or with a fraction, a finite float beyond the narrower float's range); integers to
// floating point round, as numpy's astype does.
template <class T, class S>
bool convert_real(S v, T& out) {
  if constexpr (std::is_same_v<S, bool>) {
    return convert_real<T>(static_cast<std::uint8_t>(v), out);
  } else if constexpr (std::is_same_v<T, bool>) {
    if (!(v == S(0) || v == S(1))) return false;
    out = v != S(0);
    return true;
  } else if constexpr (std::is_floating_point_v<T>) {
    if constexpr (std::is_floating_point_v<S> && sizeof(S) > sizeof(T)) {
      // Out of range is undefined behaviour for the cast; NaN and Inf pass through.
      if (std::isfinite(v) && std::fabs(v) > static_cast<S>(std::numeric_limits<T>::max())) return false;
    }
    out = static_cast<T>(v);
    return true;
  } else if constexpr (std::is_floating_point_v<S>) {
    // [min(T), 2^digits(T)) holds exactly the floats that are integers of T; both bounds are
    // powers of two (or 0), so exact in S.
    const S lo = static_cast<S>(std::numeric_limits<T>::min());
    const S hi = std::ldexp(S(1), std::numeric_limits<T>::digits);
    if (!std::isfinite(v) || std::trunc(v) != v || v < lo || v >= hi) return false;
    out = static_cast<T>(v);
    return true;
  } else {
    if (!std::in_range<T>(v)) return false;
    out = static_cast<T>(v);
    return true;
  }
}

template <class T, class S>
bool convert(const S& v, T& out) {
  if constexpr (IsComplex<T>::value) {
    using U = typename T::value_type;
    if constexpr (IsComplex<S>::value) {
      U re{}, im{};
      if (!convert_real<U>(v.real(), re) || !convert_real<U>(v.imag(), im)) return false;
      out = T(re, im);
    } else {
      U r{};
      if (!convert_real<U>(v, r)) return false;
      out = T(r, U(0));
    }
    return true;
  } else if constexpr (IsComplex<S>::value) {
    if (v.imag() != 0) return false;
    return convert_real<T>(v.real(), out);
  } else {
    return convert_real<T>(v, out);
  }
}

template <class S>
S load(const std::uint8_t* p, bool swap) {
  S v;
  if constexpr (IsComplex<S>::value) {
    using U = typename S::value_type;
    return S(load<U>(p, swap), load<U>(p + sizeof(U), swap));
  } else if constexpr (std::is_same_v<S, bool>) {
    v = *p != 0;
  } else {
    std::uint8_t b[sizeof(S)];
    std::memcpy(b, p, sizeof(S));
    if (swap) std::reverse(b, b + sizeof(S));
    std::memcpy(&v, b, sizeof(S));
  }
  return v;
}

// Converts the raw elements (file order) to T in file order.
template <class T, class S>
void decode_as(const std::uint8_t* raw, const NpyHeader& h, const std::string& name, const NpyReadOptions& o,
               std::vector<T>& out) {
  if (o.conversion == Conversion::kExact && !std::is_same_v<S, T>)
    corrupt(name, std::string("holds ") + dtype_name(h.dtype) + ", expected " + dtype_name(dtype_of<T>()));
  if (o.conversion == Conversion::kLossless && !lossless<S, T>())
    corrupt(name, std::string("holds ") + dtype_name(h.dtype) + ", which " + dtype_name(dtype_of<T>()) +
                      " cannot hold without loss (convert explicitly)");
  out.resize(h.count);
  for (std::uint64_t i = 0; i < h.count; ++i) {
    const S v = load<S>(raw + i * sizeof(S), h.big_endian);
    if (!o.allow_nonfinite && !finite(v))
      throw Error(ErrorCode::kNonFinite, ".npy file '" + name + "': non-finite value at element " + std::to_string(i) +
                                             " (file order); expected finite data");
    if (!convert(v, out[i]))
      corrupt(name, "element " + std::to_string(i) + " does not convert exactly from " + dtype_name(h.dtype) + " to " +
                        dtype_name(dtype_of<T>()));
  }
}

template <class T>
std::vector<T> decode(const std::uint8_t* raw, const NpyHeader& h, const std::string& name, const NpyReadOptions& o) {
  std::vector<T> out;
  switch (h.dtype) {
    case DType::kBool: decode_as<T, bool>(raw, h, name, o, out); break;
    case DType::kInt8: decode_as<T, std::int8_t>(raw, h, name, o, out); break;
    case DType::kUInt8: decode_as<T, std::uint8_t>(raw, h, name, o, out); break;
    case DType::kInt16: decode_as<T, std::int16_t>(raw, h, name, o, out); break;
    case DType::kUInt16: decode_as<T, std::uint16_t>(raw, h, name, o, out); break;
    case DType::kInt32: decode_as<T, std::int32_t>(raw, h, name, o, out); break;
    case DType::kUInt32: decode_as<T, std::uint32_t>(raw, h, name, o, out); break;
    case DType::kInt64: decode_as<T, std::int64_t>(raw, h, name, o, out); break;
    case DType::kUInt64: decode_as<T, std::uint64_t>(raw, h, name, o, out); break;
    case DType::kFloat32: decode_as<T, float>(raw, h, name, o, out); break;
    case DType::kFloat64: decode_as<T, double>(raw, h, name, o, out); break;
    case DType::kComplex64: decode_as<T, std::complex<float>>(raw, h, name, o, out); break;
    case DType::kComplex128: decode_as<T, std::complex<double>>(raw, h, name, o, out); break;
  }
  if (h.fortran_order && h.shape.size() > 1) {  // transpose to C order
    const std::size_t d = h.shape.size();
    std::vector<T> c(out.size());
    std::vector<std::int64_t> idx(d, 0);
    std::vector<std::uint64_t> fstride(d, 1);
    for (std::size_t a = 1; a < d; ++a) fstride[a] = fstride[a - 1] * static_cast<std::uint64_t>(h.shape[a - 1]);
    for (std::uint64_t i = 0; i < c.size(); ++i) {
      std::uint64_t f = 0;
      for (std::size_t a = 0; a < d; ++a) f += static_cast<std::uint64_t>(idx[a]) * fstride[a];
      c[i] = out[f];
      for (std::size_t a = d; a-- > 0;) {  // C order: the last index fastest
        if (++idx[a] < h.shape[a]) break;
        idx[a] = 0;
      }
    }
    out.swap(c);
  }
  return out;
}

}  // namespace

template <class T>
DType dtype_of() noexcept {
  if constexpr (std::is_same_v<T, bool>) return DType::kBool;
  if constexpr (std::is_same_v<T, std::int8_t>) return DType::kInt8;
  if constexpr (std::is_same_v<T, std::uint8_t>) return DType::kUInt8;
  if constexpr (std::is_same_v<T, std::int16_t>) return DType::kInt16;
  if constexpr (std::is_same_v<T, std::uint16_t>) return DType::kUInt16;
  if constexpr (std::is_same_v<T, std::int32_t>) return DType::kInt32;
  if constexpr (std::is_same_v<T, std::uint32_t>) return DType::kUInt32;
  if constexpr (std::is_same_v<T, std::int64_t>) return DType::kInt64;
  if constexpr (std::is_same_v<T, std::uint64_t>) return DType::kUInt64;
  if constexpr (std::is_same_v<T, float>) return DType::kFloat32;
  if constexpr (std::is_same_v<T, double>) return DType::kFloat64;
  if constexpr (std::is_same_v<T, std::complex<float>>) return DType::kComplex64;
  if constexpr (std::is_same_v<T, std::complex<double>>) return DType::kComplex128;
}

template <class T>
NpyArray<T> read_npy(const std::string& path, const NpyReadOptions& options) {
  const NpyHeader h = read_npy_header(path);
  const InputFile f(path, ".npy file");
  require(f.size() == h.data_offset + h.count * dtype_size(h.dtype), ErrorCode::kInvalidArgument,
          ".npy file '" + path + "' changed while it was read");
  std::vector<std::uint8_t> raw(static_cast<std::size_t>(h.count * dtype_size(h.dtype)));
  f.read(h.data_offset, raw.data(), raw.size());
  NpyArray<T> a;
  a.shape = h.shape;
  a.stored = h.dtype;
  a.data = decode<T>(raw.data(), h, path, options);
  return a;
}

template <class T>
NpyArray<T> parse_npy(std::span<const std::uint8_t> bytes, const std::string& name, const NpyReadOptions& options) {
  const NpyHeader h = parse_npy_header(bytes, bytes.size(), name);
  NpyArray<T> a;
  a.shape = h.shape;
  a.stored = h.dtype;
  a.data = decode<T>(bytes.data() + h.data_offset, h, name, options);
  return a;
}

template <class T>
void write_npy(const std::string& path, std::span<const std::int64_t> shape, std::span<const T> data,
               const NpyWriteOptions& options) {
  const std::uint64_t bytes = checked_bytes(shape, sizeof(T), "write_npy '" + path + "'");
  require(bytes / sizeof(T) == data.size(), ErrorCode::kShapeMismatch,
          "write_npy '" + path + "': shape " + shape_text(shape) + " has " + std::to_string(bytes / sizeof(T)) +
              " elements, given " + std::to_string(data.size()));
  std::string dict = std::string("{'descr': '") + (sizeof(T) == 1 ? "|" : "<") + dtype_name(dtype_of<T>()) +
                     "', 'fortran_order': " + (options.fortran_order ? "True" : "False") +
                     ", 'shape': " + shape_text(shape) + ", }";
  int major = 1;
  std::size_t total = 10 + dict.size() + 1;
  if (total > 65535 + 10) {
    major = 2;
    total += 2;
  }
  const std::size_t padded = (total + 63) / 64 * 64;
  dict.append(padded - total, ' ');
  dict += '\n';
  const std::uint64_t len = dict.size();
  std::vector<std::uint8_t> head(kMagic, kMagic + 6);
  head.push_back(static_cast<std::uint8_t>(major));
  head.push_back(0);
  const int len_bytes = major == 1 ? 2 : 4;
  for (int b = 0; b < len_bytes; ++b) head.push_back(static_cast<std::uint8_t>(len >> (8 * b)));
  AtomicFile f(path);
  f.write(head);
  f.write(dict.data(), dict.size());
  f.write(data.data(), data.size_bytes());
  f.commit();
}

#define FIELDFT_NPY_INSTANTIATE(T)                                                                                    \
  template DType dtype_of<T>() noexcept;                                                                               \
  template NpyArray<T> read_npy<T>(const std::string&, const NpyReadOptions&);                                         \
  template NpyArray<T> parse_npy<T>(std::span<const std::uint8_t>, const std::string&, const NpyReadOptions&);        \
  template void write_npy<T>(const std::string&, std::span<const std::int64_t>, std::span<const T>,                    \
                             const NpyWriteOptions&);
FIELDFT_NPY_INSTANTIATE(std::int8_t)
FIELDFT_NPY_INSTANTIATE(std::uint8_t)
FIELDFT_NPY_INSTANTIATE(std::int16_t)
FIELDFT_NPY_INSTANTIATE(std::uint16_t)
FIELDFT_NPY_INSTANTIATE(std::int32_t)
FIELDFT_NPY_INSTANTIATE(std::uint32_t)
FIELDFT_NPY_INSTANTIATE(std::int64_t)
FIELDFT_NPY_INSTANTIATE(std::uint64_t)
FIELDFT_NPY_INSTANTIATE(float)
FIELDFT_NPY_INSTANTIATE(double)
FIELDFT_NPY_INSTANTIATE(std::complex<float>)
FIELDFT_NPY_INSTANTIATE(std::complex<double>)
#undef FIELDFT_NPY_INSTANTIATE

}  // namespace fieldft::io
