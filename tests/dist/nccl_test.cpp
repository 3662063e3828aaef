// fieldft::dist's NCCL communicators (GPU executable only): one process, one host thread per
// device, each driving its rank (nccl_devices). Skips without NCCL, or without the devices a test
// needs: the several-rank tests run on every visible device (at least two; four on a four-GPU
// machine, issue 28), the one-device tests on any GPU machine.
#include <algorithm>
#include <cstring>
#include <exception>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "fieldft/dist.hpp"
#include "fieldft/runtime.hpp"
#include "fieldft/solve/cg.hpp"
#include "support/battery.hpp"
#include "support/context_vector.hpp"
#include "dist/split_sense.hpp"

namespace fieldft::test {
namespace {

// Skips unless NCCL is compiled in and `devices` CUDA devices are visible.
#define FIELDFT_SKIP_UNLESS_NCCL(devices)                                                              \
  do {                                                                                                 \
    if (!dist::have_nccl()) GTEST_SKIP() << "built without NCCL";                                      \
    if (static_cast<int>(cuda_devices().size()) < (devices))                                          \
      GTEST_SKIP() << "needs " << (devices) << " CUDA devices, " << cuda_devices().size() << " visible"; \
  } while (0)

// body(rank) on one thread per communicator. A rank that throws aborts the group (so that the
// others, waiting in a collective, return instead of hanging) and the first error is rethrown.
void on_every_rank(const std::vector<dist::CommPtr>& comms, const std::function<void(int)>& body) {
  std::vector<std::exception_ptr> errors(comms.size());
  std::vector<std::thread> threads;
  for (std::size_t r = 0; r < comms.size(); ++r)
    threads.emplace_back([&, r] {
      try {
        body(static_cast<int>(r));
      } catch (...) {
        errors[r] = std::current_exception();
        comms[r]->abort("a test rank failed");
      }
    });
  for (auto& t : threads) t.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
}

// The visible CUDA devices, at most `cap`.
int visible_devices(int cap) { return std::min(cap, static_cast<int>(cuda_devices().size())); }

std::vector<dist::CommPtr> make_comms(int k) {
  std::vector<int> devices(static_cast<std::size_t>(k));
  for (int d = 0; d < k; ++d) devices[static_cast<std::size_t>(d)] = d;
  return dist::nccl_devices(devices);
}

TEST(NcclDevices, OneDeviceDescribesItselfAndSumsNothing) {
  FIELDFT_SKIP_UNLESS_NCCL(1);
  auto comms = make_comms(1);
  ASSERT_EQ(comms.size(), 1u);
  auto& c = comms[0];
  EXPECT_EQ(c->engine(), dist::Engine::kNccl);
  EXPECT_EQ(c->describe(), "nccl: rank 0 of 1 (cuda:0)");
  EXPECT_TRUE(c->sums_in(Context::cuda(0)));
  EXPECT_FALSE(c->sums_in(Context::host()));
  EXPECT_EQ(c->agree_max(5), 5);
  const Context ctx = Context::cuda(0);
  const auto v = random_complex<float>(1001, 5);
  ContextVector<float> d(ctx, 1001);
  d.upload(v);
  c->allreduce_sum(d.get(), 1001, ctx);
  EXPECT_EQ(d.download(), v);  // a sum over one rank is the value itself
  std::vector<std::complex<float>> host(4);
  EXPECT_TRUE(throws_error([&] { c->allreduce_sum(host.data(), 4, Context::host()); }, ErrorCode::kInvalidArgument));
  const std::vector<int> twice{0, 0};
  EXPECT_TRUE(throws_error([&] { dist::nccl_devices(twice); }, ErrorCode::kInvalidArgument));
  EXPECT_TRUE(throws_error([&] { dist::rank_sum<float>(SplitSense<float>().whole(Context::host(1)), c); },
                           ErrorCode::kContextMismatch));
}

// An allreduce over k devices: every rank's sum bit-identical, and within one rounding per
// addition of the exact sum.
template <class T>
void check_allreduce(int k) {
  auto comms = make_comms(k);
  std::vector<std::vector<std::complex<T>>> out(static_cast<std::size_t>(k));
  constexpr std::int64_t kN = 300001;
  on_every_rank(comms, [&](int r) {
    const Context ctx = Context::cuda(r);
    ContextVector<T> d(ctx, kN);
    d.upload(random_complex<T>(kN, 100 + static_cast<std::uint64_t>(r)));
    comms[static_cast<std::size_t>(r)]->allreduce_sum(d.get(), kN, ctx);
    out[static_cast<std::size_t>(r)] = d.download();
  });
  for (int r = 1; r < k; ++r)
    EXPECT_EQ(std::memcmp(out[static_cast<std::size_t>(r)].data(), out[0].data(), out[0].size() * sizeof(std::complex<T>)), 0)
        << "rank " << r << "'s sum differs from rank 0's";
  std::vector<cdouble> exact(kN);
  for (int r = 0; r < k; ++r) {
    const auto v = random_complex<T>(kN, 100 + static_cast<std::uint64_t>(r));
    for (std::int64_t i = 0; i < kN; ++i) exact[static_cast<std::size_t>(i)] += cdouble(v[static_cast<std::size_t>(i)]);
  }
  // k − 1 additions in T, each one rounding.
  EXPECT_LE(rel_error(out[0], exact), (k - 1) * (sizeof(T) == 4 ? 1e-6 : 1e-15));
}
TEST(NcclDevices, AllreduceBitIdenticalOnEveryDeviceFloat) {
  FIELDFT_SKIP_UNLESS_NCCL(2);
  check_allreduce<float>(visible_devices(8));
}
TEST(NcclDevices, AllreduceBitIdenticalOnEveryDeviceDouble) {
  FIELDFT_SKIP_UNLESS_NCCL(2);
  check_allreduce<double>(visible_devices(8));
}

TEST(NcclDevices, AgreeMaxAndBroadcastOnTwoDevices) {
  FIELDFT_SKIP_UNLESS_NCCL(2);
  auto comms = make_comms(2);
  std::vector<int> agreed(2);
  std::vector<std::string> got(2);
  on_every_rank(comms, [&](int r) {
    auto& c = comms[static_cast<std::size_t>(r)];
    agreed[static_cast<std::size_t>(r)] = c->agree_max(10 + r);
    std::string m = r == 1 ? "hello from 1" : std::string(12, '?');
    c->broadcast_bytes(m.data(), m.size(), 1);
    got[static_cast<std::size_t>(r)] = m;
  });
  EXPECT_EQ(agreed, (std::vector<int>{11, 11}));
  EXPECT_EQ(got, (std::vector<std::string>{"hello from 1", "hello from 1"}));
}

// CG on the coil-split SENSE problem, rank r on device r with its coil share, against CG on the
// whole problem on device 0. Bound: as in mpi_test.cpp (summation order of the coil sums), plus
// the GPU NUFFT's spreading, whose atomic additions make even two runs of one GPU differ in the
// last bits: 1e-4 (float), 1e-10 (double).
template <class T>
void check_cg(int k) {
  using C = std::complex<T>;
  auto comms = make_comms(k);
  const SplitSense<T> p;
  const auto y_whole = p.data();
  const solve::CgOptions o = cg_options(15, p.lambda());
  std::vector<std::vector<C>> x(static_cast<std::size_t>(k));
  on_every_rank(comms, [&](int r) {
    const Context ctx = Context::cuda(r);
    const dist::Share share = dist::split(SplitSense<T>::kCoils, k, r);
    auto a = dist::rank_sum<T>(p.part(ctx, share), comms[static_cast<std::size_t>(r)]);
    ContextVector<T> yv(ctx, a->codomain_size()), xv(ctx, a->domain_size());
    yv.upload(p.rows(y_whole, share));
    xv.upload(std::vector<C>(static_cast<std::size_t>(a->domain_size())));
    solve::cg<T>(*a, yv.get(), xv.get(), nullptr, o);  // enqueued only: tolerance 0, no callback
    x[static_cast<std::size_t>(r)] = xv.download();
  });
  const Context one = Context::cuda(0);
  auto whole = p.whole(one);
  ContextVector<T> yv(one, whole->codomain_size()), xv(one, whole->domain_size());
  yv.upload(y_whole);
  xv.upload(std::vector<C>(static_cast<std::size_t>(whole->domain_size())));
  solve::cg<T>(*whole, yv.get(), xv.get(), nullptr, o);
  const auto want = xv.download();
  for (int r = 0; r < k; ++r) {
    EXPECT_LE(rel_error(x[static_cast<std::size_t>(r)], widen(want)), sizeof(T) == 4 ? 1e-4 : 1e-10) << "rank " << r;
    // Every rank's iterate is the same, bit for bit: it is built from the same sums.
    EXPECT_EQ(std::memcmp(x[static_cast<std::size_t>(r)].data(), x[0].data(), x[0].size() * sizeof(C)), 0) << "rank " << r;
  }
}
TEST(NcclDevices, CoilSplitCgOnOneDeviceEqualsPlainCgFloat) {
  FIELDFT_SKIP_UNLESS_NCCL(1);
  check_cg<float>(1);
}
// On every visible device, at most one per coil.
TEST(NcclDevices, CoilSplitCgOnEveryDeviceEqualsOneGpuFloat) {
  FIELDFT_SKIP_UNLESS_NCCL(2);
  check_cg<float>(visible_devices(SplitSense<float>::kCoils));
}
TEST(NcclDevices, CoilSplitCgOnEveryDeviceEqualsOneGpuDouble) {
  FIELDFT_SKIP_UNLESS_NCCL(2);
  check_cg<double>(visible_devices(SplitSense<double>::kCoils));
}

TEST(NcclDevices, BroadcastOfDeviceMemoryOnEveryDevice) {
  FIELDFT_SKIP_UNLESS_NCCL(2);
  const int k = visible_devices(8);
  auto comms = make_comms(k);
  const auto v = random_complex<float>(3001, 9);
  std::vector<std::vector<std::complex<float>>> got(static_cast<std::size_t>(k));
  on_every_rank(comms, [&](int r) {
    const Context ctx = Context::cuda(r);
    ContextVector<float> d(ctx, 3001);
    d.upload(r == 1 ? v : std::vector<std::complex<float>>(3001));
    comms[static_cast<std::size_t>(r)]->broadcast(d.get(), 3001 * sizeof(std::complex<float>), 1, ctx);
    got[static_cast<std::size_t>(r)] = d.download();
    EXPECT_TRUE(throws_error([&] { comms[static_cast<std::size_t>(r)]->broadcast(d.get(), 8, k, ctx); },
                             ErrorCode::kInvalidArgument));  // root outside [0, k): checked before NCCL
  });
  for (int r = 0; r < k; ++r) EXPECT_EQ(got[static_cast<std::size_t>(r)], v) << "rank " << r;
}

// rank_sum's prepare_normal on k devices: the field-corrected coil-split SENSE normal whose L'
// kernels are split over the devices (kernel l built on device l mod k, ncclBroadcast from
// there), against the same parts prepared alone on each device. Bound: the GPU type 1
// transform's atomic additions make kernels computed on another device (or in another run)
// differ in the last bits: 1e-4 (float), 1e-10 (double), as check_cg's.
template <class T>
void check_shared_normal(int k) {
  auto comms = make_comms(k);
  const FieldSplitSense<T> p;
  on_every_rank(comms, [&](int r) {
    const Context ctx = Context::cuda(r);
    const dist::Share share = dist::split(FieldSplitSense<T>::kCoils, k, r);
    auto part = p.part(ctx, share);
    EXPECT_TRUE(part->can_share_normal());
    auto shared = dist::rank_sum<T>(part, comms[static_cast<std::size_t>(r)]);
    shared->prepare_normal();
    auto alone_part = p.part(ctx, share);
    alone_part->prepare_normal();
    auto alone = dist::rank_sum<T>(alone_part, comms[static_cast<std::size_t>(r)]);
    const auto x = random_complex<T>(shared->domain_size(), 13);
    ContextVector<T> xv(ctx, shared->domain_size()), zs(ctx, shared->domain_size()), za(ctx, shared->domain_size());
    xv.upload(x);
    shared->apply_normal(xv.get(), zs.get());
    alone->apply_normal(xv.get(), za.get());
    EXPECT_LE(rel_error(zs.download(), widen(za.download())), sizeof(T) == 4 ? 1e-4 : 1e-10) << "rank " << r;
  });
}
TEST(NcclDevices, SharedFieldNormalOnOneDeviceEqualsUnsharedFloat) {
  FIELDFT_SKIP_UNLESS_NCCL(1);
  check_shared_normal<float>(1);
}
TEST(NcclDevices, SharedFieldNormalOnEveryDeviceEqualsUnsharedFloat) {
  FIELDFT_SKIP_UNLESS_NCCL(2);
  check_shared_normal<float>(visible_devices(FieldSplitSense<float>::kCoils));
}
TEST(NcclDevices, SharedFieldNormalOnEveryDeviceEqualsUnsharedDouble) {
  FIELDFT_SKIP_UNLESS_NCCL(2);
  check_shared_normal<double>(visible_devices(FieldSplitSense<double>::kCoils));
}

}  // namespace
}  // namespace fieldft::test
