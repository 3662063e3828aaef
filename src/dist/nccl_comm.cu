// NCCL communicators (include/fieldft/dist.hpp), CUDA builds with NCCL only. allreduce_sum is
// one ncclAllReduce on the caller's stream (a complex sum is the sum of its real and imaginary
// parts: 2n reals), broadcast one ncclBroadcast on it; the host-blocking collectives (agree_max, broadcast_bytes) go through a small
// device buffer on the communicator's own stream and wait for it. NVLink multicast (NVLS) is
// neither used nor configured here: NCCL's own choice and the environment decide.
#include <nccl.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cuda/cuda_check.cuh"
#include "cuda/device_utils.cuh"
#include "cuda/stream.hpp"
#include "fieldft/dist.hpp"

namespace fieldft::dist {

bool have_nccl() noexcept { return true; }

namespace {

// DeviceGuard for paths that must not throw (destructors, abort): a failed switch is ignored,
// and the NCCL call after it reports its own error.
class QuietDeviceGuard {
 public:
  explicit QuietDeviceGuard(int device) noexcept {
    if (cudaGetDevice(&previous_) != cudaSuccess) previous_ = -1;
    cudaSetDevice(device);
  }
  ~QuietDeviceGuard() {
    if (previous_ >= 0) cudaSetDevice(previous_);
  }
  QuietDeviceGuard(const QuietDeviceGuard&) = delete;
  QuietDeviceGuard& operator=(const QuietDeviceGuard&) = delete;

 private:
  int previous_ = -1;
};

void check_nccl(ncclResult_t r, const char* what) {
  if (r == ncclSuccess) return;
  throw Error(ErrorCode::kCuda, std::string("dist::nccl: ") + what + " failed: " + ncclGetErrorString(r));
}

// The communicators made together (one ncclCommInitAll, or one rank of nccl_over): abort stops
// all of them once, and a stopped communicator is aborted, never destroyed.
struct Group {
  std::mutex mutex;
  std::vector<ncclComm_t> comms;  // this process's members
  std::vector<int> devices;
  bool aborted = false;
  CommPtr host;                   // nccl_over: the host communicator whose abort stops the processes

  void abort_all() noexcept {
    std::lock_guard<std::mutex> lock(mutex);
    if (aborted) return;
    aborted = true;
    for (std::size_t i = 0; i < comms.size(); ++i) {
      if (comms[i] == nullptr) continue;
      QuietDeviceGuard guard(devices[i]);
      ncclCommAbort(comms[i]);  // also returns peers blocked in a collective of this group
    }
  }
};

class NcclComm final : public Communicator {
 public:
  NcclComm(std::shared_ptr<Group> group, std::size_t member, int rank, int size, int device)
      : group_(std::move(group)), member_(member), rank_(rank), size_(size), device_(device) {
    cuda::DeviceGuard guard(device_);
    FIELDFT_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  }
  ~NcclComm() override {
    QuietDeviceGuard guard(device_);
    {
      std::lock_guard<std::mutex> lock(group_->mutex);
      if (!group_->aborted) ncclCommDestroy(comm());
      group_->comms[member_] = nullptr;
    }
    cudaStreamDestroy(stream_);
  }

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  Engine engine() const override { return Engine::kNccl; }
  std::string describe() const override {
    return "nccl: rank " + std::to_string(rank_) + " of " + std::to_string(size_) + " (cuda:" +
           std::to_string(device_) + ")";
  }
  bool sums_in(const Context& ctx) const override { return ctx.is_cuda() && ctx.device() == device_; }

  void allreduce_sum(std::complex<float>* data, std::int64_t n, const Context& ctx) override {
    sum(data, n, ctx, ncclFloat);
  }
  void allreduce_sum(std::complex<double>* data, std::int64_t n, const Context& ctx) override {
    sum(data, n, ctx, ncclDouble);
  }

  int agree_max(int value) override {
    require_usable("agree_max");
    cuda::DeviceGuard guard(device_);
    int* d = static_cast<int*>(cuda::malloc_async(sizeof(int), device_, stream_));
    int out = value;
    FIELDFT_CUDA_CHECK(cudaMemcpyAsync(d, &value, sizeof(int), cudaMemcpyHostToDevice, stream_));
    const ncclResult_t r = ncclAllReduce(d, d, 1, ncclInt32, ncclMax, comm(), stream_);
    FIELDFT_CUDA_CHECK(cudaMemcpyAsync(&out, d, sizeof(int), cudaMemcpyDeviceToHost, stream_));
    cuda::free_async(d, device_, stream_);
    check_nccl(r, "ncclAllReduce (agree_max)");
    FIELDFT_CUDA_CHECK(cudaStreamSynchronize(stream_));
    return out;
  }

  void broadcast_bytes(void* data, std::size_t bytes, int root) override {
    require(root >= 0 && root < size_, ErrorCode::kInvalidArgument,
            "dist::nccl: broadcast root " + std::to_string(root) + " outside [0, " + std::to_string(size_) + ")");
    require(data != nullptr || bytes == 0, ErrorCode::kInvalidArgument, "dist::nccl: broadcast of null data");
    require_usable("broadcast_bytes");
    if (bytes == 0) return;
    cuda::DeviceGuard guard(device_);
    // The staging buffer is padded to 16 bytes: NCCL's low-latency broadcast reads the buffer's
    // last word whole, past `bytes` when it is not a multiple of the word (compute-sanitizer
    // memcheck on 4 H200s: a 4-byte read at offset 156 of a 157-byte message).
    void* d = cuda::malloc_async((bytes + 15) / 16 * 16, device_, stream_);
    if (rank_ == root) FIELDFT_CUDA_CHECK(cudaMemcpyAsync(d, data, bytes, cudaMemcpyHostToDevice, stream_));
    const ncclResult_t r = ncclBroadcast(d, d, bytes, ncclUint8, root, comm(), stream_);
    if (r == ncclSuccess) FIELDFT_CUDA_CHECK(cudaMemcpyAsync(data, d, bytes, cudaMemcpyDeviceToHost, stream_));
    cuda::free_async(d, device_, stream_);
    check_nccl(r, "ncclBroadcast");
    FIELDFT_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

  void broadcast(void* data, std::size_t bytes, int root, const Context& ctx) override {
    require(root >= 0 && root < size_, ErrorCode::kInvalidArgument,
            "dist::nccl: broadcast root " + std::to_string(root) + " outside [0, " + std::to_string(size_) + ")");
    require_stream_data(data, bytes == 0, ctx, "broadcast");
    if (bytes == 0) return;
    cuda::DeviceGuard guard(device_);
    check_nccl(ncclBroadcast(data, data, bytes, ncclUint8, root, comm(), static_cast<cudaStream_t>(ctx.stream())),
               "ncclBroadcast");
  }

  void abort(const std::string& message) override {
    std::fprintf(stderr, "fieldft: %s aborts: %s\n", describe().c_str(), message.c_str());
    std::fflush(stderr);
    group_->abort_all();
    if (group_->host) group_->host->abort(message);  // other processes: MPI_Abort
  }

 private:
  ncclComm_t comm() const { return group_->comms[member_]; }

  void require_usable(const char* what) const {
    require(!group_->aborted, ErrorCode::kInvalidState,
            std::string("dist::nccl: ") + what + " on " + describe() + " after abort");
  }

  // The checks of a collective enqueued on ctx's stream over `data` (empty: no values).
  void require_stream_data(const void* data, bool empty, const Context& ctx, const char* what) const {
    require(sums_in(ctx), ErrorCode::kInvalidArgument,
            std::string("dist::nccl: ") + what + " of data in " + ctx.describe() + " on " + describe() +
                " (expected memory of cuda:" + std::to_string(device_) + ")");
    require(data != nullptr || empty, ErrorCode::kInvalidArgument, std::string("dist::nccl: ") + what + " of null data");
    require_usable(what);
  }

  template <class C>
  void sum(C* data, std::int64_t n, const Context& ctx, ncclDataType_t type) {
    require(n >= 0, ErrorCode::kInvalidArgument,
            "dist::nccl: allreduce_sum of " + std::to_string(n) + " values (expected n >= 0)");
    require_stream_data(data, n == 0, ctx, "allreduce_sum");
    if (n == 0) return;
    cuda::DeviceGuard guard(device_);
    check_nccl(ncclAllReduce(data, data, 2 * static_cast<std::size_t>(n), type, ncclSum, comm(),
                             static_cast<cudaStream_t>(ctx.stream())),
               "ncclAllReduce");
  }

  std::shared_ptr<Group> group_;
  std::size_t member_ = 0;
  int rank_ = 0, size_ = 1, device_ = 0;
  cudaStream_t stream_ = nullptr;
};

}  // namespace

std::vector<CommPtr> nccl_devices(std::span<const int> devices) {
  require(!devices.empty(), ErrorCode::kInvalidArgument, "dist::nccl_devices: no devices (expected at least one)");
  for (std::size_t i = 0; i < devices.size(); ++i) {
    cuda::require_device(devices[i]);
    for (std::size_t j = 0; j < i; ++j)
      require(devices[i] != devices[j], ErrorCode::kInvalidArgument,
              "dist::nccl_devices: device " + std::to_string(devices[i]) + " listed twice (expected distinct devices)");
  }
  auto group = std::make_shared<Group>();
  group->devices.assign(devices.begin(), devices.end());
  group->comms.assign(devices.size(), nullptr);
  {
    cuda::DeviceGuard guard(devices[0]);  // restores the caller's device afterwards
    check_nccl(ncclCommInitAll(group->comms.data(), static_cast<int>(devices.size()), group->devices.data()),
               "ncclCommInitAll");
  }
  std::vector<CommPtr> out;
  out.reserve(devices.size());
  const int k = static_cast<int>(devices.size());
  for (int r = 0; r < k; ++r)
    out.push_back(std::make_shared<NcclComm>(group, static_cast<std::size_t>(r), r, k, devices[static_cast<std::size_t>(r)]));
  return out;
}

CommPtr nccl_over(const CommPtr& host, int device) {
  require(host != nullptr, ErrorCode::kInvalidArgument, "dist::nccl_over: the host communicator is null");
  // Every rank checks its device and rank 0 makes the id; all agree before anyone waits for it.
  ncclUniqueId id{};
  agree_on_errors(host, [&] {
    cuda::require_device(device);
    if (host->rank() == 0) check_nccl(ncclGetUniqueId(&id), "ncclGetUniqueId");
  });
  host->broadcast_bytes(&id, sizeof(id), 0);
  auto group = std::make_shared<Group>();
  group->devices = {device};
  group->comms = {nullptr};
  group->host = host;
  try {
    agree_on_errors(host, [&] {
      cuda::DeviceGuard guard(device);
      check_nccl(ncclCommInitRank(&group->comms[0], host->size(), id, host->rank()), "ncclCommInitRank");
    });
  } catch (...) {
    group->abort_all();  // this rank's communicator, if it was made while another rank's failed
    throw;
  }
  return std::make_shared<NcclComm>(group, 0, host->rank(), host->size(), device);
}

}  // namespace fieldft::dist
