// Options::planning = measure (docs/tuning.md, "Measured planning and wisdom"): the first plan
// of a problem times its candidates, stores the winner and computes the exact sums' values; a
// second plan of the same problem takes the stored configuration; a corrupt file is measured
// over; an unwritable path is refused before anything is timed; type 3 stays estimated. No
// timing is asserted (which candidate wins is the machine's business).
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "nufft_test_common.hpp"

namespace fieldft::test {
namespace {

using nufft::Plan;
using nufft::Planning;

template <class T>
class NufftWisdom : public NufftTypedTest<T> {};
TYPED_TEST_SUITE(NufftWisdom, Precisions);

// A fresh wisdom path per test and precision (the lock and temporary files sit beside it).
std::string fresh_path(const char* name, int bytes) {
  const std::string p = ::testing::TempDir() + "fieldft_wisdom_" + name + "_" + std::to_string(bytes) + "_" +
                        std::to_string(::getpid()) + ".json";
  std::remove(p.c_str());
  return p;
}

nufft::Options measured(const std::string& path) {
  nufft::Options o = options_for();
  o.planning = Planning::kMeasure;
  o.wisdom_path = path;
  return o;
}

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

// The measured plan against the exact sums, type 1 or 2 and the adjoint (property bound: the
// measured configuration is one of the planner's, so it must meet eps like any).
template <class T>
void check_against_oracle(Plan<T>& plan, const PointSet<T>& pts, std::span<const std::int64_t> modes, int type,
                          int isign = 1) {
  for (bool adjoint : {false, true}) {
    const auto in = random_complex<T>(input_size(plan.info(), adjoint), 77 + adjoint);
    const int applied = adjoint ? 3 - type : type;
    const auto want = oracle(applied, pts.exact, widen(in), modes, adjoint ? -isign : isign, 0);
    EXPECT_LE(rel_error(apply(plan, in, adjoint), want), property_bound(plan)) << (adjoint ? "adjoint" : "forward");
  }
}

TYPED_TEST(NufftWisdom, MeasuresOnceThenReusesTheWisdom) {
  using T = TypeParam;
  for (int type : {1, 2}) {
    SCOPED_TRACE(::testing::Message() << "type " << type);
    const std::string path = fresh_path("reuse", sizeof(T) + 10 * type);
    const auto modes = test_modes(2);
    const auto pts = random_points<T>(2, 700, 41);
    Plan<T> first(type, modes, 1, 1, working_eps<T>(), measured(path));
    set_points(first, pts);
    const auto& a = first.info();
    EXPECT_TRUE(starts_with(a.configured_by, "measured now")) << a.configured_by;
    EXPECT_NE(a.configured_by.find(path), std::string::npos) << a.configured_by;
    EXPECT_NE(a.plan_reason.find("planning: measured now"), std::string::npos) << a.plan_reason;
    ASSERT_FALSE(a.measured.empty());
    EXPECT_EQ(std::count_if(a.measured.begin(), a.measured.end(), [](const auto& c) { return c.planner_choice; }), 1);
    for (std::size_t i = 1; i < a.measured.size(); ++i) EXPECT_LE(a.measured[i - 1].seconds, a.measured[i].seconds);
    EXPECT_NE(a.configured_by.find("(" + std::to_string(a.measured.size()) + " candidates"), std::string::npos)
        << a.configured_by;
    // The plan runs the fastest candidate.
    EXPECT_EQ(a.method, a.measured[0].method);
    EXPECT_EQ(a.upsampfac, a.measured[0].upsampfac);
    check_against_oracle(first, pts, modes, type);

    // Same problem, another isign and a few points more (same power-of-two bucket): the wisdom.
    const auto more = random_points<T>(2, 720, 42);
    Plan<T> second(type, modes, -1, 1, working_eps<T>(), measured(path));
    set_points(second, more);
    const auto& b = second.info();
    EXPECT_TRUE(starts_with(b.configured_by, "wisdom " + path)) << b.configured_by;
    EXPECT_TRUE(b.measured.empty());
    EXPECT_EQ(b.method, a.method);
    EXPECT_EQ(b.upsampfac, a.upsampfac);
    check_against_oracle(second, more, modes, type, -1);
    // Another eps is another problem: measured again.
    Plan<T> other(type, modes, 1, 1, working_eps<T>() * 10, measured(path));
    set_points(other, pts);
    EXPECT_TRUE(starts_with(other.info().configured_by, "measured now")) << other.info().configured_by;
    std::remove(path.c_str());
    std::remove((path + ".lock").c_str());
  }
}

// Remeasure times again even where the wisdom has the problem; estimate ignores the wisdom.
TYPED_TEST(NufftWisdom, RemeasureAndEstimate) {
  using T = TypeParam;
  const std::string path = fresh_path("remeasure", sizeof(T));
  const auto modes = test_modes(1);
  const auto pts = random_points<T>(1, 300, 43);
  for (Planning p : {Planning::kMeasure, Planning::kRemeasure}) {
    nufft::Options o = measured(path);
    o.planning = p;
    Plan<T> plan(1, modes, 1, 1, working_eps<T>(), o);
    set_points(plan, pts);
    EXPECT_TRUE(starts_with(plan.info().configured_by, "measured now")) << planning_name(p);
  }
  Plan<T> plain(1, modes, 1, 1, working_eps<T>(), options_for());
  set_points(plain, pts);
  EXPECT_EQ(plain.info().configured_by, "estimate");
  EXPECT_TRUE(plain.info().measured.empty());
  std::remove(path.c_str());
  std::remove((path + ".lock").c_str());
}

// A file that is not wisdom: the plan measures (no error, the reason in configured_by) and
// replaces it with a valid file that the next plan reads.
TYPED_TEST(NufftWisdom, CorruptFileIsMeasuredOver) {
  using T = TypeParam;
  const std::string path = fresh_path("corrupt", sizeof(T));
  std::ofstream(path) << "{\"fieldft_wisdom\": 1, \"entries\": [ {\"signature\": tru";
  const auto modes = test_modes(1);
  const auto pts = random_points<T>(1, 300, 44);
  Plan<T> first(2, modes, 1, 1, working_eps<T>(), measured(path));
  set_points(first, pts);
  EXPECT_TRUE(starts_with(first.info().configured_by, "measured now")) << first.info().configured_by;
  EXPECT_NE(first.info().configured_by.find("unreadable"), std::string::npos) << first.info().configured_by;
  check_against_oracle(first, pts, modes, 2);
  Plan<T> second(2, modes, 1, 1, working_eps<T>(), measured(path));
  set_points(second, pts);
  EXPECT_TRUE(starts_with(second.info().configured_by, "wisdom ")) << second.info().configured_by;
  std::remove(path.c_str());
  std::remove((path + ".lock").c_str());
}

// A path that cannot be written: kInvalidArgument naming it, at set_points, and the plan keeps
// its backend (an estimate plan's set_points still works after switching nothing).
TYPED_TEST(NufftWisdom, UnwritablePathIsRefused) {
  using T = TypeParam;
  const std::string path = "/nonexistent-fieldft-dir/wisdom.json";
  const auto modes = test_modes(1);
  const auto pts = random_points<T>(1, 100, 45);
  Plan<T> plan(1, modes, 1, 1, working_eps<T>(), measured(path));
  try {
    set_points(plan, pts);
    ADD_FAILURE() << "no error for an unwritable wisdom path";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW((void)plan.info());
}

// Without a file (no wisdom_path, FIELDFT_WISDOM unset) the winner is kept in this process.
TYPED_TEST(NufftWisdom, NoPathKeepsWisdomInTheProcess) {
  using T = TypeParam;
  ::unsetenv("FIELDFT_WISDOM");
  const auto modes = test_modes(3);
  const auto pts = random_points<T>(3, 500, 46);
  // An eps no other test uses, so the process's wisdom starts without this problem.
  const double eps = working_eps<T>() * 3;
  Plan<T> first(1, modes, 1, 2, eps, measured(""));
  set_points(first, pts);
  EXPECT_TRUE(starts_with(first.info().configured_by, "measured now")) << first.info().configured_by;
  EXPECT_NE(first.info().configured_by.find("this process"), std::string::npos);
  Plan<T> second(1, modes, 1, 2, eps, measured(""));
  set_points(second, pts);
  EXPECT_TRUE(starts_with(second.info().configured_by, "wisdom (this process)")) << second.info().configured_by;
  EXPECT_EQ(second.info().method, first.info().method);
}

// Type 3 is not measured: estimate, said so.
TYPED_TEST(NufftWisdom, Type3StaysEstimated) {
  using T = TypeParam;
  const auto src = random_points<T>(1, 50, 47), tgt = random_points<T>(1, 40, 48);
  Plan<T> plan(3, test_modes(1), 1, 1, working_eps<T>(), measured(""));
  set_points(plan, src, tgt);
  EXPECT_TRUE(starts_with(plan.info().configured_by, "estimate (planning measure does not cover type 3"))
      << plan.info().configured_by;
}

TEST(NufftPlanningNames, RoundTrip) {
  for (Planning p : {Planning::kEstimate, Planning::kMeasure, Planning::kRemeasure})
    EXPECT_EQ(nufft::parse_planning(nufft::planning_name(p)), p);
  EXPECT_THROW(nufft::parse_planning("exhaustive"), Error);
  nufft::Options o = options_for();
  o.planning = static_cast<Planning>(7);
  EXPECT_THROW(Plan<double>(1, test_modes(1), 1, 1, 1e-6, o), Error);
}

}  // namespace
}  // namespace fieldft::test
