// fieldft::mri::density_compensation: Pipe–Menon iterations through one spread/interpolate-only
// NUFFT plan (math and normalisation in include/fieldft/mri/density.hpp). One type 1 plan on the
// density grid: execute spreads (Cᴴ), execute_adjoint interpolates (C); the weights, the grid and
// G w live in one workspace in context memory, so that a device never sends them to the host.
#include "fieldft/mri/density.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>
#include <sstream>
#include <string>

#include "fieldft/config.hpp"  // first: FIELDFT_HAVE_CUDA selects the includes below
#include "core/kernel_design.hpp"
#include "fieldft/op/linear_operator.hpp"  // op::Workspace
#include "fieldft/op/vector_ops.hpp"
#include "mri/encoding_points.hpp"
#if FIELDFT_HAVE_CUDA
#include "cuda/density.hpp"
#endif

namespace fieldft::mri {

namespace {

void check_options(const DensityOptions& o, std::int64_t samples) {
  require(o.iterations >= 1, ErrorCode::kInvalidArgument,
          "density_compensation: iterations must be >= 1 (Pipe–Menon steps), got " + std::to_string(o.iterations));
  if (!(o.oversampling >= 1.25 && o.oversampling <= 2.25)) {  // also NaN
    std::ostringstream os;
    os << "density_compensation: oversampling must be in [1.25, 2.25] (grid cells per cycle/FOV and the kernel's "
          "upsampling factor), got "
       << o.oversampling;
    throw Error(ErrorCode::kInvalidArgument, os.str());
  }
  require(samples > 0, ErrorCode::kInvalidArgument,
          "density_compensation: the encoding has no samples; density weights need at least one k-space sample");
}

// w_j = w_j / |d_j| on the host.
template <class T>
void divide_by_abs_host(std::int64_t n, std::complex<T>* w, const std::complex<T>* d, int nthreads) {
#pragma omp parallel for schedule(static) num_threads(nthreads) if (n >= 32768)
  for (std::int64_t j = 0; j < n; ++j) w[j] *= T(1) / std::abs(d[j]);
}

}  // namespace

template <class T>
void density_compensation_to(const Encoding<T>& encoding, const Context& context, std::complex<T>* weights,
                             const DensityOptions& options) {
  using Complex = std::complex<T>;
  const std::int64_t m = encoding.num_samples();
  check_options(options, m);
  require(weights != nullptr, ErrorCode::kInvalidArgument,
          "density_compensation_to: the weights pointer is null; expected room for " + std::to_string(m) +
              " complex values in context memory");
  const int dim = encoding.dim();
  // eps as nufft::Plan checks it, before the kernel is designed from it.
  if (!(options.eps > 0 && options.eps <= 1)) {  // also NaN
    std::ostringstream os;
    os << "density_compensation: eps must be a relative tolerance in (0, 1] (it chooses the kernel), got "
       << options.eps;
    throw Error(ErrorCode::kInvalidArgument, os.str());
  }

  // The kernel first (its width sets the smallest grid), from the options a plan would take.
  nufft::Options o = options.nufft;
  o.upsampfac = options.oversampling;
  o.modeord = 1;  // cell l at index l: any order serves, since the grid is internal
  o.spread_interp_only = true;
  const core::KernelDesign kernel = core::design_kernel(options.eps, options.oversampling, dim);
  std::array<std::int64_t, 3> cells{1, 1, 1};
  for (int d = 0; d < dim; ++d) {
    const auto n = static_cast<double>(encoding.grid()[d]);
    cells[d] = std::max<std::int64_t>(static_cast<std::int64_t>(std::ceil(options.oversampling * n - 1e-9)),
                                      2 * std::int64_t(kernel.width));
  }
  nufft::Plan<T> plan(1, std::span<const std::int64_t>(cells.data(), static_cast<std::size_t>(dim)), 1, 1,
                      options.eps, context, o);

  // Points x_d = 2π k_d / N_d (NufftEncoding's): one period of x is one period of k-space.
  const auto x = detail::nufft_points(encoding);
  const T* p[3] = {nullptr, nullptr, nullptr};
  for (int d = 0; d < dim; ++d) p[d] = x[d].data();
  plan.set_points(m, p[0], p[1], p[2]);

  // The scale of the converged weights (density.hpp): ∫G = Π_d ψ̂_d(0)² / σ_d, over the voxels.
  const auto& info = plan.info();
  core::KernelDesign kd;
  kd.width = info.kernel_width;
  kd.beta = info.kernel_beta;
  const double psi0 = core::kernel_fourier_at(core::kernel_quadrature(kd), 0.0);  // ∫ψ over cells
  double scale = 1.0 / static_cast<double>(encoding.num_voxels());
  for (int d = 0; d < dim; ++d)
    scale *= psi0 * psi0 * static_cast<double>(encoding.grid()[d]) / static_cast<double>(cells[d]);

  // w in `weights`; the grid and G w in one workspace.
  const std::int64_t ncells = info.num_modes();
  op::Workspace work(context);
  Complex* grid = work.get_as<Complex>(ncells + m);
  Complex* gw = grid + ncells;
  op::VectorOps<T> vec(context);
  vec.fill(m, Complex(1), weights);
  const int nthreads = cpu_threads_for(context.nthreads());
  for (int it = 0; it < options.iterations; ++it) {
    plan.execute(weights, grid);        // Cᴴ w: spread
    plan.execute_adjoint(grid, gw);     // C Cᴴ w: interpolate
    if (context.is_host()) {
      divide_by_abs_host(m, weights, gw, nthreads);
    } else {
#if FIELDFT_HAVE_CUDA
      cuda::density::divide_by_abs<T>({context.device(), context.stream()}, m, weights, gw);
#endif
    }
  }
  // Real, scaled weights (the imaginary parts are zero already: real kernel, real start).
  vec.scale(m, Complex(static_cast<T>(scale)), weights);
}

template <class T>
std::vector<T> density_compensation(const Encoding<T>& encoding, const Context& context,
                                    const DensityOptions& options) {
  const std::int64_t m = encoding.num_samples();
  check_options(options, m);
  std::vector<T> out(static_cast<std::size_t>(m));
  if (context.is_host()) {
    std::vector<std::complex<T>> w(static_cast<std::size_t>(m));
    density_compensation_to(encoding, context, w.data(), options);
    for (std::int64_t j = 0; j < m; ++j) out[j] = w[j].real();
    return out;
  }
#if FIELDFT_HAVE_CUDA
  op::Workspace work(context);
  auto* w = work.get_as<std::complex<T>>(m);
  density_compensation_to(encoding, context, w, options);
  cuda::density::download_real<T>({context.device(), context.stream()}, m, w, out.data());
#endif
  return out;
}

template std::vector<float> density_compensation<float>(const Encoding<float>&, const Context&, const DensityOptions&);
template std::vector<double> density_compensation<double>(const Encoding<double>&, const Context&,
                                                          const DensityOptions&);
template void density_compensation_to<float>(const Encoding<float>&, const Context&, std::complex<float>*,
                                             const DensityOptions&);
template void density_compensation_to<double>(const Encoding<double>&, const Context&, std::complex<double>*,
                                              const DensityOptions&);

}  // namespace fieldft::mri
