// Writes the accuracy table of docs/accuracy.md: the battery's tolerance sweep (accuracy_sweep.hpp)
// with the measured relative l2 error of every case, as Markdown on stdout.
//
//   accuracy_table [cpu|cuda] [auto|nupts|subproblem|output] [type: 1, 2 or 3; default all]
#include <algorithm>
#include <cstdio>
#include <string>

#include "accuracy_sweep.hpp"
#include "fieldft/runtime.hpp"
#include "support/backends.hpp"

int main(int argc, char** argv) {
  using namespace fieldft;
  using namespace fieldft::test;
  try {
    const Backend backend = parse_backend(argc > 1 ? argv[1] : "cpu");
    const nufft::Method method = nufft::parse_method(argc > 2 ? argv[2] : "auto");
    if (const std::string why = backend_unavailable_reason(backend); !why.empty()) {
      std::fprintf(stderr, "accuracy_table: %s\n", why.c_str());
      return 2;
    }
    const BuildInfo bi = build_info();
    std::printf("fieldft %s, %s backend, method %s, %s build, %s, %d threads\n\n",
                bi.version.c_str(), backend_name(backend), nufft::method_name(method),
                bi.build_type.c_str(), bi.compiler.c_str(), bi.cpu_threads);
    std::printf("| type | dim | modes | M | precision | upsampfac | eps | w | gain G | floor F | "
                "error | error/eps | bound | ok |\n"
                "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    int failures = 0;
    const int only_type = argc > 3 ? std::stoi(argv[3]) : 0;
    for (int type : {1, 2, 3})
      for (int dim : {1, 2, 3}) {
        if (only_type && type != only_type) continue;
        const SweepProblem prob = sweep_problem(type, dim);
        std::string modes;
        for (auto n : prob.modes) modes += (modes.empty() ? "" : "×") + std::to_string(n);
        if (type == 3) modes = std::to_string(prob.num_targets) + " targets";
        for (Precision p : {Precision::kFloat, Precision::kDouble})
          for (double sigma : kSweepUpsampfacs)
            for (double eps : sweep_eps(p)) {
              std::printf("| %d | %d | %s | %lld | %s | %.2f | %.0e | ", type, dim, modes.c_str(),
                          static_cast<long long>(prob.num_points), precision_name(p), sigma, eps);
              SweepResult r;
              try {
                r = run_sweep_case(backend, method, type, dim, p, sigma, eps);
              } catch (const Error& e) {
                ++failures;
                std::printf("– | – | – | threw %s: %s | – | – | NO |\n", error_code_name(e.code()),
                            e.what());
                continue;
              }
              if (r.refused) {
                const bool allowed = refusal_is_justified(p, type, dim, sigma, eps);
                failures += !allowed;
                std::printf("– | – | – | refused (kEpsTooSmall: below u·G or the kernel's reach) | – | – | %s |\n",
                            allowed ? "yes" : "NO");
                continue;
              }
              const bool ok = r.error <= r.bound;
              failures += !ok;
              std::printf("%d | %.3g | %.1e | %.2e | %.2f | %s %.1e | %s |\n",
                          r.info.kernel_width, r.gain, r.floor, r.error, r.error / eps,
                          eps >= r.floor ? "2·eps" : "2·F", r.bound, ok ? "yes" : "NO");
            }
      }
    std::printf("\n%d case(s) outside the bound\n", failures);

    // The floor model: rounding error of float measured directly (float plan vs double plan with
    // the same kernel and grid), against u·G. The floor is F = kFloorFactor·u·G.
    std::printf("\n| type | dim | upsampfac | eps | w | gain G | float − double | ÷ (u·G) |\n"
                "|---|---|---|---|---|---|---|---|\n");
    double worst = 0;
    for (int type : {1, 2, 3})
      for (int dim : {1, 2, 3})
        for (double sigma : {2.0, 1.5, 1.25})
          for (double eps : {1e-5, 1e-6, 1e-7}) {
            if (only_type && type != only_type) continue;
            RoundingResult r;
            try {
              r = measure_float_rounding(backend, method, type, dim, sigma, eps);
            } catch (const Error& e) {
              if (e.code() == ErrorCode::kEpsTooSmall)
                std::printf("| %d | %d | %.2f | %.0e | – | – | refused: eps below u·G | – |\n", type, dim, sigma, eps);
              else
                std::printf("| %d | %d | %.2f | %.0e | – | – | threw %s: %s | – |\n", type, dim, sigma, eps,
                            error_code_name(e.code()), e.what());
              continue;
            }
            const double ratio = r.difference / (0x1.0p-24 * r.gain);
            worst = std::max(worst, ratio);
            std::printf("| %d | %d | %.2f | %.0e | %d | %.3g | %.2e | %.2f |\n", type, dim, sigma,
                        eps, r.info.kernel_width, r.gain, r.difference, ratio);
          }
    std::printf("\nlargest (float − double) ÷ (u·G): %.2f (floor factor: %.0f)\n", worst,
                kFloorFactor);
    return failures == 0 ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "accuracy_table: %s\n", e.what());
    return 2;
  }
}
