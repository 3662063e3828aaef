// Type 3 (non-uniform -> non-uniform) geometry and per-point factors, computed once per
// set_points in double and shared by every backend.
//
// The method is that of Greengard & Lee (SIAM Rev. 46, 2004) as made practical with the ES
// kernel by Barnett, Magland & af Klinteberg (SIAM J. Sci. Comput. 41(5), 2019, type 3
// section). Per dimension, with C, X the centre and half-width of the sources x and D, S those of
// the targets s:
//   s·x = (s − D)·(x − C) + D·x + (s − D)·C,
// so f_k = e^{iσ(s_k−D)·C} Σ_j [c_j e^{iσD·x_j}] e^{iσ t_k·x'_j}, x' = (x − C)/γ, t = γ(s − D).
// The sum is evaluated by spreading c'_j = c_j e^{iσD·x_j} with the kernel ψ onto a periodic grid
// of nf points (spacing h = 2π/nf; grid index i is the location i·h, wrapped to [−π, π)), which
// turns it into the Fourier integral of a compactly supported function; the periodic trapezoid
// rule on the grid is then a type 2 sum at t''_k = h·t_k, and ψ's own transform is divided out:
//   f_k = e^{iσ(s_k−D)·C} / Π_d ψ̂_d(t_k,d) · Σ_l b_l e^{iσ l·t''_k}.
// Two conditions make this accurate (σ: upsampling factor, w: kernel width):
//   no wrap:       X/γ + (w+1)·h/2 <= π   (the spread sources stay half a cell off ±π),
//   resolved band: γ·S <= nf/(2σ)          (t sits where a type 1 of nf/σ modes puts its modes),
// hence nf = next_smooth(max(2σXS/π + w + 1, 2w)) and γ = nf/(2σS).
//
// Where that grid costs more than the sums themselves (type3_costs), the plan evaluates
//   f_k = Σ_j c_j e^{iσ s_k·x_j}  (adjoint: c_j = Σ_k f_k e^{−iσ s_k·x_j})
// directly instead, in double, with each phase reduced modulo 2π (type3_direct_phase).
#pragma once

#include <array>
#include <cmath>
#include <complex>
#include <cstdint>
#include <vector>

#include "core/kernel_design.hpp"
#include "core/plan_setup.hpp"
#include "fieldft/detail/hd.hpp"

namespace fieldft::core {

// The grid, centres and scalings (the scalars of the method).
struct Type3Geometry {
  int dim = 1;
  double isign = 1;
  bool direct = false;                           // direct sums: no grid (nf 1, γ 1)
  std::int64_t m = 0;                            // sources
  std::int64_t nk = 0;                           // targets
  std::array<std::int64_t, 3> nf{1, 1, 1};       // spreading grid (1 for unused dimensions)
  std::array<double, 3> center_x{}, half_x{};    // C, X
  std::array<double, 3> center_s{}, half_s{};    // D, S
  std::array<double, 3> gamma{1, 1, 1};          // γ
};

// The geometry with the per-point tables, in source and target order.
struct Type3Setup : Type3Geometry {
  // Grid path (direct == false):
  std::array<std::vector<double>, 3> x_grid;     // x'_j = (x_j − C)/γ in radians, |x'| < π
  std::array<std::vector<double>, 3> s_inner;    // t''_k = h·γ·(s_k − D): inner type 2 targets
  std::vector<std::complex<double>> prephase;    // e^{iσ D·x_j}, j = 0..m-1
  std::vector<std::complex<double>> postfactor;  // e^{iσ (s_k−D)·C} / Π_d ψ̂_d(γ_d(s_k,d − D_d))
  // Direct sums (direct == true): the coordinates in double.
  std::array<std::vector<double>, 3> source, target;
};

// [min, max] of each dimension's coordinates.
using CoordinateRanges = std::array<std::array<double, 2>, 3>;

// The work of the two type 3 paths, in complex multiply-adds (type3.cpp has the model), for m
// sources, nk targets, ntransf transforms and a type 3 grid of nf[d] points per dimension (as
// the grid rule asks, before rounding to a fast size; nf[d] = 1 beyond dim).
struct Type3Costs {
  double direct = 0;
  double grid = 0;
};
Type3Costs type3_costs(int dim, double sigma, int w, std::int64_t m, std::int64_t nk, std::int64_t ntransf,
                       const std::array<double, 3>& nf);

// Largest |s_k·x_j| over the boxes of the sources and targets: Σ_d max|x_d|·max|s_d|.
double type3_max_phase(int dim, const CoordinateRanges& x_range, const CoordinateRanges& s_range);

// Rounding of the direct sums' phases: double's unit roundoff. Their relative error is about
// kDirectPhaseRounding·type3_max_phase; the automatic choice needs it below eps.
inline constexpr double kDirectPhaseRounding = 0x1.0p-53;

// The geometry for a type 3 plan of the given info (dim, isign, upsampfac, eps, ntransf) and
// kernel from the ranges of the m sources and nk targets. direct_option (Options::type3_direct):
// -1 takes the direct sums when type3_costs finds them cheaper and their phases resolvable to eps
// (kDirectPhaseRounding·max phase <= eps), 0 never, 1 always (kEpsTooSmall where the phases are
// not resolvable). For the grid: throws kTooLarge when the space-bandwidth product needs a grid
// of more than 2^30 points in a dimension (so that the inner plan's fine grid stays below 2^31)
// or beyond the machine's memory, and kEpsTooSmall when rounding (unit_roundoff) amplified by
// the division by ψ̂ over the targets' band (u·G_out) exceeds eps; the inner plan checks its own
// gain when it is made.
Type3Geometry type3_geometry(const nufft::PlanInfo& info, const KernelDesign& kernel, std::int64_t m, std::int64_t nk,
                             const CoordinateRanges& x_range, const CoordinateRanges& s_range, double unit_roundoff,
                             int direct_option);

// The phase of one term of the direct sums, sign·(s·x) for s and x of dim coordinates, less the
// nearest multiple of 2π (so that the sine and cosine take their fast path). The reduction errs
// by about u·|s·x|, as the phase itself does (kDirectPhaseRounding); std::remainder would be
// exact but costs as much as the sine and cosine together.
FIELDFT_HD double type3_direct_phase(int dim, double sign, const double* s, const double* x) {
  constexpr double kTwoPi = 6.283185307179586476925286766559;
  constexpr double kInvTwoPi = 0.15915494309189533576888376337251436;
  double phase = 0;
  for (int d = 0; d < dim; ++d) phase += s[d] * x[d];
  return sign * (phase - kTwoPi * ::rint(phase * kInvTwoPi));
}

// Per-point factors, the same code on every backend (CUDA: src/cuda/type3_kernels.cu).
// Source x (dim coordinates): its grid coordinates x' and the phase of its prephase (before isign).
FIELDFT_HD double type3_source(const Type3Geometry& g, const double* x, double* x_grid) {
  double phase = 0;
  for (int d = 0; d < g.dim; ++d) {
    x_grid[d] = (x[d] - g.center_x[d]) / g.gamma[d];
    phase += g.center_s[d] * x[d];
  }
  return phase;
}

// Target s: its inner type 2 coordinates t'', the frequencies at which its ψ̂_d are taken
// (u_d = γ_d(s_d − D_d)/nf_d, as for kernel_fourier_at) and the phase of its postfactor (before
// isign).
FIELDFT_HD double type3_target_frequencies(const Type3Geometry& g, const double* s, double* s_inner, double* u) {
  constexpr double kTwoPi = 6.283185307179586476925286766559;
  double phase = 0;
  for (int d = 0; d < g.dim; ++d) {
    const double shifted = s[d] - g.center_s[d];
    phase += shifted * g.center_x[d];
    const double f = g.gamma[d] * shifted;  // cycles per nf cells
    const double nf = static_cast<double>(g.nf[d]);
    s_inner[d] = kTwoPi / nf * f;
    u[d] = f / nf;
  }
  return phase;
}

// Target s: type3_target_frequencies and the kernel's transform Π_d ψ̂_d(γ_d(s_d − D_d)) it
// divides by (the CPU backend takes the ψ̂ of many targets at once: kernel_fourier_at_many).
FIELDFT_HD double type3_target(const Type3Geometry& g, const KernelQuadrature& q, const double* s, double* s_inner,
                               double& psi) {
  double u[3] = {0, 0, 0};
  const double phase = type3_target_frequencies(g, s, s_inner, u);
  psi = 1;
  for (int d = 0; d < g.dim; ++d) psi *= kernel_fourier_at(q, u[d]);
  return phase;
}

// Validates the coordinates (arrays x, y, z and s, t, u: present, finite) and computes the
// geometry (type3_geometry with direct_option) and, for the grid, the per-point tables
// (type3_source, type3_target), or, for the direct sums, the coordinates in double; on the host,
// with info.nthreads threads.
template <class T>
Type3Setup make_type3_setup(const nufft::PlanInfo& info, const KernelDesign& kernel, std::int64_t m, const T* const* x,
                            std::int64_t nk, const T* const* s, int direct_option);

// The setup of the inner type 2 plan: nf modes in FFT order (mode m at grid index m mod nf, the
// layout of the spreading grid), the outer plan's sign, tolerance, kernel and options, ntransf =
// the outer plan's max_batch (it transforms one batch at a time). min_eps and unit_roundoff as
// for make_plan_setup; a refusal is re-thrown naming the type 3 grid.
PlanSetup make_inner_setup(const PlanSetup& outer, const std::array<std::int64_t, 3>& nf, double min_eps,
                           double unit_roundoff);

}  // namespace fieldft::core
