// Built without NCCL (no CUDA, FIELDFT_NCCL off, or nccl.h / libnccl not found).
#include "fieldft/dist.hpp"

namespace fieldft::dist {

namespace {
[[noreturn]] void unavailable(const char* what) {
  throw Error(ErrorCode::kBackendUnavailable,
              std::string("dist::") + what +
                  ": fieldft was built without NCCL (a CUDA build with FIELDFT_NCCL and nccl.h + "
                  "libnccl from the CUDA toolkit, NCCL_ROOT or the nvidia-nccl-cu13 wheel)");
}
}  // namespace

bool have_nccl() noexcept { return false; }

std::vector<CommPtr> nccl_devices(std::span<const int> /*devices*/) { unavailable("nccl_devices"); }

CommPtr nccl_over(const CommPtr& /*host*/, int /*device*/) { unavailable("nccl_over"); }

}  // namespace fieldft::dist
