// The Toeplitz normals of a 3D stack of spirals with and without the stacked / periodic k_z axis
// (include/fieldft/mri/toeplitz.hpp, "Periodic axes"; issue 23's R3 geometry at any size): the
// apply of mri::ToeplitzNormal (B = coils images) and of the field-corrected
// mri::FieldToeplitzNormal (SENSE form, C coils, field map ±100 Hz), each with
// the stacked k_z axis (no FFT along z, one kernel plane: "Stacked last axis"), then periodic_axes
// on without the stack (L_z = N_z, transformed), then off (2N_z). Not a test.
//
//   fieldft_bench_toeplitz_stack [n [coils [arms [per_arm [reps [threads]]]]]] [--cuda]
//                                                           defaults 64 8 16 512 5 0
//
// Problem: n³ image (float), mri::spiral_trajectory's stack (n k_z planes × arms × per_arm, k_z
// integer), readout 4.1 ms (dwell 4.1 ms / per_arm), field map ±100 Hz (mri::field_map), coil maps
// normalised, eps 1e-3, accuracy 1e-3 (R3's). Times: median of `reps` applies after a warm-up, in
// ms, wall clock and process CPU time, the context synchronised around each; with --cuda on cuda:0.
#include <algorithm>
#include <chrono>
#include <complex>
#include <cstdio>
#include <ctime>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "bench_args.hpp"
#include "fieldft/context.hpp"
#include "fieldft/mri/encoding.hpp"
#include "fieldft/mri/field_toeplitz.hpp"
#include "fieldft/mri/simulate.hpp"
#include "fieldft/mri/toeplitz.hpp"
#include "fieldft/op/linear_operator.hpp"
#include "fieldft/op/vector_ops.hpp"

using namespace fieldft;
using cfloat = std::complex<float>;

namespace {

struct Times {
  double wall = 0, cpu = 0;  // ms
};

// Medians of the wall clock and of the process's CPU time (std::clock: the host's work, robust
// to other load on a shared machine; it sums the threads; on a device it is the host's waiting).
template <class F>
Times median_ms(const Context& ctx, int reps, F&& f) {
  f();  // warm-up
  ctx.synchronize();
  std::vector<double> wall, cpu;
  for (int r = 0; r < reps; ++r) {
    const auto s = std::chrono::steady_clock::now();
    const std::clock_t c = std::clock();
    f();
    ctx.synchronize();
    cpu.push_back(1e3 * static_cast<double>(std::clock() - c) / CLOCKS_PER_SEC);
    wall.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - s).count());
  }
  std::sort(wall.begin(), wall.end());
  std::sort(cpu.begin(), cpu.end());
  return {wall[wall.size() / 2], cpu[cpu.size() / 2]};
}

std::string grid_string(const std::array<std::int64_t, 3>& l) {
  return std::to_string(l[0]) + "x" + std::to_string(l[1]) + "x" + std::to_string(l[2]);
}

}  // namespace

int main(int argc, char** argv) {
  const bench::BenchArgs args(argc, argv);
  const auto arg = [&](std::size_t i, long long def) { return args.integer(i, def); };
  const std::int64_t n = arg(0, 64), coils = arg(1, 8), arms = arg(2, 16), per_arm = arg(3, 512);
  const int reps = static_cast<int>(arg(4, 5)), threads = static_cast<int>(arg(5, 0));
  try {
    const Context ctx = args.cuda ? Context::cuda(0) : Context::host(threads);
    const std::vector<std::int64_t> grid{n, n, n};
    const auto t = mri::spiral_trajectory(grid, {.interleaves = arms, .samples = per_arm});
    const auto times = mri::readout_times(t, 4.1e-3 / static_cast<double>(per_arm));
    mri::FieldMapOptions fmo;
    fmo.max_hz = 100;
    const auto field = mri::field_map(grid, fmo);
    const auto f = [](const std::vector<double>& v) { return std::vector<float>(v.begin(), v.end()); };
    const auto kx = f(t.kx), ky = f(t.ky), kz = f(t.kz), tt = f(times), ff = f(field);
    const auto maps_d = mri::coil_maps(grid, coils, {.normalize = true});
    const std::vector<cfloat> maps(maps_d.begin(), maps_d.end());
    auto plain = std::make_shared<const mri::Encoding<float>>(std::span<const std::int64_t>(grid), kx, ky, kz);
    auto enc = std::make_shared<const mri::Encoding<float>>(std::span<const std::int64_t>(grid), kx, ky, kz, tt, ff);
    const std::int64_t voxels = n * n * n;
    std::printf("stack of spirals %lld^3, %lld coils, %lld planes x %lld arms x %lld, M %lld, %s\n",
                static_cast<long long>(n), static_cast<long long>(coils), static_cast<long long>(n),
                static_cast<long long>(arms), static_cast<long long>(per_arm),
                static_cast<long long>(enc->num_samples()), ctx.describe().c_str());

    op::Workspace xw(ctx), zw(ctx);
    cfloat* x = xw.get_as<cfloat>(voxels * coils);
    cfloat* z = zw.get_as<cfloat>(voxels * coils);
    op::VectorOps<float> ops(ctx);
    ops.fill_random(voxels * coils, 1, x);
    // (periodic, stacked): the stack, the periodic axis transformed, the 2N_z axis.
    const std::pair<bool, bool> modes[] = {{true, true}, {true, false}, {false, false}};
    const auto label = [](bool periodic, bool stacked) {
      return stacked ? "stacked z," : periodic ? "periodic z," : "2N z,";
    };
    for (const auto& [periodic, stacked] : modes) {
      mri::ToeplitzOptions to;
      to.eps = 1e-3;
      to.batch = coils;
      to.periodic_axes = periodic;
      to.stacked_axis = stacked;
      mri::ToeplitzNormal<float> tn(plain, ctx, {}, to);
      const Times ms = median_ms(ctx, reps, [&] { tn.apply(x, z); });
      std::printf("ToeplitzNormal, batch %lld, %-12s grid %-12s apply wall %8.1f ms (cpu %8.1f ms), "
                  "set-up %7.1f ms\n",
                  static_cast<long long>(coils), label(periodic, stacked), grid_string(tn.embedding_grid()).c_str(),
                  ms.wall, ms.cpu, 1e3 * tn.setup_seconds());
    }
    for (const auto& [periodic, stacked] : modes) {
      mri::FieldToeplitzOptions fo;
      fo.accuracy = 1e-3;
      fo.eps = 1e-3;
      fo.periodic_axes = periodic;
      fo.stacked_axis = stacked;
      mri::FieldToeplitzNormal<float> fn(enc, ctx, std::span<const cfloat>(maps), coils, {}, fo);
      const Times ms = median_ms(ctx, reps, [&] { fn.apply(x, z); });
      std::printf("FieldToeplitzNormal, %lld coils, L' %d, %-12s grid %-12s apply wall %8.1f ms (cpu "
                  "%8.1f ms; %.2f s wall for 30), set-up %7.1f ms, kernels %.0f MiB\n",
                  static_cast<long long>(coils), fn.segments(), label(periodic, stacked),
                  grid_string(fn.embedding_grid()).c_str(), ms.wall, ms.cpu, 30 * ms.wall / 1e3,
                  1e3 * fn.setup_seconds(), fn.kernel_bytes() / (1 << 20));
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
