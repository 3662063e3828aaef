// The normal operator AᴴA of a NufftEncoding on the host: Toeplitz (mri::ToeplitzNormal) against
// the NUFFT pair (type 2 then type 1), and the Toeplitz engine's pruned FFT passes against full
// ones (docs/benchmarks.md, "Toeplitz normal operator"). Not a test.
//
//   fieldft_bench_toeplitz [N [coils [dim [reps [threads]]]]]     defaults 256 8 2 10 0
//
// Problem: an N^dim image (float), `coils` stacked images through one batched transform, a
// trajectory of uniform random samples over the k-space box, M = N^dim samples per coil (fully
// sampled density), eps 1e-3 and 1e-5. Times: median of `reps` after a warm-up (ms), of the
// process's CPU time (std::clock: the work, robust to other load on a shared machine; with
// threads > 1 it sums the threads) and of the wall clock.
#include <algorithm>
#include <chrono>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <memory>
#include <random>
#include <vector>

#include "core/toeplitz.hpp"
#include "cpu/toeplitz_cpu.hpp"
#include "fieldft/mri/encoding.hpp"
#include "fieldft/mri/toeplitz.hpp"
#include "fieldft/nufft.hpp"

namespace {

using namespace fieldft;
using cfloat = std::complex<float>;

struct Times {
  double cpu = 0, wall = 0;  // ms
};

template <class F>
Times median_ms(int reps, F&& f) {
  f();  // warm-up
  std::vector<double> cpu, wall;
  for (int r = 0; r < reps; ++r) {
    const auto s = std::chrono::steady_clock::now();
    const std::clock_t c = std::clock();
    f();
    cpu.push_back(1e3 * static_cast<double>(std::clock() - c) / CLOCKS_PER_SEC);
    wall.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - s).count());
  }
  std::sort(cpu.begin(), cpu.end());
  std::sort(wall.begin(), wall.end());
  return {cpu[cpu.size() / 2], wall[wall.size() / 2]};
}

}  // namespace

int main(int argc, char** argv) {
  const std::int64_t n = argc > 1 ? std::atoll(argv[1]) : 256;
  const std::int64_t coils = argc > 2 ? std::atoll(argv[2]) : 8;
  const int dim = argc > 3 ? std::atoi(argv[3]) : 2;
  const int reps = argc > 4 ? std::atoi(argv[4]) : 10;
  const int threads = argc > 5 ? std::atoi(argv[5]) : 0;
  const Context ctx = Context::host(threads);

  std::vector<std::int64_t> grid(static_cast<std::size_t>(dim), n);
  std::int64_t voxels = 1;
  for (auto g : grid) voxels *= g;
  const std::int64_t m = voxels;
  std::mt19937_64 rng(1);
  std::uniform_real_distribution<float> u(-0.5f * static_cast<float>(n), 0.5f * static_cast<float>(n));
  std::vector<float> k[3];
  for (int d = 0; d < dim; ++d)
    for (std::int64_t j = 0; j < m; ++j) k[d].push_back(u(rng));
  auto enc = std::make_shared<const mri::Encoding<float>>(grid, k[0], k[1], dim == 3 ? std::span<const float>(k[2])
                                                                                     : std::span<const float>());
  std::vector<cfloat> x(static_cast<std::size_t>(voxels * coils), cfloat(1, 0.5f)), z(x.size());
  std::printf("N %lld^%d, %lld coils, M %lld per coil, %d threads\n", static_cast<long long>(n), dim,
              static_cast<long long>(coils), static_cast<long long>(m), cpu_threads_for(threads));

  // The engine alone, pruned against full passes (kernel = 1: the FFT work and the passes),
  // first, before FFTW has any wisdom (which a later ESTIMATE plan of the same size would use).
  core::ToeplitzGeometry g;
  g.dim = dim;
  for (int d = 0; d < dim; ++d) g.n[d] = n;
  g.batch = coils;
  std::vector<float> kernel(static_cast<std::size_t>(g.padded_cells()), 1.0f);
  for (bool measure : {false, true})
    for (bool pruned : {true, false}) {
      const auto s = std::chrono::steady_clock::now();
      const std::clock_t c = std::clock();
      auto e = cpu::make_toeplitz_engine<float>(g, cpu_threads_for(threads), measure, pruned);
      const double plan_cpu = 1e3 * static_cast<double>(std::clock() - c) / CLOCKS_PER_SEC;
      const double plan_wall = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - s).count();
      const Times t = median_ms(reps, [&] { e->apply(kernel.data(), x.data(), z.data()); });
      std::printf("engine, %s FFT passes, FFTW_%s: cpu %.1f / wall %.1f ms (planning cpu %.0f / wall %.0f ms)\n",
                  pruned ? "pruned" : "full", measure ? "MEASURE" : "ESTIMATE", t.cpu, t.wall, plan_cpu, plan_wall);
    }

  for (double eps : {1e-3, 1e-5}) {
    mri::NufftEncodingOptions o;
    o.eps = eps;
    o.batch = coils;
    o.toeplitz = mri::Toeplitz::kOff;
    mri::NufftEncoding<float> pair(enc, ctx, o);
    o.nufft.fft_planning = nufft::FftPlanning::kMeasure;
    mri::NufftEncoding<float> pair_measured(enc, ctx, o);
    o.nufft.fft_planning = nufft::FftPlanning::kEstimate;
    o.toeplitz = mri::Toeplitz::kAuto;
    mri::NufftEncoding<float> automatic(enc, ctx, o);
    mri::ToeplitzOptions to;
    to.eps = eps;
    to.batch = coils;
    mri::ToeplitzNormal<float> toeplitz(enc, ctx, {}, to);
    const Times t_pair = median_ms(reps, [&] { pair.apply_normal(x.data(), z.data()); });
    const Times t_toep = median_ms(reps, [&] { toeplitz.apply(x.data(), z.data()); });
    const Times t_pm = median_ms(reps, [&] { pair_measured.apply_normal(x.data(), z.data()); });
    std::printf("eps %.0e: NUFFT pair with FFTW_MEASURE cpu %.1f / wall %.1f ms\n", eps, t_pm.cpu, t_pm.wall);
    std::printf("eps %.0e: NUFFT pair (w %d, fine grid %lld) cpu %.1f / wall %.1f ms; Toeplitz cpu %.1f / wall %.1f "
                "ms (x%.2f in cpu time); set-up (wall) %.1f ms; kAuto: %s\n",
                eps, pair.forward_info().kernel_width, static_cast<long long>(pair.forward_info().fine_grid[0]),
                t_pair.cpu, t_pair.wall, t_toep.cpu, t_toep.wall, t_pair.cpu / t_toep.cpu,
                1e3 * toeplitz.setup_seconds(), automatic.toeplitz_reason().c_str());
  }

  return 0;
}
