// The field-corrected DFT behind fieldft::mri::Dft / DftR2, below the backends: validated,
// precomputed problem data (DftSetup, shared by both backends) and the interface each backend
// implements (DftEngine). The backends build engines (src/cpu/dft_cpu.hpp,
// src/cuda/dft_engine.hpp); src/mri/dft.cpp validates the input, fills the setup and picks one.
#pragma once

#include <array>
#include <complex>
#include <cstdint>
#include <vector>

#include "fieldft/detail/dft_math.hpp"

namespace fieldft::core {

// Where a group of a grouped DftSetup may start: a multiple of the CUDA tensor-core kernels'
// samples per forward block (128) and per adjoint stage (256), so that no block or stage mixes
// groups (src/cuda/dft_engine.cu checks it).
inline constexpr std::int64_t kDftGroupAlign = 256;

// Everything in double: each backend rounds what it needs to its precision. Tiles follow
// fieldft::detail::dft::tile_shape; tile b = bx + ntiles_x·(by + ntiles_y·bz).
// The CUDA engine's defaults (mri::DftTuning; docs/tuning.md): the warp-specialised forward
// kernel, and tensor cores from 3 images.
inline constexpr int kDftDefaultPoly = 4;
inline constexpr int kDftDefaultTcMinImages = 3;

struct DftSetup {
  int dim = 0;
  int poly = kDftDefaultPoly;                   // mri::DftTuning::poly, resolved
  int tc_min_images = kDftDefaultTcMinImages;   // mri::DftTuning::tc_min_images, resolved
  std::array<std::int64_t, 3> n{1, 1, 1};       // grid
  fieldft::detail::dft::TileShape tile{1, 1, 1};
  std::array<std::int64_t, 3> ntiles{1, 1, 1};  // tiles per axis
  std::int64_t num_voxels = 0, num_samples = 0, num_tiles = 0, images = 1;
  bool r2 = false;
  std::array<std::vector<double>, 3> u;  // k_d / N_d per sample (zeros for an unused axis)
  std::vector<double> t;                 // readout time per sample (s)
  std::vector<double> fref;              // reference frequency per tile (Hz)
  std::vector<double> fprime;            // per voxel: Δω/2π − fref of its tile (Hz)
  std::array<std::vector<double>, 3> g;  // R2: gradient per voxel (Hz/voxel), zeros if unused

  // Optional sample groups (pcSENSE's shots in one pass). The setup's samples are then the
  // caller's reordered by group, each group starting at a multiple of kDftGroupAlign and padded
  // with zero samples (u = t = 0) up to the next group; group g adds group_offset[g·voxels + v]
  // cycles to the phase of every pair (sample of g, voxel v), so that its term becomes
  // e^{−2πi(q + offset)}. The caller's sample vectors (user_samples each) are read and written
  // through `source` (per setup sample: the caller's index, −1 for padding). Only the CUDA
  // tensor-core path (float, cuda::dft_groups_supported) runs grouped setups.
  std::int64_t user_samples = 0;         // the caller's samples per image (= num_samples without groups)
  std::vector<std::int64_t> source;      // per sample: the caller's index or −1; empty without groups
  std::vector<std::int32_t> group;       // per sample: its group; empty without groups
  std::vector<double> group_offset;      // groups × voxels (cycles); empty without groups
  bool grouped() const noexcept { return !source.empty(); }
  std::int64_t caller_samples() const noexcept { return grouped() ? user_samples : num_samples; }

  // First voxel index (per axis) of tile b.
  std::array<std::int64_t, 3> tile_origin(std::int64_t b) const {
    const std::int64_t bx = b % ntiles[0];
    const std::int64_t by = (b / ntiles[0]) % ntiles[1];
    const std::int64_t bz = b / (ntiles[0] * ntiles[1]);
    return {bx * tile.x, by * tile.y, bz * tile.z};
  }
  // Tile b's centre minus ⌊N_d/2⌋, per axis: the cs_d of fieldft::detail::dft::tile_base.
  std::array<double, 3> tile_centre_offset(std::int64_t b) const {
    const auto o = tile_origin(b);
    const int ts[3] = {tile.x, tile.y, tile.z};
    std::array<double, 3> c{};
    for (int d = 0; d < 3; ++d) c[d] = static_cast<double>(o[d] + ts[d] / 2 - n[d] / 2);
    return c;
  }
};

// One backend's transform of a DftSetup. Calls on a device engine with device pointers enqueue
// their work on the engine's stream and return; with host pointers they stage the data through
// device memory and return when the result is on the host.
template <class T>
class DftEngine {
 public:
  using Complex = std::complex<T>;
  virtual ~DftEngine() = default;
  // Pointers on the host or (device_pointers) on the engine's device; images stacked.
  virtual void forward(const Complex* image, Complex* samples, bool device_pointers) = 0;
  virtual void adjoint(const Complex* samples, Complex* image, bool device_pointers) = 0;
};

}  // namespace fieldft::core
