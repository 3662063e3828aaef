// fieldft::mri::NufftEncoding: the encoding model without a field map through two NUFFT plans.
//
// Forward s_j = Σ_v m_v exp(−2πi k_j·r_v) with r_d = (i_d − ⌊N_d/2⌋)/N_d is a type 2 transform
// with isign −1 at x_d = 2π k_d / N_d: the mode index of voxel i_d is k = i_d − ⌊N_d/2⌋ in
// increasing order (modeord 0), and k·x_d = 2π k_d r_d. The adjoint is the type 1 transform
// with isign +1 at the same points. Both plans are made, and their points set, once. The normal
// AᴴA goes through a ToeplitzNormal (fieldft/mri/toeplitz.hpp) when options.toeplitz says so,
// built at the first apply_normal.
#include <cmath>
#include <limits>
#include <numbers>
#include <string>
#include <vector>

#include "core/toeplitz.hpp"
#include "fieldft/error.hpp"
#include "fieldft/mri/encoding.hpp"
#include "fieldft/mri/toeplitz.hpp"
#include "fieldft/op/vector_ops.hpp"
#include "mri/encoding_points.hpp"
#include "mri/encoding_shapes.hpp"
#include "mri/toeplitz_psf.hpp"

namespace fieldft::mri {

namespace {

template <class T>
const Encoding<T>& checked_encoding(const std::shared_ptr<const Encoding<T>>& e) {
  require(e != nullptr, ErrorCode::kInvalidArgument, "NufftEncoding: the encoding is null");
  require(!e->has_field(), ErrorCode::kInvalidArgument,
          "NufftEncoding: the encoding has a field map, which a NUFFT alone cannot model; use DftEncoding "
          "(the exact field-corrected DFT) or time segmentation (issue 23), or an encoding without a field map");
  return *e;
}

using detail::initial_batch_shape;
using detail::joined;

}  // namespace

template <class T>
NufftEncoding<T>::NufftEncoding(std::shared_ptr<const Encoding<T>> encoding, Context context,
                                NufftEncodingOptions options)
    : NufftEncoding(std::move(encoding), std::move(context), options,
                    initial_batch_shape(options.batch, "NufftEncoding")) {}

template <class T>
NufftEncoding<T>::NufftEncoding(std::shared_ptr<const Encoding<T>> encoding, Context context,
                                NufftEncodingOptions options, op::Shape batch_shape)
    : op::LinearOperator<T>(joined(checked_encoding(encoding).image_shape(), batch_shape),
                            joined(checked_encoding(encoding).sample_shape(), batch_shape), std::move(context)),
      encoding_(std::move(encoding)),
      options_(std::move(options)),
      batch_shape_(std::move(batch_shape)) {
  const Encoding<T>& e = *encoding_;
  const int dim = e.dim();
  const std::span<const std::int64_t> modes(e.grid().data(), static_cast<std::size_t>(dim));
  nufft::Options o = options_.nufft;
  o.modeord = 0;  // the image is in increasing order: mode k of voxel i is i − ⌊N/2⌋
  forward_ = std::make_unique<nufft::Plan<T>>(2, modes, -1, options_.batch, options_.eps, this->context(), o);
  adjoint_ = std::make_unique<nufft::Plan<T>>(1, modes, +1, options_.batch, options_.eps, this->context(), o);

  // Points x_d = 2π k_d / N_d in radians (encoding_points.hpp). Host pointers: each plan copies
  // (on a device: uploads) and sorts them once, here.
  const std::int64_t m = e.num_samples();
  const auto x = detail::nufft_points(e);
  const T* p[3] = {nullptr, nullptr, nullptr};
  for (int d = 0; d < dim; ++d) p[d] = x[d].data();
  forward_->set_points(m, p[0], p[1], p[2]);
  adjoint_->set_points(m, p[0], p[1], p[2]);

  // The normal operator (after set_points: a device plan may choose its fine grid there).
  switch (options_.toeplitz) {
    case Toeplitz::kOff:
      toeplitz_reason_ = "off (options.toeplitz)";
      break;
    case Toeplitz::kOn:
      uses_toeplitz_ = true;
      toeplitz_reason_ = "on (options.toeplitz)";
      break;
    case Toeplitz::kAuto: {
      // The geometry ToeplitzNormal will take (its periodic axes at this eps, and whether the last
      // is a stack, for W = I: prepare_normal).
      const auto periodic = detail::periodic_axes(e, options_.eps, true, &this->context());
      const core::ToeplitzGeometry g = detail::toeplitz_geometry(
          e, options_.batch, periodic, detail::stacked_last_axis(e, periodic, {}, false, true, &this->context()));
      const auto shape = [](const nufft::PlanInfo& i) { return core::NufftShape{i.fine_grid, i.kernel_width}; };
      const auto c = core::choose_toeplitz(g, shape(forward_->info()), shape(adjoint_->info()), m, sizeof(Complex));
      uses_toeplitz_ = c.toeplitz;
      toeplitz_reason_ = "auto: " + c.reason;
      break;
    }
    default:
      throw Error(ErrorCode::kInvalidArgument, "NufftEncoding: options.toeplitz is " +
                                                   std::to_string(static_cast<int>(options_.toeplitz)) +
                                                   ", expected Toeplitz::kOff, kOn or kAuto");
  }
}

template <class T>
NufftEncoding<T>::~NufftEncoding() = default;

template <class T>
std::string NufftEncoding<T>::name() const {
  std::string s = "NufftEncoding(" + op::shape_string(encoding_->image_shape()) + " -> " +
                  std::to_string(encoding_->num_samples());
  if (options_.batch > 1) s += ", batch " + std::to_string(options_.batch);
  return s + ")";
}

template <class T>
void NufftEncoding<T>::apply(const Complex* x, Complex* y) {
  forward_->execute(x, y);
}

template <class T>
void NufftEncoding<T>::apply_adjoint(const Complex* y, Complex* x) {
  adjoint_->execute(y, x);
}

template <class T>
void NufftEncoding<T>::prepare_normal() {
  if (!uses_toeplitz_ || toeplitz_) return;
  ToeplitzOptions o;
  o.eps = options_.eps;
  o.batch = options_.batch;
  o.nufft = options_.nufft;
  toeplitz_ = std::make_unique<ToeplitzNormal<T>>(encoding_, this->context(), std::span<const T>(), o);
}

template <class T>
void NufftEncoding<T>::apply_normal(const Complex* x, Complex* z) {
  if (!uses_toeplitz_) {
    op::LinearOperator<T>::apply_normal(x, z);
    return;
  }
  prepare_normal();
  toeplitz_->apply(x, z);
}

template <class T>
typename op::LinearOperator<T>::Ptr NufftEncoding<T>::weighted_normal(const Complex* weights) {
  if (!uses_toeplitz_ || weights == nullptr) return nullptr;
  // The weights back to the host, once: the kernel is a type 1 transform of them. A Toeplitz
  // kernel is one W for all B images, so B blocks that differ (per-coil weights) keep the
  // solver's own A, ·w, Aᴴ; so do values a Toeplitz kernel cannot take (the solver reports those).
  const std::int64_t m = encoding_->num_samples(), b = options_.batch;
  std::vector<Complex> host(static_cast<std::size_t>(m * b));
  op::VectorOps<T>(this->context()).to_host(m * b, weights, host.data());
  std::vector<T> w(static_cast<std::size_t>(m));
  for (std::int64_t j = 0; j < m; ++j) {
    const Complex v = host[static_cast<std::size_t>(j)];
    if (!std::isfinite(v.real()) || v.real() < 0 || v.imag() != 0) return nullptr;
    w[static_cast<std::size_t>(j)] = v.real();
  }
  for (std::int64_t i = m; i < m * b; ++i)
    if (host[static_cast<std::size_t>(i)] != host[static_cast<std::size_t>(i % m)]) return nullptr;
  ToeplitzOptions o;
  o.eps = options_.eps;
  o.batch = b;
  o.nufft = options_.nufft;
  return std::make_shared<ToeplitzNormal<T>>(encoding_, this->context(), std::span<const T>(w), o);
}

template <class T>
bool NufftEncoding<T>::apply_sense_normal(const Complex* maps, const Complex* x, Complex* z) {
  if (!uses_toeplitz_) return false;
  prepare_normal();
  return toeplitz_->apply_sense(maps, x, z);
}

template <class T>
double NufftEncoding<T>::toeplitz_setup_seconds() const noexcept {
  return toeplitz_ ? toeplitz_->setup_seconds() : std::numeric_limits<double>::quiet_NaN();
}

template <class T>
typename op::LinearOperator<T>::Ptr NufftEncoding<T>::batched(std::int64_t k) const {
  require(k >= 1, ErrorCode::kInvalidArgument, name() + ".batched(" + std::to_string(k) + "): expected k >= 1");
  std::int64_t batch = 0;
  require(!__builtin_mul_overflow(options_.batch, k, &batch), ErrorCode::kTooLarge,
          name() + ".batched(" + std::to_string(k) + "): the batch overflows 64 bits");
  NufftEncodingOptions o = options_;
  o.batch = batch;
  op::Shape shape = batch_shape_;
  shape.push_back(k);
  return std::shared_ptr<NufftEncoding<T>>(new NufftEncoding<T>(encoding_, this->context(), o, std::move(shape)));
}

template <class T>
const nufft::PlanInfo& NufftEncoding<T>::forward_info() const {
  return forward_->info();
}

template <class T>
const nufft::PlanInfo& NufftEncoding<T>::adjoint_info() const {
  return adjoint_->info();
}

template class NufftEncoding<float>;
template class NufftEncoding<double>;

}  // namespace fieldft::mri
