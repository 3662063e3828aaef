// The generic operator battery (DESIGN.md §5): one set of checks that every op::LinearOperator
// must pass, registered once per operator and compiled once per backend (support/battery.hpp:
// FIELDFT_TEST_BACKEND = 1 runs on Context::host(), 2 on Context::cuda(0)).
//
// A test file hands over a name and a FACTORY that builds the operator in a given Context. The
// factory must build it there (the battery checks the operator's place), and must build the SAME
// operator (same data, fixed seeds) on every call: the battery calls it several times, for
// several places, and compares the instances.
//
//   FIELDFT_OPERATOR_BATTERY(float, "ComposeDenseDiagFloat",
//                            [](const Context& c) { return op::compose<float>(...); });
//   FIELDFT_OPERATOR_BATTERY(double, "NufftEncoding2DDouble", factory, .adjointness = 4e-6);
//
// or calls register_operator_battery<T>(...) from a static initialiser. Either registers, in the
// test suite named `name` (so that --gtest_filter='name.*' selects one operator):
//
//   Linearity            A(αx + βy) = αAx + βAy, and the same for Aᴴ      (tolerance.linearity)
//   Adjointness          |<Ax, y> − <x, Aᴴy>| / (‖Ax‖‖y‖)                  (tolerance.adjointness)
//                        and apply / apply_adjoint leave their inputs unchanged
//   NormalIsAdjointOfApply  apply_normal(x) = apply_adjoint(apply(x))        (tolerance.normal)
//   ShapeMismatch        compose with an identity of the same SIZE but another SHAPE, on either
//                        side, throws kShapeMismatch (and with the same shape, does not)
//   TwoInstances         two instances (host: two threads; device: two streams, i.e. two
//                        Context::cuda(0)) run concurrently give the results of running them one
//                        after the other                                    (tolerance.repeat)
// and in the GPU executable only:
//   CpuGpuParity         the operator built for Context::host() and for Context::cuda(0) agree
//                        on apply, apply_adjoint and apply_normal            (tolerance.parity)
//   ContextMismatch      composing a host instance with a device instance, or two device
//                        instances on different streams, throws kContextMismatch
//   StreamOrder          with the operator's stream held by a host function, apply,
//                        apply_adjoint and apply_normal all return before it is released (a
//                        watchdog releases it after 20 s, so a call that synchronises fails the
//                        test instead of hanging it); the results, once released, are right.
//
// Every output vector starts filled with NaN (0xFF bytes): an operator that reads or accumulates
// into its output, or leaves part of it unwritten, fails the comparison.
//
// Tolerances are relative (l2, measured in long double) and default, per field left at 0, to the
// issue's thresholds: 1e-5 (float) and 1e-12 (double), i.e. rounding of T for a small operator.
// An operator with an approximation (NUFFT) passes its own: its forward and adjoint are each
// accurate to eps but are transposes of each other only where both plans use the same kernel
// and fine grid, and a device build may choose a different one per type.
//
// Device vectors are cudaMalloc'd by the test code (FIELDFT_TEST_BACKEND == 2; the GPU test
// executables link CUDA::cudart); host <-> device copies happen only outside the operator calls.
#pragma once

#include <algorithm>
#include <cmath>
#include <exception>
#include <complex>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "fieldft/context.hpp"
#include "fieldft/op/combinators.hpp"
#include "fieldft/op/linear_operator.hpp"
#include "support/battery.hpp"
#include "support/context_vector.hpp"
#include "support/stream_order.hpp"

#if FIELDFT_TEST_BACKEND == 2
#include <cuda_runtime.h>
#endif

namespace fieldft::test {

template <class T>
using OperatorFactory = std::function<op::OperatorPtr<T>(const Context&)>;

// Relative tolerances of the battery's comparisons; 0 = the default for T (default_tolerance).
struct OperatorTolerances {
  double linearity = 0;    // A(αx+βy) vs αAx+βAy
  double adjointness = 0;  // the adjointness defect
  double normal = 0;       // apply_normal vs apply_adjoint(apply)
  double parity = 0;       // host instance vs device instance
  double repeat = 0;       // concurrent instances vs one after the other, and StreamOrder
};

template <class T>
constexpr double default_tolerance() {
  return sizeof(T) == sizeof(float) ? 1e-5 : 1e-12;
}

// The context of the backend under test. On a device every call gives a new owned stream.
inline Context battery_context() {
  return kBackend == Backend::kCuda ? Context::cuda(0) : Context::host();
}

namespace battery_detail {

template <class T>
using Cvec = std::vector<std::complex<T>>;

inline double pick(double given, double fallback) { return given > 0 ? given : fallback; }

// ‖got − want‖ / ‖want‖ in long double; NaN anywhere gives NaN (which fails every EXPECT_LE).
template <class T>
double rel_diff(const Cvec<T>& got, const Cvec<T>& want) {
  if (got.size() != want.size()) return std::numeric_limits<double>::infinity();
  long double num = 0, den = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const long double dr = static_cast<long double>(got[i].real()) - want[i].real();
    const long double di = static_cast<long double>(got[i].imag()) - want[i].imag();
    const long double wr = want[i].real(), wi = want[i].imag();
    num += dr * dr + di * di;
    den += wr * wr + wi * wi;
  }
  if (den == 0) return num == 0 ? 0.0 : std::numeric_limits<double>::infinity();
  return static_cast<double>(std::sqrt(num / den));
}

template <class T>
double norm_of(const Cvec<T>& v) {
  return ::fieldft::test::norm<T>(std::span<const std::complex<T>>(v));
}

// a·u + b·v in long double, rounded to T once.
template <class T>
Cvec<T> combine(std::complex<T> a, const Cvec<T>& u, std::complex<T> b, const Cvec<T>& v) {
  using L = std::complex<long double>;
  Cvec<T> r(u.size());
  for (std::size_t i = 0; i < u.size(); ++i) {
    const L s = L(a) * L(u[i]) + L(b) * L(v[i]);
    r[i] = std::complex<T>(static_cast<T>(s.real()), static_cast<T>(s.imag()));
  }
  return r;
}

// Results of the three calls on one operator, for inputs x (domain) and y (codomain).
template <class T>
struct Outputs {
  Cvec<T> ax, ahy, normal;
};

// Device vectors of one operator's inputs and outputs, so that calls can be enqueued (and held
// back) without any host copy in between.
template <class T>
struct Workbench {
  ContextVector<T> x, y, ax, ahy, normal;
  Workbench(const op::LinearOperator<T>& a, const Cvec<T>& xs, const Cvec<T>& ys)
      : x(a.context(), a.domain_size()),
        y(a.context(), a.codomain_size()),
        ax(a.context(), a.codomain_size()),
        ahy(a.context(), a.domain_size()),
        normal(a.context(), a.domain_size()) {
    x.upload(xs);
    y.upload(ys);
  }
  void enqueue(op::LinearOperator<T>& a) {
    a.apply(x.get(), ax.get());
    a.apply_adjoint(y.get(), ahy.get());
    a.apply_normal(x.get(), normal.get());
  }
  Outputs<T> read() { return {ax.download(), ahy.download(), normal.download()}; }
};

template <class T>
Outputs<T> run_all(op::LinearOperator<T>& a, const Cvec<T>& x, const Cvec<T>& y) {
  Workbench<T> w(a, x, y);
  w.enqueue(a);
  return w.read();
}

template <class T>
Cvec<T> run_apply(op::LinearOperator<T>& a, const Cvec<T>& x, bool adjoint) {
  ContextVector<T> in(a.context(), adjoint ? a.codomain_size() : a.domain_size());
  ContextVector<T> out(a.context(), adjoint ? a.domain_size() : a.codomain_size());
  in.upload(x);
  if (adjoint)
    a.apply_adjoint(in.get(), out.get());
  else
    a.apply(in.get(), out.get());
  return out.download();
}

// Builds the operator at c and checks that it lives there.
template <class T>
op::OperatorPtr<T> build(const OperatorFactory<T>& factory, const Context& c) {
  auto a = factory(c);
  if (!a) throw std::runtime_error("the operator factory returned null");
  EXPECT_TRUE(a->context().same_place(c))
      << a->name() << " was built for " << c.describe() << " but lives at " << a->context().describe();
  return a;
}

// Seeds: distinct per role, fixed per run.
inline constexpr std::uint64_t kSeedX = 0xB47E'0001, kSeedY = 0xB47E'0002, kSeedX2 = 0xB47E'0003,
                               kSeedY2 = 0xB47E'0004;

// EXPECT measure <= tol, and record the measure as a test property (--gtest_output=xml shows
// it), so that tolerances can be judged against what each backend actually reaches.
inline void expect_within(double measure, double tol, const std::string& what) {
  ::testing::Test::RecordProperty(what, ::testing::PrintToString(measure));
  EXPECT_LE(measure, tol) << what;
}

template <class T>
void expect_outputs_close(const Outputs<T>& got, const Outputs<T>& want, double tol, const char* what) {
  expect_within(rel_diff(got.ax, want.ax), tol, std::string(what) + ": apply");
  expect_within(rel_diff(got.ahy, want.ahy), tol, std::string(what) + ": apply_adjoint");
  expect_within(rel_diff(got.normal, want.normal), tol, std::string(what) + ": apply_normal");
}

// A shape of the same size as s but not equal to it.
inline op::Shape other_shape_of_size(const op::Shape& s) {
  const std::int64_t n = op::shape_size(s);
  if (s.size() >= 2) return {n};  // flattened
  return {1, n};                  // {n} or {} -> a leading unit axis
}

// ---------------------------------------------------------------------------------------------
// The checks.

template <class T>
void check_linearity(const OperatorFactory<T>& factory, const OperatorTolerances& tol) {
  auto a = build(factory, battery_context());
  SCOPED_TRACE(a->name());
  const double t = pick(tol.linearity, default_tolerance<T>());
  // Coefficients exact in float; complex so that real and imaginary parts mix.
  const std::complex<T> alpha(T(0.75), T(-0.5)), beta(T(-1.25), T(0.375));
  for (bool adjoint : {false, true}) {
    SCOPED_TRACE(adjoint ? "apply_adjoint" : "apply");
    const std::int64_t n = adjoint ? a->codomain_size() : a->domain_size();
    const auto x = random_complex<T>(n, kSeedX), y = random_complex<T>(n, kSeedY);
    const auto z = combine(alpha, x, beta, y);
    const auto ax = run_apply(*a, x, adjoint), ay = run_apply(*a, y, adjoint), az = run_apply(*a, z, adjoint);
    ASSERT_GT(norm_of(ax), 0.0) << "the battery needs an operator that does not map a random vector to 0";
    const auto want = combine(alpha, ax, beta, ay);
    expect_within(rel_diff(az, want), t, adjoint ? "linearity of apply_adjoint" : "linearity of apply");
    // Applying twice gives the same result (no state carried between calls).
    EXPECT_LE(rel_diff(run_apply(*a, x, adjoint), ax), t) << "a second call differs from the first";
  }
}

template <class T>
void check_adjointness(const OperatorFactory<T>& factory, const OperatorTolerances& tol) {
  auto a = build(factory, battery_context());
  SCOPED_TRACE(a->name());
  const auto x = random_complex<T>(a->domain_size(), kSeedX);
  const auto y = random_complex<T>(a->codomain_size(), kSeedY);
  Workbench<T> w(*a, x, y);
  a->apply(w.x.get(), w.ax.get());
  a->apply_adjoint(w.y.get(), w.ahy.get());
  const auto ax = w.ax.download(), ahy = w.ahy.download();
  ASSERT_GT(norm_of(ax), 0.0) << "the battery needs an operator that does not map a random vector to 0";
  using S = std::span<const std::complex<T>>;
  const double defect = adjointness_defect<T>(S(x), S(ax), S(y), S(ahy));
  expect_within(defect, pick(tol.adjointness, default_tolerance<T>()), "adjointness defect");
  // Inputs are read only.
  EXPECT_EQ(0, std::memcmp(w.x.download().data(), x.data(), x.size() * sizeof(x[0]))) << "apply changed x";
  EXPECT_EQ(0, std::memcmp(w.y.download().data(), y.data(), y.size() * sizeof(y[0]))) << "apply_adjoint changed y";
}

template <class T>
void check_normal(const OperatorFactory<T>& factory, const OperatorTolerances& tol) {
  auto a = build(factory, battery_context());
  SCOPED_TRACE(a->name());
  const auto x = random_complex<T>(a->domain_size(), kSeedX);
  const auto ax = run_apply(*a, x, false);
  const auto ahax = run_apply(*a, ax, true);
  ContextVector<T> in(a->context(), a->domain_size()), out(a->context(), a->domain_size());
  in.upload(x);
  a->apply_normal(in.get(), out.get());
  const auto normal = out.download();
  ASSERT_GT(norm_of(ahax), 0.0) << "the battery needs AᴴA x != 0 for a random x";
  expect_within(rel_diff(normal, ahax), pick(tol.normal, default_tolerance<T>()), "normal vs adjoint(apply)");
}

template <class T>
void check_shape_mismatch(const OperatorFactory<T>& factory) {
  const Context c = battery_context();
  auto a = build(factory, c);
  SCOPED_TRACE(a->name());
  // Same shapes: fine.
  EXPECT_NO_THROW((void)op::compose<T>(a, op::identity<T>(a->domain_shape(), c)));
  EXPECT_NO_THROW((void)op::compose<T>(op::identity<T>(a->codomain_shape(), c), a));
  // Same sizes, other shapes.
  const op::Shape dom = other_shape_of_size(a->domain_shape());
  const op::Shape cod = other_shape_of_size(a->codomain_shape());
  EXPECT_TRUE(throws_error([&] { (void)op::compose<T>(a, op::identity<T>(dom, c)); }, ErrorCode::kShapeMismatch,
                           {op::shape_string(a->domain_shape()), op::shape_string(dom)}));
  EXPECT_TRUE(throws_error([&] { (void)op::compose<T>(op::identity<T>(cod, c), a); }, ErrorCode::kShapeMismatch,
                           {op::shape_string(a->codomain_shape()), op::shape_string(cod)}));
}

template <class T>
void check_two_instances(const OperatorFactory<T>& factory, const OperatorTolerances& tol) {
  const Context c1 = battery_context(), c2 = battery_context();
  auto a1 = build(factory, c1);
  auto a2 = build(factory, c2);
  SCOPED_TRACE(a1->name());
  if (c1.is_cuda()) {
    ASSERT_FALSE(c1.same_place(c2)) << "two Context::cuda(0) should own two streams";
  }
  const auto x1 = random_complex<T>(a1->domain_size(), kSeedX), y1 = random_complex<T>(a1->codomain_size(), kSeedY);
  const auto x2 = random_complex<T>(a2->domain_size(), kSeedX2), y2 = random_complex<T>(a2->codomain_size(), kSeedY2);
  // One after the other.
  const Outputs<T> r1 = run_all(*a1, x1, y1);
  const Outputs<T> r2 = run_all(*a2, x2, y2);
  // Concurrently: the inputs are uploaded first, then both instances run at once.
  Workbench<T> w1(*a1, x1, y1), w2(*a2, x2, y2);
  if (c1.is_host()) {
    std::exception_ptr failed;
    std::thread other([&] {
      try {
        w2.enqueue(*a2);
      } catch (...) {
        failed = std::current_exception();
      }
    });
    try {
      w1.enqueue(*a1);
    } catch (...) {
      other.join();
      throw;
    }
    other.join();
    if (failed) std::rethrow_exception(failed);
  } else {
    // Interleaved on two streams from one thread; the device overlaps them.
    a1->apply(w1.x.get(), w1.ax.get());
    a2->apply(w2.x.get(), w2.ax.get());
    a1->apply_adjoint(w1.y.get(), w1.ahy.get());
    a2->apply_adjoint(w2.y.get(), w2.ahy.get());
    a1->apply_normal(w1.x.get(), w1.normal.get());
    a2->apply_normal(w2.x.get(), w2.normal.get());
  }
  c1.synchronize();
  c2.synchronize();
  const double t = pick(tol.repeat, default_tolerance<T>());
  expect_outputs_close(w1.read(), r1, t, "instance 1");
  expect_outputs_close(w2.read(), r2, t, "instance 2");
}

#if FIELDFT_TEST_BACKEND == 2

template <class T>
void check_parity(const OperatorFactory<T>& factory, const OperatorTolerances& tol) {
  auto h = build(factory, Context::host());
  auto d = build(factory, battery_context());
  SCOPED_TRACE(d->name());
  ASSERT_EQ(h->domain_shape(), d->domain_shape());
  ASSERT_EQ(h->codomain_shape(), d->codomain_shape());
  const auto x = random_complex<T>(h->domain_size(), kSeedX), y = random_complex<T>(h->codomain_size(), kSeedY);
  expect_outputs_close(run_all(*d, x, y), run_all(*h, x, y), pick(tol.parity, default_tolerance<T>()),
                       "device vs host");
}

template <class T>
void check_context_mismatch(const OperatorFactory<T>& factory) {
  const Context c1 = battery_context(), c2 = battery_context();
  auto h = build(factory, Context::host());
  auto d1 = build(factory, c1);
  auto d1b = build(factory, c1);
  auto d2 = build(factory, c2);
  SCOPED_TRACE(d1->name());
  // A∘Aᴴ and Aᴴ∘A have matching shapes, so only the places can disagree.
  EXPECT_NO_THROW((void)op::compose<T>(d1, op::adjoint<T>(d1b))) << "two instances at one context";
  EXPECT_TRUE(throws_error([&] { (void)op::compose<T>(h, op::adjoint<T>(d1)); }, ErrorCode::kContextMismatch,
                           {"host", "cuda"}));
  EXPECT_TRUE(throws_error([&] { (void)op::compose<T>(op::adjoint<T>(d1), h); }, ErrorCode::kContextMismatch,
                           {"host", "cuda"}));
  EXPECT_TRUE(throws_error([&] { (void)op::compose<T>(d1, op::adjoint<T>(d2)); }, ErrorCode::kContextMismatch,
                           {"cuda"}));
  EXPECT_TRUE(throws_error([&] { (void)op::compose<T>(op::adjoint<T>(d2), d1); }, ErrorCode::kContextMismatch,
                           {"cuda"}));
}

template <class T>
void check_stream_order(const OperatorFactory<T>& factory, const OperatorTolerances& tol) {
  const Context c = battery_context();
  auto a = build(factory, c);
  SCOPED_TRACE(a->name());
  const auto x = random_complex<T>(a->domain_size(), kSeedX), y = random_complex<T>(a->codomain_size(), kSeedY);
  // A first run, unhindered: the reference, and any first-call setup (scratch, plans) done.
  const Outputs<T> want = run_all(*a, x, y);
  Workbench<T> w(*a, x, y);
  c.synchronize();

  const bool returned_first = returns_before_the_work(c, [&] { w.enqueue(*a); });
  EXPECT_TRUE(returned_first) << "apply, apply_adjoint or apply_normal waited for the stream";
  expect_outputs_close(w.read(), want, pick(tol.repeat, default_tolerance<T>()), "held stream");
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

#endif  // FIELDFT_TEST_BACKEND == 2

// One fixture type for every battery test (RegisterTest needs one per suite).
class OperatorBatteryTest : public ::testing::Test {
 public:
  explicit OperatorBatteryTest(std::function<void()> body) : body_(std::move(body)) {}

 protected:
  void SetUp() override { FIELDFT_TEST_SKIP_UNLESS_AVAILABLE(kBackend); }
  void TestBody() override { body_(); }

 private:
  std::function<void()> body_;
};

inline void register_one(const std::string& suite, const char* test, const char* file, int line,
                         std::function<void()> body) {
  ::testing::RegisterTest(suite.c_str(), test, nullptr, nullptr, file, line,
                          [body = std::move(body)]() -> OperatorBatteryTest* { return new OperatorBatteryTest(body); });
}

}  // namespace battery_detail

// Registers the battery for one operator as the test suite `name` (see the top of this file).
// Call before RUN_ALL_TESTS, e.g. from the initialiser of a namespace-scope variable; returns
// true so that it can be one.
template <class T>
bool register_operator_battery(const std::string& name, OperatorFactory<T> factory, OperatorTolerances tol = {},
                               const char* file = __FILE__, int line = __LINE__) {
  namespace d = battery_detail;
  auto f = std::make_shared<const OperatorFactory<T>>(std::move(factory));
  d::register_one(name, "Linearity", file, line, [f, tol] { d::check_linearity<T>(*f, tol); });
  d::register_one(name, "Adjointness", file, line, [f, tol] { d::check_adjointness<T>(*f, tol); });
  d::register_one(name, "NormalIsAdjointOfApply", file, line, [f, tol] { d::check_normal<T>(*f, tol); });
  d::register_one(name, "ShapeMismatch", file, line, [f] { d::check_shape_mismatch<T>(*f); });
  d::register_one(name, "TwoInstances", file, line, [f, tol] { d::check_two_instances<T>(*f, tol); });
#if FIELDFT_TEST_BACKEND == 2
  d::register_one(name, "CpuGpuParity", file, line, [f, tol] { d::check_parity<T>(*f, tol); });
  d::register_one(name, "ContextMismatch", file, line, [f] { d::check_context_mismatch<T>(*f); });
  d::register_one(name, "StreamOrder", file, line, [f, tol] { d::check_stream_order<T>(*f, tol); });
#endif
  return true;
}

}  // namespace fieldft::test

#define FIELDFT_BATTERY_CONCAT_INNER(a, b) a##b
#define FIELDFT_BATTERY_CONCAT(a, b) FIELDFT_BATTERY_CONCAT_INNER(a, b)

// FIELDFT_OPERATOR_BATTERY(T, name, factory[, designated OperatorTolerances fields...])
#define FIELDFT_OPERATOR_BATTERY(T, name, factory, ...)                                              \
  [[maybe_unused]] static const bool FIELDFT_BATTERY_CONCAT(fieldft_operator_battery_, __LINE__) = \
      ::fieldft::test::register_operator_battery<T>(                                                 \
          name, factory, ::fieldft::test::OperatorTolerances{__VA_ARGS__}, __FILE__, __LINE__)
