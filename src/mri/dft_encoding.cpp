// fieldft::mri::DftEncoding / DftR2Encoding: the encoding model evaluated exactly, as thin
// operators over mri::Dft / DftR2 (images = the batch) in the operator's context.
#include <string>

#include "fieldft/error.hpp"
#include "fieldft/mri/dft.hpp"
#include "fieldft/mri/encoding.hpp"
#include "mri/encoding_shapes.hpp"

namespace fieldft::mri {

namespace {

template <class T>
const Encoding<T>& checked_encoding(const std::shared_ptr<const Encoding<T>>& e, bool r2) {
  require(e != nullptr, ErrorCode::kInvalidArgument,
          std::string(r2 ? "DftR2Encoding" : "DftEncoding") + ": the encoding is null");
  return *e;
}

using detail::initial_batch_shape;
using detail::joined;

}  // namespace

template <class T>
struct DftEncoding<T>::Impl {
  std::unique_ptr<Dft<T>> dft;  // a DftR2 for the R2* model
};

template <class T>
DftEncoding<T>::DftEncoding(std::shared_ptr<const Encoding<T>> encoding, Context context, DftEncodingOptions options)
    : DftEncoding(std::move(encoding), std::move(context), options, false) {}

template <class T>
DftEncoding<T>::DftEncoding(std::shared_ptr<const Encoding<T>> encoding, Context context, DftEncodingOptions options,
                            bool r2)
    : DftEncoding(std::move(encoding), std::move(context), options, r2, initial_batch_shape(options.batch, r2 ? "DftR2Encoding" : "DftEncoding")) {}

template <class T>
DftEncoding<T>::DftEncoding(std::shared_ptr<const Encoding<T>> encoding, Context context, DftEncodingOptions options,
                            bool r2, op::Shape batch_shape)
    : op::LinearOperator<T>(joined(checked_encoding(encoding, r2).image_shape(), batch_shape),
                            joined(checked_encoding(encoding, r2).sample_shape(), batch_shape), std::move(context)),
      encoding_(std::move(encoding)),
      options_(options),
      r2_(r2),
      batch_shape_(std::move(batch_shape)),
      impl_(std::make_unique<Impl>()) {
  const Encoding<T>& e = *encoding_;
  const std::span<const std::int64_t> grid(e.grid().data(), static_cast<std::size_t>(e.dim()));
  const std::span<const T> kz = e.dim() == 3 ? e.k(2) : std::span<const T>();
  if (r2_)
    impl_->dft = std::make_unique<DftR2<T>>(grid, e.k(0), e.k(1), kz, e.field(), e.times(), this->context(),
                                            options_.batch);
  else
    impl_->dft = std::make_unique<Dft<T>>(grid, e.k(0), e.k(1), kz, e.field(), e.times(), this->context(),
                                          options_.batch);
}

template <class T>
DftEncoding<T>::~DftEncoding() = default;

template <class T>
std::string DftEncoding<T>::name() const {
  std::string s = std::string(r2_ ? "DftR2Encoding(" : "DftEncoding(") + op::shape_string(encoding_->image_shape()) +
                  " -> " + std::to_string(encoding_->num_samples());
  if (encoding_->has_field()) s += ", field map";
  if (options_.batch > 1) s += ", batch " + std::to_string(options_.batch);
  return s + ")";
}

template <class T>
void DftEncoding<T>::apply(const Complex* x, Complex* y) {
  impl_->dft->apply(x, y);
}

template <class T>
void DftEncoding<T>::apply_adjoint(const Complex* y, Complex* x) {
  impl_->dft->apply_adjoint(y, x);
}

template <class T>
typename op::LinearOperator<T>::Ptr DftEncoding<T>::batched(std::int64_t k) const {
  require(k >= 1, ErrorCode::kInvalidArgument, name() + ".batched(" + std::to_string(k) + "): expected k >= 1");
  std::int64_t batch = 0;
  require(!__builtin_mul_overflow(options_.batch, k, &batch), ErrorCode::kTooLarge,
          name() + ".batched(" + std::to_string(k) + "): the batch overflows 64 bits");
  DftEncodingOptions o = options_;
  o.batch = batch;
  op::Shape shape = batch_shape_;
  shape.push_back(k);
  // One DFT over all B·K images: each exponential is evaluated once for all of them.
  return std::shared_ptr<DftEncoding<T>>(new DftEncoding<T>(encoding_, this->context(), o, r2_, std::move(shape)));
}

template <class T>
DftR2Encoding<T>::DftR2Encoding(std::shared_ptr<const Encoding<T>> encoding, Context context,
                                DftEncodingOptions options)
    : DftEncoding<T>(std::move(encoding), std::move(context), options, true) {}

template <class T>
std::string DftR2Encoding<T>::name() const {
  return DftEncoding<T>::name();
}

template class DftEncoding<float>;
template class DftEncoding<double>;
template class DftR2Encoding<float>;
template class DftR2Encoding<double>;

}  // namespace fieldft::mri
