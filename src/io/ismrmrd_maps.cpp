// fieldft::io ISMRMRD NDArrays: the coil, field and phase maps and the truth image (see
// src/io/ismrmrd.hpp for shapes, types and voxel orders).
#include "io/ismrmrd_maps.hpp"

#include <cmath>

namespace fieldft::io::detail {

using namespace hdf5;

namespace {
std::string dims_text(const std::vector<std::size_t>& d) {
  std::string s = "{";
  for (std::size_t i = 0; i < d.size(); ++i) s += (i ? ", " : "") + std::to_string(d[i]);
  return s + "}";
}
// The map's total element count for d's grid and K maps (K = 0: one map).
std::uint64_t map_elements(const RawData& d, std::int64_t k) {
  return static_cast<std::uint64_t>(d.num_voxels()) * static_cast<std::uint64_t>(std::max<std::int64_t>(k, 1));
}

[[noreturn]] void shape_error(const std::vector<std::size_t>& dims, const RawData& d, std::int64_t k,
                              const std::string& path, const std::string& what) {
  // Appended piecewise: GCC 12 misreads ", " + string as overlapping copies (-Wrestrict).
  std::string expected = "{";
  expected += std::to_string(d.grid[0]);
  expected += ", ";
  expected += std::to_string(d.grid[1]);
  if (d.grid[2] > 1) expected.append(", ").append(std::to_string(d.grid[2]));
  if (k > 0) expected.append(", ").append(std::to_string(k));
  expected.append("} or the flat {").append(std::to_string(map_elements(d, k))).append("}");
  fail(ErrorCode::kShapeMismatch, path, what + " has dims " + dims_text(dims) + ", expected " + expected);
}

}  // namespace

// Array 0 of the NDArray variable `name` in `group`; nullopt when absent.
std::optional<NdArray> read_ndarray(hid_t group, const FileFacts& facts, const std::string& name,
                                    std::uint64_t max_bytes, const RawData& d, std::int64_t k) {
  const std::string& path = facts.path;
  if (!has_link(group, name.c_str())) return std::nullopt;
  const std::string what = "NDArray '" + name + "'";
  check_object_header(group, name.c_str(), facts, what);
  Id dset(H5Dopen2(group, name.c_str(), H5P_DEFAULT), H5Dclose);
  if (!dset.ok()) fail(ErrorCode::kInvalidArgument, path, what + " is not a readable dataset");
  const auto dims = extent(dset.get(), path, what);
  if (dims.size() < 2 || dims.size() > 8)
    fail(ErrorCode::kInvalidArgument, path, what + " has " + std::to_string(dims.size()) +
                                                " HDF5 dimensions, expected 2 to 8 (arrays x ISMRMRD dims)");
  if (dims[0] != 1)
    fail(ErrorCode::kShapeMismatch, path, what + " holds " + std::to_string(dims[0]) + " arrays, expected 1");
  const std::uint64_t n = count(dims, max_bytes / 16, path, what);
  Id ftype(H5Dget_type(dset.get()), H5Tclose);
  const H5T_class_t cls = ftype.ok() ? H5Tget_class(ftype.get()) : H5T_NO_CLASS;
  // The file's element size: libhdf5 copies that many bytes per element out of the storage.
  check_storage_size(dset.get(), path, what, n, ftype.ok() ? H5Tget_size(ftype.get()) : 0);
  NdArray a;
  for (std::size_t i = dims.size(); i-- > 1;) a.dims.push_back(dims[i]);
  // A map of the wrong size is refused before its values are read (the shapes are checked in
  // map_values; every accepted shape has this many elements).
  if (n != map_elements(d, k)) shape_error(a.dims, d, k, path, what);
  a.values.resize(n);
  if (cls == H5T_FLOAT || cls == H5T_INTEGER) {
    std::vector<double> re(n);
    if (n && H5Dread(dset.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, transfer_list(8 * n).get(), re.data()) < 0)
      fail(ErrorCode::kInvalidArgument, path, "cannot read " + what);
    for (std::uint64_t i = 0; i < n; ++i) a.values[i] = re[i];
  } else if (cls == H5T_COMPOUND) {
    hdf5::check_type_layout(ftype.get(), path, what);
    member(ftype.get(), "real", H5T_FLOAT, path, what);
    member(ftype.get(), "imag", H5T_FLOAT, path, what);
    Id mtype(H5Tcreate(H5T_COMPOUND, sizeof(std::complex<double>)), H5Tclose);
    H5Tinsert(mtype.get(), "real", 0, H5T_NATIVE_DOUBLE);
    H5Tinsert(mtype.get(), "imag", sizeof(double), H5T_NATIVE_DOUBLE);
    if (n && H5Dread(dset.get(), mtype.get(), H5S_ALL, H5S_ALL, transfer_list(16 * n).get(), a.values.data()) < 0)
      fail(ErrorCode::kInvalidArgument, path, "cannot read " + what);
    a.complex = true;
  } else {
    fail(ErrorCode::kInvalidArgument, path, what + " is neither real nor complex {real, imag} numbers");
  }
  return a;
}


// Checks the shape of a map array against the grid and K maps (K = 0: one map) and returns its
// values in fieldft's order (x fastest), converting from PowerGrid's y-fastest order when asked.
std::vector<std::complex<double>> map_values(NdArray a, const RawData& d, std::int64_t k, MapOrder order,
                                             const std::string& path, const std::string& name, bool want_complex) {
  const std::string what = "NDArray '" + name + "'";
  if (a.complex && !want_complex)
    fail(ErrorCode::kInvalidArgument, path, what + " is complex, expected real values");
  std::vector<std::size_t> dims = a.dims;
  while (dims.size() > 1 && dims.back() == 1) dims.pop_back();
  const auto nx = static_cast<std::size_t>(d.grid[0]), ny = static_cast<std::size_t>(d.grid[1]),
             nz = static_cast<std::size_t>(d.grid[2]);
  const std::size_t kk = static_cast<std::size_t>(std::max<std::int64_t>(k, 1));
  const std::size_t total = nx * ny * nz * kk;
  std::vector<std::vector<std::size_t>> accepted = {{total}, {nx, ny, nz, kk}};
  if (nz == 1) accepted.push_back({nx, ny, kk});  // a 2D map without its z axis
  bool ok = false;
  for (auto s : accepted) {
    while (s.size() > 1 && s.back() == 1) s.pop_back();
    ok = ok || s == dims;
  }
  if (!ok) shape_error(a.dims, d, k, path, what);
  for (std::size_t i = 0; i < a.values.size(); ++i)
    if (!std::isfinite(a.values[i].real()) || !std::isfinite(a.values[i].imag()))
      fail(ErrorCode::kNonFinite, path, what + " value " + std::to_string(i) + " is not finite");
  if (order == MapOrder::kXFastest) return std::move(a.values);
  std::vector<std::complex<double>> out(a.values.size());
  for (std::size_t m = 0; m < kk * nz; ++m)
    for (std::size_t y = 0; y < ny; ++y)
      for (std::size_t x = 0; x < nx; ++x) out[x + nx * (y + ny * m)] = a.values[y + ny * (x + nx * m)];
  return out;
}

std::vector<std::complex<float>> single_precision(const std::vector<std::complex<double>>& v, const std::string& path,
                                                  const std::string& name) {
  std::vector<std::complex<float>> r(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    r[i] = std::complex<float>(v[i]);
    if (!std::isfinite(r[i].real()) || !std::isfinite(r[i].imag()))
      fail(ErrorCode::kNonFinite, path,
           name + "[" + std::to_string(i) +
               "] is beyond single precision (|value| > 3.4e38), which the coil maps are held in");
  }
  return r;
}

std::vector<double> real_part(const std::vector<std::complex<double>>& v) {
  std::vector<double> r(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) r[i] = v[i].real();
  return r;
}

}  // namespace fieldft::io::detail
