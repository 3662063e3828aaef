// Uses the installed fieldft as an outside project would: a small 2D type 1 NUFFT on the CPU,
// checked against the exact direct sum. Exits 0 only when the installed headers, the library
// and its dependencies link and agree.
#include <complex>
#include <cstdint>
#include <cstdio>
#include <random>
#include <span>
#include <string>
#include <vector>

#include <fieldft/fieldft.hpp>

int main() {
  // Headers and library must come from the same install.
  const fieldft::BuildInfo build = fieldft::build_info();
  if (build.version != FIELDFT_VERSION_STRING) {
    std::fprintf(stderr, "header version %s but library version %s\n", FIELDFT_VERSION_STRING,
                 build.version.c_str());
    return 1;
  }

  const std::vector<std::int64_t> modes{24, 17};  // odd size exercises the k range asymmetry
  const std::int64_t m = 300;
  const double eps = 1e-9;
  const double two_pi = 6.283185307179586;

  std::mt19937_64 rng(7);
  // Coordinates beyond [-π, π) check that folding works through the installed library too.
  std::uniform_real_distribution<double> coord(-two_pi, two_pi);
  std::uniform_real_distribution<double> strength(-1.0, 1.0);
  fieldft::reference::Points pts;
  pts.dim = 2;
  std::vector<std::complex<double>> c(m);
  for (std::int64_t j = 0; j < m; ++j) {
    pts.x.push_back(coord(rng));
    pts.y.push_back(coord(rng));
    c[j] = {strength(rng), strength(rng)};
  }

  fieldft::nufft::Options opts;
  opts.backend = fieldft::Backend::kCpu;  // the install check must not depend on a GPU
  auto plan = fieldft::nufft::make_plan<double>(1, modes, +1, 1, eps, opts);
  plan.set_points(m, pts.x.data(), pts.y.data());
  std::vector<std::complex<double>> f(plan.info().num_modes());
  plan.execute(c.data(), f.data());

  const auto exact = fieldft::reference::nufft_type1(pts, c, modes, +1);
  const double err = fieldft::reference::rel_l2_error<std::complex<double>>(
      std::span<const std::complex<double>>(f), exact);
  // eps is the plan's relative l2 target; 10x leaves room for the kernel error estimate being
  // approximate, while any mistake in linking, conventions or folding gives errors near 1.
  const double limit = 10 * eps;
  std::printf("fieldft %s (cuda %s): 2D type 1, N = %lld x %lld, M = %lld, rel l2 error %.3g "
              "(limit %.3g)\n",
              build.version.c_str(), build.cuda ? "yes" : "no", static_cast<long long>(modes[0]),
              static_cast<long long>(modes[1]), static_cast<long long>(m), err, limit);
  if (!(err <= limit)) {
    std::fprintf(stderr, "FAIL: error %.3g exceeds %.3g\n", err, limit);
    return 1;
  }
  std::printf("OK\n");
  return 0;
}
