// dist::mpi_world / mpi_comm: an MPI communicator as a Communicator (include/fieldft/dist.hpp).
// Host memory only; every call blocks. Counts above INT_MAX (MPI's int counts) go in several calls.
// Only the C API: Open MPI's deprecated C++ bindings would come with mpi.h otherwise.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <type_traits>

#include "fieldft/dist.hpp"

namespace fieldft::dist {

bool have_mpi() noexcept { return true; }

namespace {

void check_mpi(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING] = {};
  int len = 0;
  MPI_Error_string(rc, text, &len);
  throw Error(ErrorCode::kInternal, std::string("dist::mpi: ") + what + " failed: " + std::string(text, len));
}

// The largest piece one MPI call takes, in elements (MPI counts are int).
constexpr std::int64_t kMaxCount = INT_MAX;

class MpiComm final : public Communicator {
 public:
  explicit MpiComm(MPI_Comm comm) : comm_(comm) {
    check_mpi(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank");
    check_mpi(MPI_Comm_size(comm_, &size_), "MPI_Comm_size");
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  Engine engine() const override { return Engine::kMpi; }
  std::string describe() const override {
    return "mpi: rank " + std::to_string(rank_) + " of " + std::to_string(size_);
  }
  bool sums_in(const Context& ctx) const override { return ctx.is_host(); }

  void allreduce_sum(std::complex<float>* data, std::int64_t n, const Context& ctx) override {
    sum(data, n, ctx, MPI_C_FLOAT_COMPLEX);
  }
  void allreduce_sum(std::complex<double>* data, std::int64_t n, const Context& ctx) override {
    sum(data, n, ctx, MPI_C_DOUBLE_COMPLEX);
  }

  int agree_max(int value) override {
    int out = value;
    check_mpi(MPI_Allreduce(&value, &out, 1, MPI_INT, MPI_MAX, comm_), "MPI_Allreduce (agree_max)");
    return out;
  }

  void broadcast_bytes(void* data, std::size_t bytes, int root) override {
    require(root >= 0 && root < size_, ErrorCode::kInvalidArgument,
            "dist::mpi: broadcast root " + std::to_string(root) + " outside [0, " + std::to_string(size_) + ")");
    require(data != nullptr || bytes == 0, ErrorCode::kInvalidArgument, "dist::mpi: broadcast of null data");
    auto* p = static_cast<char*>(data);
    for (std::size_t done = 0; done < bytes;) {
      const std::size_t piece = std::min<std::size_t>(bytes - done, kMaxCount);
      check_mpi(MPI_Bcast(p + done, static_cast<int>(piece), MPI_BYTE, root, comm_), "MPI_Bcast");
      done += piece;
    }
  }

  void broadcast(void* data, std::size_t bytes, int root, const Context& ctx) override {
    require(ctx.is_host(), ErrorCode::kInvalidArgument,
            "dist::mpi: broadcast of data in " + ctx.describe() +
                "; MPI broadcasts host memory (use an NCCL communicator, dist::nccl_over, for device memory)");
    broadcast_bytes(data, bytes, root);
  }

  [[noreturn]] void abort(const std::string& message) override {
    std::fprintf(stderr, "fieldft: rank %d of %d aborts: %s\n", rank_, size_, message.c_str());
    std::fflush(stderr);
    MPI_Abort(comm_, 1);
    std::_Exit(1);  // MPI_Abort does not return; in case it does
  }

 private:
  template <class C>
  void sum(C* data, std::int64_t n, const Context& ctx, MPI_Datatype type) {
    require(n >= 0, ErrorCode::kInvalidArgument,
            "dist::mpi: allreduce_sum of " + std::to_string(n) + " values (expected n >= 0)");
    require(ctx.is_host(), ErrorCode::kInvalidArgument,
            "dist::mpi: allreduce_sum of data in " + ctx.describe() +
                "; MPI sums host memory (use an NCCL communicator, dist::nccl_over, for device memory)");
    require(data != nullptr || n == 0, ErrorCode::kInvalidArgument, "dist::mpi: allreduce_sum of null data");
    for (std::int64_t done = 0; done < n;) {
      const std::int64_t piece = std::min(n - done, kMaxCount);
      check_mpi(MPI_Allreduce(MPI_IN_PLACE, data + done, static_cast<int>(piece), type, MPI_SUM, comm_),
                "MPI_Allreduce");
      done += piece;
    }
  }

  MPI_Comm comm_;
  int rank_ = 0, size_ = 1;
};

// MPI_Finalize at exit, registered only when fieldft initialised MPI.
void finalize_at_exit() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

}  // namespace

CommPtr mpi_world() {
  static std::mutex mutex;
  static CommPtr world;
  std::lock_guard<std::mutex> lock(mutex);
  if (world) return world;
  int initialized = 0, finalized = 0;
  check_mpi(MPI_Initialized(&initialized), "MPI_Initialized");
  check_mpi(MPI_Finalized(&finalized), "MPI_Finalized");
  require(!finalized, ErrorCode::kInvalidState, "dist::mpi_world: MPI was already finalised");
  if (!initialized) {
    // Only the thread that called this calls MPI afterwards (for_each_problem's workers never
    // do), which FUNNELED allows.
    int provided = 0;
    check_mpi(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
    std::atexit(finalize_at_exit);
  }
  world = std::make_shared<MpiComm>(MPI_COMM_WORLD);
  return world;
}

}  // namespace fieldft::dist

namespace fieldft::dist {

namespace {

// MPI_Comm is a pointer in Open MPI and an int in MPICH; the handle carries either.
template <class Comm>
Comm comm_of(std::intptr_t handle) {
  if constexpr (std::is_pointer_v<Comm>)
    return reinterpret_cast<Comm>(handle);
  else
    return static_cast<Comm>(handle);
}

}  // namespace

CommPtr mpi_comm(std::intptr_t handle) {
  int initialized = 0, finalized = 0;
  check_mpi(MPI_Initialized(&initialized), "MPI_Initialized");
  check_mpi(MPI_Finalized(&finalized), "MPI_Finalized");
  require(initialized && !finalized, ErrorCode::kInvalidState,
          "dist::mpi_comm: MPI is not initialised (or already finalised); the communicator's owner initialises it");
  const MPI_Comm comm = comm_of<MPI_Comm>(handle);
  require(comm != MPI_COMM_NULL, ErrorCode::kInvalidArgument, "dist::mpi_comm: MPI_COMM_NULL is no communicator");
  if (comm == MPI_COMM_WORLD) return mpi_world();
  return std::make_shared<MpiComm>(comm);
}

std::string mpi_library_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int len = 0;
  check_mpi(MPI_Get_library_version(text, &len), "MPI_Get_library_version");
  return std::string(text, static_cast<std::size_t>(len));
}

}  // namespace fieldft::dist
