// The field-corrected DFT behind fieldft::mri::Dft / DftR2: validated, precomputed problem data
// (DftSetup, shared by both backends) and the backend interface (DftEngine).
#pragma once

#include <array>
#include <complex>
#include <cstdint>
#include <memory>
#include <vector>

#include "fieldft/config.hpp"
#include "fieldft/detail/dft_math.hpp"
#include "fieldft/mri/dft.hpp"

namespace fieldft::mri::detail {

// Everything in double: each backend rounds what it needs to its precision. Tiles follow
// fieldft::detail::dft::tile_shape; tile b = bx + ntiles_x·(by + ntiles_y·bz).
struct DftSetup {
  int dim = 0;
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

  // Tile b's centre minus ⌊N_d/2⌋, per axis: the cs_d of fieldft::detail::dft::tile_base.
  std::array<double, 3> tile_centre_offset(std::int64_t b) const;
  // First voxel index (per axis) of tile b.
  std::array<std::int64_t, 3> tile_origin(std::int64_t b) const;
};

template <class T>
class DftEngine {
 public:
  using Complex = std::complex<T>;
  virtual ~DftEngine() = default;
  virtual Backend backend() const noexcept = 0;
  // Pointers on the host or (device_pointers) on the engine's device; images() stacked.
  virtual void forward(const Complex* image, Complex* samples, bool device_pointers) = 0;
  virtual void adjoint(const Complex* samples, Complex* image, bool device_pointers) = 0;
};

template <class T>
std::unique_ptr<DftEngine<T>> make_cpu_engine(std::shared_ptr<const DftSetup> setup, int nthreads);

#if FIELDFT_HAVE_CUDA
// Defined in src/cuda/dft_engine.cu.
template <class T>
std::unique_ptr<DftEngine<T>> make_cuda_engine(std::shared_ptr<const DftSetup> setup, int device,
                                               void* stream);
#endif

}  // namespace fieldft::mri::detail
