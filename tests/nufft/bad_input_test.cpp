// Bad input: every misuse fails with the documented ErrorCode and a message that names what was
// wrong, before anything is computed; the valid edge cases around it are accepted.
#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "fieldft/config.hpp"
#include "fieldft/detail/fold.hpp"
#include "fieldft/runtime.hpp"
#include "nufft_test_common.hpp"

namespace fieldft::test {
namespace {

using nufft::Method;
using nufft::Plan;

template <class T>
class NufftBadInput : public NufftTypedTest<T> {};
TYPED_TEST_SUITE(NufftBadInput, Precisions);

template <class T>
auto make(int type, std::vector<std::int64_t> modes, int isign = 1, std::int64_t ntransf = 1,
          double eps = working_eps<T>(), nufft::Options opt = options_for()) {
  return [=] { Plan<T> p(type, modes, isign, ntransf, eps, opt); };
}

// The message must name the offending point: the index, and which coordinate array.
TYPED_TEST(NufftBadInput, NonFiniteCoordinateNamesItsIndex) {
  using T = TypeParam;
  const T nan = std::numeric_limits<T>::quiet_NaN(), inf = std::numeric_limits<T>::infinity();
  struct Case { int dim; int axis; std::int64_t index; T value; const char* name; };
  const Case cases[] = {{1, 0, 1234, nan, "x[1234]"}, {1, 0, 0, -inf, "x[0]"},
                        {2, 1, 77, inf, "y[77]"},     {3, 2, 1999, nan, "z[1999]"},
                        {3, 0, 5, inf, "x[5]"}};
  for (const auto& c : cases)
    for (int type : {1, 2}) {
      auto pts = random_points<T>(c.dim, 2000, 200);
      std::vector<T>* axes[3] = {&pts.x, &pts.y, &pts.z};
      (*axes[c.axis])[c.index] = c.value;
      Plan<T> plan(type, test_modes(c.dim), 1, 1, working_eps<T>(), options_for());
      EXPECT_TRUE(throws_error([&] { set_points(plan, pts); }, ErrorCode::kNonFinite, {c.name}))
          << "dim " << c.dim << ", type " << type << ", bad " << c.name;
    }
}

TYPED_TEST(NufftBadInput, ZeroOrNegativeModeCount) {
  using T = TypeParam;
  EXPECT_TRUE(throws_error(make<T>(1, {0}), ErrorCode::kInvalidArgument, {"mode", "0"}));
  EXPECT_TRUE(throws_error(make<T>(2, {8, 0}), ErrorCode::kInvalidArgument, {"mode", "N2"}));
  EXPECT_TRUE(throws_error(make<T>(1, {8, 8, 0}), ErrorCode::kInvalidArgument, {"mode", "N3"}));
  EXPECT_TRUE(throws_error(make<T>(1, {-4}), ErrorCode::kInvalidArgument, {"mode", "-4"}));
}

// Sizes that must agree: a plan of dimension d needs d coordinate arrays (M > 0), a point count
// cannot be negative. (Array lengths themselves are implied by M and N in this API.)
TYPED_TEST(NufftBadInput, MissingCoordinatesOrNegativePointCount) {
  using T = TypeParam;
  const auto pts = random_points<T>(3, 100, 210);
  Plan<T> p2(1, test_modes(2), 1, 1, working_eps<T>(), options_for());
  EXPECT_TRUE(throws_error([&] { p2.set_points(100, pts.x.data(), nullptr); },
                           ErrorCode::kInvalidArgument, {"y"}));
  Plan<T> p3(2, test_modes(3), 1, 1, working_eps<T>(), options_for());
  EXPECT_TRUE(throws_error([&] { p3.set_points(100, pts.x.data(), pts.y.data(), nullptr); },
                           ErrorCode::kInvalidArgument, {"z"}));
  EXPECT_TRUE(throws_error([&] { p3.set_points(100, nullptr, pts.y.data(), pts.z.data()); },
                           ErrorCode::kInvalidArgument, {"x"}));
  EXPECT_TRUE(throws_error([&] { p3.set_points(-1, pts.x.data(), pts.y.data(), pts.z.data()); },
                           ErrorCode::kInvalidArgument, {"-1"}));
}

// eps below min_eps<T>() cannot be delivered by T's rounding: kEpsTooSmall, and the message
// says what the smallest accepted value is.
// Non-positive or non-finite eps is not a tolerance at all: kInvalidArgument.
TYPED_TEST(NufftBadInput, EpsOutOfRange) {
  using T = TypeParam;
  const double lo = nufft::min_eps<T>();
  const auto two = options_for(Method::kAuto, 2.0);
  EXPECT_TRUE(throws_error(make<T>(1, {16}, 1, 1, lo / 10, two), ErrorCode::kEpsTooSmall, {"eps"}));
  EXPECT_TRUE(throws_error(make<T>(2, {16, 16}, 1, 1, lo * 0.5, two), ErrorCode::kEpsTooSmall,
                           {"eps"}));
  // min_eps is accepted where rounding allows it: double always; float's rounding floor u·G
  // (about 1.5e-7 at upsampfac 2) is above its min_eps, so float is held to 1e-6 here.
  EXPECT_NO_THROW(make<T>(1, {16}, 1, 1, sizeof(T) == 8 ? lo : 1e-6, two)());
  // Nor is anything above 1 (an error larger than the result): (0, 1] is the range, and the
  // message says so. 1 itself is accepted (the widest kernel the plan makes, w = 2).
  for (double bad : {0.0, -1e-3, std::nan(""), std::numeric_limits<double>::infinity(), 1.0000001, 2.0, 1e3})
    EXPECT_TRUE(throws_error(make<T>(1, {16}, 1, 1, bad), ErrorCode::kInvalidArgument, {"eps", "(0, 1]"}))
        << "eps = " << bad;
  EXPECT_NO_THROW(make<T>(1, {16}, 1, 1, 1.0)());
  EXPECT_NO_THROW(make<T>(3, {16, 16}, 1, 1, 1.0)());
}

// Products of sizes beyond 32 bits must be computed in 64 bits: a 3D plan of 2^14 modes per
// dimension has 2^42 modes and a fine grid of ≥ 2^45 cells (2^48 bytes in float), beyond any
// machine; it must fail with kTooLarge at construction — not wrap around, crash or bad_alloc.
// A product beyond 64 bits (2^90 modes) must be caught as overflow, also kTooLarge.
TYPED_TEST(NufftBadInput, SizesBeyondMemoryOrIndexing) {
  using T = TypeParam;
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  const std::vector<std::vector<std::int64_t>> too_large = {
      {1 << 14, 1 << 14, 1 << 14},     // 2^42 modes, fine grid >= 2^45 cells
      {1 << 20, 1 << 20},              // 2^40 modes
      {1ll << 40},                     // one huge dimension: 2^40 modes, fine grid 2^41 cells
      {1ll << 30, 1ll << 30, 1ll << 30},  // 2^90 modes: overflows int64
      {kMax},                          // sigma·N overflows int64
      {3, kMax / 2}};
  for (const auto& modes : too_large)
    for (int type : {1, 2})
      EXPECT_TRUE(throws_error(make<T>(type, modes), ErrorCode::kTooLarge))
          << "type " << type << ", modes " << ::testing::PrintToString(modes);
}

TYPED_TEST(NufftBadInput, ExecuteBeforeSetPoints) {
  using T = TypeParam;
  for (int type : {1, 2}) {
    Plan<T> plan(type, test_modes(2), 1, 1, working_eps<T>(), options_for());
    std::vector<std::complex<T>> buf(plan.info().num_modes());
    EXPECT_TRUE(throws_error([&] { plan.execute(buf.data(), buf.data()); },
                             ErrorCode::kInvalidState, {"set_points"}));
    EXPECT_TRUE(throws_error([&] { plan.execute_adjoint(buf.data(), buf.data()); },
                             ErrorCode::kInvalidState, {"set_points"}));
  }
}

// A plan that was moved from has no backend: every call says so instead of crashing.
TYPED_TEST(NufftBadInput, MovedFromPlan) {
  using T = TypeParam;
  Plan<T> plan(1, test_modes(2), 1, 1, working_eps<T>(), options_for());
  Plan<T> other(std::move(plan));
  std::vector<std::complex<T>> buf(other.info().num_modes());
  std::vector<T> x(4, T(0.5));
  EXPECT_TRUE(throws_error([&] { plan.set_points(4, x.data(), x.data()); }, ErrorCode::kInvalidState, {"moved"}));
  EXPECT_TRUE(throws_error([&] { plan.execute(buf.data(), buf.data()); }, ErrorCode::kInvalidState, {"moved"}));
  EXPECT_TRUE(throws_error([&] { (void)plan.info(); }, ErrorCode::kInvalidState, {"moved"}));
}

TYPED_TEST(NufftBadInput, InvalidType) {
  using T = TypeParam;
  for (int type : {0, 4, -1})
    EXPECT_TRUE(throws_error(make<T>(type, {16}), ErrorCode::kInvalidArgument, {"type"}))
        << "type " << type;
  // Type 3 uses only the number of mode counts (the dimension), not their values.
  EXPECT_NO_THROW(make<T>(3, {16})());
  EXPECT_NO_THROW(make<T>(3, {0, -5})());
  EXPECT_TRUE(throws_error(make<T>(3, {}), ErrorCode::kInvalidArgument, {"dimension"}));
}

// Each set_points overload belongs to its types: the 4-argument one (no targets) on a type 3
// plan and the type 3 one on a type 1 or 2 plan are refused with a message naming the right call.
TYPED_TEST(NufftBadInput, Type3SetPointsOverloads) {
  using T = TypeParam;
  const auto pts = random_points<T>(2, 50, 240);
  Plan<T> t3(3, test_modes(2), 1, 1, working_eps<T>(), options_for());
  EXPECT_TRUE(throws_error([&] { set_points(t3, pts); }, ErrorCode::kInvalidArgument, {"type 3", "nk"}));
  for (int type : {1, 2}) {
    Plan<T> plan(type, test_modes(2), 1, 1, working_eps<T>(), options_for());
    EXPECT_TRUE(throws_error([&] { set_points(plan, pts, pts); }, ErrorCode::kInvalidArgument,
                             {"type 3", "set_points(m, x, y, z)"}))
        << "type " << type;
  }
  std::vector<std::complex<T>> buf(100);
  EXPECT_TRUE(throws_error([&] { t3.execute(buf.data(), buf.data()); }, ErrorCode::kInvalidState, {"set_points"}));
}

// Type 3 targets get the same checks as points, named s, t, u; a negative count is refused.
TYPED_TEST(NufftBadInput, Type3BadTargets) {
  using T = TypeParam;
  const T nan = std::numeric_limits<T>::quiet_NaN(), inf = std::numeric_limits<T>::infinity();
  struct Case { int dim; int axis; std::int64_t index; T value; const char* name; };
  const Case cases[] = {{1, 0, 17, nan, "s[17]"}, {2, 1, 0, inf, "t[0]"}, {3, 2, 299, -inf, "u[299]"}};
  for (const auto& c : cases) {
    const auto src = random_points<T>(c.dim, 200, 241);
    auto tgt = random_points<T>(c.dim, 300, 242);
    std::vector<T>* axes[3] = {&tgt.x, &tgt.y, &tgt.z};
    (*axes[c.axis])[c.index] = c.value;
    Plan<T> plan(3, test_modes(c.dim), 1, 1, working_eps<T>(), options_for());
    EXPECT_TRUE(throws_error([&] { set_points(plan, src, tgt); }, ErrorCode::kNonFinite, {c.name})) << c.name;
  }
  // A source NaN is named like a type 1/2 point.
  auto src = random_points<T>(2, 200, 243);
  src.y[5] = nan;
  const auto tgt = random_points<T>(2, 300, 244);
  Plan<T> p2(3, test_modes(2), 1, 1, working_eps<T>(), options_for());
  EXPECT_TRUE(throws_error([&] { set_points(p2, src, tgt); }, ErrorCode::kNonFinite, {"y[5]"}));
  // Missing target arrays for the plan's dimension, and negative counts.
  const auto ok_src = random_points<T>(2, 200, 245);
  EXPECT_TRUE(throws_error(
      [&] { p2.set_points(200, ok_src.x.data(), ok_src.y.data(), nullptr, 300, tgt.x.data(), nullptr); },
      ErrorCode::kInvalidArgument, {"t", "null"}));
  EXPECT_TRUE(throws_error(
      [&] { p2.set_points(200, ok_src.x.data(), ok_src.y.data(), nullptr, 300, nullptr, tgt.y.data()); },
      ErrorCode::kInvalidArgument, {"s", "null"}));
  EXPECT_TRUE(throws_error(
      [&] { p2.set_points(200, ok_src.x.data(), ok_src.y.data(), nullptr, -3, tgt.x.data(), tgt.y.data()); },
      ErrorCode::kInvalidArgument, {"targets", "-3"}));
  // A space-bandwidth product beyond any grid is kTooLarge, not an overflow or a crash.
  const std::vector<double> far = {-1e30, 1e30}, near = {-1.0, 1.0};
  const auto big_src = make_points<T>(1, far), big_tgt = make_points<T>(1, near);
  Plan<T> p1(3, test_modes(1), 1, 1, working_eps<T>(), options_for());
  EXPECT_TRUE(throws_error([&] { set_points(p1, big_src, big_tgt); }, ErrorCode::kTooLarge, {"type 3", "grid"}));
}

// isign is +1 or -1 (nufft.hpp); anything else is refused by name, for every type, rather than
// silently read as a sign (FINUFFT's ">= 0 means +1" lives in the Python compatibility layers).
// +1 and -1 give the sums of their sign.
TYPED_TEST(NufftBadInput, IsignMustBePlusOrMinusOne) {
  using T = TypeParam;
  for (int type : {1, 2, 3})
    for (int isign : {0, 2, 7, -2, -5})
      EXPECT_TRUE(throws_error(make<T>(type, test_modes(1), isign), ErrorCode::kInvalidArgument,
                               {"isign", "+1 or -1", std::to_string(isign)}))
          << "type " << type << ", isign " << isign;
  const auto modes = test_modes(1);
  const auto pts = random_points<T>(1, 300, 220);
  const auto c = random_complex<T>(pts.size(), 221);
  for (int isign : {1, -1}) {
    Plan<T> plan(1, modes, isign, 1, working_eps<T>(), options_for());
    EXPECT_EQ(plan.info().isign, isign);
    set_points(plan, pts);
    EXPECT_LE(rel_error(apply(plan, c), oracle(1, pts.exact, widen(c), modes, isign, 0)), property_bound(plan))
        << "isign " << isign;
  }
}

// nthreads < 0 is refused by name; a count far beyond the machine (100000 threads made the
// OpenMP runtime abort the process) is capped at max_cpu_threads(), which PlanInfo reports
// (0 on the CUDA backend, which uses none), and the plan still computes the right sums.
TYPED_TEST(NufftBadInput, NthreadsNegativeRefusedLargeCapped) {
  using T = TypeParam;
  auto opt = options_for();
  opt.nthreads = -1;
  EXPECT_TRUE(throws_error(make<T>(1, {16}, 1, 1, working_eps<T>(), opt), ErrorCode::kInvalidArgument,
                           {"nthreads", "-1"}));
  const auto modes = test_modes(2);
  const auto pts = random_points<T>(2, 500, 225);
  const auto c = random_complex<T>(pts.size(), 226);
  for (int n : {100000, 1, 0}) {
    opt.nthreads = n;
    Plan<T> plan(1, modes, 1, 1, working_eps<T>(), opt);
    const int want = kBackend == Backend::kCpu ? (n == 0 ? cpu_threads_for(0) : std::min(n, max_cpu_threads())) : 0;
    EXPECT_EQ(plan.info().nthreads, want) << "nthreads " << n;
    set_points(plan, pts);
    EXPECT_LE(rel_error(apply(plan, c), oracle(1, pts.exact, widen(c), modes, 1, 0)), property_bound(plan))
        << "nthreads " << n;
  }
  EXPECT_EQ(cpu_threads_for(100000), max_cpu_threads());
}

// Coordinates beyond the fold limit (nufft.hpp: max_fold_coordinate<T>(), where T no longer
// places a point within 1/64 of its period) are refused by set_points with kInvalidArgument
// naming the array, the index and the limit; NaN/Inf are checked first (kNonFinite); values up
// to the limit are accepted. Type 3 coordinates are not folded and have no such limit.
TYPED_TEST(NufftBadInput, CoordinatesBeyondTheFoldLimit) {
  using T = TypeParam;
  const double limit = detail::max_fold_coordinate<T>();
  std::ostringstream limit_text;
  limit_text << limit;
  struct Case { int dim; int axis; std::int64_t index; double value; const char* name; };
  const Case cases[] = {{1, 0, 17, 2 * limit, "x[17]"}, {2, 1, 0, -1.5 * limit, "y[0]"},
                        {3, 2, 499, 1e30, "z[499]"}, {3, 0, 3, 4 * limit, "x[3]"}};
  for (const auto& c : cases)
    for (int type : {1, 2}) {
      auto pts = random_points<T>(c.dim, 500, 250);
      std::vector<T>* axes[3] = {&pts.x, &pts.y, &pts.z};
      (*axes[c.axis])[c.index] = static_cast<T>(c.value);
      Plan<T> plan(type, test_modes(c.dim), 1, 1, working_eps<T>(), options_for());
      EXPECT_TRUE(throws_error([&] { set_points(plan, pts); }, ErrorCode::kInvalidArgument,
                               {c.name, "fold limit", limit_text.str()}))
          << "dim " << c.dim << ", type " << type << ", bad " << c.name;
    }
  // A NaN in y wins over a huge x (finiteness first, as on every backend).
  auto pts = random_points<T>(2, 100, 251);
  pts.x[2] = static_cast<T>(3 * limit);
  pts.y[50] = std::numeric_limits<T>::quiet_NaN();
  Plan<T> p2(1, test_modes(2), 1, 1, working_eps<T>(), options_for());
  EXPECT_TRUE(throws_error([&] { set_points(p2, pts); }, ErrorCode::kNonFinite, {"y[50]"}));
  // At the limit: accepted.
  auto edge = random_points<T>(2, 100, 252);
  T at = static_cast<T>(limit);
  if (static_cast<double>(at) > limit) at = std::nextafter(at, T(0));
  edge.x[0] = at;
  edge.y[1] = -at;
  EXPECT_NO_THROW(set_points(p2, edge));
  // Type 3: coordinates beyond the fold limit with small targets are just numbers.
  const std::vector<double> big = {-4 * limit, 3 * limit, 4 * limit}, small = {-1e-9, 2e-9};
  const auto src = make_points<T>(1, big), tgt = make_points<T>(1, small);
  Plan<T> p3(3, test_modes(1), 1, 1, working_eps<T>(), options_for());
  EXPECT_NO_THROW(set_points(p3, src, tgt));
}

TYPED_TEST(NufftBadInput, InvalidDimension) {
  using T = TypeParam;
  EXPECT_TRUE(throws_error(make<T>(1, {}), ErrorCode::kInvalidArgument, {"dimension"}));
  EXPECT_TRUE(throws_error(make<T>(1, {4, 4, 4, 4}), ErrorCode::kInvalidArgument, {"dimension"}));
}

TYPED_TEST(NufftBadInput, UpsampfacOutOfRange) {
  using T = TypeParam;
  for (double s : {1.0, 1.2, 2.26, 3.0, -1.0, std::nan(""), std::numeric_limits<double>::infinity()})
    EXPECT_TRUE(throws_error(make<T>(1, {16}, 1, 1, working_eps<T>(), options_for(Method::kAuto, s)),
                             ErrorCode::kInvalidArgument, {"upsampfac"}))
        << "upsampfac " << s;
  for (double s : {0.0, 1.25, 1.5, 2.0, 2.1, 2.25})
    EXPECT_NO_THROW(make<T>(1, {16}, 1, 1, working_eps<T>(), options_for(Method::kAuto, s))())
        << "upsampfac " << s;
}

TYPED_TEST(NufftBadInput, InvalidNtransf) {
  using T = TypeParam;
  for (std::int64_t n : {0, -1, -100})
    EXPECT_TRUE(throws_error(make<T>(1, {16}, 1, n), ErrorCode::kInvalidArgument, {"ntransf"}))
        << "ntransf " << n;
}

TYPED_TEST(NufftBadInput, InvalidModeord) {
  using T = TypeParam;
  for (int m : {-1, 2})
    EXPECT_TRUE(throws_error(make<T>(1, {16}, 1, 1, working_eps<T>(), options_for(Method::kAuto, 0, m)),
                             ErrorCode::kInvalidArgument, {"modeord"}))
        << "modeord " << m;
}

TYPED_TEST(NufftBadInput, OtherOptionsOutOfRange) {
  using T = TypeParam;
  auto opt = options_for();
  opt.max_batch = -1;
  EXPECT_TRUE(throws_error(make<T>(1, {16}, 1, 2, working_eps<T>(), opt), ErrorCode::kInvalidArgument,
                           {"max_batch"}));
  opt = options_for();
  opt.bin_size = {8, -2, 0};
  EXPECT_TRUE(throws_error(make<T>(1, {16, 16}, 1, 1, working_eps<T>(), opt),
                           ErrorCode::kInvalidArgument, {"bin"}));
  for (int boxes : {-2, 2}) {
    opt = options_for();
    opt.spread_boxes = boxes;
    EXPECT_TRUE(throws_error(make<T>(1, {8, 8, 8}, 1, 1, working_eps<T>(), opt), ErrorCode::kInvalidArgument,
                             {"spread_boxes"}));
  }
  // The CPU backend has one spreading method (nufft.hpp); the CUDA-only ones are refused by name.
  if (kBackend == Backend::kCpu) {
    for (Method m : {Method::kSubproblem, Method::kOutputDriven}) {
      EXPECT_TRUE(throws_error(make<T>(1, {16}, 1, 1, working_eps<T>(), options_for(m)),
                               ErrorCode::kInvalidArgument, {nufft::method_name(m)}))
          << nufft::method_name(m);
    }
  }
}

// Null data pointers where data is needed are refused, not dereferenced.
TYPED_TEST(NufftBadInput, NullDataPointers) {
  using T = TypeParam;
  const auto pts = random_points<T>(2, 50, 230);
  for (int type : {1, 2}) {
    Plan<T> plan(type, test_modes(2), 1, 1, working_eps<T>(), options_for());
    set_points(plan, pts);
    std::vector<std::complex<T>> buf(plan.info().num_modes() + pts.size());
    EXPECT_TRUE(throws_error([&] { plan.execute(nullptr, buf.data()); }, ErrorCode::kInvalidArgument,
                             {"null"}));
    EXPECT_TRUE(throws_error([&] { plan.execute(buf.data(), nullptr); }, ErrorCode::kInvalidArgument,
                             {"null"}));
    EXPECT_TRUE(throws_error([&] { plan.execute_adjoint(nullptr, buf.data()); },
                             ErrorCode::kInvalidArgument, {"null"}));
  }
}

// A backend that is not compiled in, or has no device, is refused by name.
TYPED_TEST(NufftBadInput, UnavailableCudaBackendIsRefused) {
  using T = TypeParam;
  if (backend_unavailable_reason(Backend::kCuda).empty())
    GTEST_SKIP() << "CUDA is available here; nothing to refuse";
  nufft::Options opt;
  opt.backend = Backend::kCuda;
  EXPECT_TRUE(throws_error(make<T>(1, {16}, 1, 1, working_eps<T>(), opt),
                           ErrorCode::kBackendUnavailable, {"cuda"}));
}

}  // namespace
}  // namespace fieldft::test
