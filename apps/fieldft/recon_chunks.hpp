// `fieldft recon`'s memory budget and its slice-by-slice path for stacks (recon_command.cpp).
//
// Memory. estimate_memory() is a documented, conservative count of what a reconstruction still
// allocates in the context's memory after the data are read (the device on CUDA, the host on the
// CPU), with c = sizeof(complex<T>), r = sizeof(T), M samples, N voxels, C coils, S shots, d the
// dimension:
//   data      M·C·c (the k-space in the context) + M·C·c more with density weights (CG's W)
//   geometry  M·(d + 1)·r (k, readout times) + 4·M (shot labels) + N·r (field map) + N·S·r (phases)
//   maps      N·C·c (SENSE uploads its maps), + N·C·c while estimated maps come back
//   operator  per application of A^H A to C coil images: the coil images N·C·c, the k-space M·C·c,
//             and by encoding: NUFFT a fine grid of 2^d·N·C·c (upsampling factor 2, the largest
//             the planner picks) + the Toeplitz kernel 2^d·N·c + 8·M of sort indices; time
//             segmentation L times the NUFFT's grid and coil images (one NUFFT of L·C images) +
//             M·L·c interpolation coefficients + N·L·c segment phases; the exact DFT nothing more.
//             pcSENSE: S·N·C·c more (the per-shot images).
//   solver    CG's x, b, r, p, q and one weighted codomain vector: 5·N·c + M·C·c
// The sum is multiplied by 1.25 (allocator rounding, FFT plans' work areas) plus 64 MiB (cuFFT /
// FFTW plans, the CUDA context's own pools); it is an upper bound of the peaks, not a forecast.
//
// Stacks. A 3D dataset is a stack when k_z takes Nz integer values, distinct modulo Nz (every
// k_z plane of the grid, e.g. -Nz/2 .. Nz/2 - 1), and each plane holds the same in-plane samples
// (k_x, k_y), readout times and shot labels in the same order. Then the problem separates exactly
// into Nz 2D problems. With z_v = (v_z - ⌊Nz/2⌋)/Nz (fieldft's image positions) and plane p at
// k_z = κ_p, sample j of plane p of coil c is
//   y_c(p, j) = Σ_v m(v) S_c(v) e^{-i2π(k_xj x_v + k_yj y_v)} e^{-iΔω(v) t_j} e^{-i2π κ_p z_v}.
// Since κ_p runs over all residues modulo Nz, Σ_p e^{-i2π κ_p (z_v - z_w)} = Nz δ(v_z, w_z), so
//   ŷ_c(z, j) = (1/Nz) Σ_p y_c(p, j) e^{+i2π κ_p z}
//             = Σ_{x,y} m(x,y,z) S_c(x,y,z) e^{-i2π(k_xj x + k_yj y)} e^{-iΔω(x,y,z) t_j},
// the 2D model of slice z with that slice's maps and field map: the field term keeps the
// separation because t_j (and the shot of sample j, so also pcSENSE's phase maps) does not depend
// on the plane. The k_z transform F (F_{p,z} = e^{-i2π κ_p z}) has F^H F = Nz I, so
//   ‖A x − y‖² + λ‖x‖² = Σ_z ( Nz ‖A_z x_z − ŷ_z‖² + λ‖x_z‖² ),
// i.e. slice z solves ‖A_z x_z − ŷ_z‖² + (λ/Nz)‖x_z‖² (with k-space weights the same on every
// plane, the weighted form alike). The slices' minimisers are the whole problem's; CG run per
// slice takes different steps than CG on the whole, so the two agree once both have converged.
#pragma once

#include <complex>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "io/ismrmrd.hpp"

namespace fieldft::cli {

struct MemoryProblem {
  int dim = 2;
  std::int64_t samples = 0, voxels = 0, coils = 1, shots = 1;
  int segments = 0;          // time segmentation's L (0: not time-segmented)
  bool dft = false;          // the exact field-corrected DFT
  bool weights = false;      // density weights in CG
  bool estimate_maps = false;
  bool field = false;
  bool pcsense = false;
  std::size_t real_bytes = 4;  // sizeof(T)
};

struct MemoryEstimate {
  double data = 0, geometry = 0, maps = 0, op = 0, solver = 0;
  double total = 0;  // the sum x 1.25 + 64 MiB
  std::string text() const;  // "1.2 GiB (data .., maps .., operator .., solver ..)"
};

MemoryEstimate estimate_memory(const MemoryProblem& p);

// "1.5 GiB", "300 MiB", "12 KiB", "512 B".
std::string bytes_text(double bytes);

// --memory-limit: "8G", "512M", "1.5GiB", "100k", a plain number of bytes; UsageError otherwise.
double parse_bytes(const std::string& text, const std::string& option);

// The host's available memory (MemAvailable of /proc/meminfo, else free physical pages).
double available_host_memory();

struct Stack {
  std::int64_t planes = 0, plane_samples = 0;
  std::vector<std::int64_t> index;  // index[p·plane_samples + j]: the dataset's sample j of plane p
  std::vector<double> kz;           // κ_p
};

// The stack structure of a 3D dataset (see above), or nullopt with the reason in *why_not.
std::optional<Stack> detect_stack(const io::RawData& d, std::string* why_not);

// ŷ of every slice for every coil, in ONE allocation (so that it can be page-locked in one
// piece): slice z's plane_samples·C values, coil slowest (see above), at z·plane_samples·C.
// y: the dataset's k-space, sample j of coil c at j + M·c.
template <class T>
std::vector<std::complex<T>> kz_to_slices(const Stack& s, std::int64_t nz, std::int64_t coils,
                                          const std::vector<std::complex<T>>& y);

// The inverse of kz_to_slices (the model's direction): y_c(p, j) = Σ_z ŷ_c(z, j) e^{-i2π κ_p z_v},
// written into the dataset's order (y resized to M·C). `fieldft simulate` models a stack this way:
// Nz 2D transforms in place of one 3D one.
template <class T>
void slices_to_kz(const Stack& s, std::int64_t nz, std::int64_t coils,
                  const std::vector<std::vector<std::complex<T>>>& slices, std::vector<std::complex<T>>& y);

// Slice z of `images` stacked volumes {Nx, Ny, Nz} (image k at offset k·Nx·Ny·Nz), as `images`
// stacked slices.
template <class V>
std::vector<V> slice_of(const std::vector<V>& volumes, std::int64_t plane, std::int64_t nz, std::int64_t z,
                        std::int64_t images) {
  std::vector<V> out(static_cast<std::size_t>(plane * images));
  for (std::int64_t k = 0; k < images; ++k)
    for (std::int64_t v = 0; v < plane; ++v)
      out[static_cast<std::size_t>(v + plane * k)] = volumes[static_cast<std::size_t>(v + plane * z + plane * nz * k)];
  return out;
}

}  // namespace fieldft::cli
