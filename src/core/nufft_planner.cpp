// The CUDA NUFFT planner (nufft_planner.hpp). Every rule here is the one the CUDA backend ran
// before it was gathered into one place; docs/tuning.md lists each with its measurements.
#include "core/nufft_planner.hpp"

#include <algorithm>
#include <limits>
#include <span>
#include <sstream>
#include <type_traits>

#include "core/dispatch.hpp"
#include "core/kernel_design.hpp"
#include "fieldft/detail/tile_layout.hpp"

namespace fieldft::core {

namespace {

std::string bins_text(const std::array<int, 3>& b, int dim) {
  std::string s;
  for (int d = 0; d < dim; ++d) {
    if (d) s += 'x';  // two appends: GCC 12 warns (-Wrestrict, falsely) on "x" + std::string
    s += std::to_string(b[d]);
  }
  return s;
}

std::string kib(std::size_t bytes) {
  std::ostringstream os;
  os.precision(3);
  os << static_cast<double>(bytes) / 1024.0 << " KiB";
  return os.str();
}

// The FFT of types 1 and 2 on grid nf: whole for 1D, grids under kPrunedFftCells and grids
// whose modes fill the slowest axis; else pruned along the slowest axis.
nufft::FftStrategy grid_fft(int dim, const std::array<std::int64_t, 3>& nf, const std::array<std::int64_t, 3>& modes) {
  std::int64_t size = 1;
  for (int d = 0; d < dim; ++d) size *= nf[d];
  const int last = dim - 1;
  const std::int64_t ends = modes[last] - modes[last] / 2;
  if (dim == 1 || size < kPrunedFftCells || 2 * ends >= nf[last]) return nufft::FftStrategy::kWhole;
  return nufft::FftStrategy::kPruned;
}

}  // namespace

std::vector<int> mode_fft_radices(std::int64_t n) {
  std::vector<int> r;
  for (const int f : kModeFftRadices)
    while (n > 1 && n % f == 0) {
      r.push_back(f);
      n /= f;
    }
  if (n != 1 || r.size() > static_cast<std::size_t>(kModeFftMaxRadices)) r.clear();
  return r;
}

template <class T>
std::size_t warp_tile_bytes(int dim, const int* bin, int width) {
  std::size_t n = 0;
  dispatch_width(width, [&]<int W>() {
    constexpr bool kPacked = detail::packed_rows<3, W, detail::kTileWarps>();
    n = std::max({detail::spread_tile_bytes<T, W, false>(dim, bin), detail::spread_tile_bytes<T, W, kPacked>(dim, bin),
                  detail::spread_tile_bytes<T, W, kPacked, true>(dim, bin)});
  });
  return n;
}

std::array<int, 3> sort_sub_bins(int dim, nufft::Method method, bool boxes, const std::array<int, 3>& bins) {
  const bool tiles3d = dim == 3 && !nupts_driven(method);
  const std::array<int, 3> sub = boxes || tiles3d ? std::array<int, 3>{2, 2, 2}
                                 : dim == 3       ? std::array<int, 3>{16, 4, 2}
                                 : dim == 2       ? std::array<int, 3>{8, 4, 1}
                                                  : std::array<int, 3>{bins[0], 1, 1};
  std::array<int, 3> s{};
  for (int d = 0; d < 3; ++d) {
    s[d] = std::max(1, std::min(sub[d], bins[d]));
    while (bins[d] % s[d] != 0) --s[d];
  }
  return s;
}

template <class T>
GridConfig plan_grid(const PlanSetup& setup, const DeviceCaps& caps) {
  const nufft::PlanInfo& info = setup.info;
  const nufft::Options& opt = setup.options;
  GridConfig g;
  std::ostringstream why;
  g.max_batch = static_cast<int>(opt.max_batch > 0 ? std::min<std::int64_t>(opt.max_batch, info.ntransf)
                                                   : std::min<std::int64_t>(info.ntransf, kDefaultMaxBatch));
  why << "batch " << g.max_batch
      << (opt.max_batch > 0 ? " (Options::max_batch)" : " (min(ntransf, 8): the grids of a batch share the sort)")
      << "\n";
  const int w = info.kernel_width;
  const int dim = info.dim;
  // Bins: square tiles in 2D, flat bricks in 3D, trimmed until the method's shared-memory tile
  // fits its budget: kSubproblemSmem when chosen automatically (several blocks per SM), the
  // device's opt-in maximum less the kernels' static arrays when requested.
  std::array<int, 3> defaults = dim == 1   ? std::array<int, 3>{1024, 1, 1}
                                : dim == 2 ? std::array<int, 3>{32, 32, 1}
                                           : std::array<int, 3>{16, 8, 8};
  for (int d = 0; d < dim; ++d)
    if (opt.bin_size[d] > 0) defaults[d] = opt.bin_size[d];
  auto tile_bytes = [&](nufft::Method m, const std::array<int, 3>& b) {
    return m == nufft::Method::kOutputDriven ? warp_tile_bytes<T>(dim, b.data(), w)
                                             : detail::subproblem_tile_bytes<T>(dim, b.data(), w);
  };
  struct Fit {
    std::array<int, 3> bins;
    bool fits;
    double padding;  // tile cells per bin cell: each tile is zeroed and added to the grid whole
    std::size_t bytes;
  };
  auto fit = [&](nufft::Method m, std::size_t budget) {
    std::array<int, 3> b = defaults;
    // Warp tiles in 3D (types 1 and 3 spread): thinner bricks, more blocks per SM; type 2 only
    // interpolates, from tiles loaded once, and keeps the deeper bins (less halo per point).
    if (m == nufft::Method::kOutputDriven && dim == 3 && info.type != 2 && opt.bin_size[2] <= 0)
      b[2] = detail::kTileBins[2];
    while (tile_bytes(m, b) > budget && (b[0] > 4 || b[2] > 1)) {
      if (dim == 3 && b[2] > 1) b[2] /= 2;
      else
        for (int d = 0; d < std::min(dim, 2); ++d) b[d] = std::max(4, b[d] / 2);
    }
    std::int64_t cells = 1;
    for (int d = 0; d < dim; ++d) cells *= b[d];
    const std::size_t bytes = tile_bytes(m, b);
    return Fit{b, bytes <= budget, static_cast<double>(bytes) / (2.0 * sizeof(T) * static_cast<double>(cells)), bytes};
  };
  const std::size_t requested_budget = caps.smem_per_block_optin - kOptinReserve;
  Fit chosen{defaults, true, 1.0, 0};
  if (opt.method == nufft::Method::kSubproblem || opt.method == nufft::Method::kOutputDriven) {
    chosen = fit(opt.method, requested_budget);
    require(chosen.fits, ErrorCode::kInvalidArgument,
            std::string("method ") + nufft::method_name(opt.method) + ": a shared-memory tile for kernel width " +
                std::to_string(w) + " does not fit; use a larger eps or method nupts");
    g.method = opt.method;
    why << "method " << nufft::method_name(g.method) << " (Options::method), bins " << bins_text(chosen.bins, dim)
        << " (tile " << kib(chosen.bytes) << " within the opt-in budget " << kib(requested_budget) << ")\n";
  } else if (opt.method == nufft::Method::kAuto) {
    // Warp tiles (no shared-memory atomics) when the tile fits kSubproblemSmem and its padding
    // is moderate, else subproblems on the same terms, else warp tiles in the opt-in budget
    // (wide kernels, one or two blocks per SM), else global atomics: a tile much larger than
    // its bin costs more than global atomics.
    g.method = nufft::Method::kNuptsDriven;
    struct Candidate {
      nufft::Method method;
      std::size_t budget;
      double max_padding;
    };
    const Candidate candidates[] = {{nufft::Method::kOutputDriven, kSubproblemSmem, 16.0},
                                    {nufft::Method::kSubproblem, kSubproblemSmem, 16.0},
                                    {nufft::Method::kOutputDriven, requested_budget, 64.0}};
    std::ostringstream tried;
    for (const Candidate& cand : candidates) {
      const Fit f = fit(cand.method, cand.budget);
      if (f.fits && f.padding <= cand.max_padding) {
        chosen = f;
        g.method = cand.method;
        why << "method " << nufft::method_name(g.method) << " (auto: " << tried.str() << "bins "
            << bins_text(f.bins, dim) << ", tile " << kib(f.bytes) << " within " << kib(cand.budget) << ", "
            << f.padding << " tile cells per bin cell <= " << cand.max_padding << ")\n";
        break;
      }
      tried << nufft::method_name(cand.method) << " in " << kib(cand.budget) << " "
            << (f.fits ? "pads " + std::to_string(f.padding) + " tile cells per bin cell" : std::string("does not fit"))
            << "; ";
    }
    if (g.method == nufft::Method::kNuptsDriven)
      why << "method nupts (auto: " << tried.str() << "global atomics), bins " << bins_text(chosen.bins, dim)
          << " (sort only)\n";
  } else {
    g.method = opt.method;
    why << "method " << nufft::method_name(g.method) << " (Options::method), bins " << bins_text(chosen.bins, dim)
        << " (sort only)\n";
  }
  g.bins = chosen.bins;
  for (int d = dim; d < 3; ++d) g.bins[d] = 1;

  // Device features: tensor-core tiles from sm_80, bulk rows from sm_90; the tuning knobs.
  g.tensor_cores = caps.cc_major >= 8 ? opt.tuning.tensor_cores : 0;
  g.bulk_rows = caps.cc_major >= 9 ? opt.tuning.bulk_rows : 0;
  auto knob = [](int k) { return k == -1 ? "by density" : k == 0 ? "never" : "always"; };
  why << "tensor-core tiles " << knob(g.tensor_cores)
      << (caps.cc_major >= 8 ? " (tuning.tensor_cores)" : " (compute capability below 8.0)") << ", bulk rows "
      << knob(g.bulk_rows) << (caps.cc_major >= 9 ? " (tuning.bulk_rows)" : " (compute capability below 9.0)")
      << "\n";

  // Spread/interpolate-only plans keep the kernel of upsampfac 2 (nufft.hpp): no choice from
  // the points; type 3 takes its grid from the points.
  g.auto_upsampfac = opt.upsampfac == 0.0 && info.type != 3 && !info.spread_interp_only;
  if (g.auto_upsampfac) why << "upsampfac chosen at the first set_points with points (Options::upsampfac 0)\n";

  if (info.type != 3 && !info.spread_interp_only) {
    g.fft = grid_fft(dim, info.fine_grid, info.modes);
    why << "FFT " << nufft::fft_strategy_name(g.fft)
        << (g.fft == nufft::FftStrategy::kPruned ? " (2^21 cells or more, modes leave slabs empty)"
                                                 : " (1D, under 2^21 cells, or modes fill the slowest axis)");
    const std::int64_t nlast = info.fine_grid[dim - 1];
    g.mode_fft = opt.tuning.mode_fft != 0 && dim >= 2 && nlast <= kModeFftMaxLength && !mode_fft_radices(nlast).empty();
    why << "; type 1's last axis " << (g.mode_fft ? "fused with the mode copy" : "by cuFFT")
        << (opt.tuning.mode_fft == 0 ? " (tuning.mode_fft 0)"
            : g.mode_fft             ? " (at most 512 cells, radices 2, 3, 5)"
                                     : " (1D, or the last axis is longer than 512 or has a prime factor above 5)")
        << "\n";
  } else {
    why << "FFT " << (info.type == 3 ? "by the inner type 2 plan" : "none (spread/interpolate only)") << "\n";
  }
  g.reason = why.str();
  return g;
}

template <class T>
std::optional<PlanSetup> choose_upsampfac(const PlanSetup& setup, int max_batch, std::int64_t m,
                                          std::size_t free_device_bytes, std::string& reason) {
  const nufft::PlanInfo& info = setup.info;
  const double cells = static_cast<double>(setup.fine_grid_size());
  const double density = static_cast<double>(m) / cells;
  std::string rule;
  const double sigma = auto_upsampfac(info.eps, density, info.type == 2 && info.dim == 3 ? kWideDensityInterp3d : kWideDensity,
                                      info.type == 1 && info.dim == 3 ? kNarrowDensity : 0.0, &rule);
  std::ostringstream why;
  why << "upsampfac " << sigma << " for " << density << " points per sigma-2 cell (" << rule << ")";
  if (sigma == info.upsampfac) {
    reason = why.str() + "\n";
    return std::nullopt;
  }
  std::string error;
  std::optional<PlanSetup> other =
      setup_at_upsampfac(setup, sigma, nufft::min_eps<T>(), std::numeric_limits<T>::epsilon() / 2, &error);
  if (!other) {
    reason = why.str() + ": cannot be planned (" + error + "), kept " + std::to_string(info.upsampfac) + "\n";
    return std::nullopt;
  }
  const PlanSetup& chosen = *other;
  using Complex = std::complex<T>;
  // The current grid is not allocated yet (the backend defers it): free memory as it would be.
  const double current = cells * max_batch * sizeof(Complex);
  const double grown = (static_cast<double>(chosen.fine_grid_size()) - cells) * max_batch * sizeof(Complex);
  if (grown > 0.5 * (static_cast<double>(free_device_bytes) - current)) {
    reason = why.str() + ": its grid does not fit half the free device memory, kept " + std::to_string(info.upsampfac) + "\n";
    return std::nullopt;
  }
  reason = why.str() + ": kernel width " + std::to_string(chosen.info.kernel_width) + " instead of " +
           std::to_string(info.kernel_width) + "\n";
  return other;
}

template <class T>
PointsConfig plan_points(const PlanSetup& setup, const GridConfig& grid, const DeviceCaps& caps, std::int64_t m,
                         const std::array<std::int64_t, 3>& nf, std::size_t free_device_bytes) {
  const nufft::PlanInfo& info = setup.info;
  const nufft::Options& opt = setup.options;
  const int dim = info.dim, w = info.kernel_width;
  const double cells = static_cast<double>(nf[0]) * static_cast<double>(nf[1]) * static_cast<double>(nf[2]);
  const double pts = static_cast<double>(m);
  PointsConfig p;
  std::ostringstream why;
  why << "points: " << m << ", " << pts / cells << " per fine cell\n";
  // Register boxes for 3D warp tiles at W <= 7: as Options asks, or for dense points.
  p.boxes = dim == 3 && grid.method == nufft::Method::kOutputDriven && w <= 7 && opt.spread_boxes != 0 &&
            (opt.spread_boxes == 1 || pts >= kBoxDensity * cells);
  // Tensor-core tiles for float 3D type 1 warp tiles at W <= 8 on automatic bins: as the knob
  // asks, or for sparse points.
  const bool caller_bins = opt.bin_size[0] > 0 || opt.bin_size[1] > 0 || opt.bin_size[2] > 0;
  p.tensor_cores = std::is_same_v<T, float> && dim == 3 && info.type == 1 && grid.method == nufft::Method::kOutputDriven &&
                   w <= 8 && grid.tensor_cores != 0 && !p.boxes && !caller_bins &&
                   (grid.tensor_cores == 1 || pts < kTcDensity * cells);
  p.bins = grid.bins;
  if (p.tensor_cores)
    for (int d = 0; d < dim; ++d) p.bins[d] = detail::kTcBins[d];
  p.sub_bins = sort_sub_bins(dim, grid.method, p.boxes, p.bins);
  p.bulk_rows = grid.bulk_rows == 1 || (grid.bulk_rows == -1 && pts < kBulkDensity * cells);
  // Subproblem blocks: kMaxSubproblem points, for load balance. Warp tiles (one warp per
  // block): enough blocks for ~16 warps per SM, 64 to kMaxSubproblem points each.
  p.subproblem_points = grid.method == nufft::Method::kOutputDriven
                            ? std::clamp<std::int64_t>(m / (16 * std::int64_t(caps.sm_count)), 64, kMaxSubproblem)
                            : kMaxSubproblem;

  // The spreading kernel.
  using nufft::SpreadKernel;
  if (nupts_driven(grid.method)) {
    p.spread = SpreadKernel::kNupts;
  } else if (grid.method == nufft::Method::kSubproblem) {
    p.spread = SpreadKernel::kSubproblem;
  } else {
    p.spread = SpreadKernel::kTile;
    dispatch_width(w, [&]<int W>() {
      if constexpr (std::is_same_v<T, float> && detail::tc_width_fits<W>())
        if (dim == 3 && p.tensor_cores) {
          p.spread = p.bulk_rows && detail::bulk_rows_fit<T, W>(nf[0], p.bins[0]) ? SpreadKernel::kTensorCoreBulk
                                                                                  : SpreadKernel::kTensorCore;
          return;
        }
      if constexpr (W <= 8)
        if (dim == 3) {
          const bool fixed = p.bins[0] == detail::kTileBins[0] && p.bins[1] == detail::kTileBins[1];
          if (fixed) p.spread = SpreadKernel::kTileFixed;
          if (fixed && p.bulk_rows && detail::bulk_rows_fit<T, W>(nf[0], p.bins[0])) p.spread = SpreadKernel::kTileFixedBulk;
          if (W <= 7 && p.boxes) p.spread = fixed ? SpreadKernel::kTileBoxesFixed : SpreadKernel::kTileBoxes;
        }
    });
  }
  why << "spread " << nufft::spread_kernel_name(p.spread) << ": bins " << bins_text(p.bins, dim)
      << (p.tensor_cores ? " (tensor-core tiles: sparse float 3D type 1)" : "") << ", sub-bins "
      << bins_text(p.sub_bins, dim) << (p.boxes ? " (register boxes: dense points or Options::spread_boxes)" : "")
      << ", bulk rows " << (p.bulk_rows ? "allowed" : "off") << ", at most " << p.subproblem_points
      << " points per subproblem\n";

  // Interpolation: 3D from a shared-memory copy of each subproblem's tile when it fits the
  // budget of a block with several per SM, unless method nupts; else one thread per point.
  const bool tile_interp = dim == 3 && !nupts_driven(grid.method) && m > 0 &&
                           detail::interp_tile_bytes<T>(dim, p.bins.data(), w) <= kSubproblemSmem;
  p.interp = tile_interp ? nufft::InterpKernel::kTile : nufft::InterpKernel::kNupts;
  why << "interp " << nufft::interp_kernel_name(p.interp)
      << (tile_interp ? " (3D tile fits " + kib(kSubproblemSmem) + ")"
                      : " (1D/2D, method nupts, no points, or the tile exceeds " + kib(kSubproblemSmem) + ")")
      << "\n";
  // Precomputed kernel weights (types 1 and 2): an explicit kPrecomputed (plan_grid kept it as
  // the method; the nupts kernels above), refused above the limit; kAuto: kCudaPrecomputeAuto.
  if (info.type != 3 && (grid.method == nufft::Method::kPrecomputed || opt.method == nufft::Method::kAuto)) {
    const std::int64_t bytes = cuda_precomputed_bytes(dim, w, m, sizeof(T));
    nufft::Options o = opt;
    o.method = grid.method == nufft::Method::kPrecomputed ? nufft::Method::kPrecomputed : nufft::Method::kAuto;
    const PrecomputeChoice pc = plan_cuda_precompute(o, static_cast<double>(bytes), static_cast<double>(free_device_bytes));
    p.precompute = pc.precompute;
    p.precomputed_bytes = pc.precompute ? bytes : 0;
    if (pc.precompute)  // kCudaPrecomputeAuto: kAuto may take it, with the nupts kernels
      require(nupts_driven(grid.method), ErrorCode::kInternal, "precomputed weights planned for a tile method");
    why << pc.reason;
  }
  p.reason = why.str();
  return p;
}

template <class T>
NufftConfig plan_nufft(const PlanSetup& setup, const DeviceCaps& caps, const PointStats* stats) {
  NufftConfig c;
  const PlanSetup* s = &setup;
  std::string factor;
  if (stats != nullptr && stats->choose_upsampfac && stats->m > 0) {
    const GridConfig current = plan_grid<T>(setup, caps);
    c.replanned = choose_upsampfac<T>(setup, current.max_batch, stats->m, stats->free_device_bytes, factor);
    if (c.replanned) s = &*c.replanned;
  }
  c.grid = plan_grid<T>(*s, caps);
  c.grid.reason += factor;
  if (stats != nullptr)
    c.points = plan_points<T>(*s, c.grid, caps, stats->m, c.replanned ? s->info.fine_grid : stats->grid,
                              stats->free_device_bytes);
  return c;
}

std::string NufftConfig::reason() const { return grid.reason + (points ? points->reason : std::string()); }

#define FIELDFT_PLANNER_INST(T)                                                                                       \
  template NufftConfig plan_nufft<T>(const PlanSetup&, const DeviceCaps&, const PointStats*);                       \
  template GridConfig plan_grid<T>(const PlanSetup&, const DeviceCaps&);                                            \
  template std::optional<PlanSetup> choose_upsampfac<T>(const PlanSetup&, int, std::int64_t, std::size_t,           \
                                                        std::string&);                                              \
  template PointsConfig plan_points<T>(const PlanSetup&, const GridConfig&, const DeviceCaps&, std::int64_t,        \
                                       const std::array<std::int64_t, 3>&, std::size_t);                            \
  template std::size_t warp_tile_bytes<T>(int, const int*, int);
FIELDFT_PLANNER_INST(float)
FIELDFT_PLANNER_INST(double)
#undef FIELDFT_PLANNER_INST

namespace {

// The precompute rule of both backends: an explicit kPrecomputed within the limit (kTooLarge
// above it), kAuto where auto_min_reuse > 0 and Options::reuse reaches it within the limit.
// memory: what the default limit is a share of (fraction · memory; 0: unknown, no limit), named
// in messages by memory_name.
PrecomputeChoice choose_precompute(const nufft::Options& options, double bytes, double memory, double fraction,
                                   const char* memory_name, std::int64_t auto_min_reuse, const char* no_auto) {
  PrecomputeChoice c;
  c.limit_bytes = options.precompute_max_bytes > 0 ? options.precompute_max_bytes : fraction * memory;
  const bool fits = c.limit_bytes <= 0 || bytes <= c.limit_bytes;  // unknown memory: no limit
  std::ostringstream os;
  os.precision(3);
  const double mib = 1.0 / (1 << 20);
  if (options.method == nufft::Method::kPrecomputed) {
    if (!fits) {
      os << "method precomputed: the kernel weights of these points need " << bytes * mib << " MiB, above the limit of "
         << c.limit_bytes * mib << " MiB (Options::precompute_max_bytes"
         << (options.precompute_max_bytes > 0 ? "" : std::string(" = 0: a quarter of ") + memory_name)
         << "); use method nupts, fewer points or a larger limit";
      throw Error(ErrorCode::kTooLarge, os.str());
    }
    c.precompute = true;
    os << "method precomputed (Options::method): kernel weights " << bytes * mib << " MiB";
  } else if (options.method == nufft::Method::kAuto && auto_min_reuse > 0 && options.reuse >= auto_min_reuse &&
             fits) {
    c.precompute = true;
    os << "method precomputed (auto: reuse " << options.reuse << " >= " << auto_min_reuse << ", kernel weights "
       << bytes * mib << " MiB within " << c.limit_bytes * mib << " MiB)";
  } else if (options.method == nufft::Method::kAuto && auto_min_reuse <= 0) {
    os << "kernel evaluated per execute (auto: " << no_auto << ", reuse " << options.reuse << ")";
  } else if (options.method == nufft::Method::kAuto) {
    os << "method nupts (auto: ";
    if (options.reuse < auto_min_reuse)
      os << "reuse " << options.reuse << " < " << auto_min_reuse << ", kernel evaluated per execute)";
    else
      os << "precomputed kernel weights " << bytes * mib << " MiB exceed " << c.limit_bytes * mib << " MiB)";
  } else {
    os << "method " << nufft::method_name(options.method) << " (Options::method)";
  }
  c.reason = os.str() + "\n";
  return c;
}

}  // namespace

PrecomputeChoice plan_cpu_precompute(const nufft::Options& options, double bytes, double physical_bytes) {
  return choose_precompute(options, bytes, physical_bytes, kPrecomputeMemoryFraction, "physical memory",
                           kPrecomputeMinReuse, "");
}

PrecomputeChoice plan_cuda_precompute(const nufft::Options& options, double bytes, double free_device_bytes) {
  return choose_precompute(options, bytes, free_device_bytes, kCudaPrecomputeMemoryFraction, "free device memory",
                           kCudaPrecomputeAuto ? kPrecomputeMinReuse : 0,
                           "stored weights measured no faster than evaluating them on CUDA, docs/tuning.md");
}

}  // namespace fieldft::core
