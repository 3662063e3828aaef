// fieldft::io — NIfTI-1 image files (.nii, or .nii.gz compressed), through Debian's libnifti2.
//
// A volume of shape {Nx, Ny[, Nz[, Nt]]} (x fastest: NIfTI's own order, so the data go out
// unchanged) is written as one NIfTI-1 file:
//   kMagnitude  float32 |v|            kPhase    float32 arg(v) in radians, in (-π, π]
//   kComplex    complex64 v            kReal     float32 v (real input only)
// Geometry: voxel sizes pixdim = FOV / N per axis, in millimetres (xyz_units = mm; 1 mm when no
// FOV is given); qform_code = 1 (scanner-anatomical) with the identity rotation and the voxel
// (⌊Nx/2⌋, ⌊Ny/2⌋, ⌊Nz/2⌋) at the origin, fieldft's image centre (positions (i − ⌊N/2⌋)/N of the
// FOV), so that viewers show fieldft's image with its true size and centre. No sform.
//
// Built only with FIELDFT_NIFTI (CMake, ON where libnifti2-dev is installed); without it every
// writer throws kBackendUnavailable saying so. The path must end in .nii or .nii.gz. Writes are
// atomic (io/atomic_file.hpp): the library writes a temporary file, which is checked (read back
// by the library) before it is renamed onto the path. Errors: kInvalidArgument (path, sizes
// NIfTI-1 cannot hold: more than 4 axes or an axis beyond 32767), kShapeMismatch (data size),
// kNonFinite (NaN/Inf in the data or the FOV).
#pragma once

#include <array>
#include <complex>
#include <cstdint>
#include <span>
#include <string>

namespace fieldft::io {

enum class NiftiKind { kMagnitude, kPhase, kComplex, kReal };

struct NiftiOptions {
  NiftiKind kind = NiftiKind::kMagnitude;
  std::array<double, 3> fov_mm{0.0, 0.0, 0.0};  // field of view per axis (x, y, z); 0: 1 mm voxels
  double frame_seconds = 0.0;                   // pixdim of the 4th axis, when there is one
  std::string description;                      // NIfTI's descrip (at most 79 characters kept)
};

// Whether this build can write NIfTI files.
bool nifti_available() noexcept;

template <class T>
void write_nifti(const std::string& path, std::span<const std::int64_t> shape, std::span<const std::complex<T>> data,
                 const NiftiOptions& options = {});

// Real input: kReal (the values) or kMagnitude (|v|); kPhase and kComplex are refused.
template <class T>
void write_nifti(const std::string& path, std::span<const std::int64_t> shape, std::span<const T> data,
                 const NiftiOptions& options = {});

}  // namespace fieldft::io
