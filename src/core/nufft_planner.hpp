// The CUDA NUFFT planner: one pure host function of (the plan's setup, the device's
// capabilities, the points' statistics) that returns every choice the CUDA backend makes —
// method, bins, batch, upsampling factor, sort sub-bins, the spreading and interpolation kernel
// variants, the FFT strategy — with the reason for each. The backend (src/cuda/cuda_plan.cu)
// applies the configuration and never decides anything itself. The thresholds, their reasons
// and their measurements are listed in docs/tuning.md. Host only, no CUDA: unit-tested with fake
// device capabilities (tests/core/nufft_planner_test.cpp).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/plan_setup.hpp"
#include "fieldft/nufft.hpp"

namespace fieldft::core {

// What the planner needs to know of a device (cudaDeviceGetAttribute / cudaMemGetInfo).
struct DeviceCaps {
  int sm_count = 1;
  std::size_t smem_per_block_optin = 0;  // cudaDevAttrMaxSharedMemoryPerBlockOptin
  std::size_t smem_per_sm = 0;           // reported only
  std::size_t l2_bytes = 0;              // reported only
  int cc_major = 0;
  int cc_minor = 0;
  std::size_t memory_bytes = 0;  // reported only
};

// Tuning thresholds (docs/tuning.md gives the measurements behind each).
inline constexpr std::int64_t kPrunedFftCells = std::int64_t(1) << 21;  // pruned cuFFT from this many fine cells
inline constexpr std::int64_t kModeFftMaxLength = 512;  // longest last axis of the fused mode FFT
inline constexpr std::int64_t kMaxSubproblem = 1024;    // points per subproblem, for load balance
inline constexpr std::size_t kSubproblemSmem = 48 * 1024;  // tile budget that keeps several blocks per SM
inline constexpr std::size_t kOptinReserve = 20 * 1024;    // the kernels' static shared memory below the opt-in maximum
inline constexpr double kBoxDensity = 1.2;             // points per cell from which register boxes pay
inline constexpr double kBulkDensity = 0.3;            // points per cell below which bulk tile rows pay
inline constexpr double kTcDensity = 0.3;              // points per cell below which tensor-core tiles pay
inline constexpr double kWideDensity = 0.3;            // points per sigma-2 cell from which sigma 2.25 pays
inline constexpr double kWideDensityInterp3d = 0.1;    // the same for 3D type 2
inline constexpr double kNarrowDensity = 0.22;         // 3D type 1: sigma 1.6 below this density
inline constexpr int kDefaultMaxBatch = 8;             // transforms per batch when Options::max_batch is 0
// The radices of the fused mode FFT's stages (src/cuda/small_dft.cuh implements them), largest
// first: fewer stages, each a longer DFT in registers; at most kModeFftMaxRadices stages.
inline constexpr int kModeFftRadices[] = {12, 9, 8, 6, 5, 4, 3, 2};
inline constexpr int kModeFftMaxRadices = 12;  // L <= 4096 in radices of at least 2

// The choices fixed by the setup's grid and options (made at construction, and again when the
// points choose another upsampling factor).
struct GridConfig {
  nufft::Method method = nufft::Method::kNuptsDriven;
  std::array<int, 3> bins{1, 1, 1};  // the plan's bins (tensor-core tiles replace them, PointsConfig)
  int max_batch = 1;
  int tensor_cores = 0;  // resolved for the device: 0 never, -1 by density, 1 always
  int bulk_rows = 0;     // the same
  bool auto_upsampfac = false;  // the first set_points with points chooses the factor
  nufft::FftStrategy fft = nufft::FftStrategy::kNone;  // types 1 and 2 on this grid
  bool mode_fft = false;  // type 1's last FFT axis fused with the copy to the modes
  std::string reason;
};

// The choices that depend on the points (every set_points).
struct PointsConfig {
  bool tensor_cores = false;
  bool boxes = false;
  bool bulk_rows = false;  // DevGrid::bulk: bulk rows allowed (the variant says whether they fit)
  std::array<int, 3> bins{1, 1, 1};      // final bins of the sort and the tiles
  std::array<int, 3> sub_bins{1, 1, 1};  // sort sub-bins (dividing the bins)
  std::int64_t subproblem_points = kMaxSubproblem;  // points per subproblem at most
  nufft::SpreadKernel spread = nufft::SpreadKernel::kNone;
  nufft::InterpKernel interp = nufft::InterpKernel::kNone;
  // Method kPrecomputed (plan_cuda_precompute): set_points stores the points' kernel weights,
  // precomputed_bytes of them (cuda_precomputed_bytes), and the nupts kernels read them.
  bool precompute = false;
  std::int64_t precomputed_bytes = 0;
  std::string reason;
};

// The points' statistics set_points gives the planner.
struct PointStats {
  std::int64_t m = 0;
  std::array<std::int64_t, 3> grid{1, 1, 1};  // the grid they are spread on (type 3: its own)
  bool choose_upsampfac = false;  // GridConfig::auto_upsampfac and the first set_points with points
  // cudaMemGetInfo's free bytes (plus those of weights the new points replace): for a larger
  // grid (choose_upsampfac) and the default limit of precomputed weights (plan_cuda_precompute)
  std::size_t free_device_bytes = 0;
};

struct NufftConfig {
  std::optional<PlanSetup> replanned;  // the points chose another upsampling factor: the new setup
  GridConfig grid;                     // of the new setup where replanned
  std::optional<PointsConfig> points;  // with PointStats
  std::string reason() const;          // grid and points reasons, one decision a line
};

// The planner. Without points: the construction's choices. With points: the factor (where
// stats->choose_upsampfac), then the grid's choices for the setup in force and the points'.
// T: the plan's precision (float or double).
template <class T>
NufftConfig plan_nufft(const PlanSetup& setup, const DeviceCaps& caps, const PointStats* stats = nullptr);

// The stages of plan_nufft, for the backend's inner plans and for tests.
template <class T>
GridConfig plan_grid(const PlanSetup& setup, const DeviceCaps& caps);
// Upsampfac 0 (types 1 and 2): the factor from the points' density on the sigma = 2 grid
// (core::auto_upsampfac); the new setup where it is not the current one, can be planned (host
// memory for its tables; at the narrow factor, eps above the float rounding floor) and its grid
// fits half the free device memory. reason says what happened.
template <class T>
std::optional<PlanSetup> choose_upsampfac(const PlanSetup& setup, int max_batch, std::int64_t m,
                                          std::size_t free_device_bytes, std::string& reason);
// free_device_bytes: as PointStats (0: unknown, no default limit on precomputed weights).
template <class T>
PointsConfig plan_points(const PlanSetup& setup, const GridConfig& grid, const DeviceCaps& caps, std::int64_t m,
                         const std::array<std::int64_t, 3>& nf, std::size_t free_device_bytes = 0);

// The methods run by the one-thread-per-point kernels (spread_nupts, interp_nupts): kNuptsDriven,
// and kPrecomputed, the same kernels reading the weights stored at set_points.
inline bool nupts_driven(nufft::Method m) {
  return m == nufft::Method::kNuptsDriven || m == nufft::Method::kPrecomputed;
}

// Sort sub-bins of a grid's bins: 2x2x2 for 3D tile methods and register boxes, else rows of 16
// (3D) or 8 (2D) cells along x, each trimmed to divide its bin.
std::array<int, 3> sort_sub_bins(int dim, nufft::Method method, bool boxes, const std::array<int, 3>& bins);

// Radices of kModeFftRadices (largest first) whose product is n, or none where n has a prime
// factor above 5 or needs more than kModeFftMaxRadices stages: 108 = 12·9, 128 = 8·8·2.
std::vector<int> mode_fft_radices(std::int64_t n);

// Shared memory of one warp tile (bytes): the larger of spread_tile's and spread_tile_boxes'.
template <class T>
std::size_t warp_tile_bytes(int dim, const int* bin, int width);

// ---- CPU backend: precomputed kernel weights (Method::kPrecomputed) ----
// The CPU backend's one points-dependent choice of method, made at every set_points of a type 1
// or 2 plan (docs/tuning.md, "Precomputed kernel weights").
inline constexpr std::int64_t kPrecomputeMinReuse = 8;  // executes per set_points from which kAuto precomputes
inline constexpr double kPrecomputeMemoryFraction = 0.25;  // default limit: this share of physical memory

struct PrecomputeChoice {
  bool precompute = false;
  double limit_bytes = 0;  // the limit in force (Options::precompute_max_bytes resolved)
  std::string reason;
};

// method kPrecomputed: precompute, or kTooLarge when `bytes` exceed the limit; kAuto: precompute
// when options.reuse >= kPrecomputeMinReuse and `bytes` fit the limit; otherwise not.
// physical_bytes: the machine's memory (host_memory_bytes(); a parameter for tests).
PrecomputeChoice plan_cpu_precompute(const nufft::Options& options, double bytes, double physical_bytes);

// ---- CUDA backend: precomputed kernel weights (Method::kPrecomputed) ----
// Per sorted point and dimension the w values of T, stored dimension by dimension and weight by
// weight across the points (weight k of dimension d of point j at (d·w + k)·m + j: a warp's
// loads are coalesced, no padding): dim·w·sizeof(T) bytes per point.
inline std::int64_t cuda_precomputed_bytes(int dim, int width, std::int64_t m, std::size_t value_bytes) {
  return m * dim * width * static_cast<std::int64_t>(value_bytes);
}
// Automatic choice on CUDA: none. The nupts kernels with stored weights trade ~w·dim Horner
// evaluations per point for dim·w loads per point and transform; measured on an H100 they took
// 0.99-1.02 of nupts' time, and auto's tile methods are faster than both (docs/tuning.md), so
// method kAuto never takes them.
inline constexpr bool kCudaPrecomputeAuto = false;
inline constexpr double kCudaPrecomputeMemoryFraction = 0.25;  // default limit: this share of free device memory
// method kPrecomputed: precompute, or kTooLarge when `bytes` exceed the limit
// (Options::precompute_max_bytes, or kCudaPrecomputeMemoryFraction of free_device_bytes; no
// default limit where free_device_bytes is 0); other methods: not (with a reason line for kAuto).
PrecomputeChoice plan_cuda_precompute(const nufft::Options& options, double bytes, double free_device_bytes);

}  // namespace fieldft::core
