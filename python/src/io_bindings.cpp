// fieldft._core's file formats (src/io: .npy, BART .cfl/.hdr, NIfTI, previews) for
// python/fieldft/io.py. As elsewhere in python/src, the Python layer checks every array (dtype,
// contiguity, host memory) and passes a raw pointer, an element count and numpy's dtype name;
// shapes cross in the C++ order (x first) except the .npy shapes, which are numpy's own.
// Results come back as 1-D numpy arrays that own the C++ vectors; io.py reshapes them.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/array.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <complex>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "fieldft/error.hpp"
#include "gil.hpp"
#include "io/cfl.hpp"
#include "io/nifti.hpp"
#include "io/npy.hpp"
#include "io/preview.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace fieldft::python {
namespace {

template <class V>
nb::object to_numpy(std::vector<V>&& v) {
  auto* owned = new std::vector<V>(std::move(v));
  nb::capsule owner(owned, [](void* p) noexcept { delete static_cast<std::vector<V>*>(p); });
  return nb::cast(nb::ndarray<nb::numpy, V, nb::ndim<1>>(owned->data(), {owned->size()}, owner));
}

template <class T>
std::span<const T> view(std::uintptr_t data, std::int64_t n) {
  require(n >= 0, ErrorCode::kInvalidArgument, "negative array length");
  return {reinterpret_cast<const T*>(data), static_cast<std::size_t>(n)};
}

// Calls f.template operator()<T>() for numpy's dtype name (io.py passes np.dtype(...).name).
template <class F>
decltype(auto) dispatch(const std::string& dtype, F&& f) {
  if (dtype == "int8") return f.template operator()<std::int8_t>();
  if (dtype == "uint8") return f.template operator()<std::uint8_t>();
  if (dtype == "int16") return f.template operator()<std::int16_t>();
  if (dtype == "uint16") return f.template operator()<std::uint16_t>();
  if (dtype == "int32") return f.template operator()<std::int32_t>();
  if (dtype == "uint32") return f.template operator()<std::uint32_t>();
  if (dtype == "int64") return f.template operator()<std::int64_t>();
  if (dtype == "uint64") return f.template operator()<std::uint64_t>();
  if (dtype == "float32") return f.template operator()<float>();
  if (dtype == "float64") return f.template operator()<double>();
  if (dtype == "complex64") return f.template operator()<std::complex<float>>();
  if (dtype == "complex128") return f.template operator()<std::complex<double>>();
  throw Error(ErrorCode::kInvalidArgument, "unsupported dtype '" + dtype +
                                               "' (expected int8-64, uint8-64, float32/64 or complex64/128)");
}

const char* numpy_name(io::DType t) {
  switch (t) {
    case io::DType::kBool: return "bool";
    case io::DType::kInt8: return "int8";
    case io::DType::kUInt8: return "uint8";
    case io::DType::kInt16: return "int16";
    case io::DType::kUInt16: return "uint16";
    case io::DType::kInt32: return "int32";
    case io::DType::kUInt32: return "uint32";
    case io::DType::kInt64: return "int64";
    case io::DType::kUInt64: return "uint64";
    case io::DType::kFloat32: return "float32";
    case io::DType::kFloat64: return "float64";
    case io::DType::kComplex64: return "complex64";
    case io::DType::kComplex128: return "complex128";
  }
  return "?";
}

io::Conversion conversion(const std::string& s) {
  if (s == "exact") return io::Conversion::kExact;
  if (s == "lossless") return io::Conversion::kLossless;
  if (s == "any") return io::Conversion::kAny;
  throw Error(ErrorCode::kInvalidArgument, "conversion must be 'exact', 'lossless' or 'any', got '" + s + "'");
}

io::NiftiKind nifti_kind(const std::string& s) {
  if (s == "magnitude") return io::NiftiKind::kMagnitude;
  if (s == "phase") return io::NiftiKind::kPhase;
  if (s == "complex") return io::NiftiKind::kComplex;
  if (s == "real") return io::NiftiKind::kReal;
  throw Error(ErrorCode::kInvalidArgument, "kind must be 'magnitude', 'phase', 'complex' or 'real', got '" + s + "'");
}

}  // namespace

void bind_io(nb::module_& m) {
  // (stored dtype name, numpy shape, fortran_order, version)
  m.def("io_npy_header", [](const std::string& path) {
    io::NpyHeader h;
    without_gil([&] { h = io::read_npy_header(path); });
    return nb::make_tuple(std::string(numpy_name(h.dtype)), h.shape, h.fortran_order, h.major);
  }, "path"_a);
  // dtype "": the stored type (bool comes back as uint8). Returns (flat C-order data, shape).
  m.def("io_read_npy", [](const std::string& path, std::string dtype, const std::string& conv, bool allow_nonfinite) {
    if (dtype.empty()) {
      without_gil([&] { dtype = numpy_name(io::read_npy_header(path).dtype); });
      if (dtype == "bool") dtype = "uint8";
    }
    const io::NpyReadOptions o{.conversion = conversion(conv), .allow_nonfinite = allow_nonfinite};
    return dispatch(dtype, [&]<class T>() {
      io::NpyArray<T> a;
      without_gil([&] { a = io::read_npy<T>(path, o); });
      return nb::make_tuple(to_numpy(std::move(a.data)), a.shape);
    });
  }, "path"_a, "dtype"_a, "conversion"_a, "allow_nonfinite"_a);
  m.def("io_write_npy", [](const std::string& path, std::uintptr_t data, std::int64_t n, const std::string& dtype,
                           const std::vector<std::int64_t>& shape, bool fortran_order) {
    dispatch(dtype, [&]<class T>() {
      without_gil([&] { io::write_npy<T>(path, shape, view<T>(data, n), {.fortran_order = fortran_order}); });
    });
  }, "path"_a, "data"_a, "n"_a, "dtype"_a, "shape"_a, "fortran_order"_a);

  // BART: (dims as in the header, flat data in BART's order, first index fastest).
  m.def("io_read_cfl", [](const std::string& path, bool allow_nonfinite) {
    io::CflArray a;
    without_gil([&] { a = io::read_cfl(path, {.allow_nonfinite = allow_nonfinite}); });
    return nb::make_tuple(a.dims, to_numpy(std::move(a.data)));
  }, "path"_a, "allow_nonfinite"_a);
  m.def("io_write_cfl", [](const std::string& path, const std::vector<std::int64_t>& dims, std::uintptr_t data,
                           std::int64_t n) {
    without_gil([&] { io::write_cfl(path, dims, view<std::complex<float>>(data, n)); });
  }, "path"_a, "dims"_a, "data"_a, "n"_a);

  m.def("io_nifti_available", &io::nifti_available);
  // shape in the C++ order {Nx, Ny[, Nz[, Nt]]}; fov_mm (x, y, z).
  m.def("io_write_nifti", [](const std::string& path, const std::vector<std::int64_t>& shape, std::uintptr_t data,
                             std::int64_t n, const std::string& dtype, const std::string& kind,
                             const std::array<double, 3>& fov_mm, double frame_seconds, const std::string& description) {
    const io::NiftiOptions o{.kind = nifti_kind(kind), .fov_mm = fov_mm, .frame_seconds = frame_seconds,
                             .description = description};
    without_gil([&] {
      if (dtype == "complex64") io::write_nifti<float>(path, shape, view<std::complex<float>>(data, n), o);
      else if (dtype == "complex128") io::write_nifti<double>(path, shape, view<std::complex<double>>(data, n), o);
      else if (dtype == "float32") io::write_nifti<float>(path, shape, view<float>(data, n), o);
      else if (dtype == "float64") io::write_nifti<double>(path, shape, view<double>(data, n), o);
      else throw Error(ErrorCode::kInvalidArgument, "write_nifti: dtype " + dtype + " (expected float32/64, complex64/128)");
    });
  }, "path"_a, "shape"_a, "data"_a, "n"_a, "dtype"_a, "kind"_a, "fov_mm"_a, "frame_seconds"_a, "description"_a);
  m.def("io_write_preview", [](const std::string& path, const std::vector<std::int64_t>& shape, std::uintptr_t data,
                               std::int64_t n, const std::string& dtype, double percentile, int columns) {
    const io::PreviewOptions o{.percentile = percentile, .columns = columns};
    without_gil([&] {
      if (dtype == "complex64") io::write_preview<float>(path, shape, view<std::complex<float>>(data, n), o);
      else if (dtype == "complex128") io::write_preview<double>(path, shape, view<std::complex<double>>(data, n), o);
      else if (dtype == "float32") io::write_preview<float>(path, shape, view<float>(data, n), o);
      else if (dtype == "float64") io::write_preview<double>(path, shape, view<double>(data, n), o);
      else throw Error(ErrorCode::kInvalidArgument, "write_preview: dtype " + dtype + " (expected float32/64, complex64/128)");
    });
  }, "path"_a, "shape"_a, "data"_a, "n"_a, "dtype"_a, "percentile"_a, "columns"_a);
}

}  // namespace fieldft::python
