// fieldft::mri::pcsense (fieldft/mri/pcsense.hpp): validation of the maps, the phase maps and the
// shot labels; one coil-batched encoding per shot; and the operator that applies them, with the
// per-point math of include/fieldft/detail/pcsense.hpp run by host loops or by the kernels of
// src/cuda/pcsense.cu (through the plain C++ src/cuda/pcsense.hpp), so that nothing here needs
// CUDA headers.
#include "fieldft/mri/pcsense.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "fieldft/config.hpp"  // first: FIELDFT_HAVE_CUDA selects the includes below
#include "fieldft/detail/pcsense.hpp"
#include "fieldft/error.hpp"
#include "mri/pcsense_dft.hpp"
#include "mri/sense_checks.hpp"
#include "op/upload.hpp"
#include "op/host_loops.hpp"
#if FIELDFT_HAVE_CUDA
#include "cuda/pcsense.hpp"
#include "cuda/stream.hpp"
#endif

namespace fieldft::mri {

namespace {

namespace dp = ::fieldft::detail::pcsense;
using ::fieldft::detail::Cplx;

// std::complex<T> seen as Cplx<T> (the same layout: two T, real first).
template <class T>
const Cplx<T>* cplx(const std::complex<T>* p) {
  return reinterpret_cast<const Cplx<T>*>(p);
}
template <class T>
Cplx<T>* cplx(std::complex<T>* p) {
  return reinterpret_cast<Cplx<T>*>(p);
}

op::Shape with_axis(op::Shape s, std::int64_t k) {
  s.push_back(k);
  return s;
}

// ---- validation -----------------------------------------------------------------------------

// The original positions of each shot's samples, in increasing order; every label 0 … S−1 must
// have at least one.
template <class T>
std::vector<std::vector<std::int64_t>> samples_of_shots(const Encoding<T>& e, const std::string& who) {
  const std::int32_t shots = e.num_shots();
  const auto labels = e.shots();
  std::vector<std::vector<std::int64_t>> index(static_cast<std::size_t>(shots));
  for (std::int64_t j = 0; j < e.num_samples(); ++j)
    index[labels.empty() ? 0 : static_cast<std::size_t>(labels[static_cast<std::size_t>(j)])].push_back(j);
  for (std::int32_t s = 0; s < shots; ++s)
    require(!index[static_cast<std::size_t>(s)].empty(), ErrorCode::kInvalidArgument,
            who + ": shot " + std::to_string(s) + " has no samples: the encoding's shot labels run 0 … " +
                std::to_string(shots - 1) + " (S = " + std::to_string(shots) +
                " shots, from the largest label), and each of them must label at least one sample");
  return index;
}

// phase_shape = image + {S} with S the encoding's shots, the data's size, and finite values.
template <class T>
void check_phase_maps(const op::Shape& image, std::int32_t shots, std::span<const T> phase, const op::Shape& shape,
                      const std::string& who) {
  const op::Shape want = with_axis(image, shots);
  const std::string expected = "expected " + op::shape_string(want) + " (the image shape followed by the " +
                               std::to_string(shots) + " shots that the encoding's labels give)";
  const bool image_ok = shape.size() == want.size() && std::equal(image.begin(), image.end(), shape.begin());
  require(image_ok, ErrorCode::kShapeMismatch,
          who + ": the phase maps have shape " + op::shape_string(shape) + ", " + expected);
  require(shape.back() == shots, ErrorCode::kShapeMismatch,
          who + ": phase maps for " + std::to_string(shape.back()) + " shots (shape " + op::shape_string(shape) +
              "), but the encoding's shot labels give " + std::to_string(shots) + " shots; " + expected);
  const std::int64_t size = op::shape_size(want);
  require(static_cast<std::int64_t>(phase.size()) == size, ErrorCode::kShapeMismatch,
          who + ": the phase maps hold " + std::to_string(phase.size()) + " values, expected " + std::to_string(size) +
              " (shape " + op::shape_string(want) + ")");
  const std::int64_t voxels = op::shape_size(image);
  for (std::size_t i = 0; i < phase.size(); ++i) {
    if (std::isfinite(phase[i])) continue;
    std::ostringstream os;
    os << who << ": the phase map of shot " << static_cast<std::int64_t>(i) / voxels << " is " << phase[i]
       << " at voxel " << detail::voxel_string(image, static_cast<std::int64_t>(i) % voxels) << " (index " << i
       << " of the phase maps); phases must be finite (radians)";
    throw Error(ErrorCode::kNonFinite, os.str());
  }
}

// The Encoding of the samples `index` of e: their positions and times, e's field map, no labels.
template <class T>
std::shared_ptr<const Encoding<T>> shot_encoding(const Encoding<T>& e, const std::vector<std::int64_t>& index) {
  std::array<std::vector<T>, 3> k;
  std::vector<T> times;
  for (int d = 0; d < e.dim(); ++d) {
    const auto src = e.k(d);
    k[d].reserve(index.size());
    for (auto j : index) k[d].push_back(src[static_cast<std::size_t>(j)]);
  }
  if (!e.times().empty()) {
    times.reserve(index.size());
    for (auto j : index) times.push_back(e.times()[static_cast<std::size_t>(j)]);
  }
  const std::span<const std::int64_t> grid(e.grid().data(), static_cast<std::size_t>(e.dim()));
  return std::make_shared<const Encoding<T>>(grid, std::span<const T>(k[0]), std::span<const T>(k[1]),
                                             std::span<const T>(k[2]), std::span<const T>(times), e.field());
}

// options as SenseOptions with kAuto resolved (the cost model, once for all shots of `encoding`,
// per shot, with `coils` coils), so that a DFT verdict can take the one-pass form too.
template <class T>
SenseOptions resolved_options(const PcSenseOptions<T>& o, const Encoding<T>& encoding, std::int64_t coils,
                              const Context& context) {
  SenseOptions so;
  so.encoding = o.encoding;
  so.eps = o.eps;
  so.nufft = o.nufft;
  so.toeplitz = o.toeplitz;
  so.time_segmentation = o.time_segmentation;
  so.iterations = o.iterations;
  so.choice = o.choice;
  return detail::resolve_encoding_kind(encoding, coils, true, context, so);
}

// The callable of the resolved options.
template <class T>
ShotEncodingFactory<T> factory_of(const SenseOptions& so, const Context& context, const std::string& who) {
  return [so, context, who](std::shared_ptr<const Encoding<T>> e, std::int64_t batch) {
    return detail::batched_encoding<T>(std::move(e), so, batch, context, who);
  };
}

// ---- memory at the context --------------------------------------------------------------------

#if !FIELDFT_HAVE_CUDA
[[noreturn]] void no_cuda() {
  throw Error(ErrorCode::kBackendUnavailable,
              "pcsense: a CUDA operator was called, but this fieldft was built without CUDA");
}
#endif

// ---- the operator -----------------------------------------------------------------------------

template <class T>
class PhaseCorrectedSense final : public op::LinearOperator<T> {
 public:
  using Complex = std::complex<T>;
  struct Shot {
    op::OperatorPtr<T> encoding;  // image + {C} -> {M_s, C}
    std::int64_t offset = 0;      // of its samples' original positions in index_
    std::int64_t samples = 0;     // M_s
  };

  // maps: voxels·C values; phase: voxels·S factors e^{iφ_s}; index: the shots' original
  // positions one after the other (shots[s].offset).
  PhaseCorrectedSense(const op::Shape& image, std::int64_t samples, std::int64_t coils, std::vector<Shot> shots,
                      const std::vector<Complex>& maps, const std::vector<Complex>& phase,
                      const std::vector<std::int64_t>& index, const Context& context)
      : op::LinearOperator<T>(image, op::Shape{samples, coils}, context),
        voxels_(op::shape_size(image)),
        samples_(samples),
        coils_(coils),
        shots_(std::move(shots)),
        values_(context),
        index_memory_(context) {
    std::vector<Complex> host(maps);
    host.insert(host.end(), phase.begin(), phase.end());
    const Complex* v = op::upload(values_, host);
    maps_ = v;
    phase_ = v + maps.size();
    index_ = op::upload(index_memory_, index);
    for (const Shot& s : shots_) max_shot_samples_ = std::max(max_shot_samples_, s.samples);
  }

  std::string name() const override {
    std::string s = "pcsense(" + op::shape_string(this->domain_shape()) + " -> " +
                    op::shape_string(this->codomain_shape()) + ", " + std::to_string(shots_.size()) + " shots:";
    for (std::size_t i = 0; i < shots_.size(); ++i) s += (i ? ", " : " ") + shots_[i].encoding->name();
    return s + ")";
  }

  void apply(const Complex* x, Complex* y) override {
    Complex* u = this->scratch(1, voxels_ * coils_);
    Complex* w = this->scratch(3, max_shot_samples_ * coils_);
    for (std::size_t s = 0; s < shots_.size(); ++s) {
      expand(s, x, u);
      shots_[s].encoding->apply(u, w);
      move_samples(shots_[s], w, y, /*to_original=*/true);
    }
  }

  void apply_adjoint(const Complex* y, Complex* x) override {
    Complex* u = this->scratch(1, voxels_ * coils_);
    Complex* w = this->scratch(3, max_shot_samples_ * coils_);
    for (std::size_t s = 0; s < shots_.size(); ++s) {
      move_samples(shots_[s], y, w, /*to_original=*/false);
      shots_[s].encoding->apply_adjoint(w, u);
      reduce(s, u, x);
    }
  }

  // Σ_s conj(P_s) Σ_c conj(S_c) E_sᴴE_s(S_c P_s x), each E_sᴴE_s through the shot encoding's own
  // apply_normal (Toeplitz where it has one).
  // Each shot encoding builds what its normal needs (e.g. field-corrected Toeplitz kernels) now.
  void prepare_normal() override {
    for (auto& shot : shots_) shot.encoding->prepare_normal();
  }

  void apply_normal(const Complex* x, Complex* z) override {
    Complex* u = this->scratch(1, voxels_ * coils_);
    Complex* u2 = this->scratch(2, voxels_ * coils_);
    for (std::size_t s = 0; s < shots_.size(); ++s) {
      expand(s, x, u);
      shots_[s].encoding->apply_normal(u, u2);
      reduce(s, u2, z);
    }
  }

 private:
  const Complex* phase_of(std::size_t s) const { return phase_ + voxels_ * static_cast<std::int64_t>(s); }

  // u = S_c ∘ P_s ∘ x for every coil.
  void expand(std::size_t s, const Complex* x, Complex* u) {
    const Context& c = this->context();
    const Complex* p = phase_of(s);
    if (c.is_host()) {
      const std::int64_t n = voxels_, k = coils_;
      const Cplx<T>*maps = cplx(maps_), *ph = cplx(p), *in = cplx(x);
      Cplx<T>* out = cplx(u);
      op::host::for_each_index(c, n, n * k, [&](std::int64_t v) { dp::expand_point(n, k, maps, ph, in, out, v); });
      return;
    }
#if FIELDFT_HAVE_CUDA
    cuda::pcsense::expand<T>(c.device(), c.stream(), voxels_, coils_, maps_, p, x, u);
#else
    no_cuda();
#endif
  }

  // x (+)= conj(P_s) Σ_c conj(S_c) u_c: written for the first shot, added for the others.
  void reduce(std::size_t s, const Complex* u, Complex* x) {
    const Context& c = this->context();
    const Complex* p = phase_of(s);
    const bool accumulate = s > 0;
    if (c.is_host()) {
      const std::int64_t n = voxels_, k = coils_;
      const Cplx<T>*maps = cplx(maps_), *ph = cplx(p), *in = cplx(u);
      Cplx<T>* out = cplx(x);
      op::host::for_each_index(c, n, n * k,
                               [&](std::int64_t v) { dp::reduce_point(n, k, maps, ph, in, out, accumulate, v); });
      return;
    }
#if FIELDFT_HAVE_CUDA
    cuda::pcsense::reduce<T>(c.device(), c.stream(), voxels_, coils_, maps_, p, u, x, accumulate);
#else
    no_cuda();
#endif
  }

  // Between a shot's samples (its order, {M_s, C}) and the original order ({M, C}): scatter
  // (to_original) or gather.
  void move_samples(const Shot& shot, const Complex* from, Complex* to, bool to_original) {
    const Context& c = this->context();
    const std::int64_t* index = index_ + shot.offset;
    const std::int64_t m = samples_, ms = shot.samples, count = ms * coils_;
    if (c.is_host()) {
      const Cplx<T>* in = cplx(from);
      Cplx<T>* out = cplx(to);
      if (to_original)
        op::host::for_each_index(c, count, count, [&](std::int64_t t) { dp::scatter_point(m, ms, index, in, out, t); });
      else
        op::host::for_each_index(c, count, count, [&](std::int64_t t) { dp::gather_point(m, ms, index, in, out, t); });
      return;
    }
#if FIELDFT_HAVE_CUDA
    if (to_original)
      cuda::pcsense::scatter<T>(c.device(), c.stream(), m, ms, coils_, index, from, to);
    else
      cuda::pcsense::gather<T>(c.device(), c.stream(), m, ms, coils_, index, from, to);
#else
    no_cuda();
#endif
  }

  std::int64_t voxels_, samples_, coils_;
  std::vector<Shot> shots_;
  std::int64_t max_shot_samples_ = 0;
  op::Workspace values_, index_memory_;  // the maps and phase factors; the shots' sample positions
  const Complex* maps_ = nullptr;
  const Complex* phase_ = nullptr;
  const std::int64_t* index_ = nullptr;
};

}  // namespace

template <class T>
op::OperatorPtr<T> pcsense(std::shared_ptr<const Encoding<T>> encoding, std::span<const std::complex<T>> maps,
                           const op::Shape& maps_shape, std::span<const T> phase_maps, const op::Shape& phase_shape,
                           Context context, const PcSenseOptions<T>& options) {
  const std::string who = "pcsense";
  require(encoding != nullptr, ErrorCode::kInvalidArgument, who + ": the encoding is null");
  const op::Shape image = encoding->image_shape();
  const std::int64_t voxels = op::shape_size(image);
  const std::int64_t coils = detail::coils_of(image, maps_shape, maps.size(), who);
  detail::require_finite_maps(maps, image, who);
  const auto shot_samples = samples_of_shots(*encoding, who);
  const std::int32_t shots = encoding->num_shots();
  check_phase_maps<T>(image, shots, phase_maps, phase_shape, who);
  const SenseOptions so = options.shot_encoding ? SenseOptions{} : resolved_options(options, *encoding, coils, context);
  if (!options.shot_encoding && so.encoding == EncodingKind::kDft && options.one_pass)
    if (auto one_pass =
            detail::one_pass_dft_pcsense<T>(*encoding, shot_samples, maps, phase_maps, coils, options.gram, context))
      return one_pass;

  // One coil-batched encoding per shot (the costly part: plans, DFT set-up), checked.
  const ShotEncodingFactory<T> factory = options.shot_encoding ? options.shot_encoding : factory_of<T>(so, context, who);
  std::vector<typename PhaseCorrectedSense<T>::Shot> ops;
  std::vector<std::int64_t> index;
  index.reserve(static_cast<std::size_t>(encoding->num_samples()));
  for (std::int32_t s = 0; s < shots; ++s) {
    const auto& idx = shot_samples[static_cast<std::size_t>(s)];
    const std::int64_t ms = static_cast<std::int64_t>(idx.size());
    const std::string which = who + ": the encoding of shot " + std::to_string(s);
    auto e = factory(shot_encoding(*encoding, idx), coils);
    require(e != nullptr, ErrorCode::kInvalidArgument, which + " is null (options.shot_encoding returned nullptr)");
    require_same_place(context, e->context(), which + " (" + e->name() + ")");
    require(e->domain_size() == voxels * coils && e->codomain_size() == ms * coils, ErrorCode::kShapeMismatch,
            which + ", " + e->name() + ", maps " + op::shape_string(e->domain_shape()) + " -> " +
                op::shape_string(e->codomain_shape()) + "; expected " + op::shape_string(with_axis(image, coils)) +
                " -> " + op::shape_string({ms, coils}) + " (the image for each of the " + std::to_string(coils) +
                " coils to the shot's " + std::to_string(ms) + " samples for each coil)");
    ops.push_back({std::move(e), static_cast<std::int64_t>(index.size()), ms});
    index.insert(index.end(), idx.begin(), idx.end());
  }

  // e^{iφ_s}, in double, rounded to T once.
  std::vector<std::complex<T>> phase(phase_maps.size());
  for (std::size_t i = 0; i < phase.size(); ++i) {
    const std::complex<double> p = std::polar(1.0, static_cast<double>(phase_maps[i]));
    phase[i] = std::complex<T>(static_cast<T>(p.real()), static_cast<T>(p.imag()));
  }
  const std::vector<std::complex<T>> map_values(maps.begin(), maps.end());
  return std::make_shared<PhaseCorrectedSense<T>>(image, encoding->num_samples(), coils, std::move(ops), map_values,
                                                  phase, index, context);
}

template op::OperatorPtr<float> pcsense<float>(std::shared_ptr<const Encoding<float>>,
                                               std::span<const std::complex<float>>, const op::Shape&,
                                               std::span<const float>, const op::Shape&, Context,
                                               const PcSenseOptions<float>&);
template op::OperatorPtr<double> pcsense<double>(std::shared_ptr<const Encoding<double>>,
                                                 std::span<const std::complex<double>>, const op::Shape&,
                                                 std::span<const double>, const op::Shape&, Context,
                                                 const PcSenseOptions<double>&);

}  // namespace fieldft::mri
