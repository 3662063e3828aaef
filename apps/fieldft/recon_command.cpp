// `fieldft recon IN -o OUT`: iterative SENSE / pcSENSE reconstruction of an ISMRMRD file or a
// BART .cfl set (dataset.hpp), with field-map correction, choosing the model from the data.
#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <future>
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <numeric>
#include <span>
#include <sstream>
#include <thread>

#include "common.hpp"
#include "core/plan_setup.hpp"
#include "dataset.hpp"
#include "fieldft/mri/coil_maps.hpp"
#include "fieldft/mri/encoding.hpp"
#include "fieldft/mri/field_model.hpp"
#include "fieldft/mri/time_segmentation.hpp"
#include "fieldft/op/vector_ops.hpp"
#include "fieldft/runtime.hpp"
#include "io/cfl.hpp"
#include "io/nifti.hpp"
#include "io/npy.hpp"
#include "io/preview.hpp"
#include "mri/sense_checks.hpp"
#include "op/upload.hpp"
#include "recon_chunks.hpp"
#include "recon_dist.hpp"
#include "recon_io.hpp"
#include "recon_solve.hpp"

namespace fieldft::cli {

namespace {

struct ReconArgs {
  std::string in;
  std::vector<std::string> outs;
  std::string model = "auto";
  std::string encoding = "auto";
  double accuracy = 1e-3;
  double eps = 0;
  std::string maps = "auto";
  int iters = 20;
  double lambda = 0;
  double tolerance = 0;
  std::string backend = "auto";
  int device = 0;
  int threads = 0;
  std::string prec = "f";
  std::string truth;
  std::string matrix;
  std::string traj;
  std::string progress = "auto";
  std::string dcf = "auto";
  std::string chunk = "auto";
  std::string devices;        // --devices: empty = --device alone
  std::string split = "auto";
  int slice_workers = 0;  // --slice-workers: slices in flight per CUDA device; 0 = automatic
  std::string pin = "auto";  // --pin: how the slices' host data go up to CUDA devices (auto = staged)
  std::string memory_limit_text;
  double memory_limit = 0;  // bytes; 0: none
  bool json = false;
  bool gram = false;  // --gram: pcSENSE on the exact DFT, its normal through the stored Gram matrix
};

double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// `values` in the context's memory: the vector itself on the host, one upload (stream-ordered)
// on a device.
template <class V>
const V* in_context(op::Workspace& ws, std::span<const V> values) {
  return ws.context().is_host() ? values.data() : op::upload(ws, values);
}
template <class V>
const V* in_context(op::Workspace& ws, const std::vector<V>& values) {
  return in_context(ws, std::span<const V>(values));
}

template <class T>
int run_recon(const ReconArgs& a, Agreement& agree) {
  using Complex = std::complex<T>;
  const auto t_start = std::chrono::steady_clock::now();
  // Under mpirun -n K (K > 1) every rank runs this; rank 0 alone checks and writes the outputs,
  // prints and shows progress (recon_dist.hpp: errors on any rank stop all).
  const dist::CommPtr world = agree.comm();
  const int rank = world ? world->rank() : 0, ranks = world ? world->size() : 1;
  const bool root = rank == 0;
  if (root) check_outputs(a.outs);
  nlohmann::json times;
  nlohmann::json choices;
  std::vector<std::string> notes;

  // Where it runs, decided before any reading so that a bad --backend/--device fails at once.
  // One process: --device, or one place per device of --devices. MPI: one place per rank, the
  // rank's GPU from its node-local rank (--devices, else every visible device, in turn).
  std::vector<Placement> places;
  int ranks_per_device = 1;  // MPI on CUDA: the ranks of this node on this rank's device
  {
    const Placement first = choose_placement(a.backend, a.device, a.threads);
    const bool cuda = first.context.is_cuda();
    const int visible = cuda ? static_cast<int>(cuda_devices().size()) : 0;
    if (world) {
      if (cuda) {
        const std::vector<int> list =
            a.devices.empty() ? parse_devices("all", visible) : parse_devices(a.devices, visible);
        const int dev = list[static_cast<std::size_t>(dist::launcher_local_rank()) % list.size()];
        places.push_back(choose_placement(a.backend, dev, a.threads));
        // The node's ranks share its listed devices in turn: this many share this one's memory.
        const int local = dist::launcher_local_size(), devs = static_cast<int>(list.size());
        ranks_per_device = local / devs + (dist::launcher_local_rank() % devs < local % devs ? 1 : 0);
      } else {
        places.push_back(first);
        if (!a.devices.empty()) notes.push_back("--devices is ignored on the CPU (the MPI ranks share the work)");
      }
    } else if (!a.devices.empty()) {
      if (!cuda)
        throw UsageError("--devices: the CPU backend (" + first.reason +
                         ") runs in one process; spread over CPU processes with `mpirun -n K fieldft recon ...`");
      for (int dev : parse_devices(a.devices, visible)) places.push_back(choose_placement(a.backend, dev, a.threads));
    } else {
      places.push_back(first);
    }
  }
  const Placement& place = places.front();
  const Context& ctx = place.context;
  const int parts = world ? ranks : static_cast<int>(places.size());  // K: places the work is spread over
  const std::string place_word = world ? "MPI ranks" : "devices";
  choices["backend"] = backend_name(ctx.backend());
  choices["backend_reason"] = place.reason;
  if (ctx.is_cuda()) {
    choices["device"] = ctx.device();
    choices["device_name"] = place.device_name;
  }
  if (places.size() > 1) {
    std::vector<int> ids;
    for (const auto& p : places) ids.push_back(p.context.device());
    choices["devices"] = ids;
  }
  if (world) choices["ranks"] = ranks;
  if (!ctx.is_cuda() && a.device != 0) notes.push_back("--device is ignored on the CPU");
  if (!ctx.is_cuda() && a.slice_workers > 1)
    throw UsageError("--slice-workers " + std::to_string(a.slice_workers) +
                     ": slices in flight per CUDA device; on the CPU each slice already uses --threads");
  if (a.gram && a.encoding != "dft")
    throw UsageError("--gram: the stored Gram normal is the exact DFT's; it needs --encoding dft (given: --encoding " +
                     a.encoding + ")");

  // Read.
  auto t0 = std::chrono::steady_clock::now();
  std::array<std::int64_t, 3> matrix{0, 0, 0};
  if (!a.matrix.empty()) {
    const auto g = parse_matrix(a.matrix, "--matrix");
    for (std::size_t i = 0; i < g.size(); ++i) matrix[i] = g[i];
  }
  io::RawData d = read_dataset(a.in, matrix, a.traj);
  times["read"] = since(t0);
  const std::int64_t m = d.num_samples(), n = d.num_voxels(), coils = d.coils;
  std::vector<std::int64_t> shape{d.grid[0], d.grid[1]};
  if (d.dim == 3) shape.push_back(d.grid[2]);

  const auto cast = [](const std::vector<double>& v) { return std::vector<T>(v.begin(), v.end()); };
  const std::vector<T> kx = cast(d.kx), ky = cast(d.ky), kz = cast(d.kz), tt = cast(d.times), field = cast(d.field_map);
  // The solve runs in units where the data have rms 1 and the maps max_v sum_c |S_c(v)|^2 = 1:
  // CG's scalars (rho, p^H A^H A p) grow like |S|^6 |y|^2 and overflow float for maps in scanner
  // units (|S| ~ 1e5). The image is mapped back at the end (x = x' * data_scale / map_scale).
  // Summed in fixed blocks, each on any thread, then in order: the same bits for any thread count.
  double data_scale = 0;
  {
    constexpr std::size_t kBlock = std::size_t{1} << 16;
    std::vector<double> partial((d.data.size() + kBlock - 1) / kBlock, 0.0);
#pragma omp parallel for schedule(static)
    for (std::size_t b = 0; b < partial.size(); ++b) {
      double sum = 0;
      for (std::size_t i = b * kBlock; i < std::min(d.data.size(), (b + 1) * kBlock); ++i)
        sum += std::norm(std::complex<double>(d.data[i]));
      partial[b] = sum;
    }
    for (double p : partial) data_scale += p;
  }
  data_scale = d.data.empty() || data_scale == 0 ? 1.0 : std::sqrt(data_scale / static_cast<double>(d.data.size()));
  // In single precision the read k-space itself becomes y (no copy of gigabytes of a stack).
  std::vector<Complex> y;
  if constexpr (std::is_same_v<Complex, std::complex<float>>) {
    y = std::move(d.data);
  } else {
    y.assign(d.data.begin(), d.data.end());
    std::vector<std::complex<float>>().swap(d.data);
  }
  {
    const T inverse = static_cast<T>(1.0 / data_scale);
#pragma omp parallel for simd schedule(static)
    for (std::size_t i = 0; i < y.size(); ++i) y[i] *= inverse;
  }

  op::VectorOps<T> vops(ctx);

  // Model.
  const bool have_phase = !d.phase_maps.empty() && d.num_shots > 1;
  std::string model = a.model;
  if (model == "auto") {
    model = have_phase ? "pcsense" : "sense";
    choices["model_reason"] = have_phase ? "the data carry per-shot phase maps (" + std::to_string(d.num_shots) + " shots)"
                                         : (d.num_shots > 1 ? std::to_string(d.num_shots) + " shots but no phase maps" : "single-shot data");
  } else {
    choices["model_reason"] = "asked for";
    if (model == "pcsense" && !have_phase)
      throw Error(ErrorCode::kInvalidArgument, "--model pcsense: the data have no per-shot phase maps (PhaseMaps / _phase) or only one shot");
  }
  choices["model"] = model;

  // Encoding.
  const T eps = static_cast<T>(a.eps > 0 ? a.eps : std::max(a.accuracy / 10, std::is_same_v<T, float> ? 1e-5 : 1e-9));
  const bool have_field = !field.empty();
  std::string enc_kind = a.encoding;
  auto geometry = std::make_shared<const mri::Encoding<T>>(shape, kx, ky, kz, tt, have_field && enc_kind != "nufft" ? std::span<const T>(field) : std::span<const T>(),
                                                           std::span<const std::int32_t>(d.shots));
  auto no_field = std::make_shared<const mri::Encoding<T>>(shape, kx, ky, kz, tt, std::span<const T>(),
                                                           std::span<const std::int32_t>(d.shots));
  mri::FieldModelChoice field_choice;  // encoding "auto" with a field map: the shared cost model
  if (enc_kind == "auto") {
    if (!have_field) {
      enc_kind = "nufft";
      choices["encoding_reason"] = "no field map: NUFFT";
    } else {
      // mri::choose_field_model: the exact DFT or time segmentation (and its Toeplitz normal) by
      // predicted time on this backend for --iters normal applications; the DFT where time
      // segmentation cannot reach --accuracy.
      mri::FieldModelOptions fo;
      fo.accuracy = a.accuracy;
      fo.eps = eps;
      fo.iterations = a.iters;
      fo.backend = ctx.backend();
      fo.threads = a.threads;
      fo.double_precision = std::is_same_v<T, double>;
      field_choice = mri::choose_field_model<T>(*geometry, coils, model == "pcsense", fo);
      enc_kind = field_choice.encoding == mri::EncodingKind::kDft ? "dft" : "tseg";
      choices["encoding_reason"] = field_choice.reason;
      choices["predicted_seconds"] = {{"dft", field_choice.dft.total_seconds},
                                      {"tseg", field_choice.segmented.total_seconds},
                                      {"tseg_toeplitz", field_choice.segmented_toeplitz.total_seconds}};
    }
  } else {
    choices["encoding_reason"] = "asked for";
    if (enc_kind == "nufft" && have_field) notes.push_back("the field map is ignored (--encoding nufft)");
    if (enc_kind == "tseg" && !have_field) throw Error(ErrorCode::kInvalidArgument, "--encoding tseg needs a field map; the data have none");
  }
  choices["encoding"] = enc_kind;
  if (a.gram && model != "pcsense")
    throw UsageError(
        "--gram: the stored Gram normal is multi-shot pcSENSE's (data with per-shot phase maps); the "
        "model here is " +
        model);
  choices["eps"] = eps;
  if (enc_kind == "tseg") choices["accuracy"] = a.accuracy;
  int segments = 0;
  if (enc_kind == "tseg") {
    mri::TimeSegmentationOptions o;
    o.accuracy = a.accuracy;
    o.eps = eps;
    const auto r = mri::plan_time_segmentation<T>(*geometry, o);
    segments = r.segments;
    choices["segments"] = r.segments;
    choices["segments_reason"] = r.reason;
    if (field_choice.encoding == mri::EncodingKind::kTimeSegmented) choices["toeplitz_normal"] = field_choice.toeplitz;
  }
  std::string maps_source = a.maps;
  if (maps_source == "auto") maps_source = d.coil_maps.empty() ? "rss" : "file";
  const bool estimated_maps = maps_source == "rss" || maps_source == "espirit";
  const std::string dcf = a.dcf == "auto" ? "none" : a.dcf;

  // Memory: the whole problem, else slice by slice (recon_chunks.hpp), else a clear error.
  std::string not_stack;
  const std::optional<Stack> stack = detect_stack(d, &not_stack);
  MemoryProblem mp{.dim = d.dim, .samples = m, .voxels = n, .coils = coils, .shots = d.num_shots,
                   .segments = segments, .dft = enc_kind == "dft", .weights = dcf != "none",
                   .estimate_maps = estimated_maps, .field = have_field && enc_kind != "nufft",
                   .pcsense = model == "pcsense", .real_bytes = sizeof(T)};
  const MemoryEstimate need_whole = estimate_memory(mp);
  double memory_share_bytes = 0;  // --split coils: the widest share's estimate
  // Slices in flight per CUDA device. Automatic: three, or as many as fit every device (the
  // set-up, transfers and scalar round trips of one slice overlap the others' kernels: two were
  // 1.7-1.9x faster than one on 1, 2 and 4 H200s for 64 R1 slices, session 22; with staging
  // buffers three were 1.24x faster than two on one H200 and 1.04-1.15x on two, session 26;
  // docs/benchmarks.md); one on the CPU, where a slice already takes every thread.
  constexpr int kAutoSliceWorkers = 3;
  // Under mpirun the same per rank (its slices dealt to its workers), the automatic choice counting
  // the node's other ranks on the same device.
  int slice_workers = a.slice_workers > 0 ? a.slice_workers : (ctx.is_cuda() ? kAutoSliceWorkers : 1);
  std::optional<MemoryEstimate> need_slice;
  MemoryProblem mp_slice = mp;  // one slice's parts
  const auto estimate_slices = [&] {
    MemoryProblem w = mp_slice;  // W slices at once on a device: W times one slice's parts
    w.samples *= slice_workers;
    w.voxels *= slice_workers;
    need_slice = estimate_memory(w);
  };
  if (stack) {
    mp_slice.dim = 2;
    mp_slice.samples = stack->plane_samples;
    mp_slice.voxels = n / d.grid[2];
    estimate_slices();
  }
  // The budget of one place: its free memory (the device's on CUDA, the host's on the CPU),
  // lowered by --memory-limit; and where that number comes from.
  const auto budget_of = [&](const Context& c, double* avail, std::string* from) {
    double free_bytes = 0;
    *from = "available host memory (MemAvailable)";
    if (c.is_cuda()) {
      const auto gpus = cuda_devices();
      if (c.device() < static_cast<int>(gpus.size())) free_bytes = static_cast<double>(gpus[static_cast<std::size_t>(c.device())].free_memory);
      *from = "free memory of CUDA device " + std::to_string(c.device());
    } else {
      free_bytes = available_host_memory();
    }
    if (avail) *avail = free_bytes;
    double b = free_bytes > 0 ? free_bytes : std::numeric_limits<double>::infinity();
    if (a.memory_limit > 0 && a.memory_limit < b) {
      b = a.memory_limit;
      *from = "--memory-limit";
    }
    return b;
  };
  double available = 0;
  std::string where;
  double budget = budget_of(ctx, &available, &where);
  if (stack && a.slice_workers == 0 && slice_workers > 1) {
    double tightest = budget;
    for (const Placement& p : places) {
      std::string from_p;
      tightest = std::min(tightest, budget_of(p.context, nullptr, &from_p));
    }
    while (slice_workers > 1 &&
           need_slice->total * ranks_per_device > tightest) {  // the automatic choice: fewer at a time
      --slice_workers;
      estimate_slices();
    }
  }
  const auto too_large = [&](const std::string& what, const MemoryEstimate& e, const std::string& advice) {
    return Error(ErrorCode::kTooLarge, what + " needs about " + e.text() + ", but " + bytes_text(budget) + " (" + where +
                                           ") is available; " + advice);
  };
  const std::string advice_common = std::string(ctx.is_cuda() ? "try --backend cpu (host memory), " : "try ") +
                                    (std::is_same_v<T, double> ? "--prec f, " : "") +
                                    (enc_kind == "tseg" ? "--encoding dft (no segment images), " : "") +
                                    "fewer coils (coil compression), or a larger --memory-limit if one is set";
  // Spread over K > 1 places (recon_dist.hpp): slices dealt to them, or the coils shared.
  Split split = Split::kNone;
  dist::Share share{0, coils};  // this rank's coils (MPI, --split coils)
  if (parts > 1) {
    if (a.split == "problems" && a.chunk == "none") throw UsageError("--split problems solves slice by slice; it cannot be --chunk none");
    if (a.split == "coils" && a.chunk == "slices") throw UsageError("--split coils shares the whole problem; it cannot be --chunk slices");
    const std::int64_t nslices = stack && a.chunk != "none" ? d.grid[2] : 0;
    const SplitChoice sc = choose_split(a.split, parts, nslices, stack ? "--chunk none" : not_stack, coils, place_word);
    split = sc.split;
    choices["split"] = split_name(split);
    choices["split_reason"] = sc.reason;
    const dist::Share widest = dist::split(coils, parts, 0);  // the first shares are the widest
    if (world && split == Split::kCoils) share = dist::split(coils, parts, rank);
    std::optional<MemoryEstimate> need_share;
    if (split == Split::kCoils) {
      MemoryProblem ms = mp;
      ms.dim = d.dim;
      ms.samples = m;
      ms.voxels = n;
      ms.coils = widest.size();
      need_share = estimate_memory(ms);
      memory_share_bytes = need_share->total;
    }
    const MemoryEstimate& need = split == Split::kProblems ? *need_slice : *need_share;
    const std::string what = split == Split::kProblems ? "one slice" : "one coil share (" + std::to_string(widest.size()) + " of " + std::to_string(coils) + " coils)";
    for (const Placement& p : places) {
      double avail = 0;
      std::string from;
      const double b = budget_of(p.context, &avail, &from);
      if (need.total > b)
        throw Error(ErrorCode::kTooLarge, p.context.describe() + (world ? " (rank " + std::to_string(rank) + ")" : std::string()) +
                                              ": " + what + " needs about " + need.text() + ", but " + bytes_text(b) + " (" + from +
                                              ") is available there; " +
                                              (split == Split::kCoils ? "try more " + place_word + " (smaller shares); or " : std::string()) +
                                              advice_common);
    }
  }
  bool slices = false;
  if (split == Split::kProblems) {
    slices = true;
    choices["chunk_reason"] = "slices spread over " + std::to_string(parts) + " " + place_word + " (--split problems)";
  } else if (split == Split::kCoils) {
    choices["chunk_reason"] = "the whole problem, its coils spread over " + std::to_string(parts) + " " + place_word;
  } else if (a.chunk == "slices") {
    if (!stack) throw Error(ErrorCode::kInvalidArgument, "--chunk slices: the data are not a stack of 2D acquisitions (" + not_stack + ")");
    if (need_slice->total > budget) throw too_large("even one slice", *need_slice, advice_common);
    slices = true;
    choices["chunk_reason"] = "asked for";
  } else if (need_whole.total <= budget) {
    choices["chunk_reason"] = a.chunk == "none" ? "asked for" : "the whole problem fits (" + bytes_text(need_whole.total) + " of " + bytes_text(budget) + ")";
  } else if (a.chunk == "none") {
    throw too_large("the whole reconstruction (--chunk none)", need_whole,
                    (stack ? std::string("the data are a stack: try --chunk slices or auto; or ") : std::string()) + advice_common);
  } else if (stack && need_slice->total <= budget) {
    slices = true;
    choices["chunk_reason"] = "the whole problem needs " + bytes_text(need_whole.total) + ", more than " + bytes_text(budget) +
                              " (" + where + "); the data are a stack: one slice needs " + bytes_text(need_slice->total);
  } else if (stack) {
    throw too_large("even one slice of the stack", *need_slice, advice_common);
  } else {
    throw too_large("the reconstruction", need_whole,
                    "the data are not a stack of 2D acquisitions (" + not_stack + "), so they cannot be split into slices; " + advice_common);
  }
  const std::int64_t nz = slices ? d.grid[2] : 1, plane = n / nz;
  choices["chunk"] = slices ? "slices" : "none";
  if (slices && ctx.is_cuda()) choices["slice_workers"] = slice_workers;
  // Under mpirun, the CPUs this rank may run on (its affinity): Open MPI binds each rank to ONE
  // core by default when it starts two or fewer, and a GPU rank's slice workers, or a CPU rank's
  // --threads, then share that core. Measured (2x H200, 64 R1 slices, session 28): two ranks
  // bound so took 0.164-0.174 s, one process on the same two devices 0.127-0.130 s.
  if (world) {
    cpu_set_t set;
    CPU_ZERO(&set);
    const int cpus = ::sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : 0;
    const int want = ctx.is_cuda() ? (slices ? slice_workers : 1) + 1 : ctx.nthreads();
    if (cpus > 0 && cpus < want)
      notes.push_back("rank " + std::to_string(rank) + " may run on " + std::to_string(cpus) + " CPU" +
                      (cpus == 1 ? "" : "s") + " (its affinity), fewer than its " + std::to_string(want) +
                      " host threads" + (ctx.is_cuda() ? " (slice workers and the main thread)" : " (--threads)") +
                      ": start mpirun with --bind-to none, or give each rank cores (mpirun --map-by slot:PE=8, "
                      "srun --cpus-per-task=8)");
  }
  // A slice's geometry: plane 0's in-plane samples (every plane has the same, see detect_stack)
  // with slice z's field map.
  std::vector<std::int64_t> plane_shape{shape[0], shape[1]};
  std::vector<T> pkx, pky, ptt;
  std::vector<std::int32_t> pshots;
  if (slices) {
    for (std::int64_t j = 0; j < stack->plane_samples; ++j) {
      const auto i = static_cast<std::size_t>(stack->index[static_cast<std::size_t>(j)]);
      pkx.push_back(kx[i]);
      pky.push_back(ky[i]);
      if (!tt.empty()) ptt.push_back(tt[i]);
      pshots.push_back(d.shots[i]);
    }
  }
  // Thread-safe (mode (a) runs slices at once): the Encoding copies what it is given.
  const auto slice_encoding = [&](std::int64_t z, bool with_field) {
    const std::vector<T> field_z = with_field ? slice_of(field, plane, nz, z, 1) : std::vector<T>();
    return std::make_shared<const mri::Encoding<T>>(plane_shape, pkx, pky, std::span<const T>(), ptt,
                                                    with_field ? std::span<const T>(field_z) : std::span<const T>(),
                                                    std::span<const std::int32_t>(pshots));
  };
  // Every slice's geometry without its field map is the same (plane 0's samples): made once.
  const std::shared_ptr<const mri::Encoding<T>> plane_encoding = slices ? slice_encoding(0, false) : nullptr;
  // Slice by slice on a device, SENSE borrows each slice's maps in device memory (run_slice below).
  const bool maps_on_device = slices && ctx.is_cuda() && model == "sense";

  SolveSettings<T> settings;  // map_power and map_scale come with the maps, below
  settings.model = model;
  settings.encoding = enc_kind;
  settings.dcf = dcf;
  settings.eps = eps;
  settings.accuracy = a.accuracy;
  settings.field_choice = field_choice;
  settings.iterations = a.iters;
  settings.tolerance = a.tolerance;
  settings.lambda = a.lambda;
  settings.gram = a.gram;

  // How each slice's data go up to its device (--pin): on: this process's k-space slices and
  // maps page-locked for the run, in the background while the host prepares them (below), so that
  // the copies read them directly; staged: through a pinned buffer of each slice worker, filled
  // on several host threads; off: from pageable memory, staged by the driver on the calling thread.
  // auto = on while what is locked is at most a quarter of the host's memory, else staged.
  // Measured (64 R1 slices, 2x H200, docs/benchmarks.md, sessions 26-27): locking 2.15 GB took
  // 0.16-0.22 s on its own threads, all of it before the solve stage, and left each slice's copies to
  // the bus alone: 1 -> 2 GPUs 1.87-1.93x. Staged, the host copies (~25-40 GB/s on a few threads) are
  // shared by every worker of every device: 1.69-1.86x; off, the driver stages ~6 GB/s on one thread.
  const std::int64_t own = world ? (nz - rank + ranks - 1) / ranks : nz;  // this process's slices
  const double lock_bytes =
      slices ? static_cast<double>(sizeof(Complex)) * (static_cast<double>(coils * stack->plane_samples * own) +
                                                       (maps_on_device ? static_cast<double>(n * coils) : 0.0))
             : 0.0;
  const double lock_limit = core::host_memory_bytes() / 4;
  const std::string pin = !slices || !ctx.is_cuda()  ? std::string()
                          : a.pin != "auto"          ? a.pin
                          : lock_bytes <= lock_limit ? std::string("on")
                                                     : std::string("staged");
  if (!pin.empty()) {
    const std::string why = bytes_text(lock_bytes) + " to lock, " + (pin == "on" ? "at most" : "more than") +
                            " a quarter of the host's " + bytes_text(4 * lock_limit) + ": " +
                            (pin == "on" ? "the k-space and maps locked in the background while the host prepares "
                                           "them; each slice's copies read them directly"
                                         : "each slice's copies go up through a pinned buffer of its worker");
    choices["pin"] = pin;
    choices["pin_reason"] = a.pin != "auto" ? std::string("asked for") : why;
  }
  // Slice by slice on CUDA: the slice workers (recon_solve.hpp), started now so that each
  // one's encoding, staging buffer and rehearsal are made while the host still transforms k_z
  // and prepares the maps; the solve stage waits for what is left of them. Each worker has a
  // context and stream of its own (none is the placements' own, which map estimation uses
  // meanwhile). The devices' pools keep the memory the slices in flight need between slices.
  std::optional<SliceWorkers<T>> workers;
  if (slices && ctx.is_cuda()) {
    std::vector<Context> contexts;
    for (const Placement& p : places) {
      op::retain_pool_memory(p.context, need_slice->total);
      for (int w = 0; w < slice_workers; ++w)
        contexts.push_back(Context::from_options(Backend::kCuda, p.context.device(), nullptr, p.context.nthreads(),
                                                 /*own_stream=*/true));
    }
    const std::int64_t stage_values = coils * stack->plane_samples + (maps_on_device ? plane * coils : 0);
    // Copy threads per worker: a share of the host's, at most 4 (a slice's 34 MB take ~1 ms on 4).
    const int copy_threads = std::clamp(
        static_cast<int>(std::thread::hardware_concurrency()) / std::max(1, static_cast<int>(contexts.size())), 1, 4);
    const auto rehearsal = std::make_shared<const Problem<T>>(
        Problem<T>{.geometry = have_field && enc_kind != "nufft" ? slice_encoding(0, true) : plane_encoding,
                   .no_field = plane_encoding,
                   .shape = plane_shape,
                   .coils = coils,
                   .maps = {},
                   .context_maps = {},
                   .shots = d.num_shots,
                   .phase = {},
                   .encoding = nullptr});
    workers.emplace(std::move(contexts), [settings, rehearsal, stage_values, copy_threads, staged = pin == "staged",
                                          maps_on_device](typename SliceWorkers<T>::Worker& w) {
      w.encoding = shared_encoding<T>(settings, rehearsal->no_field, rehearsal->coils, w.context);
      if (staged)
        w.staging = std::make_unique<op::StagingBuffer>(
            w.context, static_cast<std::size_t>(stage_values) * sizeof(Complex), copy_threads);
      // Rehearsed where the slices share an encoding (SENSE on the NUFFT, no field map): there a
      // slice is a few ms and first-use costs were ~25 ms. Elsewhere each slice builds its own
      // encoding (a field map, pcSENSE), its set-up dwarfs them, and a rehearsal would only add one.
      if (!w.encoding) return;
      Problem<T> p = *rehearsal;
      p.encoding = w.encoding;
      rehearse<T>(settings, std::move(p), maps_on_device, w.context);
    });
  }
  nlohmann::json memory;
  memory["needed_bytes"] = need_whole.total;
  if (need_slice) memory["needed_per_slice_bytes"] = need_slice->total;
  memory["available_bytes"] = available;
  memory["budget_bytes"] = std::isfinite(budget) ? budget : 0.0;
  memory["budget_source"] = where;
  if (memory_share_bytes > 0) memory["needed_per_share_bytes"] = memory_share_bytes;
  agree.checkpoint();  // MPI: every rank has read the data and made the same choices, or all stop

  // The k-space in the context's memory, once: on a device one copy (whole problem), and the
  // solver's vectors below stay there until the image comes back at the end. Slice by slice: the
  // k_z transform on the host, then each slice's data go up in turn.
  std::optional<op::Workspace> y_mem(std::in_place, ctx);
  const Complex* y_ctx = nullptr;
  std::vector<Complex> maps;  // the coil maps (below); declared before what locks them
  std::vector<Complex> yhat;  // slice by slice: every slice's k-space, slice z at z·y_slice
  std::int64_t y_slice = 0;
  const auto slice_y = [&](std::int64_t z) {
    return std::span<const Complex>(yhat.data() + z * y_slice, static_cast<std::size_t>(y_slice));
  };
  // --pin on: this process's k-space slices and the maps volume page-locked for the run
  // (op::PinnedHost), each on a thread of its own while the host still prepares the data — the
  // k-space once the k_z transform has made it, the maps once they are final — so that each
  // slice's copies read them directly (no host copy, no staging). The solve stage waits for what
  // is left (seconds.pin_wait; seconds.pin: the locking's own time); they are unlocked when the
  // command ends, after the outputs are written. Declared after the memory they lock.
  // (In this order: a job that is still running when the command unwinds is joined by its
  // future's destructor, before the seconds it writes are freed.)
  std::vector<double> lock_seconds;  // one per job, written by the job (sized before it starts)
  std::vector<std::future<std::vector<op::PinnedHost>>> locking;
  std::vector<op::PinnedHost> pins;  // the jobs' locks, once waited for
  const auto lock_async = [&](std::vector<std::span<const Complex>> parts) {
    std::vector<int> devices;
    for (const Placement& p : places) devices.push_back(p.context.device());
    lock_seconds.push_back(0.0);
    double* seconds = &lock_seconds.back();
    locking.push_back(std::async(std::launch::async, [parts = std::move(parts), devices, seconds] {
      const auto t = std::chrono::steady_clock::now();
      std::vector<op::PinnedHost> held;
      held.reserve(parts.size());
      for (const auto& part : parts)
        if (!part.empty()) held.emplace_back(part.data(), part.size_bytes(), devices);
      *seconds = since(t);
      return held;
    }));
  };
  if (pin == "on") lock_seconds.reserve(2);  // the jobs' seconds stay where they are
  t0 = std::chrono::steady_clock::now();
  if (slices) {
    yhat = kz_to_slices<T>(*stack, nz, coils, y);
    y_slice = static_cast<std::int64_t>(yhat.size()) / nz;
    std::vector<Complex>().swap(y);
    times["kz_transform"] = since(t0);
    if (pin == "on") {
      // One process: every slice's k-space, one allocation, locked in one piece. A rank: its own
      // slices (every ranks-th), each on its own pages unless a slice is smaller than a page.
      std::vector<std::span<const Complex>> parts;
      if (!world) {
        parts.emplace_back(yhat);
      } else {
        for (std::int64_t z = rank; z < nz; z += ranks) parts.push_back(slice_y(z));
      }
      lock_async(std::move(parts));
    }
  } else if (split != Split::kCoils || estimated_maps) {  // coils: each place uploads its share
    y_ctx = in_context(*y_mem, y);
    if (ctx.is_cuda()) {
      ctx.synchronize();  // once, so that the stage times below are honest
      times["upload"] = since(t0);
    }
  }

  // Coil maps.
  t0 = std::chrono::steady_clock::now();
  // Estimated maps from k-space `yk` (in context c) of the encoding `e`, into `out` (host).
  const auto estimate_maps = [&](const mri::Encoding<T>& e, const Context& c, std::span<const Complex> yk,
                                 std::span<Complex> out) {
    mri::CoilMapOptions co;
    co.method = maps_source == "rss" ? mri::CoilMapMethod::kRss : mri::CoilMapMethod::kEspirit;
    const double nmin = static_cast<double>(*std::min_element(shape.begin(), shape.begin() + e.dim()));
    co.calibration_radius = std::min(co.calibration_radius, nmin / 4);
    const std::int64_t nv = e.num_voxels();
    if (c.is_host()) {
      mri::estimate_coil_maps<T>(e, c, yk, coils, co, out);
    } else {
      // Estimated on the device from the uploaded data; mri::sense / pcsense take host maps, so
      // they come back once (set-up, not per iteration).
      op::Workspace maps_mem(c);
      Complex* md = maps_mem.get_as<Complex>(nv * coils);
      mri::estimate_coil_maps<T>(e, c, yk, coils, co, std::span<Complex>(md, static_cast<std::size_t>(nv * coils)));
      op::VectorOps<T>(c).to_host(nv * coils, md, out.data());
    }
  };
  if (maps_source == "file") {
    if (d.coil_maps.empty()) throw Error(ErrorCode::kInvalidArgument, "--maps file: the input has no coil maps");
    if constexpr (std::is_same_v<Complex, std::complex<float>>) {
      maps = std::move(d.coil_maps);  // single precision as read: no copy
    } else {
      maps.assign(d.coil_maps.begin(), d.coil_maps.end());
    }
    choices["maps"] = "from the input file";
  } else if (estimated_maps) {
    maps.assign(static_cast<std::size_t>(n * coils), Complex{});
    if (!slices) {
      estimate_maps(*no_field, ctx, std::span<const Complex>(y_ctx, y.size()), maps);
    } else {
      // Slice by slice, each from its slice's data (2D estimates, as for 2D data); in one process
      // with several devices the slices are dealt to them (each slice's estimate is its own, so
      // the maps do not depend on which device made them beyond the devices' rounding).
      const auto estimate_slice = [&](std::int64_t z, const Context& c) {
        std::vector<Complex> mz(static_cast<std::size_t>(plane * coils));
        op::Workspace ws(c);
        const auto yz = slice_y(z);
        estimate_maps(*slice_encoding(z, false), c, std::span<const Complex>(in_context(ws, yz), yz.size()), mz);
        for (std::int64_t k = 0; k < coils; ++k)
          std::copy_n(mz.begin() + plane * k, plane, maps.begin() + plane * z + n * k);
      };
      if (!world && places.size() > 1) {
        std::vector<Context> contexts;
        for (const auto& p : places) contexts.push_back(p.context);
        dist::for_each_problem(nz, contexts, estimate_slice);
      } else {
        for (std::int64_t z = 0; z < nz; ++z) estimate_slice(z, ctx);
      }
    }
    choices["maps"] = "estimated (" + maps_source + (d.coil_maps.empty() ? ", the input has none)" : ")");
  } else {
    if (ends_with(maps_source, ".npy")) {
      auto arr = io::read_npy<Complex>(maps_source);
      maps = std::move(arr.data);
    } else {
      auto img = io::read_cfl_image(io::cfl_base(maps_source));
      maps.assign(img.data.begin(), img.data.end());
    }
    if (static_cast<std::int64_t>(maps.size()) != n * coils)
      throw Error(ErrorCode::kShapeMismatch, "--maps '" + maps_source + "': " + std::to_string(maps.size()) +
                                                 " values, expected voxels x coils = " + std::to_string(n * coils));
    choices["maps"] = "from " + maps_source;
  }
  // --pin on: the maps are locked from here, while the host still checks and scales them (the
  // locking leaves their values alone); started after the scale, its ~70 ms per GB fell inside
  // the solve stage (session 27, 2x H200).
  if (pin == "on" && maps_on_device) lock_async({std::span<const Complex>(maps)});
  agree.checkpoint();  // MPI: every rank has its maps (set-up), or all stop
  if (world && estimated_maps) {
    // Rank 0's estimate on every rank, so that the maps' scale (and so λ and CG's scalars) agree
    // to the bit even where the estimate's sums are not reproducible (atomics on a GPU).
    world->broadcast_bytes(maps.data(), maps.size() * sizeof(Complex), 0);
  }
  if (split == Split::kCoils) {  // the whole k-space was for the estimate only
    y_mem.reset();
    y_ctx = nullptr;
  }
  // Slice by slice on a device, SENSE borrows each slice's maps in device memory, unscanned
  // (mri::ContextMaps, run_slice below): the whole volume is checked here once instead, in the
  // caller's units (the scale below keeps a finite value finite).
  if (maps_on_device) mri::detail::require_finite_maps<T>(maps, shape, "recon");
  times["coil_maps"] = since(t0);
  double map_power = 0, map_peak = 0;
  {
    // Each voxel's sum over the coils in coil order (the same bits for any thread count), the
    // voxels in blocks over the host's threads: C·N values, a quarter of a billion for 64 slices
    // of 256² with 32 coils.
    std::vector<double> per_voxel(static_cast<std::size_t>(n), 0.0);
    constexpr std::int64_t kBlock = 4096;
#pragma omp parallel for schedule(static)
    for (std::int64_t b = 0; b < (n + kBlock - 1) / kBlock; ++b)
      for (std::int64_t c = 0; c < coils; ++c)
        for (std::int64_t v = b * kBlock; v < std::min(n, (b + 1) * kBlock); ++v)
          per_voxel[static_cast<std::size_t>(v)] +=
              std::norm(std::complex<double>(maps[static_cast<std::size_t>(v + n * c)]));
    for (double p : per_voxel) {
      map_power += p;
      map_peak = std::max(map_peak, p);
    }
  }
  map_power /= static_cast<double>(n);
  const double map_scale = map_peak > 0 && std::isfinite(map_peak) ? std::sqrt(map_peak) : 1.0;
#pragma omp parallel for schedule(static)
  for (std::size_t i = 0; i < maps.size(); ++i) maps[i] = Complex(std::complex<double>(maps[i]) / map_scale);
  const std::vector<T> phase = cast(d.phase_maps);

  // k-space weights W of CG (min |W^1/2 (Ax - y)|^2): CG on the normal equations wants none (the
  // least-squares image); Pipe-Menon weights make the early iterations converge faster at the
  // price of noise, and are what a gridding preview (one adjoint) would want.
  choices["dcf"] = dcf;
  choices["dcf_reason"] = a.dcf == "auto" ? "CG on the normal equations: the unweighted least-squares image" : "asked for";
  if (slices && dcf != "none") notes.push_back("slice by slice, the density weights are those of the in-plane trajectory");
  const bool tty = ::isatty(::fileno(stderr)) != 0;
  const bool show = root && (a.progress == "on" || (a.progress == "auto" && tty && !a.json));

  settings.map_power = map_power;
  settings.map_scale = map_scale;

  // Solve.
  std::vector<Complex> x(static_cast<std::size_t>(n), Complex{});
  std::vector<double> residuals;
  std::string operator_name;  // of this process's (first) solve: it names the normal CG used
  double lambda_abs = 0;
  solve::Result res;
  double setup_s = 0, solve_s = 0, download_s = 0;
  const auto t_solve = std::chrono::steady_clock::now();
  if (!slices) {
    // The whole problem, or (--split coils) this place's coil share of it, whose operator sums
    // over the places (dist::rank_sum): every place runs the same CG, place 0's image is kept.
    ProgressBar bar(show, a.iters, "CG");
    const auto run_share = [&](const Context& c, dist::Share sh, const dist::CommPtr& comm, bool first) {
      op::Workspace y_ws(c), x_ws(c);
      const Complex* y_c = y_ctx;
      if (comm) {
        const std::span<const Complex> ys(y.data() + m * sh.begin, static_cast<std::size_t>(m * sh.size()));
        y_c = c.is_host() ? ys.data() : op::upload(y_ws, ys);
      }
      std::vector<Complex> x_own;  // a place other than the first: its image stays its own
      if (!first && c.is_host()) x_own.assign(static_cast<std::size_t>(n), Complex{});
      Complex* x_c = c.is_host() ? (first ? x.data() : x_own.data()) : x_ws.get_as<Complex>(n);
      const Problem<T> pr{
          .geometry = geometry,
          .no_field = no_field,
          .shape = shape,
          .coils = sh.size(),
          .maps = std::span<const Complex>(maps.data() + n * sh.begin, static_cast<std::size_t>(n * sh.size())),
          .context_maps = {},
          .shots = d.num_shots,
          .phase = phase,
          .encoding = nullptr};
      const Solved s = solve_problem<T>(settings, pr, c, y_c, x_c, comm,
                                        [&](const solve::Report& r) { if (first) bar.update(r.iteration, r.seconds, r.residual); });
      if (!first) return;
      res = s.res;
      lambda_abs = s.lambda_abs;
      residuals = s.residuals;
      operator_name = s.operator_name;
      setup_s = s.setup_s;
      solve_s = s.solve_s;
      if (c.is_cuda()) {
        const auto td = std::chrono::steady_clock::now();
        op::VectorOps<T>(c).to_host(n, x_c, x.data());  // the image, once
        download_s += since(td);
      }
    };
    if (split != Split::kCoils) {
      run_share(ctx, {0, coils}, nullptr, true);
    } else if (world) {
      // One share per rank: the sum over MPI (CPU ranks) or NCCL (one GPU per rank). A failure
      // inside the solve (a collective per iteration) stops every rank at once.
      agree.checkpoint();
      const dist::CommPtr comm = ctx.is_cuda() ? dist::nccl_over(world, ctx.device()) : world;
      try {
        run_share(ctx, share, comm, root);
      } catch (const std::exception& e) {
        const std::string message = "rank " + std::to_string(rank) + " of " + std::to_string(ranks) + ": " + e.what();
        if (comm != world) comm->abort(message);
        world->abort(message);
      }
    } else {
      // One host thread per device, each its share; NCCL sums between them. A failure aborts the
      // group (its peers' collectives then fail too) and the first one is reported.
      std::vector<int> ids;
      for (const auto& p : places) ids.push_back(p.context.device());
      const std::vector<dist::CommPtr> comms = dist::nccl_devices(ids);
      std::mutex failed_mutex;
      std::exception_ptr failed;
      std::vector<std::thread> threads;
      for (int i = 0; i < parts; ++i)
        threads.emplace_back([&, i] {
          try {
            run_share(places[static_cast<std::size_t>(i)].context, dist::split(coils, parts, i),
                      comms[static_cast<std::size_t>(i)], i == 0);
          } catch (const std::exception& e) {
            {
              const std::lock_guard<std::mutex> lock(failed_mutex);
              if (!failed) failed = std::current_exception();
            }
            comms[static_cast<std::size_t>(i)]->abort(places[static_cast<std::size_t>(i)].context.describe() + ": " + e.what());
          }
        });
      for (auto& t : threads) t.join();
      if (failed) std::rethrow_exception(failed);
    }
    bar.finish();
  } else {
    // Slice by slice: each slice's data go up, its image comes back; the bar counts slices.
    std::vector<Solved> solved(static_cast<std::size_t>(nz));
    // The slice workers' starts (begun before the k_z transform): what is left of them is waited
    // for here, inside the solve stage's wall time.
    if (workers) {
      times["slice_workers_wait"] = workers->ready();
      double longest = 0;
      for (const auto& w : workers->workers()) {
        longest = std::max(longest, w.start_s);
        if (w.staging && !w.staging->pinned() &&
            notes.end() == std::find_if(notes.begin(), notes.end(), [](const std::string& t) {
              return t.find("staging buffer") != std::string::npos;
            }))
          notes.push_back("a slice worker's staging buffer could not be pinned (" + w.staging->why() +
                          "); its copies go up staged by the driver");
      }
      times["slice_workers_start"] = longest;  // the longest start, concurrent with the host's preparation
    }
    // --pin on: the locks started above, waited for here (inside the solve stage's wall time).
    if (pin == "on") {
      const auto t_wait = std::chrono::steady_clock::now();
      for (auto& job : locking)
        for (auto& held : job.get()) pins.push_back(std::move(held));
      times["pin_wait"] = since(t_wait);
      times["pin"] = std::accumulate(lock_seconds.begin(), lock_seconds.end(), 0.0);
      const auto failed = std::find_if(pins.begin(), pins.end(), [](const op::PinnedHost& p) { return !p.pinned(); });
      if (failed != pins.end())
        notes.push_back("the slices' host data could not all be pinned (" + failed->why() +
                        "); they go up from pageable memory, staged");
    }
    // Each slice's seconds outside its set-up and solve: staging (buffers, the copies of its
    // k-space and, on a device, of its maps enqueued, or its maps cut out on the host; its
    // geometry where it has a field map), the image's download, and the whole of run_slice (the
    // rest: teardown).
    std::vector<double> slice_download(static_cast<std::size_t>(nz), 0.0), slice_stage(slice_download),
        slice_wall(slice_download);
    // The encoding every slice shares where the model allows (shared_encoding: no field map),
    // one per context: the slice worker's (made at its start), else built by the context's first
    // slice (its set-up time holds it).
    std::mutex encodings_mutex;
    std::map<std::pair<int, void*>, op::OperatorPtr<T>> encodings;
    const auto encoding_for = [&](const Context& c) {
      if (workers)
        if (const auto* w = workers->find(c)) return w->encoding;
      const std::pair<int, void*> key{c.is_host() ? -1 : c.device(), c.stream()};
      {
        const std::lock_guard<std::mutex> lock(encodings_mutex);
        if (const auto it = encodings.find(key); it != encodings.end()) return it->second;
      }
      op::OperatorPtr<T> e = shared_encoding<T>(settings, plane_encoding, coils, c);
      const std::lock_guard<std::mutex> lock(encodings_mutex);
      return encodings.emplace(key, std::move(e)).first->second;
    };
    const auto run_slice = [&](std::int64_t z, const Context& c) {
      const auto te = std::chrono::steady_clock::now();
      op::OperatorPtr<T> shared = encoding_for(c);
      const double encoding_s = since(te);
      const auto ts = std::chrono::steady_clock::now();
      op::Workspace y_ws(c), x_ws(c);  // one buffer each: a Workspace holds one
      // --pin staged: the slice's k-space and maps through its worker's pinned buffer.
      auto* const worker = workers ? workers->find(c) : nullptr;
      op::StagingBuffer* const staging = worker && worker->staging ? worker->staging.get() : nullptr;
      if (staging) staging->begin();
      const Complex* y_c = staging ? staging->upload(y_ws, slice_y(z)) : in_context(y_ws, slice_y(z));
      std::vector<Complex> xz(static_cast<std::size_t>(plane), Complex{});
      Complex* x_c = c.is_host() ? xz.data() : x_ws.get_as<Complex>(plane);
      // The slice's maps: on a device, plane z of every coil straight from the volume into a buffer
      // that the operator keeps (freed on the slice's stream after the solve); on the host, cut out.
      mri::ContextMaps<T> maps_c;
      std::vector<Complex> maps_z;
      if (c.is_cuda() && maps_on_device) {
        auto ws = std::make_shared<op::Workspace>(c);
        const Complex* p = staging ? staging->upload_rows(*ws, maps.data() + plane * z, plane, coils, plane * nz)
                                   : op::upload_rows(*ws, maps.data() + plane * z, plane, coils, plane * nz);
        maps_c = {std::span<const Complex>(p, static_cast<std::size_t>(plane * coils)), std::move(ws)};
      } else {
        maps_z = slice_of(maps, plane, nz, z, coils);
      }
      const std::vector<T> phase_z = phase.empty() ? phase : slice_of(phase, plane, nz, z, d.num_shots);
      const Problem<T> pz{.geometry = have_field && enc_kind != "nufft" ? slice_encoding(z, true) : plane_encoding,
                          .no_field = plane_encoding,
                          .shape = plane_shape,
                          .coils = coils,
                          .maps = maps_z,
                          .context_maps = std::move(maps_c),
                          .shots = d.num_shots,
                          .phase = phase_z,
                          .encoding = shared};
      slice_stage[static_cast<std::size_t>(z)] = since(ts);
      solved[static_cast<std::size_t>(z)] = solve_problem<T>(settings, pz, c, y_c, x_c, nullptr, {});
      solved[static_cast<std::size_t>(z)].setup_s += encoding_s;
      if (c.is_cuda()) {
        const auto td = std::chrono::steady_clock::now();
        op::VectorOps<T>(c).to_host(plane, x_c, xz.data());
        slice_download[static_cast<std::size_t>(z)] = since(td);
      }
      std::copy(xz.begin(), xz.end(), x.begin() + plane * z);
      slice_wall[static_cast<std::size_t>(z)] = since(te);
    };
    ProgressBar bar(show, static_cast<int>(own), world ? "slices (rank 0)" : "slices");
    int done = 0;
    std::mutex bar_mutex;
    const auto count = [&](std::int64_t z) {
      const std::lock_guard<std::mutex> lock(bar_mutex);
      bar.update(++done, since(t_solve), solved[static_cast<std::size_t>(z)].res.residual);
    };
    // The contexts that solve this process's slices: its slice workers (W per CUDA device, each
    // with a stream of its own, so that one slice's host set-up overlaps another's work on the
    // device), else its places. Under mpirun slice z is rank z mod K's. With several contexts the
    // slices are dealt dynamically (each context takes the next when it finishes one); with one,
    // they run in turn on this thread.
    std::vector<Context> contexts;
    if (workers) {
      for (const auto& w : workers->workers()) contexts.push_back(w.context);
    } else {
      for (const auto& p : places) contexts.push_back(p.context);
    }
    const auto mine = [&](std::int64_t z) { return !world || z % ranks == rank; };
    if (contexts.size() > 1) {
      dist::for_each_problem(nz, contexts, [&](std::int64_t z, const Context& c) {
        if (!mine(z)) return;
        run_slice(z, c);
        count(z);
      });
    } else {
      for (std::int64_t z = 0; z < nz; ++z) {
        if (!mine(z)) continue;
        run_slice(z, contexts.front());
        count(z);
      }
    }
    if (world) {
      // Rank 0 assembles the volume: one gather brings every rank's slices (z = rank, rank + K,
      // ...) straight into their planes of rank 0's x, and each slice's numbers beside them; only
      // rank 0 goes on. (Until session 28 one sum of the whole volume on every rank, the others
      // adding zeros: 13 ms for 34 MB over two ranks on the 2-core build machine, against 1.2 ms
      // for the planes sent where they belong.)
      const std::int64_t per = 8 + a.iters;  // numbers per slice
      const auto slices_of_rank = [&](int r) { return r < nz ? (nz - 1 - r) / ranks + 1 : std::int64_t{0}; };
      std::vector<double> numbers(static_cast<std::size_t>(slices_of_rank(rank) * per), 0.0);
      std::vector<std::span<const std::byte>> mine;
      double* o = numbers.data();
      for (std::int64_t z = rank; z < nz; z += ranks, o += per) {
        const Solved& s = solved[static_cast<std::size_t>(z)];
        o[0] = static_cast<double>(s.res.iterations);
        o[1] = s.res.residual;
        o[2] = s.lambda_abs;
        o[3] = s.setup_s;
        o[4] = s.solve_s;
        o[5] = slice_download[static_cast<std::size_t>(z)];
        o[6] = slice_stage[static_cast<std::size_t>(z)];
        o[7] = slice_wall[static_cast<std::size_t>(z)];
        for (std::size_t i = 0; i < s.residuals.size() && static_cast<std::int64_t>(i) < a.iters; ++i)
          o[8 + i] = s.residuals[i];
        mine.push_back(std::as_bytes(std::span<const Complex>(x.data() + plane * z, static_cast<std::size_t>(plane))));
      }
      mine.push_back(std::as_bytes(std::span<const double>(numbers)));
      // Rank 0's ranges: rank r's planes where they belong, then its numbers.
      std::vector<double> all_numbers(root ? static_cast<std::size_t>(nz * per) : 0);
      std::vector<std::span<std::byte>> into;
      if (root) {
        double* n_at = all_numbers.data();
        for (int r = 0; r < ranks; ++r) {
          for (std::int64_t z = r; z < nz; z += ranks)
            into.push_back(
                std::as_writable_bytes(std::span<Complex>(x.data() + plane * z, static_cast<std::size_t>(plane))));
          const auto count = static_cast<std::size_t>(slices_of_rank(r) * per);
          into.push_back(std::as_writable_bytes(std::span<double>(n_at, count)));
          n_at += count;
        }
      }
      const auto t_wait = std::chrono::steady_clock::now();
      agree.checkpoint();  // every rank has solved its slices, or all stop
      times["ranks_wait"] = since(t_wait);
      const auto t_gather = std::chrono::steady_clock::now();
      world->gather_pieces(mine, into, 0);
      times["assemble"] = since(t_gather);
      if (root) {
        const double* n_at = all_numbers.data();
        for (int r = 0; r < ranks; ++r)
          for (std::int64_t z = r; z < nz; z += ranks, n_at += per) {
            Solved& s = solved[static_cast<std::size_t>(z)];
            s.res.iterations = static_cast<int>(n_at[0]);
            s.res.residual = n_at[1];
            s.lambda_abs = n_at[2];
            s.setup_s = n_at[3];
            s.solve_s = n_at[4];
            slice_download[static_cast<std::size_t>(z)] = n_at[5];
            slice_stage[static_cast<std::size_t>(z)] = n_at[6];
            slice_wall[static_cast<std::size_t>(z)] = n_at[7];
            s.residuals.assign(n_at + 8, n_at + 8 + std::min<std::int64_t>(s.res.iterations, a.iters));
          }
      }
    }
    bar.finish();
    const std::size_t shared_encodings =
        workers ? static_cast<std::size_t>(std::count_if(workers->workers().begin(), workers->workers().end(),
                                                         [](const auto& w) { return w.encoding != nullptr; }))
                : static_cast<std::size_t>(std::count_if(encodings.begin(), encodings.end(),
                                                         [](const auto& e) { return e.second != nullptr; }));
    choices["slice_encoding"] = shared_encodings == 0
                                    ? "one per slice (it depends on the slice)"
                                    : "shared by the slices of each context (" + std::to_string(shared_encodings) + ")";
    encodings.clear();
    if (const std::int64_t z0 = world ? rank : 0; z0 < nz)
      operator_name = solved[static_cast<std::size_t>(z0)].operator_name;  // this process's first slice
    res.iterations = 0;
    res.residual = 0;
    for (std::int64_t z = 0; z < nz; ++z) {
      const Solved& s = solved[static_cast<std::size_t>(z)];
      res.iterations += s.res.iterations;
      res.residual = std::max(res.residual, s.res.residual);
      lambda_abs += s.lambda_abs;  // the whole problem's: Nz x a slice's
      residuals.insert(residuals.end(), s.residuals.begin(), s.residuals.end());
      setup_s += s.setup_s;
      solve_s += s.solve_s;
      download_s += slice_download[static_cast<std::size_t>(z)];
    }
    choices["slices"] = nz;
    // Each slice's own seconds, in slice order (where the sums above go: a first slice that pays
    // for the device's start, or slices that wait for one another).
    std::vector<double> slice_setup, slice_solve;
    for (const Solved& s : solved) {
      slice_setup.push_back(s.setup_s);
      slice_solve.push_back(s.solve_s);
    }
    times["slice_setup"] = slice_setup;
    times["slice_solve"] = slice_solve;
    times["slice_stage"] = slice_stage;
    times["slice_download"] = slice_download;
    times["slice_wall"] = slice_wall;
  }
  // Every collective is behind: from here on only rank 0 works (its errors are its own).
  agree.finish();
  if (!root) return kExitOk;
  if (!operator_name.empty()) choices["operator"] = operator_name;
  times["setup"] = setup_s;
  times["solve"] = solve_s;
  times["solve_wall"] = since(t_solve);  // set-up + solve (+ slices' transfers) of every place, wall clock
  if (ctx.is_cuda()) times["download"] = download_s;
  for (auto& v : x) v = Complex(std::complex<double>(v) * (data_scale / map_scale));
  for (const auto& v : x)
    if (!std::isfinite(v.real()) || !std::isfinite(v.imag()))
      throw Error(ErrorCode::kNonFinite, "the reconstruction diverged (NaN/Inf); nothing was written");

  // Truth.
  std::optional<double> nrmse;
  std::string truth_source;
  std::vector<std::complex<double>> truth;
  if (!a.truth.empty()) {
    truth = read_truth(a.truth, n);
    truth_source = a.truth;
  } else if (!d.truth.empty()) {
    truth = d.truth;
    truth_source = "the input's Truth";
  }
  if (!truth.empty()) {
    double e2 = 0, t2 = 0;
    for (std::int64_t v = 0; v < n; ++v) {
      const double t = std::abs(truth[static_cast<std::size_t>(v)]);
      e2 += std::pow(std::abs(std::complex<double>(x[static_cast<std::size_t>(v)])) - t, 2);
      t2 += t * t;
    }
    nrmse = t2 > 0 ? std::sqrt(e2 / t2) : std::numeric_limits<double>::quiet_NaN();
  }

  // Write.
  t0 = std::chrono::steady_clock::now();
  write_outputs<T>(a.outs, shape, x, d.fov_mm, "fieldft recon " + model + " " + enc_kind);
  times["write"] = since(t0);
  times["total"] = since(t_start);
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  const double peak_mib = static_cast<double>(usage.ru_maxrss) / 1024.0;  // Linux: kilobytes

  const std::string grid = grid_text(d);
  if (a.json) {
    nlohmann::json j;
    j["command"] = "recon";
    j["input"] = a.in;
    j["format"] = is_ismrmrd_path(a.in) ? "ismrmrd" : "cfl";
    j["matrix"] = shape;
    j["samples"] = m;
    j["coils"] = coils;
    j["shots"] = d.num_shots;
    j["field_map"] = have_field;
    j["prec"] = a.prec;
    j["choices"] = choices;
    j["iterations"] = res.iterations;
    j["lambda"] = a.lambda;
    j["lambda_absolute"] = lambda_abs;
    j["residuals"] = residuals;
    j["residual"] = res.residual;
    j["seconds"] = times;
    j["peak_memory_mib"] = peak_mib;
    j["memory"] = memory;
    j["outputs"] = a.outs;
    j["notes"] = notes;
    if (nrmse) {
      j["nrmse"] = *nrmse;
      j["truth"] = truth_source;
    }
    print_json(j);
    return kExitOk;
  }
  std::cout << std::setprecision(4);
  std::cout << "input:    " << a.in << " (" << (is_ismrmrd_path(a.in) ? "ISMRMRD" : "BART .cfl") << "): " << grid << ", "
            << m << " samples x " << coils << " coils, " << d.num_shots << " shot" << (d.num_shots > 1 ? "s" : "")
            << (have_field ? ", field map" : "") << (have_phase ? ", phase maps" : "") << "\n"
            << "model:    " << (model == "pcsense" ? "pcSENSE" : "SENSE") << " (" << choices["model_reason"].get<std::string>() << ")\n"
            << "encoding: " << enc_kind << " (" << choices["encoding_reason"].get<std::string>() << ")";
  if (choices.contains("segments")) std::cout << "; L = " << choices["segments"].get<int>();
  std::cout << ", NUFFT eps " << eps << "\n"
            << "maps:     " << choices["maps"].get<std::string>() << "\n"
            << "backend:  " << ctx.describe()
            << (ctx.is_cuda() ? " " + place.device_name : std::string()) << "; "
            << choices["backend_reason"].get<std::string>() << "\n";
  if (parts > 1) {
    std::cout << "spread:   " << parts << " " << place_word;
    if (!world) {
      std::cout << " (";
      for (std::size_t i = 0; i < places.size(); ++i) std::cout << (i ? ", " : "") << places[i].context.describe();
      std::cout << ")";
    }
    std::cout << ", split " << choices["split"].get<std::string>() << ": " << choices["split_reason"].get<std::string>() << "\n";
  }
  std::cout
            << "solver:   CG, " << res.iterations << " iterations, lambda " << a.lambda << " (x sum w x mean sum|S|^2 = "
            << lambda_abs << "), density compensation " << dcf << " (" << choices["dcf_reason"].get<std::string>()
            << "), final residual " << res.residual << "\n"
            << "memory:   " << choices["chunk"].get<std::string>() << (slices ? " (" + std::to_string(nz) + " slices)" : std::string())
            << ": " << choices["chunk_reason"].get<std::string>() << "; needs ~" << bytes_text(need_whole.total)
            << (need_slice ? ", one slice ~" + bytes_text(need_slice->total) : std::string()) << ", "
            << (std::isfinite(budget) ? bytes_text(budget) : std::string("unknown")) << " " << where << "\n";
  for (const auto& s : notes) std::cout << "note:     " << s << "\n";
  std::cout << "times:    ";
  for (const char* k : {"read", "upload", "kz_transform", "coil_maps", "setup", "solve", "download", "write", "total"})
    if (times.contains(k)) {
      std::string label = k;
      std::replace(label.begin(), label.end(), '_', ' ');
      std::cout << label << " " << times[k].get<double>() << " s" << (std::string(k) == "total" ? "" : ", ");
    }
  std::cout << "; peak host memory " << peak_mib << " MiB\n";
  if (nrmse) std::cout << "quality:  NRMSE " << *nrmse << " (magnitude, vs " << truth_source << ")\n";
  std::cout << "wrote:    ";
  for (std::size_t i = 0; i < a.outs.size(); ++i) std::cout << (i ? ", " : "") << a.outs[i];
  std::cout << "\n";
  return kExitOk;
}

}  // namespace

Subcommand add_recon_command(CLI::App& parent) {
  auto a = std::make_shared<ReconArgs>();
  CLI::App* app = parent.add_subcommand(
      "recon",
      "Reconstruct an image from non-Cartesian multi-coil k-space: an ISMRMRD file (.h5) or a BART .cfl set "
      "(P_ksp, P_traj and optional P_times, P_shots, P_maps, P_field, P_phase, P_truth; see `fieldft simulate`). "
      "The model follows the data: SENSE, or pcSENSE when per-shot phase maps are present; field-map correction "
      "(time segmentation or the exact DFT, whichever costs less) when a field map is present. Solved by conjugate "
      "gradients on the normal equations (CG-SENSE), on a CUDA GPU when there is one (--backend, --device)");
  app->add_option("input", a->in, "Input: FILE.h5 (ISMRMRD) or a .cfl set named P, P_ksp or P_ksp.cfl")->required();
  app->add_option("-o,--out", a->outs,
                  "Output image, format by extension: .nii/.nii.gz (NIfTI magnitude, voxel sizes from the FOV), "
                  ".npy (complex64, numpy order (Nz,) Ny, Nx), .cfl (BART), .png/.pgm (magnitude; slice mosaic in 3D); "
                  "repeatable. All are checked before any work; each is written atomically")
      ->required();
  app->add_option("--model", a->model, "auto (pcsense when per-shot phase maps are present, else sense), sense, pcsense")
      ->check(CLI::IsMember({"auto", "sense", "pcsense"}))
      ->capture_default_str();
  app->add_option("--encoding", a->encoding,
                  "nufft (no field correction), dft (exact field-corrected DFT), tseg (time-segmented NUFFT at "
                  "--accuracy), auto (nufft without a field map; with one, dft or tseg by estimated cost)")
      ->check(CLI::IsMember({"auto", "nufft", "dft", "tseg"}))
      ->capture_default_str();
  app->add_option("--accuracy", a->accuracy, "Time segmentation: worst-case relative phase error of exp(-i dw t)")
      ->check(finite_number(1e-12))
      ->capture_default_str();
  app->add_option("--eps", a->eps, "NUFFT tolerance; 0 = max(accuracy/10, 1e-5 float or 1e-9 double)")
      ->check(finite_number(0))
      ->capture_default_str();
  app->add_option("--maps", a->maps,
                  "Coil maps: auto (the input's, else rss), file (the input's), rss (estimated: low-resolution coil "
                  "images / root sum of squares), espirit (estimated), or a FILE (.cfl [Nx,Ny,Nz,C] or .npy)")
      ->capture_default_str();
  app->add_option("--iters", a->iters, "CG iterations (at most)")->check(CLI::Range(1, 100000))->capture_default_str();
  app->add_option("--lambda", a->lambda,
                  "Tikhonov weight, relative: the solver's lambda is this x sum_j w_j (the number of samples without "
                  "--dcf) x mean_v sum_c |S_c(v)|^2 (the diagonal of A^H W A), so values like 1e-3 mean the same "
                  "for any data size")
      ->check(finite_number(0))
      ->capture_default_str();
  app->add_option("--dcf", a->dcf,
                  "k-space weights W of CG, min |W^1/2 (A x - y)|^2: auto (what the solver wants: none for CG on the "
                  "normal equations, the least-squares image), none, or pipe (Pipe-Menon density compensation, 30 "
                  "iterations: faster early iterations, more noise)")
      ->check(CLI::IsMember({"auto", "none", "pipe"}))
      ->capture_default_str();
  app->add_option("--tolerance", a->tolerance, "Stop when the CG residual |r|/|r0| falls below this; 0: run --iters")
      ->check(finite_number(0))
      ->capture_default_str();
  app->add_option("--truth", a->truth,
                  "Reference image (.cfl, .npy or an ISMRMRD file's Truth) for the NRMSE; by default the input's "
                  "Truth array when it has one")
      ->check(CLI::ExistingFile | CLI::Validator([](std::string& p) {
                return std::filesystem::exists(p + ".cfl") ? std::string() : "no file '" + p + "'";
              }, ""));
  app->add_option("--matrix", a->matrix, ".cfl input without maps or truth: the image grid N, NxN or NxNxNz (default: from the trajectory's extent)");
  app->add_option("--traj", a->traj,
                  ".cfl input: the BART trajectory [3, samples, readouts] (cycles/FOV), instead of P_traj; with it the "
                  "input may be any BART k-space [1, samples, readouts, coils], e.g. `fieldft recon ksp --traj traj "
                  "--maps sens.cfl -o img.nii`");
  app->add_option("--prec", a->prec, "Precision of the reconstruction: f (float) or d (double)")
      ->check(CLI::IsMember({"f", "d"}))
      ->capture_default_str();
  app->add_option("--backend", a->backend,
                  "auto (CUDA when this build has CUDA and a device is visible, else the CPU), cpu, or cuda (an "
                  "error without CUDA or a device). On CUDA the data go to the device once, the operators and the "
                  "solver run there, and the image comes back once at the end")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}))
      ->capture_default_str();
  app->add_option("--devices", a->devices,
                  "Several CUDA devices of this machine: a list (0,1) or all. The work is split by --split; each "
                  "device's memory is checked before starting. Under `mpirun -n K` (one process per GPU), the "
                  "devices that the ranks of one node take in turn (default: every visible device); on the CPU "
                  "spread over processes with `mpirun -n K fieldft recon ...` instead");
  app->add_option("--split", a->split,
                  "How the work is shared by several devices or MPI ranks: auto (problems when the data are a stack "
                  "with at least one slice per device or rank, else coils), problems (slices dealt to the devices, "
                  "dynamically; over MPI ranks slice i on rank i mod K: the same image as one device), coils (one "
                  "problem, each device or rank its share of the coils, CG on the sum: the same image within float "
                  "rounding, one image-sized sum per iteration)")
      ->check(CLI::IsMember({"auto", "problems", "coils"}))
      ->capture_default_str();
  app->add_option("--slice-workers", a->slice_workers,
                  "Slice by slice on CUDA: slices in flight per device (host threads, each with its own stream), "
                  "so that one slice's set-up on the host overlaps another's solve on the device; 0 = automatic: 3 on "
                  "CUDA, fewer where three slices do not fit each device's memory")
      ->check(at_least(0))
      ->capture_default_str();
  app->add_option("--pin", a->pin,
                  "Slice by slice on CUDA, how each slice's k-space and maps go up to its device. on: this "
                  "process's k-space and maps page-locked for the run, in the background while the host still "
                  "prepares them (seconds.pin; seconds.pin_wait, what the solve stage waited), so that the copies read "
                  "them directly; staged: through a page-locked buffer of each slice worker, filled on several host "
                  "threads; off: from pageable memory, staged by the driver on one thread; auto: on where that locks "
                  "at most a quarter of the host's memory, else staged. --json reports the choice (choices.pin, "
                  "pin_reason)")
      ->check(CLI::IsMember({"auto", "staged", "on", "off"}))
      ->capture_default_str();
  app->add_option("--device", a->device, "CUDA device ordinal (0 .. devices-1; see `fieldft info`); ignored on the CPU")->check(at_least(0))->capture_default_str();
  add_threads_option(*app, a->threads);
  app->add_option("--progress", a->progress,
                  "Progress bar on stderr (iteration, residual, ETA): auto (only on a terminal, not with --json), on, off")
      ->check(CLI::IsMember({"auto", "on", "off"}))
      ->capture_default_str();
  app->add_option("--chunk", a->chunk,
                  "Split the work to fit memory: auto (the whole problem when its estimated memory fits, else slice "
                  "by slice when the data are a stack: 3D with every k_z plane of the grid sampled by the same "
                  "in-plane trajectory and readout times, which separates exactly into 2D problems after an inverse "
                  "FFT along k_z), slices (always slice by slice; an error for data that are not a stack), none (the "
                  "whole, or an error saying how much is needed and available)")
      ->check(CLI::IsMember({"auto", "slices", "none"}))
      ->capture_default_str();
  app->add_option("--memory-limit", a->memory_limit_text,
                  "Memory the reconstruction may use (e.g. 8G, 512M; binary units), on the device on CUDA, on the host "
                  "on the CPU; default: what is free there. The estimate is conservative (data, maps, operator scratch, "
                  "Toeplitz kernels, solver vectors; see docs/architecture.md)");
  app->add_flag("--gram", a->gram,
                "pcSENSE with --encoding dft on a CUDA device in float: each CG normal through the stored Gram matrix "
                "of the exact-DFT model (voxels^2 complex values, 2 GiB at 128^2, built once before the solve from DFT "
                "passes of unit images) instead of two DFT passes: faster iterations for a longer set-up. Elsewhere it "
                "changes nothing; choices.operator names the normal used");
  app->add_flag("--json", a->json, "Print one JSON object (choices, times, residuals, NRMSE) instead of text");
  return {app,
          [a] {
            cap_threads(a->threads);
            if (!a->memory_limit_text.empty()) a->memory_limit = parse_bytes(a->memory_limit_text, "--memory-limit");
            // Under mpirun -n K (K > 1): MPI_COMM_WORLD, and errors agreed between the ranks.
            Agreement agree(dist::launched_by_mpi() ? dist::mpi_world() : nullptr);
            return run_agreed(agree, [&] {
              return with_precision(a->prec, [&]<class T>() { return run_recon<T>(*a, agree); });
            });
          },
          "use --prec f, --encoding tseg, or fewer coils"};
}

}  // namespace fieldft::cli
