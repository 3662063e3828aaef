// `fieldft dft`: the field-corrected DFT (fieldft::mri::Dft / DftR2) on random data, timed,
// optionally checked against the exact double-precision sum.
#include <algorithm>
#include <iomanip>
#include <iostream>
#include <memory>
#include <limits>
#include <numbers>
#include <optional>

#include "common.hpp"
#include "fieldft/mri/dft.hpp"

namespace fieldft::cli {

namespace {

struct DftArgs {
  int dim = 3;
  std::int64_t size = 64;
  std::int64_t samples = 262144;
  std::string prec = "f";
  std::string backend = "auto";
  bool r2 = false;
  std::int64_t images = 1;
  bool check = false;
  int repeat = 3;
  bool json = false;
  double field_hz = 50.0;
  double tmax = 0.041;
  int threads = 0;
  int device = 0;
  std::uint64_t seed = 42;
  std::int64_t check_count = 256;
};

template <class T>
int run_dft(const DftArgs& a) {
  using Complex = std::complex<T>;
  const std::vector<std::int64_t> grid(static_cast<std::size_t>(a.dim), a.size);
  std::int64_t voxels = 1;
  for (auto g : grid) {
    require(voxels <= std::numeric_limits<std::int64_t>::max() / g, ErrorCode::kTooLarge,
            "--size ^ --dim overflows 64-bit indexing");
    voxels *= g;
  }
  const std::int64_t m = a.samples;
  Random rng(a.seed);
  const double half = static_cast<double>(a.size) / 2;
  const std::vector<T> kx = rng.uniform<T>(m, -half, half);
  const std::vector<T> ky = rng.uniform<T>(m, -half, half);
  const std::vector<T> kz = a.dim == 3 ? rng.uniform<T>(m, -half, half) : std::vector<T>{};
  const std::vector<T> t = rng.uniform<T>(m, 0.0, a.tmax);
  const double w = 2 * std::numbers::pi * a.field_hz;
  const std::vector<T> field = rng.uniform<T>(voxels, -w, w);

  mri::DftOptions opts;
  opts.backend = parse_backend(a.backend);
  opts.images = a.images;
  opts.nthreads = a.threads;
  opts.device = a.device;
  std::unique_ptr<mri::Dft<T>> op;
  const double setup_ms = time_ms([&] {
    if (a.r2)
      op = std::make_unique<mri::DftR2<T>>(grid, kx, ky, kz, field, t, opts);
    else
      op = std::make_unique<mri::Dft<T>>(grid, kx, ky, kz, field, t, opts);
  });
  const std::vector<Complex> x = rng.strengths<T>(voxels * a.images);
  const std::vector<Complex> y = rng.strengths<T>(m * a.images);
  std::vector<Complex> ax(static_cast<std::size_t>(m * a.images)), ahy(static_cast<std::size_t>(voxels * a.images));
  Timing fwd, adj;
  for (int r = 0; r < a.repeat; ++r) {
    fwd.add(time_ms([&] { op->forward(x.data(), ax.data()); }));
    adj.add(time_ms([&] { op->adjoint(y.data(), ahy.data()); }));
  }

  // Worst of forward and adjoint, image 0, at check_count random outputs of each.
  std::optional<double> rel_error;
  if (a.check) {
    reference::Points k, r;
    k.dim = r.dim = a.dim;
    k.x.assign(kx.begin(), kx.end());
    k.y.assign(ky.begin(), ky.end());
    k.z.assign(kz.begin(), kz.end());
    for (std::int64_t v = 0; v < voxels; ++v) {
      const std::int64_t i[3] = {v % a.size, (v / a.size) % a.size, v / (a.size * a.size)};
      r.x.push_back(static_cast<double>(i[0] - a.size / 2) / static_cast<double>(a.size));
      r.y.push_back(static_cast<double>(i[1] - a.size / 2) / static_cast<double>(a.size));
      if (a.dim == 3) r.z.push_back(static_cast<double>(i[2] - a.size / 2) / static_cast<double>(a.size));
    }
    const std::vector<double> dw(field.begin(), field.end()), td(t.begin(), t.end());
    const std::vector<std::complex<double>> x0(x.begin(), x.begin() + voxels), y0(y.begin(), y.begin() + m);
    const auto js = rng.subset(m, a.check_count), vs = rng.subset(voxels, a.check_count);
    std::vector<std::complex<double>> want_f, want_a;
    if (a.r2) {
      const auto g = mri::compute_gradient_maps<double>(grid, dw);
      want_f = reference::field_dft_r2_forward_at(k, r, dw, td, grid, g, x0, js);
      want_a = reference::field_dft_r2_adjoint_at(k, r, dw, td, grid, g, y0, vs);
    } else {
      want_f = reference::field_dft_forward_at(k, r, dw, td, x0, js);
      want_a = reference::field_dft_adjoint_at(k, r, dw, td, y0, vs);
    }
    const auto got_f = gather<T>(ax, js), got_a = gather<T>(ahy, vs);
    rel_error = std::max(reference::rel_l2_error<std::complex<double>>(got_f, want_f),
                         reference::rel_l2_error<std::complex<double>>(got_a, want_a));
  }

  const double pairs = static_cast<double>(voxels) * static_cast<double>(m) * static_cast<double>(a.images);
  const double pairs_per_s = fwd.min_ms > 0 ? pairs / (fwd.min_ms * 1e-3) : 0.0;
  if (a.json) {
    nlohmann::json j;
    j["command"] = "dft";
    j["prec"] = a.prec;
    j["dim"] = a.dim;
    j["size"] = a.size;
    j["samples"] = m;
    j["images"] = a.images;
    j["r2"] = a.r2;
    j["backend"] = backend_name(op->backend());
    j["setup_ms"] = setup_ms;
    j["forward_ms"] = fwd.min_ms;
    j["adjoint_ms"] = adj.min_ms;
    j["repeat"] = a.repeat;
    j["pairs_per_s"] = pairs_per_s;
    j["adjoint_pairs_per_s"] = adj.min_ms > 0 ? pairs / (adj.min_ms * 1e-3) : 0.0;
    j["seed"] = a.seed;
    if (rel_error) {
      j["rel_error"] = *rel_error;
      j["checked_outputs"] = a.check_count;
    }
    print_json(j);
    return kExitOk;
  }
  std::cout << std::setprecision(4);
  std::cout << (a.r2 ? "DftR2" : "Dft") << ", " << a.dim << "D " << a.size << "^" << a.dim << " voxels, M = " << m
            << " samples, " << a.images << " image(s), " << (a.prec == "f" ? "float" : "double") << ", backend "
            << backend_name(op->backend()) << "\n"
            << "time:       setup " << setup_ms << " ms, forward " << fwd.min_ms << " ms, adjoint " << adj.min_ms
            << " ms (min of " << fwd.count << ", host pointers), " << pairs_per_s
            << " image-voxel-sample pairs/s (forward)\n";
  if (rel_error)
    std::cout << "accuracy:   relative l2 error " << *rel_error << " vs exact double sum on " << a.check_count
              << " random outputs of forward and adjoint (worst of the two, image 0)\n";
  return kExitOk;
}

}  // namespace

Subcommand add_dft_command(CLI::App& parent) {
  auto a = std::make_shared<DftArgs>();
  CLI::App* app = parent.add_subcommand(
      "dft",
      "Run the field-corrected DFT s_j = sum_v m_v exp(-i(2 pi k_j.r_v + dw_v t_j)) and its adjoint on "
      "random data: k uniform in [-N/2,N/2)^dim cycles/FOV, t uniform in [0, tmax), field map uniform in "
      "+-field Hz; report times and, with --check, the accuracy");
  app->add_option("--dim", a->dim, "Image dimensions, 2 or 3")->check(CLI::IsMember({2, 3}))->capture_default_str();
  app->add_option("--size", a->size, "Voxels N per axis (the grid is N^dim)")->check(at_least(1))->capture_default_str();
  app->add_option("--samples", a->samples, "Number M of k-space samples")->check(at_least(0))->capture_default_str();
  app->add_option("--prec", a->prec, "f (float) or d (double)")->check(CLI::IsMember({"f", "d"}))->capture_default_str();
  app->add_option("--backend", a->backend, "cpu, cuda or auto (CUDA when compiled in and a GPU is present)")
      ->check(CLI::IsMember({"auto", "cpu", "cuda"}))
      ->capture_default_str();
  app->add_flag("--r2", a->r2, "DftR2: multiply each term by the R2* sinc factor (gradient maps by central differences)");
  app->add_option("--images", a->images, "Images C transformed in one call (coils, shots)")
      ->check(at_least(1))
      ->capture_default_str();
  app->add_flag("--check", a->check, "Compare random outputs with the exact double-precision sum");
  app->add_option("--check-count", a->check_count, "Outputs of each direction compared by --check")
      ->check(at_least(1))
      ->capture_default_str();
  app->add_option("--repeat", a->repeat, "Runs of each direction; times are the minimum (ms)")
      ->check(at_least(1))
      ->capture_default_str();
  app->add_option("--field", a->field_hz, "Field map range, Hz (uniform in +-field)")
      ->check(finite_number(0.0))
      ->capture_default_str();
  app->add_option("--tmax", a->tmax, "Readout times uniform in [0, tmax) s")
      ->check(finite_number(0.0))
      ->capture_default_str();
  add_threads_option(*app, a->threads);
  app->add_option("--device", a->device, "CUDA backend: device ordinal")->check(at_least(0))->capture_default_str();
  add_seed_option(*app, a->seed, "Seed of the test data");
  app->add_flag("--json", a->json,
                "Print one JSON object (one line): rel_error (with --check), forward_ms, adjoint_ms, pairs_per_s, ...");
  app->footer("Times are wall-clock milliseconds around each call with host pointers (the CUDA backend's "
              "copies included), minimum over --repeat runs.\n" +
              parent.get_footer());
  return {app,
          [a] {
            cap_threads(a->threads);
            return with_precision(a->prec, [&]<class T>() { return run_dft<T>(*a); });
          },
          "reduce --size, --dim, --samples or --images"};
}

}  // namespace fieldft::cli
