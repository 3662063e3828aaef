// LinearOperator: the default normal operator and the combinators, on host vectors (the CUDA
// variants run in dft_gpu_test.cpp).
#include <gtest/gtest.h>

#include <complex>
#include <memory>
#include <vector>

#include "fieldft/mri/dft.hpp"
#include "support/gtest_helpers.hpp"
#include "support/measures.hpp"
#include "support/random_data.hpp"

namespace fieldft::test {
namespace {

using cf = std::complex<double>;

// y = d ⊙ x: a minimal operator with a known adjoint (conj(d) ⊙ y).
class Diagonal final : public mri::LinearOperator<double> {
 public:
  explicit Diagonal(std::vector<cf> d)
      : mri::LinearOperator<double>({static_cast<std::int64_t>(d.size())},
                                    {static_cast<std::int64_t>(d.size())}),
        d_(std::move(d)) {}
  Backend backend() const noexcept override { return Backend::kCpu; }
  void apply(const cf* x, cf* y) override {
    for (std::size_t i = 0; i < d_.size(); ++i) y[i] = d_[i] * x[i];
  }
  void apply_adjoint(const cf* y, cf* x) override {
    for (std::size_t i = 0; i < d_.size(); ++i) x[i] = std::conj(d_[i]) * y[i];
  }

 private:
  std::vector<cf> d_;
};

std::shared_ptr<mri::Dft<double>> small_dft() {
  Rng rng(5);
  std::vector<double> kx(40), ky(40), t(40), field(36);
  for (auto& v : kx) v = rng.uniform(-3, 3);
  for (auto& v : ky) v = rng.uniform(-3, 3);
  for (auto& v : t) v = rng.uniform(0, 0.01);
  for (auto& v : field) v = rng.uniform(-300, 300);
  mri::DftOptions o;
  o.backend = Backend::kCpu;
  return std::make_shared<mri::Dft<double>>(std::vector<std::int64_t>{6, 6}, kx, ky,
                                            std::span<const double>(), field, t, o);
}

TEST(LinearOperator, DefaultNormalIsAdjointOfForward) {
  auto a = small_dft();
  const auto x = random_complex<double>(36, 1);
  std::vector<cf> ax(40), ahax(36), normal(36);
  a->apply(x.data(), ax.data());
  a->apply_adjoint(ax.data(), ahax.data());
  a->apply_normal(x.data(), normal.data());
  // Same operations in the same order: identical up to nothing.
  EXPECT_LT(rel_error(normal, ahax), 1e-15);
}

TEST(LinearOperator, ComposeAndScaleFollowTheMath) {
  auto a = small_dft();
  const auto dvals = random_complex<double>(36, 2);
  auto d = std::make_shared<Diagonal>(dvals);
  const std::complex<double> alpha(0.5, -2.0);
  // (α·A)∘D: x ↦ α A(d ⊙ x), adjoint y ↦ conj(d) ⊙ (conj(α) Aᴴ y).
  auto op = mri::compose<double>(mri::scale<double>(alpha, a), d);
  EXPECT_EQ(op->domain_shape(), (mri::Shape{36}));
  EXPECT_EQ(op->codomain_shape(), (mri::Shape{40}));
  EXPECT_EQ(op->memory(), mri::Memory::kHost);
  const auto x = random_complex<double>(36, 3);
  const auto y = random_complex<double>(40, 4);
  std::vector<cf> dx(36), want(40), got(40), ahy(36), want_adj(36), got_adj(36);
  for (int i = 0; i < 36; ++i) dx[i] = dvals[i] * x[i];
  a->apply(dx.data(), want.data());
  for (auto& v : want) v *= alpha;
  op->apply(x.data(), got.data());
  EXPECT_LT(rel_error(got, want), 1e-14);
  a->apply_adjoint(y.data(), ahy.data());
  for (int i = 0; i < 36; ++i) want_adj[i] = std::conj(dvals[i]) * std::conj(alpha) * ahy[i];
  op->apply_adjoint(y.data(), got_adj.data());
  EXPECT_LT(rel_error(got_adj, want_adj), 1e-14);
  // Adjointness of the composite, as a property of the combinators.
  EXPECT_LT(adjointness_defect<double>(x, got, y, got_adj), 1e-14);
}

TEST(LinearOperator, CombinatorsRejectMismatchedOperands) {
  auto a = small_dft();
  auto d = std::make_shared<Diagonal>(std::vector<cf>(5, cf(1)));
  EXPECT_TRUE(throws_error([&] { (void)mri::compose<double>(a, d); }, ErrorCode::kShapeMismatch,
                           {"domain", "codomain"}));
  EXPECT_TRUE(throws_error([&] { (void)mri::compose<double>(a, nullptr); }, ErrorCode::kInvalidArgument, {"null"}));
}

}  // namespace
}  // namespace fieldft::test
