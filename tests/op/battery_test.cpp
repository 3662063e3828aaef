// The generic operator battery (support/operator_battery.hpp) on every combinator of
// fieldft/op/combinators.hpp, small shapes, float and double, on the backend under test.
//
// The leaves are diag / diag_expand / identity and a dense matrix operator written here. Unlike
// the dense test operator of combinators_test.cpp (which computes on the host and synchronises),
// this one is a proper device operator: every output element is one VectorOps::dot_to on the
// operator's context, so its calls are stream-ordered and never touch the host, and the
// battery's StreamOrder and TwoInstances checks hold for it and for everything built from it.
#include <complex>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "fieldft/op/combinators.hpp"
#include "fieldft/op/vector_ops.hpp"
#include "support/operator_battery.hpp"

namespace fieldft::test {
namespace {

using op::OperatorPtr;
using op::Shape;

// y = M x for a random dense M (entries with real and imaginary parts in [-1, 1)), x in `dom`
// shape, y in `cod` shape. apply: y_i = Σ_j M_ij x_j = dot(conj(row i), x); adjoint:
// x_j = Σ_i conj(M_ij) y_i = dot(column j, y). Reductions accumulate in double (VectorOps).
template <class T>
class DenseMatrix final : public op::LinearOperator<T> {
 public:
  using Complex = std::complex<T>;
  DenseMatrix(std::string label, Shape dom, Shape cod, std::uint64_t seed, Context c)
      : op::LinearOperator<T>(dom, cod, c),
        label_(std::move(label)),
        rows_(op::shape_size(cod)),
        cols_(op::shape_size(dom)),
        ops_(c),
        conj_rows_(c, rows_ * cols_),
        columns_(c, rows_ * cols_) {
    const auto m = random_complex<T>(rows_ * cols_, seed);  // column-major: M_ij = m[i + rows·j]
    std::vector<Complex> r(m.size());
    for (std::int64_t i = 0; i < rows_; ++i)
      for (std::int64_t j = 0; j < cols_; ++j)
        r[static_cast<std::size_t>(j + cols_ * i)] = std::conj(m[static_cast<std::size_t>(i + rows_ * j)]);
    columns_.upload(m);
    conj_rows_.upload(r);
  }

  std::string name() const override { return label_; }
  void apply(const Complex* x, Complex* y) override {
    for (std::int64_t i = 0; i < rows_; ++i) ops_.dot_to(cols_, conj_rows_.get() + i * cols_, x, y + i);
  }
  void apply_adjoint(const Complex* y, Complex* x) override {
    for (std::int64_t j = 0; j < cols_; ++j) ops_.dot_to(rows_, columns_.get() + j * rows_, y, x + j);
  }

 private:
  std::string label_;
  std::int64_t rows_, cols_;
  op::VectorOps<T> ops_;
  ContextVector<T> conj_rows_, columns_;
};

template <class T>
OperatorPtr<T> dense(const std::string& label, Shape dom, Shape cod, std::uint64_t seed, const Context& c) {
  return std::make_shared<DenseMatrix<T>>(label, std::move(dom), std::move(cod), seed, c);
}

template <class T>
OperatorPtr<T> diagonal(Shape shape, std::uint64_t seed, const Context& c) {
  const auto d = random_complex<T>(op::shape_size(shape), seed);
  return op::diag<T>(d, std::move(shape), c);
}

template <class T>
OperatorPtr<T> expand(Shape shape, std::int64_t k, std::uint64_t seed, const Context& c) {
  const auto d = random_complex<T>(op::shape_size(shape) * k, seed);
  return op::diag_expand<T>(d, std::move(shape), k, c);
}

template <class T>
bool register_combinators(const std::string& p) {
  auto reg = [&p](const std::string& name, OperatorFactory<T> f) {
    register_operator_battery<T>(name + p, std::move(f), {}, __FILE__, __LINE__);
  };
  reg("Dense", [](const Context& c) { return dense<T>("M", {3, 4}, {5, 2}, 101, c); });
  reg("ComposeDenseDiag", [](const Context& c) {
    return op::compose<T>(dense<T>("M", {4, 3}, {7}, 102, c), diagonal<T>({4, 3}, 103, c));
  });
  reg("ComposeDiagDense", [](const Context& c) {
    return op::compose<T>(diagonal<T>({2, 3}, 104, c), dense<T>("M", {5}, {2, 3}, 105, c));
  });
  reg("Sum", [](const Context& c) {
    return op::sum<T>({dense<T>("A", {3, 2}, {4}, 106, c), dense<T>("B", {3, 2}, {4}, 107, c),
                       op::compose<T>(dense<T>("C", {3, 2}, {4}, 108, c), op::identity<T>({3, 2}, c))});
  });
  reg("SumOfOne", [](const Context& c) { return op::sum<T>({dense<T>("A", {3}, {4}, 109, c)}); });
  reg("VstackEqualCodomains", [](const Context& c) {
    return op::vstack<T>({dense<T>("A", {5}, {2, 2}, 110, c), dense<T>("B", {5}, {2, 2}, 111, c)});
  });
  reg("VstackUnequalCodomains", [](const Context& c) {
    return op::vstack<T>({dense<T>("A", {2, 2}, {3}, 112, c), diagonal<T>({2, 2}, 113, c),
                          dense<T>("B", {2, 2}, {1}, 114, c)});
  });
  reg("HstackEqualDomains", [](const Context& c) {
    return op::hstack<T>({dense<T>("A", {2, 3}, {4}, 115, c), dense<T>("B", {2, 3}, {4}, 116, c)});
  });
  reg("HstackUnequalDomains", [](const Context& c) {
    return op::hstack<T>({dense<T>("A", {3}, {2, 2}, 117, c), diagonal<T>({2, 2}, 118, c)});
  });
  reg("Diag", [](const Context& c) { return diagonal<T>({4, 3}, 119, c); });
  reg("Diag3D", [](const Context& c) { return diagonal<T>({3, 2, 2}, 120, c); });
  reg("DiagExpand", [](const Context& c) { return expand<T>({3, 2}, 3, 121, c); });
  reg("Identity", [](const Context& c) { return op::identity<T>({3, 4}, c); });
  reg("Scale", [](const Context& c) {
    return op::scale<T>(std::complex<T>(T(0.5), T(-2)), dense<T>("A", {4}, {3, 2}, 122, c));
  });
  reg("ScaleOfDiag", [](const Context& c) { return op::scale<T>(T(-3), diagonal<T>({5}, 123, c)); });
  reg("Adjoint", [](const Context& c) { return op::adjoint<T>(dense<T>("A", {3, 2}, {7}, 124, c)); });
  reg("AdjointOfCompose", [](const Context& c) {
    return op::adjoint<T>(op::compose<T>(dense<T>("A", {2, 2}, {6}, 125, c), diagonal<T>({2, 2}, 126, c)));
  });
  reg("BatchOfDiag", [](const Context& c) { return op::batch<T>(diagonal<T>({3, 2}, 127, c), 3); });
  reg("BatchOfDense", [](const Context& c) { return op::batch<T>(dense<T>("A", {3}, {2, 2}, 128, c), 3); });
  reg("BatchOfCompose", [](const Context& c) {
    return op::batch<T>(op::compose<T>(dense<T>("A", {2, 2}, {5}, 129, c), diagonal<T>({2, 2}, 130, c)), 2);
  });
  reg("BatchOfBatch", [](const Context& c) {
    return op::batch<T>(op::batch<T>(op::scale<T>(T(2), diagonal<T>({4}, 131, c)), 2), 3);
  });
  reg("BatchOfIdentity", [](const Context& c) { return op::batch<T>(op::identity<T>({2, 3}, c), 2); });
  // Coil-like: one image expanded to K weighted copies, each through the same dense map.
  reg("SenseLike", [](const Context& c) {
    return op::compose<T>(op::batch<T>(dense<T>("E", {3, 2}, {5}, 132, c), 3), expand<T>({3, 2}, 3, 133, c));
  });
  reg("Nested", [](const Context& c) {
    auto inner = op::sum<T>({op::scale<T>(T(1.5), op::compose<T>(dense<T>("A", {2, 2}, {3}, 134, c),
                                                                  diagonal<T>({2, 2}, 135, c))),
                             dense<T>("B", {2, 2}, {3}, 136, c)});
    return op::vstack<T>({op::adjoint<T>(inner),
                          op::adjoint<T>(op::hstack<T>({dense<T>("C", {2}, {3}, 137, c),
                                                        dense<T>("D", {2}, {3}, 138, c)}))});
  });
  return true;
}

[[maybe_unused]] const bool registered = register_combinators<float>("Float") && register_combinators<double>("Double");

}  // namespace
}  // namespace fieldft::test
