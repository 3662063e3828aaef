// fieldft::mri::sense (fieldft/mri/sense.hpp): validation of the coil maps and the SENSE operator
// E_C ∘ diag(maps) with the coils as the encoding's batch axis.
#include "fieldft/mri/sense.hpp"

#include <string>

#include "fieldft/error.hpp"
#include "fieldft/mri/field_model.hpp"
#include "fieldft/mri/field_toeplitz.hpp"
#include "fieldft/mri/time_segmentation.hpp"
#include "fieldft/mri/toeplitz.hpp"
#include "fieldft/op/vector_ops.hpp"
#include "op/upload.hpp"
#include "mri/field_normal.hpp"
#include "mri/sense_checks.hpp"

namespace fieldft::mri {

namespace detail {

template <class T>
SenseOptions resolve_encoding_kind(const Encoding<T>& encoding, std::int64_t coils, bool per_shot,
                                   const Context& context, SenseOptions options) {
  if (options.encoding != EncodingKind::kAuto) return options;
  const TimeSegmentationOptions& t = options.time_segmentation;
  FieldModelOptions f;
  f.accuracy = t.accuracy;
  f.eps = options.eps;
  f.max_segments = t.max_segments;
  f.interpolator = t.interpolator;
  f.iterations = options.iterations;
  f.plan_toeplitz = t.toeplitz != Toeplitz::kOff;
  f.backend = context.is_cuda() ? Backend::kCuda : Backend::kCpu;
  f.threads = context.nthreads();
  f.double_precision = sizeof(T) == sizeof(double);
  const FieldModelChoice c = choose_field_model(encoding, coils, per_shot, f);
  options.encoding = c.encoding;
  if (c.encoding == EncodingKind::kTimeSegmented)
    options.time_segmentation.toeplitz = c.toeplitz ? Toeplitz::kOn : Toeplitz::kOff;
  if (options.choice) *options.choice = c;
  return options;
}

template SenseOptions resolve_encoding_kind<float>(const Encoding<float>&, std::int64_t, bool, const Context&,
                                                   SenseOptions);
template SenseOptions resolve_encoding_kind<double>(const Encoding<double>&, std::int64_t, bool, const Context&,
                                                    SenseOptions);

template <class T>
op::OperatorPtr<T> batched_encoding(std::shared_ptr<const Encoding<T>> encoding, const SenseOptions& requested,
                                    std::int64_t batch, Context context, const std::string& who) {
  require(encoding != nullptr, ErrorCode::kInvalidArgument, who + ": the encoding is null");
  const SenseOptions options = resolve_encoding_kind(*encoding, batch, false, context, requested);
  switch (options.encoding) {
    case EncodingKind::kNufft: {
      require(!encoding->has_field(), ErrorCode::kInvalidArgument,
              who + ": the encoding has a field map, which the NUFFT encoding cannot model; use "
                    "options.encoding = EncodingKind::kTimeSegmented (time segmentation on the NUFFT, L "
                    "chosen from options.time_segmentation.accuracy) or EncodingKind::kDft (the exact "
                    "field-corrected DFT), or an encoding without a field map");
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
    case EncodingKind::kTimeSegmented: {
      TimeSegmentationOptions o = options.time_segmentation;
      o.eps = options.eps;
      o.batch = batch;
      o.nufft = options.nufft;
      return std::make_shared<TimeSegmentedEncoding<T>>(std::move(encoding), std::move(context), o);
    }
    default:
      throw Error(ErrorCode::kInvalidArgument,
                  who + ": options.encoding is " + std::to_string(static_cast<int>(options.encoding)) +
                      ", expected EncodingKind::kNufft (0), kDft (1), kTimeSegmented (2) or kAuto (3)");
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

// The coil maps in context memory, shared by a SENSE operator and its batched forms: a copy in
// `memory`, or the caller's, borrowed and kept alive by `owner` (sense's third form).
template <class T>
struct Maps {
  explicit Maps(const Context& c) : memory(c) {}
  op::Workspace memory;
  std::shared_ptr<const void> owner;
  const std::complex<T>* data = nullptr;
  std::int64_t voxels = 0, coils = 0;
};

// x (images stacked images) → their coil images S_c ∘ x (image i's coil c at v + N·(c + C·i)),
// and back: Σ_c conj(S_c) ∘ t.
template <class T>
void expand_coils(const Maps<T>& m, op::VectorOps<T>& vec, std::int64_t images, const std::complex<T>* x,
                  std::complex<T>* t) {
  for (std::int64_t i = 0; i < images; ++i)
    vec.expand_mul(m.voxels, m.coils, m.data, x + m.voxels * i, t + m.voxels * m.coils * i);
}
template <class T>
void combine_coils(const Maps<T>& m, op::VectorOps<T>& vec, std::int64_t images, const std::complex<T>* t,
                   std::complex<T>* x) {
  for (std::int64_t i = 0; i < images; ++i)
    vec.conj_mul_sum(m.voxels, m.coils, m.data, t + m.voxels * m.coils * i, x + m.voxels * i);
}

// Σ_c conj(S_c) ∘ N (S_c ∘ x) for the `images` images of a SENSE operator, with N a normal
// operator over their coil images (E_CᴴWE_C from the encoding's weighted_normal): one fused pass
// where N is a ToeplitzNormal whose backend has it (ToeplitzNormal::apply_sense), else expand,
// N, combine. Square, Hermitian: apply = apply_adjoint.
template <class T>
class SenseNormal final : public op::LinearOperator<T> {
 public:
  using Complex = std::complex<T>;
  SenseNormal(op::OperatorPtr<T> normal, std::shared_ptr<const Maps<T>> maps, std::int64_t images, op::Shape domain)
      : op::LinearOperator<T>(domain, domain, normal->context()),
        n_(std::move(normal)),
        toeplitz_(images == 1 ? dynamic_cast<ToeplitzNormal<T>*>(n_.get()) : nullptr),
        maps_(std::move(maps)),
        images_(images),
        vec_(this->context()) {}
  std::string name() const override { return "sense_normal(" + n_->name() + ")"; }
  void apply(const Complex* x, Complex* z) override {
    if (toeplitz_ && toeplitz_->apply_sense(maps_->data, x, z)) return;
    Complex* t1 = this->scratch(1, n_->domain_size());
    Complex* t2 = this->scratch(2, n_->domain_size());
    expand_coils(*maps_, vec_, images_, x, t1);
    n_->apply(t1, t2);
    combine_coils(*maps_, vec_, images_, t2, z);
  }
  void apply_adjoint(const Complex* x, Complex* z) override { apply(x, z); }

 private:
  op::OperatorPtr<T> n_;
  ToeplitzNormal<T>* toeplitz_;  // n_ when it is one over ONE image's coils, else null
  std::shared_ptr<const Maps<T>> maps_;
  std::int64_t images_;
  op::VectorOps<T> vec_;
};

// y = E_C(maps ∘ x) for `images` stacked images (1, or k after batched(k)): E_C's domain is
// image + {C} (+ {k}), image i's coil c at v + N·(c + C·i). Apply and adjoint expand and combine
// with VectorOps around E_C (as op::compose(E_C, op::diag_expand(maps)) would); the normal
// takes E_C's fused SENSE Toeplitz pass (NufftEncoding::apply_sense_normal) where there is one,
// the field-corrected Toeplitz normal in its SENSE form for a TimeSegmentedEncoding that uses it,
// else Σ_c conj(S_c) ∘ E_CᴴE_C (S_c ∘ x) through E_C's own normal.
template <class T>
class SenseOperator final : public op::LinearOperator<T> {
 public:
  using Complex = std::complex<T>;
  // domain: the image shape (+ the batch axes of batched(k)), holding `images` images.
  SenseOperator(op::OperatorPtr<T> encoding, std::shared_ptr<const Maps<T>> maps, std::int64_t images,
                op::Shape domain)
      : op::LinearOperator<T>(std::move(domain), encoding->codomain_shape(), encoding->context()),
        e_(std::move(encoding)),
        nufft_(images == 1 ? dynamic_cast<NufftEncoding<T>*>(e_.get()) : nullptr),
        tseg_(images == 1 ? dynamic_cast<TimeSegmentedEncoding<T>*>(e_.get()) : nullptr),
        maps_(std::move(maps)),
        images_(images),
        vec_(this->context()) {}

  std::string name() const override {
    std::string s = "sense(" + e_->name() + ", " + std::to_string(maps_->coils) + " coils";
    if (field_normal_) s += ", normal " + field_normal_->name();  // once built: which normal a solve uses
    return s + ")";
  }
  // Its field-corrected Toeplitz normal once built, else the encoding's (field_toeplitz_normal).
  const FieldToeplitzNormal<T>* field_normal() const noexcept {
    if (field_normal_) return field_normal_.get();
    return tseg_ ? tseg_->toeplitz_normal() : nullptr;
  }
  void apply(const Complex* x, Complex* y) override {
    Complex* t = this->scratch(1, e_->domain_size());
    expand(x, t);
    e_->apply(t, y);
  }
  void apply_adjoint(const Complex* y, Complex* x) override {
    Complex* t = this->scratch(1, e_->domain_size());
    e_->apply_adjoint(y, t);
    combine(t, x);
  }
  void apply_normal(const Complex* x, Complex* z) override {
    if (nufft_ && nufft_->apply_sense_normal(maps_->data, x, z)) return;
    prepare_normal();
    if (field_normal_) {  // the field-corrected Toeplitz normal
      field_normal_->apply(x, z);
      return;
    }
    Complex* t1 = this->scratch(1, e_->domain_size());
    Complex* t2 = this->scratch(2, e_->domain_size());
    expand(x, t1);
    e_->apply_normal(t1, t2);
    combine(t2, z);
  }
  // The field-corrected Toeplitz normal in its SENSE form for a TimeSegmentedEncoding that uses
  // it (built once; where it cannot be, the encoding's own normal), else the encoding's.
  void prepare_normal() override { prepare_normal_shared({}); }
  // Its kernels are what ranks holding coil shares of one problem can split (op::NormalShare).
  bool can_share_normal() const override { return builds_field_normal(); }
  void prepare_normal_shared(const op::NormalShare& share) override {
    if (builds_field_normal()) {
      field_normal_ = detail::field_normal_or_null<T>(tseg_->encoding_ptr(), this->context(), maps_->data,
                                                      maps_->coils, tseg_->options(), share);
      field_normal_failed_ = !field_normal_;
    }
    if (!field_normal_) e_->prepare_normal();
  }
  typename op::LinearOperator<T>::Ptr batched(std::int64_t k) const override {
    require(k >= 1, ErrorCode::kInvalidArgument, name() + ".batched(" + std::to_string(k) + "): expected k >= 1");
    std::int64_t images = 0;
    require(!__builtin_mul_overflow(images_, k, &images), ErrorCode::kTooLarge,
            name() + ".batched(" + std::to_string(k) + "): the batch overflows 64 bits");
    op::OperatorPtr<T> e = e_->batched(k);
    if (!e) e = op::batch<T>(e_, k);
    op::Shape domain = this->domain_shape();
    domain.push_back(k);
    return std::make_shared<SenseOperator<T>>(std::move(e), maps_, images, std::move(domain));
  }
  // Sᴴ(E_CᴴWE_C)S with E_C's weighted normal (a weighted Toeplitz kernel), fused where it can be.
  typename op::LinearOperator<T>::Ptr weighted_normal(const Complex* weights) override {
    auto n = e_->weighted_normal(weights);
    if (!n) return nullptr;
    return std::make_shared<SenseNormal<T>>(std::move(n), maps_, images_, this->domain_shape());
  }

 private:
  void expand(const Complex* x, Complex* t) { expand_coils(*maps_, vec_, images_, x, t); }
  void combine(const Complex* t, Complex* x) { combine_coils(*maps_, vec_, images_, t, x); }

  op::OperatorPtr<T> e_;
  NufftEncoding<T>* nufft_;  // e_ when it is a NufftEncoding of one image's coils, else null
  bool builds_field_normal() const {
    return tseg_ && tseg_->uses_toeplitz() && !field_normal_ && !field_normal_failed_;
  }

  TimeSegmentedEncoding<T>* tseg_;  // e_ when it is a TimeSegmentedEncoding of one image's coils
  std::unique_ptr<FieldToeplitzNormal<T>> field_normal_;  // tseg_'s Toeplitz normal, built when first used
  bool field_normal_failed_ = false;  // it could not be built (accuracy, memory): the passes instead
  std::shared_ptr<const Maps<T>> maps_;
  std::int64_t images_;
  op::VectorOps<T> vec_;
};

// The SENSE operator of `batched` and maps already checked: host maps are copied to its context
// (`owner` null), context maps borrowed.
template <class T>
op::OperatorPtr<T> compose_sense(op::OperatorPtr<T> batched, std::span<const std::complex<T>> maps,
                                 std::shared_ptr<const void> owner, const op::Shape& image_shape, std::int64_t coils,
                                 bool in_context) {
  auto m = std::make_shared<Maps<T>>(batched->context());
  m->voxels = op::shape_size(image_shape);
  m->coils = coils;
  m->owner = std::move(owner);
  m->data = in_context ? maps.data() : op::upload(m->memory, maps);
  return std::make_shared<SenseOperator<T>>(std::move(batched), std::move(m), 1, image_shape);
}

// The image shape of maps for a ready batched encoding (sense's second and third forms), after
// checking the shapes against it and the number of values.
template <class T>
op::Shape image_for(const op::OperatorPtr<T>& batched, const op::Shape& maps_shape, std::size_t values,
                    std::int64_t* coils, const std::string& who) {
  require(batched != nullptr, ErrorCode::kInvalidArgument, who + ": the batched encoding operator is null");
  require(maps_shape.size() >= 2, ErrorCode::kShapeMismatch,
          who + ": the coil maps have shape " + op::shape_string(maps_shape) +
              ", expected the image shape followed by the number of coils C");
  op::Shape image(maps_shape.begin(), maps_shape.end() - 1);
  *coils = coils_of(image, maps_shape, values, who);
  // One coil: an encoding of batch 1 maps the image itself (no coil axis), e.g. a coil split that
  // leaves one coil on a device.
  const op::Shape& domain = batched->domain_shape();
  require(domain == maps_shape || (*coils == 1 && domain == image), ErrorCode::kShapeMismatch,
          who + ": " + batched->name() + " has domain " + op::shape_string(domain) +
              ", expected the coil maps' shape " + op::shape_string(maps_shape) +
              " (an encoding batched over the C = " + std::to_string(*coils) + " coils)");
  return image;
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
  return compose_sense<T>(std::move(e), maps, nullptr, image, coils, false);
}

template <class T>
op::OperatorPtr<T> sense(op::OperatorPtr<T> batched_encoding, std::span<const std::complex<T>> maps,
                         const op::Shape& maps_shape) {
  const std::string who = "sense";
  std::int64_t coils = 0;
  const op::Shape image = image_for(batched_encoding, maps_shape, maps.size(), &coils, who);
  require_finite_maps(maps, image, who);
  return compose_sense<T>(std::move(batched_encoding), maps, nullptr, image, coils, false);
}

template <class T>
op::OperatorPtr<T> sense(op::OperatorPtr<T> batched_encoding, ContextMaps<T> maps, const op::Shape& maps_shape) {
  std::int64_t coils = 0;
  const op::Shape image = image_for(batched_encoding, maps_shape, maps.values.size(), &coils, "sense");
  // No scan: the values are in the context's memory, and the caller checked them (the contract).
  return compose_sense<T>(std::move(batched_encoding), maps.values, std::move(maps.owner), image, coils, true);
}

template <class T>
const FieldToeplitzNormal<T>* field_toeplitz_normal(const op::LinearOperator<T>& op) {
  if (const auto* s = dynamic_cast<const SenseOperator<T>*>(&op)) return s->field_normal();
  if (const auto* t = dynamic_cast<const TimeSegmentedEncoding<T>*>(&op)) return t->toeplitz_normal();
  return nullptr;
}

template const FieldToeplitzNormal<float>* field_toeplitz_normal<float>(const op::LinearOperator<float>&);
template const FieldToeplitzNormal<double>* field_toeplitz_normal<double>(const op::LinearOperator<double>&);
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

template op::OperatorPtr<float> sense<float>(op::OperatorPtr<float>, ContextMaps<float>, const op::Shape&);
template op::OperatorPtr<double> sense<double>(op::OperatorPtr<double>, ContextMaps<double>, const op::Shape&);

}  // namespace fieldft::mri
