// fieldft::mri::choose_field_model — the field-corrected encoding model chosen by predicted cost
// (issue 23, "choice by cost"; DESIGN.md §3).
//
// The exact DFT (DftEncoding) and time segmentation on the NUFFT (TimeSegmentedEncoding, L from a
// requested accuracy, with or without the field-corrected Toeplitz normal FieldToeplitzNormal) are
// interchangeable implementations of s_j = Σ_v m_v exp(−i(2π k_j·r_v + Δω_v t_j)). Which is faster
// depends on the problem: the DFT costs M·N per coil and direction whatever the field; time
// segmentation costs L NUFFT pairs per coil, or L' padded FFT pairs with the Toeplitz normal, and
// L grows with the field range times the readout length and with the accuracy. This function plans
// L (and L' of the Toeplitz difference design) exactly as the operators would — the host design of
// src/core/time_segmentation.hpp, milliseconds — and predicts, for each candidate, the seconds of
// one normal application (AᴴA: one forward and one adjoint, or the Toeplitz normal) and of the
// set-up, from throughput constants measured in docs/benchmarks.md (src/mri/field_model.cpp cites
// each). It returns the cheapest for `iterations` normal applications plus the set-up, and a
// one-line reason naming the numbers.
//
// Candidates:
//   kDft                    2·C·M·N pairs per normal at the DFT's pairs/s (CPU: per core × threads;
//                           CUDA: by batch, the tensor-core path for several coils);
//   kTimeSegmented          per shot (per_shot, pcSENSE) or once: L·C NUFFT pairs (fine-grid FFTs
//                           and M·w^d spreading and interpolation cells) plus the segment passes;
//   kTimeSegmented+Toeplitz C·L' pruned 2N FFT pairs per shot (N on a periodic axis; CUDA: the
//                           fused rate in 2D and on 3D stacks with 2N_x, 2N_y powers of two in
//                           [16, 2048], the cuFFT path's elsewhere) where some L' up to
//                           max(128, 2·max_segments) reaches the accuracy (src/mri/field_normal.hpp).
// Time segmentation is infeasible when no L up to max_segments reaches the accuracy (then kDft,
// and the reason says so). Without a field map the choice is kNufft (no field to model).
//
// Inputs are plain arrays so that a dataset fills them directly: the grid {Nx, Ny[, Nz]}, the field
// map Δω per voxel in rad/s (x fastest; empty: none), the readout time per sample in s (empty: all
// zero), the shot label per sample (empty: one shot), the coil count. The predicted seconds are
// estimates (a factor of two either way is usual; small multi-shot problems run slower than the
// rates say), meant to rank the candidates, not to time them.
//
// Errors (fieldft::Error): accuracy or eps not finite or <= 0, iterations < 1, coils < 1,
// max_segments outside 1 … 1024, threads < 0, a backend other than kCpu or kCuda →
// kInvalidArgument; a grid of 0 or more than 3 axes or a non-positive size, a field map or shot
// labels of the wrong length, times of a length other than `samples` → kShapeMismatch; NaN/Inf
// in the field map or the times → kNonFinite; samples < 1 → kInvalidArgument.
#pragma once

#include <array>
#include <complex>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "fieldft/context.hpp"
#include "fieldft/mri/encoding.hpp"
#include "fieldft/mri/sense.hpp"
#include "fieldft/mri/time_segmentation.hpp"

namespace fieldft::mri {

struct FieldModelProblem {
  std::vector<std::int64_t> grid;       // {Nx, Ny[, Nz]}
  std::span<const double> field;        // Δω per voxel, rad/s (x fastest); empty: no field map
  std::span<const double> times;        // s per sample; empty: all zero
  std::span<const std::int32_t> shots;  // shot label per sample (0 … S−1); empty: one shot
  std::int64_t samples = 0;             // M, all shots together
  std::int64_t coils = 1;               // C
  // true: one encoding per shot (mri::pcsense), so time segmentation pays its FFTs per shot and
  // plans L from each shot's times; false: one encoding of all samples (mri::sense).
  bool per_shot = false;
  // Axes (x, y, z) whose k are all integers (a stack's k_z): the Toeplitz normals embed them in N
  // cells, not 2N (include/fieldft/mri/toeplitz.hpp, "Periodic axes"), which the Toeplitz
  // candidate's cost counts. The Encoding overload fills it from the k, as the normals decide.
  std::array<bool, 3> periodic{false, false, false};
  // The last axis is a stack (periodic, the same in-plane samples and times on every plane:
  // "Stacked last axis" there): the Toeplitz candidate then has no FFT pass along it and kernels
  // of one plane. The Encoding overload fills it from the samples, as the normals decide.
  bool stacked = false;
};

struct FieldModelOptions {
  double accuracy = 1e-3;  // the time segmentation's worst-case phase error (TimeSegmentationOptions)
  double eps = 1e-5;       // the NUFFT's tolerance (its kernel width)
  int max_segments = 64;   // the largest L tried (TimeSegmentationOptions::max_segments)
  SegmentInterpolator interpolator = SegmentInterpolator::kLeastSquares;  // time segmentation's
  int iterations = 30;              // normal applications over which the set-up is spread
  Backend backend = Backend::kCpu;  // kCpu or kCuda: which throughput constants
  int threads = 0;                  // CPU threads (0: all, fieldft::cpu_threads_for)
  bool double_precision = false;    // T = double (the DFT's rates are lower)
  bool plan_toeplitz = true;        // plan L' and consider the Toeplitz normal
};

struct FieldModelCandidate {
  bool feasible = false;         // can reach the accuracy (and run on this backend)
  double setup_seconds = 0;      // predicted set-up: plans, interpolator designs, Toeplitz kernels
  double iteration_seconds = 0;  // predicted seconds of one normal application
  double total_seconds = 0;      // setup + iterations · iteration (infinity when not feasible)
  std::string note;              // why infeasible, or what was counted
};

struct FieldModelChoice {
  EncodingKind encoding = EncodingKind::kNufft;  // kNufft (no field map), kDft or kTimeSegmented
  bool toeplitz = false;                         // kTimeSegmented: the field-corrected Toeplitz normal
  int segments = 0;                              // L (the largest over shots); 0 when not planned or unreachable
  int toeplitz_segments = 0;                     // L' of the difference design (largest over shots); 0: none
  double worst_error = 0;                        // the time segmentation's worst-case phase error at L
  FieldModelCandidate dft, segmented, segmented_toeplitz;
  double planning_seconds = 0;  // wall time of this function (not in any candidate's set-up)
  std::string reason;           // one line, naming the numbers
};

FieldModelChoice choose_field_model(const FieldModelProblem& problem, const FieldModelOptions& options = {});

// The same for an Encoding (its grid, field map, times and shot labels); the precision of the
// operators to be built is options.double_precision, not T.
template <class T>
FieldModelChoice choose_field_model(const Encoding<T>& encoding, std::int64_t coils, bool per_shot,
                                    FieldModelOptions options = {});

extern template FieldModelChoice choose_field_model<float>(const Encoding<float>&, std::int64_t, bool,
                                                           FieldModelOptions);
extern template FieldModelChoice choose_field_model<double>(const Encoding<double>&, std::int64_t, bool,
                                                            FieldModelOptions);

}  // namespace fieldft::mri
