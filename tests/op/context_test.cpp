// fieldft::Context, Location, require_same_place and op::Workspace, on the backend under test
// (FIELDFT_TEST_BACKEND). Host facts are checked by both executables; the CUDA executable adds
// streams (owned, borrowed, the legacy default), device guarding and device workspace.
#include "fieldft/context.hpp"

#include <memory>
#include <string>
#include <vector>

#include "fieldft/config.hpp"
#include "fieldft/op/linear_operator.hpp"
#include "support/battery.hpp"

#if FIELDFT_TEST_BACKEND == 2
#include <cuda_runtime.h>
#endif

namespace fieldft::test {
namespace {

TEST(Context, HostDefaults) {
  const Context c;
  EXPECT_TRUE(c.is_host());
  EXPECT_FALSE(c.is_cuda());
  EXPECT_EQ(c.backend(), Backend::kCpu);
  EXPECT_EQ(c.device(), -1);
  EXPECT_EQ(c.stream(), nullptr);
  EXPECT_FALSE(c.owns_stream());
  EXPECT_EQ(c.nthreads(), 0);
  EXPECT_EQ(c.location(), Location::host());
  EXPECT_EQ(c.location().to_string(), "host");
  EXPECT_EQ(c.describe().rfind("host (all ", 0), 0u) << c.describe();
  c.synchronize();  // a no-op on the host
}

TEST(Context, HostThreads) {
  EXPECT_EQ(Context::host(4).nthreads(), 4);
  EXPECT_EQ(Context::host(4).describe(), "host (4 threads)");
  EXPECT_EQ(Context::host(1).describe(), "host (1 thread)");
  EXPECT_TRUE(Context::host(1).same_place(Context::host(8)));  // threads do not make a place
  EXPECT_TRUE(throws_error([] { (void)Context::host(-1); }, ErrorCode::kInvalidArgument, {"nthreads", "-1"}));
}

TEST(Context, Locations) {
  EXPECT_EQ(Location::cuda(2).to_string(), "cuda:2");
  EXPECT_TRUE(Location::cuda(2).is_cuda());
  EXPECT_EQ(Location::cuda(2).backend(), Backend::kCuda);
  EXPECT_EQ(Location::cuda(1), Location::cuda(1));
  EXPECT_NE(Location::cuda(0), Location::cuda(1));
  EXPECT_NE(Location::cuda(0), Location::host());
}

TEST(Context, Names) {
  EXPECT_STREQ(error_code_name(ErrorCode::kContextMismatch), "context mismatch");
  EXPECT_EQ(static_cast<int>(ErrorCode::kContextMismatch), 12);
  for (Backend b : {Backend::kAuto, Backend::kCpu, Backend::kCuda}) EXPECT_EQ(parse_backend(backend_name(b)), b);
}

TEST(Context, SamePlaceOnTheHost) { EXPECT_NO_THROW(require_same_place(Context::host(2), Context(), "test")); }

TEST(Context, FromOptionsHost) {
  const Context c = Context::from_options(Backend::kCpu, 0, nullptr, 3, true);
  EXPECT_TRUE(c.is_host());
  EXPECT_EQ(c.nthreads(), 3);
  EXPECT_TRUE(throws_error([] { (void)Context::from_options(Backend::kCpu, 0, nullptr, -2, false); },
                           ErrorCode::kInvalidArgument, {"nthreads"}));
  // kAuto follows the NUFFT plan's rule: CUDA when compiled in and a device is present.
  const Context a = Context::from_options(Backend::kAuto, 0, nullptr, 0, true);
  EXPECT_EQ(a.is_cuda(), backend_unavailable_reason(Backend::kCuda).empty()) << a.describe();
}

TEST(Context, CudaWithoutCuda) {
#if FIELDFT_HAVE_CUDA
  GTEST_SKIP() << "this fieldft has CUDA compiled in";
#else
  EXPECT_TRUE(throws_error([] { (void)Context::cuda(0); }, ErrorCode::kBackendUnavailable, {"without CUDA"}));
  EXPECT_TRUE(throws_error([] { (void)Context::cuda(0, nullptr); }, ErrorCode::kBackendUnavailable, {"without CUDA"}));
  EXPECT_TRUE(throws_error([] { (void)Context::from_options(Backend::kCuda, 0, nullptr, 0, true); },
                           ErrorCode::kBackendUnavailable));
#endif
}

TEST(Workspace, HostGrowsAndReuses) {
  op::Workspace ws(Context::host());
  void* a = ws.get(64);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(ws.get(32), a);  // smaller requests reuse the block
  auto* d = ws.get_as<double>(1000);
  ASSERT_NE(d, nullptr);
  for (int i = 0; i < 1000; ++i) d[i] = i;  // the whole block is writable
  EXPECT_EQ(d[999], 999.0);
  EXPECT_NE(ws.get(0), nullptr);
}

#if FIELDFT_TEST_BACKEND == 2

int current_device() {
  int d = -1;
  EXPECT_EQ(cudaGetDevice(&d), cudaSuccess);
  return d;
}

int visible_devices() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) return 0;
  return n;
}

TEST(ContextCuda, OwnedStream) {
  FIELDFT_TEST_SKIP_UNLESS_AVAILABLE(kBackend);
  const int before = current_device();
  Context c = Context::cuda(0);
  EXPECT_TRUE(c.is_cuda());
  EXPECT_EQ(c.backend(), Backend::kCuda);
  EXPECT_EQ(c.device(), 0);
  EXPECT_EQ(c.location(), Location::cuda(0));
  ASSERT_NE(c.stream(), nullptr);
  EXPECT_TRUE(c.owns_stream());
  EXPECT_EQ(c.describe(), "cuda:0 (own stream)");
  auto s = static_cast<cudaStream_t>(c.stream());
  unsigned flags = 0;
  ASSERT_EQ(cudaStreamGetFlags(s, &flags), cudaSuccess);
  EXPECT_EQ(flags & cudaStreamNonBlocking, static_cast<unsigned>(cudaStreamNonBlocking));
  EXPECT_NO_THROW(c.synchronize());
  EXPECT_EQ(current_device(), before);

  // Copies share the stream, and it lives as long as any copy.
  auto copy = std::make_unique<Context>(c);
  EXPECT_EQ(copy->stream(), c.stream());
  EXPECT_TRUE(copy->same_place(c));
  c = Context::host();
  EXPECT_EQ(cudaStreamQuery(s), cudaSuccess);
  EXPECT_NO_THROW(copy->synchronize());
  copy.reset();  // the last copy: destroys the stream, on its device, restoring the caller's
  EXPECT_EQ(current_device(), before);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

TEST(ContextCuda, ManyOwnedStreamsComeAndGo) {
  FIELDFT_TEST_SKIP_UNLESS_AVAILABLE(kBackend);
  // Streams that were never destroyed would accumulate; a few thousand must not exhaust anything.
  for (int i = 0; i < 2000; ++i) {
    Context c = Context::cuda(0);
    ASSERT_NE(c.stream(), nullptr);
  }
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

TEST(ContextCuda, BorrowedStreamIsNotDestroyed) {
  FIELDFT_TEST_SKIP_UNLESS_AVAILABLE(kBackend);
  cudaStream_t s = nullptr;
  ASSERT_EQ(cudaStreamCreate(&s), cudaSuccess);
  {
    const Context c = Context::cuda(0, s);
    EXPECT_EQ(c.stream(), static_cast<void*>(s));
    EXPECT_FALSE(c.owns_stream());
    EXPECT_EQ(c.describe().rfind("cuda:0 (stream 0x", 0), 0u) << c.describe();
    EXPECT_NO_THROW(c.synchronize());
  }
  EXPECT_EQ(cudaStreamQuery(s), cudaSuccess);  // still alive after the context
  EXPECT_EQ(cudaStreamDestroy(s), cudaSuccess);
}

TEST(ContextCuda, LegacyDefaultStream) {
  FIELDFT_TEST_SKIP_UNLESS_AVAILABLE(kBackend);
  const Context c = Context::cuda(0, nullptr);
  EXPECT_EQ(c.stream(), nullptr);
  EXPECT_FALSE(c.owns_stream());
  EXPECT_EQ(c.describe(), "cuda:0 (default stream)");
  EXPECT_NO_THROW(c.synchronize());
  // Workspace on the legacy stream (cudaMallocAsync accepts it).
  op::Workspace ws(c);
  EXPECT_NE(ws.get(1024), nullptr);
}

TEST(ContextCuda, MissingDevice) {
  FIELDFT_TEST_SKIP_UNLESS_AVAILABLE(kBackend);
  const int n = visible_devices();
  EXPECT_TRUE(throws_error([n] { (void)Context::cuda(n); }, ErrorCode::kBackendUnavailable, {std::to_string(n)}));
  EXPECT_TRUE(throws_error([] { (void)Context::cuda(-1, nullptr); }, ErrorCode::kBackendUnavailable));
}

TEST(ContextCuda, PlacesDiffer) {
  FIELDFT_TEST_SKIP_UNLESS_AVAILABLE(kBackend);
  const Context a = Context::cuda(0), b = Context::cuda(0), legacy = Context::cuda(0, nullptr);
  EXPECT_FALSE(a.same_place(b));  // same device, different streams
  EXPECT_FALSE(a.same_place(legacy));
  EXPECT_FALSE(a.same_place(Context::host()));
  EXPECT_TRUE(a.same_place(Context(a)));
  EXPECT_TRUE(legacy.same_place(Context::cuda(0, nullptr)));
  EXPECT_TRUE(throws_error([&] { require_same_place(a, Context::host(), "sum(A, B)"); }, ErrorCode::kContextMismatch,
                           {"sum(A, B)", "cuda:0", "host"}));
  EXPECT_TRUE(throws_error([&] { require_same_place(a, b, "compose(A, B)"); }, ErrorCode::kContextMismatch,
                           {"compose(A, B)", "own stream"}));
}

TEST(ContextCuda, FromOptions) {
  FIELDFT_TEST_SKIP_UNLESS_AVAILABLE(kBackend);
  const Context own = Context::from_options(Backend::kCuda, 0, nullptr, 2, true);
  EXPECT_TRUE(own.owns_stream());
  EXPECT_EQ(own.nthreads(), 2);
  const Context legacy = Context::from_options(Backend::kCuda, 0, nullptr, 0, false);
  EXPECT_FALSE(legacy.owns_stream());
  EXPECT_EQ(legacy.stream(), nullptr);
  const Context borrowed = Context::from_options(Backend::kAuto, 0, own.stream(), 0, true);
  EXPECT_FALSE(borrowed.owns_stream());
  EXPECT_TRUE(borrowed.same_place(own));
}

TEST(ContextCuda, OtherDeviceRestoresCurrent) {
  FIELDFT_TEST_SKIP_UNLESS_AVAILABLE(kBackend);
  if (visible_devices() < 2) GTEST_SKIP() << "needs two CUDA devices";
  ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
  {
    const Context c = Context::cuda(1);
    EXPECT_EQ(current_device(), 0);
#if CUDART_VERSION >= 12080
    int owner = -1;
    ASSERT_EQ(cudaStreamGetDevice(static_cast<cudaStream_t>(c.stream()), &owner), cudaSuccess);
    EXPECT_EQ(owner, 1);
#endif
    op::Workspace ws(c);
    void* p = ws.get(4096);
    cudaPointerAttributes attr{};
    ASSERT_EQ(cudaPointerGetAttributes(&attr, p), cudaSuccess);
    EXPECT_EQ(attr.device, 1);
    EXPECT_EQ(current_device(), 0);
    c.synchronize();
#if CUDART_VERSION >= 12080  // the check needs cudaStreamGetDevice
    // A stream of device 1 is not a stream of device 0.
    EXPECT_TRUE(throws_error([&] { (void)Context::cuda(0, c.stream()); }, ErrorCode::kInvalidArgument, {"device 1"}));
#endif
  }
  EXPECT_EQ(current_device(), 0);
}

TEST(WorkspaceCuda, DeviceMemoryOnTheStream) {
  FIELDFT_TEST_SKIP_UNLESS_AVAILABLE(kBackend);
  const Context c = Context::cuda(0);
  op::Workspace ws(c);
  auto* p = ws.get_as<float>(1 << 20);
  ASSERT_NE(p, nullptr);
  cudaPointerAttributes attr{};
  ASSERT_EQ(cudaPointerGetAttributes(&attr, p), cudaSuccess);
  EXPECT_EQ(attr.type, cudaMemoryTypeDevice);
  EXPECT_EQ(attr.device, 0);
  EXPECT_EQ(ws.get(1024), static_cast<void*>(p));  // reused
  // Stream-ordered use of the block: fill it on the context's stream and read it back.
  auto s = static_cast<cudaStream_t>(c.stream());
  ASSERT_EQ(cudaMemsetAsync(p, 0, 4096, s), cudaSuccess);
  std::vector<float> back(1024, 1.0f);
  ASSERT_EQ(cudaMemcpyAsync(back.data(), p, 4096, cudaMemcpyDeviceToHost, s), cudaSuccess);
  c.synchronize();
  EXPECT_EQ(back[0], 0.0f);
  EXPECT_EQ(back[1023], 0.0f);
  EXPECT_NE(ws.get(std::size_t{64} << 20), nullptr);  // growth: freed and reallocated on the stream
  c.synchronize();
}

#endif  // FIELDFT_TEST_BACKEND == 2

}  // namespace
}  // namespace fieldft::test
