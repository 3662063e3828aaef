// Strong scaling of ONE 3D field-corrected SENSE reconstruction over GPUs by splitting its coils
// (issue 26, item 4 (ii); docs/scale-out.md, mode (b)). CUDA only. Not a test. bench/scale/README.md
// says how to run it and read its table.
//
// Problem (defaults): n³ = 256³ image (the 3D Shepp–Logan head, mri::shepp_logan), C = 32 smooth
// normalised coil maps (mri::coil_maps), a stack of spirals: n k_z planes × n/8 arms × 8n samples
// (256 × 32 × 2048 = 16.8 M samples: n² per plane, 1.27 times the π n²/4 of the k-space disc), a
// readout of 4 ms (dwell 4 ms / 8n), a smooth field map of ±100 Hz plus a localised offset of
// 100 Hz (mri::field_map, the defaults of `fieldft simulate`). Encoding: mri::TimeSegmentedEncoding
// of batch C inside mri::sense (as `fieldft recon --encoding tseg` builds it), float, NUFFT eps 1e-3,
// accuracy 1e-3, its normal the library's choice (Toeplitz::kAuto). Data: y = A x_true with the
// operator of run (1) itself, on the first device (no noise).
//
// Runs, the same CG (K iterations from 0, tolerance 0, λ = 1e-3·M/N as bench/recon):
//   (1) the first device, all coils, solve::cg on the SENSE operator;
//   (D) one host thread per device d, coils dist::split(C, D, d), dist::rank_sum(part, comm[d])
//       with comm = dist::nccl_devices(devices): one image-sized allreduce per iteration.
// Set-up = the operator's construction and prepare_normal (the Toeplitz kernels), synchronised,
// after every device's first use (warm_devices: a small problem of the same kind on each);
// run (D)'s set-up runs in parallel threads, timed from their start to the last one's end (the
// NCCL communicators, made once per process before it, are not counted). Solve =
// the CG alone, devices synchronised before and after, best of --repeat after a one-iteration
// warm-up (which allocates the operators' scratch). Data transfers are in neither. allreduce = K
// image-sized allreduce_sum calls on the communicators alone, synchronised: the part of run (D)'s
// solve that communication takes (it is not overlapped with computation).
#include <cuda_runtime.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstring>
#include <exception>
#include <fstream>
#include <functional>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <numbers>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "fieldft/context.hpp"
#include "fieldft/dist.hpp"
#include "fieldft/error.hpp"
#include "fieldft/mri/encoding.hpp"
#include "fieldft/mri/sense.hpp"
#include "fieldft/mri/simulate.hpp"
#include "fieldft/mri/time_segmentation.hpp"
#include "fieldft/runtime.hpp"
#include "fieldft/solve/cg.hpp"

using namespace fieldft;
using Complex = std::complex<float>;
using Clock = std::chrono::steady_clock;

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

void check_cuda(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw Error(ErrorCode::kInternal, std::string(what) + ": " + cudaGetErrorString(e));
}

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// n complex floats on ctx's device; transfers ordered on ctx's stream and waited for.
class DeviceVector {
 public:
  DeviceVector(Context ctx, std::int64_t n) : ctx_(std::move(ctx)), n_(n) {
    check_cuda(cudaSetDevice(ctx_.device()), "cudaSetDevice");
    check_cuda(cudaMalloc(&p_, bytes()), "cudaMalloc");
  }
  ~DeviceVector() { cudaFree(p_); }
  DeviceVector(const DeviceVector&) = delete;
  DeviceVector& operator=(const DeviceVector&) = delete;
  Complex* get() { return p_; }
  void upload(const Complex* host) { copy(p_, host, cudaMemcpyHostToDevice); }
  std::vector<Complex> download() {
    std::vector<Complex> v(static_cast<std::size_t>(n_));
    copy(v.data(), p_, cudaMemcpyDeviceToHost);
    return v;
  }
  void zero() {
    check_cuda(cudaSetDevice(ctx_.device()), "cudaSetDevice");
    check_cuda(cudaMemsetAsync(p_, 0, bytes(), stream()), "cudaMemsetAsync");
    ctx_.synchronize();
  }

 private:
  std::size_t bytes() const { return static_cast<std::size_t>(n_) * sizeof(Complex); }
  cudaStream_t stream() const { return static_cast<cudaStream_t>(ctx_.stream()); }
  void copy(void* to, const void* from, cudaMemcpyKind kind) {
    check_cuda(cudaSetDevice(ctx_.device()), "cudaSetDevice");
    check_cuda(cudaMemcpyAsync(to, from, bytes(), kind, stream()), "cudaMemcpyAsync");
    ctx_.synchronize();
  }
  Context ctx_;
  std::int64_t n_;
  Complex* p_ = nullptr;
};

struct Args {
  std::int64_t n = 256, coils = 32, arms = 0, samples = 0;
  int iters = 30, repeat = 1;  // 30: shared/BENCHMARKS.md's reconstruction protocol
  std::vector<int> devices{0, 1};
  std::vector<int> counts;  // device counts of the runs (D); empty: {1, devices.size()}
  double readout_ms = 4, field_hz = 100, offset_hz = 100, eps = 1e-3, accuracy = 1e-3;
  bool smoke = false, plan = false, memory_check = true;
  std::string json;
};

// The host side: geometry, maps, truth, all deterministic (mri/simulate.hpp).
struct Problem {
  std::vector<std::int64_t> grid;
  std::int64_t voxels = 0, samples = 0, coils = 0;
  std::shared_ptr<const mri::Encoding<float>> encoding;
  std::vector<Complex> maps, truth;  // maps: image + {C}
  double readout_s = 0, field_max_hz = 0;
};

Problem make_geometry(const Args& a) {
  Problem p;
  p.grid = {a.n, a.n, a.n};
  p.coils = a.coils;
  const auto t = mri::spiral_trajectory(p.grid, {.interleaves = a.arms, .samples = a.samples});
  const double dwell = a.readout_ms * 1e-3 / static_cast<double>(a.samples);
  const auto times = mri::readout_times(t, dwell);
  mri::FieldMapOptions fo;
  fo.max_hz = a.field_hz;
  fo.susceptibility_hz = a.offset_hz;
  const auto field = mri::field_map(p.grid, fo);
  const auto f = [](const std::vector<double>& v) { return std::vector<float>(v.begin(), v.end()); };
  const auto kx = f(t.kx), ky = f(t.ky), kz = f(t.kz), tt = f(times), ff = f(field);
  p.encoding = std::make_shared<const mri::Encoding<float>>(std::span<const std::int64_t>(p.grid), kx, ky, kz, tt, ff);
  p.voxels = p.encoding->num_voxels();
  p.samples = p.encoding->num_samples();
  p.readout_s = *std::max_element(times.begin(), times.end());
  for (double w : field) p.field_max_hz = std::max(p.field_max_hz, std::abs(w) / (2 * std::numbers::pi));
  return p;
}

void make_images(const Args& a, Problem& p) {
  const auto maps = mri::coil_maps(p.grid, a.coils, {.normalize = true});
  p.maps.assign(maps.begin(), maps.end());
  const auto truth = mri::shepp_logan(p.grid, 1);  // one sample per voxel: 256³ in seconds
  p.truth.assign(truth.begin(), truth.end());
}

mri::TimeSegmentationOptions tseg_options(const Args& a) {
  mri::TimeSegmentationOptions o;
  o.accuracy = a.accuracy;
  o.eps = a.eps;
  return o;  // toeplitz: kAuto, the library's choice
}

// Peak device memory of one device holding `coils` coils, in bytes: an upper bound of what this
// benchmark allocates (c = 8 bytes a complex float, N voxels, M samples, L segments, B = coils):
//   maps, data and SENSE's coil images   (2N + M)·B·c
//   time segmentation's stacked images and samples   L·B·(N + M)·c
//   its two NUFFT plans' fine grids      2 · min(8, L·B) · 2.25³N·c (CUDA batches 8 transforms;
//                                        2.25 the largest upsampling it picks) + 20 bytes a sample
//   the Toeplitz normal                  L'·(8N + N)·c kernels and phase images, L' taken as L + 2
//                                        (the difference spans twice the field range, but its
//                                        histogram peaks at 0), + 2·8N·c for one padded grid and
//                                        cuFFT's work area
//   CG and the truth                     6N·c
// times 1.1, plus 1.5 GiB (CUDA context, cuFFT plans, NCCL buffers). During set-up the PSF's
// type 1 transform on the 2N grid (up to 2³·8N·c) is held instead of the stacked vectors; the
// larger of the two counts. Not counted: the NUFFT plans' cuFFT work areas (cuFFT's choice, up to
// a batch of fine grids for sizes like 576³); the runs print what each device holds after the
// warm-up beside this estimate, and --no-memory-check runs past it.
double device_bytes(std::int64_t voxels, std::int64_t samples, std::int64_t coils, int segments) {
  const double c = sizeof(Complex), n = static_cast<double>(voxels), m = static_cast<double>(samples);
  const double b = static_cast<double>(coils), l = segments, lp = segments + 2;
  const double fine = 2.25 * 2.25 * 2.25 * n;
  const double held = (2 * n + m) * b * c + 2 * std::min(8.0, l * b) * fine * c + 20 * m +
                      lp * 9 * n * c + 2 * 8 * n * c + 6 * n * c;
  const double stacks = l * b * (n + m) * c, psf = 8 * 8 * n * c;
  return 1.1 * (held + std::max(stacks, psf)) + 1.5 * kGiB;
}

// The largest coil share device index r holds over the runs: all coils in run (1) for the first
// device, else its share in the smallest run (D) that uses it.
std::int64_t largest_share(const Args& a, int r) {
  if (r == 0) return a.coils;
  std::int64_t share = 0;
  for (int c : a.counts)
    if (c > r) share = std::max(share, dist::split(a.coils, c, r).size());
  return share;
}

// The free memory of each device against the estimate for its largest coil share; kTooLarge
// with the largest coil count that fits when it does not.
void check_memory(const Args& a, const Problem& p, int segments) {
  const auto gpus = cuda_devices();
  const int d_count = static_cast<int>(a.devices.size());
  for (int r = 0; r < d_count; ++r) {
    const int dev = a.devices[static_cast<std::size_t>(r)];
    if (dev < 0 || dev >= static_cast<int>(gpus.size()))
      throw Error(ErrorCode::kInvalidArgument, "--devices: cuda:" + std::to_string(dev) + " is not visible (" +
                                                   std::to_string(gpus.size()) + " devices)");
    // The first device runs the whole problem (run 1); the others their share.
    const std::int64_t share = largest_share(a, r);
    if (share == 0) continue;  // a device no run uses
    const double need = device_bytes(p.voxels, p.samples, share, segments);
    const double free_b = static_cast<double>(gpus[static_cast<std::size_t>(dev)].free_memory);
    if (need <= free_b) continue;
    std::int64_t fits = 0;
    for (std::int64_t c = a.coils - 1; c >= 1 && fits == 0; --c)
      if (device_bytes(p.voxels, p.samples, c, segments) <= free_b) fits = c;
    char buf[512];
    std::snprintf(buf, sizeof buf,
                  "cuda:%d needs about %.1f GiB for %lld coils of %lld³ (L = %d), %.1f GiB are free: %s", dev,
                  need / kGiB, static_cast<long long>(share), static_cast<long long>(a.n), segments, free_b / kGiB,
                  fits > 0 ? ("use --coils " + std::to_string(fits) + " (run (1) holds all coils on one device)").c_str()
                           : "use a smaller --n");
    throw Error(ErrorCode::kTooLarge, buf);
  }
}

// The operator of coils [share.begin, share.end) on ctx; *tseg: its encoding.
// The construction's two parts, each synchronised: the time-segmented encoding (its design on
// the host, its NUFFT plan of every sample, its buffers) and SENSE (the share's maps into the
// context).
struct ConstructParts {
  double tseg_s = 0, sense_s = 0;
};

op::OperatorPtr<float> make_part(const Args& a, const Problem& p, const Context& ctx, dist::Share share,
                                 std::shared_ptr<mri::TimeSegmentedEncoding<float>>* tseg,
                                 ConstructParts* parts = nullptr) {
  mri::TimeSegmentationOptions o = tseg_options(a);
  o.batch = share.size();
  auto t0 = Clock::now();
  auto e = std::make_shared<mri::TimeSegmentedEncoding<float>>(p.encoding, ctx, o);
  ctx.synchronize();
  if (parts) parts->tseg_s = seconds_since(t0);
  if (tseg) *tseg = e;
  const std::span<const Complex> maps(p.maps.data() + share.begin * p.voxels,
                                      static_cast<std::size_t>(share.size() * p.voxels));
  t0 = Clock::now();
  auto op = mri::sense<float>(e, maps, {a.n, a.n, a.n, share.size()});
  ctx.synchronize();
  if (parts) parts->sense_s = seconds_since(t0);
  return op;
}

// Every device's first use before any timed set-up: its CUDA context, the kernels' modules
// (loaded lazily at their first launch), cuFFT's plans and library. Without it run (1) paid
// device 0's first use in its set-up, serially, and run (D) only the other devices', in parallel
// (on 2x H200 run (1)'s set-up measured 2.8 s in one call and 4.3 s in another): the comparison
// would depend on which run touches a device first. A small problem of the same kind (32³, two
// coils, the same options and code paths) is built, prepared and applied once on each device.
void warm_devices(const Args& a) {
  Args w = a;
  w.n = 32;
  w.coils = 2;
  w.arms = 4;
  w.samples = 256;
  Problem p = make_geometry(w);
  make_images(w, p);
  for (int d : a.devices) {
    const Context ctx = Context::cuda(d);
    auto op = make_part(w, p, ctx, {0, w.coils}, nullptr);
    op->prepare_normal();
    DeviceVector x(ctx, p.voxels), z(ctx, p.voxels);
    x.upload(p.truth.data());
    op->apply_normal(x.get(), z.get());
    ctx.synchronize();
  }
}

// Where a rank's set-up went: the construction's parts and prepare_normal's
// (FieldToeplitzNormal::setup_parts), for the report line of each rank.
std::string setup_text(const ConstructParts& c, const op::LinearOperator<float>& part,
                       const mri::TimeSegmentedEncoding<float>& tseg) {
  char buf[400];
  int n = std::snprintf(buf, sizeof buf, "construct = time segmentation %.2f (design %.2f) + sense %.2f s", c.tseg_s,
                        tseg.report().design_seconds, c.sense_s);
  if (const auto* t = mri::field_toeplitz_normal<float>(part)) {
    const auto q = t->setup_parts();
    std::snprintf(buf + n, sizeof buf - static_cast<std::size_t>(n),
                  "; prepare_normal: design %.2f, phases %.2f, engine %.2f, kernels %.2f, broadcast %.2f s", q.design,
                  q.phases, q.engine, q.kernels, q.broadcast);
  }
  return buf;
}

std::size_t free_bytes(int device) {
  std::size_t f = 0, t = 0;
  check_cuda(cudaSetDevice(device), "cudaSetDevice");
  check_cuda(cudaMemGetInfo(&f, &t), "cudaMemGetInfo");
  return f;
}

// fn(r) on one host thread per rank; a rank that throws aborts the group (so that the others,
// waiting in a collective, return) and the first error is rethrown. Returns the wall time.
double on_ranks(const std::vector<dist::CommPtr>& comms, const std::function<void(int)>& fn) {
  std::vector<std::exception_ptr> errors(comms.size());
  std::vector<std::thread> threads;
  const auto t0 = Clock::now();
  for (std::size_t r = 0; r < comms.size(); ++r)
    threads.emplace_back([&, r] {
      try {
        fn(static_cast<int>(r));
      } catch (...) {
        errors[r] = std::current_exception();
        comms[r]->abort("coil_split_bench: rank " + std::to_string(r) + " failed");
      }
    });
  for (auto& t : threads) t.join();
  const double s = seconds_since(t0);
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
  return s;
}

struct Run {
  int devices = 1;
  std::int64_t coils_per_device = 0;
  // set-up = construct (the operator) + prepare (prepare_normal: the Toeplitz kernels); run (D):
  // the slowest rank's parts.
  double setup_s = 0, construct_s = 0, prepare_s = 0, solve_s = std::numeric_limits<double>::infinity();
  double allreduce_s = 0, diff = 0;  // run (D): K allreduce calls alone; max |x_D − x_1| / max |x_1|
  bool identical = true;             // run (D): the ranks' images bit-identical
  std::string normal;                // which normal prepare_normal built
};

// What prepare_normal built on `part` (SENSE of the share; mri::field_toeplitz_normal): the
// field-corrected Toeplitz normal (its name: L', grid, a stacked axis) or the time-segmented
// passes, and the device memory it took.
std::string normal_text(const op::LinearOperator<float>& part, int segments, double taken_bytes) {
  char buf[400];
  if (const auto* t = mri::field_toeplitz_normal<float>(part))
    std::snprintf(buf, sizeof buf, "%s, L %d (prepare_normal took %.2f GiB, kernels %.3f GiB)", t->name().c_str(),
                  segments, taken_bytes / kGiB, t->kernel_bytes() / kGiB);
  else
    std::snprintf(buf, sizeof buf, "time-segmented passes, L %d (prepare_normal took %.2f GiB)", segments,
                  taken_bytes / kGiB);
  return buf;
}

solve::CgOptions cg_options(int iters, double lambda) {
  solve::CgOptions o;
  o.max_iterations = iters;
  o.tolerance = 0;  // every iteration runs, no host round trip
  o.lambda = lambda;
  return o;
}

double max_abs(const std::vector<Complex>& v) {
  double m = 0;
  for (const auto& z : v) m = std::max(m, static_cast<double>(std::abs(z)));
  return m;
}

// Run (D): the coils split over the first `count` devices, one host thread per device, one NCCL
// allreduce of the image per iteration.
Run run_split(const Args& a, const Problem& p, int count, int segments, const std::vector<Complex>& y,
              const std::vector<Complex>& x1, const solve::CgOptions& cg, const solve::CgOptions& warm) {
  const std::vector<int> devices(a.devices.begin(), a.devices.begin() + count);
  const auto d_count = static_cast<std::size_t>(count);
  auto comms = dist::nccl_devices(devices);
  std::vector<op::OperatorPtr<float>> ops(d_count);
  std::vector<std::unique_ptr<DeviceVector>> xs(d_count), ys(d_count);
  std::vector<std::vector<Complex>> images(d_count);
  std::vector<std::string> normals(d_count), setups(d_count);
  std::vector<ConstructParts> parts(d_count);
  std::vector<double> construct_s(d_count), prepare_s(d_count);
  std::vector<std::size_t> free_before(d_count);
  for (std::size_t i = 0; i < d_count; ++i) free_before[i] = free_bytes(devices[i]);
  std::vector<Context> ctxs;
  for (int d : devices) ctxs.push_back(Context::cuda(d));
  Run rd;
  rd.devices = count;
  rd.coils_per_device = dist::split(a.coils, count, 0).size();
  rd.setup_s = on_ranks(comms, [&](int r) {
    const auto i = static_cast<std::size_t>(r);
    dist::agree_on_errors(comms[i], [&] {
      std::shared_ptr<mri::TimeSegmentedEncoding<float>> tseg;
      const dist::Share share = dist::split(a.coils, count, r);
      auto t0 = Clock::now();
      const op::OperatorPtr<float> part = make_part(a, p, ctxs[i], share, &tseg, &parts[i]);
      ops[i] = dist::rank_sum<float>(part, comms[i]);
      ctxs[i].synchronize();
      construct_s[i] = seconds_since(t0);
      const std::size_t before = free_bytes(ctxs[i].device());
      t0 = Clock::now();
      ops[i]->prepare_normal();
      ctxs[i].synchronize();
      prepare_s[i] = seconds_since(t0);
      normals[i] = normal_text(*part, tseg->segments(),
                               static_cast<double>(before) - static_cast<double>(free_bytes(ctxs[i].device())));
      setups[i] = setup_text(parts[i], *part, *tseg);
    });
  });
  rd.construct_s = *std::max_element(construct_s.begin(), construct_s.end());
  rd.prepare_s = *std::max_element(prepare_s.begin(), prepare_s.end());
  rd.normal = normals[0];
  for (std::size_t i = 0; i < d_count; ++i)
    std::printf("run (%d), rank %zu on cuda:%d: %s; construct %.2f s, prepare_normal %.2f s\n    %s\n", count, i,
                devices[i], normals[i].c_str(), construct_s[i], prepare_s[i], setups[i].c_str());
  on_ranks(comms, [&](int r) {  // this rank's rows of the data: coils of its share, {M, C} layout
    const auto i = static_cast<std::size_t>(r);
    const dist::Share share = dist::split(a.coils, count, r);
    xs[i] = std::make_unique<DeviceVector>(ctxs[i], p.voxels);
    ys[i] = std::make_unique<DeviceVector>(ctxs[i], share.size() * p.samples);
    ys[i]->upload(y.data() + share.begin * p.samples);
    xs[i]->zero();
    solve::cg<float>(*ops[i], ys[i]->get(), xs[i]->get(), nullptr, warm);
    ctxs[i].synchronize();
  });
  for (std::size_t i = 0; i < d_count; ++i)
    std::printf("run (%d): cuda:%d holds %.1f GiB after the warm-up (estimate %.1f GiB)\n", count, devices[i],
                (static_cast<double>(free_before[i]) - free_bytes(devices[i])) / kGiB,
                device_bytes(p.voxels, p.samples, dist::split(a.coils, count, static_cast<int>(i)).size(),
                             segments) / kGiB);
  for (int k = 0; k < a.repeat; ++k) {
    on_ranks(comms, [&](int r) { xs[static_cast<std::size_t>(r)]->zero(); });
    rd.solve_s = std::min(rd.solve_s, on_ranks(comms, [&](int r) {
      const auto i = static_cast<std::size_t>(r);
      solve::cg<float>(*ops[i], ys[i]->get(), xs[i]->get(), nullptr, cg);
      ctxs[i].synchronize();
    }));
  }
  on_ranks(comms, [&](int r) { images[static_cast<std::size_t>(r)] = xs[static_cast<std::size_t>(r)]->download(); });
  // The allreduce alone: K image-sized sums (after one warm-up), on the solve's streams.
  on_ranks(comms, [&](int r) {
    const auto i = static_cast<std::size_t>(r);
    comms[i]->allreduce_sum(xs[i]->get(), p.voxels, ctxs[i]);
    ctxs[i].synchronize();
  });
  rd.allreduce_s = on_ranks(comms, [&](int r) {
    const auto i = static_cast<std::size_t>(r);
    for (int k = 0; k < a.iters; ++k) comms[i]->allreduce_sum(xs[i]->get(), p.voxels, ctxs[i]);
    ctxs[i].synchronize();
  });
  double m = 0;
  for (std::size_t i = 0; i < x1.size(); ++i) m = std::max(m, static_cast<double>(std::abs(images[0][i] - x1[i])));
  rd.diff = m / max_abs(x1);
  for (const auto& im : images)
    rd.identical = rd.identical && std::memcmp(im.data(), images[0].data(), im.size() * sizeof(Complex)) == 0;
  return rd;
}

int run(const Args& a) {
  auto t0 = Clock::now();
  Problem p = make_geometry(a);
  const auto plan = mri::plan_time_segmentation<float>(*p.encoding, tseg_options(a));
  const int d_count = static_cast<int>(a.devices.size());
  std::printf("problem: %lld³, %lld coils, stack of spirals %lld planes × %lld arms × %lld samples = %lld, readout "
              "%.2f ms, field up to %.0f Hz; time segmentation L = %d (%s); %d device(s)\n",
              static_cast<long long>(a.n), static_cast<long long>(a.coils), static_cast<long long>(a.n),
              static_cast<long long>(a.arms), static_cast<long long>(a.samples), static_cast<long long>(p.samples),
              1e3 * p.readout_s, p.field_max_hz, plan.segments, plan.reason.c_str(), d_count);
  for (int r = 0; r < d_count; ++r) {
    const std::int64_t share = largest_share(a, r);
    std::printf("memory estimate, cuda:%d: %.1f GiB (%lld coils%s)\n", a.devices[static_cast<std::size_t>(r)],
                device_bytes(p.voxels, p.samples, share, plan.segments) / kGiB, static_cast<long long>(share),
                r == 0 ? ", run (1)" : "");
  }
  for (int c : a.counts)
    if (c > 1)
      std::printf("memory estimate per device in run (%d): %.1f GiB\n", c,
                  device_bytes(p.voxels, p.samples, dist::split(a.coils, c, 0).size(), plan.segments) / kGiB);
  if (a.plan) return 0;
  if (a.memory_check) check_memory(a, p, plan.segments);
  make_images(a, p);
  std::printf("host set-up %.1f s\n", seconds_since(t0));
  t0 = Clock::now();
  warm_devices(a);
  std::printf("devices warmed (first use, untimed below) in %.1f s\n", seconds_since(t0));
  const double lambda = 1e-3 * static_cast<double>(p.samples) / static_cast<double>(p.voxels);
  const solve::CgOptions cg = cg_options(a.iters, lambda), warm = cg_options(1, lambda);
  std::vector<Run> runs;

  // Run (1): all coils on the first device; it also makes the data.
  std::vector<Complex> y, x1;
  {
    const Context ctx = Context::cuda(a.devices[0]);
    Run r1;
    r1.coils_per_device = a.coils;
    std::shared_ptr<mri::TimeSegmentedEncoding<float>> tseg;
    const std::size_t free0 = free_bytes(ctx.device());
    ctx.synchronize();
    t0 = Clock::now();
    ConstructParts parts;
    auto op = make_part(a, p, ctx, {0, a.coils}, &tseg, &parts);
    ctx.synchronize();
    r1.construct_s = seconds_since(t0);
    const std::size_t free1 = free_bytes(ctx.device());
    op->prepare_normal();
    ctx.synchronize();
    r1.setup_s = seconds_since(t0);
    r1.prepare_s = r1.setup_s - r1.construct_s;
    r1.normal =
        normal_text(*op, tseg->segments(), static_cast<double>(free1) - static_cast<double>(free_bytes(ctx.device())));
    std::printf("run (1): operator %.2f GiB; %s\n    %s\n", (static_cast<double>(free0) - free1) / kGiB,
                r1.normal.c_str(), setup_text(parts, *op, *tseg).c_str());
    DeviceVector xd(ctx, p.voxels), yd(ctx, op->codomain_size());
    xd.upload(p.truth.data());
    op->apply(xd.get(), yd.get());
    y = yd.download();
    xd.zero();
    solve::cg<float>(*op, yd.get(), xd.get(), nullptr, warm);
    ctx.synchronize();
    std::printf("run (1): cuda:%d holds %.1f GiB after the warm-up (estimate %.1f GiB)\n", ctx.device(),
                (static_cast<double>(free0) - free_bytes(ctx.device())) / kGiB,
                device_bytes(p.voxels, p.samples, a.coils, plan.segments) / kGiB);
    for (int k = 0; k < a.repeat; ++k) {
      xd.zero();
      t0 = Clock::now();
      solve::cg<float>(*op, yd.get(), xd.get(), nullptr, cg);
      ctx.synchronize();
      r1.solve_s = std::min(r1.solve_s, seconds_since(t0));
    }
    x1 = xd.download();
    runs.push_back(r1);
  }  // run (1)'s operator and vectors are freed here

  // Run (D) for each count D > 1 of --counts, on the first D devices.
  for (int count : a.counts)
    if (count > 1) runs.push_back(run_split(a, p, count, plan.segments, y, x1, cg, warm));
  // The table.
  const Run& one = runs.front();
  std::printf("\n| devices | coils/device | set-up s (construct + prepare_normal) | solve s | ms/iteration | speed-up "
              "solve | speed-up set-up+solve | normal |\n|---|---|---|---|---|---|---|---|\n");
  nlohmann::json rows = nlohmann::json::array();
  for (const Run& r : runs) {
    const double s_solve = one.solve_s / r.solve_s, s_total = (one.setup_s + one.solve_s) / (r.setup_s + r.solve_s);
    std::printf("| %d | %lld | %.2f (%.2f + %.2f) | %.3f | %.1f | %.2f | %.2f | %s |\n", r.devices,
                static_cast<long long>(r.coils_per_device), r.setup_s, r.construct_s, r.prepare_s, r.solve_s,
                1e3 * r.solve_s / a.iters, s_solve, s_total, r.normal.c_str());
    nlohmann::json row = {{"devices", r.devices}, {"coils_per_device", r.coils_per_device}, {"setup_s", r.setup_s},
                          {"construct_s", r.construct_s}, {"prepare_normal_s", r.prepare_s},
                          {"solve_s", r.solve_s}, {"ms_per_iteration", 1e3 * r.solve_s / a.iters},
                          {"speedup_solve", s_solve}, {"speedup_setup_solve", s_total}, {"normal", r.normal}};
    if (r.devices > 1) {
      const double share = r.allreduce_s / r.solve_s;
      std::printf("    run (%d): allreduce of %lld complex floats (%.0f MiB): %.2f ms a call, %.0f%% of the solve; "
                  "max |x_%d − x_1| / max |x_1| = %.2e; ranks' images bit-identical: %s\n",
                  r.devices, static_cast<long long>(p.voxels),
                  static_cast<double>(p.voxels) * sizeof(Complex) / (1 << 20), 1e3 * r.allreduce_s / a.iters,
                  100 * share, r.devices, r.diff, r.identical ? "yes" : "NO");
      row["allreduce_ms_per_call"] = 1e3 * r.allreduce_s / a.iters;
      row["allreduce_share_of_solve"] = share;
      row["max_diff_rel"] = r.diff;
      row["ranks_identical"] = r.identical;
    }
    rows.push_back(row);
  }
  nlohmann::json out = {{"n", a.n}, {"coils", a.coils}, {"samples", p.samples}, {"arms", a.arms},
                        {"samples_per_arm", a.samples}, {"readout_ms", 1e3 * p.readout_s},
                        {"field_max_hz", p.field_max_hz}, {"segments", plan.segments}, {"eps", a.eps},
                        {"accuracy", a.accuracy}, {"iterations", a.iters}, {"repeat", a.repeat},
                        {"devices", a.devices}, {"counts", a.counts}, {"rows", rows}};
  if (!a.json.empty()) {
    std::ofstream f(a.json);
    f << out.dump(2) << "\n";
    if (!f) throw Error(ErrorCode::kInvalidArgument, "--json: cannot write " + a.json);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  std::string devices = "0,1";
  CLI::App app{"Strong scaling of one 3D field-corrected SENSE reconstruction, coils split over GPUs"};
  app.add_option("--n", a.n, "image side (n³ voxels)")->check(CLI::Range(8, 1024));
  app.add_option("--coils", a.coils, "coils")->check(CLI::Range(1, 1024));
  app.add_option("--arms", a.arms, "spiral arms per k_z plane (0: n/8)")->check(CLI::Range(0, 100000));
  app.add_option("--samples", a.samples, "samples per arm (0: 8n)")->check(CLI::Range(0, 1000000));
  app.add_option("--iters", a.iters, "CG iterations (default 30, the reconstruction protocol of shared/BENCHMARKS.md)")
      ->check(CLI::Range(1, 10000));
  app.add_option("--repeat", a.repeat, "timed solves (best of)")->check(CLI::Range(1, 100));
  app.add_option("--devices", devices, "CUDA devices, comma-separated; run (1) uses the first");
  std::string counts;
  app.add_option("--counts", counts,
                 "device counts of the runs, comma-separated, e.g. 1,2,4 (runs (2) and (4) on the first 2 and 4 "
                 "devices; run (1) always runs); default: 1 and the number of --devices");
  app.add_option("--readout-ms", a.readout_ms, "readout length")->check(CLI::PositiveNumber);
  app.add_option("--field-hz", a.field_hz, "smooth field map's max |Δf|")->check(CLI::NonNegativeNumber);
  app.add_option("--offset-hz", a.offset_hz, "localised offset's peak");
  app.add_option("--eps", a.eps, "NUFFT tolerance")->check(CLI::PositiveNumber);
  app.add_option("--accuracy", a.accuracy, "time segmentation's accuracy")->check(CLI::PositiveNumber);
  app.add_flag("--smoke", a.smoke, "a quick check: --n 32 --coils 4 --iters 3 unless given");
  app.add_flag("!--no-memory-check", a.memory_check, "run even where the memory estimate exceeds a device's free memory");
  app.add_flag("--plan", a.plan, "print the problem, L and the memory estimates; touch no device");
  app.add_option("--json", a.json, "also write the results as JSON to this file");
  CLI11_PARSE(app, argc, argv);
  if (a.smoke) {
    if (app.count("--n") == 0) a.n = 32;
    if (app.count("--coils") == 0) a.coils = 4;
    if (app.count("--iters") == 0) a.iters = 3;
  }
  if (a.arms == 0) a.arms = std::max<std::int64_t>(1, a.n / 8);
  if (a.samples == 0) a.samples = 8 * a.n;
  a.devices.clear();
  std::stringstream ss(devices);
  for (std::string item; std::getline(ss, item, ',');) {
    try {
      a.devices.push_back(std::stoi(item));
    } catch (const std::exception&) {
      std::fprintf(stderr, "--devices: '%s' is not a device number\n", item.c_str());
      return 2;
    }
  }
  if (a.devices.empty() || static_cast<std::int64_t>(a.devices.size()) > a.coils) {
    std::fprintf(stderr, "--devices: between 1 and --coils devices\n");
    return 2;
  }
  const int d_count = static_cast<int>(a.devices.size());
  if (counts.empty()) counts = "1," + std::to_string(d_count);
  std::stringstream cs(counts);
  for (std::string item; std::getline(cs, item, ',');) {
    int c = 0;
    try {
      c = std::stoi(item);
    } catch (const std::exception&) {
      c = 0;
    }
    if (c < 1 || c > d_count) {
      std::fprintf(stderr, "--counts: '%s' is not a device count between 1 and %d (the number of --devices)\n",
                   item.c_str(), d_count);
      return 2;
    }
    if (std::find(a.counts.begin(), a.counts.end(), c) == a.counts.end()) a.counts.push_back(c);
  }
  std::sort(a.counts.begin(), a.counts.end());
  try {
    return run(a);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 3;
  }
}
