// fieldft::mri::ToeplitzNormal: validation, the detection of periodic axes, the kernel set-up
// (one type 1 NUFFT of the weights into the engine's embedding grid, then the engine's FFT) and
// the dispatch to a backend engine
// (src/cpu/toeplitz_cpu.hpp, src/cuda/toeplitz.hpp) in the operator's context.
#include <chrono>
#include <cmath>
#include <limits>
#include <numbers>
#include <sstream>
#include <string>
#include <vector>

#include "fieldft/config.hpp"  // first: FIELDFT_HAVE_CUDA selects the includes below
#include "core/toeplitz.hpp"
#include "cpu/toeplitz_cpu.hpp"
#if FIELDFT_HAVE_CUDA
#include "cuda/toeplitz.hpp"
#endif
#include "fieldft/error.hpp"
#include "fieldft/mri/toeplitz.hpp"
#include "mri/encoding_shapes.hpp"
#include "mri/toeplitz_psf.hpp"

namespace fieldft::mri {

namespace {

template <class T>
const Encoding<T>& checked_encoding(const std::shared_ptr<const Encoding<T>>& e) {
  require(e != nullptr, ErrorCode::kInvalidArgument, "ToeplitzNormal: the encoding is null");
  require(!e->has_field(), ErrorCode::kInvalidArgument,
          "ToeplitzNormal: the encoding has a field map; off-resonance breaks the shift invariance the "
          "Toeplitz form needs (field maps need time segmentation, one Toeplitz kernel per segment pair: a "
          "later issue); use an encoding without a field map, or DftEncoding's default normal");
  return *e;
}

template <class T>
void check_weights(std::span<const T> w, std::int64_t m) {
  require(w.empty() || static_cast<std::int64_t>(w.size()) == m, ErrorCode::kShapeMismatch,
          "ToeplitzNormal: weights has " + std::to_string(w.size()) + " values, expected " + std::to_string(m) +
              " (one per sample) or none (W = I)");
  for (std::size_t j = 0; j < w.size(); ++j) {
    if (!std::isfinite(w[j])) {
      std::ostringstream os;
      os << "ToeplitzNormal: weights[" << j << "] is " << w[j] << ", expected a finite value >= 0";
      throw Error(ErrorCode::kNonFinite, os.str());
    }
    if (w[j] < 0) {
      std::ostringstream os;
      os << "ToeplitzNormal: weights[" << j << "] is " << w[j]
         << ", expected >= 0 (W must be positive semidefinite: density compensation or noise weights)";
      throw Error(ErrorCode::kInvalidArgument, os.str());
    }
  }
}

using detail::initial_batch_shape;
using detail::joined;

// Everything the caller gave, checked before anything is allocated; the batch axes of options.batch.
template <class T>
op::Shape checked_batch_shape(const std::shared_ptr<const Encoding<T>>& e, std::span<const T> weights,
                              const ToeplitzOptions& options) {
  check_weights(weights, checked_encoding(e).num_samples());
  core::check_chunk_bytes(options.chunk_bytes, "ToeplitzNormal");
  return initial_batch_shape(options.batch, "ToeplitzNormal");
}

}  // namespace

template <class T>
struct ToeplitzNormal<T>::Kernel {
  explicit Kernel(const Context& c) : memory(c) {}
  op::Workspace memory;  // the kernel: kernel_cells() values of T in context memory
  T* data = nullptr;
  bool weighted = false;
  std::array<bool, 3> periodic{false, false, false};  // the geometry's periodic axes
  bool stacked = false;                               // and whether its last axis is a stack
  double setup_seconds = std::numeric_limits<double>::quiet_NaN();
};

template <class T>
struct ToeplitzNormal<T>::Engine {
  std::unique_ptr<core::ToeplitzEngine<T>> engine;
};

template <class T>
ToeplitzNormal<T>::ToeplitzNormal(std::shared_ptr<const Encoding<T>> encoding, Context context,
                                  std::span<const T> weights, ToeplitzOptions options)
    : ToeplitzNormal(encoding, std::move(context), options, checked_batch_shape(encoding, weights, options), nullptr,
                     weights) {
  const Encoding<T>& e = *encoding_;
  const std::int64_t m = e.num_samples();
  const auto start = std::chrono::steady_clock::now();

  const core::ToeplitzGeometry g = detail::toeplitz_geometry(e, options_.batch, periodic_, stacked_);
  auto kernel = std::make_shared<Kernel>(this->context());
  kernel->weighted = !weights.empty();
  kernel->periodic = periodic_;
  kernel->stacked = stacked_;
  kernel->data = kernel->memory.template get_as<T>(g.kernel_cells());

  detail::PsfTransform<T> psf(e, g, this->context(), options_.eps, options_.nufft);
  std::vector<Complex> c(static_cast<std::size_t>(m), Complex(1, 0));
  for (std::size_t j = 0; j < weights.size(); ++j) c[j] = Complex(weights[j], 0);
  // Host strengths: on a device the plan stages them and waits for the result.
  psf.execute(c.data(), engine_->engine->psf_buffer());
  engine_->engine->make_kernel(kernel->data);
  this->context().synchronize();
  kernel->setup_seconds =
      engine_seconds_ + std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  kernel_ = std::move(kernel);
}

template <class T>
ToeplitzNormal<T>::ToeplitzNormal(std::shared_ptr<const Encoding<T>> encoding, Context context, ToeplitzOptions options,
                                  op::Shape batch_shape, std::shared_ptr<const Kernel> kernel,
                                  std::span<const T> weights)
    : op::LinearOperator<T>(joined(checked_encoding(encoding).image_shape(), batch_shape),
                            joined(checked_encoding(encoding).image_shape(), batch_shape), std::move(context)),
      encoding_(std::move(encoding)),
      options_(std::move(options)),
      batch_shape_(std::move(batch_shape)),
      kernel_(std::move(kernel)),
      // Once per kernel: batched copies share it, and its geometry.
      periodic_(kernel_ ? kernel_->periodic
                        : detail::periodic_axes(*encoding_, options_.eps, options_.periodic_axes, &this->context())),
      stacked_(kernel_ ? kernel_->stacked
                       : detail::stacked_last_axis(*encoding_, periodic_, weights, false, options_.stacked_axis,
                                                   &this->context())) {
  make_engine();
}

template <class T>
ToeplitzNormal<T>::~ToeplitzNormal() = default;

template <class T>
void ToeplitzNormal<T>::make_engine() {
  const auto start = std::chrono::steady_clock::now();
  core::ToeplitzGeometry g = detail::toeplitz_geometry(*encoding_, options_.batch, periodic_, stacked_);
  g.chunk_bytes = options_.chunk_bytes;
  engine_ = std::make_unique<Engine>();
  const Context& c = this->context();
  if (c.is_host()) {
    // FFTW_MEASURE whatever the options say: see src/cpu/toeplitz_cpu.cpp.
    engine_->engine = cpu::make_toeplitz_engine<T>(g, cpu_threads_for(c.nthreads()), /*measure=*/true);
  } else {
#if FIELDFT_HAVE_CUDA
    engine_->engine = cuda::make_toeplitz_engine<T>(g, c.device(), c.stream());
#else
    throw Error(ErrorCode::kBackendUnavailable, "ToeplitzNormal: a CUDA context, but fieldft was built without CUDA");
#endif
  }
  engine_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

template <class T>
std::string ToeplitzNormal<T>::name() const {
  std::string s = "ToeplitzNormal(" + op::shape_string(encoding_->image_shape()) + ", " +
                  std::to_string(encoding_->num_samples()) + " samples";
  if (kernel_ && kernel_->weighted) s += ", weighted";
  if (options_.batch > 1) s += ", batch " + std::to_string(options_.batch);
  const auto g = detail::toeplitz_geometry(*encoding_, options_.batch, periodic_, stacked_);
  return s + ", grid " + core::toeplitz_grid_string(g) + ")";
}

template <class T>
void ToeplitzNormal<T>::apply(const Complex* x, Complex* z) {
  engine_->engine->apply(kernel_->data, x, z);
}

template <class T>
void ToeplitzNormal<T>::apply_adjoint(const Complex* x, Complex* z) {
  engine_->engine->apply(kernel_->data, x, z);
}

template <class T>
bool ToeplitzNormal<T>::apply_sense(const Complex* maps, const Complex* x, Complex* z) {
  return engine_->engine->apply_sense(kernel_->data, maps, x, z);
}

template <class T>
typename op::LinearOperator<T>::Ptr ToeplitzNormal<T>::batched(std::int64_t k) const {
  require(k >= 1, ErrorCode::kInvalidArgument, name() + ".batched(" + std::to_string(k) + "): expected k >= 1");
  std::int64_t batch = 0;
  require(!__builtin_mul_overflow(options_.batch, k, &batch), ErrorCode::kTooLarge,
          name() + ".batched(" + std::to_string(k) + "): the batch overflows 64 bits");
  ToeplitzOptions o = options_;
  o.batch = batch;
  op::Shape shape = batch_shape_;
  shape.push_back(k);
  return std::shared_ptr<ToeplitzNormal<T>>(
      new ToeplitzNormal<T>(encoding_, this->context(), o, std::move(shape), kernel_, {}));
}

template <class T>
bool ToeplitzNormal<T>::weighted() const noexcept {
  return kernel_->weighted;
}

template <class T>
std::array<std::int64_t, 3> ToeplitzNormal<T>::embedding_grid() const {
  return detail::toeplitz_geometry(*encoding_, options_.batch, periodic_).padded();
}

template <class T>
double ToeplitzNormal<T>::setup_seconds() const noexcept {
  return kernel_->setup_seconds;
}

template class ToeplitzNormal<float>;
template class ToeplitzNormal<double>;

}  // namespace fieldft::mri
