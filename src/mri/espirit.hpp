// ESPIRiT's host steps (include/fieldft/mri/coil_maps.hpp, kEspirit steps 2–5): from a Cartesian
// calibration k-space to the coil maps. Private to the MRI layer.
#pragma once

#include <array>
#include <complex>
#include <cstdint>
#include <vector>

namespace fieldft::mri::detail {

struct EspiritProblem {
  int dim = 2;
  std::array<std::int64_t, 3> grid{1, 1, 1};  // the image grid (1 for unused axes)
  std::int64_t coils = 1;
  std::int64_t calibration_size = 0;  // n points per axis, κ_d = −(n−1)/2 … (n−1)/2
  int kernel_size = 6;                // ks points per axis
  double kernel_threshold = 0.02;     // keep σ_k >= kernel_threshold · σ_1
  double eigen_threshold = 0.9;       // crop
  int reference_coil = 0;             // made real and >= 0
  int nthreads = 1;
};

// calib: coils × n^dim values (κ x fastest, coil slowest). start: voxels × coils images (power
// iteration start vectors). maps: voxels × coils out. Returns dim V∥ (the kernel rank).
template <class T>
std::int64_t espirit_maps(const EspiritProblem& problem, const std::vector<std::complex<double>>& calib,
                          const std::complex<T>* start, std::complex<T>* maps);

}  // namespace fieldft::mri::detail
