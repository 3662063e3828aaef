// The accuracy sweep of the NUFFT battery, shared by the test (accuracy_test.cpp) and by the
// program that writes the table of docs/accuracy.md (accuracy_table.cpp), so that the table
// shows exactly what the test asserts.
//
// One fixed problem per (type, dimension); points and input values are rounded to float once,
// so that float and double plans see the same numbers and share one oracle. Type 3 has sources
// and targets in fixed boxes (not periodic) instead of modes.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "fieldft/nufft.hpp"

namespace fieldft::test {

enum class Precision { kFloat, kDouble };
const char* precision_name(Precision p);  // "float", "double"

struct SweepProblem {
  std::vector<std::int64_t> modes;  // type 3: dim entries, unused by the plan
  std::int64_t num_points = 0;
  int isign = 1;
  // Type 3: targets, and the boxes of sources [x_lo, x_hi) and targets [s_lo, s_hi) in every
  // dimension (types 1 and 2 draw points from [-π, π)).
  std::int64_t num_targets = 0;
  double x_lo = 0, x_hi = 0, s_lo = 0, s_hi = 0;
};
// The problem of the sweep in dimension dim (1..3) for the given type.
SweepProblem sweep_problem(int type, int dim);

// Tolerances swept: 1e-1 .. 1e-6 (float), 1e-1 .. 1e-12 (double), one per decade.
std::vector<double> sweep_eps(Precision p);
// 1.6: the narrow factor the CUDA planner takes for sparse 3D type 1 (core::kNarrowUpsampfac),
// and the one factor strictly between 1.25 and 2 that the sweep measures.
inline constexpr double kSweepUpsampfacs[] = {2.0, 1.25, 2.25, 1.6};

// Smallest tolerance a plan must accept at this upsampling factor: the library caps the kernel
// width at 16, which at σ = 1.25 limits the reachable error to about exp(-16π·sqrt(1 - 1/σ))
// ≈ 2e-10 (Barnett et al. 2019 error model); σ = 1.25 is meant for moderate accuracy. Below this
// a plan may refuse with kEpsTooSmall, which is the honest answer. At σ = 2 every eps down to
// min_eps must be accepted.
double min_reachable_eps(Precision p, double upsampfac);

// Whether the library was right to refuse eps with kEpsTooSmall: below min_reachable_eps, or
// below the rounding floor u·G that the library computes (G from this file's own quadrature, on
// the parameters of an equivalent double-precision plan, which shares the kernel and the grid).
bool refusal_is_justified(Precision p, int type, int dim, double upsampfac, double eps);

// The type 3 grid size that fieldft/nufft.hpp documents for one dimension: the smallest even
// 2,3,5-smooth number >= max(2σXS/π + w + 1, 2w), for half-widths X of the sources and S of the
// targets, upsampling factor sigma and kernel width w.
std::int64_t type3_grid_size(double sigma, int w, double half_x, double half_s);

// Precision floor F: the relative l2 error that rounding in T alone causes, below which no eps
// can be met. Coordinates are folded in double, so what remains is rounding noise of ~u·||grid||
// on the fine grid (u = 2^-24 or 2^-53), which the deconvolution amplifies by the rms gain
// G = Π_d rms_k ψ̂_d(0)/ψ̂_d(k) (deconvolution_gain). F = kFloorFactor·u·G. G is ~1.1–4 at
// upsampfac 2 but grows like e^{~0.5·w} per dimension at upsampfac 1.25, which is why float plans
// at upsampfac 1.25 cannot reach eps = 1e-6. The float rounding measured directly (float plan vs
// double plan, same kernel and grid) was 0.11–7.6 × u·G in all 216 configurations tried;
// kFloorFactor covers that. docs/accuracy.md has the measurement; FloatRoundingFloor re-checks it.
// Type 3 deconvolves twice: the inner type 2 plan over its nf modes (gain G_in) and the
// postfactor 1/ψ̂ over the targets' band |t| <= nf/(2σ) of the type 3 grid (gain G_out, what a
// type 1 of that band would have); G = max(G_in, G_out). The product would be the worst case,
// but the measured float rounding was 0.4–3.8 × u·max(G_in, G_out) and 0.003–0.3 × u·G_in·G_out
// on the sweep problems (docs/accuracy.md), so the product would make the floor, and with it the
// test, far looser than the data warrant. The library refuses eps below u·G_in and u·G_out.
inline constexpr double kFloorFactor = 10.0;
double deconvolution_gain(const nufft::PlanInfo& info);
double precision_floor(Precision p, const nufft::PlanInfo& info);

// What the sweep asserts: error <= 2·max(eps, F), i.e. 2·eps wherever eps is at or above the
// floor (the criterion) and 2·F below it.
double accuracy_bound(Precision p, double eps, const nufft::PlanInfo& info);

struct SweepResult {
  bool refused = false;           // the plan threw kEpsTooSmall
  std::string refusal;            // its message
  double error = 0;               // relative l2 error against the oracle
  double bound = 0;               // accuracy_bound(...)
  double floor = 0;               // precision_floor(...)
  double gain = 0;                // deconvolution_gain(...)
  nufft::PlanInfo info;
};

// Runs one case of the sweep on the given backend and method. Throws what the plan throws,
// except kEpsTooSmall, which it reports as refused.
SweepResult run_sweep_case(Backend backend, nufft::Method method, int type, int dim,
                           Precision precision, double upsampfac, double eps);

// The rounding error of float on a sweep problem, measured directly: the relative l2 difference
// between a float plan and a double plan with the same parameters (same kernel, grid and points),
// which differ only in the arithmetic. Used by accuracy_table to check the floor model.
struct RoundingResult {
  double difference = 0;  // ||f_float - f_double|| / ||f_double||
  double gain = 0;        // deconvolution_gain of the plans
  nufft::PlanInfo info;
};
RoundingResult measure_float_rounding(Backend backend, nufft::Method method, int type, int dim,
                                      double upsampfac, double eps);

}  // namespace fieldft::test
