// fieldft_bench_precomputed: CPU NUFFT types 1 and 2 with method nupts (kernel evaluated per
// execute) and precomputed (kernel weights computed at set_points), on the same uniformly random
// points and data. Prints one line per (method, type): set_points (the fastest of --setpts calls
// on one plan, points already set once), execute (median of --repeats), the weights' memory,
// and for precomputed the executes per set_points from which it pays.
//
//   fieldft_bench_precomputed DIM N M EPS float|double [repeats=7] [setpts=3] [threads=0]
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <random>
#include <string>
#include <vector>

#include "fieldft/nufft.hpp"

namespace {

using Clock = std::chrono::steady_clock;
namespace nufft = fieldft::nufft;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// CPU time of the whole process (all threads), ms: on a loaded machine a better measure of the
// work done than the wall clock, which counts the time the scheduler gives to others.
double cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return 1e3 * static_cast<double>(ts.tv_sec) + 1e-6 * static_cast<double>(ts.tv_nsec);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct Result {
  double setpts_ms = 0, exec_ms = 0, setpts_cpu = 0, exec_cpu = 0;
  long long bytes = 0;
  int width = 0;
};

template <class T>
Result run(int type, nufft::Method method, const std::vector<std::int64_t>& modes, std::int64_t m, double eps,
           const std::vector<std::vector<T>>& xyz, int repeats, int setpts, int threads) {
  nufft::Options opt;
  opt.backend = fieldft::Backend::kCpu;
  opt.method = method;
  opt.nthreads = threads;
  nufft::Plan<T> plan(type, modes, type == 1 ? 1 : -1, 1, eps, opt);
  const T* y = xyz.size() > 1 ? xyz[1].data() : nullptr;
  const T* z = xyz.size() > 2 ? xyz[2].data() : nullptr;
  plan.set_points(m, xyz[0].data(), y, z);  // first call: upsampfac choice, first-touch pages
  Result r;
  r.setpts_ms = r.setpts_cpu = 1e30;
  for (int i = 0; i < setpts; ++i) {
    const auto t0 = Clock::now();
    const double c0 = cpu_ms();
    plan.set_points(m, xyz[0].data(), y, z);
    r.setpts_cpu = std::min(r.setpts_cpu, cpu_ms() - c0);
    r.setpts_ms = std::min(r.setpts_ms, ms_since(t0));
  }
  const std::int64_t n = plan.info().num_modes();
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<T> u(-1, 1);
  std::vector<std::complex<T>> in(static_cast<std::size_t>(type == 1 ? m : n)), out(static_cast<std::size_t>(type == 1 ? n : m));
  for (auto& v : in) v = {u(rng), u(rng)};
  plan.execute(in.data(), out.data());  // warm-up: FFTW plan, workspaces
  std::vector<double> t, c;
  for (int i = 0; i < repeats; ++i) {
    const auto t0 = Clock::now();
    const double c0 = cpu_ms();
    plan.execute(in.data(), out.data());
    c.push_back(cpu_ms() - c0);
    t.push_back(ms_since(t0));
  }
  r.exec_ms = median(t);
  r.exec_cpu = median(c);
  r.bytes = plan.info().precomputed_bytes;
  r.width = plan.info().kernel_width;
  return r;
}

template <class T>
int bench(int dim, std::int64_t nmodes, std::int64_t m, double eps, const char* prec, int repeats, int setpts,
          int threads) {
  std::vector<std::int64_t> modes(static_cast<std::size_t>(dim), nmodes);
  std::mt19937_64 rng(1);
  std::uniform_real_distribution<double> u(-3.14159265358979, 3.14159265358979);
  std::vector<std::vector<T>> xyz(static_cast<std::size_t>(dim), std::vector<T>(static_cast<std::size_t>(m)));
  for (auto& a : xyz)
    for (auto& v : a) v = static_cast<T>(u(rng));
  for (int type : {1, 2}) {
    const Result a = run<T>(type, nufft::Method::kNuptsDriven, modes, m, eps, xyz, repeats, setpts, threads);
    const Result b = run<T>(type, nufft::Method::kPrecomputed, modes, m, eps, xyz, repeats, setpts, threads);
    // The break-even from CPU times (the work, less exposed to the machine's load than the wall).
    const double gain = a.exec_cpu - b.exec_cpu, extra = b.setpts_cpu - a.setpts_cpu;
    std::printf(
        "dim %d N %lld M %lld eps %.0e %s type %d w %d threads %d | wall (cpu) ms: nupts setpts %.2f (%.2f) exec %.2f "
        "(%.2f) | precomputed setpts %.2f (%.2f) exec %.2f (%.2f) weights %.1f MiB | exec cpu ratio %.3f, pays "
        "from reuse %s\n",
        dim, static_cast<long long>(nmodes), static_cast<long long>(m), eps, prec, type, a.width,
        threads > 0 ? threads : omp_get_max_threads(), a.setpts_ms, a.setpts_cpu, a.exec_ms, a.exec_cpu, b.setpts_ms,
        b.setpts_cpu, b.exec_ms, b.exec_cpu, b.bytes / 1048576.0, b.exec_cpu / a.exec_cpu,
        gain > 0 ? std::to_string(std::max(1.0, extra / gain)).c_str() : "never");
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 6) {
    std::fprintf(stderr, "usage: %s DIM N M EPS float|double [repeats=7] [setpts=3] [threads=0]\n", argv[0]);
    return 2;
  }
  const int dim = std::atoi(argv[1]);
  const std::int64_t n = std::atoll(argv[2]), m = std::atoll(argv[3]);
  const double eps = std::atof(argv[4]);
  const std::string prec = argv[5];
  const int repeats = argc > 6 ? std::atoi(argv[6]) : 7, setpts = argc > 7 ? std::atoi(argv[7]) : 3;
  const int threads = argc > 8 ? std::atoi(argv[8]) : 0;
  return prec == "float" ? bench<float>(dim, n, m, eps, "float", repeats, setpts, threads)
                         : bench<double>(dim, n, m, eps, "double", repeats, setpts, threads);
}
