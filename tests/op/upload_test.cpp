// op::upload_rows and op::PinnedHost (src/op/upload.hpp) on the backend under test
// (FIELDFT_TEST_BACKEND): rows of a strided volume (one slice of every coil) land in context
// memory one after another, as the host cuts them out, from pageable or pinned memory; a build
// without CUDA says why it cannot pin; a pitch shorter than a row is refused.
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

}  // namespace
}  // namespace fieldft::test
