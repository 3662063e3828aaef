// fieldft::mri::sense (fieldft/mri/sense.hpp): validation of the coil maps and the composition
// E_C ∘ diag_expand(maps) with the coils as the encoding's batch axis.
#include "fieldft/mri/sense.hpp"

#include <string>

#include "fieldft/error.hpp"
#include "mri/sense_checks.hpp"

namespace fieldft::mri {

namespace detail {

template <class T>
op::OperatorPtr<T> batched_encoding(std::shared_ptr<const Encoding<T>> encoding, const SenseOptions& options,
                                    std::int64_t batch, Context context, const std::string& who) {
  switch (options.encoding) {
    case EncodingKind::kNufft: {
      require(!encoding->has_field(), ErrorCode::kInvalidArgument,
              who + ": the encoding has a field map, which the NUFFT encoding cannot model; use "
                    "options.encoding = EncodingKind::kDft (the exact field-corrected DFT), or an encoding "
                    "without a field map");
      NufftEncodingOptions o;
      o.eps = options.eps;
      o.batch = batch;
      o.nufft = options.nufft;
      o.toeplitz = options.toeplitz;
      return std::make_shared<NufftEncoding<T>>(std::move(encoding), std::move(context), o);
    }
    case EncodingKind::kDft: {
      DftEncodingOptions o;
      o.batch = batch;
      return std::make_shared<DftEncoding<T>>(std::move(encoding), std::move(context), o);
    }
    default:
      throw Error(ErrorCode::kInvalidArgument, who + ": options.encoding is " +
                                                   std::to_string(static_cast<int>(options.encoding)) +
                                                   ", expected EncodingKind::kNufft (0) or kDft (1)");
  }
}

template op::OperatorPtr<float> batched_encoding<float>(std::shared_ptr<const Encoding<float>>, const SenseOptions&,
                                                        std::int64_t, Context, const std::string&);
template op::OperatorPtr<double> batched_encoding<double>(std::shared_ptr<const Encoding<double>>,
                                                          const SenseOptions&, std::int64_t, Context,
                                                          const std::string&);

}  // namespace detail

namespace {

using detail::coils_of;
using detail::require_finite_maps;

template <class T>
op::OperatorPtr<T> compose_sense(op::OperatorPtr<T> batched, std::span<const std::complex<T>> maps,
                                 const op::Shape& image_shape, std::int64_t coils, const std::string& who) {
  require_finite_maps(maps, image_shape, who);
  const Context context = batched->context();
  return op::compose<T>(std::move(batched), op::diag_expand<T>(maps, image_shape, coils, context));
}

}  // namespace

template <class T>
op::OperatorPtr<T> sense(std::shared_ptr<const Encoding<T>> encoding, std::span<const std::complex<T>> maps,
                         const op::Shape& maps_shape, Context context, const SenseOptions& options) {
  const std::string who = "sense";
  require(encoding != nullptr, ErrorCode::kInvalidArgument, who + ": the encoding is null");
  const op::Shape image = encoding->image_shape();
  const std::int64_t coils = coils_of(image, maps_shape, maps.size(), who);
  require_finite_maps(maps, image, who);  // before the (costlier) transforms are planned
  auto e = detail::batched_encoding<T>(std::move(encoding), options, coils, std::move(context), who);
  return compose_sense<T>(std::move(e), maps, image, coils, who);
}

template <class T>
op::OperatorPtr<T> sense(op::OperatorPtr<T> batched_encoding, std::span<const std::complex<T>> maps,
                         const op::Shape& maps_shape) {
  const std::string who = "sense";
  require(batched_encoding != nullptr, ErrorCode::kInvalidArgument, who + ": the batched encoding operator is null");
  require(maps_shape.size() >= 2, ErrorCode::kShapeMismatch,
          who + ": the coil maps have shape " + op::shape_string(maps_shape) +
              ", expected the image shape followed by the number of coils C");
  const op::Shape image(maps_shape.begin(), maps_shape.end() - 1);
  const std::int64_t coils = coils_of(image, maps_shape, maps.size(), who);
  require(batched_encoding->domain_shape() == maps_shape, ErrorCode::kShapeMismatch,
          who + ": " + batched_encoding->name() + " has domain " +
              op::shape_string(batched_encoding->domain_shape()) + ", expected the coil maps' shape " +
              op::shape_string(maps_shape) + " (an encoding batched over the C = " + std::to_string(coils) +
              " coils)");
  return compose_sense<T>(std::move(batched_encoding), maps, image, coils, who);
}

template op::OperatorPtr<float> sense<float>(std::shared_ptr<const Encoding<float>>,
                                             std::span<const std::complex<float>>, const op::Shape&, Context,
                                             const SenseOptions&);
template op::OperatorPtr<double> sense<double>(std::shared_ptr<const Encoding<double>>,
                                               std::span<const std::complex<double>>, const op::Shape&, Context,
                                               const SenseOptions&);
template op::OperatorPtr<float> sense<float>(op::OperatorPtr<float>, std::span<const std::complex<float>>,
                                             const op::Shape&);
template op::OperatorPtr<double> sense<double>(op::OperatorPtr<double>, std::span<const std::complex<double>>,
                                               const op::Shape&);

}  // namespace fieldft::mri
