// fieldft::dist without MPI (fieldft/dist.hpp), on the backend under test (FIELDFT_TEST_BACKEND):
// split, for_each_problem, agree_on_errors and the single communicator, rank_sum over single()
// in the generic operator battery, and the MPI / NCCL entry points of a build without them.
#include "fieldft/dist.hpp"

#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <set>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "dist/split_sense.hpp"
#include "fieldft/runtime.hpp"
#include "support/battery.hpp"
#include "support/context_vector.hpp"
#include "support/operator_battery.hpp"

namespace fieldft::test {
namespace {

using dist::Share;

// ---- split ----------------------------------------------------------------------------------

TEST(DistSplit, SharesTileTheRangeAndDifferByAtMostOne) {
  for (std::int64_t count : {0, 1, 2, 5, 7, 64, 1001})
    for (int parts : {1, 2, 3, 4, 8, 13}) {
      std::int64_t next = 0, smallest = count, largest = 0;
      for (int i = 0; i < parts; ++i) {
        const Share s = dist::split(count, parts, i);
        EXPECT_EQ(s.begin, next) << count << " over " << parts << ", part " << i;
        EXPECT_GE(s.size(), 0);
        next = s.end;
        smallest = std::min(smallest, s.size());
        largest = std::max(largest, s.size());
      }
      EXPECT_EQ(next, count) << count << " over " << parts;
      EXPECT_LE(largest - smallest, 1) << count << " over " << parts;
    }
  // The first count % parts parts hold one more.
  EXPECT_EQ(dist::split(5, 3, 0).size(), 2);
  EXPECT_EQ(dist::split(5, 3, 2).size(), 1);
}

TEST(DistSplit, BadArgumentsAreRefused) {
  EXPECT_TRUE(throws_error([] { dist::split(-1, 2, 0); }, ErrorCode::kInvalidArgument));
  EXPECT_TRUE(throws_error([] { dist::split(4, 0, 0); }, ErrorCode::kInvalidArgument));
  EXPECT_TRUE(throws_error([] { dist::split(4, 2, 2); }, ErrorCode::kInvalidArgument));
  EXPECT_TRUE(throws_error([] { dist::split(4, 2, -1); }, ErrorCode::kInvalidArgument));
}

// ---- for_each_problem -----------------------------------------------------------------------

// The node-local rank and rank count come from the launcher's environment (Open MPI's names
// first), with 0 and 1 where it says nothing usable.
TEST(DistLauncher, LocalRankAndSizeFromTheEnvironment) {
  const char* names[] = {
      "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALRANKID", "MPI_LOCALNRANKS", "SLURM_LOCALID",
      "SLURM_NTASKS_PER_NODE"};
  std::vector<std::pair<std::string, std::string>> saved;
  for (const char* n : names) {
    if (const char* v = std::getenv(n)) saved.emplace_back(n, v);
    ::unsetenv(n);
  }
  EXPECT_EQ(dist::launcher_local_rank(), 0);
  EXPECT_EQ(dist::launcher_local_size(), 1);
  ::setenv("SLURM_LOCALID", "3", 1);
  ::setenv("SLURM_NTASKS_PER_NODE", "4", 1);
  EXPECT_EQ(dist::launcher_local_rank(), 3);
  EXPECT_EQ(dist::launcher_local_size(), 4);
  ::setenv("OMPI_COMM_WORLD_LOCAL_RANK", "1", 1);
  ::setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "2", 1);
  EXPECT_EQ(dist::launcher_local_rank(), 1);
  EXPECT_EQ(dist::launcher_local_size(), 2);
  ::setenv("OMPI_COMM_WORLD_LOCAL_SIZE", "0", 1);  // not a count of ranks: the next name's
  ::setenv("OMPI_COMM_WORLD_LOCAL_RANK", "x", 1);
  EXPECT_EQ(dist::launcher_local_size(), 4);
  EXPECT_EQ(dist::launcher_local_rank(), 3);
  for (const char* n : names) ::unsetenv(n);
  for (const auto& [n, v] : saved) ::setenv(n.c_str(), v.c_str(), 1);
}

TEST(DistForEachProblem, EveryIndexExactlyOnceOverSeveralHostPlaces) {
  const std::vector<Context> places{Context::host(1), Context::host(1), Context::host(2)};
  constexpr std::int64_t kCount = 500;
  std::vector<std::atomic<int>> seen(kCount);
  std::mutex mutex;
  std::set<const Context*> used;
  dist::for_each_problem(kCount, places, [&](std::int64_t i, const Context& place) {
    ASSERT_GE(i, 0);
    ASSERT_LT(i, kCount);
    seen[static_cast<std::size_t>(i)].fetch_add(1);
    std::lock_guard<std::mutex> lock(mutex);
    used.insert(&place);
  });
  for (std::int64_t i = 0; i < kCount; ++i) EXPECT_EQ(seen[static_cast<std::size_t>(i)].load(), 1) << "problem " << i;
  for (const Context* p : used) EXPECT_TRUE(p >= places.data() && p < places.data() + places.size());
}

TEST(DistForEachProblem, NoProblemsCallsNothing) {
  const std::vector<Context> places{Context::host(1), Context::host(1)};
  std::atomic<int> calls{0};
  dist::for_each_problem(0, places, [&](std::int64_t, const Context&) { ++calls; });
  EXPECT_EQ(calls.load(), 0);
}

TEST(DistForEachProblem, AnErrorStopsTheDealingAndNamesTheProblem) {
  // One place: the problems run in order, so nothing after the failing one runs.
  const std::vector<Context> one{Context::host(1)};
  std::atomic<int> calls{0};
  const auto fail_at_7 = [&](std::int64_t i, const Context&) {
    ++calls;
    if (i == 7) throw Error(ErrorCode::kNonFinite, "bad data in slice");
  };
  try {
    dist::for_each_problem(100, one, fail_at_7);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kNonFinite);
    EXPECT_NE(std::string(e.what()).find("problem 7"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("host"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("bad data in slice"), std::string::npos) << e.what();
  }
  EXPECT_EQ(calls.load(), 8);

  // Several places: the same error after every thread joined; no index runs twice.
  const std::vector<Context> three{Context::host(1), Context::host(1), Context::host(1)};
  std::vector<std::atomic<int>> seen(10000);
  try {
    dist::for_each_problem(10000, three, [&](std::int64_t i, const Context& c) {
      seen[static_cast<std::size_t>(i)].fetch_add(1);
      fail_at_7(i, c);
    });
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kNonFinite);
    EXPECT_NE(std::string(e.what()).find("problem 7"), std::string::npos) << e.what();
  }
  for (auto& s : seen) EXPECT_LE(s.load(), 1);
  EXPECT_EQ(seen[7].load(), 1);
}

TEST(DistForEachProblem, BadArgumentsAreRefused) {
  const std::vector<Context> none;
  const std::vector<Context> one{Context::host(1)};
  const auto fn = [](std::int64_t, const Context&) {};
  EXPECT_TRUE(throws_error([&] { dist::for_each_problem(3, none, fn); }, ErrorCode::kInvalidArgument));
  EXPECT_TRUE(throws_error([&] { dist::for_each_problem(-1, one, fn); }, ErrorCode::kInvalidArgument));
}

// Whole SENSE adjoints dealt over places of the backend under test (a CUDA context on every
// visible device where there are several, else two streams of device 0) equal the host's,
// problem by problem.
TEST(DistForEachProblem, SenseProblemsOnTheBackendsPlaces) {
  if (const auto why = backend_unavailable_reason(kBackend); !why.empty()) GTEST_SKIP() << why;
  using C = std::complex<float>;
  std::vector<Context> places;
  if (kBackend == Backend::kCuda) {
    const int devices = static_cast<int>(cuda_devices().size());
    for (int d = 0; d < std::max(devices, 2); ++d) places.push_back(Context::cuda(devices > 1 ? d : 0));
  } else {
    places = {Context::host(1), Context::host(1)};
  }
  const SplitSense<float> p;
  const std::int64_t kProblems = std::max<std::int64_t>(6, 2 * static_cast<std::int64_t>(places.size()));
  const auto y = p.data();
  std::vector<std::vector<C>> got(static_cast<std::size_t>(kProblems));
  dist::for_each_problem(kProblems, places, [&](std::int64_t i, const Context& place) {
    auto a = p.whole(place);
    std::vector<C> yi(y);
    for (auto& v : yi) v *= static_cast<float>(i + 1);  // problem i: data scaled by i + 1
    ContextVector<float> yv(place, a->codomain_size()), x(place, a->domain_size());
    yv.upload(yi);
    a->apply_adjoint(yv.get(), x.get());
    got[static_cast<std::size_t>(i)] = x.download();
  });
  auto host = p.whole(Context::host(1));
  for (std::int64_t i = 0; i < kProblems; ++i) {
    std::vector<C> yi(y), want(static_cast<std::size_t>(host->domain_size()));
    for (auto& v : yi) v *= static_cast<float>(i + 1);
    host->apply_adjoint(yi.data(), want.data());
    // The NUFFT's eps (1e-4) bounds a device against the host; four times it, as the battery.
    EXPECT_LE(rel_error(got[static_cast<std::size_t>(i)], widen(want)), 4e-4) << "problem " << i;
  }
}

// ---- the single communicator and agree_on_errors ----------------------------------------------

TEST(DistSingle, IsOneRank) {
  auto one = dist::single();
  EXPECT_EQ(one->rank(), 0);
  EXPECT_EQ(one->size(), 1);
  EXPECT_EQ(one->engine(), dist::Engine::kSingle);
  EXPECT_EQ(one->describe(), "single");
  EXPECT_EQ(one->agree_max(3), 3);
  std::vector<std::complex<double>> v{{1, 2}, {3, 4}};
  one->allreduce_sum(v.data(), 2, Context::host());
  EXPECT_EQ(v[1], std::complex<double>(3, 4));
  EXPECT_TRUE(throws_error([&] { one->broadcast_bytes(v.data(), 4, 1); }, ErrorCode::kInvalidArgument));
  EXPECT_TRUE(throws_error([&] { one->allreduce_sum(v.data(), -1, Context::host()); }, ErrorCode::kInvalidArgument));
  // gather_pieces: its own pieces, copied where root says; pieces that do not match, or root 1:
  // refused, naming the difference.
  const std::string first = "abc", second = "de";
  std::string out(6, '?');
  const auto in = [](const std::string& t) { return std::as_bytes(std::span<const char>(t)); };
  const auto at = [&](std::size_t i, std::size_t n) {
    return std::as_writable_bytes(std::span<char>(out).subspan(i, n));
  };
  const std::vector<std::span<const std::byte>> mine{in(first), in(second)};
  one->gather_pieces(mine, std::vector<std::span<std::byte>>{at(3, 3), at(0, 2)}, 0);
  EXPECT_EQ(out, "de?abc");
  EXPECT_TRUE(throws_error(
      [&] {
        one->gather_pieces(mine, std::vector<std::span<std::byte>>{at(0, 3), at(3, 3)}, 0);
      },
      ErrorCode::kInvalidArgument, {"piece 1 has 2 bytes", "3"}));
  EXPECT_TRUE(throws_error([&] { one->gather_pieces(mine, std::vector<std::span<std::byte>>{at(0, 3)}, 0); },
                           ErrorCode::kInvalidArgument, {"2 pieces"}));
  EXPECT_TRUE(throws_error([&] { one->gather_pieces(mine, {}, 1); }, ErrorCode::kInvalidArgument));
}

TEST(DistAgreeOnErrors, PassesOrThrowsWithTheRankNamed) {
  auto one = dist::single();
  int ran = 0;
  dist::agree_on_errors(one, [&] { ++ran; });
  EXPECT_EQ(ran, 1);
  try {
    dist::agree_on_errors(one, [] { throw Error(ErrorCode::kShapeMismatch, "maps are 3x3"); });
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kShapeMismatch);
    EXPECT_EQ(std::string(e.what()), "rank 0 of 1: maps are 3x3");
  }
}

TEST(DistBuild, MissingBackendsSaySo) {
  if (!dist::have_mpi()) {
    EXPECT_TRUE(throws_error([] { dist::mpi_world(); }, ErrorCode::kBackendUnavailable));
  }
  if (!dist::have_nccl()) {
    const std::vector<int> devices{0};
    EXPECT_TRUE(throws_error([&] { dist::nccl_devices(devices); }, ErrorCode::kBackendUnavailable));
    EXPECT_TRUE(throws_error([] { dist::nccl_over(dist::single(), 0); }, ErrorCode::kBackendUnavailable));
  }
}

// ---- rank_sum over one rank ----------------------------------------------------------------

TEST(DistRankSum, NullArgumentsAreRefused) {
  const SplitSense<float> p;
  EXPECT_TRUE(throws_error([] { dist::rank_sum<float>(nullptr, dist::single()); }, ErrorCode::kInvalidArgument));
  EXPECT_TRUE(throws_error([&] { dist::rank_sum<float>(p.whole(Context::host(1)), nullptr); }, ErrorCode::kInvalidArgument));
}

// rank_sum over single() is the part itself: the same apply, adjoint, normal and weighted normal.
template <class T>
void expect_same_as_part() {
  const SplitSense<T> p;
  auto part = p.whole(Context::host(1));
  auto sum = dist::rank_sum<T>(part, dist::single());
  EXPECT_EQ(sum->domain_shape(), part->domain_shape());
  EXPECT_EQ(sum->codomain_shape(), part->codomain_shape());
  EXPECT_EQ(sum->batched(2), nullptr);
  const auto x = random_complex<T>(part->domain_size(), 3);
  const auto y = random_complex<T>(part->codomain_size(), 4);
  std::vector<std::complex<T>> a(x.size()), b(x.size());
  part->apply_adjoint(y.data(), a.data());
  sum->apply_adjoint(y.data(), b.data());
  EXPECT_EQ(a, b);
  part->apply_normal(x.data(), a.data());
  sum->apply_normal(x.data(), b.data());
  EXPECT_EQ(a, b);
  // Weights of period 5 are the same for every coil (M = 240 samples per coil): SENSE's
  // weighted Toeplitz normal; period 7 differs per coil: no weighted normal (nullptr).
  for (std::size_t period : {5, 7}) {
    std::vector<std::complex<T>> w(static_cast<std::size_t>(part->codomain_size()));
    for (std::size_t j = 0; j < w.size(); ++j) w[j] = static_cast<T>(0.5 + (j % period) * 0.25);
    auto np = part->weighted_normal(w.data());
    auto ns = sum->weighted_normal(w.data());
    EXPECT_EQ(np == nullptr, period == 7);
    ASSERT_EQ(np == nullptr, ns == nullptr);
    if (np) {
      np->apply(x.data(), a.data());
      ns->apply(x.data(), b.data());
      EXPECT_EQ(a, b);
    }
  }
}
TEST(DistRankSum, OverOneRankIsThePartFloat) { expect_same_as_part<float>(); }
TEST(DistRankSum, OverOneRankIsThePartDouble) { expect_same_as_part<double>(); }

// The generic battery on rank_sum(SENSE, single()); the NUFFT's tolerances as in
// tests/mri/sense_test.cpp (4·eps).
template <class T>
bool register_rank_sum_battery(const std::string& suffix) {
  const double e = 4 * SplitSense<T>::eps();
  register_operator_battery<T>("DistRankSumSingleSense2D" + suffix, [](const Context& c) {
    return dist::rank_sum<T>(SplitSense<T>().whole(c), dist::single());
  }, OperatorTolerances{.adjointness = e, .normal = e, .parity = e}, __FILE__, __LINE__);
  return true;
}
[[maybe_unused]] const bool kFloatBattery = register_rank_sum_battery<float>("Float");
[[maybe_unused]] const bool kDoubleBattery = register_rank_sum_battery<double>("Double");

}  // namespace
}  // namespace fieldft::test
