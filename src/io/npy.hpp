// fieldft::io — NumPy .npy files (format versions 1.0, 2.0 and 3.0; numpy's NEP 1 / format.py).
//
// A .npy file is the magic "\x93NUMPY", a version (major, minor), the header length (uint16
// little-endian in 1.0, uint32 in 2.0 and 3.0), a Python dict literal
//   {'descr': '<f4', 'fortran_order': False, 'shape': (Ny, Nx), }
// padded with spaces and ended by '\n' so that the data start on a 64-byte boundary, then the
// raw elements: C order (last axis fastest) or, with fortran_order, first axis fastest.
//
// Shapes here are numpy's (slowest axis first in C order). fieldft's C++ arrays are x fastest
// with shapes {Nx, Ny[, Nz][, C]}: the same memory is the numpy array of the reversed shape
// (..., [Nz,] Ny, Nx) in C order, which is what Python's fieldft and numpy use. So a C++ image
// of shape s is written as write_npy(path, reversed(s), data), and read back with
// read_npy(path).shape reversed.
//
// Element types: bool, int8..int64, uint8..uint64, float32, float64, complex64, complex128
// (descr '?'/'b1', 'i1'..'i8', 'u1'..'u8', 'f4', 'f8', 'c8', 'c16'); little- or big-endian on
// reading ('<', '>', '|', '='), little-endian on writing. bool is a stored type only: read it
// as any integer or floating type (T = bool is not offered; std::vector<bool> holds no bools). Structured and object dtypes are
// refused (kNotImplemented).
//
// Reading checks everything before it allocates: the header must parse, the shape's element
// count times the element size must not overflow and must equal the bytes after the header
// (a lying header cannot make the reader allocate more than the file holds), and the values
// must be finite unless allowed. Every failure is a fieldft::Error naming the file and what was
// expected: kInvalidArgument (unreadable, truncated, corrupt, inconsistent), kNotImplemented
// (a dtype this reader does not know), kNonFinite (NaN or Inf), kTooLarge (sizes that overflow).
// Writers are atomic (io/atomic_file.hpp).
#pragma once

#include <complex>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace fieldft::io {

enum class DType : int {
  kBool,
  kInt8,
  kUInt8,
  kInt16,
  kUInt16,
  kInt32,
  kUInt32,
  kInt64,
  kUInt64,
  kFloat32,
  kFloat64,
  kComplex64,
  kComplex128,
};

// numpy's name without byte order, e.g. "f4", "c16", "b1".
const char* dtype_name(DType t) noexcept;
std::size_t dtype_size(DType t) noexcept;

// The DType of a C++ element type (std::int8_t ... std::uint64_t, float, double,
// std::complex<float>, std::complex<double>).
template <class T>
DType dtype_of() noexcept;

struct NpyHeader {
  int major = 1, minor = 0;      // format version
  DType dtype = DType::kFloat64;
  bool big_endian = false;
  bool fortran_order = false;
  std::vector<std::int64_t> shape;  // numpy's order
  std::uint64_t data_offset = 0;    // bytes before the first element
  std::uint64_t count = 0;          // product of shape
};

// How read_npy<T> may convert the stored type to T.
enum class Conversion {
  kExact,     // the file must hold T
  kLossless,  // T must represent every value of the stored type (int16 -> float, float -> double,
              // float -> complex<float>, uint8 -> int32 ...); otherwise an error names both types
  kAny,       // explicit: also narrowing (double -> float, int64 -> int32, float -> int); a value
              // that does not survive (out of range, a fraction to an integer, an imaginary part
              // to a real type) is an error naming its index, never a silent change
};

struct NpyReadOptions {
  Conversion conversion = Conversion::kLossless;
  bool allow_nonfinite = false;  // NaN / Inf in floating-point data: kNonFinite unless true
};

template <class T>
struct NpyArray {
  std::vector<std::int64_t> shape;  // numpy's order
  std::vector<T> data;              // always C order (a Fortran-ordered file is transposed)
  DType stored = DType::kFloat64;   // the file's element type
};

// Parses the header at the start of `bytes` (at least the whole header); file_size is the
// file's full size, against which the data size is checked; `name` appears in messages.
NpyHeader parse_npy_header(std::span<const std::uint8_t> bytes, std::uint64_t file_size, const std::string& name);

// The header of a file (reads only the header).
NpyHeader read_npy_header(const std::string& path);

template <class T>
NpyArray<T> read_npy(const std::string& path, const NpyReadOptions& options = {});

// The same from a whole file's bytes in memory (the fuzz target's entry point).
template <class T>
NpyArray<T> parse_npy(std::span<const std::uint8_t> bytes, const std::string& name, const NpyReadOptions& options = {});

struct NpyWriteOptions {
  bool fortran_order = false;  // data are in Fortran order (first axis fastest)
};

// Writes version 1.0 (2.0 when the header needs more than 65535 bytes). data.size() must be the
// product of shape (an empty shape is a scalar: one element).
template <class T>
void write_npy(const std::string& path, std::span<const std::int64_t> shape, std::span<const T> data,
               const NpyWriteOptions& options = {});

}  // namespace fieldft::io
