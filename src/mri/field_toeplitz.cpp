// fieldft::mri::FieldToeplitzNormal (fieldft/mri/field_toeplitz.hpp): validation, the design of
// the difference interpolator (src/core/time_segmentation.hpp), the L' complex kernels (one type
// 1 transform of w_j·h_l(t_j) each, then the engine's complex FFT) and the dispatch to the
// Toeplitz engine's field-corrected SENSE pass (src/cpu/toeplitz_cpu.cpp, src/cuda/toeplitz.cu).
#include "fieldft/mri/field_toeplitz.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>
#include <limits>
#include <string>
#include <vector>

#include "core/time_segmentation.hpp"
#include "core/toeplitz.hpp"
#include "cpu/toeplitz_cpu.hpp"
#include "fieldft/config.hpp"  // first: FIELDFT_HAVE_CUDA selects the includes below
#if FIELDFT_HAVE_CUDA
#include "cuda/stream.hpp"
#include "cuda/time_segmentation.hpp"
#include "cuda/toeplitz.hpp"
#endif
#include "fieldft/error.hpp"
#include "mri/toeplitz_psf.hpp"
#include "op/host_loops.hpp"
#include "op/upload.hpp"

namespace fieldft::mri {

namespace {

constexpr int kQuantiles = 256;  // field values whose pairwise differences stand for Δ's histogram

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
  std::int64_t cells = 0;  // of one kernel: ∏ L_d
  core::ToeplitzGeometry geometry;  // the engine's (its periodic axes found once, in make_engine)
  int kernels_built = 0;    // by this rank
  double worst_error = 0, setup_seconds = 0, kernel_bytes = 0;
  SetupParts parts;
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

namespace {

// b_l(v) = exp(−iω_v τ_l) for the L' segment times, image by image (l slowest), over the host's
// threads. In float for T = float: |ω_v τ_l| stays within a few hundred radians (Hz-scale fields
// over ms readouts), where float's argument rounding (~6e-8 relative) and sincosf's error give
// ~1e-5 absolute at worst, and the images are stored in float anyway; the normal's accuracy
// target is 1e-3 and its type 1 transforms' eps at least float's 1e-6. Double for T = double.
template <class T>
void phase_images(const Context& c, std::span<const T> field, std::span<const double> tau, std::int64_t n,
                  std::complex<T>* b) {
  const auto segs = static_cast<std::int64_t>(tau.size());
  op::host::for_each_index(c, n * segs, n * segs, [&](std::int64_t i) {
    const std::int64_t l = i / n, v = i - l * n;
    const T phase = field.empty() ? T(0) : -field[static_cast<std::size_t>(v)] * static_cast<T>(tau[l]);
    b[i] = std::complex<T>(std::cos(phase), std::sin(phase));
  });
}

// FNV-1a over bytes: a fingerprint that ranks compare (not a security hash).
struct Fingerprint {
  std::uint64_t h = 1469598103934665603ull;
  void add(const void* data, std::size_t bytes) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (std::size_t i = 0; i < bytes; ++i) h = (h ^ p[i]) * 1099511628211ull;
  }
  template <class V>
  void add_value(const V& v) {
    add(&v, sizeof v);
  }
  // Up to kSampled evenly spaced entries of v and its length: a different trajectory, field map
  // or weights changes them (ranks that hold shares of one problem have the same arrays).
  template <class V>
  void add_sampled(std::span<const V> v) {
    constexpr std::size_t kSampled = 65536;
    add_value(v.size());
    const std::size_t step = std::max<std::size_t>(1, v.size() / kSampled);
    for (std::size_t i = 0; i < v.size(); i += step) add_value(v[i]);
  }
};

}  // namespace

template <class T>
void FieldToeplitzNormal<T>::build(std::span<const Complex> maps, const Complex* context_maps, std::int64_t coils,
                                   std::span<const T> weights, const FieldToeplitzOptions& options) {
  const std::string who = "FieldToeplitzNormal";
  require(impl_->encoding != nullptr, ErrorCode::kInvalidArgument, who + ": the encoding is null");
  const auto start = std::chrono::steady_clock::now();
  const Encoding<T>& e = *impl_->encoding;
  const std::int64_t n = e.num_voxels(), m = e.num_samples();
  const op::NormalShare& share = options.share;
  const std::string share_text = "options.share is rank " + std::to_string(share.rank) + " of " + std::to_string(share.size);
  require(share.size >= 1, ErrorCode::kInvalidArgument, who + ": " + share_text + ", expected size >= 1");
  const bool sharing = share.size > 1;
  require(!sharing || (share.broadcast && share.agree_max), ErrorCode::kInvalidArgument,
          who + ": " + share_text + " but has no broadcast or agree_max function");

  // Everything before the kernels. With a share, a failure here (bad input, a design that falls
  // short, no memory) is agreed over the ranks before it is thrown, so that no rank waits in a
  // broadcast that another never reaches.
  core::TimeSegmentationDesign d;
  Fingerprint print;
  std::exception_ptr failed;
  const Context& c = this->context();
  // setup_parts(): each part ends with the context synchronised, so that its seconds are its own.
  auto mark = std::chrono::steady_clock::now();
  const auto lap = [&](double& part) {
    c.synchronize();
    const auto now = std::chrono::steady_clock::now();
    part = std::chrono::duration<double>(now - mark).count();
    mark = now;
  };
  op::Workspace field_mem(c), tau_mem(c);  // the phase images' inputs on a device, until the end
  try {
    require(share.rank >= 0 && share.rank < share.size, ErrorCode::kInvalidArgument,
            who + ": " + share_text + ", expected a rank in [0, size)");
    require(coils >= 1, ErrorCode::kInvalidArgument, who + ": coils is " + std::to_string(coils) + ", expected >= 1");
    core::check_chunk_bytes(options.chunk_bytes, who);
    require(maps.empty() || static_cast<std::int64_t>(maps.size()) == n * coils, ErrorCode::kShapeMismatch,
            who + ": the maps hold " + std::to_string(maps.size()) + " values, expected " +
                std::to_string(n * coils) + " (the image's " + std::to_string(n) + " voxels times " +
                std::to_string(coils) + " coils) or none");
    require(!maps.empty() || context_maps || coils == 1, ErrorCode::kInvalidArgument,
            who + ": " + std::to_string(coils) + " coils but no maps");
    require(weights.empty() || static_cast<std::int64_t>(weights.size()) == m, ErrorCode::kShapeMismatch,
            who + ": weights has " + std::to_string(weights.size()) + " values, expected " + std::to_string(m) +
                " (one per sample) or none");
    for (std::size_t j = 0; j < weights.size(); ++j)
      require(std::isfinite(weights[j]) && weights[j] >= 0, ErrorCode::kInvalidArgument, [&] {
        return std::string(who + ": weights[" + std::to_string(j) + "] is " + std::to_string(weights[j]) +
                           ", expected a finite value >= 0");
      });
    for (std::size_t i = 0; i < maps.size(); ++i)
      require(std::isfinite(maps[i].real()) && std::isfinite(maps[i].imag()), ErrorCode::kNonFinite,
              [&] { return std::string(who + ": maps[" + std::to_string(i) + "] is not finite"); });

    // The difference interpolator (the design part from here).
    // The differences ω_a − ω_b over kQuantiles quantiles of the field map, both signs: a sample of
    // Δ's histogram (core::field_difference_sample, shared with mri::choose_field_model).
    mark = std::chrono::steady_clock::now();
    const auto diffs = core::field_difference_sample(e.field(), kQuantiles, c.nthreads());
    core::TimeSegmentationRequest req;
    req.field = diffs;
    req.times = e.times();
    req.samples = m;
    req.accuracy = options.accuracy;
    req.max_segments = options.max_segments;
    req.nthreads = c.nthreads();
    d = core::design_time_segmentation(req);
    impl_->segments = d.segments;
    impl_->worst_error = d.interpolation.worst_error;
    impl_->coils = coils;
    impl_->weighted = !weights.empty();

    lap(impl_->parts.design);

    // b_l(v) = exp(−iω_v τ_l), made where the normal runs (on a device from the field map and
    // the L' times: N values up instead of L'·N), and the maps.
    if (c.is_host()) {
      Complex* b = impl_->phases.template get_as<Complex>(n * d.segments);
      phase_images<T>(c, e.field(), d.segment_times, n, b);
      impl_->phase_data = b;
    } else {
#if FIELDFT_HAVE_CUDA
      Complex* b = impl_->phases.template get_as<Complex>(n * d.segments);
      const T* field = e.field().empty() ? nullptr : op::upload(field_mem, e.field());
      const double* tau = op::upload(tau_mem, d.segment_times);
      cuda::tseg::phase_images<T>(c.device(), c.stream(), field, tau, n, d.segments, b);
      impl_->phase_data = b;
#endif
    }
    impl_->map_data = context_maps;
    if (!maps.empty()) impl_->map_data = op::upload(impl_->maps, maps);
    lap(impl_->parts.phases);
    make_engine(options, weights);
    lap(impl_->parts.engine);

    if (sharing) {  // what the kernels depend on: ranks with the same print have the same kernels
      print.add_value(e.dim());
      print.add(e.grid().data(), sizeof(std::int64_t) * 3);
      print.add_value(sizeof(T));
      print.add_value(options.eps);
      print.add(impl_->geometry.periodic.data(), sizeof(bool) * 3);
      print.add_value(impl_->geometry.stacked);
      print.add_value(static_cast<int>(options.nufft.method));
      print.add_value(d.segments);
      print.add(d.segment_times.data(), d.segment_times.size() * sizeof(double));
      print.add(d.interpolation.coefficients.data(), d.interpolation.coefficients.size() * sizeof(std::complex<double>));
      print.add_sampled<std::int32_t>(d.times.index);
      for (int k = 0; k < e.dim(); ++k) print.add_sampled<T>(e.k(k));
      print.add_sampled<T>(weights);
    }
  } catch (...) {
    if (!sharing) throw;
    failed = std::current_exception();
  }

  // The ranks agree (a fixed sequence of agree_max calls, made by every rank): whether any
  // failed, whether their shares are consistent, and whether their kernels are the same.
  bool split = false;
  if (sharing) {
    const auto agree_same = [&](int v) { return share.agree_max(v) == -share.agree_max(-v); };
    const bool any_failed = share.agree_max(failed ? 1 : 0) != 0;
    const bool same_size = agree_same(share.size);
    const int top_rank = share.agree_max(share.rank), bottom_rank = -share.agree_max(-share.rank);
    const auto bits = print.h;
    const bool same_print = agree_same(static_cast<int>(bits & 0x7fffffff)) &&
                            agree_same(static_cast<int>((bits >> 31) & 0x7fffffff)) &&
                            agree_same(static_cast<int>(bits >> 62));
    if (failed) std::rethrow_exception(failed);
    require(same_size && top_rank == share.size - 1 && bottom_rank == 0, ErrorCode::kShapeMismatch,
            who + ": " + share_text + ", but the ranks taking part " + (same_size ? "" : "give different sizes, and ") + "run from " +
                std::to_string(bottom_rank) + " to " + std::to_string(top_rank) +
                ": expected every rank of the communicator, with its size (dist::rank_sum builds it so)");
    split = !any_failed && same_print;  // else every rank builds all kernels (parts of different problems)
  }

  // The L' kernels: with a split, kernel l on rank l mod K, then broadcast from there.
  const int segs = d.segments;
  mark = std::chrono::steady_clock::now();
  const std::int64_t cells = impl_->cells;
  Complex* kernels = impl_->kernels.template get_as<Complex>(cells * segs);
  const auto mine = [&](int l) { return !split || l % share.size == share.rank; };
  bool any_mine = false;
  for (int l = 0; l < segs; ++l) any_mine = any_mine || mine(l);
  if (any_mine) {  // a rank with no kernel of its own (L' < K) makes no type 1 plan
    detail::PsfTransform<T> psf(e, impl_->geometry, c, options.eps, options.nufft);
    // On a stack the transform reads the first plane's strengths only (PsfTransform).
    const std::int64_t psf_m =
        impl_->geometry.stacked ? m / impl_->geometry.n[static_cast<std::size_t>(e.dim() - 1)] : m;
    std::vector<Complex> strengths(static_cast<std::size_t>(psf_m));
    for (int l = 0; l < segs; ++l) {
      if (!mine(l)) continue;
      const auto& h = d.interpolation.coefficients;
      const auto& index = d.times.index;
      op::host::for_each_index(c, psf_m, psf_m, [&](std::int64_t j) {
        const std::complex<double> hj = h[static_cast<std::size_t>(index[static_cast<std::size_t>(j)]) * segs + l];
        const double w = weights.empty() ? 1.0 : static_cast<double>(weights[j]);
        strengths[static_cast<std::size_t>(j)] = Complex(static_cast<T>(w * hj.real()), static_cast<T>(w * hj.imag()));
      });
      psf.execute(strengths.data(), impl_->engine->psf_buffer());
      impl_->engine->make_complex_kernel(kernels + l * cells);
      ++impl_->kernels_built;
    }
  }
  lap(impl_->parts.kernels);
  if (split)
    for (int l = 0; l < segs; ++l)
      share.broadcast(kernels + l * cells, static_cast<std::size_t>(cells) * sizeof(Complex), l % share.size);
  impl_->kernel_data = kernels;
  lap(impl_->parts.broadcast);
  impl_->setup_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The engine over the C·L' images, and the check that the L' kernels fit.
template <class T>
void FieldToeplitzNormal<T>::make_engine(const FieldToeplitzOptions& options, std::span<const T> weights) {
  const std::string who = "FieldToeplitzNormal";
  const Encoding<T>& e = *impl_->encoding;
  const int segs = impl_->segments;
  const Context& c = this->context();
  const auto periodic = detail::periodic_axes(e, options.eps, options.periodic_axes, &c);
  // The kernels' strengths depend on a sample through its weight and its readout time only.
  core::ToeplitzGeometry g =
      detail::toeplitz_geometry(e, impl_->coils * segs, periodic,
                                detail::stacked_last_axis(e, periodic, weights, true, options.stacked_axis, &c));
  g.chunk_bytes = options.chunk_bytes;
  impl_->geometry = g;
  if (c.is_host()) {
    impl_->engine = cpu::make_toeplitz_engine<T>(g, cpu_threads_for(c.nthreads()), /*measure=*/true);
  } else {
#if FIELDFT_HAVE_CUDA
    impl_->engine = cuda::make_toeplitz_engine<T>(g, c.device(), c.stream());
#else
    throw Error(ErrorCode::kBackendUnavailable, who + ": a CUDA context, but fieldft was built without CUDA");
#endif
  }
  const std::int64_t cells = g.kernel_cells();  // one kernel (a plane of the grid on a stacked axis)
  impl_->cells = cells;
  impl_->kernel_bytes = static_cast<double>(cells) * segs * sizeof(Complex);
#if FIELDFT_HAVE_CUDA
  if (c.is_cuda()) {
    // The kernels and the set-up FFT's work area (at most one more grid) must fit what the engine
    // left: checked here, before the L' type 1 transforms, with the numbers in the message.
    const double need = impl_->kernel_bytes + static_cast<double>(g.padded_cells()) * sizeof(Complex);
    cuda::require_free_memory(c.device(), need,
                              who + ": its " + std::to_string(segs) + " kernels of " + std::to_string(cells) +
                                  " complex values (the " + core::toeplitz_grid_string(g) + " embedding of the " +
                                  op::shape_string(e.image_shape()) + " grid)",
                              "a looser accuracy (fewer segments), a smaller grid, or Toeplitz::kOff (the "
                              "time-segmented passes) needs less");
  }
#else
  (void)who;
#endif
}

template <class T>
FieldToeplitzNormal<T>::~FieldToeplitzNormal() = default;

template <class T>
std::string FieldToeplitzNormal<T>::name() const {
  std::string s = "FieldToeplitzNormal(" + op::shape_string(this->domain_shape()) + ", L' " +
                  std::to_string(impl_->segments);
  if (impl_->map_data) s += ", " + std::to_string(impl_->coils) + " coils";
  if (impl_->weighted) s += ", weighted";
  if (impl_->engine) s += ", grid " + core::toeplitz_grid_string(impl_->geometry);
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
std::array<std::int64_t, 3> FieldToeplitzNormal<T>::embedding_grid() const noexcept {
  return impl_->geometry.padded();
}
template <class T>
std::array<bool, 3> FieldToeplitzNormal<T>::periodic_axes() const noexcept {
  return impl_->geometry.periodic;
}
template <class T>
bool FieldToeplitzNormal<T>::stacked_axis() const noexcept {
  return impl_->geometry.stacked;
}
template <class T>
double FieldToeplitzNormal<T>::kernel_bytes() const noexcept {
  return impl_->kernel_bytes;
}
template <class T>
typename FieldToeplitzNormal<T>::SetupParts FieldToeplitzNormal<T>::setup_parts() const noexcept {
  return impl_->parts;
}
template <class T>
int FieldToeplitzNormal<T>::kernels_built() const noexcept {
  return impl_->kernels_built;
}

template class FieldToeplitzNormal<float>;
template class FieldToeplitzNormal<double>;

}  // namespace fieldft::mri
