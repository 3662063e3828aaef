// `fieldft demo`: non-Cartesian MRI on synthetic data. A head phantom is sampled on a radial or
// spiral k-space trajectory with a type-2 NUFFT (forward model) and reconstructed by gridding:
// the adjoint (type 1) applied to density-compensated samples. Reports the NUFFT accuracy
// against the exact sums, the reconstruction error against the phantom, and the times.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <memory>
#include <numbers>
#include <optional>

#include "common.hpp"
#include "fieldft/mri/simulate.hpp"
#include "io/png.hpp"

namespace fieldft::cli {

namespace {

constexpr double kPi = std::numbers::pi;

struct DemoArgs {
  int size = 256;
  std::string trajectory = "radial";
  std::string out;
  TransformArgs common;
};

// A head: bright scalp, brain with a darker outer band, two ventricles, and lesions from large
// to 2-3 pixels across (at 256^2) so that resolution loss is visible in the preview. Centres and
// semi-axes in units of half the field of view (mri::ellipse_phantom: the image spans [-1, 1) in
// x and y, y up), rotations counter-clockwise in degrees.
constexpr mri::Ellipse kHead[] = {
    {1.00, {0.00, 0.00, 0}, {0.72, 0.95, 1}, 0},      // scalp
    {-0.75, {0.00, -0.02, 0}, {0.67, 0.89, 1}, 0},    // brain
    {0.10, {0.00, -0.02, 0}, {0.60, 0.82, 1}, 0},     // inner brain
    {-0.25, {-0.21, 0.08, 0}, {0.09, 0.30, 1}, -18},  // left ventricle
    {-0.25, {0.21, 0.08, 0}, {0.11, 0.32, 1}, 18},    // right ventricle
    {0.15, {0.00, 0.40, 0}, {0.20, 0.24, 1}, 0},      // frontal lesion
    {-0.10, {0.35, -0.30, 0}, {0.07, 0.14, 1}, 35},   // dark lesion
    {0.20, {0.00, 0.15, 0}, {0.045, 0.045, 1}, 0},    // small central lesion
    {0.20, {0.00, -0.15, 0}, {0.05, 0.05, 1}, 0},     // small central lesion
    {0.20, {-0.09, -0.62, 0}, {0.05, 0.025, 1}, 0},   // posterior group, 2-6 pixels at 256^2
    {0.20, {0.00, -0.63, 0}, {0.025, 0.025, 1}, 0},   // posterior group
    {0.20, {0.08, -0.62, 0}, {0.025, 0.05, 1}, 90},   // posterior group
};

// n x n phantom, x fastest, pixel i at u = (i - n/2) / (n/2): the grid of the NUFFT modes
// k = i - n/2. Each pixel averages 4x4 sub-samples so edges have partial-volume values.
std::vector<double> make_phantom(int n) {
  const std::int64_t grid[] = {n, n};
  return mri::ellipse_phantom(grid, kHead, 4);
}

// L interleaves k(tau) = pi tau (cos theta, sin theta), theta = 2 pi (l / L + turns tau),
// tau = s / S (s = 0 .. S-1): Archimedean spirals (mri::spiral_trajectory), or centre-out radial
// spokes (mri::radial_trajectory), converted from cycles per field of view to radians per pixel
// (the NUFFT's x = 2 pi k / n; pi is the edge of k-space, 2 pi / n one cycle per field of view).
// Sampling: between spokes at the edge at the Nyquist spacing 2 pi / n, along the spiral arms at
// that spacing on average; along the spokes and between the arms at pi / n, twice the Nyquist
// rate, as MRI readouts are oversampled: at exactly the Nyquist rate the replicas of the
// point-spread function (rings of radius n pixels around every object point) cross the field of
// view, and the reconstruction error (NRMSE) grows from ~0.05 to 0.2-0.5 at 256^2.
//
// Density compensation: each sample owns the k-space area |dk/dtau x dk/dl| dtau dl. Rotating
// the whole curve by 2 pi / L moves k perpendicular to itself by (2 pi / L)|k|, so only the
// radial speed d|k|/dtau = pi counts: area = (1/S)(2 pi / L) pi |k|, the "|k|" weight; the L
// samples at k = 0 share the disc of radius pi / (2 S) (measured: NRMSE 0.045 at 256^2 radial,
// against 0.055 with samples at tau = (s + 1/2) / S and pure |k| weights, whose missing k = 0
// biases the whole image). Divided by (2 pi)^2, the area of k-space, the weights make the
// adjoint an approximate inverse of the forward model (on a full Cartesian grid they would be
// 1 / n^2, the inverse DFT).
struct Trajectory {
  int interleaves = 0, samples = 0;
  std::vector<double> x, y, w;
};

Trajectory make_trajectory(const std::string& kind, int n) {
  const std::int64_t grid[] = {n, n};
  // Radial: the defaults (Nyquist between spokes at the edge, n samples per spoke: pi / n apart).
  // Spiral: L = max(1, n/8) arms twice the Nyquist rate apart (turns = n / L), and the arc length
  // pi turns n / 2 in samples: 1 cycle per field of view apart on average along the arm (2 at the
  // edge, where the arm is fastest).
  const int arms = std::max(1, n / 8);
  const double turns = static_cast<double>(n) / arms;
  const mri::Trajectory k =
      kind == "radial"
          ? mri::radial_trajectory(grid)
          : mri::spiral_trajectory(grid, {.interleaves = arms,
                                          .samples = static_cast<std::int64_t>(std::ceil(kPi * turns * n / 2)),
                                          .oversampling = 2});
  Trajectory t;
  t.interleaves = static_cast<int>(k.interleaves);
  t.samples = static_cast<int>(k.samples);
  const std::size_t m = static_cast<std::size_t>(k.size());
  t.x.resize(m);
  t.y.resize(m);
  t.w.resize(m);
  const double to_radians = 2 * kPi / n;
  for (std::size_t j = 0; j < m; ++j) {
    t.x[j] = to_radians * k.kx[j];
    t.y[j] = to_radians * k.ky[j];
    const int s = static_cast<int>(j % static_cast<std::size_t>(t.samples));
    const double r = kPi * (static_cast<double>(s) / t.samples);  // |k| in radians
    const double r0 = kPi / (2.0 * t.samples);
    const double area =
        s == 0 ? kPi * r0 * r0 / t.interleaves : (2 * kPi / t.interleaves) * kPi * r / t.samples;
    t.w[j] = area / (4 * kPi * kPi);
  }
  return t;
}

// Panels side by side, each n x n (x fastest, y up), as 8-bit grey = value / vmax with the top
// row first, written in the format of the path's extension (checked when parsing --out).
void write_preview(const std::string& path, int n, const std::vector<std::vector<double>>& panels,
                   double vmax) {
  const std::int64_t width = static_cast<std::int64_t>(n) * static_cast<std::int64_t>(panels.size());
  std::vector<std::uint8_t> pixels;
  pixels.reserve(static_cast<std::size_t>(width) * static_cast<std::size_t>(n));
  for (int iy = n - 1; iy >= 0; --iy)
    for (const auto& p : panels)
      for (int ix = 0; ix < n; ++ix) {
        const double g = p[static_cast<std::size_t>(iy) * n + ix] / vmax;
        pixels.push_back(static_cast<std::uint8_t>(std::clamp(g, 0.0, 1.0) * 255 + 0.5));
      }
  io::write_gray_image(path, *io::image_format_from_path(path), width, n, pixels);
}

// --out's check, at parse time so that a wrong name fails before the transforms run: a .pgm or
// .png file in a directory that exists.
CLI::Validator preview_path() {
  return CLI::Validator(
      [](std::string& path) -> std::string {
        if (!io::image_format_from_path(path))
          return "'" + path + "' must end in .png (PNG) or .pgm (binary PGM)";
        const std::filesystem::path dir = std::filesystem::path(path).parent_path();
        std::error_code ec;
        if (!dir.empty() && !std::filesystem::is_directory(dir, ec))
          return "the directory of '" + path + "' does not exist";
        return std::string();
      },
      "FILE.png|FILE.pgm");
}

template <class T>
int run_demo(const DemoArgs& a) {
  using Complex = std::complex<T>;
  constexpr int kIsign = -1;  // MRI signal model s(k) = sum_r m(r) exp(-i k.r)
  const int n = a.size;
  const std::vector<std::int64_t> modes{n, n};

  std::optional<nufft::Plan<T>> plan;
  const double plan_ms = time_ms([&] {
    plan.emplace(2, std::span<const std::int64_t>(modes), kIsign, 1, a.common.eps,
                 plan_options(a.common));
  });

  const Trajectory traj = make_trajectory(a.trajectory, n);
  const auto m = static_cast<std::int64_t>(traj.x.size());
  const std::vector<T> kx(traj.x.begin(), traj.x.end()), ky(traj.y.begin(), traj.y.end());
  const std::vector<double> phantom = make_phantom(n);
  const std::vector<Complex> image(phantom.begin(), phantom.end());
  std::vector<Complex> kspace(static_cast<std::size_t>(m)), weighted(kspace.size());
  std::vector<Complex> recon(image.size());

  Timing setpts, forward, adjoint;
  for (int r = 0; r < a.common.repeat; ++r) {
    setpts.add(time_ms([&] { plan->set_points(m, kx.data(), ky.data()); }));
    forward.add(time_ms([&] { plan->execute(image.data(), kspace.data()); }));
    for (std::int64_t j = 0; j < m; ++j) weighted[j] = kspace[j] * static_cast<T>(traj.w[j]);
    adjoint.add(time_ms([&] { plan->execute_adjoint(weighted.data(), recon.data()); }));
  }

  Random rng(a.common.seed);
  const auto pts = oracle_points<T>(2, kx, ky, {});
  const auto which_k = rng.subset(m, a.common.check_count);
  const auto which_px = rng.subset(static_cast<std::int64_t>(image.size()), a.common.check_count);
  const double forward_error = subset_error<T>(2, pts, image, kspace, modes, kIsign, 0, which_k);
  const double adjoint_error =
      subset_error<T>(1, pts, weighted, recon, modes, -kIsign, 0, which_px);

  double err2 = 0, ref2 = 0, vmax = 0;
  for (std::size_t i = 0; i < phantom.size(); ++i) {
    err2 += std::norm(std::complex<double>(recon[i]) - phantom[i]);
    ref2 += phantom[i] * phantom[i];
    vmax = std::max(vmax, phantom[i]);
  }
  const double nrmse = std::sqrt(err2 / ref2);

  if (!a.out.empty()) {
    std::vector<std::vector<double>> panels(3, std::vector<double>(phantom.size()));
    for (std::size_t i = 0; i < phantom.size(); ++i) {
      panels[0][i] = phantom[i];
      panels[1][i] = std::abs(recon[i]);
      panels[2][i] = 10 * std::abs(std::complex<double>(recon[i]) - phantom[i]);
    }
    write_preview(a.out, n, panels, vmax);
  }

  const nufft::PlanInfo& info = plan->info();
  if (a.common.json) {
    nlohmann::json j;
    j["command"] = "demo";
    j["prec"] = a.common.prec;
    j["size"] = n;
    j["trajectory"] = a.trajectory;
    j["interleaves"] = traj.interleaves;
    j["samples_per_interleave"] = traj.samples;
    add_plan_info(j, info);
    j["plan_ms"] = plan_ms;
    j["setpts_ms"] = setpts.min_ms;
    j["forward_ms"] = forward.min_ms;
    j["adjoint_ms"] = adjoint.min_ms;
    j["repeat"] = a.common.repeat;
    j["forward_rel_error"] = forward_error;
    j["adjoint_rel_error"] = adjoint_error;
    j["checked_outputs"] = which_k.size();
    j["nrmse"] = nrmse;
    if (!a.out.empty()) j["out"] = a.out;
    print_json(j);
    return kExitOk;
  }

  std::cout << std::setprecision(4);
  std::cout << "MRI demo: " << n << "x" << n << " head phantom, " << a.trajectory << " trajectory, "
            << traj.interleaves << (a.trajectory == "radial" ? " spokes" : " interleaves") << " x "
            << traj.samples << " samples = " << m << " k-space samples\n"
            << "NUFFT:     " << (a.common.prec == "f" ? "float" : "double") << ", eps " << info.eps
            << ", " << describe_plan(info) << "\n"
            << "simulate:  k-space = type-2 NUFFT of the phantom   " << forward.min_ms
            << " ms, rel l2 error " << forward_error << " vs exact sum on " << which_k.size()
            << " samples\n"
            << "recon:     gridding = adjoint of |k|-weighted data  " << adjoint.min_ms
            << " ms, rel l2 error " << adjoint_error << " vs exact sum on " << which_px.size()
            << " pixels\n"
            << "           set_points " << setpts.min_ms << " ms, plan " << plan_ms
            << " ms (times: min of " << a.common.repeat << " runs)\n"
            << "quality:   reconstruction NRMSE vs phantom " << nrmse
            << " (single-pass gridding: limited by edge ringing and the unsampled corners of "
               "k-space)\n";
  if (!a.out.empty())
    std::cout << "preview:   " << a.out << " (phantom | reconstruction | 10 x |error|)\n";
  return kExitOk;
}

}  // namespace

Subcommand add_demo_command(CLI::App& parent) {
  auto a = std::make_shared<DemoArgs>();
  a->common.check_count = 300;  // keeps the exact sums to a fraction of a second at 256^2
  CLI::App* app = parent.add_subcommand(
      "demo",
      "MRI demonstration on synthetic data: simulate non-Cartesian k-space of a head phantom "
      "with a type-2 NUFFT, reconstruct it by gridding (adjoint NUFFT with |k| density "
      "compensation), report accuracy and time");
  app->add_option("--size", a->size, "Image size n (pixels per side, n x n image)")
      ->check(CLI::Range(8, 16384))
      ->capture_default_str();
  app->add_option("--trajectory", a->trajectory,
                  "k-space trajectory: radial (centre-out spokes) or spiral (Archimedean "
                  "interleaves), sampled at twice the Nyquist rate along spokes and between arms")
      ->check(CLI::IsMember({"radial", "spiral"}))
      ->capture_default_str();
  app->add_option("--out", a->out,
                  "Write a preview image, phantom | reconstruction | 10 x |error|, as PNG or "
                  "binary PGM by the extension (.png, .pgm)")
      ->check(preview_path());
  add_transform_options(*app, a->common);
  return {app,
          [a] {
            cap_threads(a->common.threads);
            return with_precision(a->common.prec, [&]<class T>() { return run_demo<T>(*a); });
          },
          "reduce --size"};
}

}  // namespace fieldft::cli
