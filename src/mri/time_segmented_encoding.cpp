// fieldft::mri::TimeSegmentedEncoding: the interpolator design (src/core/time_segmentation.hpp),
// its tables in context memory, one NufftEncoding of batch L·B on the field-free trajectory, and
// the four passes of fieldft/detail/time_segmentation.hpp in host OpenMP loops or CUDA kernels
// (src/cuda/time_segmentation.hpp).
#include "fieldft/config.hpp"  // first: FIELDFT_HAVE_CUDA selects the includes below

#include <limits>
#include <numbers>
#include <string>
#include <vector>

#include "core/time_segmentation.hpp"
#include "fieldft/detail/time_segmentation.hpp"
#include "fieldft/error.hpp"
#include "fieldft/mri/time_segmentation.hpp"
#include "mri/encoding_shapes.hpp"
#include "mri/field_normal.hpp"
#include "op/host_loops.hpp"
#include "op/upload.hpp"
#if FIELDFT_HAVE_CUDA
#include "cuda/time_segmentation.hpp"
#endif

namespace fieldft::mri {

namespace {

using detail::batched_batch;
using detail::initial_batch_shape;
using detail::joined;
using ::fieldft::detail::tseg::SegmentTables;

template <class T>
const Encoding<T>& checked_encoding(const std::shared_ptr<const Encoding<T>>& e) {
  require(e != nullptr, ErrorCode::kInvalidArgument, "TimeSegmentedEncoding: the encoding is null");
  return *e;
}

core::SegmentInterpolator core_interpolator(SegmentInterpolator i) {
  return static_cast<core::SegmentInterpolator>(static_cast<int>(i));  // same values; core validates
}

template <class T>
core::TimeSegmentationDesign design(const Encoding<T>& e, const TimeSegmentationOptions& o, int nthreads) {
  core::TimeSegmentationRequest r;
  r.field = e.field();
  r.times = e.times();
  r.samples = e.num_samples();
  r.accuracy = o.accuracy;
  r.interpolator = core_interpolator(o.interpolator);
  r.max_segments = o.max_segments;
  r.segments = o.segments;
  r.nthreads = nthreads;
  return core::design_time_segmentation(r);
}

TimeSegmentationReport to_report(const core::TimeSegmentationDesign& d) {
  TimeSegmentationReport r;
  r.segments = d.segments;
  r.interpolator = static_cast<SegmentInterpolator>(static_cast<int>(d.interpolator));
  r.worst_error = d.interpolation.worst_error;
  r.accuracy = d.accuracy;
  r.forced = d.forced;
  r.amplification = d.interpolation.amplification;
  r.distinct_times = static_cast<std::int64_t>(d.times.values.size());
  r.field_bins = d.field_bins;
  r.design_seconds = d.seconds;
  r.reason = d.reason;
  return r;
}

// The encoding's trajectory without times or field map, for the NUFFT underneath.
template <class T>
std::shared_ptr<const Encoding<T>> trajectory_only(const Encoding<T>& e) {
  const std::span<const std::int64_t> grid(e.grid().data(), static_cast<std::size_t>(e.dim()));
  return std::make_shared<const Encoding<T>>(grid, e.k(0), e.k(1), e.dim() == 3 ? e.k(2) : std::span<const T>());
}

}  // namespace

template <class T>
TimeSegmentationReport plan_time_segmentation(const Encoding<T>& encoding, const TimeSegmentationOptions& options) {
  return to_report(design(encoding, options, 0));
}

template <class T>
struct TimeSegmentedEncoding<T>::Tables {
  explicit Tables(const Context& c) : field(c), tau(c), h(c), time(c), range(c) {}
  op::Workspace field, tau, h, time, range;
  SegmentTables<T> view;  // pointers into the workspaces; n, m, L (batch set per operator)
  TimeSegmentationReport report;
};

template <class T>
TimeSegmentedEncoding<T>::TimeSegmentedEncoding(std::shared_ptr<const Encoding<T>> encoding, Context context,
                                                TimeSegmentationOptions options)
    : TimeSegmentedEncoding(encoding, context, options, initial_batch_shape(options.batch, "TimeSegmentedEncoding"),
                            nullptr) {}

template <class T>
TimeSegmentedEncoding<T>::TimeSegmentedEncoding(std::shared_ptr<const Encoding<T>> encoding, Context context,
                                                TimeSegmentationOptions options, op::Shape batch_shape,
                                                std::shared_ptr<const Tables> tables)
    : op::LinearOperator<T>(joined(checked_encoding(encoding).image_shape(), batch_shape),
                            joined(checked_encoding(encoding).sample_shape(), batch_shape), std::move(context)),
      encoding_(std::move(encoding)),
      options_(std::move(options)),
      batch_shape_(std::move(batch_shape)),
      tables_(std::move(tables)) {
  const Encoding<T>& e = *encoding_;
  if (!tables_) {
    const core::TimeSegmentationDesign d = design(e, options_, this->context().nthreads());
    auto t = std::make_shared<Tables>(this->context());
    t->report = to_report(d);
    const auto& in = d.interpolation;
    std::vector<double> hz(e.field().size());
    op::host::for_each_index(this->context(), static_cast<std::int64_t>(hz.size()),
                             static_cast<std::int64_t>(hz.size()), [&](std::int64_t v) {
                               const auto i = static_cast<std::size_t>(v);
                               hz[i] = static_cast<double>(e.field()[i]) / (2 * std::numbers::pi);
                             });
    if (hz.empty()) hz.assign(static_cast<std::size_t>(e.num_voxels()), 0.0);
    std::vector<::fieldft::detail::Cplx<T>> h(in.coefficients.size());
    for (std::size_t i = 0; i < h.size(); ++i)
      h[i] = {static_cast<T>(in.coefficients[i].real()), static_cast<T>(in.coefficients[i].imag())};
    std::vector<std::int32_t> range(2 * in.first.size());
    for (std::size_t i = 0; i < in.first.size(); ++i) {
      range[2 * i] = in.first[i];
      range[2 * i + 1] = in.last[i];
    }
    SegmentTables<T>& v = t->view;
    v.n = e.num_voxels();
    v.m = e.num_samples();
    v.segments = d.segments;
    v.field_hz = op::upload(t->field, hz);
    v.tau = op::upload(t->tau, d.segment_times);
    v.h = op::upload(t->h, h);
    v.time = op::upload(t->time, d.times.index);
    v.range = op::upload(t->range, range);
    tables_ = std::move(t);
  }
  switch (options_.toeplitz) {
    case Toeplitz::kOff:
      break;
    case Toeplitz::kOn:
    case Toeplitz::kAuto:
      uses_toeplitz_ = FieldToeplitzNormal<T>::supported(e, this->context());
      break;
    default:
      throw Error(ErrorCode::kInvalidArgument, "TimeSegmentedEncoding: options.toeplitz is " +
                                                   std::to_string(static_cast<int>(options_.toeplitz)) +
                                                   ", expected Toeplitz::kOff (0), kOn (1) or kAuto (2)");
  }
  // One NUFFT for the L·B stacked images; its normal is never used (this operator's is A then
  // Aᴴ, or the field-corrected Toeplitz normal), so no Toeplitz kernel of its own.
  std::int64_t nufft_batch = 0;
  require(!__builtin_mul_overflow(options_.batch, static_cast<std::int64_t>(tables_->view.segments), &nufft_batch),
          ErrorCode::kTooLarge, "TimeSegmentedEncoding: L·B overflows 64 bits");
  NufftEncodingOptions o;
  o.eps = options_.eps;
  o.batch = nufft_batch;
  o.nufft = options_.nufft;
  o.toeplitz = Toeplitz::kOff;
  nufft_ = std::make_unique<NufftEncoding<T>>(trajectory_only(e), this->context(), o);
}

template <class T>
TimeSegmentedEncoding<T>::~TimeSegmentedEncoding() = default;

template <class T>
int TimeSegmentedEncoding<T>::segments() const noexcept {
  return tables_->view.segments;
}

template <class T>
const TimeSegmentationReport& TimeSegmentedEncoding<T>::report() const noexcept {
  return tables_->report;
}

template <class T>
void TimeSegmentedEncoding<T>::prepare_normal() {
  prepare_normal_shared({});
}

template <class T>
bool TimeSegmentedEncoding<T>::can_share_normal() const {
  return uses_toeplitz_ && !field_normal_;
}

template <class T>
void TimeSegmentedEncoding<T>::prepare_normal_shared(const op::NormalShare& share) {
  if (!uses_toeplitz_ || field_normal_) return;
  field_normal_ = detail::field_normal_or_null<T>(encoding_, this->context(), nullptr, 1, options_, share);
  uses_toeplitz_ = field_normal_ != nullptr;  // else no interpolator reaches the accuracy, or no memory: the passes
}

template <class T>
double TimeSegmentedEncoding<T>::toeplitz_setup_seconds() const noexcept {
  return field_normal_ ? field_normal_->setup_seconds() : std::numeric_limits<double>::quiet_NaN();
}

template <class T>
void TimeSegmentedEncoding<T>::apply_normal(const Complex* x, Complex* z) {
  prepare_normal();
  if (!uses_toeplitz_) {
    op::LinearOperator<T>::apply_normal(x, z);
    return;
  }
  const std::int64_t n = encoding_->num_voxels();
  for (std::int64_t b = 0; b < options_.batch; ++b) field_normal_->apply(x + n * b, z + n * b);
}

template <class T>
std::string TimeSegmentedEncoding<T>::name() const {
  std::string s = "TimeSegmentedEncoding(" + op::shape_string(encoding_->image_shape()) + " -> " +
                  std::to_string(encoding_->num_samples()) + ", L " + std::to_string(segments());
  if (options_.batch > 1) s += ", batch " + std::to_string(options_.batch);
  // The field-corrected Toeplitz normal once prepare_normal (or the first apply_normal) built it:
  // which normal a solve used, for reports (its L', grid and a stacked axis).
  if (field_normal_) s += ", normal " + field_normal_->name();
  return s + ")";
}

namespace {

enum class Pass { kExpand, kReduce, kCombine, kSpread };

// One pass in the context: the host loop over the pass's indices, or its CUDA kernel.
template <class T>
void run_pass(const Context& c, Pass pass, const SegmentTables<T>& g, const std::complex<T>* in, std::complex<T>* out) {
  namespace dt = ::fieldft::detail::tseg;
  const auto* src = reinterpret_cast<const ::fieldft::detail::Cplx<T>*>(in);
  auto* dst = reinterpret_cast<::fieldft::detail::Cplx<T>*>(out);
  const std::int64_t image_side = g.n * g.segments * g.batch, sample_side = g.m * g.segments * g.batch;
  if (c.is_host()) {
    switch (pass) {
      case Pass::kExpand:
        op::host::for_each_index(c, g.n * g.segments, image_side, [&](std::int64_t i) { dt::expand_point(g, src, dst, i); });
        break;
      case Pass::kReduce:
        op::host::for_each_index(c, g.n * g.batch, image_side,
                                 [&](std::int64_t i) { dt::reduce_point(g, src, dst, i); });
        break;
      case Pass::kCombine:
        op::host::for_each_index(c, g.m * g.batch, sample_side,
                                 [&](std::int64_t i) { dt::combine_point(g, src, dst, i); });
        break;
      case Pass::kSpread:
        op::host::for_each_index(c, g.m * g.segments, sample_side,
                                 [&](std::int64_t i) { dt::spread_point(g, src, dst, i); });
        break;
    }
    return;
  }
#if FIELDFT_HAVE_CUDA
  switch (pass) {
    case Pass::kExpand:
      cuda::tseg::expand<T>(c.device(), c.stream(), g, in, out);
      break;
    case Pass::kReduce:
      cuda::tseg::reduce<T>(c.device(), c.stream(), g, in, out);
      break;
    case Pass::kCombine:
      cuda::tseg::combine<T>(c.device(), c.stream(), g, in, out);
      break;
    case Pass::kSpread:
      cuda::tseg::spread<T>(c.device(), c.stream(), g, in, out);
      break;
  }
#else
  throw Error(ErrorCode::kBackendUnavailable, "TimeSegmentedEncoding: a CUDA context, but fieldft was built without CUDA");
#endif
}

}  // namespace

template <class T>
typename TimeSegmentedEncoding<T>::Stacks TimeSegmentedEncoding<T>::stacks() {
  Stacks s{tables_->view, nullptr, nullptr};
  s.tables.batch = options_.batch;
  const std::int64_t lb = s.tables.segments * s.tables.batch;
  s.images = this->scratch(1, s.tables.n * lb);
  s.samples = this->scratch(2, s.tables.m * lb);
  return s;
}

template <class T>
void TimeSegmentedEncoding<T>::apply(const Complex* x, Complex* y) {
  const Stacks s = stacks();
  run_pass<T>(this->context(), Pass::kExpand, s.tables, x, s.images);
  nufft_->apply(s.images, s.samples);
  run_pass<T>(this->context(), Pass::kCombine, s.tables, s.samples, y);
}

template <class T>
void TimeSegmentedEncoding<T>::apply_adjoint(const Complex* y, Complex* x) {
  const Stacks s = stacks();
  run_pass<T>(this->context(), Pass::kSpread, s.tables, y, s.samples);
  nufft_->apply_adjoint(s.samples, s.images);
  run_pass<T>(this->context(), Pass::kReduce, s.tables, s.images, x);
}

template <class T>
typename op::LinearOperator<T>::Ptr TimeSegmentedEncoding<T>::batched(std::int64_t k) const {
  TimeSegmentationOptions o = options_;
  o.batch = batched_batch(name(), options_.batch, k);
  op::Shape shape = batch_shape_;
  shape.push_back(k);
  return std::shared_ptr<TimeSegmentedEncoding<T>>(
      new TimeSegmentedEncoding<T>(encoding_, this->context(), o, std::move(shape), tables_));
}

template TimeSegmentationReport plan_time_segmentation<float>(const Encoding<float>&, const TimeSegmentationOptions&);
template TimeSegmentationReport plan_time_segmentation<double>(const Encoding<double>&, const TimeSegmentationOptions&);
template class TimeSegmentedEncoding<float>;
template class TimeSegmentedEncoding<double>;

}  // namespace fieldft::mri
