// Benchmark of the field-corrected DFT (docs/benchmarks.md, "Field-corrected DFT").
//
// Problem (BENCHMARKS.md): N³ voxels (default 64), M samples (default 262144) with k uniform over
// [−N/2, N/2)³, a random ±50 Hz field map and readout times uniform in [0, 41 ms).
// Measured in one run: the design's kernel as written (baseline_kernel.cu, CUDA builds), fieldft
// float forward/adjoint for every SFU/polynomial split (DftTuning::poly), 32 images at once,
// the R2* variant, double precision, and the CPU backend's pairs per second per core.
// Errors are relative l2 against the double oracle at a random subset of outputs.
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <omp.h>

#include <chrono>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <numbers>
#include <random>
#include <string>
#include <vector>

#include "fieldft/fieldft.hpp"
#include "fieldft/mri/dft.hpp"

#if FIELDFT_HAVE_CUDA
#include <cuda_runtime.h>

#include "baseline_kernel.cuh"

namespace fieldft::bench {
void print_phasor_bias();  // sfu_bias.cu
}
#endif

namespace {

using namespace fieldft;
using cdouble = std::complex<double>;

struct Problem {
  std::int64_t n = 64, m = 262144, voxels = 0;
  std::vector<std::int64_t> grid;
  std::vector<float> kx, ky, kz, t, dw;
  reference::Points ksp, pos;
  std::vector<double> dwd, td;
};

Problem make_problem(std::int64_t n, std::int64_t m, std::uint64_t seed) {
  Problem p;
  p.n = n;
  p.m = m;
  p.grid = {n, n, n};
  p.voxels = n * n * n;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u01(0.0, 1.0);
  p.ksp.dim = p.pos.dim = 3;
  for (std::int64_t j = 0; j < m; ++j) {
    for (auto* k : {&p.kx, &p.ky, &p.kz}) k->push_back(static_cast<float>((u01(rng) - 0.5) * n));
    p.t.push_back(static_cast<float>(0.041 * u01(rng)));
  }
  p.ksp.x.assign(p.kx.begin(), p.kx.end());
  p.ksp.y.assign(p.ky.begin(), p.ky.end());
  p.ksp.z.assign(p.kz.begin(), p.kz.end());
  p.td.assign(p.t.begin(), p.t.end());
  for (std::int64_t z = 0; z < n; ++z)
    for (std::int64_t y = 0; y < n; ++y)
      for (std::int64_t x = 0; x < n; ++x) {
        p.pos.x.push_back(static_cast<double>(x - n / 2) / n);
        p.pos.y.push_back(static_cast<double>(y - n / 2) / n);
        p.pos.z.push_back(static_cast<double>(z - n / 2) / n);
        p.dw.push_back(static_cast<float>(2 * std::numbers::pi * 50.0 * (2 * u01(rng) - 1)));
      }
  p.dwd.assign(p.dw.begin(), p.dw.end());
  return p;
}

template <class T>
std::vector<std::complex<T>> random_vector(std::int64_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<std::complex<T>> v(static_cast<std::size_t>(n));
  for (auto& x : v) x = {static_cast<T>(u(rng)), static_cast<T>(u(rng))};
  return v;
}

std::vector<std::int64_t> subset(std::int64_t n, std::int64_t k, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::int64_t> v;
  for (std::int64_t i = 0; i < k; ++i) v.push_back(static_cast<std::int64_t>(rng() % n));
  return v;
}

// Relative l2 error of `got` (full output vectors) against the oracle at the subset `which`:
// samples (forward) or voxels (adjoint).
template <class T>
double subset_error(const std::vector<std::complex<T>>& got, const std::vector<std::int64_t>& which,
                    const std::vector<cdouble>& want) {
  std::vector<cdouble> g;
  for (auto i : which) g.emplace_back(got[i]);
  return reference::rel_l2_error<cdouble>(g, want);
}

template <class T>
double forward_error(const Problem& p, const std::vector<std::complex<T>>& img,
                     const std::vector<std::complex<T>>& got, const std::vector<std::int64_t>& js) {
  const std::vector<cdouble> x(img.begin(), img.end());
  return subset_error(got, js, reference::field_dft_forward_at(p.ksp, p.pos, p.dwd, p.td, x, js));
}

template <class T>
double adjoint_error(const Problem& p, const std::vector<std::complex<T>>& smp,
                     const std::vector<std::complex<T>>& got, const std::vector<std::int64_t>& vs) {
  const std::vector<cdouble> y(smp.begin(), smp.end());
  return subset_error(got, vs, reference::field_dft_adjoint_at(p.ksp, p.pos, p.dwd, p.td, y, vs));
}

template <class F>
double best_ms(int repeat, F&& f) {
  double best = 1e30;
  for (int r = 0; r < repeat; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    const auto t1 = std::chrono::steady_clock::now();
    best = std::min(best, std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  return best;
}

struct Row {
  std::string name;
  std::int64_t images = 1;
  double fwd_ms = 0, adj_ms = 0, fwd_err = -1, adj_err = -1;
};

nlohmann::json rows_json;

void report(const Problem& p, const Row& r, double baseline_fwd_ms = 0) {
  const double pairs = static_cast<double>(p.voxels) * static_cast<double>(p.m) * static_cast<double>(r.images);
  const double fps = pairs / (r.fwd_ms * 1e-3), aps = pairs / (r.adj_ms * 1e-3);
  std::printf("%-44s %3lld  %9.2f  %9.2f  %9.3g  %9.3g", r.name.c_str(), static_cast<long long>(r.images),
              r.fwd_ms, r.adj_ms, fps, aps);
  if (r.fwd_err >= 0) std::printf("  %8.2e  %8.2e", r.fwd_err, r.adj_err);
  if (baseline_fwd_ms > 0) std::printf("  x%.1f", baseline_fwd_ms / r.fwd_ms);
  std::printf("\n");
  std::fflush(stdout);
  rows_json.push_back({{"name", r.name}, {"images", r.images}, {"forward_ms", r.fwd_ms},
                       {"adjoint_ms", r.adj_ms}, {"forward_per_s", fps}, {"adjoint_per_s", aps},
                       {"forward_error", r.fwd_err}, {"adjoint_error", r.adj_err}});
}

#if FIELDFT_HAVE_CUDA
template <class T>
struct DeviceVec {
  T* p = nullptr;
  explicit DeviceVec(const std::vector<T>& v) {
    cudaMalloc(&p, v.size() * sizeof(T));
    cudaMemcpy(p, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice);
  }
  explicit DeviceVec(std::size_t n) { cudaMalloc(&p, n * sizeof(T)); }
  ~DeviceVec() { cudaFree(p); }
  std::vector<T> host(std::size_t n) const {
    std::vector<T> v(n);
    cudaMemcpy(v.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost);
    return v;
  }
};

// One GPU configuration: operator built with the given environment knobs, timed on device
// pointers (each call, then its stream, to completion).
template <class T>
Row gpu_row(const Problem& p, const std::string& name, std::int64_t images, bool r2, int repeat,
            bool check, const std::vector<std::int64_t>& js, const std::vector<std::int64_t>& vs,
            mri::DftTuning tuning = {}) {
  std::vector<T> kx(p.kx.begin(), p.kx.end()), ky(p.ky.begin(), p.ky.end()), kz(p.kz.begin(), p.kz.end());
  std::vector<T> t(p.t.begin(), p.t.end()), dw(p.dw.begin(), p.dw.end());
  mri::DftOptions o;
  o.backend = Backend::kCuda;
  o.images = images;
  o.tuning = tuning;
  std::unique_ptr<mri::Dft<T>> op;
  if (r2)
    op = std::make_unique<mri::DftR2<T>>(p.grid, kx, ky, kz, dw, t, o);
  else
    op = std::make_unique<mri::Dft<T>>(p.grid, kx, ky, kz, dw, t, o);
  const auto x = random_vector<T>(p.voxels * images, 11);
  const auto y = random_vector<T>(p.m * images, 12);
  DeviceVec<std::complex<T>> dx(x), dy(y), fx(p.m * images), ay(p.voxels * images);
  Row r{name, images};
  op->forward_device(dx.p, fx.p);  // warm-up
  op->adjoint_device(dy.p, ay.p);
  op->context().synchronize();
  // Device-pointer calls are stream-ordered: each timed call waits for its stream.
  r.fwd_ms = best_ms(repeat, [&] {
    op->forward_device(dx.p, fx.p);
    op->context().synchronize();
  });
  r.adj_ms = best_ms(repeat, [&] {
    op->adjoint_device(dy.p, ay.p);
    op->context().synchronize();
  });
  if (check && !r2) {
    const auto f = fx.host(p.m), a = ay.host(p.voxels);  // image 0
    const std::vector<std::complex<T>> x0(x.begin(), x.begin() + p.voxels), y0(y.begin(), y.begin() + p.m);
    r.fwd_err = forward_error(p, x0, f, js);
    r.adj_err = adjoint_error(p, y0, a, vs);
  }
  return r;
}
#endif

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"fieldft field-corrected DFT benchmark"};
  std::int64_t n = 64, m = 262144, cpu_n = 32, cpu_m = 32768, check = 256;
  int repeat = 3;
  bool quick = false, no_cpu = false;
  std::string json_path;
  app.add_option("--size", n, "voxels per axis (3D)");
  app.add_option("--samples", m, "k-space samples");
  app.add_option("--repeat", repeat, "timed runs per configuration (best is reported)");
  app.add_option("--check", check, "outputs compared with the double oracle");
  app.add_option("--cpu-size", cpu_n, "voxels per axis of the CPU run");
  app.add_option("--cpu-samples", cpu_m, "samples of the CPU run");
  app.add_option("--json", json_path, "also write the rows as JSON to this file");
  app.add_flag("--quick", quick, "only the main configurations");
  app.add_flag("--no-cpu", no_cpu, "skip the CPU backend");
  CLI11_PARSE(app, argc, argv);

  const auto devices = cuda_devices();
  std::printf("fieldft %s | %s | CPU threads %d\n", build_info().version.c_str(),
              devices.empty() ? "no CUDA device" : devices[0].name.c_str(), omp_get_max_threads());
  std::printf("%-44s %3s  %9s  %9s  %9s  %9s  %8s  %8s\n", "configuration", "C", "fwd ms", "adj ms",
              "fwd /s", "adj /s", "fwd err", "adj err");
  nlohmann::json out;
  out["device"] = devices.empty() ? "none" : devices[0].name;

#if FIELDFT_HAVE_CUDA
  if (!devices.empty()) {
    bench::print_phasor_bias();
    const Problem p = make_problem(n, m, 1);
    out["problem"] = {{"voxels", p.voxels}, {"samples", p.m}};
    const auto js = subset(p.m, check, 5), vs = subset(p.voxels, check, 6);
    double base_fwd = 0;
    {
      bench::BaselineProblem b;
      b.num_samples = static_cast<int>(p.m);
      b.num_voxels = static_cast<int>(p.voxels);
      b.kx = p.kx;
      b.ky = p.ky;
      b.kz = p.kz;
      b.t = p.t;
      b.dw = p.dw;
      b.x.assign(p.pos.x.begin(), p.pos.x.end());
      b.y.assign(p.pos.y.begin(), p.pos.y.end());
      b.z.assign(p.pos.z.begin(), p.pos.z.end());
      const auto x = random_vector<float>(p.voxels, 11), y = random_vector<float>(p.m, 12);
      const auto r = bench::run_baseline(b, x, y, std::max(1, repeat - 1));
      Row row{"design kernel (sincosf, thread/output)", 1, r.forward_ms, r.adjoint_ms};
      row.fwd_err = forward_error(p, x, r.forward_out, js);
      row.adj_err = adjoint_error(p, y, r.adjoint_out, vs);
      base_fwd = r.forward_ms;
      report(p, row);
    }
    // DftTuning::poly 0–3: that many of every 8 pairs per thread on the polynomial; 4: the
    // warp-specialised forward kernel (a quarter of the warps on the polynomial; the adjoint
    // runs as with 2).
    const int polys[] = {0, 1, 2, 3, 4};
    for (int poly : polys) {
      if (quick && poly != 2 && poly != 4) continue;
      const std::string label = poly == 4 ? "Dft<float> warp-specialised" : "Dft<float> poly " + std::to_string(poly) + "/8";
      report(p, gpu_row<float>(p, label, 1, false, repeat, true, js, vs, mri::DftTuning{poly, -1}), base_fwd);
    }
    for (std::int64_t c : {4, 8, 32}) {
      if (quick && c != 32) continue;
      report(p, gpu_row<float>(p, "Dft<float> tensor cores", c, false, repeat, true, js, vs), base_fwd);
    }
    if (!quick) {
      const mri::DftTuning cuda_cores{-1, 0};
      report(p, gpu_row<float>(p, "Dft<float> CUDA cores, 2 images/pass", 32, false, 1, false, js, vs, cuda_cores),
             base_fwd);
      report(p, gpu_row<float>(p, "Dft<float> CUDA cores, 2 images/pass", 2, false, repeat, false, js, vs, cuda_cores),
             base_fwd);
    }
    report(p, gpu_row<float>(p, "DftR2<float>", 1, true, repeat, false, js, vs), base_fwd);
    report(p, gpu_row<float>(p, "DftR2<float> tensor cores", 32, true, std::min(repeat, 2), false, js, vs), base_fwd);
    report(p, gpu_row<double>(p, "Dft<double>", 1, false, std::min(repeat, 2), true, js, vs), base_fwd);
  }
#endif

  if (!no_cpu) {
    const Problem p = make_problem(cpu_n, cpu_m, 2);
    const auto js = subset(p.m, std::min<std::int64_t>(check, p.m), 7), vs = subset(p.voxels, check, 8);
    for (int threads : {1, omp_get_max_threads()}) {
      mri::DftOptions o;
      o.backend = Backend::kCpu;
      o.nthreads = threads;
      mri::Dft<float> op(p.grid, p.kx, p.ky, p.kz, p.dw, p.t, o);
      const auto x = random_vector<float>(p.voxels, 11), y = random_vector<float>(p.m, 12);
      std::vector<std::complex<float>> f(p.m), a(p.voxels);
      Row r{"CPU Dft<float>, " + std::to_string(threads) + " thread(s)", 1};
      r.fwd_ms = best_ms(std::min(repeat, 2), [&] { op.forward(x.data(), f.data()); });
      r.adj_ms = best_ms(std::min(repeat, 2), [&] { op.adjoint(y.data(), a.data()); });
      r.fwd_err = forward_error(p, x, f, js);
      r.adj_err = adjoint_error(p, y, a, vs);
      report(p, r);
      const double pairs = static_cast<double>(p.voxels) * static_cast<double>(p.m);
      std::printf("    pairs/s per core: forward %.3g, adjoint %.3g\n", pairs / (r.fwd_ms * 1e-3) / threads,
                  pairs / (r.adj_ms * 1e-3) / threads);
    }
  }
  out["rows"] = rows_json;
  if (!json_path.empty()) {
    FILE* f = std::fopen(json_path.c_str(), "w");
    if (f) {
      std::fputs(out.dump(1).c_str(), f);
      std::fclose(f);
    }
  }
  return 0;
}
