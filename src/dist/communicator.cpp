// The single-rank communicator and the environment queries of include/fieldft/dist.hpp.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>
#include <string>
#include <vector>

#include "dist/gather_check.hpp"
#include "fieldft/dist.hpp"

namespace fieldft::dist {

Communicator::~Communicator() = default;

// The generic gather: the pieces' sizes, root's verdict, then each piece, all through
// broadcast_bytes (every rank receives every piece; only root keeps them). For communicators whose
// engine has no cheaper way for host bytes (NCCL); MPI and single override it.
void Communicator::gather_pieces(std::span<const std::span<const std::byte>> mine,
                                 std::span<const std::span<std::byte>> into, int root) {
  const int k = size(), me = rank();
  require(root >= 0 && root < k, ErrorCode::kInvalidArgument,
          describe() + ": gather root " + std::to_string(root) + " outside [0, " + std::to_string(k) + ")");
  std::vector<std::vector<std::uint64_t>> sizes(static_cast<std::size_t>(k));
  for (int r = 0; r < k; ++r) {
    auto& s = sizes[static_cast<std::size_t>(r)];
    std::uint64_t count = mine.size();
    broadcast_bytes(&count, sizeof count, r);
    s.resize(static_cast<std::size_t>(count));
    if (me == r)
      for (std::size_t i = 0; i < s.size(); ++i) s[i] = mine[i].size();
    broadcast_bytes(s.data(), s.size() * sizeof(std::uint64_t), r);
  }
  std::string why = me == root ? detail::gather_mismatch(sizes, into) : std::string();
  std::uint64_t length = why.size();
  broadcast_bytes(&length, sizeof length, root);
  why.resize(static_cast<std::size_t>(length));
  broadcast_bytes(why.data(), why.size(), root);
  require(why.empty(), ErrorCode::kInvalidArgument, describe() + ": gather: " + why);
  std::vector<std::byte> scratch;
  std::size_t at = 0;  // the piece's index in `into`
  for (int r = 0; r < k; ++r)
    for (std::size_t i = 0; i < sizes[static_cast<std::size_t>(r)].size(); ++i, ++at) {
      const std::size_t bytes = static_cast<std::size_t>(sizes[static_cast<std::size_t>(r)][i]);
      if (bytes == 0) continue;
      if (r == root) {
        if (me == root && into[at].data() != mine[i].data()) std::memcpy(into[at].data(), mine[i].data(), bytes);
        continue;
      }
      std::byte* buffer = me == root ? into[at].data() : nullptr;
      if (me != root) {
        scratch.resize(bytes);
        buffer = scratch.data();
        if (me == r) std::memcpy(buffer, mine[i].data(), bytes);
      }
      broadcast_bytes(buffer, bytes, r);
    }
}

namespace {

class SingleComm final : public Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  Engine engine() const override { return Engine::kSingle; }
  std::string describe() const override { return "single"; }
  bool sums_in(const Context& /*ctx*/) const override { return true; }
  void allreduce_sum(std::complex<float>* /*data*/, std::int64_t n, const Context& /*ctx*/) override { check(n); }
  void allreduce_sum(std::complex<double>* /*data*/, std::int64_t n, const Context& /*ctx*/) override { check(n); }
  int agree_max(int value) override { return value; }
  void broadcast_bytes(void* /*data*/, std::size_t /*bytes*/, int root) override {
    require(root == 0, ErrorCode::kInvalidArgument,
            "dist::single: broadcast root " + std::to_string(root) + " outside [0, 1)");
  }
  void broadcast(void* /*data*/, std::size_t /*bytes*/, int root, const Context& /*ctx*/) override {
    broadcast_bytes(nullptr, 0, root);
  }
  void gather_pieces(std::span<const std::span<const std::byte>> mine, std::span<const std::span<std::byte>> into,
                     int root) override {
    broadcast_bytes(nullptr, 0, root);
    std::vector<std::vector<std::uint64_t>> sizes(1);
    for (const auto& m : mine) sizes[0].push_back(m.size());
    const std::string why = detail::gather_mismatch(sizes, into);
    require(why.empty(), ErrorCode::kInvalidArgument, "dist::single: gather: " + why);
    for (std::size_t i = 0; i < mine.size(); ++i)
      if (!mine[i].empty() && into[i].data() != mine[i].data())
        std::memcpy(into[i].data(), mine[i].data(), mine[i].size());
  }
  [[noreturn]] void abort(const std::string& message) override {
    std::fprintf(stderr, "fieldft: abort: %s\n", message.c_str());
    std::fflush(stderr);
    std::_Exit(1);
  }

 private:
  static void check(std::int64_t n) {
    require(n >= 0, ErrorCode::kInvalidArgument,
            "dist::single: allreduce_sum of " + std::to_string(n) + " values (expected n >= 0)");
  }
};

// A non-negative integer in environment variable `name`, else -1. Only the launcher's own
// variables are read here (mpirun / Slurm describe the ranks through the environment alone);
// the library's knobs are options, never environment variables.
long env_count(const char* name) {
  const char* s = std::getenv(name);
  if (s == nullptr || *s == '\0') return -1;
  char* end = nullptr;
  const long v = std::strtol(s, &end, 10);
  return (end != nullptr && *end == '\0' && v >= 0) ? v : -1;
}

}  // namespace

CommPtr single() {
  static const CommPtr one = std::make_shared<SingleComm>();
  return one;
}

bool launched_by_mpi() noexcept {
  // Open MPI's mpirun, then the PMI of MPICH / Slurm.
  return env_count("OMPI_COMM_WORLD_SIZE") > 1 || env_count("PMI_SIZE") > 1;
}

int launcher_local_rank() noexcept {
  for (const char* name : {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"})
    if (const long v = env_count(name); v >= 0) return static_cast<int>(v);
  return 0;
}

int launcher_local_size() noexcept {
  for (const char* name : {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS", "SLURM_NTASKS_PER_NODE"})
    if (const long v = env_count(name); v >= 1) return static_cast<int>(v);
  return 1;
}

}  // namespace fieldft::dist

namespace fieldft::dist {

void agree_on_errors(const CommPtr& comm, const std::function<void()>& phase) {
  require(comm != nullptr, ErrorCode::kInvalidArgument, "dist::agree_on_errors: the communicator is null");
  ErrorCode code = ErrorCode::kOk;
  std::string message;
  try {
    phase();
  } catch (const Error& e) {
    code = e.code();
    message = e.what();
  } catch (const std::bad_alloc&) {
    code = ErrorCode::kOutOfMemory;
    message = "out of memory";
  } catch (const std::exception& e) {
    code = ErrorCode::kInternal;
    message = e.what();
  } catch (...) {
    code = ErrorCode::kInternal;
    message = "an exception that is not a std::exception";
  }
  // The highest failing rank + 1, or 0 when every rank succeeded.
  const int failed = comm->agree_max(code == ErrorCode::kOk ? 0 : comm->rank() + 1);
  if (failed == 0) return;
  const int root = failed - 1;
  std::int64_t header[2] = {static_cast<std::int64_t>(code), static_cast<std::int64_t>(message.size())};
  comm->broadcast_bytes(header, sizeof(header), root);
  message.resize(static_cast<std::size_t>(header[1]));
  comm->broadcast_bytes(message.data(), message.size(), root);
  throw Error(static_cast<ErrorCode>(header[0]),
              "rank " + std::to_string(root) + " of " + std::to_string(comm->size()) + ": " + message);
}

}  // namespace fieldft::dist
