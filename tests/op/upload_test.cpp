// op::upload_rows, op::PinnedHost and op::StagingBuffer (src/op/upload.hpp) on the backend under
// test (FIELDFT_TEST_BACKEND): rows of a strided volume (one slice of every coil) land in context
// memory one after another, as the host cuts them out, from pageable or pinned memory, or through
// a staging buffer (reused after begin(), several threads, more than it holds refused); a build
// without CUDA says why it cannot pin; a pitch shorter than a row is refused; a staging buffer
// wants a CUDA context.
#include "op/upload.hpp"

#include <complex>
#include <cstdint>
#include <string>
#include <vector>

#include "fieldft/config.hpp"
#include "fieldft/context.hpp"
#include "fieldft/op/linear_operator.hpp"
#include "support/battery.hpp"
#include "support/context_vector.hpp"

namespace fieldft::test {
namespace {

using C = std::complex<float>;

TEST(Upload, RowsOfAStridedVolume) {
  FIELDFT_TEST_SKIP_UNLESS_AVAILABLE(kBackend);
  const Context c = test_context();
  // 3 coils x 4 slices x 5 voxels, coil slowest: slice 2 of every coil is 3 rows of 5 values at a
  // pitch of 20.
  constexpr std::int64_t kPlane = 5, kSlices = 4, kCoils = 3, kZ = 2;
  std::vector<C> volume(static_cast<std::size_t>(kPlane * kSlices * kCoils));
  for (std::size_t i = 0; i < volume.size(); ++i) volume[i] = C(static_cast<float>(i), -0.5f * static_cast<float>(i));
  std::vector<C> want;
  for (std::int64_t k = 0; k < kCoils; ++k)
    for (std::int64_t v = 0; v < kPlane; ++v)
      want.push_back(volume[static_cast<std::size_t>(v + kPlane * kZ + kPlane * kSlices * k)]);
  const std::vector<int> devices = c.is_cuda() ? std::vector<int>{c.device()} : std::vector<int>{};
  for (const bool pin : {false, true}) {
    SCOPED_TRACE(pin ? "pinned" : "pageable");
    const op::PinnedHost pinned =
        pin ? op::PinnedHost(volume.data(), volume.size() * sizeof(C), devices) : op::PinnedHost();
    if (pin && !FIELDFT_HAVE_CUDA) {
      EXPECT_NE(pinned.why().find("without CUDA"), std::string::npos) << pinned.why();
    }
    if (pin && c.is_cuda()) {
      EXPECT_TRUE(pinned.pinned()) << pinned.why();
    }
    if (pin && !pinned.pinned()) {
      EXPECT_FALSE(pinned.why().empty()) << "a reason where it cannot pin";
    }
    op::Workspace ws(c);
    const C* p = op::upload_rows(ws, volume.data() + kPlane * kZ, kPlane, kCoils, kPlane * kSlices);
    EXPECT_EQ(ContextVector<float>::read_from(c, p, kPlane * kCoils), want);
  }
  op::Workspace ws(c);
  EXPECT_NO_THROW((void)op::upload_rows(ws, volume.data(), kPlane, 0, kPlane));
  EXPECT_TRUE(throws_error([&] { (void)op::upload_rows(ws, volume.data(), kPlane, kCoils, kPlane - 1); },
                           ErrorCode::kInvalidArgument, {"pitch"}));
}

TEST(Upload, ThroughAStagingBuffer) {
  FIELDFT_TEST_SKIP_UNLESS_AVAILABLE(kBackend);
  const Context c = test_context();
  if (!c.is_cuda()) {
    EXPECT_TRUE(throws_error([&] { op::StagingBuffer b(c, 1024, 2); }, ErrorCode::kInvalidArgument, {"CUDA"}));
    return;
  }
  // Two "slices" in turn through one buffer: each a contiguous k-space and one plane of every
  // coil of a volume, on 1 and 4 threads (rows split across threads where 4 do not divide them).
  constexpr std::int64_t kPlane = 1001, kSlices = 3, kCoils = 5, kSamples = 777;
  std::vector<C> volume(static_cast<std::size_t>(kPlane * kSlices * kCoils)),
      kspace(static_cast<std::size_t>(2 * kSamples));
  for (std::size_t i = 0; i < volume.size(); ++i) volume[i] = C(static_cast<float>(i), 0.25f * static_cast<float>(i));
  for (std::size_t i = 0; i < kspace.size(); ++i) kspace[i] = C(-static_cast<float>(i), 1.0f);
  for (const int threads : {1, 4}) {
    SCOPED_TRACE(threads);
    op::StagingBuffer buffer(c, (kSamples + kPlane * kCoils) * sizeof(C) + 256, threads);
    EXPECT_TRUE(buffer.pinned()) << buffer.why();
    for (const std::int64_t z : {2, 0}) {
      buffer.begin();
      op::Workspace y_ws(c), m_ws(c);
      const std::span<const C> y(kspace.data() + (z / 2) * kSamples, kSamples);
      const C* yd = buffer.upload(y_ws, y);
      const C* md = buffer.upload_rows(m_ws, volume.data() + kPlane * z, kPlane, kCoils, kPlane * kSlices);
      std::vector<C> want;
      for (std::int64_t k = 0; k < kCoils; ++k)
        for (std::int64_t v = 0; v < kPlane; ++v)
          want.push_back(volume[static_cast<std::size_t>(v + kPlane * z + kPlane * kSlices * k)]);
      EXPECT_EQ(ContextVector<float>::read_from(c, yd, kSamples), std::vector<C>(y.begin(), y.end()));
      EXPECT_EQ(ContextVector<float>::read_from(c, md, kPlane * kCoils), want);
    }
    // Full until begin(): a third upload does not fit.
    op::Workspace ws(c);
    EXPECT_TRUE(throws_error([&] { (void)buffer.upload(ws, std::span<const C>(kspace)); }, ErrorCode::kInvalidArgument,
                             {"do not fit"}));
    // A workspace on another stream: begin() would not wait for its copies.
    const Context other = Context::from_options(Backend::kCuda, c.device(), nullptr, 1, /*own_stream=*/true);
    op::Workspace elsewhere(other);
    buffer.begin();
    EXPECT_TRUE(throws_error([&] { (void)buffer.upload(elsewhere, std::span<const C>(kspace)); },
                             ErrorCode::kInvalidArgument, {"stream"}));
  }
}

}  // namespace
}  // namespace fieldft::test
