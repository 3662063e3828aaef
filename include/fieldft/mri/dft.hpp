// fieldft::mri::Dft and DftR2 — the exact field-corrected (off-resonance) DFT and its R2*
// (within-voxel field gradient) variant, on the CPU and on NVIDIA GPUs.
//
// Math. Image grid N_x × N_y [× N_z] (2D or 3D), voxel v = (i_x, i_y, i_z), x fastest, at
//     r_d(v) = (i_d − ⌊N_d/2⌋) / N_d        (field-of-view units, [−½, ½)).
// Samples j = 0 … M−1 at k_j (cycles per field of view, nominally [−N_d/2, N_d/2); any finite
// value is accepted) and readout time t_j (seconds). Field map Δω_v (rad/s).
//   forward:  s_j = Σ_v m_v exp(−i(2π k_j·r_v + Δω_v t_j))
//   adjoint:  m_v = Σ_j s_j exp(+i(2π k_j·r_v + Δω_v t_j))
// DftR2 multiplies every term by
//   B_jv = Π_d sinc(k_dj / N_d + G_dv t_j),   sinc(x) = sin(πx)/(πx), sinc(0) = 1,
// with G_d the field-map gradient in Hz per voxel along d. Why: model voxel v as a uniform box
// of side 1/N_d with the field varying linearly inside it, f(r) = f_v + Σ_d G_dv N_d (r_d − r_dv)
// (Hz). Averaging the forward term over the box gives, per axis,
//   N_d ∫_{−1/2N_d}^{1/2N_d} exp(−2πi (k_dj + G_dv N_d t_j) δ) dδ = sinc(k_dj/N_d + G_dv t_j):
// spatial and field phases enter with the same sign, so k and G t add. With G = 0 the factor
// is the voxel's box shape, sinc(k/N).
// Gradient maps, when not given, come from central differences of f = Δω/2π along each axis,
//   G_d(i) = (f(i+1) − f(i−1)) / 2, one-sided at the edges: G_d(0) = f(1) − f(0),
//   G_d(N−1) = f(N−1) − f(N−2); G_d = 0 along an axis with N_d = 1.
// (compute_gradient_maps exposes exactly this.)
//
// Layout. Image: x fastest, num_voxels() = N_x N_y N_z entries. Samples: M entries. With
// images = C > 1 (or options.images), C images (coils, shots) are stacked: image c at offset
// c·num_voxels(), sample vector c at c·M; one call transforms all C and evaluates each
// exponential once for all of them (the CUDA float path multiplies them on tensor cores, see
// docs/benchmarks.md).
// op::LinearOperator shapes: domain {N_x, N_y[, N_z][, C]}, codomain {M[, C]} (C only when > 1).
//
// Accuracy (relative l2, measured in tests/mri): float ~2e-6, double ~1e-14, for phases of
// hundreds of cycles; the phase is reduced in cycles before any sine is taken
// (fieldft/detail/dft_math.hpp). The multi-image float GPU path splits values into fp16 pairs:
// its error is ~1e-6 relative to the largest magnitude of each image / sample vector.
//
// Backends and context. The operator runs in a fieldft::Context (fieldft/context.hpp): on the
// host with context.nthreads() OpenMP threads (resolved and capped by fieldft::cpu_threads_for,
// reported by nthreads()), or on CUDA device d on the context's stream. CPU: OpenMP over samples
// (forward) or voxel tiles (adjoint), vectorised over the other index. CUDA: trajectory, times,
// field and gradient maps are uploaded once at construction and stay on the device.
// Entry points: apply/apply_adjoint (op::LinearOperator) take pointers where context() says;
// forward/adjoint always take host pointers and return when the result is on the host;
// forward_device/adjoint_device always take device pointers (CUDA only, else
// kBackendUnavailable). Device-pointer calls are stream-ordered: they enqueue on the context's
// stream and return without waiting (context().synchronize() before reading the result on the
// host); scratch memory is allocated stream-ordered on first use and reused.
// The DftOptions constructors build the context with Context::from_options(backend, device,
// stream, nthreads, own_stream = true): options.stream when given, else a stream of its own.
//
// Errors (fieldft::Error): grid not 2D/3D or a size < 1, images < 1, nthreads < 0 or a device
// < 0 (kInvalidArgument, naming the option); array lengths that disagree (kShapeMismatch, naming
// the arrays); NaN/Inf in a trajectory, field, time or gradient array (kNonFinite, naming the
// array and index); sizes whose products overflow 64 bits (kTooLarge). Every index is 64-bit.
#pragma once

#include <array>
#include <complex>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "fieldft/context.hpp"
#include "fieldft/op/linear_operator.hpp"

namespace fieldft::mri {

// Tuning knobs of the CUDA engine, for benchmarks and diagnosis; the CPU engine ignores them.
// -1 keeps the default; out-of-range values are kInvalidArgument naming the knob.
struct DftTuning {
  // Float CUDA-core kernels: 0-3 of every 8 voxel-sample pairs per thread on the FMA-pipe
  // polynomial sine/cosine instead of the SFU; 4 (the default) the warp-specialised forward
  // kernel (a quarter of the warps on the polynomial; the adjoint then runs as 2). Double and
  // the R2* model always use the polynomial.
  int poly = -1;
  // Smallest image count that runs on the tensor cores (float, no R2*): default 3; 0 never.
  int tc_min_images = -1;
};

struct DftOptions {
  Backend backend = Backend::kAuto;  // kAuto: CUDA when compiled in and a device is present
  std::int64_t images = 1;           // C ≥ 1 images per call
  // CPU: OpenMP threads; 0 = omp_get_max_threads(). The NUFFT plan's rule (fieldft::
  // cpu_threads_for in fieldft/nufft.hpp): capped at fieldft::max_cpu_threads(), < 0 is an error.
  int nthreads = 0;
  int device = 0;                    // CUDA device ordinal
  void* stream = nullptr;            // cudaStream_t to use; nullptr = the operator's own stream
  DftTuning tuning{};                // CUDA engine knobs (above)
};

// Field-map gradients (Hz per voxel) along x, y, z; gz empty in 2D.
template <class T>
struct GradientMaps {
  std::span<const T> gx, gy, gz;
};

// Central-difference gradients of f = field/2π, as documented above. Returns {gx, gy, gz}
// (gz empty in 2D).
template <class T>
std::array<std::vector<T>, 3> compute_gradient_maps(std::span<const std::int64_t> grid,
                                                    std::span<const T> field);

}  // namespace fieldft::mri

namespace fieldft::core {
template <class T>
class DftEngine;  // backend implementation (src/core/dft_setup.hpp)
struct DftSetup;  // validated, precomputed problem data (src/core/dft_setup.hpp)
}  // namespace fieldft::core

namespace fieldft::mri {

template <class T>
class Dft : public op::LinearOperator<T> {
 public:
  using Complex = std::complex<T>;

  // grid: {N_x, N_y} or {N_x, N_y, N_z}. kx, ky[, kz]: M values each (kz empty in 2D).
  // field: num_voxels values (rad/s) or empty (no field). times: M values (s) or empty
  // (all zero). images: C >= 1 stacked images per call. The arrays are copied; they may be
  // freed after construction.
  Dft(std::span<const std::int64_t> grid, std::span<const T> kx, std::span<const T> ky,
      std::span<const T> kz, std::span<const T> field, std::span<const T> times,
      const Context& context, std::int64_t images = 1);
  // The same in the context the options describe (see "Backends and context" above).
  Dft(std::span<const std::int64_t> grid, std::span<const T> kx, std::span<const T> ky,
      std::span<const T> kz, std::span<const T> field, std::span<const T> times,
      const DftOptions& options = {});
  ~Dft() override;

  // "Dft(64x64x64 -> 262144)", "DftR2(64x64 -> 4096, 8 images)"
  std::string name() const override;
  void apply(const Complex* x, Complex* y) override;
  void apply_adjoint(const Complex* y, Complex* x) override;

  void forward(const Complex* image, Complex* samples);           // host pointers
  void adjoint(const Complex* samples, Complex* image);           // host pointers
  void forward_device(const Complex* image, Complex* samples);    // device pointers
  void adjoint_device(const Complex* samples, Complex* image);    // device pointers

  int dim() const noexcept { return dim_; }
  const std::array<std::int64_t, 3>& grid() const noexcept { return grid_; }  // 1 if unused
  std::int64_t num_voxels() const noexcept { return grid_[0] * grid_[1] * grid_[2]; }
  std::int64_t num_samples() const noexcept { return num_samples_; }
  std::int64_t images() const noexcept { return images_; }
  bool r2() const noexcept { return r2_; }
  // The OpenMP threads used on the host (context().nthreads() through fieldft::cpu_threads_for);
  // 0 on a CUDA device.
  int nthreads() const noexcept { return nthreads_; }

 protected:
  // DftR2's constructors: gradients == nullptr derives them from the field map.
  Dft(std::span<const std::int64_t> grid, std::span<const T> kx, std::span<const T> ky,
      std::span<const T> kz, std::span<const T> field, std::span<const T> times,
      const GradientMaps<T>* gradients, bool r2, const Context& context, std::int64_t images);
  Dft(std::span<const std::int64_t> grid, std::span<const T> kx, std::span<const T> ky,
      std::span<const T> kz, std::span<const T> field, std::span<const T> times,
      const GradientMaps<T>* gradients, bool r2, const DftOptions& options);

 private:
  struct Prepared;  // the validated setup and its context (src/mri/dft.cpp)
  explicit Dft(Prepared prepared);

  int dim_ = 0;
  std::array<std::int64_t, 3> grid_{1, 1, 1};
  std::int64_t num_samples_ = 0;
  std::int64_t images_ = 1;
  bool r2_ = false;
  int nthreads_ = 0;
  std::unique_ptr<core::DftEngine<T>> engine_;
};

template <class T>
class DftR2 final : public Dft<T> {
 public:
  // Gradient maps from central differences of the field map (see the top of this file).
  DftR2(std::span<const std::int64_t> grid, std::span<const T> kx, std::span<const T> ky,
        std::span<const T> kz, std::span<const T> field, std::span<const T> times,
        const Context& context, std::int64_t images = 1);
  DftR2(std::span<const std::int64_t> grid, std::span<const T> kx, std::span<const T> ky,
        std::span<const T> kz, std::span<const T> field, std::span<const T> times,
        const DftOptions& options = {});
  // Given gradient maps (Hz per voxel), num_voxels values each (gz empty in 2D).
  DftR2(std::span<const std::int64_t> grid, std::span<const T> kx, std::span<const T> ky,
        std::span<const T> kz, std::span<const T> field, std::span<const T> times,
        const GradientMaps<T>& gradients, const Context& context, std::int64_t images = 1);
  DftR2(std::span<const std::int64_t> grid, std::span<const T> kx, std::span<const T> ky,
        std::span<const T> kz, std::span<const T> field, std::span<const T> times,
        const GradientMaps<T>& gradients, const DftOptions& options = {});
};

extern template class Dft<float>;
extern template class Dft<double>;
extern template class DftR2<float>;
extern template class DftR2<double>;

}  // namespace fieldft::mri
