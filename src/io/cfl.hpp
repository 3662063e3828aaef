// fieldft::io — BART's .cfl/.hdr files, and how fieldft's layouts and units map to BART's.
//
// Format (BART's README, "Data Format"): a dataset `name` is two files. name.hdr is text:
//   # Dimensions
//   1 256 64 8 1 1 1 1 1 1 1 1 1 1 1 1
// (other "# ..." sections, e.g. "# Command", "# Files", "# Creator", may follow and are
// ignored); name.cfl is the raw array, complex float (float32 real, float32 imaginary,
// little-endian), column-major: the FIRST dimension is the fastest. BART writes 16 dimensions;
// the reader accepts 1 to 64, each >= 1. `base` below may be "name", "name.cfl" or "name.hdr".
//
// BART's dimensions (src/misc/mri.h): 0 READ (x), 1 PHS1 (y), 2 PHS2 (z), 3 COIL, 4 MAPS,
// 5 TE, 6 COEFF, 7 COEFF2, 8 ITER, 9 CSHIFT, 10 TIME, 11 TIME2, 12 LEVEL, 13 SLICE, 14 AVG,
// 15 BATCH. The conventions of the data kinds, and fieldft's side of each:
//
//   k-space      BART [1, samples, spokes, coils]   fieldft: M = samples * spokes samples, readout
//                                                   fastest, then coils: the same memory.
//   trajectory   BART [3, samples, spokes]          fieldft: kx, ky, kz in cycles per field of
//                (complex, real part = coordinate,  view, the sample order above. BART's unit is
//                imaginary 0; row 2 is 0 in 2D)    the same ("pixel_size / FOV": k = ±N/2 at the
//                                                   edge of an N-voxel grid), so the values are
//                                                   copied unchanged, x first.
//   images       BART [x, y, z]                     fieldft: {Nx, Ny[, Nz]}, x fastest: the same
//                                                   memory (z = 1 in 2D).
//   coil maps    BART [x, y, z, coils]              fieldft: image shape + {C}, coils slowest.
//
// Sign, centre and scale of `bart nufft` (BART v0.8.00, Debian's `bart`; measured with point
// sources and random images, and checked in CI by tests/io/bart_crosscheck_test.cpp):
//   bart nufft -s traj img ksp   (exact DFT)   ksp_j = Σ_v img_v exp(-2πi Σ_d k_jd (v_d - N_d/2) / N_d)
//   bart nufft traj img ksp      (gridding)    the same divided by sqrt(N_x N_y N_z)
//   bart nufft [-s] -a ...       (adjoint)     the conjugate phase, with the same scale as its forward
// with k in cycles/FOV. fieldft's forward model is s_j = Σ_v m_v exp(-i 2π k_j·r_v) with
// r_v = (v - ⌊N/2⌋)/N: the same sign and units, and the same centre for even N, so for even sizes
//   BART's DFT = fieldft's encoding,   BART's NUFFT = fieldft's encoding / sqrt(voxels),
// with no change of axis order or trajectory values. For odd N BART's centre N/2 lies half a
// voxel beyond fieldft's ⌊N/2⌋: BART = fieldft × exp(iπ k_d / N_d) per odd axis. BART's
// gridding NUFFT is only right for even sizes (for odd N its phases and amplitudes are off:
// use -s), and it loses accuracy near the edge of k-space: relative error 1.3e-3 (2D, 24 x 20)
// for |k_d| <= 0.4 N_d but 0.15 with samples up to ±N_d/2; about 1e-2 in 3D on a 12 x 10 x 8
// grid at 0.4 N_d. Compare against `bart nufft -s` where accuracy matters.
//
// Reading checks the header against the data before anything is allocated: dimensions must
// parse and be positive, their product must not overflow, and the .cfl file must hold exactly
// product × 8 bytes; values must be finite unless allowed. Every failure is a fieldft::Error
// naming the file and what was expected (kInvalidArgument; kShapeMismatch when a dataset does
// not have the layout asked for; kNonFinite for NaN/Inf). Writing goes through temporary files:
// both are complete before either is renamed, the .cfl first, so the .hdr never describes a
// partial .cfl.
#pragma once

#include <array>
#include <complex>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace fieldft::io {

inline constexpr int kBartDims = 16;

struct CflReadOptions {
  bool allow_nonfinite = false;
};

struct CflArray {
  std::vector<std::int64_t> dims;  // as the header lists them (BART: 16)
  std::vector<std::complex<float>> data;
};

// "name" from "name", "name.cfl" or "name.hdr".
std::string cfl_base(const std::string& path);

// The dimensions of name.hdr (reads only the header).
std::vector<std::int64_t> read_cfl_dims(const std::string& base);

CflArray read_cfl(const std::string& base, const CflReadOptions& options = {});

// The same from the two files' contents in memory (the fuzz target's entry point).
CflArray parse_cfl(std::string_view header, std::span<const std::uint8_t> data, const std::string& name,
                   const CflReadOptions& options = {});

// dims padded with 1 to 16 entries (BART's count); data.size() must be their product.
void write_cfl(const std::string& base, std::span<const std::int64_t> dims, std::span<const std::complex<float>> data);

// --- fieldft layouts <-> BART layouts -----------------------------------------------------------

// [1, samples, spokes, coils, 1 ...]
std::vector<std::int64_t> bart_kspace_dims(std::int64_t samples, std::int64_t spokes, std::int64_t coils = 1);
// [3, samples, spokes, 1 ...]
std::vector<std::int64_t> bart_trajectory_dims(std::int64_t samples, std::int64_t spokes);
// [Nx, Ny, Nz or 1, coils, 1 ...] from fieldft's {Nx, Ny[, Nz]}
std::vector<std::int64_t> bart_image_dims(std::span<const std::int64_t> image_shape, std::int64_t coils = 1);

struct BartKspace {
  std::int64_t samples = 0, spokes = 0, coils = 0;
  std::vector<std::complex<float>> data;  // samples fastest, then spokes, then coils
};
struct BartTrajectory {
  std::int64_t samples = 0, spokes = 0;
  int dim = 2;                          // 3 when any kz is non-zero
  std::array<std::vector<float>, 3> k;  // kx, ky, kz in cycles/FOV, samples * spokes each
};
struct BartImage {
  std::vector<std::int64_t> shape;  // {Nx, Ny} or {Nx, Ny, Nz}
  std::int64_t coils = 1;
  std::vector<std::complex<float>> data;  // x fastest, coils slowest
};

// k-space of `coils` coils, each samples * spokes values (readout fastest).
void write_cfl_kspace(const std::string& base, std::int64_t samples, std::int64_t spokes, std::int64_t coils,
                      std::span<const std::complex<float>> data);
// Requires dims [1, samples, spokes, coils] and 1 beyond (kShapeMismatch otherwise).
BartKspace read_cfl_kspace(const std::string& base, const CflReadOptions& options = {});

// The trajectory in cycles/FOV; kz empty in 2D. Every span holds samples * spokes values.
template <class T>
void write_cfl_trajectory(const std::string& base, std::int64_t samples, std::int64_t spokes, std::span<const T> kx,
                          std::span<const T> ky, std::span<const T> kz = {});
// Requires dims [3 (or 2), samples, spokes] and 1 beyond, and zero imaginary parts.
BartTrajectory read_cfl_trajectory(const std::string& base);

// The same interpretations of an array already read (`name` for messages); the readers above
// are read_cfl followed by these.
BartKspace kspace_from_cfl(CflArray&& a, const std::string& name);
BartTrajectory trajectory_from_cfl(const CflArray& a, const std::string& name);
BartImage image_from_cfl(CflArray&& a, const std::string& name);

// An image or a set of coil images / maps: shape {Nx, Ny[, Nz]} (x fastest), coils slowest.
void write_cfl_image(const std::string& base, std::span<const std::int64_t> image_shape, std::int64_t coils,
                     std::span<const std::complex<float>> data);
// Requires dims [x, y, z, coils] and 1 beyond; shape is {Nx, Ny} when z = 1.
BartImage read_cfl_image(const std::string& base, const CflReadOptions& options = {});

}  // namespace fieldft::io
