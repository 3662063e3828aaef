// fieldft_bench_cpu: times one CPU NUFFT (plan, set_points, execute) on points and strengths read
// from raw binary files, and prints one JSON object. run.py writes the files, runs this program
// and FINUFFT on the same data, and compares.
//
// Files (native byte order, precision T = float or double):
//   --points: x[0..M), then y[0..M) (dim >= 2), then z[0..M) (dim 3), each M values of T;
//   --input:  interleaved complex T, M values (type 1: strengths) or N1·N2·N3 values (type 2:
//             modes, column-major, x fastest, modeord 0);
//   --output: written when given, the execute result in the same layout (complex T).
// Type 3 (--type 3 --dim d --nk K): --points holds the M sources (x, then y, then z, as above),
// --targets the K targets (s[0..K), then t, then u), --input the M strengths and --output the K
// results; --modes is not used.
// Phase timings (--phases, or FIELDFT_BENCH_PHASES=1 in the environment) add the time of each
// stage of execute, see phases.hpp.
#include <omp.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <array>
#include <chrono>
#include <ctime>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "fieldft/nufft.hpp"
#include "phases.hpp"

namespace {

using fieldft::nufft::Plan;
using Clock = std::chrono::steady_clock;

struct Args {
  int type = 1;
  std::vector<std::int64_t> modes;
  int dim = 0;         // type 3 (types 1 and 2: the number of --modes)
  std::int64_t nk = 0;  // type 3: number of targets
  std::string precision = "double";
  double eps = 1e-6;
  int isign = 0;  // 0: FINUFFT's default, +1 for type 1 and -1 for type 2
  int nthreads = 0;
  int repeats = 5;
  std::int64_t m = 0;
  double upsampfac = 0;
  std::vector<int> bin_size;
  std::string points, targets, input, output;
  bool phases = false;
  bool setpts_only = false;
};

// CPU time of the whole process (all threads), ms: on a loaded machine a better measure of the
// work done than the wall clock, which counts the time the scheduler gives to others.
double cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

template <class V>
std::vector<V> read_binary(const std::string& path, std::int64_t count, const char* what) {
  std::ifstream f(path, std::ios::binary | std::ios::ate);
  if (!f) throw std::runtime_error(std::string("cannot open ") + what + " file '" + path + "'");
  const std::int64_t bytes = static_cast<std::int64_t>(f.tellg());
  const std::int64_t want = count * static_cast<std::int64_t>(sizeof(V));
  if (bytes != want)
    throw std::runtime_error(std::string(what) + " file '" + path + "' has " + std::to_string(bytes) +
                             " bytes, expected " + std::to_string(want) + " (" + std::to_string(count) +
                             " values of " + std::to_string(sizeof(V)) + " bytes)");
  std::vector<V> v(static_cast<std::size_t>(count));
  f.seekg(0);
  f.read(reinterpret_cast<char*>(v.data()), want);
  if (!f) throw std::runtime_error(std::string("short read from ") + what + " file '" + path + "'");
  return v;
}

struct Timing {
  double setpts_ms = std::numeric_limits<double>::infinity();
  double setpts_cpu_ms = std::numeric_limits<double>::infinity();  // process CPU time, all threads
  double first_exec_ms = 0;
  std::vector<double> exec_all;
  double exec_cpu_ms = std::numeric_limits<double>::infinity();  // process CPU time, all threads
  double exec_ms() const { return *std::min_element(exec_all.begin(), exec_all.end()); }
};

// The dim coordinate arrays of n points stored one after another (x, then y, then z).
template <class T>
std::array<const T*, 3> split_coords(const std::vector<T>& coords, int dim, std::int64_t n) {
  return {coords.data(), dim > 1 ? coords.data() + n : nullptr, dim > 2 ? coords.data() + 2 * n : nullptr};
}

// set_points is timed like execute (minimum over repeats, at most 3): it is a single call, so a
// moment of contention on a shared machine would otherwise decide its number. The first execute
// also plans the FFT (FFTW_ESTIMATE) and is reported apart, never in exec_all. Type 3: targets
// holds the nk targets (s, t, u) and set_points takes both sets (its time includes the choice of
// the grid and the inner plan's own set_points).
template <class T>
Timing time_plan(Plan<T>& plan, std::int64_t m, const std::vector<T>& coords, const std::complex<T>* in,
                 std::complex<T>* out, int repeats, bool setpts_only = false, std::int64_t nk = 0,
                 const std::vector<T>* targets = nullptr) {
  const int dim = plan.info().dim;
  const auto c = split_coords(coords, dim, m);
  Timing t;
  for (int r = 0; r < std::max(1, setpts_only ? repeats : std::min(repeats, 3)); ++r) {
    const auto t0 = Clock::now();
    const double c0 = cpu_ms();
    if (targets) {
      const auto s = split_coords(*targets, dim, nk);
      plan.set_points(m, c[0], c[1], c[2], nk, s[0], s[1], s[2]);
    } else {
      plan.set_points(m, c[0], c[1], c[2]);
    }
    t.setpts_ms = std::min(t.setpts_ms, ms_since(t0));
    t.setpts_cpu_ms = std::min(t.setpts_cpu_ms, cpu_ms() - c0);
  }
  if (setpts_only) return t;
  auto t0 = Clock::now();
  plan.execute(in, out);
  t.first_exec_ms = ms_since(t0);
  for (int r = 0; r < repeats; ++r) {
    t0 = Clock::now();
    const double c0 = cpu_ms();
    plan.execute(in, out);
    t.exec_all.push_back(ms_since(t0));
    t.exec_cpu_ms = std::min(t.exec_cpu_ms, cpu_ms() - c0);
  }
  return t;
}

template <class T>
nlohmann::json run(const Args& a) {
  using Complex = std::complex<T>;
  const bool type3 = a.type == 3;
  const int dim = type3 ? a.dim : static_cast<int>(a.modes.size());
  // Type 3: the plan takes only dim from its modes (values ignored).
  const std::vector<std::int64_t> modes = type3 ? std::vector<std::int64_t>(static_cast<std::size_t>(dim), 1) : a.modes;
  std::int64_t n = 1;
  for (auto v : modes) n *= v;
  const std::int64_t m = a.m;
  const std::vector<T> coords = read_binary<T>(a.points, m * dim, "points");
  const std::vector<T> targets = type3 ? read_binary<T>(a.targets, a.nk * dim, "targets") : std::vector<T>{};
  const std::int64_t in_len = a.type == 2 ? n : m, out_len = type3 ? a.nk : (a.type == 1 ? n : m);
  const std::vector<Complex> in = read_binary<Complex>(a.input, in_len, "input");
  std::vector<Complex> out(static_cast<std::size_t>(out_len));

  fieldft::nufft::Options opt;
  opt.backend = fieldft::Backend::kCpu;
  opt.nthreads = a.nthreads;
  opt.upsampfac = a.upsampfac;
  for (std::size_t d = 0; d < a.bin_size.size(); ++d) opt.bin_size[d] = a.bin_size[d];
  const int isign = a.isign != 0 ? a.isign : (a.type == 2 ? -1 : 1);
  const int nthreads = a.nthreads > 0 ? a.nthreads : omp_get_max_threads();

  const auto t0 = Clock::now();
  Plan<T> plan(a.type, modes, isign, 1, a.eps, opt);
  const double plan_ms = ms_since(t0);
  const Timing t = time_plan(plan, m, coords, in.data(), out.data(), a.repeats, a.setpts_only, a.nk,
                             type3 ? &targets : nullptr);
  if (a.setpts_only) return nlohmann::json{{"setpts_ms", t.setpts_ms}, {"setpts_cpu_ms", t.setpts_cpu_ms}, {"kernel_width", plan.info().kernel_width}};
  if (!a.output.empty()) {
    std::ofstream f(a.output, std::ios::binary);
    f.write(reinterpret_cast<const char*>(out.data()), static_cast<std::streamsize>(out.size() * sizeof(Complex)));
    if (!f) throw std::runtime_error("cannot write output file '" + a.output + "'");
  }

  const auto& info = plan.info();
  nlohmann::json j;
  j["precision"] = a.precision;
  j["type"] = a.type;
  j["dim"] = dim;
  j["modes"] = modes;
  j["m"] = m;
  if (type3) {
    j["nk"] = a.nk;
    j["type3_direct"] = info.type3_direct;
  }
  j["eps"] = a.eps;
  j["isign"] = info.isign;
  j["nthreads"] = nthreads;
  j["plan_ms"] = plan_ms;
  j["setpts_ms"] = t.setpts_ms;
  j["setpts_cpu_ms"] = t.setpts_cpu_ms;
  j["first_exec_ms"] = t.first_exec_ms;
  j["exec_ms"] = t.exec_ms();
  j["exec_ms_all"] = t.exec_all;
  j["exec_cpu_ms"] = t.exec_cpu_ms;
  j["kernel_width"] = info.kernel_width;
  j["kernel_beta"] = info.kernel_beta;
  j["horner_degree"] = info.horner_degree;
  j["upsampfac"] = info.upsampfac;
  j["fine_grid"] = std::vector<std::int64_t>(info.fine_grid.begin(), info.fine_grid.begin() + dim);
  j["bin_size"] = std::vector<int>(info.bin_size.begin(), info.bin_size.begin() + dim);
  if (a.phases) {
    // Spreading or interpolation is what remains of execute after the FFT and the mode copy.
    nlohmann::json ph = fieldft::bench::time_fft_and_copy<T>(info, nthreads, a.repeats);
    double rest = 0;
    for (const auto& [key, value] : ph.items()) rest += value.template get<double>();
    ph[a.type == 1 ? "spread_ms" : "interp_ms"] = t.exec_ms() - rest;
    // The same problem with the input handed over in about the plan's sorted order: what the
    // random accesses to the caller's arrays cost in set_points and execute.
    std::vector<T> sorted_coords = coords;
    std::vector<Complex> sorted_in = in;
    fieldft::bench::presort<T>(info, m, sorted_coords, a.type == 1 ? &sorted_in : nullptr);
    Plan<T> sorted_plan(a.type, a.modes, isign, 1, a.eps, opt);
    const Timing ts = time_plan(sorted_plan, m, sorted_coords, sorted_in.data(), out.data(), a.repeats);
    ph["setpts_presorted_ms"] = ts.setpts_ms;
    ph["exec_presorted_ms"] = ts.exec_ms();
    j["phases"] = ph;
  }
  return j;
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  CLI::App app{"fieldft CPU NUFFT timing on points from files (driven by bench/cpu_finufft/run.py)"};
  app.add_option("--type", a.type, "NUFFT type")->check(CLI::IsMember({1, 2, 3}))->required();
  app.add_option("--modes", a.modes, "mode counts N1 [N2 [N3]], x first (types 1 and 2)")->expected(1, 3);
  app.add_option("--dim", a.dim, "dimension (type 3)")->check(CLI::Range(1, 3));
  app.add_option("--nk", a.nk, "number of targets (type 3)")->check(CLI::NonNegativeNumber);
  app.add_option("--targets", a.targets, "raw target coordinates file (type 3)");
  app.add_option("--precision", a.precision, "float or double")->check(CLI::IsMember({"float", "double"}));
  app.add_option("--eps", a.eps, "relative l2 tolerance")->required();
  app.add_option("--isign", a.isign, "+1 or -1; default -1 for type 2, else +1 (FINUFFT's defaults)")
      ->check(CLI::IsMember({-1, 1}));
  app.add_option("--nthreads", a.nthreads, "OpenMP threads (0: all)")->check(CLI::NonNegativeNumber);
  app.add_option("--repeats", a.repeats, "timed executes after one warm-up; the minimum is reported")
      ->check(CLI::PositiveNumber);
  app.add_option("--m", a.m, "number of points")->required()->check(CLI::PositiveNumber);
  app.add_option("--upsampfac", a.upsampfac, "fine grid / modes (0: fieldft's choice)");
  app.add_option("--points", a.points, "raw coordinates file")->required();
  app.add_option("--input", a.input, "raw complex input file")->required();
  app.add_option("--output", a.output, "raw complex output file (optional)");
  app.add_option("--bin-size", a.bin_size, "bin sizes in fine-grid cells, x first; the slowest is the slab thickness (0: automatic)")
      ->expected(1, 3)->check(CLI::NonNegativeNumber);
  app.add_flag("--phases", a.phases, "also time each stage of execute");
  app.add_flag("--setpts-only", a.setpts_only, "time set_points alone, --repeats times (no execute)");
  CLI11_PARSE(app, argc, argv);
  if (const char* env = std::getenv("FIELDFT_BENCH_PHASES"); env && std::string(env) == "1") a.phases = true;
  if (a.type == 3) {
    if (a.dim == 0 || a.targets.empty()) {
      std::cerr << "error: type 3 needs --dim, --nk and --targets\n";
      return 2;
    }
    if (a.phases) {
      std::cerr << "error: --phases times the stages of types 1 and 2 only\n";
      return 2;
    }
  } else if (a.modes.empty()) {
    std::cerr << "error: types 1 and 2 need --modes\n";
    return 2;
  }
  for (auto v : a.modes) {
    if (v < 1) {
      std::cerr << "error: mode counts must be >= 1, got " << v << "\n";
      return 2;
    }
  }
  try {
    const nlohmann::json j = a.precision == "float" ? run<float>(a) : run<double>(a);
    std::cout << j.dump() << "\n";
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
