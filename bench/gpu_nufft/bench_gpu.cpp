// Times fieldft's CUDA NUFFT with inputs and outputs already on the device, as
// ../shared/BENCHMARKS.md asks: set_points once, then execute timed with CUDA events, minimum
// over repeats after a warm-up. Points uniform in [-π, π)^d, strengths uniform in [-1, 1]^2.
// Usage: fieldft_bench_gpu TYPE DIM N M EPS PREC(f|d) [NTRANSF] [METHOD] [REPEAT] [POINTS_FILE|-] [BINS]
// BINS (optional): bin sizes in fine-grid cells, e.g. 8,8,8 (0 = automatic).
// POINTS_FILE (optional): raw little-endian float64 coordinates, dim arrays of M values, so that
// another program (bench/gpu_nufft/run.py with cuFINUFFT) can time the same points.
// Prints one JSON object per run.
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "fieldft/fieldft.hpp"

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "CUDA error in %s: %s\n", what, cudaGetErrorString(e));
    std::exit(3);
  }
}

template <class T>
int run(int type, int dim, std::int64_t n, std::int64_t m, double eps, std::int64_t ntransf, const std::string& method,
        int repeat, const char* points_file, std::array<int, 3> bins) {
  std::vector<std::vector<T>> x(dim, std::vector<T>(m));
  if (points_file) {
    std::ifstream f(points_file, std::ios::binary);
    std::vector<double> buf(m);
    for (int d = 0; d < dim; ++d) {
      f.read(reinterpret_cast<char*>(buf.data()), m * sizeof(double));
      if (!f) {
        std::fprintf(stderr, "cannot read %lld coordinates of dimension %d from %s\n", (long long)m, d, points_file);
        return 2;
      }
      std::copy(buf.begin(), buf.end(), x[d].begin());
    }
  } else {
    std::mt19937_64 rng(1234);
    std::uniform_real_distribution<double> u(-M_PI, M_PI);
    for (auto& v : x)
      for (auto& e : v) e = static_cast<T>(u(rng));
  }
  std::vector<std::int64_t> modes(dim, n);
  fieldft::nufft::Options opt;
  opt.backend = fieldft::Backend::kCuda;
  opt.method = fieldft::nufft::parse_method(method);
  opt.bin_size = bins;
  auto t0 = std::chrono::steady_clock::now();
  fieldft::nufft::Plan<T> plan(type, modes, 1, ntransf, eps, opt);
  auto t1 = std::chrono::steady_clock::now();
  const std::int64_t nm = plan.info().num_modes();
  const std::int64_t in_len = (type == 1 ? m : nm) * ntransf, out_len = (type == 1 ? nm : m) * ntransf;
  T* dx[3] = {nullptr, nullptr, nullptr};
  for (int d = 0; d < dim; ++d) {
    check(cudaMalloc(&dx[d], m * sizeof(T)), "cudaMalloc");
    check(cudaMemcpy(dx[d], x[d].data(), m * sizeof(T), cudaMemcpyHostToDevice), "upload");
  }
  std::vector<std::complex<T>> hin(in_len);
  std::mt19937_64 rng(99);
  std::uniform_real_distribution<double> v(-1, 1);
  for (auto& e : hin) e = {static_cast<T>(v(rng)), static_cast<T>(v(rng))};
  std::complex<T>*din, *dout;
  check(cudaMalloc(&din, in_len * sizeof(std::complex<T>)), "cudaMalloc");
  check(cudaMalloc(&dout, out_len * sizeof(std::complex<T>)), "cudaMalloc");
  check(cudaMemcpy(din, hin.data(), in_len * sizeof(std::complex<T>), cudaMemcpyHostToDevice), "upload");
  check(cudaDeviceSynchronize(), "sync");
  auto t2 = std::chrono::steady_clock::now();
  plan.set_points(m, dx[0], dx[1], dx[2]);
  check(cudaDeviceSynchronize(), "sync");
  auto t3 = std::chrono::steady_clock::now();
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  plan.execute(din, dout);  // warm-up (also creates the cuFFT plan)
  float best = 1e30f;
  for (int r = 0; r < repeat; ++r) {
    cudaEventRecord(a);
    plan.execute(din, dout);
    cudaEventRecord(b);
    check(cudaEventSynchronize(b), "execute");
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    best = std::min(best, ms);
  }
  auto ms = [](auto p, auto q) { return std::chrono::duration<double, std::milli>(q - p).count(); };
  std::printf(
      "{\"type\": %d, \"dim\": %d, \"n\": %lld, \"m\": %lld, \"ntransf\": %lld, \"eps\": %g, \"prec\": \"%s\", "
      "\"method\": \"%s\", \"bins\": \"%d,%d,%d\", \"kernel_width\": %d, \"upsampfac\": %g, \"plan_ms\": %.3f, \"setpts_ms\": %.3f, "
      "\"exec_ms\": %.4f}\n",
      type, dim, (long long)n, (long long)m, (long long)ntransf, eps, sizeof(T) == 4 ? "f" : "d",
      fieldft::nufft::method_name(plan.info().method), plan.info().bin_size[0], plan.info().bin_size[1],
      plan.info().bin_size[2], plan.info().kernel_width, plan.info().upsampfac, ms(t0, t1),
      ms(t2, t3), best);
  for (int d = 0; d < dim; ++d) cudaFree(dx[d]);
  cudaFree(din);
  cudaFree(dout);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 7) {
    std::fprintf(stderr, "usage: %s TYPE DIM N M EPS PREC(f|d) [NTRANSF] [METHOD] [REPEAT] [POINTS_FILE]\n", argv[0]);
    return 2;
  }
  const int type = std::atoi(argv[1]), dim = std::atoi(argv[2]);
  const std::int64_t n = std::atoll(argv[3]), m = static_cast<std::int64_t>(std::atof(argv[4]));
  const double eps = std::atof(argv[5]);
  const std::string prec = argv[6];
  const std::int64_t ntransf = argc > 7 ? std::atoll(argv[7]) : 1;
  const std::string method = argc > 8 ? argv[8] : "auto";
  const int repeat = argc > 9 ? std::atoi(argv[9]) : 5;
  const char* pf = argc > 10 && std::string(argv[10]) != "-" ? argv[10] : nullptr;
  std::array<int, 3> bins{0, 0, 0};
  if (argc > 11) std::sscanf(argv[11], "%d,%d,%d", &bins[0], &bins[1], &bins[2]);
  try {
    return prec == "d" ? run<double>(type, dim, n, m, eps, ntransf, method, repeat, pf, bins)
                       : run<float>(type, dim, n, m, eps, ntransf, method, repeat, pf, bins);
  } catch (const fieldft::Error& e) {
    std::fprintf(stderr, "fieldft: error: %s\n", e.what());
    return 1;
  }
}
