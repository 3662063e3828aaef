#include "core/type3.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <sstream>

#include "core/threads.hpp"
#include "core/vector_trig.hpp"

namespace fieldft::core {

namespace {

// Per dimension at most 2^30 grid points, so that the inner type 2 plan's fine grid (σ·nf <= 2^31)
// stays within the backends' per-dimension indexing.
constexpr double kMaxType3Grid = 1073741824.0;

// The cost model of the two paths (type3_costs), in complex multiply-adds (~8 flops, the unit):
//  direct: each (source, target) pair costs one phase, its reduction and a sine and cosine,
//          shared by the transforms (kDirectPairCost: the sine and cosine alone take as long as
//          ~10 multiply-adds), then one multiply-add per transform.
//  grid:   per transform, each source spread and each target interpolated over w^dim cells (one
//          multiply-add per cell, the kernel values amortised), the inner plan's FFT of F =
//          Π_d σ·nf_d cells (5·F·log2 F flops: kFftCost·F·log2 F), and passes over both grids
//          (zeroing, deconvolution, copies: kGridPassCost a cell); once per set_points, the sorts
//          and per-point tables (kPointSetupCost a point), the inner plan's deconvolution tables
//          (a quadrature of ~2w+24 cosines per mode and dimension: kModeTableCost) and the first
//          touch of both grids.
// The direct sums are taken when they cost less. The grid's memory, 16·F bytes a transform,
// grows with F like its cost, so the rule needs no separate memory term: a grid that would not
// fit costs far more than any direct sum with a sensible number of terms. The crossover is flat
// (near it both paths cost about the same); the rule exists for cases orders of magnitude away
// from it, like 10 sources and 10 targets that need a grid of 1e8 points. On the CPU backend
// the model's ratios agree with measured ones within a factor of two on both sides of it.
constexpr double kDirectPairCost = 15;
constexpr double kFftCost = 0.6;
constexpr double kGridPassCost = 2;
constexpr double kPointSetupCost = 50;
constexpr double kModeTableCost = 60;

// Single-thread times of make_type3_setup's per-point work for the thread rule of
// core/threads.hpp, deliberately low as there: a source (its grid coordinates and phasor), a
// target without its ψ̂ (the same) and each node and dimension of a target's ψ̂ (one vectorised
// cosine and its sum). Measured about 15, 15 and 1.1 ns (2D, M = nk = 1e5, docs/benchmarks.md).
constexpr double kSourceSetupNs = 10;
constexpr double kTargetSetupNs = 10;
constexpr double kTargetNodeNs = 1;

// [min, max] of v[0..n), or [0, 0] for n = 0 (kRangeNs a value, single thread, for the thread rule).
constexpr double kRangeNs = 0.5;
template <class T>
std::pair<double, double> range_of(std::int64_t n, const T* v, int nthreads) {
  if (n == 0) return {0.0, 0.0};
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
#pragma omp parallel for num_threads(threads_for_work(kRangeNs * static_cast<double>(n), nthreads)) \
    reduction(min : lo) reduction(max : hi) schedule(static)
  for (std::int64_t i = 0; i < n; ++i) {
    const double a = static_cast<double>(v[i]);
    lo = std::min(lo, a);
    hi = std::max(hi, a);
  }
  return {lo, hi};
}

// out[i] = e^{i·phase[i]} for i < n <= kBlock: the vectorised sine and cosine where every phase
// is within their range, std::polar otherwise.
constexpr std::int64_t kBlock = 256;
void unit_phasors(std::int64_t n, const double* phase, std::complex<double>* out) {
  double largest = 0;
  for (std::int64_t i = 0; i < n; ++i) largest = std::max(largest, std::abs(phase[i]));
  if (!(largest <= kMaxVectorTrigArg)) {
    for (std::int64_t i = 0; i < n; ++i) out[i] = std::polar(1.0, phase[i]);
    return;
  }
  double c[kBlock], sn[kBlock];
#pragma omp simd
  for (std::int64_t i = 0; i < n; ++i) vector_sincos(phase[i], c[i], sn[i]);
  for (std::int64_t i = 0; i < n; ++i) out[i] = {c[i], sn[i]};
}

}  // namespace

Type3Costs type3_costs(int dim, double sigma, int w, std::int64_t m, std::int64_t nk, std::int64_t ntransf,
                       const std::array<double, 3>& nf) {
  const double md = static_cast<double>(m), nkd = static_cast<double>(nk), nt = static_cast<double>(ntransf);
  double grid = 1, fine = 1, modes = 0;
  for (int d = 0; d < dim; ++d) {
    grid *= nf[d];
    fine *= sigma * nf[d];
    modes += nf[d];
  }
  const double per_transform = (md + nkd) * std::pow(static_cast<double>(w), dim) +
                               kFftCost * fine * std::log2(std::max(fine, 2.0)) + kGridPassCost * (fine + grid);
  Type3Costs c;
  c.direct = md * nkd * (kDirectPairCost + nt);
  c.grid = nt * per_transform + kPointSetupCost * (md + nkd) + kModeTableCost * modes + kGridPassCost * (fine + grid);
  return c;
}

double type3_max_phase(int dim, const CoordinateRanges& x_range, const CoordinateRanges& s_range) {
  double phase = 0;
  for (int d = 0; d < dim; ++d) {
    const double x = std::max(std::abs(x_range[d][0]), std::abs(x_range[d][1]));
    const double s = std::max(std::abs(s_range[d][0]), std::abs(s_range[d][1]));
    phase += x * s;
  }
  return phase;
}

Type3Geometry type3_geometry(const nufft::PlanInfo& info, const KernelDesign& kernel, std::int64_t m, std::int64_t nk,
                             const CoordinateRanges& x_range, const CoordinateRanges& s_range, double unit_roundoff,
                             int direct_option) {
  constexpr double pi = std::numbers::pi;
  const int dim = info.dim;
  const double sigma = info.upsampfac;
  const int w = kernel.width;
  Type3Geometry t;
  t.dim = dim;
  t.isign = info.isign;
  t.m = m;
  t.nk = nk;
  std::array<double, 3> want{1, 1, 1};
  for (int d = 0; d < dim; ++d) {
    const auto [xlo, xhi] = x_range[d];
    const auto [slo, shi] = s_range[d];
    // Centre and half-width in double: exact for float data, within rounding for double.
    t.center_x[d] = 0.5 * xlo + 0.5 * xhi;
    t.half_x[d] = 0.5 * xhi - 0.5 * xlo;
    t.center_s[d] = 0.5 * slo + 0.5 * shi;
    t.half_s[d] = 0.5 * shi - 0.5 * slo;
    want[d] = std::max(2.0 * sigma * t.half_x[d] * t.half_s[d] / pi + w + 1, 2.0 * w);
  }
  // Direct sums or the grid. Their phases are resolved to about u·max|s·x| (u = 2^-53).
  const double phase = type3_max_phase(dim, x_range, s_range);
  const bool resolvable = kDirectPhaseRounding * phase <= info.eps;
  if (direct_option == 1) {
    if (!resolvable) {
      std::ostringstream os;
      os << "type 3 direct sums (type3_direct = 1): the phases s_k·x_j reach " << phase
         << " rad, which double resolves only to about " << kDirectPhaseRounding * phase << " > eps = " << info.eps
         << "; use a larger eps, or centre and scale the coordinates";
      throw Error(ErrorCode::kEpsTooSmall, os.str());
    }
    t.direct = true;
  } else if (direct_option == -1 && resolvable) {
    const Type3Costs cost = type3_costs(dim, sigma, w, m, nk, info.ntransf, want);
    t.direct = cost.direct <= cost.grid;
  }
  if (t.direct) return t;  // nf and γ stay 1: there is no grid

  double grid_cells = 1;
  for (int d = 0; d < dim; ++d) {
    const double X = t.half_x[d], S = t.half_s[d];
    if (!(want[d] <= kMaxType3Grid)) {
      std::ostringstream os;
      os << "type 3: sources of half-width X = " << X << " and targets of half-width S = " << S << " in dimension "
         << d + 1 << " need a grid of about 2*upsampfac*X*S/pi = " << want[d]
         << " points, beyond the limit of 2^30 per dimension; split the sources or targets into groups of smaller "
            "extent";
      throw Error(ErrorCode::kTooLarge, os.str());
    }
    const std::int64_t nf = next_smooth(static_cast<std::int64_t>(std::ceil(want[d])));
    t.nf[d] = nf;
    // γ = nf/(2σS) puts the targets at the edge of the resolved band. With S = 0 (all targets
    // equal, t = 0) any γ meeting the no-wrap condition will do: the smallest such (or 1 when
    // also X = 0). A subnormal S whose γ overflows is the same case.
    double g = S > 0 ? static_cast<double>(nf) / (2.0 * sigma * S) : std::numeric_limits<double>::infinity();
    if (!std::isfinite(g)) g = X > 0 ? X / (pi * (1.0 - (w + 1.0) / static_cast<double>(nf))) : 1.0;
    t.gamma[d] = g;
    grid_cells *= static_cast<double>(nf);
  }
  // The spreading grid and the inner plan's fine grid (σ^dim times larger), one of each in the
  // smallest complex type, before any backend allocates them (and before the gain below, whose
  // quadrature over the band takes long for grids that could not be held anyway).
  check_host_memory(8.0 * grid_cells * (1.0 + std::pow(sigma, dim)), "the type 3 grids");
  // Rounding on the grid is amplified by the division by ψ̂ over the targets' band |t| <= nf/(2σ),
  // as a type 1 plan's deconvolution amplifies it over its modes (the inner type 2 plan checks
  // its own gain when it is made).
  double gain = 1;
  for (int d = 0; d < dim; ++d) {
    const auto band = static_cast<std::int64_t>(std::floor(static_cast<double>(t.nf[d]) / (2.0 * sigma)));
    gain *= deconvolution_gain(kernel_fourier_series(kernel, t.nf[d], band), 2 * band + 1);
  }
  check_rounding_floor(info.eps, unit_roundoff, gain, sigma, "the type 3 deconvolution");
  return t;
}

template <class T>
Type3Setup make_type3_setup(const nufft::PlanInfo& info, const KernelDesign& kernel, std::int64_t m, const T* const* x,
                            std::int64_t nk, const T* const* s, int direct_option) {
  static constexpr const char* kSourceNames[3] = {"x", "y", "z"};
  static constexpr const char* kTargetNames[3] = {"s", "t", "u"};
  const int dim = info.dim;
  check_coordinates(dim, m, x, kSourceNames, "points");
  check_coordinates(dim, nk, s, kTargetNames, "targets");
  check_host_memory((8.0 * dim + 16.0) * (static_cast<double>(m) + static_cast<double>(nk)), "the type 3 point tables");
  CoordinateRanges xr{}, sr{};
  for (int d = 0; d < dim; ++d) {
    const auto [xlo, xhi] = range_of(m, x[d], info.nthreads);
    const auto [slo, shi] = range_of(nk, s[d], info.nthreads);
    xr[d] = {xlo, xhi};
    sr[d] = {slo, shi};
  }
  Type3Setup t;
  static_cast<Type3Geometry&>(t) =
      type3_geometry(info, kernel, m, nk, xr, sr, std::numeric_limits<T>::epsilon() / 2, direct_option);
  if (t.direct) {
    for (int d = 0; d < dim; ++d) {
      t.source[d].assign(x[d], x[d] + m);
      t.target[d].assign(s[d], s[d] + nk);
    }
    return t;
  }
  for (int d = 0; d < dim; ++d) {
    t.x_grid[d].resize(static_cast<std::size_t>(m));
    t.s_inner[d].resize(static_cast<std::size_t>(nk));
  }
  t.prephase.resize(static_cast<std::size_t>(m));
  t.postfactor.resize(static_cast<std::size_t>(nk));
  const KernelQuadrature q = kernel_quadrature(kernel);
  const Type3Geometry g = t;  // a copy the table writes cannot alias: its divisors stay in registers
  // Both loops in blocks of kBlock points, whose sines and cosines (and the targets' ψ̂, per
  // dimension) are taken at once by the vectorised functions of core/vector_trig.hpp.
  const std::int64_t source_blocks = (m + kBlock - 1) / kBlock;
#pragma omp parallel for num_threads(threads_for_work(kSourceSetupNs * static_cast<double>(m), info.nthreads)) \
    schedule(static)
  for (std::int64_t b = 0; b < source_blocks; ++b) {
    const std::int64_t j0 = b * kBlock, len = std::min(kBlock, m - j0);
    double phase[kBlock];
    for (std::int64_t j = 0; j < len; ++j) {
      double xj[3] = {0, 0, 0}, xg[3] = {0, 0, 0};
      for (int d = 0; d < dim; ++d) xj[d] = static_cast<double>(x[d][j0 + j]);
      phase[j] = g.isign * type3_source(g, xj, xg);
      for (int d = 0; d < dim; ++d) t.x_grid[d][j0 + j] = xg[d];
    }
    unit_phasors(len, phase, t.prephase.data() + j0);
  }
  const std::int64_t target_blocks = (nk + kBlock - 1) / kBlock;
  const double target_ns = kTargetSetupNs + kTargetNodeNs * dim * q.nodes;
#pragma omp parallel for num_threads(threads_for_work(target_ns * static_cast<double>(nk), info.nthreads)) \
    schedule(static)
  for (std::int64_t b = 0; b < target_blocks; ++b) {
    const std::int64_t k0 = b * kBlock, len = std::min(kBlock, nk - k0);
    double u[3][kBlock], psi[kBlock], psi_d[kBlock], phase[kBlock];
    for (std::int64_t k = 0; k < len; ++k) {
      double sk[3] = {0, 0, 0}, si[3] = {0, 0, 0}, uk[3] = {0, 0, 0};
      for (int d = 0; d < dim; ++d) sk[d] = static_cast<double>(s[d][k0 + k]);
      phase[k] = g.isign * type3_target_frequencies(g, sk, si, uk);
      for (int d = 0; d < dim; ++d) {
        t.s_inner[d][k0 + k] = si[d];
        u[d][k] = uk[d];
      }
      psi[k] = 1;
    }
    for (int d = 0; d < dim; ++d) {
      kernel_fourier_at_many(q, len, u[d], psi_d);
      for (std::int64_t k = 0; k < len; ++k) psi[k] *= psi_d[k];
    }
    std::complex<double>* post = t.postfactor.data() + k0;
    unit_phasors(len, phase, post);
    for (std::int64_t k = 0; k < len; ++k) post[k] /= psi[k];
  }
  return t;
}

PlanSetup make_inner_setup(const PlanSetup& outer, const std::array<std::int64_t, 3>& nf, double min_eps,
                           double unit_roundoff) {
  const nufft::PlanInfo& info = outer.info;
  nufft::Options opt = outer.options;
  opt.modeord = 1;
  opt.upsampfac = info.upsampfac;
  opt.max_batch = info.max_batch;
  try {
    return make_plan_setup(2, std::span<const std::int64_t>(nf.data(), static_cast<std::size_t>(info.dim)), info.isign,
                           info.max_batch, info.eps, opt, min_eps, unit_roundoff);
  } catch (const Error& e) {
    std::ostringstream os;
    os << "type 3, inner type 2 transform on the grid of " << nf[0];
    for (int d = 1; d < info.dim; ++d) os << "x" << nf[d];
    os << " points: " << e.what();
    throw Error(e.code(), os.str());
  }
}

template Type3Setup make_type3_setup<float>(const nufft::PlanInfo&, const KernelDesign&, std::int64_t,
                                            const float* const*, std::int64_t, const float* const*, int);
template Type3Setup make_type3_setup<double>(const nufft::PlanInfo&, const KernelDesign&, std::int64_t,
                                             const double* const*, std::int64_t, const double* const*, int);

}  // namespace fieldft::core
