// The operator algebra of include/fieldft/op/combinators.hpp. Every combinator checks shapes and
// places once, at construction; apply paths only enqueue work (child operators and VectorOps on
// the shared context) and reuse their scratch, so on a device nothing here synchronises.
#include "fieldft/op/combinators.hpp"

#include <sstream>
#include <string>
#include <utility>

#include "fieldft/op/vector_ops.hpp"
#include "op/upload.hpp"

namespace fieldft::op {

void require_shape(const Shape& expected, const Shape& got, const std::string& what) {
  if (expected == got) return;
  throw Error(ErrorCode::kShapeMismatch,
              what + ": expected shape " + shape_string(expected) + ", got " + shape_string(got));
}

namespace {

Shape appended(Shape s, std::int64_t k) {
  s.push_back(k);
  return s;
}

template <class T>
std::string describe(const LinearOperator<T>& a) {
  return a.name() + " (" + shape_string(a.domain_shape()) + " -> " + shape_string(a.codomain_shape()) + ")";
}

template <class T>
std::string names_of(const std::vector<OperatorPtr<T>>& ops) {
  std::string s;
  for (std::size_t i = 0; i < ops.size(); ++i) s += (i ? ", " : "") + ops[i]->name();
  return s;
}

template <class T>
void require_operand(const OperatorPtr<T>& a, const std::string& what) {
  require(a != nullptr, ErrorCode::kInvalidArgument, what + ": the operator is null");
}

// Operands of sum / vstack / hstack: non-empty, non-null, all in the place of the first.
template <class T>
void require_operands(const std::vector<OperatorPtr<T>>& ops, const std::string& what) {
  require(!ops.empty(), ErrorCode::kInvalidArgument, what + ": needs at least one operator");
  for (std::size_t i = 0; i < ops.size(); ++i) require_operand(ops[i], what + " operand " + std::to_string(i));
  for (std::size_t i = 1; i < ops.size(); ++i)
    require_same_place(ops[0]->context(), ops[i]->context(), what + "(" + names_of(ops) + ")");
}

std::string complex_string(double re, double im) {
  std::ostringstream os;
  if (im == 0) {
    os << re;
  } else {
    os << "(" << re << (im < 0 ? "-" : "+") << (im < 0 ? -im : im) << "i)";
  }
  return os.str();
}

// ---------------------------------------------------------------------------------------------
// batch: K copies applied in turn, for operators without a batched form.

template <class T>
class LoopedBatch final : public LinearOperator<T> {
 public:
  using Complex = std::complex<T>;
  // `stack`: the trailing stacked extents (several after batching a batch).
  LoopedBatch(OperatorPtr<T> a, Shape stack)
      : LinearOperator<T>(concat(a->domain_shape(), stack), concat(a->codomain_shape(), stack), a->context()),
        a_(std::move(a)),
        stack_(std::move(stack)),
        count_(shape_size(stack_)) {}

  std::string name() const override { return "batch(" + a_->name() + ", " + shape_string(stack_) + ")"; }
  void apply(const Complex* x, Complex* y) override {
    const std::int64_t nd = a_->domain_size(), nc = a_->codomain_size();
    for (std::int64_t j = 0; j < count_; ++j) a_->apply(x + j * nd, y + j * nc);
  }
  void apply_adjoint(const Complex* y, Complex* x) override {
    const std::int64_t nd = a_->domain_size(), nc = a_->codomain_size();
    for (std::int64_t j = 0; j < count_; ++j) a_->apply_adjoint(y + j * nc, x + j * nd);
  }
  // Each copy with A's own normal, which may be faster than A then Aᴴ.
  void apply_normal(const Complex* x, Complex* z) override {
    const std::int64_t nd = a_->domain_size();
    for (std::int64_t j = 0; j < count_; ++j) a_->apply_normal(x + j * nd, z + j * nd);
  }
  void prepare_normal() override { a_->prepare_normal(); }
  bool can_share_normal() const override { return a_->can_share_normal(); }
  void prepare_normal_shared(const NormalShare& share) override { a_->prepare_normal_shared(share); }
  OperatorPtr<T> batched(std::int64_t k) const override {
    return std::make_shared<LoopedBatch>(a_, appended(stack_, k));
  }

 private:
  static Shape concat(Shape a, const Shape& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
  }
  OperatorPtr<T> a_;
  Shape stack_;
  std::int64_t count_;
};

// `batched`, the operator's own batched form of K copies, or else a loop over A.
template <class T>
OperatorPtr<T> batched_or_looped(OperatorPtr<T> batched, const OperatorPtr<T>& a, std::int64_t k) {
  return batched ? batched : std::make_shared<LoopedBatch<T>>(a, Shape{k});
}

// ---------------------------------------------------------------------------------------------
// compose

template <class T>
class Compose final : public LinearOperator<T> {
 public:
  using Complex = std::complex<T>;
  Compose(OperatorPtr<T> a, OperatorPtr<T> b)
      : LinearOperator<T>(b->domain_shape(), a->codomain_shape(), a->context()), a_(std::move(a)), b_(std::move(b)) {}

  std::string name() const override { return "compose(" + a_->name() + ", " + b_->name() + ")"; }
  void apply(const Complex* x, Complex* y) override {
    Complex* t = this->scratch(1, b_->codomain_size());
    b_->apply(x, t);
    a_->apply(t, y);
  }
  void apply_adjoint(const Complex* y, Complex* x) override {
    Complex* t = this->scratch(1, b_->codomain_size());
    a_->apply_adjoint(y, t);
    b_->apply_adjoint(t, x);
  }
  // (AB)ᴴ(AB) = Bᴴ(AᴴA)B: A's normal may be a fast one (Toeplitz).
  void apply_normal(const Complex* x, Complex* z) override {
    Complex* t1 = this->scratch(1, b_->codomain_size());
    Complex* t2 = this->scratch(2, b_->codomain_size());
    b_->apply(x, t1);
    a_->apply_normal(t1, t2);
    b_->apply_adjoint(t2, z);
  }
  void prepare_normal() override { a_->prepare_normal(); }
  bool can_share_normal() const override { return a_->can_share_normal(); }
  void prepare_normal_shared(const NormalShare& share) override { a_->prepare_normal_shared(share); }
  OperatorPtr<T> batched(std::int64_t k) const override {
    auto ab = a_->batched(k);
    auto bb = b_->batched(k);
    if (!ab && !bb) return nullptr;  // op::batch loops over the whole composition instead
    return compose<T>(batched_or_looped(std::move(ab), a_, k), batched_or_looped(std::move(bb), b_, k));
  }

 private:
  OperatorPtr<T> a_, b_;
};

// ---------------------------------------------------------------------------------------------
// sum

template <class T>
class Sum final : public LinearOperator<T> {
 public:
  using Complex = std::complex<T>;
  explicit Sum(std::vector<OperatorPtr<T>> terms)
      : LinearOperator<T>(terms[0]->domain_shape(), terms[0]->codomain_shape(), terms[0]->context()),
        terms_(std::move(terms)),
        vec_(this->context()) {}

  std::string name() const override { return "sum(" + names_of(terms_) + ")"; }
  void apply(const Complex* x, Complex* y) override {
    terms_[0]->apply(x, y);
    if (terms_.size() == 1) return;
    Complex* t = this->scratch(1, this->codomain_size());
    for (std::size_t i = 1; i < terms_.size(); ++i) {
      terms_[i]->apply(x, t);
      vec_.axpby(this->codomain_size(), Complex(1), t, Complex(1), y);
    }
  }
  void apply_adjoint(const Complex* y, Complex* x) override {
    terms_[0]->apply_adjoint(y, x);
    if (terms_.size() == 1) return;
    Complex* t = this->scratch(1, this->domain_size());
    for (std::size_t i = 1; i < terms_.size(); ++i) {
      terms_[i]->apply_adjoint(y, t);
      vec_.axpby(this->domain_size(), Complex(1), t, Complex(1), x);
    }
  }
  OperatorPtr<T> batched(std::int64_t k) const override {
    std::vector<OperatorPtr<T>> parts;
    bool any = false;
    for (const auto& t : terms_) {
      parts.push_back(t->batched(k));
      any = any || parts.back() != nullptr;
    }
    if (!any) return nullptr;
    for (std::size_t i = 0; i < parts.size(); ++i) parts[i] = batched_or_looped(std::move(parts[i]), terms_[i], k);
    return sum<T>(std::move(parts));
  }

 private:
  std::vector<OperatorPtr<T>> terms_;
  VectorOps<T> vec_;
};

// ---------------------------------------------------------------------------------------------
// vstack and hstack

// The concatenation of the shapes of K blocks along their stacking side: shape + {K} when all are
// equal, else the flat {Σ sizes}. `offsets` receives where each block starts.
Shape stacked_shape(const std::vector<Shape>& shapes, const std::vector<std::int64_t>& sizes,
                    std::vector<std::int64_t>& offsets, const std::string& what) {
  offsets.clear();
  std::int64_t total = 0;
  bool equal = true;
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    offsets.push_back(total);
    require(!__builtin_add_overflow(total, sizes[i], &total), ErrorCode::kTooLarge,
            what + ": the stacked vector has more than 2^63 - 1 elements");
    equal = equal && shapes[i] == shapes[0];
  }
  if (equal) return appended(shapes[0], static_cast<std::int64_t>(shapes.size()));
  return Shape{total};
}

template <class T>
class VStack final : public LinearOperator<T> {
 public:
  using Complex = std::complex<T>;
  VStack(std::vector<OperatorPtr<T>> blocks, Shape codomain, std::vector<std::int64_t> offsets)
      : LinearOperator<T>(blocks[0]->domain_shape(), std::move(codomain), blocks[0]->context()),
        blocks_(std::move(blocks)),
        offsets_(std::move(offsets)),
        vec_(this->context()) {}

  std::string name() const override { return "vstack(" + names_of(blocks_) + ")"; }
  void apply(const Complex* x, Complex* y) override {
    for (std::size_t i = 0; i < blocks_.size(); ++i) blocks_[i]->apply(x, y + offsets_[i]);
  }
  void apply_adjoint(const Complex* y, Complex* x) override {
    blocks_[0]->apply_adjoint(y + offsets_[0], x);
    if (blocks_.size() == 1) return;
    Complex* t = this->scratch(1, this->domain_size());
    for (std::size_t i = 1; i < blocks_.size(); ++i) {
      blocks_[i]->apply_adjoint(y + offsets_[i], t);
      vec_.axpby(this->domain_size(), Complex(1), t, Complex(1), x);
    }
  }
  // Σ A_iᴴA_i, each block with its own (possibly fast) normal.
  void apply_normal(const Complex* x, Complex* z) override {
    blocks_[0]->apply_normal(x, z);
    if (blocks_.size() == 1) return;
    Complex* t = this->scratch(1, this->domain_size());
    for (std::size_t i = 1; i < blocks_.size(); ++i) {
      blocks_[i]->apply_normal(x, t);
      vec_.axpby(this->domain_size(), Complex(1), t, Complex(1), z);
    }
  }
  void prepare_normal() override {
    for (auto& b : blocks_) b->prepare_normal();
  }
  // No batched form: K batched blocks would lay their outputs block-major, not copy-major.

 private:
  std::vector<OperatorPtr<T>> blocks_;
  std::vector<std::int64_t> offsets_;
  VectorOps<T> vec_;
};

template <class T>
class HStack final : public LinearOperator<T> {
 public:
  using Complex = std::complex<T>;
  HStack(std::vector<OperatorPtr<T>> blocks, Shape domain, std::vector<std::int64_t> offsets)
      : LinearOperator<T>(std::move(domain), blocks[0]->codomain_shape(), blocks[0]->context()),
        blocks_(std::move(blocks)),
        offsets_(std::move(offsets)),
        vec_(this->context()) {}

  std::string name() const override { return "hstack(" + names_of(blocks_) + ")"; }
  void apply(const Complex* x, Complex* y) override {
    blocks_[0]->apply(x + offsets_[0], y);
    if (blocks_.size() == 1) return;
    Complex* t = this->scratch(1, this->codomain_size());
    for (std::size_t i = 1; i < blocks_.size(); ++i) {
      blocks_[i]->apply(x + offsets_[i], t);
      vec_.axpby(this->codomain_size(), Complex(1), t, Complex(1), y);
    }
  }
  void apply_adjoint(const Complex* y, Complex* x) override {
    for (std::size_t i = 0; i < blocks_.size(); ++i) blocks_[i]->apply_adjoint(y, x + offsets_[i]);
  }

 private:
  std::vector<OperatorPtr<T>> blocks_;
  std::vector<std::int64_t> offsets_;
  VectorOps<T> vec_;
};

// ---------------------------------------------------------------------------------------------
// diag and diag_expand

// Fixed arrays at a context, shared by an operator and its batched forms.
template <class T>
struct FixedArrays {
  explicit FixedArrays(const Context& c) : memory(c) {}
  Workspace memory;
  const std::complex<T>* d = nullptr;       // the diagonal (diag_expand: n·K values)
  const std::complex<T>* normal = nullptr;  // the normal's diagonal |d|² (diag_expand: Σ_k |d_k|²)
  std::int64_t n = 0;                       // elements of one image
};

// d followed by the normal's diagonal, in one allocation and one copy.
template <class T>
std::shared_ptr<FixedArrays<T>> make_fixed(std::span<const std::complex<T>> d, std::int64_t n, std::int64_t k,
                                           const Context& c) {
  std::vector<std::complex<T>> host(d.begin(), d.end());
  host.resize(static_cast<std::size_t>(n * k + n), std::complex<T>(0));
  std::complex<T>* normal = host.data() + n * k;
  for (std::int64_t j = 0; j < k; ++j)
    for (std::int64_t i = 0; i < n; ++i) normal[i] += std::norm(d[static_cast<std::size_t>(i + n * j)]);
  auto f = std::make_shared<FixedArrays<T>>(c);
  const std::complex<T>* p = upload(f->memory, host);
  f->d = p;
  f->normal = p + n * k;
  f->n = n;
  return f;
}

template <class T>
class Diag final : public LinearOperator<T> {
 public:
  using Complex = std::complex<T>;
  // `shape` = the shape of d followed by the stacked extents it is broadcast over (k copies).
  Diag(std::shared_ptr<FixedArrays<T>> f, Shape shape, std::int64_t k, const Context& c)
      : LinearOperator<T>(shape, shape, c), f_(std::move(f)), k_(k), vec_(this->context()) {}

  std::string name() const override { return "diag(" + shape_string(this->domain_shape()) + ")"; }
  void apply(const Complex* x, Complex* y) override {
    if (k_ == 1)
      vec_.mul(f_->n, f_->d, x, y);
    else
      vec_.mul_stacked(f_->n, k_, f_->d, x, y);
  }
  void apply_adjoint(const Complex* y, Complex* x) override {
    if (k_ == 1)
      vec_.conj_mul(f_->n, f_->d, y, x);
    else
      vec_.conj_mul_stacked(f_->n, k_, f_->d, y, x);
  }
  void apply_normal(const Complex* x, Complex* z) override {
    if (k_ == 1)
      vec_.mul(f_->n, f_->normal, x, z);
    else
      vec_.mul_stacked(f_->n, k_, f_->normal, x, z);
  }
  // The same d broadcast over k more copies: one pass, no copy of d.
  OperatorPtr<T> batched(std::int64_t k) const override {
    return std::make_shared<Diag>(f_, appended(this->domain_shape(), k), k_ * k, this->context());
  }

 private:
  std::shared_ptr<FixedArrays<T>> f_;
  std::int64_t k_;
  VectorOps<T> vec_;
};

template <class T>
class DiagExpand final : public LinearOperator<T> {
 public:
  using Complex = std::complex<T>;
  DiagExpand(std::shared_ptr<FixedArrays<T>> f, const Shape& shape, std::int64_t k, const Context& c)
      : LinearOperator<T>(shape, appended(shape, k), c), f_(std::move(f)), k_(k), vec_(this->context()) {}

  std::string name() const override {
    return "diag_expand(" + shape_string(this->domain_shape()) + ", " + std::to_string(k_) + ")";
  }
  void apply(const Complex* x, Complex* y) override { vec_.expand_mul(f_->n, k_, f_->d, x, y); }
  void apply_adjoint(const Complex* y, Complex* x) override { vec_.conj_mul_sum(f_->n, k_, f_->d, y, x); }
  void apply_normal(const Complex* x, Complex* z) override { vec_.mul(f_->n, f_->normal, x, z); }
  // No batched form: op::batch applies it once per copy, one pass each.

 private:
  std::shared_ptr<FixedArrays<T>> f_;
  std::int64_t k_;
  VectorOps<T> vec_;
};

// ---------------------------------------------------------------------------------------------
// identity, scale, adjoint

template <class T>
class Identity final : public LinearOperator<T> {
 public:
  using Complex = std::complex<T>;
  Identity(const Shape& shape, const Context& c) : LinearOperator<T>(shape, shape, c), vec_(c) {}

  std::string name() const override { return "identity(" + shape_string(this->domain_shape()) + ")"; }
  void apply(const Complex* x, Complex* y) override { vec_.copy(this->domain_size(), x, y); }
  void apply_adjoint(const Complex* y, Complex* x) override { vec_.copy(this->domain_size(), y, x); }
  void apply_normal(const Complex* x, Complex* z) override { vec_.copy(this->domain_size(), x, z); }
  OperatorPtr<T> batched(std::int64_t k) const override {
    return std::make_shared<Identity>(appended(this->domain_shape(), k), this->context());
  }

 private:
  VectorOps<T> vec_;
};

template <class T>
class Scale final : public LinearOperator<T> {
 public:
  using Complex = std::complex<T>;
  Scale(Complex alpha, OperatorPtr<T> a)
      : LinearOperator<T>(a->domain_shape(), a->codomain_shape(), a->context()),
        alpha_(alpha),
        a_(std::move(a)),
        vec_(this->context()) {}

  std::string name() const override {
    return "scale(" + complex_string(alpha_.real(), alpha_.imag()) + ", " + a_->name() + ")";
  }
  void apply(const Complex* x, Complex* y) override {
    a_->apply(x, y);
    vec_.scale(this->codomain_size(), alpha_, y);
  }
  void apply_adjoint(const Complex* y, Complex* x) override {
    a_->apply_adjoint(y, x);
    vec_.scale(this->domain_size(), std::conj(alpha_), x);
  }
  void apply_normal(const Complex* x, Complex* z) override {
    a_->apply_normal(x, z);
    vec_.scale(this->domain_size(), Complex(std::norm(alpha_)), z);
  }
  void prepare_normal() override { a_->prepare_normal(); }
  bool can_share_normal() const override { return a_->can_share_normal(); }
  void prepare_normal_shared(const NormalShare& share) override { a_->prepare_normal_shared(share); }
  OperatorPtr<T> batched(std::int64_t k) const override {
    auto ab = a_->batched(k);
    return ab ? std::make_shared<Scale>(alpha_, std::move(ab)) : nullptr;
  }

 private:
  Complex alpha_;
  OperatorPtr<T> a_;
  VectorOps<T> vec_;
};

template <class T>
class Adjoint final : public LinearOperator<T> {
 public:
  using Complex = std::complex<T>;
  explicit Adjoint(OperatorPtr<T> a)
      : LinearOperator<T>(a->codomain_shape(), a->domain_shape(), a->context()), a_(std::move(a)) {}

  std::string name() const override { return "adjoint(" + a_->name() + ")"; }
  void apply(const Complex* x, Complex* y) override { a_->apply_adjoint(x, y); }
  void apply_adjoint(const Complex* y, Complex* x) override { a_->apply(y, x); }
  // The normal A Aᴴ is the default (Aᴴ then A through scratch).
  OperatorPtr<T> batched(std::int64_t k) const override {
    auto ab = a_->batched(k);
    return ab ? std::make_shared<Adjoint>(std::move(ab)) : nullptr;
  }
  const OperatorPtr<T>& operand() const noexcept { return a_; }

 private:
  OperatorPtr<T> a_;
};

}  // namespace

// ---------------------------------------------------------------------------------------------
// The factories: validation lives here, once.

template <class T>
OperatorPtr<T> compose(OperatorPtr<T> a, OperatorPtr<T> b) {
  require_operand(a, "compose: A");
  require_operand(b, "compose: B");
  const std::string what = "compose(" + a->name() + ", " + b->name() + ")";
  require_same_place(a->context(), b->context(), what);
  if (a->domain_shape() != b->codomain_shape())
    throw Error(ErrorCode::kShapeMismatch, what + ": the domain of A = " + describe(*a) +
                                               " must equal the codomain of B = " + describe(*b) + " (expected shape " +
                                               shape_string(a->domain_shape()) + ", got " +
                                               shape_string(b->codomain_shape()) + ")");
  return std::make_shared<Compose<T>>(std::move(a), std::move(b));
}

template <class T>
OperatorPtr<T> sum(std::vector<OperatorPtr<T>> terms) {
  require_operands(terms, "sum");
  for (std::size_t i = 1; i < terms.size(); ++i) {
    if (terms[i]->domain_shape() != terms[0]->domain_shape() ||
        terms[i]->codomain_shape() != terms[0]->codomain_shape())
      throw Error(ErrorCode::kShapeMismatch,
                  "sum(" + names_of(terms) + "): every term must map the shapes of the first, " + describe(*terms[0]) +
                      "; term " + std::to_string(i) + " is " + describe(*terms[i]));
  }
  return std::make_shared<Sum<T>>(std::move(terms));
}

template <class T>
OperatorPtr<T> vstack(std::vector<OperatorPtr<T>> blocks) {
  require_operands(blocks, "vstack");
  const std::string what = "vstack(" + names_of(blocks) + ")";
  std::vector<Shape> shapes;
  std::vector<std::int64_t> sizes;
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    if (blocks[i]->domain_shape() != blocks[0]->domain_shape())
      throw Error(ErrorCode::kShapeMismatch, what + ": every block must have the domain of the first, " +
                                                 describe(*blocks[0]) + "; block " + std::to_string(i) + " is " +
                                                 describe(*blocks[i]));
    shapes.push_back(blocks[i]->codomain_shape());
    sizes.push_back(blocks[i]->codomain_size());
  }
  std::vector<std::int64_t> offsets;
  Shape codomain = stacked_shape(shapes, sizes, offsets, what);
  return std::make_shared<VStack<T>>(std::move(blocks), std::move(codomain), std::move(offsets));
}

template <class T>
OperatorPtr<T> hstack(std::vector<OperatorPtr<T>> blocks) {
  require_operands(blocks, "hstack");
  const std::string what = "hstack(" + names_of(blocks) + ")";
  std::vector<Shape> shapes;
  std::vector<std::int64_t> sizes;
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    if (blocks[i]->codomain_shape() != blocks[0]->codomain_shape())
      throw Error(ErrorCode::kShapeMismatch, what + ": every block must have the codomain of the first, " +
                                                 describe(*blocks[0]) + "; block " + std::to_string(i) + " is " +
                                                 describe(*blocks[i]));
    shapes.push_back(blocks[i]->domain_shape());
    sizes.push_back(blocks[i]->domain_size());
  }
  std::vector<std::int64_t> offsets;
  Shape domain = stacked_shape(shapes, sizes, offsets, what);
  return std::make_shared<HStack<T>>(std::move(blocks), std::move(domain), std::move(offsets));
}

template <class T>
OperatorPtr<T> diag(std::span<const std::complex<T>> d, Shape shape, Context context) {
  const std::int64_t n = shape_size(shape);
  require(static_cast<std::int64_t>(d.size()) == n, ErrorCode::kShapeMismatch,
          "diag: d has " + std::to_string(d.size()) + " values; shape " + shape_string(shape) + " needs " +
              std::to_string(n));
  auto f = make_fixed(d, n, 1, context);
  return std::make_shared<Diag<T>>(std::move(f), std::move(shape), 1, context);
}

template <class T>
OperatorPtr<T> diag_expand(std::span<const std::complex<T>> d, Shape shape, std::int64_t k, Context context) {
  require(k >= 1, ErrorCode::kInvalidArgument,
          "diag_expand: the number of copies k must be >= 1, got " + std::to_string(k));
  const std::int64_t n = shape_size(shape);
  const std::int64_t total = shape_size(appended(shape, k));  // checks n·k for overflow
  require(static_cast<std::int64_t>(d.size()) == total, ErrorCode::kShapeMismatch,
          "diag_expand: d has " + std::to_string(d.size()) + " values; shape " + shape_string(appended(shape, k)) +
              " needs " + std::to_string(total));
  auto f = make_fixed(d, n, k, context);
  return std::make_shared<DiagExpand<T>>(std::move(f), shape, k, context);
}

template <class T>
OperatorPtr<T> identity(Shape shape, Context context) {
  return std::make_shared<Identity<T>>(shape, context);
}

template <class T>
OperatorPtr<T> scale(std::complex<T> alpha, OperatorPtr<T> a) {
  require_operand(a, "scale");
  return std::make_shared<Scale<T>>(alpha, std::move(a));
}

template <class T>
OperatorPtr<T> adjoint(OperatorPtr<T> a) {
  require_operand(a, "adjoint");
  // (Aᴴ)ᴴ is A itself: no view of a view.
  if (auto* v = dynamic_cast<Adjoint<T>*>(a.get())) return v->operand();
  return std::make_shared<Adjoint<T>>(std::move(a));
}

template <class T>
OperatorPtr<T> batch(OperatorPtr<T> a, std::int64_t k) {
  require_operand(a, "batch");
  require(k >= 1, ErrorCode::kInvalidArgument, "batch(" + a->name() + ", " + std::to_string(k) + "): k must be >= 1");
  if (auto b = a->batched(k)) {
    // A wrong batched form would silently mix copies: check what it promises.
    const Shape dom = appended(a->domain_shape(), k), cod = appended(a->codomain_shape(), k);
    require(b->domain_shape() == dom && b->codomain_shape() == cod && b->context().same_place(a->context()),
            ErrorCode::kInternal,
            a->name() + ".batched(" + std::to_string(k) + ") returned " + describe(*b) + " at " +
                b->context().describe() + "; expected " + shape_string(dom) + " -> " + shape_string(cod) + " at " +
                a->context().describe());
    return b;
  }
  return std::make_shared<LoopedBatch<T>>(std::move(a), Shape{k});
}

#define FIELDFT_INSTANTIATE_COMBINATORS(T)                                                                \
  template OperatorPtr<T> compose<T>(OperatorPtr<T>, OperatorPtr<T>);                                     \
  template OperatorPtr<T> sum<T>(std::vector<OperatorPtr<T>>);                                            \
  template OperatorPtr<T> vstack<T>(std::vector<OperatorPtr<T>>);                                         \
  template OperatorPtr<T> hstack<T>(std::vector<OperatorPtr<T>>);                                         \
  template OperatorPtr<T> diag<T>(std::span<const std::complex<T>>, Shape, Context);                      \
  template OperatorPtr<T> diag_expand<T>(std::span<const std::complex<T>>, Shape, std::int64_t, Context); \
  template OperatorPtr<T> identity<T>(Shape, Context);                                                    \
  template OperatorPtr<T> scale<T>(std::complex<T>, OperatorPtr<T>);                                      \
  template OperatorPtr<T> adjoint<T>(OperatorPtr<T>);                                                     \
  template OperatorPtr<T> batch<T>(OperatorPtr<T>, std::int64_t);

FIELDFT_INSTANTIATE_COMBINATORS(float)
FIELDFT_INSTANTIATE_COMBINATORS(double)
#undef FIELDFT_INSTANTIATE_COMBINATORS

}  // namespace fieldft::op
