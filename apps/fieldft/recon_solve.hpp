// One problem of `fieldft recon` (recon_command.cpp) set up and solved on one Context: the whole
// dataset, one slice of a stack (recon_chunks.hpp), or one coil share of either (mode (b) of
// --split coils, where `comm` sums the shares' normal operators over devices or MPI ranks).
//
// The model is the one the command chose for the whole reconstruction (SolveSettings): SENSE
// y_c = E(S_c ∘ x) or pcSENSE y_{s,c} = E_s(S_c ∘ e^{iφ_s} ∘ x), E the NUFFT, the time-segmented
// NUFFT or the exact field-corrected DFT, solved by CG from x = 0 on
//   min ‖W^{1/2}(A x − y)‖² + λ‖x‖²,  λ = --lambda · Σ_j w_j · mean_v Σ_c |S_c(v)|²
// (Σ_j w_j = the number of samples without density weights; the map power is the whole
// reconstruction's over all its coils, so a coil share uses the same λ as the whole: CG applies λ
// once, to the image that every share holds alike). The maps are in the solve's units (divided by
// map_scale); so is λ. With a coil share, A = [A_0; …; A_{K−1}] over the K shares and
// dist::rank_sum gives every share AᴴWA x = Σ_r A_rᴴ W_r A_r x: the same CG on every share.
#pragma once

#include <complex>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "fieldft/context.hpp"
#include "fieldft/dist.hpp"
#include "fieldft/mri/encoding.hpp"
#include "fieldft/mri/field_model.hpp"
#include "fieldft/mri/sense.hpp"
#include "fieldft/op/combinators.hpp"
#include "fieldft/solve/report.hpp"
#include "op/upload.hpp"

namespace fieldft::cli {

// What every problem of one reconstruction shares.
template <class T>
struct SolveSettings {
  std::string model = "sense";     // sense | pcsense
  std::string encoding = "nufft";  // nufft | dft | tseg
  std::string dcf = "none";        // none | pipe
  T eps = 0;                       // the NUFFT's tolerance
  double accuracy = 1e-3;          // time segmentation's
  mri::FieldModelChoice field_choice;  // encoding auto with a field map: its verdict on the normal
  int iterations = 20;
  double tolerance = 0;
  double lambda = 0;     // --lambda, relative (see above)
  double map_power = 0;  // mean_v Σ_c |S_c(v)|² of the whole reconstruction's maps, caller's units
  double map_scale = 1;  // the maps were divided by this
  bool gram = false;     // pcSENSE on the exact DFT: PcSenseOptions::gram
};

// One problem's host data.
template <class T>
struct Problem {
  std::shared_ptr<const mri::Encoding<T>> geometry;  // with the field map where the encoding uses it
  std::shared_ptr<const mri::Encoding<T>> no_field;  // the same samples without one
  std::vector<std::int64_t> shape;                   // {Nx, Ny[, Nz]}
  std::int64_t coils = 1;                            // this problem's (a share: its own)
  std::span<const std::complex<T>> maps;             // voxels x coils, coil slowest, solve units
  // The same maps already in the solve's context memory, or empty: SENSE then borrows them
  // (mri::sense's ContextMaps form: the caller checked them finite) and `maps` may be empty.
  mri::ContextMaps<T> context_maps;
  std::int64_t shots = 1;
  std::span<const T> phase;                          // voxels x shots (pcSENSE), else empty
  // The encoding batched over the coils where problems share it (shared_encoding below), else
  // null: built here from `geometry` / `no_field`.
  op::OperatorPtr<T> encoding;
};

// The coil-batched encoding that problems of the same samples can share on `ctx`, where the
// model lets them: SENSE on the NUFFT without a field map (the slices of a stack: every slice has
// the trajectory's k_x, k_y), so that one NUFFT plan, its sorted points and its Toeplitz kernel
// serve every slice a context solves (built once, not per slice). Null where the encoding
// depends on the problem (a field map: time segmentation, the exact DFT; pcSENSE's shots).
template <class T>
op::OperatorPtr<T> shared_encoding(const SolveSettings<T>& s, std::shared_ptr<const mri::Encoding<T>> no_field,
                                   std::int64_t coils, const Context& ctx);

struct Solved {
  solve::Result res;
  double lambda_abs = 0;  // λ in the caller's units
  double setup_s = 0, solve_s = 0;
  std::vector<double> residuals;  // one per iteration
  std::string operator_name;      // the operator's name after the solve: it names the normal used
};

// Builds the problem's operator on `ctx` (wrapped in dist::rank_sum over `comm` when comm is not
// null: a coil share), its weights, and runs CG from x = 0. y_c: the problem's samples x coils in
// ctx's memory; x_c: its image, in ctx's memory. on_report (may be empty) sees every iteration.
// Synchronises ctx before returning (the times are honest).
template <class T>
Solved solve_problem(const SolveSettings<T>& s, const Problem<T>& p, const Context& ctx, const std::complex<T>* y_c,
                     std::complex<T>* x_c, const dist::CommPtr& comm,
                     const std::function<void(const solve::Report&)>& on_report);

// One CG iteration of problem `p` on ctx with placeholder data (maps and k-space all 1, the image
// from 0), its result dropped. It loads the kernels that p's solves launch and, where the
// device's pool keeps freed memory (op::retain_pool_memory), leaves the pool grown to a solve's
// size, so that the first real solve pays for neither (SliceWorkers below). p's maps and phase
// are replaced by the placeholders: in ctx's memory as mri::ContextMaps where `context_maps`
// (as a slice on a device borrows its maps), else on the host. pcSENSE's stored Gram normal is
// not built (s.gram is cleared): that is a problem's set-up, not a first use.
template <class T>
void rehearse(SolveSettings<T> s, Problem<T> p, bool context_maps, const Context& ctx);

// The slice workers of one process (recon_command.cpp, slice by slice on CUDA): one context per
// slice in flight, each with its own stream, and what every slice of that worker reuses. Each
// worker is started on a thread of its own by `start` as soon as the command knows the slices'
// geometry, so that its encoding (shared_encoding), staging buffer and rehearsal are made while
// the host still transforms k_z and prepares the maps; before that, each device's first slice
// paid ~25-30 ms for them while the others waited (64 R1 slices on 2 H200s, docs/benchmarks.md,
// session 26). ready() waits for the starts.
template <class T>
class SliceWorkers {
 public:
  struct Worker {
    Context context;
    op::OperatorPtr<T> encoding;                 // shared_encoding's, or null
    std::unique_ptr<op::StagingBuffer> staging;  // null: copies read the caller's memory
    double start_s = 0;                          // seconds its start took
  };
  SliceWorkers(std::vector<Context> contexts, std::function<void(Worker&)> start);
  ~SliceWorkers();  // waits for the starts still running
  SliceWorkers(const SliceWorkers&) = delete;
  SliceWorkers& operator=(const SliceWorkers&) = delete;

  // Waits for every start and rethrows the first error (in worker order); returns the seconds
  // it waited.
  double ready();
  std::vector<Worker>& workers() { return workers_; }
  // The worker whose context is c (the same device and stream), or null.
  Worker* find(const Context& c);

 private:
  void join();
  std::vector<Worker> workers_;
  std::vector<std::thread> threads_;
  std::vector<std::exception_ptr> errors_;
};

extern template op::OperatorPtr<float> shared_encoding<float>(const SolveSettings<float>&,
                                                              std::shared_ptr<const mri::Encoding<float>>, std::int64_t,
                                                              const Context&);
extern template op::OperatorPtr<double> shared_encoding<double>(const SolveSettings<double>&,
                                                                std::shared_ptr<const mri::Encoding<double>>,
                                                                std::int64_t, const Context&);
extern template Solved solve_problem<float>(const SolveSettings<float>&, const Problem<float>&, const Context&,
                                            const std::complex<float>*, std::complex<float>*, const dist::CommPtr&,
                                            const std::function<void(const solve::Report&)>&);
extern template Solved solve_problem<double>(const SolveSettings<double>&, const Problem<double>&, const Context&,
                                             const std::complex<double>*, std::complex<double>*, const dist::CommPtr&,
                                             const std::function<void(const solve::Report&)>&);
extern template void rehearse<float>(SolveSettings<float>, Problem<float>, bool, const Context&);
extern template void rehearse<double>(SolveSettings<double>, Problem<double>, bool, const Context&);
extern template class SliceWorkers<float>;
extern template class SliceWorkers<double>;

}  // namespace fieldft::cli
