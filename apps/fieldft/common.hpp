// Shared pieces of the fieldft command-line tool: exit codes, the subcommand interface, the
// transform options common to `nufft` and `demo`, random test data, timing and JSON helpers.
#pragma once

#include <CLI/CLI.hpp>
#include <chrono>
#include <complex>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <nlohmann/json.hpp>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "fieldft/fieldft.hpp"

namespace fieldft::cli {

// Exit status. Library errors map to kExitLibraryBase + ErrorCode so that scripts can tell
// "eps too small" (14) from "backend unavailable" (17) without parsing text.
inline constexpr int kExitOk = 0;
inline constexpr int kExitInternal = 1;  // an unexpected exception: a bug in the tool or library
inline constexpr int kExitUsage = 2;     // the command line is malformed
inline constexpr int kExitLibraryBase = 10;

// A command line that parsed but does not make sense (e.g. a --modes list whose length is not
// --dim). Reported like CLI11's own parse errors, with kExitUsage.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A registered subcommand: `run` is called after parsing when `app` was selected, and returns
// the exit status. `memory_advice` names the subcommand's own options that size the problem,
// for the message printed when memory runs out.
struct Subcommand {
  CLI::App* app = nullptr;
  std::function<int()> run;
  std::string memory_advice;
};

Subcommand add_info_command(CLI::App& parent);
Subcommand add_nufft_command(CLI::App& parent);
Subcommand add_demo_command(CLI::App& parent);
Subcommand add_dft_command(CLI::App& parent);
Subcommand add_simulate_command(CLI::App& parent);
Subcommand add_recon_command(CLI::App& parent);
Subcommand add_tune_command(CLI::App& parent);

// Options of every command that builds a plan. Defaults here are the ones --help shows.
struct TransformArgs {
  std::string prec = "d";
  double eps = 1e-6;
  std::string backend = "auto";
  std::string method = "auto";
  double upsampfac = 0.0;
  int threads = 0;
  int device = 0;
  int repeat = 3;
  std::uint64_t seed = 42;
  std::int64_t check_count = 1000;
  bool json = false;
  std::string planning = "estimate";  // nufft::Planning by name
  std::string wisdom;                 // Options::wisdom_path ("" = $FIELDFT_WISDOM or none)
};

// An image grid from "N" (N x N), "NxM" or "NxMxK", sizes in [2, 4096]; UsageError naming
// `option` otherwise.
std::vector<std::int64_t> parse_matrix(const std::string& text, const std::string& option);

// An integer option's check "must be >= lo", shown in --help as INT:>=lo.
CLI::Validator at_least(std::int64_t lo);

// A floating-point option's check: a finite number (no inf, nan or overflow such as 1e999), and
// at least `lo` when given. CLI11 reports a failure with the option's name.
CLI::Validator finite_number(std::optional<double> lo = std::nullopt);

// --threads of every subcommand that has it: OpenMP threads of the CPU backend, >= 0; --help
// shows the cap.
void add_threads_option(CLI::App& app, int& threads);

// Lowers `threads` to fieldft::max_cpu_threads() (the library's cap, fieldft/nufft.hpp), with a
// one-line notice on stderr saying what is used: the library caps silently, and a user who asked
// for more should know. Call before a subcommand does any work.
void cap_threads(int& threads);

// --seed of every subcommand that has it: a non-negative 64-bit integer (CLI11 alone would wrap
// -1 to 2^64 - 1).
void add_seed_option(CLI::App& app, std::uint64_t& seed, const std::string& help);

// Registers the TransformArgs options on `app`.
void add_transform_options(CLI::App& app, TransformArgs& args);

// The plan options that TransformArgs describe.
nufft::Options plan_options(const TransformArgs& args);

// Calls f.template operator()<T>() with T = float for prec "f" and double for "d", so that each
// command writes its float and double paths once, as one template.
template <class F>
decltype(auto) with_precision(const std::string& prec, F&& f) {
  if (prec == "f") return f.template operator()<float>();
  return f.template operator()<double>();
}

// Wall-clock time of f() in milliseconds. Host clock: the CUDA backend is synchronous with the
// host when given host pointers, so the call has finished its device work when it returns.
template <class F>
double time_ms(F&& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  const auto t1 = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::milli>(t1 - t0).count();
}

// Minimum and mean of repeated timings.
struct Timing {
  double min_ms = std::numeric_limits<double>::infinity();
  double sum_ms = 0;
  int count = 0;
  void add(double ms) {
    min_ms = ms < min_ms ? ms : min_ms;
    sum_ms += ms;
    ++count;
  }
  double mean_ms() const { return count ? sum_ms / count : 0.0; }
};

// Uniform random test data, reproducible from a seed.
class Random {
 public:
  explicit Random(std::uint64_t seed) : engine_(seed) {}
  // n values uniform in [lo, hi), rounded to T (the values a plan of precision T sees).
  template <class T>
  std::vector<T> uniform(std::int64_t n, double lo, double hi);
  // n complex values with real and imaginary parts uniform in [-1, 1].
  template <class T>
  std::vector<std::complex<T>> strengths(std::int64_t n);
  // min(k, n) distinct indices in [0, n), sorted.
  std::vector<std::int64_t> subset(std::int64_t n, std::int64_t k);

 private:
  std::mt19937_64 engine_;
};

// Widening copies for the double-precision oracles (fieldft/reference.hpp).
template <class T>
std::vector<double> to_double(std::span<const T> v) {
  return std::vector<double>(v.begin(), v.end());
}
template <class T>
std::vector<std::complex<double>> to_cdouble(std::span<const std::complex<T>> v) {
  return std::vector<std::complex<double>>(v.begin(), v.end());
}
template <class T>
std::vector<std::complex<double>> gather(std::span<const std::complex<T>> v,
                                         std::span<const std::int64_t> which) {
  std::vector<std::complex<double>> out;
  out.reserve(which.size());
  for (auto i : which) out.emplace_back(v[static_cast<std::size_t>(i)]);
  return out;
}

// Coordinates as the double-precision oracles take them (y and z only for dim >= 2, 3).
template <class T>
reference::Points oracle_points(int dim, std::span<const T> x, std::span<const T> y,
                                std::span<const T> z) {
  reference::Points p;
  p.dim = dim;
  p.x = to_double(x);
  if (dim >= 2) p.y = to_double(y);
  if (dim >= 3) p.z = to_double(z);
  return p;
}

// Relative l2 error of one transform's outputs `out` at the output indices `which`, against the
// exact sum of the given type (1: points -> modes, 2: modes -> points) applied to `in`.
template <class T>
double subset_error(int type, const reference::Points& pts, std::span<const std::complex<T>> in,
                    std::span<const std::complex<T>> out, std::span<const std::int64_t> modes,
                    int isign, int modeord, std::span<const std::int64_t> which);

// Plan facts (sizes, kernel, grid, backend, method) as flat JSON keys; `modes` and `fine_grid`
// list dim entries.
void add_plan_info(nlohmann::json& j, const nufft::PlanInfo& info);
// One human-readable line with the same facts.
std::string describe_plan(const nufft::PlanInfo& info);
// Every planner decision of a plan and why (`fieldft nufft --explain`), several lines.
std::string explain_plan(const nufft::PlanInfo& info);
// "64x64" for the first dim entries of a size triple.
std::string format_sizes(const std::array<std::int64_t, 3>& sizes, int dim);
// Prints j on one line to stdout.
void print_json(const nlohmann::json& j);

}  // namespace fieldft::cli
