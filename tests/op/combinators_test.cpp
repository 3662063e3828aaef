// The operator algebra (fieldft/op/combinators.hpp) on the backend under test
// (FIELDFT_TEST_BACKEND): every combinator against the dense matrix it should equal, built by
// applying it to unit vectors; adjoint and normal against the conjugate transpose and AᴴA; the
// fast-normal forwarding of compose, vstack, scale and batch; batched forms; shape and context
// errors. Leaves are small dense test operators that compute on the host (staging device vectors
// through it, which is fine for a test and only for a test).
#include "fieldft/op/combinators.hpp"

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "fieldft/context.hpp"
#include "support/battery.hpp"
#include "support/context_vector.hpp"
#include "support/dense_matrix.hpp"

#if FIELDFT_TEST_BACKEND == 2
#include <cuda_runtime.h>
#endif

namespace fieldft::test {
namespace {

using op::OperatorPtr;
using op::Shape;

// ---------------------------------------------------------------------------------------------
// More dense-matrix helpers (Mat, random_mat, products, herm: support/dense_matrix.hpp).

Mat operator+(const Mat& x, const Mat& y) {
  Mat m = x;
  for (std::size_t i = 0; i < m.a.size(); ++i) m.a[i] += y.a[i];
  return m;
}

Mat operator*(cdouble s, const Mat& x) {
  Mat m = x;
  for (auto& v : m.a) v *= s;
  return m;
}

Mat eye(std::int64_t n) {
  Mat m(n, n);
  for (std::int64_t i = 0; i < n; ++i) m(i, i) = 1;
  return m;
}

Mat block_diag(const Mat& x, std::int64_t k) {
  Mat m(x.rows * k, x.cols * k);
  for (std::int64_t b = 0; b < k; ++b)
    for (std::int64_t j = 0; j < x.cols; ++j)
      for (std::int64_t i = 0; i < x.rows; ++i) m(b * x.rows + i, b * x.cols + j) = x(i, j);
  return m;
}

Mat stack_rows(const std::vector<Mat>& blocks) {
  std::int64_t rows = 0;
  for (const auto& b : blocks) rows += b.rows;
  Mat m(rows, blocks[0].cols);
  std::int64_t r0 = 0;
  for (const auto& b : blocks) {
    for (std::int64_t j = 0; j < b.cols; ++j)
      for (std::int64_t i = 0; i < b.rows; ++i) m(r0 + i, j) = b(i, j);
    r0 += b.rows;
  }
  return m;
}

Mat stack_cols(const std::vector<Mat>& blocks) {
  std::vector<Mat> t;
  for (const auto& b : blocks) t.push_back(herm(b));
  return herm(stack_rows(t));
}

Mat diag_mat(const std::vector<cdouble>& d) {
  Mat m(static_cast<std::int64_t>(d.size()), static_cast<std::int64_t>(d.size()));
  for (std::size_t i = 0; i < d.size(); ++i) m(static_cast<std::int64_t>(i), static_cast<std::int64_t>(i)) = d[i];
  return m;
}

// max |x - y| / max |y|.
double rel_diff(const Mat& x, const Mat& y) {
  EXPECT_EQ(x.rows, y.rows);
  EXPECT_EQ(x.cols, y.cols);
  if (x.rows != y.rows || x.cols != y.cols) return 1e300;
  double num = 0, den = 0;
  for (std::size_t i = 0; i < x.a.size(); ++i) {
    num = std::max(num, std::abs(x.a[i] - y.a[i]));
    den = std::max(den, std::abs(y.a[i]));
  }
  return den > 0 ? num / den : num;
}

template <class T>
double tol() {
  return std::is_same_v<T, float> ? 2e-5 : 1e-12;
}

// ---------------------------------------------------------------------------------------------
// A dense test operator: y = M x per stacked copy, computed on the host. Optionally with a batched
// form and with its own apply_normal (MᴴM directly), counting calls so that tests can prove which
// path a combinator took.

struct Counts {
  int apply = 0, adjoint = 0, normal = 0, batched = 0;
};

struct DenseTraits {
  bool batched_form = false;
  bool fast_normal = false;
};

template <class T>
class Dense final : public op::LinearOperator<T> {
 public:
  using Complex = std::complex<T>;
  Dense(std::string label, Mat m, Shape dom, Shape cod, Context c, DenseTraits traits, std::shared_ptr<Counts> counts,
        std::int64_t copies = 1)
      : op::LinearOperator<T>(dom, cod, std::move(c)),
        label_(std::move(label)),
        m_(std::move(m)),
        traits_(traits),
        counts_(std::move(counts)),
        copies_(copies) {}

  std::string name() const override { return label_; }
  void apply(const Complex* x, Complex* y) override {
    ++counts_->apply;
    run(m_, x, y, this->domain_size(), this->codomain_size());
  }
  void apply_adjoint(const Complex* y, Complex* x) override {
    ++counts_->adjoint;
    run(herm(m_), y, x, this->codomain_size(), this->domain_size());
  }
  void apply_normal(const Complex* x, Complex* z) override {
    if (!traits_.fast_normal) return op::LinearOperator<T>::apply_normal(x, z);
    ++counts_->normal;
    run(herm(m_) * m_, x, z, this->domain_size(), this->domain_size());
  }
  OperatorPtr<T> batched(std::int64_t k) const override {
    if (!traits_.batched_form) return nullptr;
    ++counts_->batched;
    Shape dom = this->domain_shape(), cod = this->codomain_shape();
    dom.push_back(k);
    cod.push_back(k);
    return std::make_shared<Dense>(label_ + "x" + std::to_string(k), m_, dom, cod, this->context(), traits_, counts_,
                                   copies_ * k);
  }

 private:
  void run(const Mat& m, const Complex* in, Complex* out, std::int64_t nin, std::int64_t nout) {
    const auto x = ContextVector<T>::read_from(this->context(), in, nin);
    std::vector<Complex> y(static_cast<std::size_t>(nout));
    const std::int64_t cin = m.cols, cout = m.rows;
    for (std::int64_t b = 0; b < copies_; ++b)
      for (std::int64_t i = 0; i < cout; ++i) {
        cdouble s = 0;
        for (std::int64_t j = 0; j < cin; ++j) s += m(i, j) * cdouble(x[static_cast<std::size_t>(b * cin + j)]);
        y[static_cast<std::size_t>(b * cout + i)] = Complex(s);
      }
    ContextVector<T>::write_to(this->context(), y, out);
  }

  std::string label_;
  Mat m_;
  DenseTraits traits_;
  std::shared_ptr<Counts> counts_;
  std::int64_t copies_;
};

// A dense leaf with its matrix and counts.
template <class T>
struct Leaf {
  Mat m;
  std::shared_ptr<Counts> counts = std::make_shared<Counts>();
  OperatorPtr<T> op;
};

template <class T>
Leaf<T> leaf(const std::string& label, Shape dom, Shape cod, std::uint64_t seed, DenseTraits traits = {},
             Context c = test_context()) {
  Leaf<T> l;
  l.m = random_mat(op::shape_size(cod), op::shape_size(dom), seed);
  l.op = std::make_shared<Dense<T>>(label, l.m, std::move(dom), std::move(cod), std::move(c), traits, l.counts);
  return l;
}

enum class Which { kApply, kAdjoint, kNormal };

// The matrix of A's apply, apply_adjoint or apply_normal, one unit vector at a time.
template <class T>
Mat dense_of(op::LinearOperator<T>& a, Which w) {
  const std::int64_t nin = w == Which::kAdjoint ? a.codomain_size() : a.domain_size();
  const std::int64_t nout = w == Which::kApply ? a.codomain_size() : a.domain_size();
  ContextVector<T> in(a.context(), nin), out(a.context(), nout);
  Mat m(nout, nin);
  for (std::int64_t j = 0; j < nin; ++j) {
    std::vector<std::complex<T>> e(static_cast<std::size_t>(nin));
    e[static_cast<std::size_t>(j)] = 1;
    in.upload(e);
    if (w == Which::kApply) a.apply(in.get(), out.get());
    if (w == Which::kAdjoint) a.apply_adjoint(in.get(), out.get());
    if (w == Which::kNormal) a.apply_normal(in.get(), out.get());
    const auto col = out.download();
    for (std::int64_t i = 0; i < nout; ++i) m(i, j) = cdouble(col[static_cast<std::size_t>(i)]);
  }
  return m;
}

// A equals `expected`; its adjoint is expectedᴴ and its normal expectedᴴ·expected.
template <class T>
void expect_operator(op::LinearOperator<T>& a, const Mat& expected) {
  SCOPED_TRACE(a.name());
  EXPECT_EQ(a.codomain_size(), expected.rows);
  EXPECT_EQ(a.domain_size(), expected.cols);
  EXPECT_LE(rel_diff(dense_of(a, Which::kApply), expected), tol<T>()) << "apply";
  EXPECT_LE(rel_diff(dense_of(a, Which::kAdjoint), herm(expected)), tol<T>()) << "adjoint";
  EXPECT_LE(rel_diff(dense_of(a, Which::kNormal), herm(expected) * expected), 4 * tol<T>()) << "normal";
}

template <class T>
std::vector<std::complex<T>> random_vec(std::int64_t n, std::uint64_t seed) {
  return random_complex<T>(n, seed);
}

std::vector<cdouble> to_double(const auto& v) { return std::vector<cdouble>(v.begin(), v.end()); }

template <class T>
class Combinators : public ::testing::Test {
 protected:
  void SetUp() override { FIELDFT_TEST_SKIP_UNLESS_AVAILABLE(kBackend); }
};
using Precisions = ::testing::Types<float, double>;
TYPED_TEST_SUITE(Combinators, Precisions);

// ---------------------------------------------------------------------------------------------

TYPED_TEST(Combinators, Compose) {
  using T = TypeParam;
  auto a = leaf<T>("A", {3, 2}, {5}, 1);
  auto b = leaf<T>("B", {4}, {3, 2}, 2);
  auto ab = op::compose<T>(a.op, b.op);
  EXPECT_EQ(ab->name(), "compose(A, B)");
  EXPECT_EQ(ab->domain_shape(), (Shape{4}));
  EXPECT_EQ(ab->codomain_shape(), (Shape{5}));
  EXPECT_TRUE(ab->context().same_place(a.op->context()));
  expect_operator(*ab, a.m * b.m);
}

TYPED_TEST(Combinators, ComposeForwardsTheNormal) {
  using T = TypeParam;
  auto a = leaf<T>("A", {3, 2}, {7}, 3, {.fast_normal = true});
  auto b = leaf<T>("B", {4}, {3, 2}, 4);
  auto ab = op::compose<T>(a.op, b.op);
  ContextVector<T> x(ab->context(), 4), z(ab->context(), 4);
  x.upload(random_vec<T>(4, 5));
  const Counts before = *a.counts;
  ab->apply_normal(x.get(), z.get());
  (void)z.download();
  EXPECT_EQ(a.counts->normal, before.normal + 1);  // Bᴴ(AᴴA)B with A's own normal
  EXPECT_EQ(a.counts->apply, before.apply);        // never A then Aᴴ
  EXPECT_EQ(a.counts->adjoint, before.adjoint);
  EXPECT_EQ(b.counts->apply, 1);
  EXPECT_EQ(b.counts->adjoint, 1);
  const Mat m = a.m * b.m;
  EXPECT_LE(rel_diff(dense_of(*ab, Which::kNormal), herm(m) * m), 4 * tol<T>());
}

TYPED_TEST(Combinators, Sum) {
  using T = TypeParam;
  auto a = leaf<T>("A", {2, 3}, {4}, 6), b = leaf<T>("B", {2, 3}, {4}, 7), c = leaf<T>("C", {2, 3}, {4}, 8);
  auto s = op::sum<T>({a.op, b.op, c.op});
  EXPECT_EQ(s->name(), "sum(A, B, C)");
  EXPECT_EQ(s->domain_shape(), (Shape{2, 3}));
  expect_operator(*s, a.m + b.m + c.m);
  auto one = op::sum<T>({a.op});
  expect_operator(*one, a.m);
}

TYPED_TEST(Combinators, VstackEqualCodomains) {
  using T = TypeParam;
  auto a = leaf<T>("A", {3}, {2, 2}, 9, {.fast_normal = true});
  auto b = leaf<T>("B", {3}, {2, 2}, 10, {.fast_normal = true});
  auto v = op::vstack<T>({a.op, b.op});
  EXPECT_EQ(v->name(), "vstack(A, B)");
  EXPECT_EQ(v->codomain_shape(), (Shape{2, 2, 2}));
  expect_operator(*v, stack_rows({a.m, b.m}));
  EXPECT_EQ(a.counts->normal, 3);  // Σ A_iᴴA_i, through each block's own normal
  EXPECT_EQ(b.counts->normal, 3);
}

TYPED_TEST(Combinators, VstackUnequalCodomains) {
  using T = TypeParam;
  auto a = leaf<T>("A", {3}, {2, 2}, 11), b = leaf<T>("B", {3}, {5}, 12), c = leaf<T>("C", {3}, {1}, 13);
  auto v = op::vstack<T>({a.op, b.op, c.op});
  EXPECT_EQ(v->codomain_shape(), (Shape{10}));
  expect_operator(*v, stack_rows({a.m, b.m, c.m}));
}

TYPED_TEST(Combinators, Hstack) {
  using T = TypeParam;
  auto a = leaf<T>("A", {2, 2}, {3}, 14), b = leaf<T>("B", {2, 2}, {3}, 15);
  auto h = op::hstack<T>({a.op, b.op});
  EXPECT_EQ(h->name(), "hstack(A, B)");
  EXPECT_EQ(h->domain_shape(), (Shape{2, 2, 2}));
  expect_operator(*h, stack_cols({a.m, b.m}));
  auto c = leaf<T>("C", {5}, {3}, 16);
  auto flat = op::hstack<T>({a.op, c.op});
  EXPECT_EQ(flat->domain_shape(), (Shape{9}));
  expect_operator(*flat, stack_cols({a.m, c.m}));
}

TYPED_TEST(Combinators, Diag) {
  using T = TypeParam;
  const auto d = random_vec<T>(6, 17);
  auto op = op::diag<T>(d, {3, 2}, test_context());
  EXPECT_EQ(op->name(), "diag(3x2)");
  EXPECT_EQ(op->domain_shape(), (Shape{3, 2}));
  const Mat m = diag_mat(to_double(d));
  expect_operator(*op, m);
  // Broadcast over stacked copies: the same d, one pass.
  auto b3 = op::batch<T>(op, 3);
  EXPECT_EQ(b3->domain_shape(), (Shape{3, 2, 3}));
  EXPECT_EQ(b3->name(), "diag(3x2x3)");
  expect_operator(*b3, block_diag(m, 3));
  auto b32 = op::batch<T>(b3, 2);
  EXPECT_EQ(b32->domain_shape(), (Shape{3, 2, 3, 2}));
  expect_operator(*b32, block_diag(m, 6));
}

TYPED_TEST(Combinators, DiagExpand) {
  using T = TypeParam;
  const std::int64_t n = 4, k = 3;
  const auto d = random_vec<T>(n * k, 18);
  auto op = op::diag_expand<T>(d, {2, 2}, k, test_context());
  EXPECT_EQ(op->name(), "diag_expand(2x2, 3)");
  EXPECT_EQ(op->domain_shape(), (Shape{2, 2}));
  EXPECT_EQ(op->codomain_shape(), (Shape{2, 2, 3}));
  Mat m(n * k, n);
  for (std::int64_t j = 0; j < k; ++j)
    for (std::int64_t i = 0; i < n; ++i) m(i + n * j, i) = cdouble(d[static_cast<std::size_t>(i + n * j)]);
  expect_operator(*op, m);
  auto b = op::batch<T>(op, 2);  // no batched form: applied per copy
  EXPECT_EQ(b->codomain_shape(), (Shape{2, 2, 3, 2}));
  expect_operator(*b, block_diag(m, 2));
}

TYPED_TEST(Combinators, Identity) {
  using T = TypeParam;
  auto id = op::identity<T>({2, 3}, test_context());
  EXPECT_EQ(id->name(), "identity(2x3)");
  expect_operator(*id, eye(6));
  auto b = op::batch<T>(id, 2);
  EXPECT_EQ(b->name(), "identity(2x3x2)");
  expect_operator(*b, eye(12));
}

TYPED_TEST(Combinators, Scale) {
  using T = TypeParam;
  auto a = leaf<T>("A", {3}, {4}, 19, {.fast_normal = true});
  const std::complex<T> alpha(T(0.5), T(-2));
  auto s = op::scale<T>(alpha, a.op);
  EXPECT_EQ(s->name(), "scale((0.5-2i), A)");
  expect_operator(*s, cdouble(alpha) * a.m);
  EXPECT_EQ(a.counts->normal, 3);  // |α|² AᴴA keeps A's own normal
  EXPECT_EQ(op::scale<T>(T(2), a.op)->name(), "scale(2, A)");
}

TYPED_TEST(Combinators, Adjoint) {
  using T = TypeParam;
  auto a = leaf<T>("A", {3}, {2, 2}, 20);
  auto h = op::adjoint<T>(a.op);
  EXPECT_EQ(h->name(), "adjoint(A)");
  EXPECT_EQ(h->domain_shape(), (Shape{2, 2}));
  EXPECT_EQ(h->codomain_shape(), (Shape{3}));
  expect_operator(*h, herm(a.m));
  EXPECT_EQ(op::adjoint<T>(h), a.op);  // (Aᴴ)ᴴ is A itself
}

TYPED_TEST(Combinators, BatchThroughTheBatchedForm) {
  using T = TypeParam;
  auto a = leaf<T>("A", {3}, {2}, 21, {.batched_form = true});
  auto b = op::batch<T>(a.op, 4);
  EXPECT_EQ(a.counts->batched, 1);
  EXPECT_EQ(b->name(), "Ax4");  // A's own batched form, not a loop
  EXPECT_EQ(b->domain_shape(), (Shape{3, 4}));
  EXPECT_EQ(b->codomain_shape(), (Shape{2, 4}));
  const int applies = a.counts->apply;
  ContextVector<T> x(b->context(), 12), y(b->context(), 8);
  x.upload(random_vec<T>(12, 22));
  b->apply(x.get(), y.get());
  EXPECT_EQ(a.counts->apply, applies + 1);  // one call for all four copies
  expect_operator(*b, block_diag(a.m, 4));
}

TYPED_TEST(Combinators, BatchByLooping) {
  using T = TypeParam;
  auto a = leaf<T>("A", {3}, {2}, 23, {.fast_normal = true});
  auto b = op::batch<T>(a.op, 3);
  EXPECT_EQ(b->name(), "batch(A, 3)");
  EXPECT_EQ(b->domain_shape(), (Shape{3, 3}));
  expect_operator(*b, block_diag(a.m, 3));
  EXPECT_EQ(a.counts->normal, 27);  // 9 unit vectors x 3 copies, each through A's own normal
  auto bb = op::batch<T>(b, 2);
  EXPECT_EQ(bb->domain_shape(), (Shape{3, 3, 2}));
  expect_operator(*bb, block_diag(a.m, 6));
}

TYPED_TEST(Combinators, BatchOfCompositionBatchesBoth) {
  using T = TypeParam;
  auto a = leaf<T>("A", {3}, {2}, 24, {.batched_form = true});
  auto b = leaf<T>("B", {4}, {3}, 25, {.batched_form = true});
  auto c = op::batch<T>(op::compose<T>(a.op, b.op), 2);
  EXPECT_EQ(a.counts->batched, 1);
  EXPECT_EQ(b.counts->batched, 1);
  EXPECT_EQ(c->name(), "compose(Ax2, Bx2)");
  expect_operator(*c, block_diag(a.m * b.m, 2));

  // One part without a batched form: that part alone is looped.
  auto p = leaf<T>("P", {3}, {2}, 26);
  const auto d = random_vec<T>(3, 27);
  auto mixed = op::batch<T>(op::compose<T>(p.op, op::diag<T>(d, {3}, test_context())), 2);
  EXPECT_EQ(mixed->name(), "compose(batch(P, 2), diag(3x2))");
  expect_operator(*mixed, block_diag(p.m * diag_mat(to_double(d)), 2));

  // Nothing batched anywhere: the whole composition is looped.
  auto q = leaf<T>("Q", {2}, {3}, 28);
  auto loop = op::batch<T>(op::compose<T>(p.op, q.op), 2);
  EXPECT_EQ(loop->name(), "batch(compose(P, Q), 2)");
  expect_operator(*loop, block_diag(p.m * q.m, 2));
}

TYPED_TEST(Combinators, BatchOfSumScaleAdjoint) {
  using T = TypeParam;
  auto a = leaf<T>("A", {3}, {2}, 29, {.batched_form = true});
  auto b = leaf<T>("B", {3}, {2}, 30);
  auto s = op::batch<T>(op::sum<T>({a.op, b.op}), 2);
  EXPECT_EQ(s->name(), "sum(Ax2, batch(B, 2))");
  expect_operator(*s, block_diag(a.m + b.m, 2));
  auto sc = op::batch<T>(op::scale<T>(std::complex<T>(0, 1), a.op), 3);
  EXPECT_EQ(sc->name(), "scale((0+1i), Ax3)");
  expect_operator(*sc, block_diag(cdouble(0, 1) * a.m, 3));
  auto h = op::batch<T>(op::adjoint<T>(a.op), 2);
  EXPECT_EQ(h->name(), "adjoint(Ax2)");
  expect_operator(*h, block_diag(herm(a.m), 2));
}

TYPED_TEST(Combinators, NestedAlgebra) {
  using T = TypeParam;
  // vstack(adjoint(1.5·A∘diag(d) + B), adjoint(hstack(C, D))): the combinators meeting each other.
  auto a = leaf<T>("A", {2, 2}, {3}, 31);
  auto b = leaf<T>("B", {2, 2}, {3}, 32);
  auto c = leaf<T>("C", {2}, {3}, 33), e = leaf<T>("D", {2}, {3}, 34);
  const auto d = random_vec<T>(4, 35);
  auto inner = op::sum<T>({op::scale<T>(T(1.5), op::compose<T>(a.op, op::diag<T>(d, {2, 2}, test_context()))), b.op});
  auto top = op::vstack<T>({op::adjoint<T>(inner), op::adjoint<T>(op::hstack<T>({c.op, e.op}))});
  EXPECT_EQ(top->domain_shape(), (Shape{3}));
  EXPECT_EQ(top->codomain_shape(), (Shape{2, 2, 2}));
  const Mat in = cdouble(1.5) * (a.m * diag_mat(to_double(d))) + b.m;
  expect_operator(*top, stack_rows({herm(in), herm(stack_cols({c.m, e.m}))}));
}

// ---------------------------------------------------------------------------------------------
// Errors

TYPED_TEST(Combinators, ShapesAreCheckedAsShapes) {
  using T = TypeParam;
  auto a = leaf<T>("A", {2, 3}, {6}, 35);  // domain 2x3
  auto b = leaf<T>("B", {4}, {3, 2}, 36);  // codomain 3x2: same size, another shape
  auto flat = leaf<T>("F", {4}, {6}, 37);  // codomain 6: same size, another shape
  EXPECT_TRUE(throws_error([&] { (void)op::compose<T>(a.op, b.op); }, ErrorCode::kShapeMismatch,
                           {"compose(A, B)", "2x3", "3x2"}));
  EXPECT_TRUE(
      throws_error([&] { (void)op::compose<T>(a.op, flat.op); }, ErrorCode::kShapeMismatch, {"compose(A, F)", "2x3"}));
  auto a2 = leaf<T>("A2", {3, 2}, {6}, 38);
  EXPECT_TRUE(throws_error([&] { (void)op::sum<T>({a.op, a2.op}); }, ErrorCode::kShapeMismatch, {"sum(A, A2)", "3x2"}));
  EXPECT_TRUE(throws_error([&] { (void)op::vstack<T>({a.op, a2.op}); }, ErrorCode::kShapeMismatch, {"vstack", "A2"}));
  auto c = leaf<T>("C", {6}, {2, 3}, 39), c2 = leaf<T>("C2", {6}, {6}, 40);
  EXPECT_TRUE(throws_error([&] { (void)op::hstack<T>({c.op, c2.op}); }, ErrorCode::kShapeMismatch, {"hstack", "C2"}));
  const auto d = random_vec<T>(5, 41);
  EXPECT_TRUE(throws_error(
      [&] {
        (void)op::diag<T>(d, {2, 3}, test_context());
      },
      ErrorCode::kShapeMismatch, {"diag", "5", "6"}));
  EXPECT_TRUE(throws_error([&] { (void)op::diag_expand<T>(d, {2}, 3, test_context()); }, ErrorCode::kShapeMismatch,
                           {"diag_expand", "2x3"}));
  EXPECT_TRUE(
      throws_error([&] { (void)op::diag_expand<T>(d, {5}, 0, test_context()); }, ErrorCode::kInvalidArgument, {"k"}));
  EXPECT_TRUE(throws_error([&] { (void)op::batch<T>(a.op, 0); }, ErrorCode::kInvalidArgument, {"batch"}));
  EXPECT_TRUE(throws_error([&] { (void)op::sum<T>({}); }, ErrorCode::kInvalidArgument, {"sum"}));
  EXPECT_TRUE(throws_error([&] { (void)op::compose<T>(a.op, nullptr); }, ErrorCode::kInvalidArgument, {"null"}));
  EXPECT_TRUE(throws_error(
      [&] {
        (void)op::identity<T>({2, -1}, test_context());
      },
      ErrorCode::kInvalidArgument, {"negative"}));
  EXPECT_TRUE(throws_error(
      [] {
        op::require_shape({64, 64}, {4096}, "image");
      },
      ErrorCode::kShapeMismatch, {"image", "64x64", "4096"}));
}

// A second place for the context checks: another stream on the device, or the device when the
// host is under test and a device is present.
std::optional<Context> other_place() {
  if (kBackend == Backend::kCuda) return Context::cuda(0);
  if (backend_unavailable_reason(Backend::kCuda).empty()) return Context::cuda(0);
  return std::nullopt;
}

TYPED_TEST(Combinators, ContextsMustMatch) {
  using T = TypeParam;
  const auto other = other_place();
  if (!other) GTEST_SKIP() << "a second place needs a CUDA device";
  auto a = leaf<T>("A", {3}, {3}, 42);
  auto b = leaf<T>("B", {3}, {3}, 43, {}, *other);
  ASSERT_FALSE(a.op->context().same_place(b.op->context()));
  const auto place = b.op->context().describe();
  EXPECT_TRUE(
      throws_error([&] { (void)op::compose<T>(a.op, b.op); }, ErrorCode::kContextMismatch, {"compose(A, B)", place}));
  EXPECT_TRUE(throws_error([&] { (void)op::sum<T>({a.op, b.op}); }, ErrorCode::kContextMismatch, {"sum(A, B)"}));
  EXPECT_TRUE(throws_error([&] { (void)op::vstack<T>({a.op, b.op}); }, ErrorCode::kContextMismatch, {"vstack"}));
  EXPECT_TRUE(throws_error([&] { (void)op::hstack<T>({b.op, a.op}); }, ErrorCode::kContextMismatch, {"hstack"}));
}

#if FIELDFT_TEST_BACKEND == 2

// On a device, apply only enqueues: with the stream held back by a host callback that waits for
// a flag, every call must still return. A watchdog releases the flag so that a call that does
// synchronise fails the test instead of hanging it.
TYPED_TEST(Combinators, DeviceApplyReturnsBeforeTheWork) {
  using T = TypeParam;
  const Context c = test_context();
  const std::int64_t n = 1 << 12;
  const auto d = random_vec<T>(n, 44);
  auto dg = op::diag<T>(d, {n}, c);
  auto chain = op::compose<T>(op::scale<T>(T(2), dg), op::compose<T>(op::identity<T>({n}, c), dg));
  auto stacked = op::batch<T>(chain, 2);
  auto expand = op::diag_expand<T>(random_vec<T>(2 * n, 45), {n}, 2, c);
  auto both = op::vstack<T>({dg, dg});
  ContextVector<T> x(c, 2 * n), y(c, 2 * n), z(c, 2 * n);
  x.upload(random_vec<T>(2 * n, 46));
  // One pass first: CUDA loads modules lazily (CUDA_MODULE_LOADING=LAZY, the default since 12.2),
  // and the first launch of a kernel may wait for the whole context -- a once-per-process cost of
  // the runtime, not a synchronisation of fieldft's. The scratch memory is allocated here too.
  // The contract under test is the steady state of an iterative solver.
  const auto all_calls = [&] {
    chain->apply(x.get(), y.get());
    chain->apply_adjoint(y.get(), z.get());
    chain->apply_normal(x.get(), z.get());
    stacked->apply(x.get(), y.get());
    stacked->apply_normal(x.get(), z.get());
    expand->apply(x.get(), y.get());
    expand->apply_adjoint(y.get(), z.get());
    both->apply(x.get(), y.get());
    both->apply_adjoint(y.get(), z.get());
    both->apply_normal(x.get(), z.get());
  };
  all_calls();
  c.synchronize();

  std::atomic<bool> release{false};
  auto wait = [](void* flag) {
    while (!static_cast<std::atomic<bool>*>(flag)->load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  };
  ASSERT_EQ(cudaLaunchHostFunc(static_cast<cudaStream_t>(c.stream()), wait, &release), cudaSuccess);
  std::thread watchdog([&release] {
    for (int i = 0; i < 20000 && !release.load(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    release = true;
  });
  all_calls();
  const bool returned_first = !release.load();
  release = true;
  watchdog.join();
  c.synchronize();
  EXPECT_TRUE(returned_first) << "an apply path waited for the stream";
  // And the work, once done, is right: the last call left z = 2|d|² ∘ x.
  const auto xs = x.download(), zs = z.download();
  double err = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const auto k = static_cast<std::size_t>(i);
    err = std::max(err, std::abs(cdouble(zs[k]) - 2.0 * std::norm(cdouble(d[k])) * cdouble(xs[k])));
  }
  EXPECT_LE(err, 10 * tol<T>());
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

#endif  // FIELDFT_TEST_BACKEND == 2

}  // namespace
}  // namespace fieldft::test
