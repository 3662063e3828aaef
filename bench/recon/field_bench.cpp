// Field-corrected reconstructions of BENCHMARKS.md, fieldft's side (docs/benchmarks.md, "R2 and
// R4"): R2's anchors (a cuFINUFFT CG with time segmentation, SigPy) run from Python; R4 has none
// on the GPU. CUDA only. Not a test.
//
//   --case r4   2D 128², 8 coils, a spiral of 16 interleaves acquired in 4 shots (arm l in shot
//               l mod 4), readout times from the dwell time (4 µs), field map ±150 Hz, a smooth
//               phase per shot (up to 3 rad): pcSENSE with the exact DFT, 30 CG iterations,
//               float: all shots in one DFT pass (PcSenseOptions::one_pass, the default), the
//               same with its normal through the stored Gram matrix (PcSenseOptions::gram), and
//               shot by shot (one_pass = false); the same with time segmentation (least
//               squares, accuracy 1e-3) — the images must agree (issue 23); the exact DFT
//               pcSENSE on the host (all threads) beside them; and plain SENSE (no shot phase)
//               for the NRMSE it loses. `--rows dft` runs only the device DFT rows.
//   --case r2   2D 256², 8 coils, the R1 spiral (64 × 1024), readout 10.24 ms, field map
//               ±150 Hz: SENSE with time segmentation, 30 CG iterations, float; and the
//               uncorrected NUFFT SENSE for the NRMSE it loses.
// Data: the exact field-corrected (pc)SENSE model in double on the device, plus 1 % complex
// noise. Times: set-up (operators, plans, tables, and prepare_normal: Toeplitz kernels, the Gram
// matrix) once; solve = the CG, device synchronised
// before and after, best of 3 after a warm-up; normal = one apply_normal alone, the mean of 20
// after the solves (device synchronised around the 20). NRMSE = ‖x − truth‖/‖truth‖.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "fieldft/context.hpp"
#include "fieldft/mri/encoding.hpp"
#include "fieldft/mri/field_toeplitz.hpp"
#include "fieldft/mri/pcsense.hpp"
#include "fieldft/mri/sense.hpp"
#include "fieldft/mri/simulate.hpp"
#include "fieldft/mri/time_segmentation.hpp"
#include "fieldft/solve/cg.hpp"

using namespace fieldft;

namespace {

#define CHECK_CUDA(x)                                                                   \
  do {                                                                                  \
    cudaError_t e_ = (x);                                                               \
    if (e_ != cudaSuccess) {                                                            \
      std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
      std::exit(2);                                                                     \
    }                                                                                   \
  } while (0)

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// n values of std::complex<T> in a context (device memory, or host memory for a host context).
template <class T>
struct Vec {
  using C = std::complex<T>;
  Vec(const Context& c, std::int64_t n) : host(c.is_host()), n(n) {
    if (host) {
      h.resize(static_cast<std::size_t>(n));
      p = h.data();
    } else {
      CHECK_CUDA(cudaMalloc(&p, static_cast<std::size_t>(n) * sizeof(C)));
    }
  }
  ~Vec() {
    if (!host) cudaFree(p);
  }
  Vec(const Vec&) = delete;
  Vec& operator=(const Vec&) = delete;
  void set(const std::vector<C>& v) {
    if (host) {
      std::copy(v.begin(), v.end(), h.begin());
    } else {
      CHECK_CUDA(cudaDeviceSynchronize());
      CHECK_CUDA(cudaMemcpy(p, v.data(), v.size() * sizeof(C), cudaMemcpyHostToDevice));
    }
  }
  std::vector<C> get() const {
    if (host) return h;
    std::vector<C> v(static_cast<std::size_t>(n));
    CHECK_CUDA(cudaDeviceSynchronize());
    CHECK_CUDA(cudaMemcpy(v.data(), p, v.size() * sizeof(C), cudaMemcpyDeviceToHost));
    return v;
  }
  bool host;
  std::int64_t n;
  std::vector<C> h;
  C* p = nullptr;
};

template <class To, class From>
std::vector<To> cast(const std::vector<From>& v) {
  return std::vector<To>(v.begin(), v.end());
}
template <class T>
std::vector<std::complex<T>> cast_complex(const std::vector<std::complex<double>>& v) {
  std::vector<std::complex<T>> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) out[i] = std::complex<T>(v[i]);
  return out;
}

double nrmse(const std::vector<std::complex<float>>& x, const std::vector<double>& truth) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < truth.size(); ++i) {
    num += std::norm(std::complex<double>(x[i]) - truth[i]);
    den += truth[i] * truth[i];
  }
  return std::sqrt(num / den);
}
double rel_diff(const std::vector<std::complex<float>>& a, const std::vector<std::complex<float>>& b) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    num += std::norm(std::complex<double>(a[i]) - std::complex<double>(b[i]));
    den += std::norm(std::complex<double>(b[i]));
  }
  return std::sqrt(num / den);
}

struct Problem {
  std::vector<std::int64_t> grid;
  std::int64_t coils = 8, shots = 1;
  std::vector<double> truth, kx, ky, times, field, phase;
  std::vector<std::int32_t> labels;
  std::vector<std::complex<double>> maps, y;  // y: {M, C}
};

struct Row {
  std::string system;
  double setup_s = 0, solve_s = 0, nrmse = 0, normal_s = 0;
  std::string note;
};

// 30 CG iterations from 0 on operator a (made by make(context), timed as set-up) with data y.
Row run(const std::string& name, const Context& ctx, const Problem& p, int iters, int repeat, double lambda,
        const std::function<op::OperatorPtr<float>(const Context&)>& make, std::vector<std::complex<float>>* image) {
  Row r;
  r.system = name;
  ctx.synchronize();
  auto t0 = std::chrono::steady_clock::now();
  auto a = make(ctx);
  a->prepare_normal();  // what the solver would build before its loop (Toeplitz kernels, a Gram matrix)
  ctx.synchronize();
  r.setup_s = seconds_since(t0);
  Vec<float> y(ctx, a->codomain_size()), x(ctx, a->domain_size());
  y.set(cast_complex<float>(p.y));
  const std::vector<std::complex<float>> zero(static_cast<std::size_t>(a->domain_size()));
  solve::CgOptions o;
  o.max_iterations = iters;
  o.lambda = lambda;
  r.solve_s = std::numeric_limits<double>::infinity();
  for (int k = 0; k <= repeat; ++k) {  // the first is the warm-up (kernels built lazily, e.g. Toeplitz)
    x.set(zero);
    ctx.synchronize();
    t0 = std::chrono::steady_clock::now();
    solve::cg<float>(*a, y.p, x.p, nullptr, o);
    ctx.synchronize();
    if (k > 0) r.solve_s = std::min(r.solve_s, seconds_since(t0));
  }
  const auto xs = x.get();
  r.nrmse = nrmse(xs, p.truth);
  if (image) *image = xs;
  {  // the normal alone: what one CG iteration costs besides its vector operations
    constexpr int kNormals = 20;
    Vec<float> z(ctx, a->domain_size());
    a->apply_normal(x.p, z.p);
    ctx.synchronize();
    t0 = std::chrono::steady_clock::now();
    for (int k = 0; k < kNormals; ++k) a->apply_normal(x.p, z.p);
    ctx.synchronize();
    r.normal_s = seconds_since(t0) / kNormals;
  }
  r.note = a->name();
  return r;
}

Problem simulate(const std::string& which) {
  Problem p;
  const bool r4 = which == "r4";
  const std::int64_t n = r4 ? 128 : 256;
  p.grid = {n, n};
  p.coils = 8;
  p.shots = r4 ? 4 : 1;
  p.truth = mri::shepp_logan(p.grid);
  mri::SpiralOptions so;
  so.interleaves = r4 ? 16 : 64;
  so.samples = r4 ? 0 : 1024;
  const auto t = mri::spiral_trajectory(p.grid, so);
  p.kx = t.kx;
  p.ky = t.ky;
  const double dwell = r4 ? 4e-6 : 10.24e-3 / 1024;
  p.times = mri::readout_times(t, dwell);
  p.field = mri::field_map(p.grid, {.max_hz = 150});
  p.maps = mri::coil_maps(p.grid, p.coils, {.normalize = true});
  if (r4) {
    p.labels = mri::shot_labels(t, p.shots);
    p.phase = mri::shot_phase_maps(p.grid, p.shots, {.max_phase = 3.0});
  }
  return p;
}

std::shared_ptr<const mri::Encoding<float>> encoding_f(const Problem& p, bool field) {
  const auto kx = cast<float>(p.kx), ky = cast<float>(p.ky), t = cast<float>(p.times), f = cast<float>(p.field);
  return std::make_shared<const mri::Encoding<float>>(
      std::span<const std::int64_t>(p.grid), std::span<const float>(kx), std::span<const float>(ky),
      std::span<const float>(), field ? std::span<const float>(t) : std::span<const float>(),
      field ? std::span<const float>(f) : std::span<const float>(), std::span<const std::int32_t>(p.labels));
}

op::Shape maps_shape(const Problem& p) { return {p.grid[0], p.grid[1], p.coils}; }
op::Shape phase_shape(const Problem& p) { return {p.grid[0], p.grid[1], p.shots}; }

// y = the exact model of the truth in double on the device, plus 1 % noise.
void simulate_data(Problem& p, const Context& dev) {
  auto enc = std::make_shared<const mri::Encoding<double>>(
      std::span<const std::int64_t>(p.grid), std::span<const double>(p.kx), std::span<const double>(p.ky),
      std::span<const double>(), std::span<const double>(p.times), std::span<const double>(p.field),
      std::span<const std::int32_t>(p.labels));
  mri::SenseOptions so;
  so.encoding = mri::EncodingKind::kDft;
  op::OperatorPtr<double> a;
  if (p.shots > 1) {
    mri::PcSenseOptions<double> po;
    po.encoding = mri::EncodingKind::kDft;
    a = mri::pcsense<double>(enc, p.maps, maps_shape(p), p.phase, phase_shape(p), dev, po);
  } else {
    a = mri::sense<double>(enc, p.maps, maps_shape(p), dev, so);
  }
  Vec<double> x(dev, a->domain_size()), y(dev, a->codomain_size());
  std::vector<std::complex<double>> truth(p.truth.begin(), p.truth.end());
  x.set(truth);
  a->apply(x.p, y.p);
  p.y = y.get();
  double rms = 0;
  for (const auto& v : p.y) rms += std::norm(v);
  rms = std::sqrt(rms / static_cast<double>(p.y.size()));
  mri::add_noise<double>(p.y, 0.01 * rms / std::sqrt(2.0), 7);
}

void print(const std::vector<Row>& rows) {
  std::printf("| system | set-up ms | solve ms | normal ms | NRMSE | operator |\n|---|---|---|---|---|---|\n");
  for (const auto& r : rows)
    std::printf("| %s | %.1f | %.2f | %.3f | %.4f | %s |\n", r.system.c_str(), 1e3 * r.setup_s, 1e3 * r.solve_s,
                1e3 * r.normal_s, r.nrmse, r.note.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  std::string which = "r4", rows_wanted = "all";
  int iters = 30, repeat = 3;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--case") which = v;
    else if (k == "--iters") iters = std::atoi(v.c_str());
    else if (k == "--repeat") repeat = std::atoi(v.c_str());
    else if (k == "--rows") rows_wanted = v;
    else {
      std::fprintf(stderr, "unknown option %s (--case r2|r4, --iters, --repeat, --rows all|dft)\n", k.c_str());
      return 2;
    }
  }
  if (rows_wanted != "all" && rows_wanted != "dft") {
    std::fprintf(stderr, "--rows must be all or dft\n");
    return 2;
  }
  const bool all_rows = rows_wanted == "all";
  if (which != "r2" && which != "r4") {
    std::fprintf(stderr, "--case must be r2 or r4\n");
    return 2;
  }
  try {
    const Context dev = Context::cuda(0);
    Problem p = simulate(which);
    auto t0 = std::chrono::steady_clock::now();
    simulate_data(p, dev);
    std::printf("%s: %lldx%lld, %lld coils, %zu samples, %lld shot(s), field ±150 Hz, readout %.2f ms; data by the "
                "exact DFT in double in %.2f s\n",
                which.c_str(), static_cast<long long>(p.grid[0]), static_cast<long long>(p.grid[1]),
                static_cast<long long>(p.coils), p.kx.size(), static_cast<long long>(p.shots),
                1e3 * *std::max_element(p.times.begin(), p.times.end()), seconds_since(t0));
    // λ: small against the normal's scale (Σ|S|² = 1: AᴴA ~ M per voxel).
    const double lambda = 1e-3 * static_cast<double>(p.kx.size()) / static_cast<double>(p.grid[0] * p.grid[1]);
    const auto enc = encoding_f(p, true), enc_plain = encoding_f(p, false);
    const auto maps = cast_complex<float>(p.maps);
    const std::vector<float> phase = cast<float>(p.phase);
    mri::TimeSegmentationOptions ts;
    ts.accuracy = 1e-3;
    ts.eps = 1e-3;
    const auto tseg = [&](std::shared_ptr<const mri::Encoding<float>> e, std::int64_t batch) {
      mri::TimeSegmentationOptions o = ts;
      o.batch = batch;
      return op::OperatorPtr<float>(std::make_shared<mri::TimeSegmentedEncoding<float>>(std::move(e), dev, o));
    };
    std::vector<Row> rows;
    std::vector<std::complex<float>> x_dft, x_ts;
    if (which == "r4") {
      rows.push_back(run("fieldft pcSENSE, exact DFT, one pass", dev, p, iters, repeat, lambda, [&](const Context& c) {
        mri::PcSenseOptions<float> o;
        o.encoding = mri::EncodingKind::kDft;
        return mri::pcsense<float>(enc, maps, maps_shape(p), phase, phase_shape(p), c, o);
      }, &x_dft));
      std::vector<std::complex<float>> x_gram;
      rows.push_back(run(
          "fieldft pcSENSE, exact DFT, one pass, Gram normal", dev, p, iters, repeat, lambda,
          [&](const Context& c) {
            mri::PcSenseOptions<float> o;
            o.encoding = mri::EncodingKind::kDft;
            o.gram = true;
            return mri::pcsense<float>(enc, maps, maps_shape(p), phase, phase_shape(p), c, o);
          },
          &x_gram));
      std::printf(
          "one-pass DFT pcSENSE images with the Gram normal and with the two DFT passes: relative "
          "difference %.2e\n",
          rel_diff(x_gram, x_dft));
      std::vector<std::complex<float>> x_shots;
      rows.push_back(run("fieldft pcSENSE, exact DFT, shot by shot", dev, p, iters, repeat, lambda,
                         [&](const Context& c) {
                           mri::PcSenseOptions<float> o;
                           o.encoding = mri::EncodingKind::kDft;
                           o.one_pass = false;
                           return mri::pcsense<float>(enc, maps, maps_shape(p), phase, phase_shape(p), c, o);
                         },
                         &x_shots));
      std::printf("one-pass and shot-by-shot DFT pcSENSE images: relative difference %.2e\n",
                  rel_diff(x_dft, x_shots));
      if (all_rows) {
        rows.push_back(run("fieldft pcSENSE, time segmentation (1e-3)", dev, p, iters, repeat, lambda,
                           [&](const Context& c) {
                             mri::PcSenseOptions<float> o;
                             o.shot_encoding = tseg;
                             return mri::pcsense<float>(enc, maps, maps_shape(p), phase, phase_shape(p), c, o);
                           },
                           &x_ts));
      }
      rows.push_back(run("fieldft SENSE, exact DFT, no shot phase", dev, p, iters, repeat, lambda, [&](const Context& c) {
        mri::SenseOptions o;
        o.encoding = mri::EncodingKind::kDft;
        return mri::sense<float>(enc, maps, maps_shape(p), c, o);
      }, nullptr));
      const Context host = Context::host();
      if (all_rows) {
        rows.push_back(run("fieldft pcSENSE, exact DFT, CPU (all threads)", host, p, iters, 1, lambda,
                           [&](const Context& c) {
                             mri::PcSenseOptions<float> o;
                             o.encoding = mri::EncodingKind::kDft;
                             return mri::pcsense<float>(enc, maps, maps_shape(p), phase, phase_shape(p), c, o);
                           },
                           nullptr));
      }
    } else {
      rows.push_back(run("fieldft SENSE, time segmentation (1e-3)", dev, p, iters, repeat, lambda, [&](const Context& c) {
        mri::TimeSegmentationOptions o = ts;
        o.batch = p.coils;
        auto e = std::make_shared<mri::TimeSegmentedEncoding<float>>(enc, c, o);
        return mri::sense<float>(e, maps, maps_shape(p));
      }, &x_ts));
      {  // the same model, its normal through FieldToeplitzNormal: cg_normal on (N, Aᴴy)
        Row r;
        r.system = "fieldft SENSE, time segmentation + field-corrected Toeplitz normal";
        dev.synchronize();
        auto t0 = std::chrono::steady_clock::now();
        mri::TimeSegmentationOptions o = ts;
        o.batch = p.coils;
        auto e = std::make_shared<mri::TimeSegmentedEncoding<float>>(enc, dev, o);
        auto a = mri::sense<float>(e, maps, maps_shape(p));
        mri::FieldToeplitzOptions fo;
        fo.accuracy = 1e-3;
        fo.eps = 1e-3;
        mri::FieldToeplitzNormal<float> normal(enc, dev, maps, p.coils, {}, fo);
        dev.synchronize();
        r.setup_s = seconds_since(t0);
        Vec<float> y(dev, a->codomain_size()), b(dev, a->domain_size()), x(dev, a->domain_size());
        y.set(cast_complex<float>(p.y));
        const std::vector<std::complex<float>> zero(static_cast<std::size_t>(a->domain_size()));
        solve::CgOptions co;
        co.max_iterations = iters;
        co.lambda = lambda;
        r.solve_s = std::numeric_limits<double>::infinity();
        for (int k = 0; k <= repeat; ++k) {
          x.set(zero);
          dev.synchronize();
          t0 = std::chrono::steady_clock::now();
          a->apply_adjoint(y.p, b.p);
          solve::cg_normal<float>(normal, b.p, x.p, co);
          dev.synchronize();
          if (k > 0) r.solve_s = std::min(r.solve_s, seconds_since(t0));
        }
        const auto xs = x.get();
        r.nrmse = nrmse(xs, p.truth);
        r.note = normal.name() + ", set-up of the normal " + std::to_string(1e3 * normal.setup_seconds()) +
                 " ms; image vs the NUFFT-pair normal's " + std::to_string(rel_diff(xs, x_ts));
        rows.push_back(r);
      }
      rows.push_back(run("fieldft SENSE, NUFFT, no field correction", dev, p, iters, repeat, lambda,
                         [&](const Context& c) {
                           mri::SenseOptions o;
                           o.eps = 1e-3;
                           return mri::sense<float>(enc_plain, maps, maps_shape(p), c, o);
                         },
                         nullptr));
    }
    print(rows);
    if (which == "r4" && all_rows)
      std::printf("DFT- and time-segmented pcSENSE images: relative difference %.2e\n", rel_diff(x_ts, x_dft));
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
}
