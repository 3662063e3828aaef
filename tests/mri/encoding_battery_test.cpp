// The encoding operators of fieldft/mri/encoding.hpp under the generic operator battery
// (support/operator_battery.hpp), on the backend under test (FIELDFT_TEST_BACKEND), and against
// the exact oracle, fieldft::reference's field-corrected DFT.
//
// Battery registrations (small grids, float and double):
//   NufftEncoding   2D and 3D, batch 1 and 3, eps 1e-4 (float) / 1e-6 (double), and batched
//                   once more through op::batch;
//   DftEncoding     2D and 3D, without and with field map and readout times, batch 1 and 2;
//   DftR2Encoding   2D and 3D, without and with field map and times;
//   SENSE           compose(NufftEncoding with batch C, diag_expand(coil maps)), and the same
//                   with a DftEncoding and a field map.
// The NUFFT is an approximation of the model, accurate to eps, and its type 2 (forward) and
// type 1 (adjoint) plans are transposes of each other only when both choose the same kernel and
// fine grid (a device plan may choose the upsampling factor per type). Its adjointness, normal
// and parity checks therefore get 4·eps: with each transform within 2·eps (relative l2, the
// library's accuracy criterion) the defect |<Ãx,y> − <x,Ãᴴy>| is at most
// 2·eps·(‖Ax‖‖y‖ + ‖x‖‖Aᴴy‖), and for random x, y with M ≈ N samples ‖x‖‖Aᴴy‖ ≈ ‖Ax‖‖y‖.
// Linearity and the repeat checks keep the rounding-level defaults: the approximation itself is
// a linear map (spreading, FFT, deconvolution), the same for every input.
#include <array>
#include <complex>
#include <cstdint>
#include <memory>
#include <numbers>
#include <span>
#include <string>
#include <vector>

#include "fieldft/mri/dft.hpp"
#include "fieldft/mri/encoding.hpp"
#include "fieldft/op/combinators.hpp"
#include "dft_test_common.hpp"  // grid_positions
#include "support/operator_battery.hpp"

namespace fieldft::test {
namespace {

using op::OperatorPtr;

template <class T>
constexpr double nufft_eps() {
  return sizeof(T) == sizeof(float) ? 1e-4 : 1e-6;
}

// ---------------------------------------------------------------------------------------------
// Problems: an Encoding of precision T and the same values in double for the oracle (values are
// rounded to T first, so that comparisons measure the operator, not the rounding of its input).

struct Extras {
  bool field = false;  // a random field map, Δω uniform in ±2π·60 rad/s
  bool times = false;  // readout times uniform in [0, 20 ms)
};

template <class T>
struct Problem {
  std::vector<std::int64_t> grid;
  std::int64_t voxels = 1, samples = 0;
  std::vector<T> k[3], times, field;
  reference::Points ksp, pos;
  std::vector<double> times_d, field_d;  // zeros where the encoding has none (the oracle needs them)
  std::shared_ptr<const mri::Encoding<T>> encoding;
};

template <class T>
Problem<T> make_problem(std::vector<std::int64_t> grid, std::int64_t samples, std::uint64_t seed, Extras extras = {}) {
  Problem<T> p;
  const int dim = static_cast<int>(grid.size());
  p.grid = grid;
  p.samples = samples;
  for (auto g : grid) p.voxels *= g;
  Rng rng(seed);
  std::vector<double>* kd[3] = {&p.ksp.x, &p.ksp.y, &p.ksp.z};
  p.ksp.dim = dim;
  for (int d = 0; d < dim; ++d) {
    const double half = static_cast<double>(grid[static_cast<std::size_t>(d)]) / 2;
    for (std::int64_t j = 0; j < samples; ++j) {
      const T v = static_cast<T>(rng.uniform(-half, half));
      p.k[d].push_back(v);
      kd[d]->push_back(static_cast<double>(v));
    }
  }
  p.times_d.assign(static_cast<std::size_t>(samples), 0.0);
  if (extras.times)
    for (std::int64_t j = 0; j < samples; ++j) {
      const T t = static_cast<T>(rng.uniform(0.0, 0.02));
      p.times.push_back(t);
      p.times_d[static_cast<std::size_t>(j)] = static_cast<double>(t);
    }
  p.pos = grid_positions(grid);
  p.field_d.assign(static_cast<std::size_t>(p.voxels), 0.0);
  if (extras.field)
    for (std::int64_t v = 0; v < p.voxels; ++v) {
      const T w = static_cast<T>(2 * std::numbers::pi * rng.uniform(-60.0, 60.0));
      p.field.push_back(w);
      p.field_d[static_cast<std::size_t>(v)] = static_cast<double>(w);
    }
  p.encoding = std::make_shared<const mri::Encoding<T>>(
      std::span<const std::int64_t>(p.grid), std::span<const T>(p.k[0]), std::span<const T>(p.k[1]),
      dim == 3 ? std::span<const T>(p.k[2]) : std::span<const T>(), std::span<const T>(p.times),
      std::span<const T>(p.field));
  return p;
}

// Two sizes per dimension; M close to N (see the adjointness argument at the top).
const std::vector<std::int64_t> kGrid2{16, 12}, kGrid3{10, 8, 6};
constexpr std::int64_t kSamples2 = 200, kSamples3 = 500;
const std::vector<std::int64_t> kDftGrid2{10, 8}, kDftGrid3{6, 5, 4};
constexpr std::int64_t kDftSamples2 = 90, kDftSamples3 = 110;

template <class T>
OperatorPtr<T> make_nufft(const Problem<T>& p, const Context& c, std::int64_t batch) {
  mri::NufftEncodingOptions o;
  o.eps = nufft_eps<T>();
  o.batch = batch;
  return std::make_shared<mri::NufftEncoding<T>>(p.encoding, c, o);
}

template <class T>
OperatorPtr<T> make_dft(const Problem<T>& p, const Context& c, std::int64_t batch, bool r2 = false) {
  mri::DftEncodingOptions o;
  o.batch = batch;
  if (r2) return std::make_shared<mri::DftR2Encoding<T>>(p.encoding, c, o);
  return std::make_shared<mri::DftEncoding<T>>(p.encoding, c, o);
}

template <class T>
OperatorTolerances nufft_tolerances() {
  const double e = 4 * nufft_eps<T>();
  return {.adjointness = e, .normal = e, .parity = e};
}

// ---------------------------------------------------------------------------------------------
// Battery registrations.

template <class T>
bool register_encodings(const std::string& p) {
  auto reg = [&p](const std::string& name, OperatorFactory<T> f, OperatorTolerances tol = {}) {
    register_operator_battery<T>(name + p, std::move(f), tol, __FILE__, __LINE__);
  };
  // NufftEncoding: 2D and 3D, batch 1 and 3.
  for (std::int64_t b : {1, 3}) {
    const std::string bs = "Batch" + std::to_string(b);
    reg("NufftEncoding2D" + bs, [b](const Context& c) {
      return make_nufft<T>(make_problem<T>(kGrid2, kSamples2, 201), c, b);
    }, nufft_tolerances<T>());
    reg("NufftEncoding3D" + bs, [b](const Context& c) {
      return make_nufft<T>(make_problem<T>(kGrid3, kSamples3, 202), c, b);
    }, nufft_tolerances<T>());
  }
  // batched(K) of an encoding with batch 3: one operator of batch 6.
  reg("BatchOfNufftEncoding2D", [](const Context& c) {
    return op::batch<T>(make_nufft<T>(make_problem<T>(kGrid2, kSamples2, 203), c, 3), 2);
  }, nufft_tolerances<T>());

  // DftEncoding: without and with field map and times.
  const Extras none{}, both{.field = true, .times = true};
  reg("DftEncoding2D", [none](const Context& c) { return make_dft<T>(make_problem<T>(kDftGrid2, kDftSamples2, 211, none), c, 1); });
  reg("DftEncoding2DTimesOnly", [](const Context& c) {
    return make_dft<T>(make_problem<T>(kDftGrid2, kDftSamples2, 212, {.times = true}), c, 1);
  });
  reg("DftEncoding2DField", [both](const Context& c) { return make_dft<T>(make_problem<T>(kDftGrid2, kDftSamples2, 213, both), c, 1); });
  reg("DftEncoding2DFieldBatch2", [both](const Context& c) {
    return make_dft<T>(make_problem<T>(kDftGrid2, kDftSamples2, 214, both), c, 2);
  });
  reg("DftEncoding3D", [none](const Context& c) { return make_dft<T>(make_problem<T>(kDftGrid3, kDftSamples3, 215, none), c, 1); });
  reg("DftEncoding3DField", [both](const Context& c) { return make_dft<T>(make_problem<T>(kDftGrid3, kDftSamples3, 216, both), c, 1); });
  reg("BatchOfDftEncoding3DField", [both](const Context& c) {
    return op::batch<T>(make_dft<T>(make_problem<T>(kDftGrid3, kDftSamples3, 217, both), c, 1), 2);
  });

  // DftR2Encoding: the voxel-shape factor alone, and with the field's gradients.
  reg("DftR2Encoding2D", [none](const Context& c) { return make_dft<T>(make_problem<T>(kDftGrid2, kDftSamples2, 221, none), c, 1, true); });
  reg("DftR2Encoding2DField", [both](const Context& c) {
    return make_dft<T>(make_problem<T>(kDftGrid2, kDftSamples2, 222, both), c, 1, true);
  });
  reg("DftR2Encoding3DFieldBatch2", [both](const Context& c) {
    return make_dft<T>(make_problem<T>(kDftGrid3, kDftSamples3, 223, both), c, 2, true);
  });

  // SENSE: y_c = E(S_c ∘ x), coils as the encoding's batch axis.
  auto sense = [](const Problem<T>& pr, const Context& c, std::int64_t coils, bool nufft, std::uint64_t seed) {
    const auto maps = random_complex<T>(pr.voxels * coils, seed);
    auto expand = op::diag_expand<T>(maps, pr.encoding->image_shape(), coils, c);
    auto e = nufft ? make_nufft<T>(pr, c, coils) : make_dft<T>(pr, c, coils);
    return op::compose<T>(e, expand);
  };
  reg("SenseNufft2D", [sense](const Context& c) { return sense(make_problem<T>(kGrid2, kSamples2, 231), c, 4, true, 232); },
      nufft_tolerances<T>());
  reg("SenseNufft3D", [sense](const Context& c) { return sense(make_problem<T>(kGrid3, kSamples3, 233), c, 3, true, 234); },
      nufft_tolerances<T>());
  reg("SenseDftField2D", [sense, both](const Context& c) {
    return sense(make_problem<T>(kDftGrid2, kDftSamples2, 235, both), c, 3, false, 236);
  });
  return true;
}

[[maybe_unused]] const bool registered = register_encodings<float>("Float") && register_encodings<double>("Double");

// ---------------------------------------------------------------------------------------------
// The exact oracle.

template <class T>
class EncodingOracle : public ::testing::Test {
 protected:
  void SetUp() override { FIELDFT_TEST_SKIP_UNLESS_AVAILABLE(kBackend); }
};
using Precisions = ::testing::Types<float, double>;
TYPED_TEST_SUITE(EncodingOracle, Precisions);

// Block b of length n of v, widened to double.
template <class T>
std::vector<cdouble> block(const std::vector<std::complex<T>>& v, std::int64_t n, std::int64_t b) {
  return std::vector<cdouble>(v.begin() + b * n, v.begin() + (b + 1) * n);
}

template <class T>
std::vector<std::complex<T>> block_t(const std::vector<std::complex<T>>& v, std::int64_t n, std::int64_t b) {
  return std::vector<std::complex<T>>(v.begin() + b * n, v.begin() + (b + 1) * n);
}

enum class Model { kPlain, kR2 };

// A (batch B) against the oracle, image by image, forward and adjoint: relative l2 <= tol.
template <class T>
void expect_matches_oracle(op::LinearOperator<T>& a, const Problem<T>& p, std::int64_t batch, double tol,
                           Model model = Model::kPlain) {
  SCOPED_TRACE(a.name());
  const std::int64_t n = p.voxels, m = p.samples;
  ASSERT_EQ(a.domain_size(), n * batch);
  ASSERT_EQ(a.codomain_size(), m * batch);
  const auto x = random_complex<T>(n * batch, 301), y = random_complex<T>(m * batch, 302);
  const auto ax = battery_detail::run_apply(a, x, false);
  const auto ahy = battery_detail::run_apply(a, y, true);
  std::array<std::vector<double>, 3> grads;
  if (model == Model::kR2) {
    const auto g = mri::compute_gradient_maps<T>(p.grid, std::span<const T>(p.field));
    for (int d = 0; d < 3; ++d) grads[d].assign(g[d].begin(), g[d].end());
  }
  for (std::int64_t b = 0; b < batch; ++b) {
    SCOPED_TRACE(::testing::Message() << "image " << b << " of " << batch);
    const auto xb = block(x, n, b), yb = block(y, m, b);
    std::vector<cdouble> want_f, want_a;
    if (model == Model::kR2) {
      want_f = reference::field_dft_r2_forward(p.ksp, p.pos, p.field_d, p.times_d, p.grid, grads, xb);
      want_a = reference::field_dft_r2_adjoint(p.ksp, p.pos, p.field_d, p.times_d, p.grid, grads, yb);
    } else {
      want_f = reference::field_dft_forward(p.ksp, p.pos, p.field_d, p.times_d, xb);
      want_a = reference::field_dft_adjoint(p.ksp, p.pos, p.field_d, p.times_d, yb);
    }
    EXPECT_LE(rel_error(block_t(ax, m, b), want_f), tol) << "forward";
    EXPECT_LE(rel_error(block_t(ahy, n, b), want_a), tol) << "adjoint";
  }
}

// NufftEncoding is the model to within eps: relative l2 <= 2·eps, the library's NUFFT accuracy
// criterion (tests/nufft/accuracy_test.cpp); the oracle sums in double (~1e-15) and reads the
// very values (rounded to T) that the operator reads.
TYPED_TEST(EncodingOracle, NufftEncodingMatchesTheExactDft) {
  using T = TypeParam;
  for (const auto& [grid, m] : {std::pair{kGrid2, kSamples2}, std::pair{kGrid3, kSamples3}}) {
    for (std::int64_t batch : {1, 3}) {
      const auto p = make_problem<T>(grid, m, 311);
      auto a = make_nufft<T>(p, battery_context(), batch);
      expect_matches_oracle(*a, p, batch, 2 * nufft_eps<T>());
    }
  }
}

// DftEncoding evaluates the model itself; only rounding separates it from the oracle: float
// 1e-5 (the requirement for the field-corrected DFT; the method reaches ~1e-6 with the
// phase reduced in cycles and tile sums in double, fieldft/detail/dft_math.hpp), double 1e-12
// (~1e3 terms per output, each phase accurate to ~1e-16 cycles).
TYPED_TEST(EncodingOracle, DftEncodingMatchesTheExactDft) {
  using T = TypeParam;
  const double tol = sizeof(T) == sizeof(float) ? 1e-5 : 1e-12;
  const Extras none{}, both{.field = true, .times = true};
  for (const auto& [grid, m] : {std::pair{kDftGrid2, kDftSamples2}, std::pair{kDftGrid3, kDftSamples3}}) {
    for (const Extras& e : {none, both}) {
      for (std::int64_t batch : {1, 2}) {
        const auto p = make_problem<T>(grid, m, 321, e);
        auto a = make_dft<T>(p, battery_context(), batch);
        expect_matches_oracle(*a, p, batch, tol);
      }
    }
  }
}

// DftR2Encoding against the R2* oracle with the gradient maps DftR2 documents
// (mri::compute_gradient_maps); same thresholds as DftEncoding.
TYPED_TEST(EncodingOracle, DftR2EncodingMatchesTheExactDft) {
  using T = TypeParam;
  const double tol = sizeof(T) == sizeof(float) ? 1e-5 : 1e-12;
  for (const auto& [grid, m] : {std::pair{kDftGrid2, kDftSamples2}, std::pair{kDftGrid3, kDftSamples3}}) {
    const auto p = make_problem<T>(grid, m, 331, {.field = true, .times = true});
    auto a = make_dft<T>(p, battery_context(), 2, true);
    expect_matches_oracle(*a, p, 2, tol, Model::kR2);
  }
}

// The shapes the header promises, and op::batch through the encoding's own batched form (one
// operator, one batched transform — never a loop of plans).
TYPED_TEST(EncodingOracle, ShapesAndBatchedForm) {
  using T = TypeParam;
  const auto p = make_problem<T>(kGrid3, kSamples3, 341);
  const Context c = battery_context();
  auto a = make_nufft<T>(p, c, 3);
  EXPECT_EQ(a->domain_shape(), (op::Shape{10, 8, 6, 3}));
  EXPECT_EQ(a->codomain_shape(), (op::Shape{kSamples3, 3}));
  auto b = op::batch<T>(a, 2);
  auto* nb = dynamic_cast<mri::NufftEncoding<T>*>(b.get());
  ASSERT_NE(nb, nullptr) << b->name() << ": op::batch looped instead of batching the transform";
  EXPECT_EQ(nb->batch(), 6);
  EXPECT_EQ(b->domain_shape(), (op::Shape{10, 8, 6, 3, 2}));  // op::batch's contract: shape + {K}

  const auto q = make_problem<T>(kDftGrid2, kDftSamples2, 342, {.field = true, .times = true});
  auto d = make_dft<T>(q, c, 1);
  EXPECT_EQ(d->domain_shape(), (op::Shape{10, 8}));
  EXPECT_EQ(d->codomain_shape(), (op::Shape{kDftSamples2}));
  auto db = op::batch<T>(d, 4);
  auto* ddb = dynamic_cast<mri::DftEncoding<T>*>(db.get());
  ASSERT_NE(ddb, nullptr) << db->name() << ": op::batch looped instead of batching the DFT";
  EXPECT_EQ(ddb->batch(), 4);
  auto r2 = op::batch<T>(make_dft<T>(q, c, 1, true), 2);
  auto* r2b = dynamic_cast<mri::DftEncoding<T>*>(r2.get());
  ASSERT_NE(r2b, nullptr);
  EXPECT_TRUE(r2b->r2()) << "batching a DftR2Encoding must keep the R2* factor";
}

// NufftEncoding has no time segmentation: it refuses an encoding with a field map.
TYPED_TEST(EncodingOracle, NufftEncodingRefusesAFieldMap) {
  using T = TypeParam;
  const auto p = make_problem<T>(kGrid2, kSamples2, 351, {.field = true, .times = true});
  EXPECT_THROW((void)make_nufft<T>(p, battery_context(), 1), fieldft::Error);
}

}  // namespace
}  // namespace fieldft::test
