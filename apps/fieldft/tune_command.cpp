// `fieldft tune`: builds wisdom for one problem (planning remeasure, docs/tuning.md "Measured
// planning and wisdom"): times every candidate configuration on random points and prints them.
#include <iomanip>
#include <iostream>
#include <memory>
#include <numbers>
#include <sstream>

#include "common.hpp"

namespace fieldft::cli {

namespace {

struct TuneArgs {
  int type = 1;
  std::vector<std::int64_t> modes;
  std::int64_t points = -1;  // -1: from --density
  double density = 1.0;      // points per mode
  std::int64_t ntransf = 1;
  std::int64_t reuse = 0;
  TransformArgs common;
};

std::string bins_text(const std::array<int, 3>& b, int dim) {
  std::string s;
  for (int d = 0; d < dim; ++d) s += (d ? "x" : "") + std::to_string(b[static_cast<std::size_t>(d)]);
  return s;
}

template <class T>
int run_tune(const TuneArgs& a) {
  const int dim = static_cast<int>(a.modes.size());
  nufft::Options opts = plan_options(a.common);
  opts.planning = nufft::Planning::kRemeasure;
  opts.reuse = a.reuse;
  const char* env = std::getenv("FIELDFT_WISDOM");
  if (opts.wisdom_path.empty() && (env == nullptr || *env == '\0'))
    throw UsageError("no wisdom file: give --wisdom PATH or set FIELDFT_WISDOM");
  const std::string path = opts.wisdom_path.empty() ? std::string(env) : opts.wisdom_path;

  nufft::Plan<T> plan(a.type, std::span<const std::int64_t>(a.modes), 1, a.ntransf, a.common.eps, opts);
  const double want = a.points >= 0 ? static_cast<double>(a.points)
                                    : a.density * static_cast<double>(plan.info().num_modes());
  require(want >= 1 && want < 9.2e18, ErrorCode::kInvalidArgument,
          "tune needs at least one point (--points, or --density x the number of modes)");
  const auto m = static_cast<std::int64_t>(want);
  Random rng(a.common.seed);
  constexpr double kPi = std::numbers::pi;
  const std::vector<T> x = rng.uniform<T>(m, -kPi, kPi);
  const std::vector<T> y = dim >= 2 ? rng.uniform<T>(m, -kPi, kPi) : std::vector<T>{};
  const std::vector<T> z = dim >= 3 ? rng.uniform<T>(m, -kPi, kPi) : std::vector<T>{};
  plan.set_points(m, x.data(), dim >= 2 ? y.data() : nullptr, dim >= 3 ? z.data() : nullptr);

  const nufft::PlanInfo& info = plan.info();
  double planner_s = 0;
  for (const auto& c : info.measured)
    if (c.planner_choice) planner_s = c.seconds;
  if (a.common.json) {
    nlohmann::json j;
    j["command"] = "tune";
    j["prec"] = a.common.prec;
    j["wisdom"] = path;
    add_plan_info(j, info);
    j["reuse"] = a.reuse;
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& c : info.measured)
      rows.push_back({{"method", nufft::method_name(c.method)},
                      {"upsampfac", c.upsampfac},
                      {"bin_size", std::vector<int>(c.bin_size.begin(), c.bin_size.begin() + dim)},
                      {"ms", c.seconds * 1e3},
                      {"ratio_to_planner", planner_s > 0 ? c.seconds / planner_s : 0.0},
                      {"planner_choice", c.planner_choice}});
    j["candidates"] = rows;
    print_json(j);
    return kExitOk;
  }
  std::cout << "tune type " << info.type << ", " << dim << "D, modes " << format_sizes(info.modes, dim) << ", M = " << m
            << ", ntransf " << info.ntransf << ", " << (a.common.prec == "f" ? "float" : "double") << ", eps "
            << info.eps << ", reuse " << a.reuse << "\n"
            << "candidates (ms per execute" << (a.reuse > 0 ? " + set_points / reuse" : "")
            << ", fastest first; ratio to the planner's choice):\n";
  std::cout << "  " << std::left << std::setw(13) << "method" << std::setw(10) << "upsampfac" << std::setw(12) << "bins"
            << std::right << std::setw(11) << "ms" << std::setw(8) << "ratio" << "\n";
  for (std::size_t i = 0; i < info.measured.size(); ++i) {
    const auto& c = info.measured[i];
    std::ostringstream ms, ratio;
    ms << std::setprecision(4) << c.seconds * 1e3;
    ratio << std::fixed << std::setprecision(2) << (planner_s > 0 ? c.seconds / planner_s : 0.0);
    std::cout << "  " << std::left << std::setw(13) << nufft::method_name(c.method) << std::setw(10) << c.upsampfac
              << std::setw(12) << bins_text(c.bin_size, dim) << std::right << std::setw(11) << ms.str()
              << std::setw(8) << ratio.str() << (i == 0 ? "  winner" : "") << (c.planner_choice ? "  planner" : "")
              << "\n";
  }
  std::cout << "configuration: " << info.configured_by << "\n";
  return kExitOk;
}

}  // namespace

Subcommand add_tune_command(CLI::App& parent) {
  auto a = std::make_shared<TuneArgs>();
  CLI::App* app = parent.add_subcommand(
      "tune",
      "Build wisdom for one type 1 or 2 problem: plan it with every candidate configuration (method x "
      "upsampling factor x bins, over the knobs not fixed by --method / --upsampfac), time each on uniformly "
      "random points in [-pi,pi)^dim, print them and store the fastest in the wisdom file. Later plans of the "
      "same problem with planning measure (--planning measure, Options::planning) take it from there");
  app->add_option("--type", a->type, "1 (points -> modes) or 2 (modes -> points)")
      ->required()
      ->check(CLI::IsMember({1, 2}));
  app->add_option("--modes", a->modes, "Modes per dimension N1[,N2[,N3]] (the number of entries is the dimension)")
      ->required()
      ->type_name("INT[,INT[,INT]]")
      ->delimiter(',')
      ->expected(1, 3);
  app->add_option("--points", a->points, "Number M of non-uniform points; default: --density x the modes")
      ->check(at_least(1));
  app->add_option("--density", a->density, "Points per mode when --points is not given")
      ->check(finite_number(0.0))
      ->capture_default_str();
  app->add_option("--ntransf", a->ntransf, "Transforms executed together (same points, stacked inputs)")
      ->check(at_least(1))
      ->capture_default_str();
  app->add_option("--reuse", a->reuse,
                  "Executes per set_points expected (Options::reuse); > 0 adds set_points / reuse to each "
                  "candidate's time, 0 times execute alone")
      ->check(at_least(0))
      ->capture_default_str();
  add_transform_options(*app, a->common);
  // Tune always measures, once per candidate, and checks nothing.
  for (const char* name : {"--planning", "--repeat", "--check-count"}) app->remove_option(app->get_option(name));
  app->footer(
      "Example: fieldft tune --type 1 --modes 128,128 --density 2 --eps 1e-6 --prec f --wisdom ~/.fieldft.json\n"
      "then: fieldft nufft --type 1 --modes 128,128 --points 32768 --eps 1e-6 --prec f --planning measure "
      "--wisdom ~/.fieldft.json --explain\n" +
      parent.get_footer());
  return {app,
          [a] {
            cap_threads(a->common.threads);
            return with_precision(a->common.prec, [&]<class T>() { return run_tune<T>(*a); });
          },
          "reduce --points, --density, --modes or --ntransf"};
}

}  // namespace fieldft::cli
