#include "common.hpp"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <sstream>
#include <unordered_set>

namespace fieldft::cli {

namespace {

// The names the library parses, so that the choices in --help cannot drift from it.
std::vector<std::string> backend_names() {
  std::vector<std::string> names;
  for (auto b : {Backend::kAuto, Backend::kCpu, Backend::kCuda})
    names.emplace_back(backend_name(b));
  return names;
}

std::vector<std::string> method_names() {
  using nufft::Method;
  std::vector<std::string> names;
  for (auto m : {Method::kAuto, Method::kNuptsDriven, Method::kSubproblem, Method::kOutputDriven, Method::kPrecomputed})
    names.emplace_back(nufft::method_name(m));
  return names;
}

}  // namespace

std::vector<std::int64_t> parse_matrix(const std::string& text, const std::string& option) {
  std::vector<std::int64_t> g;
  std::stringstream ss(text);
  std::string part;
  while (std::getline(ss, part, 'x')) {
    std::int64_t v = 0;
    if (!CLI::detail::lexical_cast(part, v) || v < 2 || v > 4096)
      throw UsageError(option + ": '" + text + "' must be N, NxM or NxMxK with sizes in [2, 4096]");
    g.push_back(v);
  }
  if (g.size() == 1) g.push_back(g[0]);
  if (g.size() < 2 || g.size() > 3) throw UsageError(option + ": '" + text + "' must have 1 to 3 sizes");
  return g;
}

CLI::Validator at_least(std::int64_t lo) {
  const std::string bound = std::to_string(lo);
  return CLI::Validator(
      [lo, bound](std::string& text) -> std::string {
        std::int64_t v = 0;
        if (!CLI::detail::lexical_cast(text, v)) return "expected an integer, got '" + text + "'";
        return v >= lo ? std::string() : "must be >= " + bound + ", got " + text;
      },
      ">=" + bound);
}

CLI::Validator finite_number(std::optional<double> lo) {
  std::ostringstream bound;
  if (lo) bound << *lo;
  return CLI::Validator(
      [lo, b = bound.str()](std::string& text) -> std::string {
        double v = 0;
        if (!CLI::detail::lexical_cast(text, v)) return "expected a number, got '" + text + "'";
        if (!std::isfinite(v)) return "must be a finite number, got '" + text + "'";
        return !lo || v >= *lo ? std::string() : "must be >= " + b + ", got " + text;
      },
      lo ? ">=" + bound.str() : std::string("FINITE"));
}

void add_threads_option(CLI::App& app, int& threads) {
  app.add_option("--threads", threads,
                 "CPU backend: OpenMP threads; 0 = all available (OMP_NUM_THREADS). At most " +
                     std::to_string(max_cpu_threads()) +
                     " here (4 x the processors, or OMP_THREAD_LIMIT if lower): larger values "
                     "are lowered to that, with a notice on stderr")
      ->check(at_least(0))
      ->capture_default_str();
}

void cap_threads(int& threads) {
  const int most = max_cpu_threads();
  if (threads <= most) return;
  std::cerr << "fieldft: note: --threads " << threads << " lowered to " << most
            << ", the most the CPU backend uses here (4 x the processors, or OMP_THREAD_LIMIT if "
               "lower)\n";
  threads = most;
}

void add_seed_option(CLI::App& app, std::uint64_t& seed, const std::string& help) {
  app.add_option("--seed", seed, help)
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            std::uint64_t v = 0;
            const auto first = text.find_first_not_of(" \t");
            if (first == std::string::npos || text[first] == '-' ||
                !CLI::detail::lexical_cast(text, v))
              return "must be an integer from 0 to " +
                     std::to_string(std::numeric_limits<std::uint64_t>::max()) + ", got '" +
                     text + "'";
            return std::string();
          },
          ""))
      ->capture_default_str();
}

void add_transform_options(CLI::App& app, TransformArgs& args) {
  app.add_option("--prec", args.prec,
                 "Floating-point precision of the plan: f (float) or d (double)")
      ->check(CLI::IsMember({"f", "d"}))
      ->capture_default_str();
  std::ostringstream eps_help;
  eps_help << "Requested relative l2 accuracy of each transform (dimensionless); at least "
           << nufft::min_eps<float>() << " for f, " << nufft::min_eps<double>() << " for d";
  app.add_option("--eps", args.eps, eps_help.str())
      ->check(finite_number())
      ->capture_default_str();
  app.add_option("--backend", args.backend,
                 "Where the transform runs; auto = CUDA when compiled in and a GPU is present, "
                 "else CPU")
      ->check(CLI::IsMember(backend_names()))
      ->capture_default_str();
  app.add_option("--method", args.method,
                 "Spreading method: auto lets the planner choose; the CPU backend accepts auto, "
                 "nupts and precomputed (kernel weights computed once at set_points, types 1 and 2)")
      ->check(CLI::IsMember(method_names()))
      ->capture_default_str();
  app.add_option("--upsampfac", args.upsampfac,
                 "Upsampling factor sigma = fine grid / modes, in [1.25, 2.25]; 0 = chosen by the "
                 "planner (2; on CUDA 2.25 for dense points where that narrows the kernel, 1.6 for "
                 "sparse 3D type 1 where the kernel keeps its width)")
      ->check(finite_number())
      ->capture_default_str();
  add_threads_option(app, args.threads);
  app.add_option("--device", args.device, "CUDA backend: device ordinal")
      ->check(at_least(0))
      ->capture_default_str();
  app.add_option("--repeat", args.repeat,
                 "Times set_points and execute are run; reported times are the minimum (ms)")
      ->check(at_least(1))
      ->capture_default_str();
  add_seed_option(app, args.seed, "Seed of the random number generator (test data, subsets)");
  app.add_option("--check-count", args.check_count,
                 "Outputs per transform compared with the exact double-precision oracle "
                 "(chosen at random; the oracle costs check-count x inputs operations)")
      ->check(at_least(1))
      ->capture_default_str();
  app.add_option("--planning", args.planning,
                 "estimate: the planner's rules; measure: the configuration stored in the wisdom file for "
                 "this problem, or, where it has none, the fastest candidate timed now (then stored); "
                 "remeasure: time the candidates even where the wisdom has the problem (docs/tuning.md)")
      ->check(CLI::IsMember({"estimate", "measure", "remeasure"}))
      ->capture_default_str();
  app.add_option("--wisdom", args.wisdom,
                 "Wisdom file (JSON) of --planning measure; default: $FIELDFT_WISDOM, else none (measured "
                 "configurations last for this run only)")
      ->type_name("PATH");
  app.add_flag("--json", args.json, "Print one JSON object (one line) instead of text");
}

nufft::Options plan_options(const TransformArgs& args) {
  nufft::Options opts;
  opts.backend = parse_backend(args.backend);
  opts.method = nufft::parse_method(args.method);
  opts.upsampfac = args.upsampfac;
  opts.nthreads = args.threads;
  opts.device = args.device;
  opts.planning = nufft::parse_planning(args.planning);
  opts.wisdom_path = args.wisdom;
  return opts;
}

template <class T>
std::vector<T> Random::uniform(std::int64_t n, double lo, double hi) {
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<T> v(static_cast<std::size_t>(n));
  for (auto& x : v) x = static_cast<T>(dist(engine_));
  return v;
}

template <class T>
std::vector<std::complex<T>> Random::strengths(std::int64_t n) {
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<std::complex<T>> v(static_cast<std::size_t>(n));
  for (auto& c : v) {
    const double re = dist(engine_);
    c = {static_cast<T>(re), static_cast<T>(dist(engine_))};
  }
  return v;
}

std::vector<std::int64_t> Random::subset(std::int64_t n, std::int64_t k) {
  std::vector<std::int64_t> out;
  if (k >= n) {
    out.resize(static_cast<std::size_t>(std::max<std::int64_t>(n, 0)));
    for (std::int64_t i = 0; i < n; ++i) out[static_cast<std::size_t>(i)] = i;
    return out;
  }
  // Floyd's sampling: k distinct values with O(k) work and memory, whatever n is.
  std::unordered_set<std::int64_t> chosen;
  for (std::int64_t j = n - k; j < n; ++j) {
    const auto t = std::uniform_int_distribution<std::int64_t>(0, j)(engine_);
    if (!chosen.insert(t).second) chosen.insert(j);
  }
  out.assign(chosen.begin(), chosen.end());
  std::sort(out.begin(), out.end());
  return out;
}

template std::vector<float> Random::uniform<float>(std::int64_t, double, double);
template std::vector<double> Random::uniform<double>(std::int64_t, double, double);
template std::vector<std::complex<float>> Random::strengths<float>(std::int64_t);
template std::vector<std::complex<double>> Random::strengths<double>(std::int64_t);

template <class T>
double subset_error(int type, const reference::Points& pts, std::span<const std::complex<T>> in,
                    std::span<const std::complex<T>> out, std::span<const std::int64_t> modes,
                    int isign, int modeord, std::span<const std::int64_t> which) {
  const auto in_d = to_cdouble(in);
  const auto exact = type == 1 ? reference::nufft_type1_at(pts, in_d, modes, isign, modeord, which)
                               : reference::nufft_type2_at(pts, in_d, modes, isign, modeord, which);
  const auto got = gather(out, which);
  return reference::rel_l2_error<std::complex<double>>(got, exact);
}

template double subset_error<float>(int, const reference::Points&,
                                    std::span<const std::complex<float>>,
                                    std::span<const std::complex<float>>,
                                    std::span<const std::int64_t>, int, int,
                                    std::span<const std::int64_t>);
template double subset_error<double>(int, const reference::Points&,
                                     std::span<const std::complex<double>>,
                                     std::span<const std::complex<double>>,
                                     std::span<const std::int64_t>, int, int,
                                     std::span<const std::int64_t>);

std::string format_sizes(const std::array<std::int64_t, 3>& sizes, int dim) {
  std::string s;
  for (int d = 0; d < dim; ++d)
    s += (d ? "x" : "") + std::to_string(sizes[static_cast<std::size_t>(d)]);
  return s;
}

void add_plan_info(nlohmann::json& j, const nufft::PlanInfo& info) {
  const auto first = [&](const auto& a) {
    return std::vector<std::int64_t>(a.begin(), a.begin() + info.dim);
  };
  j["type"] = info.type;
  j["dim"] = info.dim;
  j["modes"] = first(info.modes);
  j["M"] = info.num_points;
  j["ntransf"] = info.ntransf;
  j["isign"] = info.isign;
  j["modeord"] = info.modeord;
  j["eps"] = info.eps;
  j["backend"] = backend_name(info.backend);
  j["method"] = nufft::method_name(info.method);
  j["configured_by"] = info.configured_by;
  j["precomputed_bytes"] = info.precomputed_bytes;
  j["upsampfac"] = info.upsampfac;
  j["kernel_width"] = info.kernel_width;
  j["kernel_beta"] = info.kernel_beta;
  j["horner_degree"] = info.horner_degree;
  j["fine_grid"] = first(info.fine_grid);
  j["max_batch"] = info.max_batch;
  j["bin_size"] = std::vector<int>(info.bin_size.begin(), info.bin_size.begin() + info.dim);
  j["spread_boxes"] = info.spread_boxes;
  j["spread_tensor_cores"] = info.spread_tensor_cores;
  j["spread_kernel"] = nufft::spread_kernel_name(info.spread_kernel);
  j["interp_kernel"] = nufft::interp_kernel_name(info.interp_kernel);
  j["fft"] = nufft::fft_strategy_name(info.fft);
  j["mode_fft"] = info.mode_fft;
  j["spread_bulk_rows"] = info.spread_bulk_rows;
  j["sub_bins"] = std::vector<int>(info.sub_bins.begin(), info.sub_bins.begin() + info.dim);
  j["subproblem_points"] = info.subproblem_points;
  j["plan_reason"] = info.plan_reason;
}

std::string explain_plan(const nufft::PlanInfo& info) {
  const auto sizes = [&](const std::array<int, 3>& b) {
    return format_sizes(std::array<std::int64_t, 3>{b[0], b[1], b[2]}, info.dim);
  };
  std::ostringstream s;
  if (info.backend == Backend::kCpu)
    return "configuration: CPU backend, bins " + sizes(info.bin_size) +
           "; slab-owned spreading, FFTW\n" + info.plan_reason;
  s << "configuration: spread " << nufft::spread_kernel_name(info.spread_kernel) << ", interp "
    << nufft::interp_kernel_name(info.interp_kernel) << ", bins " << sizes(info.bin_size)
    << ", sub-bins " << sizes(info.sub_bins) << ", at most " << info.subproblem_points
    << " points per subproblem, FFT " << nufft::fft_strategy_name(info.fft)
    << (info.mode_fft ? " with type 1's last axis fused" : "") << "\n";
  if (info.plan_reason.empty()) {
    s << "why:          no reasons recorded\n";
  } else {
    s << "why:\n";
    std::istringstream lines(info.plan_reason);
    for (std::string line; std::getline(lines, line);) s << "  " << line << "\n";
  }
  return s.str();
}

std::string describe_plan(const nufft::PlanInfo& info) {
  std::ostringstream s;
  s << "backend " << backend_name(info.backend) << ", method " << nufft::method_name(info.method)
    << ", upsampfac " << info.upsampfac << ", kernel width " << info.kernel_width << " (beta "
    << info.kernel_beta << "), fine grid " << format_sizes(info.fine_grid, info.dim) << ", batch "
    << info.max_batch;
  if (info.configured_by != "estimate") s << "; configuration: " << info.configured_by;
  return s.str();
}

void print_json(const nlohmann::json& j) {
  // replace: a device name or path with invalid UTF-8 must not turn a result into an exception.
  std::cout << j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) << std::endl;
}

}  // namespace fieldft::cli
