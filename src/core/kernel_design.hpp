// Kernel design: width, shape, piecewise polynomial table and Fourier series of the ES kernel.
// Host-only; computed once per plan (tables are copied to the device by the CUDA backend).
#pragma once

#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "fieldft/detail/hd.hpp"

namespace fieldft::core {

struct KernelDesign {
  int width = 0;        // w, cells per dimension
  int width_needed = 0; // w the error model asks for before capping at kMaxKernelWidth
  double beta = 0;      // ES shape
  int degree = 0;       // Horner polynomial degree
  std::vector<double> horner;  // (degree + 1) * width coefficients, layout of detail/kernel.hpp
};

constexpr int kMaxKernelWidth = 16;

// Largest Horner degree design_kernel takes for width w (it stops at the first degree whose fit
// is within eps/10); the CUDA kernels size their shared-memory copy of the table by it.
constexpr int max_horner_degree(int w) { return w + 10; }

// Chooses w and β for relative error eps at upsampling factor sigma in `dim` dimensions, and fits
// the polynomial table. Width: kernel_width_for below, capped at kMaxKernelWidth.
// β = 0.97·π·(1 − 1/(2σ))·w. The degree is the smallest whose maximal deviation from φ is below
// eps/10 (so the polynomial never dominates the error budget).
KernelDesign design_kernel(double eps, double sigma, int dim);

// The width the error model asks for (before the cap), with e = eps/2.5, a margin measured
// necessary (see the .cpp; eps/5 strictly between 1.25 and 2): w = ⌈log10(1/e)⌉ + 1 for
// 2 ≤ σ < 2.25, and w = ⌈ln(1/e) / (π√(1 − 1/σ))⌉ otherwise (σ < 2 and σ = 2.25): the error
// model of Barnett et al. 2019, §4, and its upsampling-factor generalisation. Both were checked
// against the oracle on the tolerance sweep at σ = 1.25, 1.6, 2 and 2.25 (docs/accuracy.md); the
// general rule is not used between 2 and 2.25, where it was not.
int kernel_width_for(double eps, double sigma);

// The automatic upsampling factor of the backends that choose it from the points (CUDA, at the
// first set_points): kWideUpsampfac where its kernel is narrower than at σ = 2 and there are at
// least min_density points per cell of the σ = 2 fine grid (spreading and interpolation cost
// ∝ w^dim per point, the FFT and the grid passes ∝ σ^dim); kNarrowUpsampfac where there are
// fewer than max_narrow_density points per cell, its kernel has the σ = 2 width and the error
// model of that width at kNarrowUpsampfac is at most eps/6 (eps 1e-1 … 1e-5 at decade values,
// not 1e-6): the same work per point on a grid of (1.6/2)^3 = 0.51 times the cells in 3D
// before rounding up to FFT sizes (216^3 instead of 256^3 for 128^3 modes), whose tiles hold
// more points each; where the narrow factor is on offer, kWideUpsampfac from max_narrow_density
// points per cell already (when narrower than at σ = 2); else 2. kWideUpsampfac only where the
// error model of its width is at least 10x below eps (decade values of eps; 2.5e-5 measured
// above eps at w = 5). 1.6 is the smallest factor measured below eps with the σ = 2 width (at
// 1.5, w = 7 measured 1.6·eps on 3D type 1 at eps 1e-5; docs/benchmarks-archive.md, tenth round).
// Where why is given, it receives the rule that decided, one line without a newline (the CUDA
// planner's reason).
inline constexpr double kWideUpsampfac = 2.25;
inline constexpr double kNarrowUpsampfac = 1.6;
double auto_upsampfac(double eps, double density, double min_density, double max_narrow_density = 0.0,
                      std::string* why = nullptr);

// exp(−π·w·√(1 − 1/σ)): the error model of Barnett et al. 2019, §4, for width w at factor σ.
double kernel_error_model(int width, double sigma);

// Degree-`degree` piecewise polynomial fit of the kernel (Chebyshev interpolation on each cell,
// converted to monomials in t ∈ [-1, 1]). Exposed for tests.
std::vector<double> fit_horner_table(int width, double beta, int degree);

// Largest |P_k(t) − φ| over a dense sampling of all cells, for tests and for choosing the degree.
double horner_max_error(const KernelDesign& k);

// ψ̂(k) = ∫ ψ(u) cos(2π k u / nf) du for k = 0 … kmax (ψ in fine-grid cells), by Gauss–Legendre
// quadrature of the smooth integrand on [−w/2, w/2].
std::vector<double> kernel_fourier_series(const KernelDesign& k, std::int64_t nf, std::int64_t kmax);

// The Gauss–Legendre rule behind ψ̂ (kernel_fourier_series and _transform, type 3's factors on
// every backend): ψ̂(k) = (w/2) ∫_{-1}^{1} φ(z) cos(π k w z / nf) dz. The integrand is even and
// the nodes symmetric, so only the nodes z_i >= 0 are kept, those > 0 weighted twice (half the
// cosines): ψ̂(k) = Σ_i weight_i cos(scale_i · k / nf), scale_i = π w z_i. A plain struct, so
// that the CUDA kernels take it by value.
struct KernelQuadrature {
  static constexpr int kMaxNodes = kMaxKernelWidth + 12;  // (2w + 24)-point rule: w + 12 nodes >= 0
  int nodes = 0;
  double weight[kMaxNodes] = {};
  double scale[kMaxNodes] = {};
};
KernelQuadrature kernel_quadrature(const KernelDesign& k);

// ψ̂ at frequency k in cycles per nf cells, given as k / nf.
FIELDFT_HD double kernel_fourier_at(const KernelQuadrature& q, double k_over_nf) {
  double s = 0;
  for (int i = 0; i < q.nodes; ++i) s += q.weight[i] * ::cos(q.scale[i] * k_over_nf);
  return s;
}

// ψ̂ at n frequencies, u[i] = k_i / nf as for kernel_fourier_at: out[i] = kernel_fourier_at(q, u[i])
// to within a few units of rounding of ψ̂(0). The same rule, evaluated for blocks of frequencies at
// once with a cosine the compiler vectorises (core/vector_trig.hpp; a libm call per node and
// frequency dominated type 3's set_points, docs/benchmarks.md); frequencies whose arguments
// exceed that cosine's range take kernel_fourier_at. One thread; callers split long arrays.
void kernel_fourier_at_many(const KernelQuadrature& q, std::int64_t n, const double* u, double* out);

// The same integral at arbitrary real frequencies freqs[i] (in cycles per nf cells; type 3
// evaluates it between the integers), by the same quadrature.
std::vector<double> kernel_fourier_transform(const KernelDesign& k, std::int64_t nf, std::span<const double> freqs);

// Gauss–Legendre nodes and weights on [−1, 1] (Newton iteration on P_n).
void gauss_legendre(int n, std::vector<double>& nodes, std::vector<double>& weights);

}  // namespace fieldft::core
