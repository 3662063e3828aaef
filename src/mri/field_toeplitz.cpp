// fieldft::mri::FieldToeplitzNormal (fieldft/mri/field_toeplitz.hpp): validation, the design of
// the difference interpolator (src/core/time_segmentation.hpp), the L' complex kernels (one type
// 1 transform of w_j·h_l(t_j) each, then the engine's complex FFT) and the dispatch to the
// Toeplitz engine's field-corrected SENSE pass (src/cpu/toeplitz_cpu.cpp, src/cuda/toeplitz.cu).
#include "fieldft/mri/field_toeplitz.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "fieldft/config.hpp"  // first: FIELDFT_HAVE_CUDA selects the includes below
#include "core/time_segmentation.hpp"
#include "core/toeplitz.hpp"
#include "cpu/toeplitz_cpu.hpp"
#if FIELDFT_HAVE_CUDA
#include "cuda/stream.hpp"
#include "cuda/toeplitz.hpp"
#endif
#include "fieldft/error.hpp"
#include "mri/toeplitz_psf.hpp"
#include "op/upload.hpp"

namespace fieldft::mri {

namespace {

constexpr int kQuantiles = 256;  // field values whose pairwise differences stand for Δ's histogram

template <class T>
core::ToeplitzGeometry geometry(const Encoding<T>& e, std::int64_t batch) {
  core::ToeplitzGeometry g;
  g.dim = e.dim();
  g.n = e.grid();
  g.batch = batch;
  return g;
}

}  // namespace

template <class T>
struct FieldToeplitzNormal<T>::Impl {
  explicit Impl(const Context& c) : kernels(c), phases(c), maps(c) {}
  std::shared_ptr<const Encoding<T>> encoding;
  std::unique_ptr<core::ToeplitzEngine<T>> engine;
  op::Workspace kernels, phases, maps;
  const Complex* kernel_data = nullptr;
  const Complex* phase_data = nullptr;
  const Complex* map_data = nullptr;  // null: no coils
  std::int64_t coils = 1;
  int segments = 0;
  double worst_error = 0, setup_seconds = 0, kernel_bytes = 0;
  bool weighted = false;
};

template <class T>
bool FieldToeplitzNormal<T>::supported(const Encoding<T>& /*encoding*/, const Context& context) {
  return context.is_host() || context.is_cuda();  // every 2D and 3D grid (the CUDA engine's fused or cuFFT path)
}

template <class T>
FieldToeplitzNormal<T>::FieldToeplitzNormal(std::shared_ptr<const Encoding<T>> encoding, Context context,
                                            std::span<const Complex> maps, std::int64_t coils,
                                            std::span<const T> weights, FieldToeplitzOptions options)
    : op::LinearOperator<T>(encoding ? encoding->image_shape() : op::Shape{1},
                            encoding ? encoding->image_shape() : op::Shape{1}, context),
      impl_(std::make_unique<Impl>(this->context())) {
  impl_->encoding = std::move(encoding);
  build(maps, nullptr, coils, weights, options);
}

template <class T>
FieldToeplitzNormal<T>::FieldToeplitzNormal(std::shared_ptr<const Encoding<T>> encoding, Context context, Empty)
    : op::LinearOperator<T>(encoding ? encoding->image_shape() : op::Shape{1},
                            encoding ? encoding->image_shape() : op::Shape{1}, context),
      impl_(std::make_unique<Impl>(this->context())) {
  impl_->encoding = std::move(encoding);
}

template <class T>
std::unique_ptr<FieldToeplitzNormal<T>> FieldToeplitzNormal<T>::with_context_maps(
    std::shared_ptr<const Encoding<T>> encoding, Context context, const Complex* context_maps, std::int64_t coils,
    std::span<const T> weights, FieldToeplitzOptions options) {
  require(context_maps != nullptr, ErrorCode::kInvalidArgument, "FieldToeplitzNormal: the maps are null");
  std::unique_ptr<FieldToeplitzNormal<T>> f(new FieldToeplitzNormal<T>(std::move(encoding), std::move(context), Empty{}));
  f->build({}, context_maps, coils, weights, options);
  return f;
}

template <class T>
void FieldToeplitzNormal<T>::build(std::span<const Complex> maps, const Complex* context_maps, std::int64_t coils,
                                   std::span<const T> weights, const FieldToeplitzOptions& options) {
  const std::string who = "FieldToeplitzNormal";
  require(impl_->encoding != nullptr, ErrorCode::kInvalidArgument, who + ": the encoding is null");
  const auto start = std::chrono::steady_clock::now();
  const Encoding<T>& e = *impl_->encoding;
  const std::int64_t n = e.num_voxels(), m = e.num_samples();
  require(coils >= 1, ErrorCode::kInvalidArgument, who + ": coils is " + std::to_string(coils) + ", expected >= 1");
  core::check_chunk_bytes(options.chunk_bytes, who);
  require(maps.empty() || static_cast<std::int64_t>(maps.size()) == n * coils, ErrorCode::kShapeMismatch,
          who + ": the maps hold " + std::to_string(maps.size()) + " values, expected " + std::to_string(n * coils) +
              " (the image's " + std::to_string(n) + " voxels times " + std::to_string(coils) + " coils) or none");
  require(!maps.empty() || context_maps || coils == 1, ErrorCode::kInvalidArgument,
          who + ": " + std::to_string(coils) + " coils but no maps");
  require(weights.empty() || static_cast<std::int64_t>(weights.size()) == m, ErrorCode::kShapeMismatch,
          who + ": weights has " + std::to_string(weights.size()) + " values, expected " + std::to_string(m) +
              " (one per sample) or none");
  for (std::size_t j = 0; j < weights.size(); ++j)
    require(std::isfinite(weights[j]) && weights[j] >= 0, ErrorCode::kInvalidArgument,
            who + ": weights[" + std::to_string(j) + "] is " + std::to_string(weights[j]) +
                ", expected a finite value >= 0");
  for (std::size_t i = 0; i < maps.size(); ++i)
    require(std::isfinite(maps[i].real()) && std::isfinite(maps[i].imag()), ErrorCode::kNonFinite,
            who + ": maps[" + std::to_string(i) + "] is not finite");

  // The difference interpolator.
  // The differences ω_a − ω_b over kQuantiles quantiles of the field map, both signs: a sample of
  // Δ's histogram (core::field_difference_sample, shared with mri::choose_field_model).
  const auto diffs = core::field_difference_sample(std::vector<double>(e.field().begin(), e.field().end()), kQuantiles);
  const std::vector<double> times(e.times().begin(), e.times().end());
  core::TimeSegmentationRequest req;
  req.field = diffs;
  req.times = times;
  req.samples = m;
  req.accuracy = options.accuracy;
  req.max_segments = options.max_segments;
  const core::TimeSegmentationDesign d = core::design_time_segmentation(req);
  const int segs = d.segments;
  impl_->segments = segs;
  impl_->worst_error = d.interpolation.worst_error;
  impl_->coils = coils;
  impl_->weighted = !weights.empty();

  // b_l(v) = exp(−iω_v τ_l), and the maps.
  const auto field = e.field();
  std::vector<Complex> b(static_cast<std::size_t>(n * segs));
  for (int l = 0; l < segs; ++l)
    for (std::int64_t v = 0; v < n; ++v) {
      const double phase = field.empty() ? 0.0 : -static_cast<double>(field[v]) * d.segment_times[l];
      b[static_cast<std::size_t>(l * n + v)] = Complex(static_cast<T>(std::cos(phase)), static_cast<T>(std::sin(phase)));
    }
  impl_->phase_data = op::upload(impl_->phases, b);
  impl_->map_data = context_maps;
  if (!maps.empty()) impl_->map_data = op::upload(impl_->maps, maps);

  // The engine over the C·L' images, and the L' kernels.
  core::ToeplitzGeometry g = geometry(e, coils * segs);
  g.chunk_bytes = options.chunk_bytes;
  const Context& c = this->context();
  if (c.is_host()) {
    impl_->engine = cpu::make_toeplitz_engine<T>(g, cpu_threads_for(c.nthreads()), /*measure=*/true);
  } else {
#if FIELDFT_HAVE_CUDA
    impl_->engine = cuda::make_toeplitz_engine<T>(g, c.device(), c.stream());
#else
    throw Error(ErrorCode::kBackendUnavailable, who + ": a CUDA context, but fieldft was built without CUDA");
#endif
  }
  const std::int64_t cells = g.padded_cells();
  impl_->kernel_bytes = static_cast<double>(cells) * segs * sizeof(Complex);
#if FIELDFT_HAVE_CUDA
  if (c.is_cuda()) {
    // The kernels and the set-up FFT's work area (at most one more grid) must fit what the engine
    // left: checked here, before the L' type 1 transforms, with the numbers in the message.
    const double need = impl_->kernel_bytes + static_cast<double>(cells) * sizeof(Complex);
    const double free_b = static_cast<double>(cuda::free_memory(c.device()));
    if (need > free_b) {
      char buf[400];
      std::snprintf(buf, sizeof buf,
                    "%s: its %d kernels of %lld complex values (2^d·N of the %s grid) need %.0f MiB on CUDA "
                    "device %d, %.0f MiB free; a looser accuracy (fewer segments), a smaller grid, or "
                    "Toeplitz::kOff (the time-segmented passes) needs less",
                    who.c_str(), segs, static_cast<long long>(cells), op::shape_string(e.image_shape()).c_str(),
                    need / (1 << 20), c.device(), free_b / (1 << 20));
      throw Error(ErrorCode::kOutOfMemory, buf);
    }
  }
#endif
  Complex* kernels = impl_->kernels.template get_as<Complex>(cells * segs);
  detail::PsfTransform<T> psf(e, c, options.eps, options.nufft);
  std::vector<Complex> strengths(static_cast<std::size_t>(m));
  for (int l = 0; l < segs; ++l) {
    for (std::int64_t j = 0; j < m; ++j) {
      const std::complex<double> h =
          d.interpolation.coefficients[static_cast<std::size_t>(d.times.index[static_cast<std::size_t>(j)]) * segs + l];
      const double w = weights.empty() ? 1.0 : static_cast<double>(weights[j]);
      strengths[static_cast<std::size_t>(j)] = Complex(static_cast<T>(w * h.real()), static_cast<T>(w * h.imag()));
    }
    psf.execute(strengths.data(), impl_->engine->psf_buffer());
    impl_->engine->make_complex_kernel(kernels + l * cells);
  }
  impl_->kernel_data = kernels;
  c.synchronize();
  impl_->setup_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

template <class T>
FieldToeplitzNormal<T>::~FieldToeplitzNormal() = default;

template <class T>
std::string FieldToeplitzNormal<T>::name() const {
  std::string s = "FieldToeplitzNormal(" + op::shape_string(this->domain_shape()) + ", L' " +
                  std::to_string(impl_->segments);
  if (impl_->map_data) s += ", " + std::to_string(impl_->coils) + " coils";
  if (impl_->weighted) s += ", weighted";
  return s + ")";
}

template <class T>
void FieldToeplitzNormal<T>::apply(const Complex* x, Complex* z) {
  const bool done = impl_->engine->apply_field_sense(impl_->kernel_data, impl_->segments, impl_->map_data,
                                                     impl_->phase_data, x, z);
  require(done, ErrorCode::kInternal, name() + ": the engine has no field-corrected pass");
}

template <class T>
void FieldToeplitzNormal<T>::apply_adjoint(const Complex* x, Complex* z) {
  apply(x, z);
}

template <class T>
int FieldToeplitzNormal<T>::segments() const noexcept {
  return impl_->segments;
}
template <class T>
double FieldToeplitzNormal<T>::worst_error() const noexcept {
  return impl_->worst_error;
}
template <class T>
double FieldToeplitzNormal<T>::setup_seconds() const noexcept {
  return impl_->setup_seconds;
}
template <class T>
double FieldToeplitzNormal<T>::kernel_bytes() const noexcept {
  return impl_->kernel_bytes;
}

template class FieldToeplitzNormal<float>;
template class FieldToeplitzNormal<double>;

}  // namespace fieldft::mri
