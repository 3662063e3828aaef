// The sparsifying operators (fieldft/op/sparsify.hpp) on the backend under test
// (FIELDFT_TEST_BACKEND): both registered in the generic operator battery in 1D/2D/3D with odd
// and even extents; finite differences against a direct loop (both boundaries, axis subsets),
// constants in their null space; the wavelet against an independent line-by-line reference,
// orthonormal, Haar sparsity of a piecewise-constant image, D4 annihilating ramps; the filters'
// defining conditions; batched forms equal to separate applies; bad input.
#include "fieldft/op/sparsify.hpp"

#include <cmath>
#include <complex>
#include <cstdint>
#include <string>
#include <vector>

#include "fieldft/context.hpp"
#include "support/battery.hpp"
#include "support/context_vector.hpp"
#include "support/operator_battery.hpp"

namespace fieldft::test {
namespace {

using op::Boundary;
using op::OperatorPtr;
using op::Shape;
using op::Wavelet;

// ---------------------------------------------------------------------------------------------
// The battery: linearity, adjointness, normal = AᴴA (FD: the one-pass Laplacian; wavelet: the
// identity), shapes, two instances, and on the GPU parity with the host and stream order.

template <class T>
bool register_sparsify(const std::string& p) {
  auto reg = [&p](const std::string& name, OperatorFactory<T> f) {
    register_operator_battery<T>("Sparsify" + name + p, std::move(f), {}, __FILE__, __LINE__);
  };
  reg("Diff1DPeriodic", [](const Context& c) { return op::finite_difference<T>({7}, c); });
  reg("Diff1DNeumann", [](const Context& c) { return op::finite_difference<T>({8}, c, Boundary::kNeumann); });
  reg("Diff2DPeriodic", [](const Context& c) { return op::finite_difference<T>({6, 5}, c); });
  reg("Diff2DNeumann", [](const Context& c) { return op::finite_difference<T>({5, 4}, c, Boundary::kNeumann); });
  reg("Diff3DPeriodic", [](const Context& c) { return op::finite_difference<T>({4, 3, 5}, c); });
  reg("Diff3DNeumannAxes20",
      [](const Context& c) { return op::finite_difference<T>({3, 4, 2}, {2, 0}, c, Boundary::kNeumann); });
  reg("Diff3DOneAxis", [](const Context& c) { return op::finite_difference<T>({3, 4, 5}, {1}, c); });
  reg("DiffUnitExtent", [](const Context& c) { return op::finite_difference<T>({5, 1}, c); });
  reg("DiffBatched", [](const Context& c) { return op::batch<T>(op::finite_difference<T>({4, 3}, c), 3); });
  reg("DiffBatchedNeumann", [](const Context& c) {
    return op::batch<T>(op::finite_difference<T>({3, 5}, {1}, c, Boundary::kNeumann), 2);
  });
  reg("Haar1D", [](const Context& c) { return op::wavelet<T>({16}, 3, c, Wavelet::kHaar); });
  reg("Haar2DOdd", [](const Context& c) { return op::wavelet<T>({8, 6}, 3, c, Wavelet::kHaar); });
  reg("Haar3D", [](const Context& c) { return op::wavelet<T>({4, 4, 2}, 2, c, Wavelet::kHaar); });
  reg("D4_1D", [](const Context& c) { return op::wavelet<T>({12}, 2, c, Wavelet::kDaubechies4); });
  reg("D4_2D", [](const Context& c) { return op::wavelet<T>({8, 8}, 3, c, Wavelet::kDaubechies4); });
  reg("D4_2DOdd", [](const Context& c) { return op::wavelet<T>({5, 8}, 2, c, Wavelet::kDaubechies4); });
  reg("D4_3D", [](const Context& c) { return op::wavelet<T>({6, 4, 8}, 2, c, Wavelet::kDaubechies4); });
  reg("WaveletBatched", [](const Context& c) {
    return op::batch<T>(op::wavelet<T>({8, 4}, 2, c, Wavelet::kDaubechies4), 2);
  });
  return true;
}

[[maybe_unused]] const bool registered = register_sparsify<float>("Float") && register_sparsify<double>("Double");

// ---------------------------------------------------------------------------------------------
// Helpers.

template <class T>
using Cvec = std::vector<std::complex<T>>;

// y = A x (or Aᴴx, or AᴴAx) on the operator's context, returned on the host.
enum class Call { kApply, kAdjoint, kNormal };

template <class T>
Cvec<T> call(op::LinearOperator<T>& a, const Cvec<T>& x, Call which = Call::kApply) {
  const bool adj = which == Call::kAdjoint;
  const std::int64_t nin = adj ? a.codomain_size() : a.domain_size();
  const std::int64_t nout = which == Call::kApply ? a.codomain_size() : a.domain_size();
  ContextVector<T> in(a.context(), nin), out(a.context(), nout);
  in.upload(x);
  if (which == Call::kApply)
    a.apply(in.get(), out.get());
  else if (adj)
    a.apply_adjoint(in.get(), out.get());
  else
    a.apply_normal(in.get(), out.get());
  return out.download();
}

template <class T>
double l2(const Cvec<T>& v) {
  double s = 0;
  for (auto z : v) s += std::norm(std::complex<double>(z));
  return std::sqrt(s);
}

template <class T>
double max_abs(const Cvec<T>& v) {
  double m = 0;
  for (auto z : v) m = std::max(m, std::abs(std::complex<double>(z)));
  return m;
}

// ‖got − want‖ / ‖want‖.
template <class T, class U>
double rel(const Cvec<T>& got, const std::vector<std::complex<U>>& want) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    num += std::norm(std::complex<double>(got[i]) - std::complex<double>(want[i]));
    den += std::norm(std::complex<double>(want[i]));
  }
  return std::sqrt(num / den);
}

// Rounding of T for operators of a few taps and levels: a few ulps of the data's scale.
template <class T>
double tol() {
  return std::is_same_v<T, float> ? 2e-6 : 1e-14;
}

std::vector<std::int64_t> strides_of(const Shape& s) {
  std::vector<std::int64_t> st(s.size());
  std::int64_t n = 1;
  for (std::size_t d = 0; d < s.size(); ++d) {
    st[d] = n;
    n *= s[d];
  }
  return st;
}

// Coordinates of flat index i in shape s (x fastest).
std::vector<std::int64_t> coords(std::int64_t i, const Shape& s) {
  std::vector<std::int64_t> c(s.size());
  for (std::size_t d = 0; d < s.size(); ++d) {
    c[d] = i % s[d];
    i /= s[d];
  }
  return c;
}

template <class T>
class Sparsify : public ::testing::Test {
 protected:
  void SetUp() override { FIELDFT_TEST_SKIP_UNLESS_AVAILABLE(kBackend); }
};
using Precisions = ::testing::Types<float, double>;
TYPED_TEST_SUITE(Sparsify, Precisions);

// ---------------------------------------------------------------------------------------------
// Finite differences.

// The definition, written as a loop over coordinates: (Dx)_{i,a} = x_{i+e} − x_i, the last index
// wrapping (periodic) or giving 0 (Neumann).
template <class T>
std::vector<std::complex<double>> reference_diff(const Cvec<T>& x, const Shape& s, const std::vector<int>& axes,
                                                 Boundary b) {
  const std::int64_t n = op::shape_size(s);
  const auto st = strides_of(s);
  std::vector<std::complex<double>> y(static_cast<std::size_t>(n) * axes.size());
  for (std::int64_t i = 0; i < n; ++i) {
    const auto c = coords(i, s);
    for (std::size_t a = 0; a < axes.size(); ++a) {
      const auto d = static_cast<std::size_t>(axes[a]);
      std::complex<double> v = 0;
      if (c[d] + 1 < s[d])
        v = std::complex<double>(x[static_cast<std::size_t>(i + st[d])]) - std::complex<double>(x[i]);
      else if (b == Boundary::kPeriodic)
        v = std::complex<double>(x[static_cast<std::size_t>(i - c[d] * st[d])]) - std::complex<double>(x[i]);
      y[static_cast<std::size_t>(i) + static_cast<std::size_t>(n) * a] = v;
    }
  }
  return y;
}

TYPED_TEST(Sparsify, DifferencesMatchTheDefinition) {
  using T = TypeParam;
  struct Case {
    Shape shape;
    std::vector<int> axes;
    Boundary b;
  };
  const std::vector<Case> cases = {{{9}, {0}, Boundary::kPeriodic},
                                   {{9}, {0}, Boundary::kNeumann},
                                   {{6, 7}, {0, 1}, Boundary::kPeriodic},
                                   {{6, 7}, {1, 0}, Boundary::kNeumann},
                                   {{4, 5, 3}, {0, 1, 2}, Boundary::kPeriodic},
                                   {{4, 5, 3}, {2}, Boundary::kNeumann},
                                   {{4, 1, 3}, {1, 2}, Boundary::kPeriodic}};
  for (const auto& k : cases) {
    auto d = op::finite_difference<T>(k.shape, k.axes, test_context(), k.b);
    SCOPED_TRACE(d->name());
    Shape cod = k.shape;
    cod.push_back(static_cast<std::int64_t>(k.axes.size()));
    EXPECT_EQ(d->domain_shape(), k.shape);
    EXPECT_EQ(d->codomain_shape(), cod);
    const auto x = random_complex<T>(d->domain_size(), 11);
    // Differences of values of T are exact up to one rounding of T.
    EXPECT_LE(rel(call(*d, x), reference_diff(x, k.shape, k.axes, k.b)), tol<T>());
  }
}

TYPED_TEST(Sparsify, DifferencesOfAConstantVanish) {
  using T = TypeParam;
  for (Boundary b : {Boundary::kPeriodic, Boundary::kNeumann}) {
    auto d = op::finite_difference<T>({6, 5, 4}, test_context(), b);
    SCOPED_TRACE(d->name());
    const Cvec<T> x(static_cast<std::size_t>(d->domain_size()), std::complex<T>(T(2.5), T(-1.25)));
    // x_{i+e} − x_i of equal values is exactly 0, and so is the Laplacian of a constant.
    EXPECT_EQ(max_abs(call(*d, x)), 0.0);
    EXPECT_EQ(max_abs(call(*d, x, Call::kNormal)), 0.0);
  }
}

TYPED_TEST(Sparsify, DifferenceNormalIsTheLaplacian) {
  using T = TypeParam;
  // 1D, periodic: z_i = 2x_i − x_{i+1} − x_{i−1}; Neumann: the ends have one neighbour.
  const std::int64_t n = 7;
  const auto x = random_complex<T>(n, 12);
  for (Boundary b : {Boundary::kPeriodic, Boundary::kNeumann}) {
    auto d = op::finite_difference<T>({n}, test_context(), b);
    std::vector<std::complex<double>> want(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) {
      const std::complex<double> xi(x[static_cast<std::size_t>(i)]);
      const bool periodic = b == Boundary::kPeriodic;
      if (i + 1 < n || periodic) want[i] += xi - std::complex<double>(x[static_cast<std::size_t>((i + 1) % n)]);
      if (i > 0 || periodic) want[i] += xi - std::complex<double>(x[static_cast<std::size_t>((i + n - 1) % n)]);
    }
    EXPECT_LE(rel(call(*d, x, Call::kNormal), want), 4 * tol<T>()) << d->name();
  }
}

// ---------------------------------------------------------------------------------------------
// Wavelets.

TEST(SparsifyFilters, SatisfyTheirDefiningConditions) {
  for (Wavelet w : {Wavelet::kHaar, Wavelet::kDaubechies4}) {
    SCOPED_TRACE(op::wavelet_name(w));
    const auto h = op::wavelet_lowpass(w);
    const int taps = static_cast<int>(h.size());
    double sum = 0;
    for (double v : h) sum += v;
    EXPECT_NEAR(sum, std::sqrt(2.0), 1e-15);
    // Orthonormal to its own even shifts.
    for (int m = 0; 2 * m < taps; ++m) {
      double s = 0;
      for (int k = 0; k + 2 * m < taps; ++k) s += h[static_cast<std::size_t>(k)] * h[static_cast<std::size_t>(k + 2 * m)];
      EXPECT_NEAR(s, m == 0 ? 1.0 : 0.0, 1e-15) << "shift " << 2 * m;
    }
    // taps/2 vanishing moments: Σ (−1)^k k^p h_k = 0 for p < taps/2.
    for (int p = 0; p < taps / 2; ++p) {
      double s = 0;
      for (int k = 0; k < taps; ++k) s += (k % 2 ? -1.0 : 1.0) * std::pow(double(k), p) * h[static_cast<std::size_t>(k)];
      EXPECT_NEAR(s, 0.0, 1e-14) << "moment " << p;
    }
  }
}

// The transform written independently: for each level, each even axis of the block, each line
// of the block along it, the periodized filter bank on a copy of the line.
std::vector<std::complex<double>> reference_wavelet(std::vector<std::complex<double>> x, const Shape& s, int levels,
                                                    Wavelet w) {
  const auto h = op::wavelet_lowpass(w);
  const std::size_t taps = h.size();
  const auto st = strides_of(s);
  Shape block = s;
  for (int l = 0; l < levels; ++l) {
    for (std::size_t d = 0; d < s.size(); ++d) {
      const std::int64_t m = block[d];
      if (m % 2) continue;
      Shape others = block;
      others[d] = 1;
      for (std::int64_t o = 0; o < op::shape_size(others); ++o) {
        const auto c = coords(o, others);
        std::int64_t base = 0;
        for (std::size_t e = 0; e < s.size(); ++e) base += c[e] * st[e];
        std::vector<std::complex<double>> line(static_cast<std::size_t>(m)), out(line.size());
        for (std::int64_t i = 0; i < m; ++i) line[i] = x[static_cast<std::size_t>(base + i * st[d])];
        for (std::int64_t j = 0; j < m / 2; ++j)
          for (std::size_t k = 0; k < taps; ++k) {
            const auto v = line[static_cast<std::size_t>((2 * j + static_cast<std::int64_t>(k)) % m)];
            out[j] += h[k] * v;
            out[m / 2 + j] += ((k % 2) ? -1.0 : 1.0) * h[taps - 1 - k] * v;
          }
        for (std::int64_t i = 0; i < m; ++i) x[static_cast<std::size_t>(base + i * st[d])] = out[i];
      }
    }
    for (auto& e : block)
      if (e % 2 == 0) e /= 2;
  }
  return x;
}

TYPED_TEST(Sparsify, WaveletMatchesALineByLineReference) {
  using T = TypeParam;
  struct Case {
    Shape shape;
    int levels;
    Wavelet w;
  };
  const std::vector<Case> cases = {{{32}, 4, Wavelet::kHaar},          {{12}, 2, Wavelet::kDaubechies4},
                                   {{16, 12}, 3, Wavelet::kHaar},      {{16, 12}, 4, Wavelet::kDaubechies4},
                                   {{7, 8}, 3, Wavelet::kDaubechies4}, {{8, 4, 6}, 2, Wavelet::kDaubechies4},
                                   {{2, 6, 1}, 1, Wavelet::kHaar},     {{10, 10, 10}, 1, Wavelet::kDaubechies4}};
  for (const auto& k : cases) {
    auto w = op::wavelet<T>(k.shape, k.levels, test_context(), k.w);
    SCOPED_TRACE(w->name());
    EXPECT_EQ(w->domain_shape(), k.shape);
    EXPECT_EQ(w->codomain_shape(), k.shape);
    const auto x = random_complex<T>(w->domain_size(), 13);
    const auto want = reference_wavelet(std::vector<std::complex<double>>(x.begin(), x.end()), k.shape, k.levels, k.w);
    // A few rounded multiply-adds per level and axis.
    EXPECT_LE(rel(call(*w, x), want), 8 * tol<T>());
  }
}

TYPED_TEST(Sparsify, HaarOfOneLevelIsSumsAndDifferences) {
  using T = TypeParam;
  auto w = op::wavelet<T>({6}, 1, test_context(), Wavelet::kHaar);
  const auto x = random_complex<T>(6, 14);
  const auto y = call(*w, x);
  const double r = 1 / std::sqrt(2.0);
  for (std::size_t j = 0; j < 3; ++j) {
    const std::complex<double> a(x[2 * j]), b(x[2 * j + 1]);
    EXPECT_LE(std::abs(std::complex<double>(y[j]) - r * (a + b)), 4 * tol<T>()) << j;
    EXPECT_LE(std::abs(std::complex<double>(y[3 + j]) - r * (a - b)), 4 * tol<T>()) << j;
  }
}

TYPED_TEST(Sparsify, WaveletIsOrthonormal) {
  using T = TypeParam;
  struct Case {
    Shape shape;
    int levels;
    Wavelet w;
  };
  const std::vector<Case> cases = {{{64}, 6, Wavelet::kHaar},           {{64}, 6, Wavelet::kDaubechies4},
                                   {{24, 20}, 2, Wavelet::kDaubechies4}, {{9, 16}, 4, Wavelet::kDaubechies4},
                                   {{8, 12, 6}, 3, Wavelet::kHaar},      {{8, 12, 6}, 3, Wavelet::kDaubechies4}};
  for (const auto& k : cases) {
    auto w = op::wavelet<T>(k.shape, k.levels, test_context(), k.w);
    SCOPED_TRACE(w->name());
    const auto x = random_complex<T>(w->domain_size(), 15);
    const auto y = call(*w, x);
    // ‖Wx‖ = ‖x‖ and WᴴWx = x to rounding (the transform and its inverse, each orthonormal).
    EXPECT_NEAR(l2(y) / l2(x), 1.0, 8 * tol<T>());
    EXPECT_LE(rel(call(*w, y, Call::kAdjoint), x), 16 * tol<T>());
    EXPECT_LE(rel(call(*w, x, Call::kNormal), x), 0.0);  // a copy
    // Orthogonal: also W Wᴴ = I.
    EXPECT_LE(rel(call(*w, call(*w, x, Call::kAdjoint)), x), 16 * tol<T>());
  }
}

TYPED_TEST(Sparsify, HaarMakesPiecewiseConstantImagesSparse) {
  using T = TypeParam;
  const Shape s{64, 64};
  const int levels = 3;
  // Two overlapping rectangles at positions that no dyadic grid aligns with.
  Cvec<T> x(64 * 64, std::complex<T>(1));
  for (int iy = 13; iy < 41; ++iy)
    for (int ix = 22; ix < 52; ++ix) x[static_cast<std::size_t>(ix + 64 * iy)] += std::complex<T>(2, 1);
  for (int iy = 30; iy < 59; ++iy)
    for (int ix = 5; ix < 29; ++ix) x[static_cast<std::size_t>(ix + 64 * iy)] *= T(-1.5);
  // Haar detail coefficients of level ℓ come from 2^ℓ x 2^ℓ pixel blocks and vanish on blocks
  // where the image is constant: at most 3 per non-constant block, plus the 8x8 approximation.
  std::int64_t bound = (64 >> levels) * (64 >> levels);
  for (int l = 1; l <= levels; ++l) {
    const int b = 1 << l;
    for (int by = 0; by < 64; by += b)
      for (int bx = 0; bx < 64; bx += b) {
        bool constant = true;
        for (int iy = by; iy < by + b; ++iy)
          for (int ix = bx; ix < bx + b; ++ix) constant = constant && x[ix + 64 * iy] == x[bx + 64 * by];
        if (!constant) bound += 3;
      }
  }
  auto w = op::wavelet<T>(s, levels, test_context(), Wavelet::kHaar);
  const auto y = call(*w, x);
  // "Nonzero": above rounding of T at the image's scale (a device may fuse a·h − a·h into an FMA
  // that leaves the rounding error of a·h instead of an exact 0).
  const double thresh = 16 * tol<T>() * max_abs(x);
  std::int64_t nonzero = 0;
  for (auto v : y) nonzero += std::abs(std::complex<double>(v)) > thresh;
  EXPECT_LE(nonzero, bound);
  EXPECT_LT(bound, 64 * 64 / 4) << "the bound itself should show sparsity";
  EXPECT_GT(nonzero, 64) << "the edges must show up in the details";
}

// Detail coefficients of a linear ramp under D4 vanish wherever the filter's support does not
// cross the periodic wrap of the level's input, or meet samples an earlier wrap contaminated.
TYPED_TEST(Sparsify, Daubechies4AnnihilatesRampsAwayFromTheWrap) {
  using T = TypeParam;
  struct Case {
    Shape shape;
    int levels;
  };
  const std::vector<Case> cases = {{{64}, 4}, {{32, 24}, 2}, {{16, 12, 20}, 2}};
  for (const auto& k : cases) {
    auto w = op::wavelet<T>(k.shape, k.levels, test_context(), Wavelet::kDaubechies4);
    SCOPED_TRACE(w->name());
    const std::int64_t n = w->domain_size();
    const auto st = strides_of(k.shape);
    Cvec<T> x(static_cast<std::size_t>(n));
    const double slope[3] = {0.5, -0.25, 0.125};
    for (std::int64_t i = 0; i < n; ++i) {
      const auto c = coords(i, k.shape);
      double v = 1;
      for (std::size_t d = 0; d < c.size(); ++d) v += slope[d] * static_cast<double>(c[d]);
      x[static_cast<std::size_t>(i)] = std::complex<T>(T(v), T(-2 * v));
    }
    const auto y = call(*w, x);
    // Per axis: the block extent and how many trailing samples of the level's input carry a
    // wrap (0 at level 1; then those approximations whose support wrapped or was contaminated).
    Shape block = k.shape;
    std::vector<std::int64_t> dirty(k.shape.size(), 0);
    std::int64_t checked = 0;
    for (int l = 0; l < k.levels; ++l) {
      // A coefficient of the level's block is a clean detail when it is high-pass along some
      // axis d, with 2j + 3 < m_d − dirty_d there (the ramp is linear along d on its support, and
      // other axes' filters preserve that).
      for (std::int64_t i = 0; i < n; ++i) {
        const auto c = coords(i, k.shape);
        bool inside = true;
        for (std::size_t d = 0; d < c.size(); ++d) inside = inside && c[d] < block[d];
        if (!inside) continue;
        for (std::size_t d = 0; d < c.size(); ++d) {
          const std::int64_t m = block[d];
          if (m % 2 || c[d] < m / 2) continue;
          const std::int64_t j = c[d] - m / 2;
          if (2 * j + 3 >= m - dirty[d]) continue;
          // A later level rewrites only its (low) block, so this high coefficient is final.
          ++checked;
          EXPECT_LE(std::abs(std::complex<double>(y[static_cast<std::size_t>(i)])), 64 * tol<T>() * max_abs(x))
              << "level " << l + 1 << ", axis " << d << ", index " << i;
          break;
        }
      }
      for (std::size_t d = 0; d < block.size(); ++d) {
        const std::int64_t m = block[d];
        if (m % 2) continue;
        std::int64_t count = 0;
        for (std::int64_t j = 0; j < m / 2; ++j) count += 2 * j + 3 >= m - dirty[d];
        dirty[d] = count;
        block[d] = m / 2;
      }
    }
    EXPECT_GT(checked, n / 2) << "most detail coefficients are away from the wrap";
  }
}

// ---------------------------------------------------------------------------------------------
// Batched forms equal separate applies.

TYPED_TEST(Sparsify, BatchedFormsApplyEachImageAlone) {
  using T = TypeParam;
  const Context c = test_context();
  const std::vector<OperatorPtr<T>> ops = {op::finite_difference<T>({5, 4}, c, Boundary::kNeumann),
                                           op::wavelet<T>({8, 6}, 2, c, Wavelet::kDaubechies4)};
  const std::int64_t k = 3;
  for (const auto& a : ops) {
    auto b = op::batch<T>(a, k);
    SCOPED_TRACE(b->name());
    EXPECT_NE(b->name().find("stacked"), std::string::npos) << "the operator's own batched form";
    const std::int64_t nd = a->domain_size(), nc = a->codomain_size();
    const auto x = random_complex<T>(nd * k, 16);
    const auto y = random_complex<T>(nc * k, 17);
    const auto bx = call(*b, x), by = call(*b, y, Call::kAdjoint), bn = call(*b, x, Call::kNormal);
    for (std::int64_t j = 0; j < k; ++j) {
      const Cvec<T> xj(x.begin() + j * nd, x.begin() + (j + 1) * nd);
      const Cvec<T> yj(y.begin() + j * nc, y.begin() + (j + 1) * nc);
      EXPECT_EQ(Cvec<T>(bx.begin() + j * nc, bx.begin() + (j + 1) * nc), call(*a, xj)) << j;
      EXPECT_EQ(Cvec<T>(by.begin() + j * nd, by.begin() + (j + 1) * nd), call(*a, yj, Call::kAdjoint)) << j;
      EXPECT_EQ(Cvec<T>(bn.begin() + j * nd, bn.begin() + (j + 1) * nd), call(*a, xj, Call::kNormal)) << j;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Bad input.

TYPED_TEST(Sparsify, BadInputSaysWhatWasExpected) {
  using T = TypeParam;
  const Context c = test_context();
  const auto bad = ErrorCode::kInvalidArgument;
  EXPECT_TRUE(throws_error([&] { (void)op::finite_difference<T>({4, 4}, {}, c); }, bad, {"axes is empty", "[0, 2)"}));
  EXPECT_TRUE(throws_error([&] { (void)op::finite_difference<T>({4, 4}, {0, 2}, c); }, bad,
                           {"axis 2", "out of range", "0 <= axis < 2"}));
  EXPECT_TRUE(throws_error([&] { (void)op::finite_difference<T>({4, 4}, {-1}, c); }, bad, {"axis -1", "0 <= axis"}));
  EXPECT_TRUE(throws_error([&] { (void)op::finite_difference<T>({4, 4}, {1, 1}, c); }, bad, {"twice", "distinct"}));
  EXPECT_TRUE(throws_error([&] { (void)op::finite_difference<T>({4, -3}, c); }, bad, {"-3", "extent >= 1"}));
  EXPECT_TRUE(throws_error([&] { (void)op::finite_difference<T>({0, 3}, c); }, bad, {"extent >= 1"}));
  EXPECT_TRUE(throws_error([&] { (void)op::finite_difference<T>({}, c); }, bad, {"no axes"}));
  EXPECT_TRUE(throws_error([&] { (void)op::finite_difference<T>(Shape(9, 2), c); }, bad, {"9 axes", "at most 8"}));
  EXPECT_TRUE(throws_error([&] { (void)op::finite_difference<T>({4}, c, static_cast<Boundary>(7)); }, bad,
                           {"boundary", "kPeriodic"}));
  EXPECT_TRUE(throws_error([&] { (void)op::wavelet<T>({8, 8}, 0, c); }, bad, {"levels = 0", "levels >= 1"}));
  EXPECT_TRUE(throws_error([&] { (void)op::wavelet<T>({8, 8}, -2, c); }, bad, {"levels >= 1"}));
  // 8x6 -> 4x3 -> 2x3 -> 1x3: three levels, then nothing to halve.
  EXPECT_EQ(op::wavelet_max_levels({8, 6}), 3);
  EXPECT_NO_THROW((void)op::wavelet<T>({8, 6}, 3, c));
  EXPECT_TRUE(throws_error([&] { (void)op::wavelet<T>({8, 6}, 4, c); }, bad,
                           {"levels = 4", "too many", "1x3", "1 <= levels <= 3"}));
  EXPECT_TRUE(throws_error([&] { (void)op::wavelet<T>({3, 5}, 1, c); }, bad, {"odd", "at least one even extent"}));
  EXPECT_TRUE(throws_error([&] { (void)op::wavelet<T>({8, -2}, 1, c); }, bad, {"-2", "extent >= 1"}));
  EXPECT_TRUE(throws_error([&] { (void)op::wavelet<T>({}, 1, c); }, bad, {"no axes"}));
  EXPECT_TRUE(throws_error([&] { (void)op::wavelet<T>({8}, 1, c, static_cast<Wavelet>(9)); }, bad, {"wavelet"}));
  EXPECT_TRUE(throws_error([&] { (void)op::wavelet_max_levels({4, 0}); }, bad, {"extent >= 1"}));
  EXPECT_EQ(op::wavelet_max_levels({3, 5}), 0);
  EXPECT_EQ(op::wavelet_max_levels({1024}), 10);
  EXPECT_EQ(op::wavelet_max_levels({96, 40, 1}), 5);  // 96 = 3·2^5, 40 = 5·2^3
}

}  // namespace
}  // namespace fieldft::test
