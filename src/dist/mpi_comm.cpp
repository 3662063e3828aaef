// dist::mpi_world / mpi_comm: an MPI communicator as a Communicator (include/fieldft/dist.hpp).
// Host memory only; every call blocks. Counts above INT_MAX (MPI's int counts) go in several calls.
// Only the C API: Open MPI's deprecated C++ bindings would come with mpi.h otherwise.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

#include "dist/gather_check.hpp"
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

  void gather_pieces(std::span<const std::span<const std::byte>> mine, std::span<const std::span<std::byte>> into,
                     int root) override {
    require(root >= 0 && root < size_, ErrorCode::kInvalidArgument,
            "dist::mpi: gather root " + std::to_string(root) + " outside [0, " + std::to_string(size_) + ")");
    // The pieces' sizes on root: their counts, then the sizes themselves.
    const int count = static_cast<int>(mine.size());
    std::vector<std::uint64_t> own;
    for (const auto& m : mine) own.push_back(m.size());
    const bool is_root = rank_ == root;
    std::vector<int> counts(is_root ? static_cast<std::size_t>(size_) : 0), offsets(counts.size());
    check_mpi(MPI_Gather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, root, comm_), "MPI_Gather");
    std::vector<std::uint64_t> flat;
    if (is_root) {
      for (std::size_t r = 1; r < counts.size(); ++r) offsets[r] = offsets[r - 1] + counts[r - 1];
      flat.resize(static_cast<std::size_t>(offsets.back() + counts.back()));
    }
    check_mpi(MPI_Gatherv(own.data(), count, MPI_UINT64_T, flat.data(), counts.data(), offsets.data(), MPI_UINT64_T,
                          root, comm_),
              "MPI_Gatherv");
    std::vector<std::vector<std::uint64_t>> sizes(counts.size());
    for (std::size_t r = 0; r < counts.size(); ++r)
      sizes[r].assign(flat.begin() + offsets[r], flat.begin() + offsets[r] + counts[r]);
    // Root's verdict, with its reason, on every rank: nobody sends what root cannot take.
    std::string why = is_root ? detail::gather_mismatch(sizes, into) : std::string();
    std::uint64_t length = why.size();
    check_mpi(MPI_Bcast(&length, 1, MPI_UINT64_T, root, comm_), "MPI_Bcast");
    why.resize(static_cast<std::size_t>(length));
    if (length > 0) broadcast_bytes(why.data(), why.size(), root);
    require(why.empty(), ErrorCode::kInvalidArgument, "dist::mpi: gather: " + why);
    // One message per piece (several above INT_MAX bytes), one tag: MPI keeps the order of the
    // messages between two ranks on one tag, so root's receives, posted in order, match them.
    constexpr int kTag = 0x6761;
    std::vector<MPI_Request> requests;
    // Calls f(offset, size) for the pieces of at most INT_MAX bytes that `bytes` go in.
    const auto in_pieces = [](std::size_t bytes, auto&& f) {
      for (std::size_t done = 0; done < bytes;) {
        const int piece = static_cast<int>(std::min<std::size_t>(bytes - done, kMaxCount));
        f(done, piece);
        done += static_cast<std::size_t>(piece);
      }
    };
    if (!is_root) {
      for (const auto& m : mine)
        in_pieces(m.size(), [&](std::size_t at, int piece) {
          requests.emplace_back();
          check_mpi(MPI_Isend(m.data() + at, piece, MPI_BYTE, root, kTag, comm_, &requests.back()), "MPI_Isend");
        });
    } else {
      std::size_t at = 0;
      for (int r = 0; r < size_; ++r)
        for (std::size_t i = 0; i < sizes[static_cast<std::size_t>(r)].size(); ++i, ++at) {
          const std::span<std::byte> to = into[at];
          if (r != root) {
            in_pieces(to.size(), [&](std::size_t off, int piece) {
              requests.emplace_back();
              check_mpi(MPI_Irecv(to.data() + off, piece, MPI_BYTE, r, kTag, comm_, &requests.back()), "MPI_Irecv");
            });
          } else if (!mine[i].empty() && to.data() != mine[i].data()) {
            std::memcpy(to.data(), mine[i].data(), mine[i].size());
          }
        }
    }
    check_mpi(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
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
