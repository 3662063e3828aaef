// fieldft::mri::choose_field_model (fieldft/mri/field_model.hpp): the exact DFT or time
// segmentation (with or without the field-corrected Toeplitz normal) by predicted cost.
#include "fieldft/mri/field_model.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numbers>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "core/kernel_design.hpp"
#include "core/plan_setup.hpp"
#include "core/time_segmentation.hpp"
#include "core/toeplitz.hpp"
#include "fieldft/error.hpp"
#include "fieldft/nufft.hpp"
#include "toeplitz_psf.hpp"

namespace fieldft::mri {

namespace {

// ---- throughput constants (docs/benchmarks.md; docs/architecture.md, "Choice by cost") --------
//
// The field-corrected DFT, image·voxel·sample pairs per second ("Field-corrected DFT"):
//   CPU, float, per core: 2.5e9 (1.5e9–2.5e9 on one thread across sessions, "Field-corrected
//   DFT"; 3.2e9 per core in R4's CPU row; 2.1e9–2.6e9 in `fieldft recon` on 32²–48² spirals on
//   the loaded 2-core development machine, session 17); double is taken as half (half the SIMD
//   lanes; not measured).
//   H100, float: 2.0e12 for one image, the tensor-core path 4.3e12 for 4 images, 7.3e12 for 8,
//   1.09e13 for 32 (log-linear between them); double 5.5e11.
constexpr double kDftPairsPerCoreCpu = 2.5e9;
constexpr double kDftGpuDouble = 5.5e11;
struct RatePoint {
  double images, pairs_per_second;
};
constexpr RatePoint kDftGpuFloat[] = {{1, 2.0e12}, {4, 4.3e12}, {8, 7.3e12}, {32, 1.09e13}};
// FFT work in the units of src/core/toeplitz.hpp (one complex element through one butterfly stage)
// per second: CPU per core 3.2e9 ("Toeplitz normal operator (CPU)": ToeplitzNormal::apply on 8
// images of 256², 7.9e6 units each, in 19.8 ms on one thread); H100 2.1e12 (R1's fused SENSE
// Toeplitz normal, 32 images in 0.118 ms, "Reconstruction R1").
// On CUDA outside the fused geometry (core::fused_toeplitz_geometry: 3D other than a stack with
// power-of-two 2N_x and 2N_y, or 2D sizes that are not powers of two) the cuFFT path:
// 7.5e11 (R3's uncorrected 3D SENSE Toeplitz normal, 8 coils of 128³, 5.2e8 units each, in
// 5.6 ms per iteration, bench/recon/field.py, session 17).
constexpr double kFftUnitsPerCoreCpu = 3.2e9;
constexpr double kFftUnitsGpu = 2.1e12;
constexpr double kFftUnitsGpuCufft = 7.5e11;
// Spreading and interpolation, kernel cells (w^d per sample) per second: what remains of the
// NUFFT pair's time after its FFTs at the rate above. CPU per core 5e8 ("Toeplitz normal operator
// (CPU)": the NUFFT pair with measured FFT plans, 8 images, 65,536 samples: 88 ms at eps 1e-3 (w =
// 5) and 111 ms at 1e-5 (w = 7) give 4.2e8 and 6.0e8); H100 2e11 (R1's pair over 32 images in
// 0.81 ms gives 1.6e11, R2's time-segmented pair over 56 images in 1.5 ms about 2.4e11).
constexpr double kSpreadCellsPerCoreCpu = 5e8;
constexpr double kSpreadCellsGpu = 2e11;
// Set-up per kernel of the field-corrected Toeplitz normal at 2N = 512² (scaled with the padded
// grid): H100 7.8 ms (R2: L' = 10 kernels in 77.8 ms); CPU 0.24 s (the CPU Toeplitz set-up of one
// 512² kernel, 237 ms with FFTW wisdom). Per plan of a NUFFT or DFT encoding (per shot): a fixed
// cost, about R2's and R4's set-up columns (H100: 5 ms NUFFT, 2 ms DFT; the CPU alike).
constexpr double kKernelSetupGpu = 7.8e-3, kKernelSetupCpu = 0.24, kKernelSetupCells = 512.0 * 512.0;
constexpr double kNufftPlanSetup = 5e-3, kDftPlanSetup = 2e-3;
// The host design of an interpolator (src/core/time_segmentation.cpp), in complex multiply-adds:
// each L tried is screened at <= 129 times (2·P·l each, P <= 2·bins + 1 evaluation points, which
// are the fit's points too) after an l×l Gram matrix over the P points, and the chosen L is
// evaluated at all D distinct times: 2·D·P·L + 129·P·L² + P·L³/3 in all. 2.5e8 per second and
// core: measured on the 2-core development machine (1.8e8–3e8 for R2's L = 9 and L' = 28 designs,
// one thread). Predicted, not measured here, so that the choice is the same on every run. The
// chooser's own planning is not counted: it is spent whichever candidate wins.
constexpr double kDesignOpsPerCore = 2.5e8;
double design_seconds(const core::TimeSegmentationDesign& d, int threads) {
  const double dd = static_cast<double>(d.times.values.size()), p = 2.0 * static_cast<double>(d.field_bins) + 1;
  const double l = d.segments;
  return (2 * dd * p * l + 129 * p * l * l + p * l * l * l / 3) / (kDesignOpsPerCore * threads);
}
constexpr double kUpsampling = 2.0;        // the NUFFT's fine grid (the CPU default; CUDA may pick less)
constexpr int kDifferenceQuantiles = 256;  // as FieldToeplitzNormal's difference design

struct Machine {
  bool gpu = false;
  int threads = 1;
  bool double_precision = false;
  double fft_rate() const { return gpu ? kFftUnitsGpu : kFftUnitsPerCoreCpu * threads; }
  double spread_rate() const { return gpu ? kSpreadCellsGpu : kSpreadCellsPerCoreCpu * threads; }
  double dft_rate(std::int64_t images) const {
    if (!gpu) return kDftPairsPerCoreCpu * threads * (double_precision ? 0.5 : 1.0);
    if (double_precision) return kDftGpuDouble;
    const double b = static_cast<double>(images);
    const auto& t = kDftGpuFloat;
    const std::size_t n = std::size(t);
    if (b <= t[0].images) return t[0].pairs_per_second;
    for (std::size_t i = 1; i < n; ++i)
      if (b <= t[i].images) {
        const double a = std::log(b / t[i - 1].images) / std::log(t[i].images / t[i - 1].images);
        return t[i - 1].pairs_per_second * std::pow(t[i].pairs_per_second / t[i - 1].pairs_per_second, a);
      }
    return t[n - 1].pairs_per_second;
  }
  double kernel_setup(double padded_cells) const {
    return (gpu ? kKernelSetupGpu : kKernelSetupCpu) * std::max(1.0, padded_cells / kKernelSetupCells);
  }
};

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}
// "1.4 ms", "2.35 s", "12 µs", "51 ns"
std::string seconds(double s) {
  if (!std::isfinite(s)) return "inf";
  if (s >= 1) return fmt("%.3g s", s);
  if (s >= 1e-3) return fmt("%.3g ms", s * 1e3);
  if (s >= 1e-6) return fmt("%.3g µs", s * 1e6);
  return fmt("%.3g ns", s * 1e9);
}
// 65,536
std::string grouped(std::int64_t v) {
  std::string s = std::to_string(v), out;
  const int n = static_cast<int>(s.size());
  for (int i = 0; i < n; ++i) {
    out += s[static_cast<std::size_t>(i)];
    if ((n - 1 - i) % 3 == 0 && i + 1 < n) out += ',';
  }
  return out;
}

double full_fft_units(double cells) { return cells > 1 ? cells * std::log2(cells) : 0.0; }

// The samples of each shot (their times), one entry per shot; one entry for all when !per_shot.
std::vector<std::vector<double>> shot_times(const FieldModelProblem& p) {
  if (!p.per_shot || p.shots.empty()) return {std::vector<double>(p.times.begin(), p.times.end())};
  std::int32_t shots = 0;
  for (auto s : p.shots) shots = std::max(shots, s + 1);
  std::vector<std::vector<double>> out(static_cast<std::size_t>(shots));
  std::vector<std::int64_t> count(static_cast<std::size_t>(shots), 0);
  for (auto s : p.shots) ++count[static_cast<std::size_t>(s)];
  for (std::int32_t s = 0; s < shots; ++s)
    require(count[static_cast<std::size_t>(s)] > 0, ErrorCode::kInvalidArgument,
            "choose_field_model: shot " + std::to_string(s) + " has no samples (labels run 0 … " +
                std::to_string(shots - 1) + "); expected every label to mark at least one sample");
  for (std::size_t j = 0; j < p.shots.size(); ++j)
    out[static_cast<std::size_t>(p.shots[j])].push_back(p.times.empty() ? 0.0 : p.times[j]);
  return out;
}

void check(const FieldModelProblem& p, const FieldModelOptions& o) {
  const std::string who = "choose_field_model: ";
  require(std::isfinite(o.accuracy) && o.accuracy > 0, ErrorCode::kInvalidArgument,
          who + "accuracy is " + fmt("%g", o.accuracy) + ", expected a finite value > 0 (e.g. 1e-3)");
  require(std::isfinite(o.eps) && o.eps > 0, ErrorCode::kInvalidArgument,
          who + "eps is " + fmt("%g", o.eps) + ", expected a finite value > 0 (the NUFFT's tolerance)");
  require(o.iterations >= 1, ErrorCode::kInvalidArgument,
          who + "iterations is " + std::to_string(o.iterations) + ", expected >= 1");
  require(o.max_segments >= 1 && o.max_segments <= core::kMaxSegmentsLimit, ErrorCode::kInvalidArgument,
          who + "max_segments is " + std::to_string(o.max_segments) + ", expected 1 … " +
              std::to_string(core::kMaxSegmentsLimit));
  require(o.threads >= 0, ErrorCode::kInvalidArgument,
          who + "threads is " + std::to_string(o.threads) + ", expected >= 0 (0: all)");
  require(o.backend == Backend::kCpu || o.backend == Backend::kCuda, ErrorCode::kInvalidArgument,
          who + "backend is " + backend_name(o.backend) + ", expected kCpu or kCuda");
  require(p.grid.size() == 2 || p.grid.size() == 3, ErrorCode::kShapeMismatch,
          who + "the grid has " + std::to_string(p.grid.size()) + " axes, expected 2 or 3 ({Nx, Ny[, Nz]})");
  std::int64_t voxels = 1;
  for (auto n : p.grid) {
    require(n >= 1, ErrorCode::kShapeMismatch, who + "a grid size is " + std::to_string(n) + ", expected >= 1");
    voxels *= n;
  }
  require(p.samples >= 1, ErrorCode::kInvalidArgument,
          who + "samples is " + std::to_string(p.samples) + ", expected >= 1");
  require(p.coils >= 1, ErrorCode::kInvalidArgument, who + "coils is " + std::to_string(p.coils) + ", expected >= 1");
  require(p.field.empty() || static_cast<std::int64_t>(p.field.size()) == voxels, ErrorCode::kShapeMismatch,
          who + "the field map has " + std::to_string(p.field.size()) + " values, expected " + std::to_string(voxels) +
              " (one per voxel) or none");
  require(p.times.empty() || static_cast<std::int64_t>(p.times.size()) == p.samples, ErrorCode::kShapeMismatch,
          who + "times has " + std::to_string(p.times.size()) + " values, expected " + std::to_string(p.samples) +
              " (one per sample) or none");
  require(p.shots.empty() || static_cast<std::int64_t>(p.shots.size()) == p.samples, ErrorCode::kShapeMismatch,
          who + "the shot labels have " + std::to_string(p.shots.size()) + " values, expected " +
              std::to_string(p.samples) + " (one per sample) or none");
  for (std::size_t i = 0; i < p.field.size(); ++i)
    require(std::isfinite(p.field[i]), ErrorCode::kNonFinite, [&] {
      return std::string(who + "field[" + std::to_string(i) + "] is " + fmt("%g", p.field[i]) +
                         ", expected a finite value in rad/s");
    });
  for (std::size_t i = 0; i < p.times.size(); ++i)
    require(std::isfinite(p.times[i]), ErrorCode::kNonFinite, [&] {
      return std::string(who + "times[" + std::to_string(i) + "] is " + fmt("%g", p.times[i]) +
                         ", expected a finite value in s");
    });
  for (std::size_t i = 0; i < p.shots.size(); ++i)
    require(p.shots[i] >= 0, ErrorCode::kInvalidArgument, [&] {
      return std::string(who + "shot label " + std::to_string(p.shots[i]) + " at sample " + std::to_string(i) +
                         ", expected >= 0");
    });
}

constexpr double kInfinity = std::numeric_limits<double>::infinity();

}  // namespace

FieldModelChoice choose_field_model(const FieldModelProblem& p, const FieldModelOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  check(p, o);
  FieldModelChoice c;
  c.dft.total_seconds = c.segmented.total_seconds = c.segmented_toeplitz.total_seconds = kInfinity;
  auto finish = [&] {
    c.planning_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return c;
  };
  if (p.field.empty()) {
    c.encoding = EncodingKind::kNufft;
    c.reason = "NUFFT: no field map, nothing for the DFT or time segmentation to correct";
    return finish();
  }

  Machine m;
  m.gpu = o.backend == Backend::kCuda;
  const int host_threads = cpu_threads_for(o.threads);
  m.threads = m.gpu ? 1 : host_threads;
  m.double_precision = o.double_precision;
  const int dim = static_cast<int>(p.grid.size());
  double voxels = 1;
  for (auto n : p.grid) voxels *= static_cast<double>(n);
  const double coils = static_cast<double>(p.coils);
  const double iterations = o.iterations;
  const auto per_shot = shot_times(p);
  const double shots = static_cast<double>(per_shot.size());

  // The exact DFT: 2·C·M·N pairs per normal (forward and adjoint), batched over the coils.
  const double dft_rate = m.dft_rate(p.coils);
  c.dft.feasible = true;
  c.dft.iteration_seconds = 2 * coils * static_cast<double>(p.samples) * voxels / dft_rate;
  c.dft.setup_seconds = shots * kDftPlanSetup;
  c.dft.total_seconds = c.dft.setup_seconds + iterations * c.dft.iteration_seconds;
  c.dft.note = grouped(static_cast<std::int64_t>(voxels)) + " voxels × " + grouped(p.samples) + " samples × " +
               grouped(p.coils) + (p.coils == 1 ? " coil" : " coils") + " at " + fmt("%.2g", dft_rate) + " pairs/s";

  // Time segmentation: L (and L') per distinct set of shot times, as the operators plan them.
  core::TimeSegmentationRequest req;
  req.field = p.field;
  req.accuracy = o.accuracy;
  req.max_segments = o.max_segments;
  req.interpolator = static_cast<core::SegmentInterpolator>(o.interpolator);
  req.nthreads = o.threads;
  std::vector<double> differences;  // the field difference's sample (FieldToeplitzNormal's design)
  core::ToeplitzGeometry g;
  g.dim = dim;
  for (int d = 0; d < dim; ++d) {
    g.n[d] = p.grid[static_cast<std::size_t>(d)];
    g.periodic[d] = p.periodic[static_cast<std::size_t>(d)];
  }
  g.stacked = p.stacked && dim >= 2 && g.periodic[static_cast<std::size_t>(dim - 1)];
  // The field-corrected Toeplitz normal runs on every backend and grid (CUDA: fused in 2D and on
  // 3D stacks for 2N_x, 2N_y powers of two, else the slower cuFFT path).
  const bool toeplitz_runs = o.plan_toeplitz;
  const double toeplitz_fft_rate = m.gpu && !core::fused_toeplitz_geometry(g) ? kFftUnitsGpuCufft : m.fft_rate();
  if (toeplitz_runs) differences = core::field_difference_sample(p.field, kDifferenceQuantiles, o.threads);

  const int width = core::kernel_width_for(o.eps, kUpsampling);
  double fine = 1, footprint = 1;
  for (int d = 0; d < dim; ++d) {
    fine *= static_cast<double>(core::next_smooth(static_cast<std::int64_t>(std::ceil(kUpsampling * p.grid[d]))));
    footprint *= width;
  }
  const double pair_fft = 2 * (full_fft_units(fine) + fine);  // forward and adjoint fine-grid FFT and copy
  const double padded = static_cast<double>(g.padded_cells());
  const double toeplitz_units = 2 * core::toeplitz_fft_units(g) + 3 * padded;

  bool segmented_ok = true, toeplitz_ok = toeplitz_runs;
  std::string segmented_note,
      toeplitz_note = toeplitz_runs ? "" : "not planned";
  double ts_iter = 0, ts_setup = 0, tt_iter = 0, tt_setup = 0;
  std::vector<const std::vector<double>*> seen;
  struct Planned {
    int l = 0, lt = 0;                // L and L'
    double design = 0, design_t = 0;  // their designs' predicted seconds
  };
  std::vector<Planned> seen_segments;  // of each distinct set of times
  for (const auto& times : per_shot) {
    const double ms = static_cast<double>(times.empty() ? p.samples : static_cast<std::int64_t>(times.size()));
    int l = 0, lt = 0;
    double design = 0, design_t = 0;
    for (std::size_t i = 0; i < seen.size(); ++i)
      if (*seen[i] == times) {
        const Planned& q = seen_segments[i];
        std::tie(l, lt, design, design_t) = std::tie(q.l, q.lt, q.design, q.design_t);
      }
    if (l == 0 && segmented_ok) {
      req.times = times;
      req.samples = static_cast<std::int64_t>(ms);
      try {
        const auto d = core::design_time_segmentation(req);
        l = d.segments;
        design = design_seconds(d, host_threads);
        c.worst_error = std::max(c.worst_error, d.interpolation.worst_error);
      } catch (const Error& e) {
        if (e.code() != ErrorCode::kInvalidArgument) throw;
        segmented_ok = toeplitz_ok = false;
        segmented_note = e.what();
      }
      if (segmented_ok && toeplitz_ok) {
        core::TimeSegmentationRequest rt = req;
        rt.field = differences;
        rt.interpolator = core::SegmentInterpolator::kLeastSquares;  // as FieldToeplitzNormal's
        rt.max_segments = std::min(core::kMaxSegmentsLimit, std::max(128, 2 * o.max_segments));
        try {
          const auto dt = core::design_time_segmentation(rt);
          lt = dt.segments;
          design_t = design_seconds(dt, host_threads);
        } catch (const Error& e) {
          if (e.code() != ErrorCode::kInvalidArgument) throw;
          toeplitz_ok = false;
          toeplitz_note =
              "no L' up to " + std::to_string(rt.max_segments) + " reaches the accuracy for the field difference";
        }
      }
      seen.push_back(&times);
      seen_segments.push_back({l, lt, design, design_t});
    }
    if (!segmented_ok) break;
    c.segments = std::max(c.segments, l);
    c.toeplitz_segments = std::max(c.toeplitz_segments, lt);
    // L·C NUFFT pairs, and the expand and combine passes (about one unit per value each way).
    const double images = l * coils;
    ts_iter += images * (pair_fft / m.fft_rate() + 2 * ms * footprint / m.spread_rate()) +
               images * 2 * (voxels + ms) / m.fft_rate();
    ts_setup += kNufftPlanSetup + design;  // each shot's encoding designs its own interpolator
    if (toeplitz_ok) {
      tt_iter += coils * lt * toeplitz_units / toeplitz_fft_rate;
      tt_setup += kNufftPlanSetup + design + design_t + lt * m.kernel_setup(static_cast<double>(g.kernel_cells()));
    }
  }
  if (segmented_ok) {
    c.segmented.feasible = true;
    c.segmented.iteration_seconds = ts_iter;
    c.segmented.setup_seconds = ts_setup;
    c.segmented.total_seconds = c.segmented.setup_seconds + iterations * ts_iter;
    c.segmented.note = "L = " + std::to_string(c.segments) + ": " + std::to_string(c.segments) + " × " +
                       grouped(p.coils) + " NUFFT pairs" + (shots > 1 ? " per shot" : "");
  } else {
    c.segmented.note = segmented_note;
  }
  if (segmented_ok && toeplitz_ok) {
    c.segmented_toeplitz.feasible = true;
    c.segmented_toeplitz.iteration_seconds = tt_iter;
    c.segmented_toeplitz.setup_seconds = tt_setup;
    c.segmented_toeplitz.total_seconds = c.segmented_toeplitz.setup_seconds + iterations * tt_iter;
    c.segmented_toeplitz.note =
        "L' = " + std::to_string(c.toeplitz_segments) + ": " + std::to_string(c.toeplitz_segments) + " × " +
        grouped(p.coils) + " padded FFT pairs on " + core::toeplitz_grid_string(g) + (shots > 1 ? " per shot" : "");
  } else {
    c.segmented_toeplitz.note = segmented_ok ? toeplitz_note : "time segmentation does not reach the accuracy";
  }

  // The cheapest over `iterations` normals and the set-up.
  const FieldModelCandidate* best = &c.dft;
  if (c.segmented.total_seconds < best->total_seconds) best = &c.segmented;
  if (c.segmented_toeplitz.total_seconds < best->total_seconds) best = &c.segmented_toeplitz;
  c.encoding = best == &c.dft ? EncodingKind::kDft : EncodingKind::kTimeSegmented;
  c.toeplitz = best == &c.segmented_toeplitz;
  const std::string per = " per iteration";
  const std::string totals =
      "; " + std::to_string(o.iterations) + " iterations with set-up: " + seconds(best->total_seconds) + " against ";
  if (best == &c.dft) {
    if (!segmented_ok) {
      c.reason = "exact DFT: time segmentation cannot reach the accuracy " + fmt("%g", o.accuracy) + " (" +
                 segmented_note + "); predicted " + seconds(c.dft.iteration_seconds) + per + " (" + c.dft.note + ")";
    } else {
      const FieldModelCandidate& other =
          c.segmented_toeplitz.total_seconds < c.segmented.total_seconds ? c.segmented_toeplitz : c.segmented;
      c.reason = "exact DFT: predicted " + seconds(c.dft.iteration_seconds) + per + " (" + c.dft.note + ") against " +
                 seconds(other.iteration_seconds) + " for time segmentation (" + other.note + ")" + totals +
                 seconds(other.total_seconds);
    }
  } else {
    c.reason =
        "time segmentation, L = " + std::to_string(c.segments) +
        (c.toeplitz ? ", Toeplitz normal (L' = " + std::to_string(c.toeplitz_segments) + ")" : ", NUFFT-pair normal") +
        ": predicted " + seconds(best->iteration_seconds) + per + " against " + seconds(c.dft.iteration_seconds) +
        " for the exact DFT (" + c.dft.note + ")" + totals + seconds(c.dft.total_seconds);
    if (!c.toeplitz && c.segmented_toeplitz.feasible)
      c.reason += "; Toeplitz predicted " + seconds(c.segmented_toeplitz.total_seconds) + " with set-up";
    else if (!c.toeplitz)
      c.reason += "; no Toeplitz normal: " + c.segmented_toeplitz.note;
  }
  return finish();
}

template <class T>
FieldModelChoice choose_field_model(const Encoding<T>& e, std::int64_t coils, bool per_shot,
                                    FieldModelOptions options) {
  const std::vector<double> field(e.field().begin(), e.field().end());
  const std::vector<double> times(e.times().begin(), e.times().end());
  FieldModelProblem p;
  p.grid.assign(e.grid().begin(), e.grid().begin() + e.dim());
  p.field = field;
  p.times = times;
  p.shots = e.shots();
  p.samples = e.num_samples();
  p.coils = coils;
  p.per_shot = per_shot;
  p.periodic = detail::periodic_axes(e, options.eps, true);  // as the Toeplitz normals decide
  p.stacked = detail::stacked_last_axis(e, p.periodic, {}, true, true);
  return choose_field_model(p, options);
}

template FieldModelChoice choose_field_model<float>(const Encoding<float>&, std::int64_t, bool, FieldModelOptions);
template FieldModelChoice choose_field_model<double>(const Encoding<double>&, std::int64_t, bool, FieldModelOptions);

}  // namespace fieldft::mri
