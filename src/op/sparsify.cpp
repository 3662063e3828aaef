// The sparsifying operators of include/fieldft/op/sparsify.hpp: validation once, at construction;
// the per-point math of include/fieldft/detail/sparsify.hpp evaluated by OpenMP loops on the host
// and by the kernels of src/cuda/sparsify.cu (through the plain C++ src/cuda/sparsify.hpp) on a
// device, so that nothing here needs CUDA headers.
#include "fieldft/op/sparsify.hpp"

#include <cmath>
#include <string>
#include <utility>

#include "fieldft/config.hpp"  // first: FIELDFT_HAVE_CUDA selects the includes below
#include "fieldft/detail/sparsify.hpp"
#include "fieldft/op/vector_ops.hpp"
#include "op/host_loops.hpp"
#if FIELDFT_HAVE_CUDA
#include "cuda/sparsify.hpp"
#endif

namespace fieldft::op {

const char* boundary_name(Boundary b) noexcept {
  switch (b) {
    case Boundary::kPeriodic:
      return "periodic";
    case Boundary::kNeumann:
      return "neumann";
  }
  return "unknown";
}

const char* wavelet_name(Wavelet w) noexcept {
  switch (w) {
    case Wavelet::kHaar:
      return "haar";
    case Wavelet::kDaubechies4:
      return "daubechies4";
  }
  return "unknown";
}

std::vector<double> wavelet_lowpass(Wavelet kind) {
  const double r2 = std::sqrt(2.0), r3 = std::sqrt(3.0);
  switch (kind) {
    case Wavelet::kHaar:
      return {1 / r2, 1 / r2};
    case Wavelet::kDaubechies4: {
      // The minimum-phase solution of the D4 conditions (fieldft/op/sparsify.hpp).
      const double s = 4 * r2;
      return {(1 + r3) / s, (3 + r3) / s, (3 - r3) / s, (1 - r3) / s};
    }
  }
  throw Error(ErrorCode::kInvalidArgument, "unknown wavelet " + std::to_string(static_cast<int>(kind)) +
                                               "; expected Wavelet::kHaar or Wavelet::kDaubechies4");
}

namespace {

namespace ds = detail::sparsify;
using detail::Cplx;

// ---- validation -----------------------------------------------------------------------------

// An image shape: 1 to kMaxAxes axes, every extent >= 1.
void require_image_shape(const Shape& shape, const std::string& what) {
  require(!shape.empty(), ErrorCode::kInvalidArgument,
          what + ": the shape has no axes; expected an image shape such as {Nx, Ny}");
  require(shape.size() <= static_cast<std::size_t>(ds::kMaxAxes), ErrorCode::kInvalidArgument,
          what + ": shape " + shape_string(shape) + " has " + std::to_string(shape.size()) +
              " axes; expected at most " + std::to_string(ds::kMaxAxes));
  for (auto s : shape)
    require(s >= 1, ErrorCode::kInvalidArgument,
            what + ": shape " + shape_string(shape) + " has an extent " + std::to_string(s) +
                "; expected every extent >= 1");
  (void)shape_size(shape);  // kTooLarge on overflow
}

void require_place(const Context& c, const std::string& what) {
#if !FIELDFT_HAVE_CUDA
  require(!c.is_cuda(), ErrorCode::kBackendUnavailable,
          what + ": a CUDA context (" + c.describe() + ") was given, but this fieldft was built without CUDA");
#else
  (void)c;
  (void)what;
#endif
}

std::string axes_string(const std::vector<int>& axes) {
  std::string s = "{";
  for (std::size_t i = 0; i < axes.size(); ++i) {
    if (i) s += ',';
    s += std::to_string(axes[i]);
  }
  return s + "}";
}

Shape concat(Shape a, const Shape& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

Shape appended(Shape s, std::int64_t k) {
  s.push_back(k);
  return s;
}

// ---- host loops -----------------------------------------------------------------------------

using ds::as_cplx;

#if !FIELDFT_HAVE_CUDA
[[noreturn]] void no_cuda() {
  throw Error(ErrorCode::kBackendUnavailable, "a CUDA operator was called, but this fieldft was built without CUDA");
}
#endif

// ---------------------------------------------------------------------------------------------
// finite_difference

enum class DiffKind : int { kForward, kAdjoint, kNormal };

template <class T>
class FiniteDifference final : public LinearOperator<T> {
 public:
  using Complex = std::complex<T>;
  // `stack`: the trailing stacked extents of batched forms (empty for one image).
  FiniteDifference(Shape image, std::vector<int> axes, Boundary boundary, Shape stack, const Context& c)
      : LinearOperator<T>(concat(image, stack),
                          concat(appended(image, static_cast<std::int64_t>(axes.size())), stack), c),
        image_(std::move(image)),
        axes_(std::move(axes)),
        boundary_(boundary),
        stack_(std::move(stack)) {
    g_.n = shape_size(image_);
    g_.naxes = static_cast<int>(axes_.size());
    g_.periodic = boundary_ == Boundary::kPeriodic;
    for (int a = 0; a < g_.naxes; ++a) {
      const auto axis = static_cast<std::size_t>(axes_[static_cast<std::size_t>(a)]);
      std::int64_t stride = 1;
      for (std::size_t d = 0; d < axis; ++d) stride *= image_[d];
      g_.stride[a] = stride;
      g_.extent[a] = image_[axis];
    }
  }

  std::string name() const override {
    std::string s = "finite_difference(" + shape_string(image_) + ", axes " + axes_string(axes_) + ", " +
                    boundary_name(boundary_);
    if (!stack_.empty()) s += ", stacked " + shape_string(stack_);
    return s + ")";
  }

  void apply(const Complex* x, Complex* y) override { run(DiffKind::kForward, x, y); }
  void apply_adjoint(const Complex* y, Complex* x) override { run(DiffKind::kAdjoint, y, x); }
  // DᴴD in one pass: the Laplacian stencil, no intermediate difference images.
  void apply_normal(const Complex* x, Complex* z) override { run(DiffKind::kNormal, x, z); }

  OperatorPtr<T> batched(std::int64_t k) const override {
    return std::make_shared<FiniteDifference>(image_, axes_, boundary_, appended(stack_, k), this->context());
  }

 private:
  // One pass over the domain elements (every image of the stack).
  void run(DiffKind kind, const Complex* in, Complex* out) {
    const std::int64_t count = this->domain_size();
    const Context& c = this->context();
    if (c.is_host()) {
      const ds::DiffGeometry& g = g_;
      const Cplx<T>* src = as_cplx(in);
      Cplx<T>* dst = as_cplx(out);
      switch (kind) {
        case DiffKind::kForward:
          host::for_each_index(c, count, count, [&](std::int64_t i) { ds::diff_forward_point(g, src, dst, i); });
          break;
        case DiffKind::kAdjoint:
          host::for_each_index(c, count, count, [&](std::int64_t i) { ds::diff_adjoint_point(g, src, dst, i); });
          break;
        case DiffKind::kNormal:
          host::for_each_index(c, count, count, [&](std::int64_t i) { ds::diff_normal_point(g, src, dst, i); });
          break;
      }
      return;
    }
#if FIELDFT_HAVE_CUDA
    switch (kind) {
      case DiffKind::kForward:
        cuda::sparsify::diff_forward<T>(c.device(), c.stream(), g_, count, in, out);
        break;
      case DiffKind::kAdjoint:
        cuda::sparsify::diff_adjoint<T>(c.device(), c.stream(), g_, count, in, out);
        break;
      case DiffKind::kNormal:
        cuda::sparsify::diff_normal<T>(c.device(), c.stream(), g_, count, in, out);
        break;
    }
#else
    no_cuda();
#endif
  }

  Shape image_;
  std::vector<int> axes_;
  Boundary boundary_;
  Shape stack_;
  ds::DiffGeometry g_;
};

// ---------------------------------------------------------------------------------------------
// wavelet

// The passes of one level: a copy of its block, and the analysis and synthesis steps along its
// split axes (synthesis in reverse axis order).
template <class T>
struct WaveletLevel {
  ds::WaveletPass<T> copy;
  std::vector<ds::WaveletPass<T>> analysis, synthesis;
};

// The block extents of every level: level ℓ halves the even extents of level ℓ − 1's block.
// Level 0 is the whole image; entry ℓ is the block level ℓ + 1 transforms.
std::vector<Shape> wavelet_blocks(const Shape& image, int levels) {
  std::vector<Shape> blocks{image};
  for (int l = 1; l < levels; ++l) {
    Shape next = blocks.back();
    for (auto& e : next)
      if (e % 2 == 0) e /= 2;
    blocks.push_back(std::move(next));
  }
  return blocks;
}

int max_levels_of(const Shape& image) {
  Shape m = image;
  int levels = 0;
  for (;;) {
    bool split = false;
    for (auto& e : m)
      if (e % 2 == 0) {
        e /= 2;
        split = true;
      }
    if (!split) return levels;
    ++levels;
  }
}

template <class T>
std::vector<WaveletLevel<T>> wavelet_plan(const Shape& image, int levels, Wavelet kind) {
  const std::vector<double> h = wavelet_lowpass(kind);
  const int taps = static_cast<int>(h.size());
  ds::WaveletPass<T> base;
  base.ndim = static_cast<int>(image.size());
  base.n = shape_size(image);
  base.taps = taps;
  std::int64_t stride = 1;
  for (int d = 0; d < base.ndim; ++d) {
    base.stride[d] = stride;
    stride *= image[static_cast<std::size_t>(d)];
  }
  for (int k = 0; k < taps; ++k) {
    base.lo[k] = static_cast<T>(h[static_cast<std::size_t>(k)]);
    base.hi[k] = static_cast<T>((k % 2 == 0 ? 1 : -1) * h[static_cast<std::size_t>(taps - 1 - k)]);
  }
  std::vector<WaveletLevel<T>> plan;
  for (const Shape& block : wavelet_blocks(image, levels)) {
    WaveletLevel<T> level;
    level.copy = base;
    level.copy.block = shape_size(block);
    for (int d = 0; d < base.ndim; ++d) level.copy.extent[d] = block[static_cast<std::size_t>(d)];
    for (int d = 0; d < base.ndim; ++d) {
      if (block[static_cast<std::size_t>(d)] % 2 != 0) continue;
      ds::WaveletPass<T> p = level.copy;
      p.axis = d;
      p.kind = ds::PassKind::kAnalysis;
      level.analysis.push_back(p);
      p.kind = ds::PassKind::kSynthesis;
      level.synthesis.insert(level.synthesis.begin(), p);
    }
    plan.push_back(std::move(level));
  }
  return plan;
}

template <class T>
class WaveletTransform final : public LinearOperator<T> {
 public:
  using Complex = std::complex<T>;
  WaveletTransform(Shape image, int levels, Wavelet kind, Shape stack, const Context& c)
      : LinearOperator<T>(concat(image, stack), concat(image, stack), c),
        image_(std::move(image)),
        levels_(levels),
        kind_(kind),
        stack_(std::move(stack)),
        copies_(shape_size(stack_)),
        plan_(wavelet_plan<T>(image_, levels_, kind_)),
        vec_(c) {}

  std::string name() const override {
    std::string s = "wavelet(" + shape_string(image_) + ", " + wavelet_name(kind_) + ", " + std::to_string(levels_) +
                    (levels_ == 1 ? " level" : " levels");
    if (!stack_.empty()) s += ", stacked " + shape_string(stack_);
    return s + ")";
  }

  // Levels 1..L, each reading the previous level's approximation block.
  void apply(const Complex* x, Complex* y) override {
    Complex* scratch = this->scratch(1, this->domain_size());
    const Complex* src = x;
    for (const auto& level : plan_) {
      run_level(level, level.analysis, src, y, scratch);
      src = y;
    }
  }
  // Levels L..1 on a copy of the coefficients: each level's details are read where apply left
  // them.
  void apply_adjoint(const Complex* y, Complex* x) override {
    Complex* scratch = this->scratch(1, this->domain_size());
    vec_.copy(this->domain_size(), y, x);
    for (auto it = plan_.rbegin(); it != plan_.rend(); ++it) run_level(*it, it->synthesis, x, x, scratch);
  }
  // WᴴW = I.
  void apply_normal(const Complex* x, Complex* z) override { vec_.copy(this->domain_size(), x, z); }

  OperatorPtr<T> batched(std::int64_t k) const override {
    return std::make_shared<WaveletTransform>(image_, levels_, kind_, appended(stack_, k), this->context());
  }

 private:
  // The passes of one level from `src` (the level's input block) into the same block of `buf`,
  // ping-ponging with `scratch` so that the last pass writes `buf`. When the input is already in
  // `buf` and the number of passes is odd, the block is first copied to `scratch`, since a pass
  // cannot read and write one array.
  void run_level(const WaveletLevel<T>& level, const std::vector<ds::WaveletPass<T>>& passes, const Complex* src,
                 Complex* buf, Complex* scratch) {
    const std::size_t p = passes.size();
    if (src == buf && p % 2 == 1) {
      pass(level.copy, buf, scratch);
      src = scratch;
    }
    for (std::size_t i = 0; i < p; ++i) {
      Complex* dst = (p - 1 - i) % 2 == 0 ? buf : scratch;
      pass(passes[i], src, dst);
      src = dst;
    }
  }

  void pass(const ds::WaveletPass<T>& p, const Complex* src, Complex* dst) {
    const std::int64_t count = p.block * copies_;
    const Context& c = this->context();
    if (c.is_host()) {
      const Cplx<T>* s = as_cplx(src);
      Cplx<T>* d = as_cplx(dst);
      host::for_each_index(c, count, count, [&](std::int64_t t) { ds::wavelet_pass_point(p, s, d, t); });
      return;
    }
#if FIELDFT_HAVE_CUDA
    cuda::sparsify::wavelet_pass<T>(c.device(), c.stream(), p, count, src, dst);
#else
    no_cuda();
#endif
  }

  Shape image_;
  int levels_;
  Wavelet kind_;
  Shape stack_;
  std::int64_t copies_;
  std::vector<WaveletLevel<T>> plan_;
  VectorOps<T> vec_;
};

}  // namespace

// ---------------------------------------------------------------------------------------------
// The factories: validation lives here, once.

int wavelet_max_levels(const Shape& shape) {
  require_image_shape(shape, "wavelet_max_levels");
  return max_levels_of(shape);
}

template <class T>
OperatorPtr<T> finite_difference(Shape shape, std::vector<int> axes, Context context, Boundary boundary) {
  const std::string what = "finite_difference";
  require_image_shape(shape, what);
  require_place(context, what);
  require(boundary == Boundary::kPeriodic || boundary == Boundary::kNeumann, ErrorCode::kInvalidArgument,
          what + ": unknown boundary " + std::to_string(static_cast<int>(boundary)) +
              "; expected Boundary::kPeriodic or Boundary::kNeumann");
  const int ndim = static_cast<int>(shape.size());
  require(!axes.empty(), ErrorCode::kInvalidArgument,
          what + ": axes is empty; expected at least one axis in [0, " + std::to_string(ndim) + ") of shape " +
              shape_string(shape));
  for (std::size_t a = 0; a < axes.size(); ++a) {
    require(axes[a] >= 0 && axes[a] < ndim, ErrorCode::kInvalidArgument,
            what + ": axis " + std::to_string(axes[a]) + " is out of range for shape " + shape_string(shape) +
                "; expected 0 <= axis < " + std::to_string(ndim));
    for (std::size_t b = 0; b < a; ++b)
      require(axes[b] != axes[a], ErrorCode::kInvalidArgument,
              what + ": axis " + std::to_string(axes[a]) + " appears twice in axes " + axes_string(axes) +
                  "; expected distinct axes");
  }
  return std::make_shared<FiniteDifference<T>>(std::move(shape), std::move(axes), boundary, Shape{}, context);
}

template <class T>
OperatorPtr<T> finite_difference(Shape shape, Context context, Boundary boundary) {
  require_image_shape(shape, "finite_difference");
  std::vector<int> axes(shape.size());
  for (std::size_t d = 0; d < axes.size(); ++d) axes[d] = static_cast<int>(d);
  return finite_difference<T>(std::move(shape), std::move(axes), std::move(context), boundary);
}

template <class T>
OperatorPtr<T> wavelet(Shape shape, int levels, Context context, Wavelet kind) {
  const std::string what = "wavelet";
  require_image_shape(shape, what);
  require_place(context, what);
  require(kind == Wavelet::kHaar || kind == Wavelet::kDaubechies4, ErrorCode::kInvalidArgument,
          what + ": unknown wavelet " + std::to_string(static_cast<int>(kind)) +
              "; expected Wavelet::kHaar or Wavelet::kDaubechies4");
  require(levels >= 1, ErrorCode::kInvalidArgument,
          what + ": levels = " + std::to_string(levels) + "; expected levels >= 1");
  const int most = max_levels_of(shape);
  require(most >= 1, ErrorCode::kInvalidArgument,
          what + ": every extent of shape " + shape_string(shape) +
              " is odd, so no level can halve an axis; expected at least one even extent");
  if (levels > most) {
    const Shape block = wavelet_blocks(shape, most + 1).back();
    throw Error(ErrorCode::kInvalidArgument,
                what + ": levels = " + std::to_string(levels) + " is too many for shape " + shape_string(shape) +
                    ": at level " + std::to_string(most + 1) + " the block " + shape_string(block) +
                    " has no even extent to halve; expected 1 <= levels <= " + std::to_string(most));
  }
  return std::make_shared<WaveletTransform<T>>(std::move(shape), levels, kind, Shape{}, context);
}

#define FIELDFT_INSTANTIATE_SPARSIFY(T)                                                     \
  template OperatorPtr<T> finite_difference<T>(Shape, std::vector<int>, Context, Boundary); \
  template OperatorPtr<T> finite_difference<T>(Shape, Context, Boundary);                   \
  template OperatorPtr<T> wavelet<T>(Shape, int, Context, Wavelet);

FIELDFT_INSTANTIATE_SPARSIFY(float)
FIELDFT_INSTANTIATE_SPARSIFY(double)
#undef FIELDFT_INSTANTIATE_SPARSIFY

}  // namespace fieldft::op
