// fieldft::io::hdf5 — see hdf5_util.hpp.
#include "io/hdf5_util.hpp"

#include <algorithm>

namespace fieldft::io::hdf5 {

Id transfer_list(std::uint64_t bytes) {
  Id dxpl(H5Pcreate(H5P_DATASET_XFER), H5Pclose);
  const std::uint64_t size = std::clamp<std::uint64_t>(bytes, 4096, std::uint64_t{1} << 20);
  if (dxpl.ok()) H5Pset_buffer(dxpl.get(), size, nullptr, nullptr);
  return dxpl;
}

Id VlenArena::transfer_list(std::uint64_t bytes) {
  Id dxpl = hdf5::transfer_list(bytes);
  if (dxpl.ok()) H5Pset_vlen_mem_manager(dxpl.get(), &alloc, this, &release, this);
  return dxpl;
}

[[noreturn]] void fail(ErrorCode code, const std::string& path, const std::string& what) {
  throw Error(code, "ISMRMRD file '" + path + "': " + what);
}

File open_file(const std::string& path) {
  File f{inspect(path), {}};
  Id fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
  if (fapl.ok()) H5Pset_fclose_degree(fapl.get(), H5F_CLOSE_STRONG);
  f.id = Id(H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl.ok() ? fapl.get() : H5P_DEFAULT), H5Fclose);
  if (!f.id.ok()) fail(ErrorCode::kInvalidArgument, path, "libhdf5 cannot open it (truncated or corrupt HDF5 file?)");
  return f;
}

Id open_group(const File& file, const std::string& group) {
  const std::string& path = file.facts.path;
  // Every group on the path is checked before libhdf5 looks a name up in it (the root group in
  // inspect()): hdf5_guard.hpp, check_group.
  for (std::size_t end = group.find('/');; end = group.find('/', end + 1)) {
    const std::string prefix = group.substr(0, end);
    if (!prefix.empty() && prefix.back() != '/') {
      if (H5Lexists(file.id.get(), prefix.c_str(), H5P_DEFAULT) <= 0)
        fail(ErrorCode::kInvalidArgument, path,
             "no group '/" + group + "': not an ISMRMRD file (expected '/" + group + "/xml' and '/" + group + "/data')");
      check_group(file.id.get(), prefix.c_str(), file.facts);
    }
    if (end == std::string::npos) break;
  }
  Id g(H5Gopen2(file.id.get(), group.c_str(), H5P_DEFAULT), H5Gclose);
  if (!g.ok()) fail(ErrorCode::kInvalidArgument, path, "'/" + group + "' is not a readable HDF5 group");
  return g;
}

bool has_link(hid_t group, const char* name) { return H5Lexists(group, name, H5P_DEFAULT) > 0; }

std::vector<hsize_t> extent(hid_t dset, const std::string& path, const std::string& what) {
  Id space(H5Dget_space(dset), H5Sclose);
  if (!space.ok()) fail(ErrorCode::kInvalidArgument, path, what + ": unreadable dataspace");
  const H5S_class_t cls = H5Sget_simple_extent_type(space.get());
  if (cls == H5S_SCALAR) return {};
  const int rank = H5Sget_simple_extent_ndims(space.get());
  if (cls != H5S_SIMPLE || rank < 0 || rank > 32)
    fail(ErrorCode::kInvalidArgument, path, what + ": unexpected dataspace");
  std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
  if (rank > 0 && H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr) < 0)
    fail(ErrorCode::kInvalidArgument, path, what + ": unreadable dataspace");
  return dims;
}

std::uint64_t count(const std::vector<hsize_t>& dims, std::uint64_t limit, const std::string& path,
                    const std::string& what) {
  std::uint64_t n = 1;
  for (hsize_t d : dims) {
    if (d != 0 && n > limit / d)
      fail(ErrorCode::kTooLarge, path, what + " declares more elements than options.max_bytes allows");
    n *= d;
  }
  return n;
}

Id member(hid_t t, const char* name, H5T_class_t cls, const std::string& path, const std::string& where) {
  const int i = H5Tget_member_index(t, name);
  if (i < 0) fail(ErrorCode::kInvalidArgument, path, where + " has no member '" + name + "'");
  Id m(H5Tget_member_type(t, static_cast<unsigned>(i)), H5Tclose);
  if (!m.ok() || H5Tget_class(m.get()) != cls)
    fail(ErrorCode::kInvalidArgument, path, where + " member '" + name + "' has an unexpected type");
  return m;
}

}  // namespace fieldft::io::hdf5
