// fieldft::dist — reconstruction over several ranks: processes (MPI) or GPUs (NCCL) (issue 26).
//
// Two ways to spread work (docs/scale-out.md):
//   mode (a)  independent problems (slices, frames) dealt to places: for_each_problem in one
//             process; over MPI ranks, problem i on rank i mod K, and one gather_pieces
//             bringing each rank's images straight into the root's volume (a copy: exact).
//   mode (b)  one problem split by rows of its encoding operator (coils): each rank holds its
//             rows A_r and rank_sum(A_r, comm) is the whole A = [A_0; …; A_{K-1}] as seen from
//             that rank; the same solver runs on every rank.
//
// A Communicator is a group of K ranks that sum vectors. Every rank calls each collective in the
// same order (the MPI and NCCL rule); a rank that skips one makes the others wait. Ranks agree on
// errors between phases with agree_max, so that one rank's bad input stops all instead of hanging.
//
// Sums are of complex values, i.e. of their real and imaginary parts separately. The order of a
// sum over ranks is the library's (MPI, NCCL), not fieldft's: results may differ from a one-rank
// sum in the last bits, but every rank ends with bit-identical values (the solvers rely on it:
// their scalars, computed from the replicated image-sized vectors, then agree on every rank).
//
// Optional at build time: MPI (CMake FIELDFT_MPI, Open MPI from Debian) and NCCL (FIELDFT_NCCL,
// CUDA builds only). Without them mpi_world / nccl_devices / nccl_over throw kBackendUnavailable.
#pragma once

#include <complex>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "fieldft/context.hpp"
#include "fieldft/op/combinators.hpp"

namespace fieldft::dist {

enum class Engine : int { kSingle = 0, kMpi = 1, kNccl = 2 };

// A group of ranks that sum vectors. Every rank calls each collective in the same order.
// A communicator is not safe to call from two threads at once.
class Communicator {
 public:
  virtual ~Communicator();
  virtual int rank() const = 0;   // 0 .. size()-1
  virtual int size() const = 0;   // K >= 1
  virtual Engine engine() const = 0;
  // "single", "mpi: rank 1 of 3", "nccl: rank 0 of 2 (cuda:0)"
  virtual std::string describe() const = 0;
  // Whether allreduce_sum accepts data in ctx's memory: single anywhere, MPI the host, NCCL
  // its own CUDA device.
  virtual bool sums_in(const Context& ctx) const = 0;

  // In-place sum over ranks of n complex values at `data`, which lives in ctx's memory:
  //   data[i] <- Σ_r data_r[i]   (real and imaginary parts summed separately), i < n.
  // NCCL: enqueued on ctx.stream() (ctx on this communicator's device), no host
  // synchronisation (solver-friendly); MPI: host memory, blocking (device memory:
  // kInvalidArgument naming NCCL); single: no-op. n >= 0 (else kInvalidArgument).
  // Every rank ends with bit-identical values.
  virtual void allreduce_sum(std::complex<float>* data, std::int64_t n, const Context& ctx) = 0;
  virtual void allreduce_sum(std::complex<double>* data, std::int64_t n, const Context& ctx) = 0;

  // Host, blocking: the maximum of `value` over ranks. Ranks agree on errors with it between
  // phases (0 = ok, 1 = this rank failed), so that one rank's bad input stops all, never hangs.
  virtual int agree_max(int value) = 0;
  // Host, blocking: `bytes` bytes at `data` on rank `root` copied to `data` on every rank
  // (e.g. a message, an NCCL unique id). root in [0, size()), else kInvalidArgument.
  virtual void broadcast_bytes(void* data, std::size_t bytes, int root) = 0;
  // Collective: `bytes` bytes at `data` (in ctx's memory, as allreduce_sum's data) on rank `root`
  // copied to `data` on every rank. NCCL: one ncclBroadcast enqueued on ctx.stream(), no host
  // synchronisation; MPI: host memory, blocking, in pieces of at most INT_MAX bytes (device
  // memory: kInvalidArgument); single: no-op. root in [0, size()), else kInvalidArgument.
  virtual void broadcast(void* data, std::size_t bytes, int root, const Context& ctx) = 0;
  // Host, blocking: every rank's pieces `mine` (ranges of host bytes; their number and sizes may
  // differ between ranks) to rank `root`, straight into `into`: on root, every rank's pieces in
  // rank order (rank 0's, then rank 1's, ...; root's own are copied), each range the size of the
  // piece it receives; `into` is ignored on the other ranks. Where root's ranges do not match
  // what the ranks send, every rank throws kInvalidArgument and nothing is sent; root outside
  // [0, size()): kInvalidArgument. MPI: the pieces' sizes gathered first, then one message per
  // piece (in several above INT_MAX bytes), received where it belongs: nothing packed; single:
  // copies; the default (NCCL) goes through broadcast_bytes.
  virtual void gather_pieces(std::span<const std::span<const std::byte>> mine,
                             std::span<const std::span<std::byte>> into, int root);
  // Stops every rank of the group now with `message` on stderr (MPI_Abort; NCCL: ncclCommAbort
  // on the group, so peers blocked in a collective return with an error instead of hanging).
  // MPI and single do not return; nccl_over's then aborts its host communicator (MPI_Abort:
  // does not return); nccl_devices' returns, every communicator of its group unusable after.
  virtual void abort(const std::string& message) = 0;

 protected:
  Communicator() = default;
};
using CommPtr = std::shared_ptr<Communicator>;

// Runs `phase` on this rank, then agrees with the other ranks of `comm` (one agree_max, and on
// failure one broadcast of the message): when the phase threw on any rank, EVERY rank throws a
// fieldft::Error with the code and message of the highest failing rank, prefixed "rank r of K: "
// (another exception than fieldft::Error becomes kOutOfMemory for std::bad_alloc, else
// kInternal, with its what()). Collective: every rank calls it, with its own phase. Use it around
// set-up (reading, validation, operator construction), so that one rank's bad input stops all
// ranks with that message instead of leaving the others waiting in a collective.
void agree_on_errors(const CommPtr& comm, const std::function<void()>& phase);

// One rank: allreduce_sum is a no-op, agree_max returns its value, abort prints and exits.
CommPtr single();
bool have_mpi() noexcept;         // compiled with MPI
bool have_nccl() noexcept;        // compiled with NCCL (CUDA builds)
// The environment of a launcher says size > 1 (OMPI_COMM_WORLD_SIZE, PMI_SIZE).
bool launched_by_mpi() noexcept;
// This process's rank among those of its node, as the launcher says (OMPI_COMM_WORLD_LOCAL_RANK,
// MPI_LOCALRANKID, SLURM_LOCALID); 0 without one. Picks one GPU per rank on a node.
int launcher_local_rank() noexcept;
// The number of this node's ranks, as the launcher says (OMPI_COMM_WORLD_LOCAL_SIZE,
// MPI_LOCALNRANKS, SLURM_NTASKS_PER_NODE); 1 without one.
int launcher_local_size() noexcept;
// MPI_COMM_WORLD (the same object on every call). Initialises MPI with MPI_Init_thread
// (MPI_THREAD_FUNNELED) if nobody did, and then finalises it at exit; an MPI the caller
// initialised is left to the caller. Throws kBackendUnavailable without MPI.
CommPtr mpi_world();
// An MPI communicator that the caller owns (e.g. mpi4py's), given as its handle value: MPI_Comm
// is a pointer in Open MPI and an int in MPICH, and `handle` holds either (mpi4py:
// MPI._handleof(comm)). MPI must be initialised (by the caller), the handle must come from the
// MPI library fieldft was built with (mpi_library_version() tells which), and the communicator
// must outlive the result; MPI_COMM_WORLD's handle gives mpi_world(). Throws kBackendUnavailable
// without MPI, kInvalidState when MPI is not initialised, kInvalidArgument for MPI_COMM_NULL.
CommPtr mpi_comm(std::intptr_t handle);
// MPI_Get_library_version of the MPI fieldft was built with; empty without MPI.
std::string mpi_library_version();
// One process, several GPUs: one communicator per device, rank i on devices[i]
// (ncclCommInitAll). Devices distinct and visible, else kInvalidArgument / kBackendUnavailable.
// Each rank is then driven by its own host thread (NCCL collectives of one group block until
// all ranks have enqueued theirs); contexts passed to allreduce_sum must be on that device.
// Throws kBackendUnavailable without NCCL.
std::vector<CommPtr> nccl_devices(std::span<const int> devices);
// Several processes, one GPU each: the NCCL unique id goes from rank 0 through `host`
// (e.g. mpi_world()); rank and size are host's. Collective over `host`.
// Throws kBackendUnavailable without NCCL.
CommPtr nccl_over(const CommPtr& host, int device);

// A = [A_0; A_1; …; A_{K-1}] stacked by rows over the K ranks of `comm` (e.g. coils split over
// ranks); `part` is this rank's A_r. Domain = part's domain (replicated on every rank), codomain =
// part's codomain (this rank's rows only).
//   apply:         y_r = A_r x                       (local, no communication)
//   apply_adjoint: x = Σ_r A_rᴴ y_r                  (local, then one allreduce_sum)
//   apply_normal:  z = Σ_r A_rᴴ A_r x                (part's normal, then one allreduce_sum)
//   weighted_normal(w): Σ_r A_rᴴ W_r A_r (part's weighted normal wrapped the same way; when the
//                  part has none, nullptr, and the caller's fallback A then W then Aᴴ is exact
//                  because apply_adjoint sums)
//   prepare_normal: forwarded; when comm has more than one rank and every rank's part can share
//                  (op::LinearOperator::can_share_normal, agreed with one agree_max), as
//                  part->prepare_normal_shared with comm's rank, size, broadcast and agree_max:
//                  the field-corrected Toeplitz kernels, the same on every rank of a coil split
//                  of one problem, are each built on one rank (kernel l on rank l mod K) and
//                  broadcast. rank_sum's parts are assumed to be such shares of ONE problem (the
//                  same encoding: trajectory, times, field map, grid); the kernels' builder
//                  checks this (a fingerprint of the encoding and the design, agreed over the
//                  ranks) and builds all kernels on every rank when the parts differ.
//   batched:       nullptr (op::batch applies it K times in turn).
// So solve::cg on it, run on every rank with the same lambda and options, keeps identical image
// vectors on every rank: one image-sized allreduce per iteration. Every rank must call
// apply_adjoint / apply_normal together (they are collectives). The adjoint's output on one
// rank is the whole Aᴴy; "adjointness" holds for the stacked A: <A x, y> summed over ranks
// equals <x, Aᴴ y>. part's context must be one comm can sum in (host for MPI, the
// communicator's device for NCCL), else kContextMismatch.
template <class T>
op::OperatorPtr<T> rank_sum(op::OperatorPtr<T> part, CommPtr comm);

// Contiguous balanced share [begin, end) of `count` items for part `index` of `parts`: the first
// count % parts parts get one item more. count >= 0, parts >= 1, 0 <= index < parts, else
// kInvalidArgument. A share may be empty (count < parts).
struct Share {
  std::int64_t begin = 0, end = 0;
  std::int64_t size() const { return end - begin; }
};
Share split(std::int64_t count, int parts, int index);

// Mode (a), one process: problems 0..count-1 dealt DYNAMICALLY to `places` (one host thread per
// place; a thread takes the next index when it finishes one). fn(index, place) runs a whole
// problem. The first exception stops the dealing (threads finish their current problem), and is
// rethrown after all threads joined, naming the problem index and the place (a fieldft::Error
// keeps its code). count >= 0 and at least one place, else kInvalidArgument.
void for_each_problem(std::int64_t count, std::span<const Context> places,
                      const std::function<void(std::int64_t index, const Context& place)>& fn);

}  // namespace fieldft::dist
