// `fieldft nufft`: one NUFFT on random data, timed, optionally checked against the exact sum.
#include <algorithm>
#include <iomanip>
#include <iostream>
#include <memory>
#include <numbers>
#include <optional>

#include "common.hpp"

namespace fieldft::cli {

namespace {

struct NufftArgs {
  int type = 1;
  int dim = 0;  // 0: the number of --modes entries
  std::vector<std::int64_t> modes;
  std::int64_t points = 0;
  std::int64_t targets = -1;  // type 3; -1: as many as --points
  std::int64_t ntransf = 1;
  int isign = 1;
  int modeord = 0;
  bool check = false;
  bool explain = false;
  TransformArgs common;
};

// --modes expanded to dim entries: one number applies to every dimension.
std::vector<std::int64_t> resolve_modes(const NufftArgs& a, int& dim) {
  dim = a.dim ? a.dim : static_cast<int>(a.modes.size());
  if (a.modes.size() == 1)
    return std::vector<std::int64_t>(static_cast<std::size_t>(dim), a.modes[0]);
  if (static_cast<int>(a.modes.size()) != dim)
    throw UsageError("--modes has " + std::to_string(a.modes.size()) + " entries but --dim is " +
                     std::to_string(dim) + ": give one number (used in every dimension) or " +
                     std::to_string(dim) + " comma-separated numbers");
  return a.modes;
}

template <class T>
int run_nufft(const NufftArgs& a) {
  using Complex = std::complex<T>;
  int dim = 0;
  const std::vector<std::int64_t> modes = resolve_modes(a, dim);
  if (a.targets >= 0 && a.type != 3)
    throw UsageError("--targets is for --type 3 (types 1 and 2 have modes, set by --modes)");
  nufft::Options opts = plan_options(a.common);
  opts.modeord = a.modeord;

  // The plan first: it validates sizes and eps before any test data is allocated.
  std::optional<nufft::Plan<T>> plan;
  const double plan_ms = time_ms([&] {
    plan.emplace(a.type, std::span<const std::int64_t>(modes), a.isign, a.ntransf, a.common.eps,
                 opts);
  });
  const bool type3 = a.type == 3;
  const std::int64_t m = a.points;
  const std::int64_t nk = type3 ? (a.targets >= 0 ? a.targets : m) : 0;
  const std::int64_t n = plan->info().num_modes();
  const std::int64_t in_per = a.type == 2 ? n : m;
  const std::int64_t out_per = a.type == 1 ? n : (type3 ? nk : m);
  require(a.ntransf <= std::numeric_limits<std::int64_t>::max() /
                           std::max({in_per, out_per, std::int64_t{1}}),
          ErrorCode::kTooLarge, "--ntransf x --points (or x modes, x targets) overflows 64-bit indexing");

  Random rng(a.common.seed);
  constexpr double kPi = std::numbers::pi;
  const std::vector<T> x = rng.uniform<T>(m, -kPi, kPi);
  const std::vector<T> y = dim >= 2 ? rng.uniform<T>(m, -kPi, kPi) : std::vector<T>{};
  const std::vector<T> z = dim >= 3 ? rng.uniform<T>(m, -kPi, kPi) : std::vector<T>{};
  // Type 3 targets fill the box of a type 1 plan's modes, [-N_d/2, N_d/2): the same
  // space-bandwidth product as that type 1 transform, at non-integer frequencies.
  std::vector<T> tgt[3];
  for (int d = 0; d < dim && type3; ++d) {
    const double half = 0.5 * static_cast<double>(modes[static_cast<std::size_t>(d)]);
    tgt[d] = rng.uniform<T>(nk, -half, half);
  }
  const std::vector<Complex> in = rng.strengths<T>(a.ntransf * in_per);
  std::vector<Complex> out(static_cast<std::size_t>(a.ntransf * out_per));
  auto set_points = [&] {
    const T* py = dim >= 2 ? y.data() : nullptr;
    const T* pz = dim >= 3 ? z.data() : nullptr;
    if (type3)
      plan->set_points(m, x.data(), py, pz, nk, tgt[0].data(), dim >= 2 ? tgt[1].data() : nullptr,
                       dim >= 3 ? tgt[2].data() : nullptr);
    else
      plan->set_points(m, x.data(), py, pz);
  };

  Timing setpts, exec;
  for (int r = 0; r < a.common.repeat; ++r) {
    setpts.add(time_ms(set_points));
    exec.add(time_ms([&] { plan->execute(in.data(), out.data()); }));
  }

  // Worst transform of the batch: eps is promised for each transform.
  std::optional<double> rel_error;
  std::int64_t checked = 0;
  if (a.check) {
    const auto pts = oracle_points<T>(dim, x, y, z);
    rel_error = 0.0;
    for (std::int64_t t = 0; t < a.ntransf; ++t) {
      const auto which = rng.subset(out_per, a.common.check_count);
      checked = static_cast<std::int64_t>(which.size());
      const std::span<const Complex> in_t(in.data() + t * in_per, static_cast<std::size_t>(in_per));
      const std::span<const Complex> out_t(out.data() + t * out_per,
                                           static_cast<std::size_t>(out_per));
      if (type3) {
        // The exact sums at the checked targets only.
        reference::Points at;
        at.dim = dim;
        std::vector<double>* axes[3] = {&at.x, &at.y, &at.z};
        for (int d = 0; d < dim; ++d)
          for (auto k : which) axes[d]->push_back(static_cast<double>(tgt[d][static_cast<std::size_t>(k)]));
        const auto exact = reference::nufft_type3(pts, to_cdouble(in_t), at, plan->info().isign);
        rel_error = std::max(*rel_error, reference::rel_l2_error<std::complex<double>>(gather(out_t, which), exact));
      } else {
        rel_error = std::max(*rel_error, subset_error<T>(a.type, pts, in_t, out_t, modes,
                                                         plan->info().isign, a.modeord, which));
      }
    }
  }

  const nufft::PlanInfo& info = plan->info();
  const double points_per_s =
      exec.min_ms > 0 ? static_cast<double>(m * a.ntransf) / (exec.min_ms * 1e-3) : 0.0;
  if (a.common.json) {
    nlohmann::json j;
    j["command"] = "nufft";
    j["prec"] = a.common.prec;
    add_plan_info(j, info);
    if (type3) j["num_targets"] = nk;
    j["plan_ms"] = plan_ms;
    j["setpts_ms"] = setpts.min_ms;
    j["exec_ms"] = exec.min_ms;
    j["exec_ms_mean"] = exec.mean_ms();
    j["repeat"] = a.common.repeat;
    j["points_per_s"] = points_per_s;
    j["seed"] = a.common.seed;
    j["threads"] = a.common.threads ? a.common.threads : build_info().cpu_threads;
    if (rel_error) {
      j["rel_error"] = *rel_error;
      j["checked_outputs"] = checked;
    }
    print_json(j);
    return kExitOk;
  }

  std::string target_box;
  for (int d = 0; d < dim; ++d) target_box += (d ? "x" : "") + std::to_string(modes[static_cast<std::size_t>(d)]);
  std::cout << std::setprecision(4);
  std::cout << "nufft type " << info.type << ", " << dim << "D, "
            << (type3 ? "targets in [-N/2, N/2) for N = " + target_box : "modes " + format_sizes(info.modes, dim))
            << ", M = " << m << " points" << (type3 ? ", nk = " + std::to_string(nk) + " targets" : "")
            << ", ntransf " << info.ntransf
            << ", isign " << info.isign << ", " << (a.common.prec == "f" ? "float" : "double")
            << ", eps " << info.eps << "\n"
            << "plan:       " << describe_plan(info) << "\n"
            << "time:       plan " << plan_ms << " ms, set_points " << setpts.min_ms
            << " ms, execute " << exec.min_ms << " ms (min of " << exec.count << "; mean "
            << exec.mean_ms() << " ms), " << points_per_s << " points/s\n";
  if (rel_error)
    std::cout << "accuracy:   relative l2 error " << *rel_error << " vs exact sum on " << checked
              << " random outputs per transform (worst of " << a.ntransf << ")\n";
  if (a.explain) std::cout << explain_plan(info);
  return kExitOk;
}

}  // namespace

Subcommand add_nufft_command(CLI::App& parent) {
  auto a = std::make_shared<NufftArgs>();
  CLI::App* app = parent.add_subcommand(
      "nufft",
      "Run a NUFFT on uniformly random points in [-pi,pi)^dim and random inputs (real and "
      "imaginary parts uniform in [-1,1]); report its time and, with --check, its accuracy. "
      "Type 3 draws its targets uniformly from the box of --modes, [-N/2,N/2)^dim");
  app->add_option("--type", a->type,
                  "1: points -> modes, f[k] = sum_j c[j] exp(isign i k.x_j); 2: modes -> points, "
                  "c[j] = sum_k f[k] exp(isign i k.x_j); 3: points -> targets, "
                  "f[k] = sum_j c[j] exp(isign i s_k.x_j) (s_k random, see --modes, --targets)")
      ->required()
      ->check(CLI::IsMember({1, 2, 3}));
  app->add_option("--dim", a->dim, "Dimensions 1..3; default: the number of --modes entries")
      ->check(CLI::Range(1, 3));
  app->add_option("--modes", a->modes,
                  "Modes per dimension N or N1,N2[,N3]; one number applies to every dimension "
                  "(--modes 64 --dim 2 is 64x64). Type 3: the target box [-N/2,N/2) per dimension")
      ->required()
      ->type_name("INT[,INT[,INT]]")
      ->delimiter(',')
      ->expected(1, 3);
  app->add_option("--points", a->points, "Number M of non-uniform points (type 3: sources)")
      ->required()
      ->check(at_least(0));
  app->add_option("--targets", a->targets,
                  "Type 3: number nk of random targets; default: --points")
      ->check(at_least(0));
  app->add_option("--ntransf", a->ntransf,
                  "Transforms executed together (same points, stacked inputs)")
      ->capture_default_str();
  app->add_option("--isign", a->isign, "Sign of the exponent, +1 or -1")
      ->check(CLI::IsMember({-1, 1}))
      ->capture_default_str();
  app->add_option(
         "--modeord", a->modeord,
         "Mode order: 0 increasing (-N/2 .. (N-1)/2), 1 FFT order (0 .. N/2-1, -N/2 .. -1)")
      ->check(CLI::IsMember({0, 1}))
      ->capture_default_str();
  app->add_flag("--explain", a->explain,
                "Print the planner's whole configuration (spreading and interpolation kernels, bins, "
                "sub-bins, FFT strategy) and the reason for each decision (JSON: always included)");
  app->add_flag("--check", a->check,
                "Compare --check-count random outputs of every transform with the exact "
                "double-precision sum; report the worst relative l2 error");
  add_transform_options(*app, a->common);
  app->footer(
      "Times are wall-clock milliseconds (host steady clock around each call), minimum over "
      "--repeat runs.\n" +
      parent.get_footer());
  return {app,
          [a] {
            cap_threads(a->common.threads);
            return with_precision(a->common.prec, [&]<class T>() { return run_nufft<T>(*a); });
          },
          "reduce --points, --targets, --modes or --ntransf"};
}

}  // namespace fieldft::cli
