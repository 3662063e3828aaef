// One-pass pcSENSE on the exact field-corrected DFT (src/mri/pcsense_dft.hpp): the shots as
// sample groups of one DFT engine, each group's phase map added to the phase of its pairs.
#include "mri/pcsense_dft.hpp"

#include <array>
#include <cmath>
#include <memory>
#include <string>
#include <utility>

#include "core/dft_setup.hpp"
#include "fieldft/config.hpp"  // first: FIELDFT_HAVE_CUDA selects the includes below
#include "fieldft/detail/dft_math.hpp"
#include "fieldft/error.hpp"
#include "fieldft/op/vector_ops.hpp"
#include "mri/dft_setup_build.hpp"
#include "op/upload.hpp"
#if FIELDFT_HAVE_CUDA
#include "cuda/dft_engine.hpp"
#include "cuda/gram.hpp"
#include "cuda/stream.hpp"
#endif

namespace fieldft::mri::detail {

namespace {

// The DFT set-up of all shots' samples, shot after shot, each shot from a multiple of
// core::kDftGroupAlign (padded with samples at k = 0, t = 0 that nothing reads or writes), with
// group offsets −φ_s/2π reduced to [−½, ½] cycles in double: e^{−2πi(q − φ_s/2π)} = E e^{iφ_s}.
template <class T>
std::shared_ptr<core::DftSetup> grouped_setup(const Encoding<T>& e,
                                              const std::vector<std::vector<std::int64_t>>& shot_samples,
                                              std::span<const T> phase_maps, std::int64_t coils) {
  std::vector<std::int64_t> source;
  std::vector<std::int32_t> group;
  for (std::size_t s = 0; s < shot_samples.size(); ++s) {
    for (auto j : shot_samples[s]) {
      source.push_back(j);
      group.push_back(static_cast<std::int32_t>(s));
    }
    while (source.size() % static_cast<std::size_t>(core::kDftGroupAlign) != 0) {
      source.push_back(-1);
      group.push_back(static_cast<std::int32_t>(s));
    }
  }
  const bool has_times = !e.times().empty();
  std::array<std::vector<T>, 3> k;
  std::vector<T> t(has_times ? source.size() : 0, T(0));
  for (int d = 0; d < e.dim(); ++d) k[d].assign(source.size(), T(0));
  for (std::size_t i = 0; i < source.size(); ++i) {
    const std::int64_t j = source[i];
    if (j < 0) continue;
    for (int d = 0; d < e.dim(); ++d) k[d][i] = e.k(d)[static_cast<std::size_t>(j)];
    if (has_times) t[i] = e.times()[static_cast<std::size_t>(j)];
  }
  const std::span<const std::int64_t> grid(e.grid().data(), static_cast<std::size_t>(e.dim()));
  auto setup = build_dft_setup<T>(grid, std::span<const T>(k[0]), std::span<const T>(k[1]),
                                  std::span<const T>(k[2]), e.field(), std::span<const T>(t), coils);
  setup->user_samples = e.num_samples();
  setup->source = std::move(source);
  setup->group = std::move(group);
  setup->group_offset.resize(phase_maps.size());
  for (std::size_t i = 0; i < phase_maps.size(); ++i) {
    double off = -static_cast<double>(phase_maps[i]) / fieldft::detail::dft::kTwoPi;
    setup->group_offset[i] = off - std::nearbyint(off);
  }
  return setup;
}

#if FIELDFT_HAVE_CUDA
// image → {M, C}: expand (S_c ∘ x), the grouped DFT (its output already in the original sample
// order); the adjoint: the grouped adjoint DFT, Σ_c conj(S_c) ∘ . The normal: the four in a
// row through scratch ({M, C} between the two transforms), or with `gram` the stored Gram matrix
// in place of the two transforms (below). On the context's stream: no allocation after the
// first call (the Gram matrix: after prepare_normal), no host synchronisation.
//
// The Gram normal. With the shot phases inside the exponential, A = (I_C ⊗ E_g) diag(S), so
// AᴴA x = Σ_c conj(S_c) ∘ H (S_c ∘ x) with H = E_gᴴE_g = Σ_s e^{−iφ_s} E_sᴴE_s e^{iφ_s}, an
// N×N Hermitian matrix (N voxels) that does not depend on the coils: the exact normal of the
// exact-DFT model, stored. prepare_normal builds it column by column — H e_v is the grouped DFT
// and its adjoint of the unit image e_v — in passes of kGramImages unit images on the tensor-core
// path (each pass writes kGramImages columns in place), so it has the DFT's float accuracy. An
// apply is then one dense product H·[S_1x … S_Cx] (cuda::gram::product), bound by reading H
// (8N² bytes per 8 coils) instead of by
// the 2·M·N phasors of the two DFT passes: it pays when M·N pair evaluations cost more than
// reading N² values and the set-up (N/kGramImages DFT passes of kGramImages images) is spread
// over enough normals — many iterations, or many solves with one trajectory, field map and shot
// phases (R4 of BENCHMARKS.md: N = 128², M = 25,744, 2 GiB).
template <class T>
class OnePassDftPcSense final : public op::LinearOperator<T> {
 public:
  using Complex = std::complex<T>;
  static constexpr std::int64_t kGramImages = 32;  // unit images per DFT pass (the engine's most per pass)

  OnePassDftPcSense(const op::Shape& image, std::int64_t samples, std::int64_t coils, std::int64_t shots,
                    std::shared_ptr<const core::DftSetup> setup, std::span<const Complex> maps, bool gram,
                    const Context& context)
      : op::LinearOperator<T>(image, op::Shape{samples, coils}, context),
        voxels_(op::shape_size(image)),
        samples_(samples),
        coils_(coils),
        shots_(shots),
        gram_(gram),
        maps_memory_(context),
        gram_memory_(context),
        vec_(context),
        setup_(setup) {
    maps_ = op::upload(maps_memory_, maps);
    engine_ = cuda::make_dft_engine<T>(std::move(setup), context.device(), context.stream());
  }

  std::string name() const override {
    std::string n = "pcsense(" + op::shape_string(this->domain_shape()) + " -> " +
                    op::shape_string(this->codomain_shape()) + ", " + std::to_string(shots_) +
                    " shots in one DFT pass of " + std::to_string(coils_) + " coil images";
    if (gram_)
      n += ", normal: Gram matrix " + std::to_string(voxels_) + "x" + std::to_string(voxels_) + " (" +
           std::to_string(gram_bytes() >> 20) + " MiB, " + (h_ ? "built" : "built at prepare_normal") + ")";
    return n + ")";
  }

  void apply(const Complex* x, Complex* y) override {
    Complex* u = this->scratch(1, voxels_ * coils_);
    vec_.expand_mul(voxels_, coils_, maps_, x, u);
    engine_->forward(u, y, true);
  }

  void apply_adjoint(const Complex* y, Complex* x) override {
    Complex* u = this->scratch(1, voxels_ * coils_);
    engine_->adjoint(y, u, true);
    vec_.conj_mul_sum(voxels_, coils_, maps_, u, x);
  }

  void prepare_normal() override {
    if (gram_ && !h_) build_gram();
  }

  void apply_normal(const Complex* x, Complex* z) override {
    prepare_normal();
    Complex* u = this->scratch(1, voxels_ * coils_);
    vec_.expand_mul(voxels_, coils_, maps_, x, u);
    if (gram_) {
      Complex* w = this->scratch(2, voxels_ * coils_);
      Complex* partial = this->scratch(3, cuda::gram::product_scratch(voxels_, coils_));
      cuda::gram::product<T>(this->context().device(), this->context().stream(), h_, voxels_, u, coils_, w, partial);
      vec_.conj_mul_sum(voxels_, coils_, maps_, w, z);
      return;
    }
    Complex* w = this->scratch(2, samples_ * coils_);
    engine_->forward(u, w, true);
    engine_->adjoint(w, u, true);
    vec_.conj_mul_sum(voxels_, coils_, maps_, u, z);
  }

 private:
  // Columns rounded up to whole passes: the last pass writes its kGramImages columns in place
  // (those past N are zero and never read).
  std::int64_t gram_columns() const { return (voxels_ + kGramImages - 1) / kGramImages * kGramImages; }
  std::int64_t gram_bytes() const { return voxels_ * gram_columns() * static_cast<std::int64_t>(sizeof(Complex)); }

  void build_gram() {
    const Context& c = this->context();
    const std::int64_t pass_bytes = (voxels_ + samples_) * kGramImages * static_cast<std::int64_t>(sizeof(Complex));
    const std::string n = std::to_string(voxels_);
    cuda::require_free_memory(c.device(), static_cast<double>(gram_bytes() + pass_bytes),
                              "pcsense: the Gram normal (the " + n + "x" + n +
                                  " matrix of the exact-DFT normal and a pass of " + std::to_string(kGramImages) +
                                  " unit images) would",
                              "set PcSenseOptions::gram = false (the one-pass DFT normal stores no matrix)");
    Complex* h = gram_memory_.get_as<Complex>(voxels_ * gram_columns());
    auto setup = std::make_shared<core::DftSetup>(*setup_);
    setup->images = kGramImages;
    auto engine = cuda::make_dft_engine<T>(std::move(setup), c.device(), c.stream());
    Complex* e = this->scratch(3, voxels_ * kGramImages);
    Complex* w = this->scratch(2, samples_ * kGramImages);
    for (std::int64_t v0 = 0; v0 < voxels_; v0 += kGramImages) {
      cuda::gram::identity_columns<T>(c.device(), c.stream(), voxels_, v0, kGramImages, e);
      engine->forward(e, w, true);
      engine->adjoint(w, h + v0 * voxels_, true);
    }
    c.synchronize();  // the pass engine's memory goes with it
    h_ = h;
  }

  std::int64_t voxels_, samples_, coils_, shots_;
  bool gram_;
  op::Workspace maps_memory_, gram_memory_;
  const Complex* maps_ = nullptr;
  const Complex* h_ = nullptr;  // the Gram matrix, column-major, once built
  op::VectorOps<T> vec_;
  std::shared_ptr<const core::DftSetup> setup_;
  std::unique_ptr<core::DftEngine<T>> engine_;
};
#endif

}  // namespace

template <class T>
op::OperatorPtr<T> one_pass_dft_pcsense(const Encoding<T>& encoding,
                                        const std::vector<std::vector<std::int64_t>>& shot_samples,
                                        std::span<const std::complex<T>> maps, std::span<const T> phase_maps,
                                        std::int64_t coils, bool gram, const Context& context) {
#if FIELDFT_HAVE_CUDA
  if (!context.is_cuda() || !cuda::dft_groups_supported<T>(coils)) return nullptr;
  auto setup = grouped_setup<T>(encoding, shot_samples, phase_maps, coils);
  return std::make_shared<OnePassDftPcSense<T>>(encoding.image_shape(), encoding.num_samples(), coils,
                                                static_cast<std::int64_t>(shot_samples.size()), std::move(setup), maps,
                                                gram, context);
#else
  (void)encoding, (void)shot_samples, (void)maps, (void)phase_maps, (void)coils, (void)gram, (void)context;
  return nullptr;
#endif
}

template op::OperatorPtr<float> one_pass_dft_pcsense<float>(const Encoding<float>&,
                                                            const std::vector<std::vector<std::int64_t>>&,
                                                            std::span<const std::complex<float>>,
                                                            std::span<const float>, std::int64_t, bool, const Context&);
template op::OperatorPtr<double> one_pass_dft_pcsense<double>(const Encoding<double>&,
                                                              const std::vector<std::vector<std::int64_t>>&,
                                                              std::span<const std::complex<double>>,
                                                              std::span<const double>, std::int64_t, bool,
                                                              const Context&);

}  // namespace fieldft::mri::detail
