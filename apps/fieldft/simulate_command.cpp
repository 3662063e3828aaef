// `fieldft simulate`: a multi-coil non-Cartesian dataset with its truth, computed by the exact
// field-corrected DFT (or, for large 3D problems, time segmentation at a tight accuracy), written
// to ISMRMRD and/or a BART .cfl set (dataset.hpp).
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <memory>
#include <numbers>
#include <optional>
#include <sstream>

#include "common.hpp"
#include "dataset.hpp"
#include "fieldft/mri/encoding.hpp"
#include "fieldft/mri/pcsense.hpp"
#include "fieldft/mri/sense.hpp"
#include "fieldft/mri/simulate.hpp"
#include "fieldft/mri/time_segmentation.hpp"
#include "op/upload.hpp"
#include "fieldft/op/vector_ops.hpp"
#include "recon_chunks.hpp"
#include "recon_io.hpp"

namespace fieldft::cli {

namespace {

struct SimArgs {
  std::vector<std::string> outs;
  std::string matrix = "64";
  std::int64_t coils = 8;
  std::string traj = "spiral";
  std::int64_t interleaves = 0, shots = 1, samples = 0;
  double oversampling = 1;
  double dwell_us = 4;
  double field_hz = 50, susceptibility_hz = 100;
  double shot_phase = 0;
  double snr = 50;
  double fov_mm = 220;
  std::string encoding = "auto";
  std::string stack = "auto";
  double dft_limit = 4e9;
  std::uint64_t seed = 1;
  int threads = 0;
  std::string backend = "cpu";
  int device = 0;
  bool json = false;
};

// Centre-out spokes of a 3D radial ("koosh ball") acquisition: directions on a Fibonacci sphere
// (nearly uniform), L spokes of S samples, k = (Nx/2, Ny/2, Nz/2)·τ·u_l, τ = s/S.
mri::Trajectory radial3d(std::span<const std::int64_t> g, std::int64_t spokes, std::int64_t samples) {
  const std::int64_t n = *std::max_element(g.begin(), g.end());
  const std::int64_t L = spokes > 0 ? spokes : std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(std::numbers::pi * n * n / 4)));
  const std::int64_t S = samples > 0 ? samples : n;
  mri::Trajectory t;
  t.dim = 3;
  t.interleaves = L;
  t.samples = S;
  const double golden = std::numbers::pi * (3 - std::sqrt(5.0));
  for (std::int64_t l = 0; l < L; ++l) {
    const double z = 1 - (2.0 * l + 1) / L, r = std::sqrt(std::max(0.0, 1 - z * z)), phi = golden * l;
    const double u[3] = {r * std::cos(phi), r * std::sin(phi), z};
    for (std::int64_t s = 0; s < S; ++s) {
      const double tau = static_cast<double>(s) / S;
      t.kx.push_back(tau * u[0] * g[0] / 2.0);
      t.ky.push_back(tau * u[1] * g[1] / 2.0);
      t.kz.push_back(tau * u[2] * g[2] / 2.0);
    }
  }
  return t;
}

mri::Trajectory make_trajectory(const SimArgs& a, std::span<const std::int64_t> g) {
  const bool three = g.size() == 3;
  if (a.traj == "radial3d") {
    if (!three) throw UsageError("--traj radial3d needs a 3D --matrix (e.g. 32x32x32)");
    return radial3d(g, a.interleaves, a.samples);
  }
  if (a.traj == "stack-of-spirals" && !three)
    throw UsageError("--traj stack-of-spirals needs a 3D --matrix (e.g. 64x64x16)");
  if (a.traj == "radial")
    return mri::radial_trajectory(g, {.spokes = a.interleaves, .samples = a.samples, .centre_out = true});
  return mri::spiral_trajectory(g, {.interleaves = a.interleaves, .samples = a.samples, .oversampling = a.oversampling});
}

int run_simulate(const SimArgs& a) {
  using Complex = std::complex<double>;
  const auto t_start = std::chrono::steady_clock::now();
  const auto seconds_since = [](auto t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  if (a.outs.empty()) throw UsageError("-o/--out is required");
  for (const auto& o : a.outs) {
    if (is_ismrmrd_path(o) && !io::ismrmrd_available())
      throw Error(ErrorCode::kBackendUnavailable, "'" + o + "': this build has no ISMRMRD support (FIELDFT_ISMRMRD); write a .cfl set instead");
    const auto dir = std::filesystem::path(is_ismrmrd_path(o) ? o : cfl_prefix(o)).parent_path();
    std::error_code ec;
    if (!dir.empty() && !std::filesystem::is_directory(dir, ec))
      throw UsageError("-o: the directory of '" + o + "' does not exist");
  }
  const std::vector<std::int64_t> g = parse_matrix(a.matrix, "--matrix");
  if (a.shot_phase > 0 && a.shots < 2) throw UsageError("--shot-phase needs --shots >= 2 (one phase map per shot)");
  const int dim = static_cast<int>(g.size());
  const mri::Trajectory traj = make_trajectory(a, g);
  if (a.shots > traj.interleaves)
    throw UsageError("--shots " + std::to_string(a.shots) + " exceeds the " + std::to_string(traj.interleaves) +
                     " interleaves; raise --interleaves");
  const std::int64_t m = traj.size();
  const std::int64_t voxels = g[0] * g[1] * (dim == 3 ? g[2] : 1);

  io::RawData d;
  d.dim = dim;
  d.grid = {g[0], g[1], dim == 3 ? g[2] : 1};
  d.fov_mm = {a.fov_mm, a.fov_mm * g[1] / g[0], dim == 3 ? a.fov_mm * g[2] / g[0] : a.fov_mm / g[0]};
  d.coils = a.coils;
  d.trajectory = a.traj == "radial" || a.traj == "radial3d" ? "radial" : "spiral";
  d.readouts.assign(static_cast<std::size_t>(m / traj.samples), traj.samples);
  d.kx = traj.kx;
  d.ky = traj.ky;
  d.kz = traj.kz;
  d.times = mri::readout_times(traj, a.dwell_us * 1e-6);
  d.shots = mri::shot_labels(traj, a.shots);
  d.num_shots = a.shots;
  const auto truth = mri::shepp_logan(g);
  d.truth.assign(truth.begin(), truth.end());
  // The maps as the files hold them (single precision, RawData), and the model made with exactly
  // those values: the data are the written maps' data.
  {
    const auto made = mri::coil_maps(g, a.coils, {.normalize = true});
    d.coil_maps.assign(made.begin(), made.end());
  }
  const std::vector<Complex> maps(d.coil_maps.begin(), d.coil_maps.end());
  mri::FieldMapOptions fo;
  fo.max_hz = a.field_hz;
  fo.seed = a.seed;
  fo.susceptibility_hz = a.susceptibility_hz;
  if (a.field_hz > 0 || a.susceptibility_hz != 0) d.field_map = mri::field_map(g, fo);
  const bool phased = a.shots > 1 && a.shot_phase > 0;
  if (phased) d.phase_maps = mri::shot_phase_maps(g, a.shots, {.max_phase = a.shot_phase, .seed = a.seed + 1});

  // A stack (recon_chunks.hpp: every k_z plane sampled alike) separates exactly into its Nz 2D
  // slices: each slice's 2D model, then the k_z transform (slices_to_kz) — Nz 2D transforms in
  // place of one 3D one (64 slices of 256²: seconds where the 3D model took minutes). --stack off
  // keeps the 3D model.
  std::optional<Stack> stack;
  if (dim == 3 && a.stack == "auto") stack = detect_stack(d, nullptr);
  const std::int64_t nz = stack ? g[2] : 1, per = stack ? stack->plane_samples : m;
  const std::vector<std::int64_t> gm = stack ? std::vector<std::int64_t>{g[0], g[1]} : g;

  // The forward model, in double: exact DFT unless M·N (of one slice for a stack) is beyond
  // --dft-limit and the user let us.
  const double cost = static_cast<double>(per) * static_cast<double>(voxels / nz);
  const bool tseg = a.encoding == "tseg" || (a.encoding == "auto" && cost > a.dft_limit);
  const std::string why = a.encoding != "auto"
                              ? "asked for"
                              : (tseg ? "M·N = " : "M·N = ") + [&] {
                                  std::ostringstream s;
                                  s << std::setprecision(3) << cost << (tseg ? " > " : " <= ") << a.dft_limit
                                    << " (--dft-limit" << (stack ? ", per slice" : "") << ")";
                                  return s.str();
                                }();
  const auto t_model = std::chrono::steady_clock::now();
  const Placement place = choose_placement(a.backend, a.device, a.threads);
  const Context& ctx = place.context;
  // The tight time segmentation of large problems: phase error 1e-6, NUFFT eps 1e-10.
  const auto tseg_factory = [&](std::shared_ptr<const mri::Encoding<double>> e, std::int64_t b) -> op::OperatorPtr<double> {
    if (!e->has_field()) {
      mri::NufftEncodingOptions no;
      no.eps = 1e-10;
      no.batch = b;
      no.toeplitz = mri::Toeplitz::kOff;
      return std::make_shared<mri::NufftEncoding<double>>(e, ctx, no);
    }
    mri::TimeSegmentationOptions o;
    o.accuracy = 1e-6;
    o.eps = 1e-10;
    o.batch = b;
    o.max_segments = 1024;
    return std::make_shared<mri::TimeSegmentedEncoding<double>>(e, ctx, o);
  };
  // The k-space of one (slice's) problem: samples j < per (of plane 0 for a stack), the grid gm,
  // and the maps, field map and phase maps of that slice; sample j of coil c at j + per·c.
  const auto model_apply = [&](std::span<const double> kx, std::span<const double> ky, std::span<const double> kz,
                               std::span<const double> times, std::span<const std::int32_t> shots,
                               const std::vector<double>& field, const std::vector<Complex>& maps,
                               const std::vector<double>& phases, const std::vector<Complex>& truth_of) {
    auto enc = std::make_shared<const mri::Encoding<double>>(gm, kx, ky, kz, times, std::span<const double>(field), shots);
    op::Shape maps_shape(gm.begin(), gm.end());
    maps_shape.push_back(a.coils);
    op::OperatorPtr<double> model;
    if (phased) {
      op::Shape phase_shape(gm.begin(), gm.end());
      phase_shape.push_back(a.shots);
      mri::PcSenseOptions<double> po;
      po.encoding = mri::EncodingKind::kDft;
      if (tseg) po.shot_encoding = tseg_factory;
      model = mri::pcsense<double>(enc, maps, maps_shape, phases, phase_shape, ctx, po);
    } else if (tseg) {
      model = mri::sense<double>(tseg_factory(enc, a.coils), maps, maps_shape);
    } else {
      model = mri::sense<double>(enc, maps, maps_shape, ctx, {.encoding = mri::EncodingKind::kDft});
    }
    std::vector<Complex> y(static_cast<std::size_t>(per * a.coils));
    if (ctx.is_host()) {
      model->apply(truth_of.data(), y.data());
    } else {  // the truth to the device and the data back, once
      op::Workspace truth_mem(ctx), data_mem(ctx);
      const Complex* x = op::upload(truth_mem, truth_of);
      Complex* yd = data_mem.get_as<Complex>(static_cast<std::int64_t>(y.size()));
      model->apply(x, yd);
      op::VectorOps<double>(ctx).to_host(static_cast<std::int64_t>(y.size()), yd, y.data());
      ctx.synchronize();
    }
    return y;
  };
  const auto span_of = [](const std::vector<double>& v) { return std::span<const double>(v); };
  std::vector<Complex> data;  // the k-space in double, M × C
  if (!stack) {
    data = model_apply(span_of(d.kx), span_of(d.ky), span_of(d.kz), span_of(d.times),
                       std::span<const std::int32_t>(d.shots), d.field_map, maps, d.phase_maps, d.truth);
  } else {  // plane 0's in-plane samples serve every slice
    std::vector<double> kx(static_cast<std::size_t>(per)), ky(kx.size()), times(d.times.empty() ? 0 : kx.size());
    std::vector<std::int32_t> shots(d.shots.empty() ? 0 : kx.size());
    for (std::int64_t j = 0; j < per; ++j) {
      const auto i = static_cast<std::size_t>(stack->index[static_cast<std::size_t>(j)]), k = static_cast<std::size_t>(j);
      kx[k] = d.kx[i];
      ky[k] = d.ky[i];
      if (!times.empty()) times[k] = d.times[i];
      if (!shots.empty()) shots[k] = d.shots[i];
    }
    const std::int64_t plane = g[0] * g[1];
    std::vector<std::vector<Complex>> slices(static_cast<std::size_t>(nz));
    for (std::int64_t z = 0; z < nz; ++z)
      slices[static_cast<std::size_t>(z)] =
          model_apply(span_of(kx), span_of(ky), {}, span_of(times), std::span<const std::int32_t>(shots),
                      d.field_map.empty() ? d.field_map : slice_of(d.field_map, plane, nz, z, 1),
                      slice_of(maps, plane, nz, z, a.coils),
                      d.phase_maps.empty() ? d.phase_maps : slice_of(d.phase_maps, plane, nz, z, a.shots),
                      slice_of(d.truth, plane, nz, z, 1));
    slices_to_kz(*stack, nz, a.coils, slices, data);
  }
  double power = 0;
  for (const auto& v : data) power += std::norm(v);
  const double rms = std::sqrt(power / static_cast<double>(data.size()));
  const double sigma = a.snr > 0 ? rms / a.snr : 0.0;
  if (sigma > 0) mri::add_noise<double>(data, sigma, a.seed + 2);
  d.data.assign(data.begin(), data.end());  // single precision, as the files hold it
  const double model_s = seconds_since(t_model);

  const auto t_write = std::chrono::steady_clock::now();
  for (const auto& o : a.outs) {
    if (is_ismrmrd_path(o))
      io::write_ismrmrd(o, d);
    else
      write_cfl_dataset(cfl_prefix(o), d);
  }
  const double write_s = seconds_since(t_write);

  const std::string model_name = std::string(phased ? "pcSENSE" : "SENSE") + (tseg ? ", time-segmented NUFFT (accuracy 1e-6, eps 1e-10)" : ", exact DFT") +
                                 (stack ? " per slice of the stack, " + std::to_string(nz) + " slices + k_z transform" : "");
  if (a.json) {
    nlohmann::json j;
    j["command"] = "simulate";
    j["matrix"] = g;
    j["dim"] = dim;
    j["trajectory"] = a.traj;
    j["interleaves"] = traj.interleaves;
    j["samples_per_readout"] = traj.samples;
    j["partitions"] = traj.partitions;
    j["samples"] = m;
    j["coils"] = a.coils;
    j["shots"] = a.shots;
    j["shot_phase_maps"] = phased;
    j["field_map"] = !d.field_map.empty();
    j["readout_ms"] = a.dwell_us * 1e-3 * traj.samples;
    j["encoding"] = tseg ? "tseg" : "dft";
    j["encoding_reason"] = why;
    j["stack_slices"] = stack ? nz : 0;
    j["snr"] = a.snr;
    j["noise_sigma"] = sigma;
    j["seed"] = a.seed;
    j["outputs"] = a.outs;
    j["model_seconds"] = model_s;
    j["backend"] = backend_name(ctx.backend());
    if (ctx.is_cuda()) j["device"] = ctx.device();
    j["write_seconds"] = write_s;
    j["total_seconds"] = seconds_since(t_start);
    print_json(j);
    return kExitOk;
  }
  std::cout << std::setprecision(4);
  std::cout << "simulate: " << (dim == 3 ? "3D" : "2D") << " Shepp-Logan " << grid_text(d) << ", " << a.coils
            << " coils, " << a.traj << " " << traj.interleaves << " interleaves x " << traj.samples << " samples";
  if (traj.partitions > 1) std::cout << " x " << traj.partitions << " partitions";
  std::cout << " = " << m << " samples, readout " << a.dwell_us * 1e-3 * traj.samples << " ms\n"
            << "          field map " << (d.field_map.empty() ? std::string("none") : [&] {
                 std::ostringstream s;
                 s << "smooth " << a.field_hz << " Hz + susceptibility offset " << a.susceptibility_hz << " Hz";
                 return s.str();
               }())
            << "; " << a.shots << " shot" << (a.shots > 1 ? "s" : "") << (phased ? ", per-shot phase up to " : "");
  if (phased) std::cout << a.shot_phase << " rad";
  std::cout << "; SNR ";
  if (a.snr > 0)
    std::cout << a.snr;
  else
    std::cout << "inf (no noise)";
  std::cout << "\n"
            << "model:    " << model_name << " (" << why << ") on " << (ctx.is_cuda() ? "cuda:" + std::to_string(ctx.device()) + " (" + place.device_name + ")" : std::string("the CPU")) << "   " << model_s << " s\n"
            << "wrote:    ";
  for (std::size_t i = 0; i < a.outs.size(); ++i)
    std::cout << (i ? ", " : "") << (is_ismrmrd_path(a.outs[i]) ? a.outs[i] : cfl_prefix(a.outs[i]) + "_{ksp,traj,...}.cfl");
  std::cout << "   " << write_s << " s\n";
  return kExitOk;
}

}  // namespace

Subcommand add_simulate_command(CLI::App& parent) {
  auto a = std::make_shared<SimArgs>();
  CLI::App* app = parent.add_subcommand(
      "simulate",
      "Simulate a multi-coil non-Cartesian MRI dataset with its truth: a 2D or 3D Shepp-Logan phantom, smooth coil "
      "sensitivities, a field map (smooth + a localised susceptibility-like offset), spiral/radial/stack-of-spirals/"
      "3D radial trajectories with readout times, optional per-shot phase and noise; k-space computed by the exact "
      "field-corrected DFT in double precision. Output: ISMRMRD (.h5; maps and truth as NDArrays SENSEMap, FieldMap, "
      "PhaseMaps, Truth) and/or a BART .cfl set P_ksp, P_traj, P_times, P_shots, P_maps, P_field, P_phase, P_truth");
  app->add_option("-o,--out", a->outs,
                  "Output: FILE.h5 (ISMRMRD) or a prefix P for BART .cfl files (P or P.cfl); repeat to write both")
      ->required();
  app->add_option("--matrix", a->matrix, "Image grid: N (N x N), NxM, or NxMxK for 3D")->capture_default_str();
  app->add_option("--coils", a->coils, "Receive coils (smooth Gaussian sensitivities on a ring, normalised)")
      ->check(CLI::Range(1, 128))
      ->capture_default_str();
  app->add_option("--traj", a->traj,
                  "Trajectory: spiral (Archimedean interleaves; stacked on kz planes for a 3D matrix), radial "
                  "(centre-out spokes; stack of stars in 3D), stack-of-spirals (3D only), radial3d (3D centre-out "
                  "spokes on a Fibonacci sphere)")
      ->check(CLI::IsMember({"spiral", "radial", "stack-of-spirals", "radial3d"}))
      ->capture_default_str();
  app->add_option("--interleaves", a->interleaves,
                  "Spiral arms or radial spokes; 0 = Nyquist-sampled defaults (spiral: max(N)/8 arms; radial: "
                  "pi*N spokes; radial3d: pi*N^2/4)")
      ->check(at_least(0))
      ->capture_default_str();
  app->add_option("--samples", a->samples, "Samples per readout; 0 = Nyquist along the readout")
      ->check(at_least(0))
      ->capture_default_str();
  app->add_option("--oversampling", a->oversampling, "Spiral: density between arms relative to Nyquist")
      ->check(finite_number(0.1))
      ->capture_default_str();
  app->add_option("--shots", a->shots,
                  "Shots: interleave l is acquired in shot l mod shots (1 <= shots <= interleaves)")
      ->check(at_least(1))
      ->capture_default_str();
  app->add_option("--dwell", a->dwell_us, "Dwell time between readout samples, microseconds (readout times t = s * dwell)")
      ->check(finite_number(0))
      ->capture_default_str();
  app->add_option("--field-hz", a->field_hz, "Peak |off-resonance| of the smooth field map, Hz (0 and --susceptibility-hz 0: no field map)")
      ->check(finite_number(0))
      ->capture_default_str();
  app->add_option("--susceptibility-hz", a->susceptibility_hz,
                  "Peak of a localised susceptibility-like offset (Gaussian, width 0.12 half-FOV, above the centre), Hz, added to the smooth map")
      ->check(finite_number())
      ->capture_default_str();
  app->add_option("--shot-phase", a->shot_phase,
                  "Per-shot phase (motion-like, smooth polynomial), peak |phase| in radians; needs --shots >= 2; 0: none")
      ->check(finite_number(0))
      ->capture_default_str();
  app->add_option("--snr", a->snr, "Signal-to-noise ratio: noise sigma = rms(k-space)/snr per complex sample; 0: no noise")
      ->check(finite_number(0))
      ->capture_default_str();
  app->add_option("--fov", a->fov_mm, "Field of view along x, mm (written to the ISMRMRD header; voxels are isotropic)")
      ->check(finite_number(1))
      ->capture_default_str();
  app->add_option("--encoding", a->encoding,
                  "Forward model: dft (exact field-corrected DFT), tseg (time-segmented NUFFT at phase accuracy 1e-6, "
                  "NUFFT eps 1e-10: for large 3D), auto (dft while samples x voxels <= --dft-limit)")
      ->check(CLI::IsMember({"auto", "dft", "tseg"}))
      ->capture_default_str();
  app->add_option("--stack", a->stack,
                  "A stack of 2D trajectories (every k_z plane sampled alike, e.g. stack-of-spirals): auto "
                  "simulates it exactly as its slices' 2D models and a k_z transform (fast); off: one 3D model")
      ->check(CLI::IsMember({"auto", "off"}))
      ->capture_default_str();
  app->add_option("--dft-limit", a->dft_limit, "auto: largest samples x voxels simulated by the exact DFT")
      ->check(finite_number(0))
      ->capture_default_str();
  add_seed_option(*app, a->seed, "Seed of the field map, phase maps and noise (the same seed gives the same files)");
  add_threads_option(*app, a->threads);
  app->add_option("--backend", a->backend,
                  "Where the forward model runs (in double either way): cpu (default: the same files on every "
                  "machine), cuda (a GPU: minutes become seconds for large 3D; the k-space differs from the CPU's "
                  "in the last digits) or auto (CUDA when this build has it and a device is visible)")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}))
      ->capture_default_str();
  app->add_option("--device", a->device, "CUDA device ordinal (0 .. devices-1; see `fieldft info`); ignored on the CPU")
      ->check(at_least(0))
      ->capture_default_str();
  app->add_flag("--json", a->json, "Print one JSON object (one line) instead of text");
  return {app,
          [a] {
            cap_threads(a->threads);
            return run_simulate(*a);
          },
          "reduce --matrix, --coils or --interleaves"};
}

}  // namespace fieldft::cli
