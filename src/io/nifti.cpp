#include "io/nifti.hpp"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

#include "fieldft/error.hpp"
#include "io/atomic_file.hpp"

#ifdef FIELDFT_HAVE_NIFTI
#include <nifti/nifti2_io.h>
#endif

namespace fieldft::io {

namespace {

// Checks and returns the element count; shape is {Nx, Ny[, Nz[, Nt]]}.
std::size_t check_shape(const std::string& path, std::span<const std::int64_t> shape, std::size_t given) {
  require(path.ends_with(".nii") || path.ends_with(".nii.gz"), ErrorCode::kInvalidArgument,
          "NIfTI file '" + path + "': the name must end in .nii or .nii.gz");
  require(shape.size() >= 1 && shape.size() <= 4, ErrorCode::kInvalidArgument,
          "NIfTI file '" + path + "': 1 to 4 axes (x, y, z, t) expected, got " + std::to_string(shape.size()));
  std::size_t n = 1;
  for (const auto d : shape) {
    require(d >= 1 && d <= 32767, ErrorCode::kInvalidArgument,
            "NIfTI file '" + path + "': axis length " + std::to_string(d) + " outside NIfTI-1's [1, 32767]");
    n *= static_cast<std::size_t>(d);
  }
  require(n == given, ErrorCode::kShapeMismatch,
          "NIfTI file '" + path + "': the shape holds " + std::to_string(n) + " voxels, given " + std::to_string(given));
  return n;
}

#ifdef FIELDFT_HAVE_NIFTI
// Writes `bytes` (float32 or complex64 voxels) with the geometry of `options`.
void write_voxels(const std::string& path, std::span<const std::int64_t> shape, int datatype, const void* bytes,
                  std::size_t nbytes, const NiftiOptions& options) {
  for (const double f : options.fov_mm)
    require(std::isfinite(f) && f >= 0, ErrorCode::kNonFinite,
            "NIfTI file '" + path + "': the FOV must be finite and >= 0 (0: 1 mm voxels)");
  nifti_set_debug_level(0);  // errors come back as fieldft::Error, not on stderr
  std::int64_t dims[8] = {static_cast<std::int64_t>(shape.size()), 1, 1, 1, 1, 1, 1, 1};
  for (std::size_t a = 0; a < shape.size(); ++a) dims[a + 1] = shape[a];
  nifti_image* nim = nifti_make_new_nim(dims, datatype, 0);
  require(nim != nullptr, ErrorCode::kOutOfMemory, "NIfTI file '" + path + "': cannot make the image");
  struct Free {
    nifti_image* p;
    ~Free() { nifti_image_free(p); }
  } guard{nim};
  nim->nifti_type = NIFTI_FTYPE_NIFTI1_1;
  double* spacing[3] = {&nim->dx, &nim->dy, &nim->dz};
  double* offset[3] = {&nim->qoffset_x, &nim->qoffset_y, &nim->qoffset_z};
  for (int a = 0; a < 3; ++a) {
    const std::int64_t n = dims[a + 1];
    const double d = options.fov_mm[static_cast<std::size_t>(a)] > 0 ? options.fov_mm[static_cast<std::size_t>(a)] / static_cast<double>(n) : 1.0;
    *spacing[a] = d;
    nim->pixdim[a + 1] = d;
    *offset[a] = -d * static_cast<double>(n / 2);
  }
  if (shape.size() == 4) {
    nim->dt = options.frame_seconds > 0 ? options.frame_seconds : 1.0;
    nim->pixdim[4] = nim->dt;
    nim->time_units = NIFTI_UNITS_SEC;
  }
  nim->xyz_units = NIFTI_UNITS_MM;
  nim->qform_code = NIFTI_XFORM_SCANNER_ANAT;
  nim->quatern_b = nim->quatern_c = nim->quatern_d = 0.0;
  nim->qfac = 1.0;
  nim->qto_xyz = nifti_quatern_to_dmat44(0, 0, 0, nim->qoffset_x, nim->qoffset_y, nim->qoffset_z, nim->dx, nim->dy,
                                         nim->dz, 1.0);
  nim->sform_code = 0;
  std::strncpy(nim->descrip, options.description.c_str(), sizeof nim->descrip - 1);
  // nifti_image_free releases data with free().
  require(static_cast<std::size_t>(nim->nvox) * static_cast<std::size_t>(nim->nbyper) == nbytes, ErrorCode::kInternal,
          "NIfTI file '" + path + "': voxel bytes disagree with libnifti's");
  nim->data = std::malloc(nbytes);
  require(nim->data != nullptr, ErrorCode::kOutOfMemory, "NIfTI file '" + path + "': cannot allocate the voxels");
  std::memcpy(nim->data, bytes, nbytes);

  const int ext_parts = path.ends_with(".nii.gz") ? 2 : 1;
  AtomicFile out(path, ext_parts);
  if (nifti_set_filenames(nim, out.temp_path().c_str(), 0, 1) != 0)
    throw Error(ErrorCode::kInvalidArgument, "NIfTI file '" + path + "': libnifti refused the name");
  nifti_image_write(nim);
  // nifti_image_write reports nothing: read the file back (a .nii's header and size; a
  // .nii.gz whole, since a truncated stream fails to decompress).
  const bool gz = ext_parts == 2;
  nifti_image* back = nifti_image_read(out.temp_path().c_str(), gz ? 1 : 0);
  bool ok = back != nullptr && back->datatype == datatype && back->nvox == nim->nvox;
  if (ok && gz) ok = back->data != nullptr;
  if (ok && !gz) {
    std::error_code ec;
    const auto size = std::filesystem::file_size(out.temp_path(), ec);
    ok = !ec && size == static_cast<std::uintmax_t>(back->iname_offset) + nbytes;
  }
  if (back) nifti_image_free(back);
  require(ok, ErrorCode::kInvalidArgument, "cannot write NIfTI file '" + path + "' (libnifti failed; disk full or no permission?)");
  out.commit();
}
#endif

[[maybe_unused]] [[noreturn]] void unavailable(const std::string& path) {
  throw Error(ErrorCode::kBackendUnavailable,
              "cannot write NIfTI file '" + path +
                  "': this fieldft was built without NIfTI support (install Debian's libnifti2-dev and configure with "
                  "-DFIELDFT_NIFTI=ON)");
}

}  // namespace

bool nifti_available() noexcept {
#ifdef FIELDFT_HAVE_NIFTI
  return true;
#else
  return false;
#endif
}

template <class T>
void write_nifti(const std::string& path, std::span<const std::int64_t> shape, std::span<const std::complex<T>> data,
                 const NiftiOptions& options) {
  const std::size_t n = check_shape(path, shape, data.size());
  for (std::size_t i = 0; i < n; ++i)
    require(std::isfinite(data[i].real()) && std::isfinite(data[i].imag()), ErrorCode::kNonFinite,
            [&] { return std::string("NIfTI file '" + path + "': non-finite value at voxel " + std::to_string(i)); });
#ifdef FIELDFT_HAVE_NIFTI
  if (options.kind == NiftiKind::kComplex) {
    std::vector<std::complex<float>> v(data.begin(), data.end());
    write_voxels(path, shape, DT_COMPLEX64, v.data(), v.size() * sizeof(v[0]), options);
    return;
  }
  require(options.kind != NiftiKind::kReal, ErrorCode::kInvalidArgument,
          "NIfTI file '" + path + "': complex data are written as magnitude, phase or complex, not real");
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i)
    v[i] = static_cast<float>(options.kind == NiftiKind::kPhase ? std::arg(data[i]) : std::abs(data[i]));
  write_voxels(path, shape, DT_FLOAT32, v.data(), v.size() * sizeof(float), options);
#else
  (void)options;
  unavailable(path);
#endif
}

template <class T>
void write_nifti(const std::string& path, std::span<const std::int64_t> shape, std::span<const T> data,
                 const NiftiOptions& options) {
  const std::size_t n = check_shape(path, shape, data.size());
  require(options.kind == NiftiKind::kReal || options.kind == NiftiKind::kMagnitude, ErrorCode::kInvalidArgument,
          "NIfTI file '" + path + "': real data are written as real or magnitude, not phase or complex");
  for (std::size_t i = 0; i < n; ++i)
    require(std::isfinite(data[i]), ErrorCode::kNonFinite,
            [&] { return std::string("NIfTI file '" + path + "': non-finite value at voxel " + std::to_string(i)); });
#ifdef FIELDFT_HAVE_NIFTI
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i)
    v[i] = static_cast<float>(options.kind == NiftiKind::kMagnitude ? std::abs(data[i]) : data[i]);
  write_voxels(path, shape, DT_FLOAT32, v.data(), v.size() * sizeof(float), options);
#else
  unavailable(path);
#endif
}

template void write_nifti<float>(const std::string&, std::span<const std::int64_t>, std::span<const std::complex<float>>,
                                 const NiftiOptions&);
template void write_nifti<double>(const std::string&, std::span<const std::int64_t>,
                                  std::span<const std::complex<double>>, const NiftiOptions&);
template void write_nifti<float>(const std::string&, std::span<const std::int64_t>, std::span<const float>,
                                 const NiftiOptions&);
template void write_nifti<double>(const std::string&, std::span<const std::int64_t>, std::span<const double>,
                                  const NiftiOptions&);

}  // namespace fieldft::io
