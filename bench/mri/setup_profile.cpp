// The set-up of a 3D field-corrected SENSE operator as bench/scale/coil_split_bench.cpp builds it
// (issue 28): geometry, mri::Encoding, mri::TimeSegmentedEncoding of batch C inside mri::sense,
// and prepare_normal (the field-corrected Toeplitz kernels), each timed, on the host (or on
// cuda:0 with --cuda). For `perf record -g` at sizes that run in seconds on a CPU. Not a test.
//   fieldft_bench_setup [n] [coils] [threads] [--cuda]
#include <algorithm>
#include <chrono>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "bench_args.hpp"
#include "fieldft/context.hpp"
#include "fieldft/mri/encoding.hpp"
#include "fieldft/mri/field_toeplitz.hpp"
#include "fieldft/mri/sense.hpp"
#include "fieldft/mri/simulate.hpp"
#include "fieldft/mri/time_segmentation.hpp"

using namespace fieldft;
using Clock = std::chrono::steady_clock;

namespace {
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }
}  // namespace

int main(int argc, char** argv) {
  const bench::BenchArgs args(argc, argv);
  const std::int64_t n = args.integer(0, 96);
  const std::int64_t coils = args.integer(1, 8);
  const int threads = static_cast<int>(args.integer(2, 0));
  const Context ctx = args.cuda ? Context::cuda(0) : Context::host(threads);

  // The geometry of coil_split_bench's make_geometry: n planes × n/8 arms × 8n samples, 4 ms.
  auto t0 = Clock::now();
  const std::vector<std::int64_t> grid{n, n, n};
  const auto t = mri::spiral_trajectory(grid, {.interleaves = std::max<std::int64_t>(1, n / 8), .samples = 8 * n});
  const double dwell = 4e-3 / static_cast<double>(8 * n);
  const auto times = mri::readout_times(t, dwell);
  mri::FieldMapOptions fo;
  fo.max_hz = 100;
  fo.susceptibility_hz = 100;
  const auto field = mri::field_map(grid, fo);
  const auto f = [](const std::vector<double>& v) { return std::vector<float>(v.begin(), v.end()); };
  const auto kx = f(t.kx), ky = f(t.ky), kz = f(t.kz), tt = f(times), ff = f(field);
  const auto maps_d = mri::coil_maps(grid, coils, {.normalize = true});
  const std::vector<std::complex<float>> maps(maps_d.begin(), maps_d.end());
  const double geometry_s = since(t0);

  t0 = Clock::now();
  auto enc = std::make_shared<const mri::Encoding<float>>(std::span<const std::int64_t>(grid), kx, ky, kz, tt, ff);
  const double encoding_s = since(t0);

  mri::TimeSegmentationOptions o;
  o.accuracy = 1e-3;
  o.eps = 1e-3;
  o.batch = coils;
  t0 = Clock::now();
  auto e = std::make_shared<mri::TimeSegmentedEncoding<float>>(enc, ctx, o);
  ctx.synchronize();
  const double tseg_s = since(t0);

  t0 = Clock::now();
  auto a = mri::sense<float>(e, maps, {n, n, n, coils});
  ctx.synchronize();
  const double sense_s = since(t0);

  t0 = Clock::now();
  a->prepare_normal();
  ctx.synchronize();
  const double normal_s = since(t0);

  // The same normal as sense's prepare_normal builds (mri/field_normal.hpp), alone, for the parts
  // of its set-up.
  mri::FieldToeplitzOptions fto;
  fto.accuracy = o.accuracy;
  fto.eps = o.eps;
  fto.max_segments = std::min(1024, std::max(128, 2 * o.max_segments));
  t0 = Clock::now();
  mri::FieldToeplitzNormal<float> ftn(enc, ctx, std::span<const std::complex<float>>(maps), coils, {}, fto);
  ctx.synchronize();
  const double ftn_s = since(t0);
  const auto parts = ftn.setup_parts();

  std::printf("n %lld^3, %lld coils, M %lld, L %d, %s\n", static_cast<long long>(n), static_cast<long long>(coils),
              static_cast<long long>(enc->num_samples()), e->segments(), ctx.describe().c_str());
  std::printf("geometry (not in the bench's set-up) %.3f s\nEncoding %.3f s\nTimeSegmentedEncoding %.3f s "
              "(design %.3f s)\nsense %.3f s\nprepare_normal %.3f s\nset-up total %.3f s\n",
              geometry_s, encoding_s, tseg_s, e->report().design_seconds, sense_s, normal_s,
              encoding_s + tseg_s + sense_s + normal_s);
  std::printf("FieldToeplitzNormal alone %.3f s (L' %d): design %.3f, phases+maps %.3f, engine %.3f, kernels %.3f, "
              "broadcast %.3f s\n",
              ftn_s, ftn.segments(), parts.design, parts.phases, parts.engine, parts.kernels, parts.broadcast);
  return 0;
}
