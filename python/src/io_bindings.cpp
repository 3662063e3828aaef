// fieldft._core's file formats (src/io: .npy, BART .cfl/.hdr, NIfTI, previews, ISMRMRD) for
// python/fieldft/io.py. As elsewhere in python/src, the Python layer checks every array (dtype,
// contiguity, host memory) and passes a raw pointer, an element count and numpy's dtype name;
// shapes cross in the C++ order (x first) except the .npy shapes, which are numpy's own.
// Results come back as 1-D numpy arrays that own the C++ vectors; io.py reshapes them.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/array.h>
#include <nanobind/stl/optional.h>
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
#include "io/ismrmrd.hpp"
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

// A 1-D host array of V from Python (io.py passes contiguous numpy arrays of the right dtype).
template <class V>
using HostVector = nb::ndarray<const V, nb::ndim<1>, nb::c_contig, nb::device::cpu>;

template <class V>
std::vector<V> to_vector(const std::optional<HostVector<V>>& a) {
  if (!a) return {};
  return std::vector<V>(a->data(), a->data() + a->shape(0));
}

template <class E>
E pick(const std::string& option, const std::string& s, std::initializer_list<std::pair<const char*, E>> names) {
  std::string all;
  for (const auto& [n, e] : names) {
    if (s == n) return e;
    all += (all.empty() ? "'" : ", '") + std::string(n) + "'";
  }
  throw Error(ErrorCode::kInvalidArgument, option + " must be one of " + all + ", got '" + s + "'");
}

io::MapOrder map_order(const std::string& s) {
  return pick<io::MapOrder>("map_order", s, {{"x-fastest", io::MapOrder::kXFastest}, {"y-fastest", io::MapOrder::kYFastest}});
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

  // ISMRMRD (src/io/ismrmrd.hpp). io.py turns the result into fieldft's layouts.
  m.def("io_ismrmrd_available", &io::ismrmrd_available);
  // Returns (dim, grid {Nx, Ny, Nz}, fov_mm (x, y, z), coils, trajectory, readouts, kx, ky, kz,
  // times, shots, num_shots, data (M x C, coil slowest), coil_maps, field_map, phase_maps, truth);
  // data and coil_maps complex64 (RawData's single precision; io.py widens them).
  m.def("io_read_ismrmrd", [](const std::string& path, const std::string& group, int encoding, const std::string& space,
                              const std::string& units, const std::string& time_column, double time_offset_s,
                              const std::string& shot_counter, const std::array<int, 5>& select,
                              const std::string& order, bool read_maps, const std::string& coil_maps_path,
                              const std::string& field_map_path, const std::string& phase_maps_path,
                              double nyquist_tolerance, std::uint64_t max_bytes) {
    io::IsmrmrdReadOptions o;
    o.group = group;
    o.encoding = encoding;
    o.space = pick<io::EncodingSpaceChoice>("space", space, {{"encoded", io::EncodingSpaceChoice::kEncoded},
                                                             {"recon", io::EncodingSpaceChoice::kRecon}});
    o.units = pick<io::TrajectoryUnits>("units", units, {{"auto", io::TrajectoryUnits::kAuto},
                                                         {"cycles/fov", io::TrajectoryUnits::kCyclesPerFov},
                                                         {"normalized", io::TrajectoryUnits::kNormalized},
                                                         {"1/m", io::TrajectoryUnits::kPerMeter},
                                                         {"rad/m", io::TrajectoryUnits::kRadPerMeter}});
    o.time_column = pick<io::TimeColumn>("time_column", time_column, {{"auto", io::TimeColumn::kAuto},
                                                                      {"none", io::TimeColumn::kNone},
                                                                      {"last", io::TimeColumn::kLast}});
    o.time_offset_s = time_offset_s;
    o.shot_counter = pick<io::Counter>(
        "shot_counter", shot_counter,
        {{"kspace_encode_step_1", io::Counter::kKspaceEncodeStep1}, {"kspace_encode_step_2", io::Counter::kKspaceEncodeStep2},
         {"average", io::Counter::kAverage}, {"slice", io::Counter::kSlice}, {"contrast", io::Counter::kContrast},
         {"phase", io::Counter::kPhase}, {"repetition", io::Counter::kRepetition}, {"set", io::Counter::kSet},
         {"segment", io::Counter::kSegment}, {"none", io::Counter::kNone}});
    o.select_slice = select[0];
    o.select_contrast = select[1];
    o.select_phase = select[2];
    o.select_repetition = select[3];
    o.select_set = select[4];
    o.map_order = map_order(order);
    o.read_maps = read_maps;
    o.coil_maps_path = coil_maps_path;
    o.field_map_path = field_map_path;
    o.phase_maps_path = phase_maps_path;
    o.nyquist_tolerance = nyquist_tolerance;
    o.max_bytes = max_bytes;
    io::RawData d;
    without_gil([&] { d = io::read_ismrmrd(path, o); });
    return nb::make_tuple(d.dim, d.grid, d.fov_mm, d.coils, d.trajectory, to_numpy(std::move(d.readouts)),
                          to_numpy(std::move(d.kx)), to_numpy(std::move(d.ky)), to_numpy(std::move(d.kz)),
                          to_numpy(std::move(d.times)), to_numpy(std::move(d.shots)), d.num_shots,
                          to_numpy(std::move(d.data)), to_numpy(std::move(d.coil_maps)), to_numpy(std::move(d.field_map)),
                          to_numpy(std::move(d.phase_maps)), to_numpy(std::move(d.truth)));
  }, "path"_a, "group"_a, "encoding"_a, "space"_a, "units"_a, "time_column"_a, "time_offset_s"_a, "shot_counter"_a,
     "select"_a, "map_order"_a, "read_maps"_a, "coil_maps_path"_a, "field_map_path"_a, "phase_maps_path"_a,
     "nyquist_tolerance"_a, "max_bytes"_a);
  // The arguments of io_read_ismrmrd's result (None for absent arrays); the writer validates them
  // (io::validate) and refuses inconsistent ones.
  m.def(
      "io_write_ismrmrd",
      [](const std::string& path, int dim, const std::array<std::int64_t, 3>& grid, const std::array<double, 3>& fov_mm,
         std::int64_t coils, const std::string& trajectory, const HostVector<std::int64_t>& readouts,
         const HostVector<double>& kx, const HostVector<double>& ky, const std::optional<HostVector<double>>& kz,
         const std::optional<HostVector<double>>& times, const std::optional<HostVector<std::int32_t>>& shots,
         std::int64_t num_shots, const HostVector<std::complex<float>>& data,
         const std::optional<HostVector<std::complex<float>>>& coil_maps,
         const std::optional<HostVector<double>>& field_map, const std::optional<HostVector<double>>& phase_maps,
         const std::optional<HostVector<std::complex<double>>>& truth, const std::string& order) {
        io::RawData d;
        d.dim = dim;
        d.grid = grid;
        d.fov_mm = fov_mm;
        d.coils = coils;
        d.trajectory = trajectory;
        d.readouts = to_vector<std::int64_t>(readouts);
        d.kx = to_vector<double>(kx);
        d.ky = to_vector<double>(ky);
        d.kz = to_vector<double>(kz);
        d.times = to_vector<double>(times);
        d.shots = to_vector<std::int32_t>(shots);
        if (d.shots.empty()) d.shots.assign(d.kx.size(), 0);
        d.num_shots = num_shots;
        d.data = to_vector<std::complex<float>>(data);  // single precision, as RawData holds them
        d.coil_maps = to_vector<std::complex<float>>(coil_maps);
        d.field_map = to_vector<double>(field_map);
        d.phase_maps = to_vector<double>(phase_maps);
        d.truth = to_vector<std::complex<double>>(truth);
        const io::IsmrmrdWriteOptions o{.map_order = map_order(order)};
        without_gil([&] { io::write_ismrmrd(path, d, o); });
      },
      "path"_a, "dim"_a, "grid"_a, "fov_mm"_a, "coils"_a, "trajectory"_a, "readouts"_a, "kx"_a, "ky"_a, "kz"_a.none(),
      "times"_a.none(), "shots"_a.none(), "num_shots"_a, "data"_a, "coil_maps"_a.none(), "field_map"_a.none(),
      "phase_maps"_a.none(), "truth"_a.none(), "map_order"_a);

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
