// `fieldft recon` on several devices or MPI ranks (issue 26; fieldft/dist.hpp; docs/scale-out.md):
// the device list, the choice of split and the agreement on errors between ranks.
//
// Split. With K > 1 places (devices of one process, or ranks of mpirun):
//   problems  the data are a stack of Nz independent 2D problems (recon_chunks.hpp); slices are
//             dealt to the places (one process: dynamically, dist::for_each_problem; MPI: slice
//             i on rank i mod K); each slice is solved whole on one place, so the image is the
//             one-place image bit for bit (the same operations in the same order on each slice).
//   coils     one problem; place r holds the coils dist::split(C, K, r) (their maps and data), and
//             CG runs on every place on dist::rank_sum of its share: one image-sized sum per
//             iteration. The sum's order differs from one place's, so images agree within float
//             rounding.
//   auto      problems when the data are a stack with at least K slices, else coils.
//
// Errors between ranks. Every rank runs the same steps on the same data, so its collectives
// (allreduce, NCCL set-up, the solve) come in the same order. An exception on one rank is
// caught at the top (run_agreed) and announced at the next checkpoint, which every rank passes
// before each collective: all ranks then throw the failing rank's error (AgreedError), rank 0
// prints it and the others exit with the same status silently. Inside the coil-split solve (a
// collective every iteration) a rank that fails calls the communicator's abort instead.
#pragma once

#include <exception>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "fieldft/dist.hpp"
#include "fieldft/error.hpp"

namespace fieldft::cli {

// --devices: "0,1,3" or "all" (every visible CUDA device); UsageError otherwise (empty, negative,
// repeated). `visible`: the number of visible devices, for "all" and the range check.
std::vector<int> parse_devices(const std::string& text, int visible);

enum class Split { kNone, kProblems, kCoils };
const char* split_name(Split s);

// The split for `places` (> 1) places: `asked` is auto, problems or coils; `slices` the stack's
// slices (0 when the data are not a stack, `not_stack` saying why). Returns the split and its
// reason; kInvalidArgument for a split the data cannot take (problems without a stack, coils
// with fewer coils than places).
struct SplitChoice {
  Split split = Split::kNone;
  std::string reason;
};
SplitChoice choose_split(const std::string& asked, int places, std::int64_t slices, const std::string& not_stack,
                         std::int64_t coils, const std::string& place_word);

// An error that every rank agreed on (dist::agree_on_errors: "rank r of K: message"): rank 0
// reports it, the others end with its status silently.
class AgreedError : public Error {
 public:
  using Error::Error;
};

// The agreement of the ranks of `comm` (null: one process, nothing to agree).
class Agreement {
 public:
  explicit Agreement(dist::CommPtr comm = nullptr) : comm_(std::move(comm)) {}
  bool active() const { return comm_ && comm_->size() > 1 && !finished_; }
  // Every rank calls it before each collective: throws AgreedError when a rank failed.
  void checkpoint();
  // After the last collective: later errors are this rank's own (only rank 0 works then).
  void finish() { finished_ = true; }
  // The failing rank's side of checkpoint(): announces `e` and throws the AgreedError that the
  // other ranks throw too.
  [[noreturn]] void fail(std::exception_ptr e);
  const dist::CommPtr& comm() const { return comm_; }

 private:
  dist::CommPtr comm_;
  bool finished_ = false;
};

// Runs `body` under `agreement`: an exception on this rank before agreement.finish() is announced
// to the others (Agreement::fail); on ranks other than 0 an AgreedError becomes its exit status
// without a message (rank 0 prints it). Returns body's status.
int run_agreed(Agreement& agreement, const std::function<int()>& body);

}  // namespace fieldft::cli
