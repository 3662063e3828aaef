// fieldft::nufft — the non-uniform FFT plan, on the CPU and on NVIDIA GPUs.
//
// Definitions (identical to FINUFFT, so results are interchangeable):
//   type 1:  f[k] = sum_j c[j] exp(isign * i * k.x_j)          (non-uniform -> uniform)
//   type 2:  c[j] = sum_k f[k] exp(isign * i * k.x_j)          (uniform -> non-uniform)
//   type 3:  f[k] = sum_j c[j] exp(isign * i * s_k.x_j)        (non-uniform -> non-uniform)
// with k = (k1, k2, k3), k_d in [-N_d/2, (N_d-1)/2] (integer division), dimensions d = 1..3.
// Type 3: j = 0..M-1 sources x_j, k = 0..nk-1 targets s_k, both arbitrary finite real vectors
// (NOT periodic; x in any length unit, s in radians per that unit).
//
// Points x_j of types 1 and 2 are in radians, 2π-periodic: any finite value with
// |x| <= max_fold_coordinate<T>() (detail/fold.hpp: 2π·2^(digits(T)−7), about 4.4e14 for double
// and 8.2e5 for float) is folded into [-π, π). Beyond that limit T no longer places a point
// within 1/64 of its period, so the folded position would be meaningless: set_points refuses it
// with kInvalidArgument naming the array, the index and the limit (reduce such coordinates
// modulo 2π in higher precision first). NaN or Inf is kNonFinite naming the array and index of
// the offending point (all types). Type 3 coordinates are not folded and have no such limit.
//
// Layout: complex values interleaved (std::complex<T>), column-major with x fastest:
//   mode array f of one transform: f[k1 + N1*(k2 + N2*k3)] (after mode ordering below),
//   strengths c of one transform:  c[j], j = 0..M-1,
//   ntransf transforms are stacked: transform t starts at t*N1*N2*N3 (modes) or t*M (points).
// modeord 0: increasing order, index k_d + N_d/2;  modeord 1: FFT order (0, 1, …, -N_d/2, …, -1).
//
// execute() applies the plan's type; execute_adjoint() applies the adjoint (conjugate
// transpose) of that same linear map: for a type 1 plan it is the type 2 transform with
// -isign, for a type 2 plan the type 1 transform with -isign, for a type 3 plan
// c[j] = sum_k f[k] exp(-isign * i * s_k.x_j). Points are shared.
//
// Type 3 (Greengard & Lee 2004; Barnett, Magland, af Klinteberg, SIAM J. Sci. Comput. 41(5),
// 2019, type 3 section): the sources are spread with the plan's kernel onto a periodic grid of
// nf points per dimension, chosen at set_points from the space-bandwidth product X·S of the
// points (half-widths X of x and S of s), then an inner type 2 transform evaluates that grid at
// the rescaled targets. Cost grows with X·S per dimension, not with M or nk alone. Where that
// grid would cost more than the M·nk·ntransf terms of the sums themselves (few points in a wide
// box: 10 sources and 10 targets spread over a box of X·S ~ 1e8 need a grid of ~1e8 points),
// set_points chooses the direct sums instead (PlanInfo::type3_direct; Options::type3_direct
// forces either path; the cost model is in src/core/type3.cpp). The direct sums are computed in
// double with each phase s_k·x_j reduced modulo 2π, so they are exact to the rounding of the
// phases, about 1.1e-16·max|s_k·x_j|; automatic choice takes them only where that is below eps.
//
// Accuracy: eps is a relative l2 error target for each transform, in [min_eps<T>(), 1]. Below
// min_eps<T>() the rounding of T dominates: kEpsTooSmall. Above 1 it is no tolerance (an error
// larger than the result), and eps <= 0, NaN or Inf are none either: kInvalidArgument.
//
// Sign: isign is +1 or -1; any other value is kInvalidArgument. (FINUFFT maps any isign >= 0 to
// +1 and < 0 to -1; fieldft's finufft/cufinufft compatibility layers in Python keep that.)
//
// Spread/interpolate-only plans (Options::spread_interp_only; FINUFFT's spreadinterponly): the
// plan keeps only the kernel stage of types 1 and 2 — no FFT, no deconvolution, no upsampling —
// for gridding, density compensation (mri/density.hpp) and the like. The "modes" are then a
// periodic grid of exactly N_d cells per dimension: a point x (radians, folded as above) sits at
// grid coordinate u = N_d·x/(2π) mod N_d, and cell l at x = 2πl/N_d. With ψ(t) = φ(2t/w) the
// plan's kernel in cells (detail/kernel.hpp: the ES kernel φ of width w = PlanInfo::kernel_width
// and shape β = PlanInfo::kernel_beta, evaluated through its piecewise polynomial, within eps/10
// of φ), the periodic distance d_N(l, u) = l − u reduced into [−N/2, N/2), and
// Ψ_j(l) = Π_d ψ(d_{N_d}(l_d, u_{j,d})):
//   type 1 (spread):       f[l] = Σ_j c[j] Ψ_j(l)
//   type 2 (interpolate):  c[j] = Σ_l f[l] Ψ_j(l)
// The kernel is real, so each is the other's adjoint (execute_adjoint) and isign, still +1 or
// -1, has no effect. modeord places cell l in the array as it would place mode k = l (mod N):
// modeord 0 stores cell (p − ⌊N/2⌋) mod N at index p (the cell at x = 0 in the middle, cells at
// x = 2π(p − ⌊N/2⌋)/N increasing from about −π), modeord 1 stores cell p at index p. eps and
// upsampfac choose the kernel exactly as for a transform at that upsampling factor (upsampfac 0
// means 2 on every backend: no choice from the points), but the grid is not upsampled, and eps
// promises no accuracy (there is no transform to approximate). Refused with kInvalidArgument:
// type 3 (its spreading grid follows from the points), and N_d < 2w cells in any dimension (a
// footprint would wrap onto itself). PlanInfo::spread_interp_only reports the mode, and
// PlanInfo::fine_grid equals modes.
//
// Lifecycle: make_plan / Plan(...) -> set_points (sorts and precomputes, reused by every
// execute) -> execute / execute_adjoint any number of times -> destructor.
// A plan is not safe to use from two threads at once; different plans are independent.
#pragma once

#include <array>
#include <complex>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "fieldft/context.hpp"  // Backend, Context
#include "fieldft/error.hpp"

namespace fieldft {

// CPU threads, for nufft::Options::nthreads and mri::DftOptions::nthreads alike. A requested
// count n gives the OpenMP threads used: n = 0 → omp_get_max_threads(); n > 0 → n; both capped
// at max_cpu_threads() = min(4 × omp_get_num_procs(), omp_get_thread_limit()), since more only
// oversubscribe the processors (and tens of thousands abort inside the OpenMP runtime). n < 0 is
// kInvalidArgument naming the option. PlanInfo::nthreads reports the count a plan uses.
int max_cpu_threads() noexcept;
int cpu_threads_for(int requested);  // the rule above; throws kInvalidArgument for requested < 0

namespace nufft {

// How the non-uniform points meet the fine grid. The CPU backend has one race-free strategy
// (slab-owned spreading through per-tile subgrids, see src/cpu/spread_interp_impl.hpp) and
// accepts kAuto, kNuptsDriven or kPrecomputed (the same loops with the kernel weights computed
// once at set_points, see kPrecomputed); the CUDA backend implements all five (kPrecomputed with
// its one-thread-per-point kernels).
enum class Method : int {
  kAuto = 0,
  kNuptsDriven = 1,   // one thread per (sorted) point
  kSubproblem = 2,    // shared-memory subproblems, capped in size
  kOutputDriven = 3,  // a block owns an output tile, points are streamed through shared memory
  // Types 1 and 2: set_points evaluates each point's kernel weights once (per dimension the w
  // values ψ(cell − u), stored in T in sorted point order: PlanInfo::precomputed_bytes), and
  // every execute spreads and interpolates with them instead of evaluating the kernel (the same
  // values, from the same table in T: results agree with kNuptsDriven to rounding). Costs memory:
  // CPU dim·⌈w/L⌉·L values of T per point (L = 32 bytes / sizeof(T)), CUDA dim·w values of T per
  // point (device memory; the one-thread-per-point kernels of kNuptsDriven read them). Refused
  // with kTooLarge above Options::precompute_max_bytes. Type 3: kInvalidArgument. kAuto takes it
  // where Options::reuse says it pays (CPU; on CUDA never: measured, it does not pay there,
  // docs/tuning.md).
  kPrecomputed = 4,
};
const char* method_name(Method m) noexcept;  // "auto", "nupts", "subproblem", "output", "precomputed"
Method parse_method(const std::string& name);          // throws kInvalidArgument

enum class FftPlanning : int { kEstimate = 0, kMeasure = 1 };

// How a plan of type 1 or 2 chooses its configuration (Options::planning; docs/tuning.md,
// "Measured planning and wisdom"). Not to be confused with FftPlanning (FFTW's own planning).
//   kEstimate:  the planner's rules (docs/tuning.md), nothing timed.
//   kMeasure:   at set_points, the configuration stored in the wisdom for this problem's
//               signature (backend, device, type, dimensions, modes, precision, eps, ntransf,
//               M to a power of two, the fixed options); where there is none, every candidate
//               (method x upsampling factor x bins, over the knobs the options leave automatic)
//               is planned with the same points and timed, the fastest is kept, stored and used.
//   kRemeasure: as kMeasure, but times the candidates even where the wisdom has an entry and
//               replaces it (`fieldft tune`).
// Type 3 and spread/interpolate-only plans are always estimated (PlanInfo::configured_by says so).
enum class Planning : int { kEstimate = 0, kMeasure = 1, kRemeasure = 2 };
const char* planning_name(Planning p) noexcept;  // "estimate", "measure", "remeasure"
Planning parse_planning(const std::string& name);  // throws kInvalidArgument

// The CUDA backend's spreading kernel (PlanInfo::spread_kernel, chosen by the planner at
// set_points; docs/tuning.md). kNone: the CPU backend, or no points yet.
enum class SpreadKernel : int {
  kNone = 0,
  kNupts,            // one thread per sorted point, global atomics (Method::kNuptsDriven)
  kSubproblem,       // shared-memory subproblems (Method::kSubproblem)
  kTile,             // warp-owned tiles (Method::kOutputDriven), strides at run time
  kTileFixed,        // warp tiles of the default 3D bins, strides compiled in
  kTileFixedBulk,    // the same, tiles flushed by bulk row reductions (sm_90)
  kTileBoxes,        // warp tiles, points accumulated in 2x2x2 register boxes (3D, W <= 7)
  kTileBoxesFixed,   // the same at the default 3D bins
  kTensorCore,       // tiles built by tensor-core products (float 3D type 1, W <= 8, sm_80)
  kTensorCoreBulk,   // the same, flushed by bulk rows
};
// The CUDA backend's interpolation kernel (PlanInfo::interp_kernel).
enum class InterpKernel : int {
  kNone = 0,
  kNupts,  // one thread per sorted point gathering through L1
  kTile,   // 3D: from a shared-memory copy of each subproblem's tile
};
// The FFT of the fine grid on the CUDA backend (PlanInfo::fft).
enum class FftStrategy : int {
  kNone = 0,  // the CPU backend (FFTW), type 3's outer stage, or spread/interpolate only
  kWhole,     // one batched cuFFT plan over the whole grid
  kPruned,    // cuFFT pruned along the slowest axis (the slabs that hold modes)
};
const char* spread_kernel_name(SpreadKernel k) noexcept;  // "nupts", "tile-fixed-bulk", ...
const char* interp_kernel_name(InterpKernel k) noexcept;  // "none", "nupts", "tile"
const char* fft_strategy_name(FftStrategy f) noexcept;    // "none", "whole", "pruned"

// Tuning knobs of the CUDA backend, for benchmarks and diagnosis: each is -1 (automatic: the
// planner's rule, docs/tuning.md), 0 (never) or 1 (wherever the kernel applies); any other
// value is kInvalidArgument. The CPU backend ignores them.
struct Tuning {
  // 3D warp tiles added to the grid by bulk row reductions (cp.reduce.async.bulk, sm_90 and
  // later) rather than the threads' vector atomics. Automatic: below 0.3 points per fine cell.
  // 1: wherever the tile allows (the grid's rows hold whole 16-byte units).
  int bulk_rows = -1;
  // Float 3D type 1 warp tiles built by tensor-core products on 8x8x4 bins (kernel width <= 8,
  // sm_80 and later, automatic bins only). Automatic: below 0.3 points per fine cell.
  int tensor_cores = -1;
  // Type 1: the last FFT axis fused with the copy to the modes (2D and 3D grids whose last axis
  // is at most 512 cells with no prime factor above 5). Automatic and 1: wherever it fits; 0:
  // cuFFT over every axis and the plain mode copy.
  int mode_fft = -1;
};

// One options struct for both backends; fields of the other backend are ignored.
struct Options {
  Backend backend = Backend::kAuto;  // kAuto: CUDA when compiled in and a device is present
  Method method = Method::kAuto;
  int modeord = 0;                   // 0 increasing (CMCL) order, 1 FFT order
  // sigma, fine grid / modes, in [1.25, 2.25]; 0 = automatic: 2, except for types 1 and 2, where
  // the first set_points with points takes 2.25 when the points are dense and that narrows the
  // kernel (eps 1e-5: w 7 -> 6). Dense: on CUDA >= 0.3 points per cell of the sigma = 2 grid
  // (>= 0.1 for 3D type 2), on the CPU >= 0.3 in 3D and >= 1 in 1D and 2D. On CUDA, 3D type 1,
  // where the kernel keeps its sigma = 2 width at 1.6 with room to spare (eps 1e-1 ... 1e-5),
  // takes 1.6 below 0.22 points per cell (216^3 cells instead of 256^3 for 128^3 modes) and 2.25
  // from there. The fine grid is allocated once the factor is chosen (CUDA) or again (CPU).
  double upsampfac = 0.0;
  int max_batch = 0;                 // transforms processed together; 0 = automatic
  std::array<int, 3> bin_size{0, 0, 0};  // bin sizes in fine-grid cells (x, y, z); 0 = automatic
  // CPU
  int nthreads = 0;                  // OpenMP threads; 0 = omp_get_max_threads(); capped and
                                     // validated by cpu_threads_for (above), < 0 is an error.
                                     // The most the plan uses: each CPU stage (set_points,
                                     // spread/interpolate with FFT, type 3 direct sums) takes one
                                     // thread per ~1 ms of estimated single-thread work, at
                                     // least 1, so small transforms run on one thread (a busy
                                     // machine would otherwise make them wait for a time slice
                                     // per parallel region); docs/architecture.md,
                                     // "CPU threads of a NUFFT plan"
  FftPlanning fft_planning = FftPlanning::kEstimate;
  // The plan's configuration: the planner's estimate or measured (Planning above).
  Planning planning = Planning::kEstimate;
  // The wisdom file of planning kMeasure / kRemeasure (JSON, docs/tuning.md). Empty: the
  // environment variable FIELDFT_WISDOM when set and not empty (the one environment variable the
  // library reads, and only here), else no file: measured configurations are then kept in this
  // process only. A file that is missing is created; one that cannot be parsed is ignored (the
  // plan measures) and replaced when the result is stored. A path whose lock file
  // (path + ".lock") cannot be created is kInvalidArgument at set_points, before anything is
  // timed. Several processes may share one file: writes are serialised by flock on the lock file
  // and land by an atomic rename.
  std::string wisdom_path;
  // CUDA
  int device = 0;                    // CUDA device ordinal
  void* stream = nullptr;            // cudaStream_t; nullptr = the default stream
  // 3D output-driven spreading at kernel width <= 7: accumulate the points of each 2x2x2-cell
  // box in registers before adding them to the shared-memory tile. -1: when set_points finds
  // at least 1.2 points per fine-grid cell; 0: never; 1: always.
  int spread_boxes = -1;
  // Type 3: -1 (automatic): set_points takes the direct sums where they cost less than the grid
  // (see the top of this file); 0: always the grid; 1: always the direct sums (kEpsTooSmall where
  // the phases s_k·x_j are too large for double to resolve to eps).
  int type3_direct = -1;
  // Types 1 and 2: spread or interpolate only, on a grid of N_d cells (see the top of this
  // file); type 3 refuses it.
  bool spread_interp_only = false;
  // Expected number of execute / execute_adjoint calls per set_points (0 = unknown). The CPU
  // backend, with method kAuto, takes kPrecomputed for types 1 and 2 when reuse >= 8 (the
  // measured break-even with margin, docs/tuning.md "Precomputed kernel weights") and the
  // weights fit precompute_max_bytes; otherwise kNuptsDriven. The CUDA backend does not take
  // kPrecomputed automatically (measured no faster than its tile methods, docs/tuning.md).
  // Negative: kInvalidArgument.
  std::int64_t reuse = 0;
  // kPrecomputed: the most bytes the precomputed weights may take; 0 = automatic: a quarter of
  // the machine's physical memory (CPU) or of the device's free memory at set_points (CUDA).
  // Above it an explicit kPrecomputed is refused at set_points (kTooLarge, naming both sizes)
  // and kAuto keeps kNuptsDriven. Negative: kInvalidArgument.
  double precompute_max_bytes = 0;
  // The CUDA backend's knobs (above); the defaults are the planner's automatic choices.
  Tuning tuning{};
};

// Smallest accepted eps for precision T.
template <class T>
constexpr double min_eps() {
  // float: below ~1e-7 rounding of T dominates. double: 1e-14 is the smallest eps whose kernel
  // (designed for eps/2.5, see src/core/kernel_design.cpp) fits the widest kernel, w = 16.
  return sizeof(T) == sizeof(float) ? 1e-7 : 1e-14;
}

namespace detail {
template <class T>
class PlanImpl;  // backend implementation (src/core/plan_impl.hpp)
}

// Read-only facts about a plan, fixed at construction (points excepted). Type 3: `modes` is
// {1, 1, 1} (unused); fine_grid and the kernel fields describe the spreading stage, and
// fine_grid is set by set_points (it depends on the points). Automatic upsampfac (types 1 and 2):
// upsampfac, fine_grid, bin_size and the kernel fields are final after the first set_points with points.
struct PlanInfo {
  int type = 0;
  int dim = 0;
  std::array<std::int64_t, 3> modes{1, 1, 1};     // N1, N2, N3 (1 for unused dimensions)
  std::array<std::int64_t, 3> fine_grid{1, 1, 1};  // nf1, nf2, nf3
  int isign = 1;
  std::int64_t ntransf = 1;
  double eps = 0;
  double upsampfac = 0;
  int kernel_width = 0;       // w, fine-grid cells per dimension touched by each point
  double kernel_beta = 0;     // ES kernel shape parameter
  int horner_degree = 0;      // degree of the piecewise polynomial approximating the kernel
  int max_batch = 1;
  std::array<int, 3> bin_size{1, 1, 1};
  Backend backend = Backend::kCpu;
  Method method = Method::kAuto;
  int modeord = 0;
  std::int64_t num_points = 0;  // M, after set_points
  std::int64_t num_targets = 0; // type 3: nk, after set_points (0 for types 1 and 2)
  bool spread_boxes = false;    // CUDA: set_points chose register boxes (Options::spread_boxes)
  // CUDA: set_points chose tensor-core tiles: float 3D type 1 output-driven spreading at kernel
  // width <= 8 with fewer than 0.3 points per fine-grid cell (bins 8x8x4; automatic bins only)
  bool spread_tensor_cores = false;
  // Type 3: set_points chose the direct sums (Options::type3_direct); fine_grid is then {1, 1, 1}
  bool type3_direct = false;
  // Options::spread_interp_only: the plan only spreads (type 1) or interpolates (type 2) on a
  // grid of `modes` cells (fine_grid == modes; no FFT, no deconvolution)
  bool spread_interp_only = false;
  // CPU backend: the OpenMP threads the plan uses at most (Options::nthreads resolved and
  // capped, see cpu_threads_for; small stages use fewer, see Options::nthreads); 0 on CUDA
  int nthreads = 0;
  // Method kPrecomputed (as chosen by set_points): the bytes of the precomputed kernel weights of
  // the current points, host (CPU) or device (CUDA) memory (0 otherwise)
  std::int64_t precomputed_bytes = 0;
  // CUDA: the planner's configuration (src/core/nufft_planner.hpp; kNone / false on the CPU).
  // The spreading and interpolation kernels, sort sub-bins and subproblem size are set by
  // set_points (they depend on the points), the FFT strategy at construction.
  SpreadKernel spread_kernel = SpreadKernel::kNone;
  InterpKernel interp_kernel = InterpKernel::kNone;
  FftStrategy fft = FftStrategy::kNone;
  bool mode_fft = false;          // type 1 (as applied): the last FFT axis fused with the mode copy
  bool spread_bulk_rows = false;  // bulk tile rows allowed (spread_kernel says whether taken)
  std::array<int, 3> sub_bins{1, 1, 1};  // sort sub-bins
  std::int64_t subproblem_points = 0;    // points per subproblem at most
  // Every decision of the planner and why, one a line (`fieldft nufft --explain` prints it).
  std::string plan_reason;
  // Where the configuration came from (Options::planning): "estimate"; "measured now (N
  // candidates, best X ms vs the planner's Y ms)" plus where it was stored; "wisdom PATH" (or
  // "wisdom (this process)"). Also the first line of plan_reason's planning note.
  std::string configured_by = "estimate";
  // Planning kMeasure / kRemeasure that timed candidates at the last set_points: each candidate,
  // fastest first (empty otherwise). seconds: one execute plus, where reuse is given, set_points
  // divided by Options::reuse (see docs/tuning.md); the times are this run's, never stored.
  struct MeasuredCandidate {
    Method method = Method::kAuto;
    double upsampfac = 0;
    std::array<int, 3> bin_size{0, 0, 0};  // method, upsampfac and bins as the candidate ran
    double seconds = 0;
    bool planner_choice = false;  // the configuration kEstimate would have used
  };
  std::vector<MeasuredCandidate> measured;
  std::int64_t num_modes() const { return modes[0] * modes[1] * modes[2]; }
};

template <class T>
class Plan {
 public:
  using Complex = std::complex<T>;

  // type: 1, 2 or 3. modes: N_d for d = 1..dim (dim = modes.size(), 1 to 3); for type 3 only
  // modes.size() is used (it gives dim), the values are ignored. isign: +1 or -1 (anything else
  // is kInvalidArgument). ntransf >= 1. eps in [min_eps<T>(), 1] (see Accuracy above).
  //
  // The plan runs in `context` (fieldft/context.hpp): on the host with context.nthreads() OpenMP
  // threads (cpu_threads_for's rule, reported by PlanInfo::nthreads), or on CUDA device d with
  // all its device work on the context's stream. The context overrides options.backend, device,
  // stream and nthreads; the plan keeps a copy, so an owned stream lives as long as the plan.
  // On a device, execute / execute_adjoint with device pointers are stream-ordered: they enqueue
  // and return (context().synchronize() before reading the result); with host pointers they
  // stage through device memory and return when the result is on the host.
  Plan(int type, std::span<const std::int64_t> modes, int isign, std::int64_t ntransf, double eps,
       const Context& context, const Options& options = {});
  // The context the options describe: Context::from_options(backend, device, stream, nthreads,
  // own_stream = false), i.e. options.stream when given, else the legacy default stream.
  Plan(int type, std::span<const std::int64_t> modes, int isign, std::int64_t ntransf, double eps,
       const Options& options = {});
  ~Plan();
  Plan(Plan&&) noexcept;
  Plan& operator=(Plan&&) noexcept;
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;

  // Types 1 and 2: m points with coordinates x (and y for dim >= 2, z for dim 3); the arrays
  // are read during this call only (the plan keeps its own sorted copy). m = 0 is valid: type 1
  // then yields zeros and type 2 writes nothing. Throws kNonFinite naming the first bad index,
  // and kInvalidArgument naming the first coordinate beyond the fold limit (see the top).
  // On a type 3 plan: kInvalidArgument (use the overload below).
  void set_points(std::int64_t m, const T* x, const T* y = nullptr, const T* z = nullptr);

  // Type 3 only: m sources (x, y, z as above) and nk targets with coordinates s (and t for
  // dim >= 2, u for dim 3). m = 0 or nk = 0 is valid (the sums are then zero or empty). Same
  // validation as above (arrays named x, y, z, s, t, u). Computes the grid size, the rescaled
  // points and the phase and deconvolution factors once; on the CUDA backend, device-pointer
  // coordinates are copied to the host once here (execute never does). On a type 1 or 2 plan:
  // kInvalidArgument.
  void set_points(std::int64_t m, const T* x, const T* y, const T* z, std::int64_t nk, const T* s,
                  const T* t = nullptr, const T* u = nullptr);

  // type 1: in = c (ntransf × M), out = f (ntransf × N).  type 2: in = f, out = c.
  // type 3: in = c (ntransf × M), out = f (ntransf × nk).
  void execute(const Complex* in, Complex* out);
  // the adjoint of execute: type 1 plan: in = f, out = c.  type 2 plan: in = c, out = f.
  // type 3 plan: in = f (ntransf × nk), out = c (ntransf × M).
  void execute_adjoint(const Complex* in, Complex* out);

  const PlanInfo& info() const;
  // Where the plan runs (see the constructors).
  const Context& context() const noexcept { return context_; }

 private:
  Context context_;  // declared first: destroyed after the backend that uses its stream
  std::unique_ptr<detail::PlanImpl<T>> impl_;
};

template <class T>
Plan<T> make_plan(int type, std::span<const std::int64_t> modes, int isign, std::int64_t ntransf,
                  double eps, const Options& options = {}) {
  return Plan<T>(type, modes, isign, ntransf, eps, options);
}

extern template class Plan<float>;
extern template class Plan<double>;

}  // namespace nufft
}  // namespace fieldft
