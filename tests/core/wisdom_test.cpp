// core/wisdom: problem signatures, the JSON text, concurrent writers and unreadable files.
#include "core/wisdom.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <thread>
#include <vector>

namespace fieldft::core {
namespace {

nufft::PlanInfo info_of(int type, std::array<std::int64_t, 3> modes, int dim, double eps) {
  nufft::PlanInfo i;
  i.type = type;
  i.dim = dim;
  i.modes = modes;
  i.eps = eps;
  return i;
}

TEST(WisdomSignature, EqualForTheSameProblemAndPointBucket) {
  const auto a = info_of(1, {64, 48, 1}, 2, 1e-6);
  auto b = a;
  b.isign = -a.isign;  // no cost difference
  const nufft::Options o;
  EXPECT_EQ(wisdom_signature(a, o, "cpu 2 threads", 8, 1000), wisdom_signature(b, o, "cpu 2 threads", 8, 1000));
  // 1000 and 1100 both round to 2^10.
  EXPECT_EQ(wisdom_signature(a, o, "cpu 2 threads", 8, 1000), wisdom_signature(a, o, "cpu 2 threads", 8, 1100));
}

TEST(WisdomSignature, DiffersWhereTheCostMayDiffer) {
  const auto a = info_of(1, {64, 48, 1}, 2, 1e-6);
  const nufft::Options o;
  const std::string s = wisdom_signature(a, o, "cpu 2 threads", 8, 1000);
  EXPECT_NE(s, wisdom_signature(info_of(2, {64, 48, 1}, 2, 1e-6), o, "cpu 2 threads", 8, 1000));  // type
  EXPECT_NE(s, wisdom_signature(info_of(1, {64, 64, 1}, 2, 1e-6), o, "cpu 2 threads", 8, 1000));  // modes
  EXPECT_NE(s, wisdom_signature(info_of(1, {64, 48, 1}, 2, 1e-5), o, "cpu 2 threads", 8, 1000));  // eps
  EXPECT_NE(s, wisdom_signature(a, o, "cpu 2 threads", 4, 1000));                                  // precision
  EXPECT_NE(s, wisdom_signature(a, o, "cpu 4 threads", 8, 1000));                                  // device
  EXPECT_NE(s, wisdom_signature(a, o, "cpu 2 threads", 8, 4000));                                  // M bucket
  auto batch = a;
  batch.ntransf = 4;
  EXPECT_NE(s, wisdom_signature(batch, o, "cpu 2 threads", 8, 1000));
  nufft::Options fixed;
  fixed.upsampfac = 2.0;  // a knob the user fixed narrows the candidates
  EXPECT_NE(s, wisdom_signature(a, fixed, "cpu 2 threads", 8, 1000));
  nufft::Options reuse;
  reuse.reuse = 20;  // reuse weighs set_points into the cost
  EXPECT_NE(s, wisdom_signature(a, reuse, "cpu 2 threads", 8, 1000));
}

WisdomEntry entry(nufft::Method m, double sigma, int bin) {
  WisdomEntry e;
  e.method = m;
  e.upsampfac = sigma;
  e.bin_size = {bin, bin, 0};
  e.seconds = 1.25e-3;
  e.planner_seconds = 2.5e-3;
  e.runner_up = "nupts sigma 2 bins \"auto\"\n";  // quotes and a control character survive
  e.candidates = 7;
  return e;
}

TEST(WisdomJson, RoundTrip) {
  Wisdom w;
  w["v1 cpu | type 1"] = entry(nufft::Method::kPrecomputed, 1.25, 0);
  w["v1 cuda \"H100\" | type 2"] = entry(nufft::Method::kOutputDriven, 2.25, 16);
  const auto back = wisdom_from_json(wisdom_to_json(w));
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(*back, w);
  const auto empty = wisdom_from_json(wisdom_to_json({}));
  ASSERT_TRUE(empty.has_value());
  EXPECT_TRUE(empty->empty());
}

TEST(WisdomJson, RejectsWhatIsNotWisdom) {
  for (const char* text : {"", "{", "[1, 2]", "{\"entries\": []}", "{\"fieldft_wisdom\": 1, \"entries\": [} ",
                           "{\"fieldft_wisdom\": 1, \"entries\": []} trailing", "\"x\""}) {
    std::string error;
    EXPECT_FALSE(wisdom_from_json(text, &error).has_value()) << text;
    EXPECT_FALSE(error.empty()) << text;
  }
  // A valid file with one unreadable entry keeps the others.
  const auto w = wisdom_from_json(
      "{\"fieldft_wisdom\": 1, \"entries\": [{\"signature\": \"a\", \"method\": \"warp\", \"upsampfac\": 2, "
      "\"bin_size\": [0,0,0], \"seconds\": 1}, {\"signature\": \"b\", \"method\": \"nupts\", \"upsampfac\": 2, "
      "\"bin_size\": [0,0,0], \"seconds\": 1}]}");
  ASSERT_TRUE(w.has_value());
  EXPECT_EQ(w->size(), 1u);
  EXPECT_EQ(w->count("b"), 1u);
}

std::string temp_path(const char* name) {
  const std::string p =
      ::testing::TempDir() + "fieldft_core_wisdom_" + name + "_" + std::to_string(::getpid()) + ".json";
  std::remove(p.c_str());
  return p;
}

TEST(WisdomFile, MissingIsEmptyCorruptIsReported) {
  const std::string path = temp_path("corrupt");
  std::string problem;
  EXPECT_TRUE(read_wisdom(path, &problem).empty());
  EXPECT_TRUE(problem.empty()) << problem;  // a missing file is no problem
  std::ofstream(path) << "not json";
  EXPECT_TRUE(read_wisdom(path, &problem).empty());
  EXPECT_NE(problem.find(path), std::string::npos) << problem;
  // Storing replaces the corrupt file.
  store_wisdom(path, "sig", entry(nufft::Method::kNuptsDriven, 2.0, 0));
  problem.clear();
  EXPECT_EQ(read_wisdom(path, &problem).size(), 1u);
  EXPECT_TRUE(problem.empty()) << problem;
  std::remove(path.c_str());
  std::remove((path + ".lock").c_str());
}

// Writers on several threads (each with its own lock descriptor, as separate processes have)
// storing different signatures: every entry survives.
TEST(WisdomFile, ConcurrentWritersKeepEveryEntry) {
  const std::string path = temp_path("concurrent");
  constexpr int kThreads = 8, kPerThread = 10;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i)
        store_wisdom(path, "sig " + std::to_string(t) + " " + std::to_string(i),
                     entry(nufft::Method::kNuptsDriven, 2.0, i));
    });
  for (auto& th : threads) th.join();
  std::string problem;
  const Wisdom w = read_wisdom(path, &problem);
  EXPECT_TRUE(problem.empty()) << problem;
  EXPECT_EQ(w.size(), std::size_t(kThreads * kPerThread));
  // No temporary file is left beside it.
  for (int t = 0; t < 100; ++t)
    EXPECT_FALSE(std::ifstream(path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(t)).good());
  std::remove(path.c_str());
  std::remove((path + ".lock").c_str());
}

TEST(WisdomFile, UnwritableIsAClearError) {
  const std::string path = "/nonexistent-fieldft-dir/wisdom.json";
  try {
    check_wisdom_writable(path);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
  EXPECT_THROW(store_wisdom(path, "s", WisdomEntry{}), Error);
}

TEST(WisdomFile, PathFromOptionsThenEnvironment) {
  nufft::Options o;
  ::setenv("FIELDFT_WISDOM", "/tmp/from-env.json", 1);
  EXPECT_EQ(wisdom_path(o), "/tmp/from-env.json");
  o.wisdom_path = "/tmp/from-options.json";
  EXPECT_EQ(wisdom_path(o), "/tmp/from-options.json");
  ::unsetenv("FIELDFT_WISDOM");
  EXPECT_EQ(wisdom_path(nufft::Options{}), "");
}

}  // namespace
}  // namespace fieldft::core
