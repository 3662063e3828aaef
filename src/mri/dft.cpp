// fieldft::mri::Dft / DftR2: input validation, the precomputation shared by both backends
// (tile bases, field offsets, gradient maps) and the dispatch to a backend engine (src/cpu,
// src/cuda) in the operator's context.
#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <string>

#include "fieldft/config.hpp"  // first: FIELDFT_HAVE_CUDA selects the includes below
#include "core/dft_setup.hpp"
#include "core/threads.hpp"
#include "cpu/dft_cpu.hpp"
#if FIELDFT_HAVE_CUDA
#include "cuda/dft_engine.hpp"
#endif
#include "fieldft/mri/dft.hpp"
#include "fieldft/nufft.hpp"  // cpu_threads_for
#include "fieldft/runtime.hpp"
#include "mri/dft_setup_build.hpp"

namespace fieldft::mri {

namespace {

constexpr double kInvTwoPi = 1.0 / fieldft::detail::dft::kTwoPi;
constexpr const char* kThreadsOption = "Dft: options.nthreads";

std::int64_t checked_mul(std::int64_t a, std::int64_t b, const char* what) {
  std::int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r))
    throw Error(ErrorCode::kTooLarge, std::string("Dft: ") + what + " overflows 64-bit indexing (" +
                                          std::to_string(a) + " x " + std::to_string(b) + ")");
  return r;
}

template <class T>
void require_finite(std::span<const T> v, const char* name) {
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (!std::isfinite(v[i])) {
      std::ostringstream os;
      os << "Dft: " << name << "[" << i << "] is " << v[i]
         << "; trajectory, field map, readout times and gradient maps must be finite";
      throw Error(ErrorCode::kNonFinite, os.str());
    }
  }
}

void require_length(std::size_t got, std::int64_t want, const char* name, const char* what) {
  if (static_cast<std::int64_t>(got) != want) {
    std::ostringstream os;
    os << "Dft: " << name << " has " << got << " values, expected " << want << " (" << what << ")";
    throw Error(ErrorCode::kShapeMismatch, os.str());
  }
}

// Central differences of f (Hz) along axis d; one-sided at the edges, 0 when N_d = 1.
std::vector<double> central_difference(const std::vector<double>& f, const std::array<std::int64_t, 3>& n,
                                       int d) {
  std::vector<double> g(f.size(), 0.0);
  const std::int64_t nd = n[d];
  if (nd < 2) return g;
  const std::int64_t stride = d == 0 ? 1 : (d == 1 ? n[0] : n[0] * n[1]);
  const std::int64_t total = static_cast<std::int64_t>(f.size());
#pragma omp parallel for schedule(static) if (total > (1 << 16))
  for (std::int64_t v = 0; v < total; ++v) {
    const std::int64_t i = (v / stride) % nd;
    if (i == 0)
      g[v] = f[v + stride] - f[v];
    else if (i == nd - 1)
      g[v] = f[v] - f[v - stride];
    else
      g[v] = 0.5 * (f[v + stride] - f[v - stride]);
  }
  return g;
}

struct Grid {
  int dim;
  std::array<std::int64_t, 3> n;
  std::int64_t voxels;
};

Grid check_grid(std::span<const std::int64_t> grid) {
  require(grid.size() == 2 || grid.size() == 3, ErrorCode::kInvalidArgument,
          "Dft: the image grid must have 2 or 3 sizes, got " + std::to_string(grid.size()));
  Grid g{static_cast<int>(grid.size()), {1, 1, 1}, 1};
  for (std::size_t d = 0; d < grid.size(); ++d) {
    require(grid[d] >= 1, ErrorCode::kInvalidArgument,
            "Dft: grid size " + std::to_string(d) + " is " + std::to_string(grid[d]) +
                ", expected >= 1");
    g.n[d] = grid[d];
  }
  g.voxels = checked_mul(checked_mul(g.n[0], g.n[1], "the number of voxels"), g.n[2],
                         "the number of voxels");
  return g;
}

// The context DftOptions describe: validated as the options (messages name them), then
// Context::from_options with a stream of the operator's own when none is given.
Context options_context(const DftOptions& options) {
  (void)core::resolve_cpu_threads(options.nthreads, kThreadsOption);  // the NUFFT plan's rule
  require(options.device >= 0, ErrorCode::kInvalidArgument,
          "Dft: options.device is " + std::to_string(options.device) + ", expected >= 0");
  Backend backend = options.backend;
  if (backend != Backend::kCpu) {
#if FIELDFT_HAVE_CUDA
    const auto devices = cuda_devices();
    if (backend == Backend::kAuto) {
      backend = devices.empty() ? Backend::kCpu : Backend::kCuda;
    } else {
      require(!devices.empty(), ErrorCode::kBackendUnavailable,
              "Dft: the CUDA backend was requested but no CUDA device is visible");
      require(options.device < static_cast<int>(devices.size()), ErrorCode::kBackendUnavailable,
              "Dft: CUDA device " + std::to_string(options.device) + " requested, " +
                  std::to_string(devices.size()) + " visible");
    }
#else
    require(backend != Backend::kCuda, ErrorCode::kBackendUnavailable,
            "Dft: the CUDA backend was requested but fieldft was built without CUDA");
    backend = Backend::kCpu;
#endif
  }
  return Context::from_options(backend, options.device, options.stream, options.nthreads, /*own_stream=*/true);
}

template <class T>
std::array<std::vector<T>, 3> compute_gradient_maps_impl(std::span<const std::int64_t> grid,
                                                    std::span<const T> field) {
  const Grid g = check_grid(grid);
  require_length(field.size(), g.voxels, "field", "one value per voxel");
  require_finite(field, "field");
  std::vector<double> f(field.size());
  for (std::size_t v = 0; v < f.size(); ++v) f[v] = static_cast<double>(field[v]) * kInvTwoPi;
  std::array<std::vector<T>, 3> out;
  for (int d = 0; d < g.dim; ++d) {
    const auto gd = central_difference(f, g.n, d);
    out[d].assign(gd.begin(), gd.end());
  }
  return out;
}

// Validates the inputs and precomputes everything both backends share.
template <class T>
std::shared_ptr<core::DftSetup> build_setup(std::span<const std::int64_t> grid, std::span<const T> kx,
                                            std::span<const T> ky, std::span<const T> kz,
                                            std::span<const T> field, std::span<const T> times,
                                            const GradientMaps<T>* gradients, bool r2, std::int64_t images) {
  const Grid g = check_grid(grid);
  const std::int64_t m = static_cast<std::int64_t>(kx.size());
  require_length(ky.size(), m, "ky", "one value per sample, like kx");
  if (g.dim == 3)
    require_length(kz.size(), m, "kz", "one value per sample, like kx");
  else
    require_length(kz.size(), 0, "kz", "must be empty for a 2D grid");
  if (!field.empty()) require_length(field.size(), g.voxels, "field", "one value per voxel, or empty");
  if (!times.empty()) require_length(times.size(), m, "times", "one value per sample, or empty");
  require(images >= 1, ErrorCode::kInvalidArgument,
          "Dft: images is " + std::to_string(images) + ", expected >= 1");
  // Every buffer of the operator must be addressable in bytes with 64-bit arithmetic.
  checked_mul(checked_mul(g.voxels, images, "voxels x images"),
              static_cast<std::int64_t>(sizeof(std::complex<T>)), "the image buffer size in bytes");
  checked_mul(checked_mul(std::max<std::int64_t>(m, 1), images, "samples x images"),
              static_cast<std::int64_t>(sizeof(std::complex<T>)), "the sample buffer size in bytes");
  require_finite(kx, "kx");
  require_finite(ky, "ky");
  require_finite(kz, "kz");
  require_finite(field, "field");
  require_finite(times, "times");
  if (gradients) {
    require_length(gradients->gx.size(), g.voxels, "gx", "one gradient value per voxel");
    require_length(gradients->gy.size(), g.voxels, "gy", "one gradient value per voxel");
    if (g.dim == 3)
      require_length(gradients->gz.size(), g.voxels, "gz", "one gradient value per voxel");
    else
      require_length(gradients->gz.size(), 0, "gz", "must be empty for a 2D grid");
    require_finite(gradients->gx, "gx");
    require_finite(gradients->gy, "gy");
    require_finite(gradients->gz, "gz");
  }

  auto s = std::make_shared<core::DftSetup>();
  s->dim = g.dim;
  s->n = g.n;
  s->tile = fieldft::detail::dft::tile_shape(g.dim);
  const int ts[3] = {s->tile.x, s->tile.y, s->tile.z};
  for (int d = 0; d < 3; ++d) s->ntiles[d] = (g.n[d] + ts[d] - 1) / ts[d];
  s->num_voxels = g.voxels;
  s->num_samples = m;
  s->num_tiles = s->ntiles[0] * s->ntiles[1] * s->ntiles[2];
  s->images = images;
  s->r2 = r2;
  const std::span<const T> ks[3] = {kx, ky, kz};
  for (int d = 0; d < 3; ++d) {
    s->u[d].assign(static_cast<std::size_t>(m), 0.0);
    if (d < g.dim)
      for (std::int64_t j = 0; j < m; ++j)
        s->u[d][j] = static_cast<double>(ks[d][j]) / static_cast<double>(g.n[d]);
  }
  s->t.assign(static_cast<std::size_t>(m), 0.0);
  for (std::size_t j = 0; j < times.size(); ++j) s->t[j] = static_cast<double>(times[j]);

  std::vector<double> f(static_cast<std::size_t>(g.voxels), 0.0);
  for (std::size_t v = 0; v < field.size(); ++v) f[v] = static_cast<double>(field[v]) * kInvTwoPi;
  // Reference frequency per tile: the midrange, which minimises max |f - fref| in the tile.
  s->fref.assign(static_cast<std::size_t>(s->num_tiles), 0.0);
  s->fprime.assign(f.size(), 0.0);
  for (std::int64_t b = 0; b < s->num_tiles; ++b) {
    const auto o = s->tile_origin(b);
    const std::int64_t x1 = std::min<std::int64_t>(o[0] + ts[0], g.n[0]);
    const std::int64_t y1 = std::min<std::int64_t>(o[1] + ts[1], g.n[1]);
    const std::int64_t z1 = std::min<std::int64_t>(o[2] + ts[2], g.n[2]);
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    for (std::int64_t z = o[2]; z < z1; ++z)
      for (std::int64_t y = o[1]; y < y1; ++y)
        for (std::int64_t x = o[0]; x < x1; ++x) {
          const double fv = f[x + g.n[0] * (y + g.n[1] * z)];
          lo = std::min(lo, fv);
          hi = std::max(hi, fv);
        }
    const double ref = 0.5 * (lo + hi);
    s->fref[b] = ref;
    for (std::int64_t z = o[2]; z < z1; ++z)
      for (std::int64_t y = o[1]; y < y1; ++y)
        for (std::int64_t x = o[0]; x < x1; ++x) {
          const std::int64_t v = x + g.n[0] * (y + g.n[1] * z);
          s->fprime[v] = f[v] - ref;
        }
  }
  if (r2) {
    for (int d = 0; d < 3; ++d) s->g[d].assign(f.size(), 0.0);
    if (gradients) {
      const std::span<const T> gs[3] = {gradients->gx, gradients->gy, gradients->gz};
      for (int d = 0; d < g.dim; ++d)
        for (std::size_t v = 0; v < f.size(); ++v) s->g[d][v] = static_cast<double>(gs[d][v]);
    } else {
      for (int d = 0; d < g.dim; ++d) s->g[d] = central_difference(f, g.n, d);
    }
  }
  return s;
}

op::Shape domain_shape_of(const core::DftSetup& s) {
  op::Shape sh(s.n.begin(), s.n.begin() + s.dim);
  if (s.images > 1) sh.push_back(s.images);
  return sh;
}

op::Shape codomain_shape_of(const core::DftSetup& s) {
  op::Shape sh{s.num_samples};
  if (s.images > 1) sh.push_back(s.images);
  return sh;
}

}  // namespace

template <class T>
std::array<std::vector<T>, 3> compute_gradient_maps(std::span<const std::int64_t> grid,
                                                    std::span<const T> field) {
  return compute_gradient_maps_impl<T>(grid, field);
}

namespace detail {

template <class T>
std::shared_ptr<core::DftSetup> build_dft_setup(std::span<const std::int64_t> grid, std::span<const T> kx,
                                                std::span<const T> ky, std::span<const T> kz,
                                                std::span<const T> field, std::span<const T> times,
                                                std::int64_t images) {
  return build_setup<T>(grid, kx, ky, kz, field, times, nullptr, false, images);
}

template std::shared_ptr<core::DftSetup> build_dft_setup<float>(std::span<const std::int64_t>, std::span<const float>,
                                                                std::span<const float>, std::span<const float>,
                                                                std::span<const float>, std::span<const float>,
                                                                std::int64_t);
template std::shared_ptr<core::DftSetup> build_dft_setup<double>(std::span<const std::int64_t>,
                                                                 std::span<const double>, std::span<const double>,
                                                                 std::span<const double>, std::span<const double>,
                                                                 std::span<const double>, std::int64_t);

}  // namespace detail

template <class T>
struct Dft<T>::Prepared {
  std::shared_ptr<core::DftSetup> setup;
  Context context;
};

template <class T>
Dft<T>::Dft(std::span<const std::int64_t> grid, std::span<const T> kx, std::span<const T> ky,
            std::span<const T> kz, std::span<const T> field, std::span<const T> times,
            const Context& context, std::int64_t images)
    : Dft(grid, kx, ky, kz, field, times, nullptr, false, context, images) {}

template <class T>
Dft<T>::Dft(std::span<const std::int64_t> grid, std::span<const T> kx, std::span<const T> ky,
            std::span<const T> kz, std::span<const T> field, std::span<const T> times,
            const DftOptions& options)
    : Dft(grid, kx, ky, kz, field, times, nullptr, false, options) {}

// The braced initialisers run in order: the input is validated before the context is made.
template <class T>
Dft<T>::Dft(std::span<const std::int64_t> grid, std::span<const T> kx, std::span<const T> ky,
            std::span<const T> kz, std::span<const T> field, std::span<const T> times,
            const GradientMaps<T>* gradients, bool r2, const Context& context, std::int64_t images)
    : Dft(Prepared{build_setup<T>(grid, kx, ky, kz, field, times, gradients, r2, images), context}) {}

// The CUDA engine's knobs (DftTuning), checked and resolved into the setup.
std::shared_ptr<core::DftSetup> with_tuning(std::shared_ptr<core::DftSetup> s, const DftTuning& t) {
  require(t.poly >= -1 && t.poly <= 4, ErrorCode::kInvalidArgument,
          "DftTuning::poly must be -1 (default), 0 to 3 (pairs of 8 on the polynomial) or 4 (warp-specialised), "
          "got " + std::to_string(t.poly));
  require(t.tc_min_images >= -1, ErrorCode::kInvalidArgument,
          "DftTuning::tc_min_images must be -1 (default), 0 (never) or an image count, got " +
              std::to_string(t.tc_min_images));
  if (t.poly >= 0) s->poly = t.poly;
  if (t.tc_min_images >= 0) s->tc_min_images = t.tc_min_images;
  return s;
}

template <class T>
Dft<T>::Dft(std::span<const std::int64_t> grid, std::span<const T> kx, std::span<const T> ky,
            std::span<const T> kz, std::span<const T> field, std::span<const T> times,
            const GradientMaps<T>* gradients, bool r2, const DftOptions& options)
    : Dft(Prepared{with_tuning(build_setup<T>(grid, kx, ky, kz, field, times, gradients, r2, options.images),
                               options.tuning),
                   options_context(options)}) {}

template <class T>
Dft<T>::Dft(Prepared p)
    : op::LinearOperator<T>(domain_shape_of(*p.setup), codomain_shape_of(*p.setup), p.context),
      dim_(p.setup->dim),
      grid_(p.setup->n),
      num_samples_(p.setup->num_samples),
      images_(p.setup->images),
      r2_(p.setup->r2) {
  const Context& c = this->context();
  if (c.is_cuda()) {
#if FIELDFT_HAVE_CUDA
    engine_ = cuda::make_dft_engine<T>(std::move(p.setup), c.device(), c.stream());
    return;
#else
    throw Error(ErrorCode::kBackendUnavailable, "Dft: a CUDA context, but fieldft was built without CUDA");
#endif
  }
  nthreads_ = core::resolve_cpu_threads(c.nthreads(), kThreadsOption);
  engine_ = cpu::make_dft_engine<T>(std::move(p.setup), nthreads_);
}

template <class T>
Dft<T>::~Dft() = default;

template <class T>
std::string Dft<T>::name() const {
  std::string s = r2_ ? "DftR2(" : "Dft(";
  s += op::shape_string(op::Shape(grid_.begin(), grid_.begin() + dim_)) + " -> " + std::to_string(num_samples_);
  if (images_ > 1) s += ", " + std::to_string(images_) + " images";
  return s + ")";
}

namespace {
template <class P>
void require_pointers(const P* in, const void* out, std::int64_t in_n, std::int64_t out_n,
                      const char* call) {
  require(in_n == 0 || in != nullptr, ErrorCode::kInvalidArgument,
          std::string("Dft::") + call + ": the input pointer is null");
  require(out_n == 0 || out != nullptr, ErrorCode::kInvalidArgument,
          std::string("Dft::") + call + ": the output pointer is null");
}
}  // namespace

template <class T>
void Dft<T>::apply(const Complex* x, Complex* y) {
  require_pointers(x, y, this->domain_size(), this->codomain_size(), "apply");
  engine_->forward(x, y, this->context().is_cuda());
}

template <class T>
void Dft<T>::apply_adjoint(const Complex* y, Complex* x) {
  require_pointers(y, x, this->codomain_size(), this->domain_size(), "apply_adjoint");
  engine_->adjoint(y, x, this->context().is_cuda());
}

template <class T>
void Dft<T>::forward(const Complex* image, Complex* samples) {
  require_pointers(image, samples, this->domain_size(), this->codomain_size(), "forward");
  engine_->forward(image, samples, false);
}

template <class T>
void Dft<T>::adjoint(const Complex* samples, Complex* image) {
  require_pointers(samples, image, this->codomain_size(), this->domain_size(), "adjoint");
  engine_->adjoint(samples, image, false);
}

template <class T>
void Dft<T>::forward_device(const Complex* image, Complex* samples) {
  require(this->context().is_cuda(), ErrorCode::kBackendUnavailable,
          "Dft::forward_device needs the CUDA backend; this operator runs on the CPU");
  require_pointers(image, samples, this->domain_size(), this->codomain_size(), "forward_device");
  engine_->forward(image, samples, true);
}

template <class T>
void Dft<T>::adjoint_device(const Complex* samples, Complex* image) {
  require(this->context().is_cuda(), ErrorCode::kBackendUnavailable,
          "Dft::adjoint_device needs the CUDA backend; this operator runs on the CPU");
  require_pointers(samples, image, this->codomain_size(), this->domain_size(), "adjoint_device");
  engine_->adjoint(samples, image, true);
}

template <class T>
DftR2<T>::DftR2(std::span<const std::int64_t> grid, std::span<const T> kx, std::span<const T> ky,
                std::span<const T> kz, std::span<const T> field, std::span<const T> times,
                const Context& context, std::int64_t images)
    : Dft<T>(grid, kx, ky, kz, field, times, nullptr, true, context, images) {}

template <class T>
DftR2<T>::DftR2(std::span<const std::int64_t> grid, std::span<const T> kx, std::span<const T> ky,
                std::span<const T> kz, std::span<const T> field, std::span<const T> times,
                const DftOptions& options)
    : Dft<T>(grid, kx, ky, kz, field, times, nullptr, true, options) {}

template <class T>
DftR2<T>::DftR2(std::span<const std::int64_t> grid, std::span<const T> kx, std::span<const T> ky,
                std::span<const T> kz, std::span<const T> field, std::span<const T> times,
                const GradientMaps<T>& gradients, const Context& context, std::int64_t images)
    : Dft<T>(grid, kx, ky, kz, field, times, &gradients, true, context, images) {}

template <class T>
DftR2<T>::DftR2(std::span<const std::int64_t> grid, std::span<const T> kx, std::span<const T> ky,
                std::span<const T> kz, std::span<const T> field, std::span<const T> times,
                const GradientMaps<T>& gradients, const DftOptions& options)
    : Dft<T>(grid, kx, ky, kz, field, times, &gradients, true, options) {}

template class Dft<float>;
template class Dft<double>;
template class DftR2<float>;
template class DftR2<double>;
template std::array<std::vector<float>, 3> compute_gradient_maps(std::span<const std::int64_t>,
                                                                 std::span<const float>);
template std::array<std::vector<double>, 3> compute_gradient_maps(std::span<const std::int64_t>,
                                                                  std::span<const double>);

}  // namespace fieldft::mri
