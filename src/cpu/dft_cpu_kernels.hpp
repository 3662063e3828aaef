// CPU loops of the field-corrected DFT (src/cpu/dft_cpu_kernels.cpp). The entry points are
// compiled for baseline x86-64, x86-64-v3 (AVX2/FMA) and x86-64-v4 (AVX-512) and picked at run
// time (GCC/Clang target_clones), so one binary runs everywhere at the machine's vector width.
#pragma once

#include <complex>
#include <cstdint>

namespace fieldft::cpu::dft {

// Samples are processed kLanes at a time (vector lanes = samples) in the forward transform; a
// tile's kTileVoxels voxels are the lanes of the adjoint.
inline constexpr int kLanes = 64;
inline constexpr int kTileVoxels = 256;
// Adjoint terms summed in T before they join the double total.
inline constexpr int kSampleBlock = 256;

// Read-only view of the CPU engine's arrays.
template <class T>
struct CpuView {
  int dim = 0;
  bool r2 = false;
  std::int64_t num_voxels = 0, num_samples = 0, num_tiles = 0, images = 1;
  // Per sample, zero-padded to a multiple of kLanes: u_d = k_d/N_d and t in T and in double.
  const T *ux, *uy, *uz, *t;
  const double *uxd, *uyd, *uzd, *td;
  // Per tile: centre offsets cs_d and reference frequency (dft_math.hpp tile_base).
  const double *csx, *csy, *csz, *fref;
  // Per tile slot (tile b, slot e at b·kTileVoxels + e; slots in run order, x fastest):
  // voxel index (−1 past the grid edge), offsets from the tile centre, f' (Hz) and for R2 the
  // gradients (Hz/voxel).
  const std::int64_t* vidx;
  const T *dx, *dy, *dz, *fp, *gx, *gy, *gz;
};

// Forward for the kLanes samples starting at j0: out[c·M + j] for c < images, j < M.
// images == 1: amp/arg are the image in polar form (|m|, arg m / 2π); otherwise img (images
// stacked) is used. work: (2·images + 3)·kLanes values, dwork: 2·images·kLanes.
void dft_cpu_forward_lanes(const CpuView<float>& v, const float* amp, const float* arg,
                           const std::complex<float>* img, std::complex<float>* out,
                           std::int64_t j0, float* work, double* dwork);
void dft_cpu_forward_lanes(const CpuView<double>& v, const double* amp, const double* arg,
                           const std::complex<double>* img, std::complex<double>* out,
                           std::int64_t j0, double* work, double* dwork);

// Adjoint for the voxels of tile b: out[c·num_voxels + voxel]. images == 1: amp/arg are the
// samples in polar form; otherwise smp. work: (2·images + 2)·kTileVoxels values, dwork:
// 2·images·kTileVoxels.
void dft_cpu_adjoint_tile(const CpuView<float>& v, const float* amp, const float* arg,
                          const std::complex<float>* smp, std::complex<float>* out, std::int64_t b,
                          float* work, double* dwork);
void dft_cpu_adjoint_tile(const CpuView<double>& v, const double* amp, const double* arg,
                          const std::complex<double>* smp, std::complex<double>* out,
                          std::int64_t b, double* work, double* dwork);

// Which vector instruction set the entry points run with on this machine.
const char* dft_cpu_isa() noexcept;

}  // namespace fieldft::cpu::dft
