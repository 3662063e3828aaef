// fieldft::mri::estimate_coil_maps: validation, calibration set-up (sample selection, density and
// window weights) and the RSS and ESPIRiT pipelines (the math is in
// include/fieldft/mri/coil_maps.hpp). Device kernels are in src/cuda/coil_maps.cu, ESPIRiT's host
// steps in src/mri/espirit.cpp.
#include "fieldft/mri/coil_maps.hpp"

#include "fieldft/config.hpp"  // FIELDFT_HAVE_CUDA

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <numbers>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "fieldft/error.hpp"
#include "fieldft/nufft.hpp"  // cpu_threads_for
#include "fieldft/op/linear_operator.hpp"
#include "mri/espirit.hpp"

#if FIELDFT_HAVE_CUDA
#include "cuda/coil_maps.hpp"
#include "cuda/stream.hpp"
#endif

namespace fieldft::mri {

namespace {

constexpr const char* kWho = "estimate_coil_maps: ";
constexpr std::int64_t kMaxEspiritUnknowns = 2048;

std::string num(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

std::int64_t checked_mul(std::int64_t a, std::int64_t b, const std::string& what) {
  std::int64_t r = 0;
  require(!__builtin_mul_overflow(a, b, &r), ErrorCode::kTooLarge,
          kWho + what + " = " + std::to_string(a) + " * " + std::to_string(b) + " overflows 64-bit indexing");
  return r;
}

template <class T>
void validate(const Encoding<T>& e, const Context& context, std::span<const std::complex<T>> data,
              std::int64_t coils, const CoilMapOptions& o, std::span<std::complex<T>> maps) {
  require(coils >= 1, ErrorCode::kInvalidArgument,
          kWho + std::string("coils = ") + std::to_string(coils) + "; expected at least 1 coil");
  const std::int64_t m = e.num_samples(), n = e.num_voxels();
  const std::int64_t cm = checked_mul(coils, m, "coils * samples"), nc = checked_mul(n, coils, "voxels * coils");
  require(static_cast<std::int64_t>(data.size()) == cm, ErrorCode::kShapeMismatch,
          kWho + std::string("data has ") + std::to_string(data.size()) + " values; expected coils * samples = " +
              std::to_string(coils) + " * " + std::to_string(m) + " = " + std::to_string(cm) + " (coil slowest)");
  require(static_cast<std::int64_t>(maps.size()) == nc, ErrorCode::kShapeMismatch,
          kWho + std::string("maps has room for ") + std::to_string(maps.size()) +
              " values; expected voxels * coils = " + std::to_string(n) + " * " + std::to_string(coils) + " = " +
              std::to_string(nc));
  require(cm == 0 || data.data() != nullptr, ErrorCode::kInvalidArgument,
          kWho + std::string("data is null; expected coils * samples values in the context's memory"));
  require(maps.data() != nullptr, ErrorCode::kInvalidArgument,
          kWho + std::string("maps is null; expected room for voxels * coils values in the context's memory"));

  std::int64_t nmin = std::numeric_limits<std::int64_t>::max();
  for (int d = 0; d < e.dim(); ++d) nmin = std::min(nmin, e.grid()[d]);
  const double r = o.calibration_radius;
  require(std::isfinite(r) && r > 0 && r <= 0.5 * static_cast<double>(nmin), ErrorCode::kInvalidArgument,
          kWho + std::string("options.calibration_radius = ") + num(r) +
              " cycles/FOV; expected 0 < R <= min_d N_d / 2 = " + num(0.5 * static_cast<double>(nmin)) +
              " (the calibration region must lie within the grid's k-space)");
  require(o.threshold >= 0 && o.threshold < 1, ErrorCode::kInvalidArgument,
          kWho + std::string("options.threshold = ") + num(o.threshold) + "; expected 0 <= threshold < 1 (a fraction of the largest RSS)");
  require(o.reference_coil >= -1 && o.reference_coil < coils, ErrorCode::kInvalidArgument,
          kWho + std::string("options.reference_coil = ") + std::to_string(o.reference_coil) + "; expected -1 (none) or a coil in [0, " +
              std::to_string(coils) + ")");
  require(o.method == CoilMapMethod::kRss || o.method == CoilMapMethod::kEspirit, ErrorCode::kInvalidArgument,
          kWho + std::string("options.method is not kRss or kEspirit"));
  require(o.window == CalibrationWindow::kHann || o.window == CalibrationWindow::kBox, ErrorCode::kInvalidArgument,
          kWho + std::string("options.window is not kHann or kBox"));
  if (o.method == CoilMapMethod::kEspirit) {
    require(o.kernel_size == 0 || o.kernel_size >= 2, ErrorCode::kInvalidArgument,
            kWho + std::string("options.kernel_size = ") + std::to_string(o.kernel_size) + "; expected 0 (automatic) or >= 2");
    require(o.kernel_threshold > 0 && o.kernel_threshold < 1, ErrorCode::kInvalidArgument,
            kWho + std::string("options.kernel_threshold = ") + num(o.kernel_threshold) + "; expected 0 < kernel_threshold < 1");
    require(o.eigen_threshold >= 0 && o.eigen_threshold < 1, ErrorCode::kInvalidArgument,
            kWho + std::string("options.eigen_threshold = ") + num(o.eigen_threshold) + "; expected 0 <= eigen_threshold < 1");
  }
  if (!o.density.empty()) {
    require(static_cast<std::int64_t>(o.density.size()) == m, ErrorCode::kShapeMismatch,
            kWho + std::string("options.density has ") + std::to_string(o.density.size()) + " values; expected one per sample (" +
                std::to_string(m) + ") or none");
    for (std::size_t j = 0; j < o.density.size(); ++j) {
      require(std::isfinite(o.density[j]), ErrorCode::kNonFinite, [&] {
        return std::string(kWho + std::string("options.density[") + std::to_string(j) + "] is " + num(o.density[j]) +
                           "; expected finite weights");
      });
      require(o.density[j] >= 0, ErrorCode::kInvalidArgument, [&] {
        return std::string(kWho + std::string("options.density[") + std::to_string(j) + "] = " + num(o.density[j]) +
                           "; expected weights >= 0");
      });
    }
  }
  if (context.is_host()) {
    for (std::int64_t i = 0; i < cm; ++i) {
      const std::complex<T> v = data[static_cast<std::size_t>(i)];
      require(std::isfinite(v.real()) && std::isfinite(v.imag()), ErrorCode::kNonFinite, [&] {
        return std::string(kWho + std::string("data[") + std::to_string(i) + "] (coil " + std::to_string(i / m) +
                           ", sample " + std::to_string(i % m) + ") is not finite; expected finite k-space data");
      });
    }
  }
}

// The calibration samples: indices, their k (per axis) and weights (density × window).
template <class T>
struct Calibration {
  std::vector<std::int64_t> index;
  std::array<std::vector<T>, 3> k;
  std::vector<T> weight;
  std::int64_t size() const { return static_cast<std::int64_t>(index.size()); }
};

// w_j = 1 / #{samples of the set in the unit cell (side 1 cycle/FOV) around the integer point
// nearest to k_j}.
template <class T>
std::vector<double> cell_count_density(const Encoding<T>& e, const std::vector<std::int64_t>& index) {
  const std::int64_t m = static_cast<std::int64_t>(index.size());
  std::vector<std::pair<std::int64_t, std::int64_t>> cell(static_cast<std::size_t>(m));
  for (std::int64_t i = 0; i < m; ++i) {
    std::int64_t id = 0;
    for (int d = e.dim() - 1; d >= 0; --d) {
      const std::int64_t nd = e.grid()[d];
      const std::int64_t c = std::llround(static_cast<double>(e.k(d)[index[i]])) + nd / 2 + 1;  // in [0, nd + 2]
      id = id * (nd + 3) + c;
    }
    cell[i] = {id, i};
  }
  std::sort(cell.begin(), cell.end());
  std::vector<double> w(static_cast<std::size_t>(m));
  for (std::int64_t a = 0; a < m;) {
    std::int64_t b = a;
    while (b < m && cell[b].first == cell[a].first) ++b;
    for (std::int64_t i = a; i < b; ++i) w[cell[i].second] = 1.0 / static_cast<double>(b - a);
    a = b;
  }
  return w;
}

// kRss: samples with |k| <= R, weighted by density × window(|k| / R). kEspirit (ball = false):
// every sample, weighted by the density alone.
template <class T>
Calibration<T> select_calibration(const Encoding<T>& e, const CoilMapOptions& o, bool ball) {
  Calibration<T> cal;
  const std::int64_t m = e.num_samples();
  const double r = o.calibration_radius;
  std::vector<double> radius(static_cast<std::size_t>(m), 0.0);
  for (std::int64_t j = 0; j < m; ++j) {
    double k2 = 0;
    for (int d = 0; d < e.dim(); ++d) k2 += static_cast<double>(e.k(d)[j]) * static_cast<double>(e.k(d)[j]);
    radius[j] = std::sqrt(k2) / r;
    if (!ball || radius[j] <= 1) cal.index.push_back(j);
  }
  require(!cal.index.empty(), ErrorCode::kInvalidArgument,
          kWho + std::string("no sample lies within the calibration radius ") + num(r) +
              " cycles/FOV; expected a trajectory that samples the centre of k-space (or a larger radius)");
  const std::vector<double> density =
      o.density.empty() ? cell_count_density(e, cal.index) : std::vector<double>{};
  for (int d = 0; d < e.dim(); ++d) cal.k[d].reserve(cal.index.size());
  cal.weight.reserve(cal.index.size());
  for (std::size_t i = 0; i < cal.index.size(); ++i) {
    const std::int64_t j = cal.index[i];
    for (int d = 0; d < e.dim(); ++d) cal.k[d].push_back(e.k(d)[j]);
    double w = o.density.empty() ? density[i] : o.density[j];
    if (ball && o.window == CalibrationWindow::kHann) w *= 0.5 * (1 + std::cos(std::numbers::pi * radius[j]));
    cal.weight.push_back(static_cast<T>(w));
  }
  return cal;
}

template <class T>
std::shared_ptr<const Encoding<T>> encoding_at(const Encoding<T>& e, const std::array<std::vector<T>, 3>& k) {
  const std::span<const std::int64_t> grid(e.grid().data(), static_cast<std::size_t>(e.dim()));
  return std::make_shared<const Encoding<T>>(grid, k[0], k[1], e.dim() == 3 ? std::span<const T>(k[2]) : std::span<const T>{});
}

// The loop body of src/cuda/coil_maps.cu's rss_normalise, on the host.
template <class T>
void rss_normalise_host(const Context& context, std::int64_t n, std::int64_t coils, int ref, double threshold,
                        std::complex<T>* x) {
  const int nt = cpu_threads_for(context.nthreads());
  std::vector<T> r(static_cast<std::size_t>(n));
#pragma omp parallel for num_threads(nt) schedule(static)
  for (std::int64_t v = 0; v < n; ++v) {
    double s = 0;
    for (std::int64_t c = 0; c < coils; ++c) s += std::norm(std::complex<double>(x[v + n * c]));
    r[v] = static_cast<T>(std::sqrt(s));
  }
  const T cut = static_cast<T>(threshold) * *std::max_element(r.begin(), r.end());
#pragma omp parallel for num_threads(nt) schedule(static)
  for (std::int64_t v = 0; v < n; ++v) {
    std::complex<T> p = 0;  // p_v / r_v, or 0 outside the mask
    if (r[v] > cut && r[v] > 0) {
      p = T(1) / r[v];
      if (ref >= 0) {
        const T a = std::abs(x[v + n * ref]);
        if (a > 0) p = std::conj(x[v + n * ref]) / (a * r[v]);
      }
    }
    for (std::int64_t c = 0; c < coils; ++c) x[v + n * c] *= p;
  }
}

// y[i + m_sel·c] = w[i] · data[index[i] + m·c], then x = Eᴴ y with one batched adjoint NUFFT
// over the calibration samples: the weighted coil images, written to `images` (N × C).
template <class T>
void gridded_images(const Encoding<T>& e, const Context& context, const std::complex<T>* data, std::int64_t coils,
                    const Calibration<T>& cal, double eps, std::complex<T>* images) {
  const std::int64_t m = e.num_samples(), ms = cal.size();
  NufftEncodingOptions no;
  no.eps = eps;
  no.batch = coils;
  NufftEncoding<T> adj(encoding_at(e, cal.k), context, no);
  if (context.is_host()) {
    std::vector<std::complex<T>> y(static_cast<std::size_t>(ms * coils));
    for (std::int64_t c = 0; c < coils; ++c)
      for (std::int64_t i = 0; i < ms; ++i) y[i + ms * c] = cal.weight[i] * data[cal.index[i] + m * c];
    adj.apply_adjoint(y.data(), images);
    return;
  }
#if FIELDFT_HAVE_CUDA
  // Stream-ordered: the uploads are staged before copy_to_device_async returns, and the
  // workspaces are freed on the stream after the work that reads them.
  const int dev = context.device();
  void* stream = context.stream();
  op::Workspace ws_index(context), ws_weight(context), ws_y(context);
  auto* index = ws_index.get_as<std::int64_t>(ms);
  auto* weight = ws_weight.get_as<T>(ms);
  auto* y = ws_y.get_as<std::complex<T>>(ms * coils);
  cuda::copy_to_device_async(index, cal.index.data(), static_cast<std::size_t>(ms) * sizeof(std::int64_t), dev, stream);
  cuda::copy_to_device_async(weight, cal.weight.data(), static_cast<std::size_t>(ms) * sizeof(T), dev, stream);
  cuda::coil::gather_weighted<T>({dev, stream}, m, ms, coils, index, weight, data, y);
  adj.apply_adjoint(y, images);
#else
  throw Error(ErrorCode::kBackendUnavailable, kWho + std::string("a CUDA context in a build without CUDA"));
#endif
}

template <class T>
CoilMapInfo rss_maps(const Encoding<T>& e, const Context& context, const std::complex<T>* data, std::int64_t coils,
                     const CoilMapOptions& o, std::complex<T>* maps) {
  const Calibration<T> cal = select_calibration(e, o, true);
  gridded_images(e, context, data, coils, cal, o.eps, maps);
  const std::int64_t n = e.num_voxels();
  if (context.is_host()) {
    rss_normalise_host(context, n, coils, o.reference_coil, o.threshold, maps);
  } else {
#if FIELDFT_HAVE_CUDA
    op::Workspace ws(context);
    cuda::coil::rss_normalise<T>({context.device(), context.stream()}, n, coils, o.reference_coil, o.threshold, maps,
                                 ws.get_as<T>(n + 1));
#endif
  }
  CoilMapInfo info;
  info.calibration_samples = cal.size();
  return info;
}

template <class T>
CoilMapInfo espirit(const Encoding<T>& e, const Context& context, const std::complex<T>* data, std::int64_t coils,
                    const CoilMapOptions& o, std::complex<T>* maps) {
  detail::EspiritProblem pr;
  pr.dim = e.dim();
  pr.grid = e.grid();
  pr.coils = coils;
  const std::int64_t half = static_cast<std::int64_t>(std::floor(o.calibration_radius));
  pr.calibration_size = 2 * half + 1;
  pr.kernel_size = o.kernel_size > 0 ? o.kernel_size : (e.dim() == 2 ? 6 : 4);
  require(pr.kernel_size < pr.calibration_size, ErrorCode::kInvalidArgument,
          kWho + std::string("ESPIRiT kernel size ") + std::to_string(pr.kernel_size) + " does not fit the calibration size " +
              std::to_string(pr.calibration_size) + " = 2 floor(R) + 1; expected a larger options.calibration_radius or a smaller options.kernel_size");
  std::int64_t unknowns = coils;
  for (int d = 0; d < e.dim(); ++d) unknowns = checked_mul(unknowns, pr.kernel_size, "coils * kernel_size^dim");
  require(unknowns <= kMaxEspiritUnknowns, ErrorCode::kTooLarge,
          kWho + std::string("ESPIRiT would solve for coils * kernel_size^dim = ") + std::to_string(unknowns) +
              " unknowns; expected at most " + std::to_string(kMaxEspiritUnknowns) +
              " (the eigensolver is cubic in it): use a smaller options.kernel_size or fewer (compressed) coils");
  pr.kernel_threshold = o.kernel_threshold;
  pr.eigen_threshold = o.eigen_threshold;
  pr.reference_coil = o.reference_coil;
  pr.nthreads = cpu_threads_for(context.nthreads());

  // 1. Gridded coil images from every sample, then their k-space at the Cartesian points κ.
  const Calibration<T> cal = select_calibration(e, o, false);
  gridded_images(e, context, data, coils, cal, o.eps, maps);
  std::int64_t ncal = 1;
  for (int d = 0; d < e.dim(); ++d) ncal *= pr.calibration_size;
  std::array<std::vector<T>, 3> kappa;
  for (int d = 0; d < e.dim(); ++d) kappa[d].resize(static_cast<std::size_t>(ncal));
  for (std::int64_t i = 0; i < ncal; ++i) {
    std::int64_t r = i;
    for (int d = 0; d < e.dim(); ++d) {
      kappa[d][i] = static_cast<T>(r % pr.calibration_size - half);
      r /= pr.calibration_size;
    }
  }
  NufftEncodingOptions no;
  no.eps = o.eps;
  no.batch = coils;
  NufftEncoding<T> fwd(encoding_at(e, kappa), context, no);
  std::vector<std::complex<double>> calib(static_cast<std::size_t>(ncal * coils));
  CoilMapInfo info;
  info.calibration_samples = cal.size();
  info.kernel_size = pr.kernel_size;
  info.calibration_size = pr.calibration_size;
  if (context.is_host()) {
    std::vector<std::complex<T>> y(static_cast<std::size_t>(ncal * coils));
    fwd.apply(maps, y.data());
    std::copy(y.begin(), y.end(), calib.begin());
    // In place: each voxel's start vector is read before its maps are written.
    info.kernel_rank = detail::espirit_maps<T>(pr, calib, maps, maps);
    return info;
  }
#if FIELDFT_HAVE_CUDA
  const cuda::coil::Place place{context.device(), context.stream()};
  const std::int64_t n = e.num_voxels();
  op::Workspace ws(context);
  auto* y = ws.get_as<std::complex<T>>(ncal * coils);
  fwd.apply(maps, y);
  std::vector<std::complex<T>> y_host(static_cast<std::size_t>(ncal * coils)), images(static_cast<std::size_t>(n * coils));
  cuda::coil::copy_to_host(y_host.data(), y, y_host.size() * sizeof(std::complex<T>), place);
  cuda::coil::copy_to_host(images.data(), maps, images.size() * sizeof(std::complex<T>), place);
  std::copy(y_host.begin(), y_host.end(), calib.begin());
  info.kernel_rank = detail::espirit_maps<T>(pr, calib, images.data(), images.data());
  cuda::copy_to_device_async(maps, images.data(), images.size() * sizeof(std::complex<T>), place.device, place.stream);
#endif
  return info;
}

}  // namespace

template <class T>
CoilMapInfo estimate_coil_maps(const Encoding<T>& encoding, const Context& context, std::span<const std::complex<T>> data,
                               std::int64_t coils, const CoilMapOptions& options, std::span<std::complex<T>> maps) {
  validate(encoding, context, data, coils, options, maps);
#if !FIELDFT_HAVE_CUDA
  require(context.is_host(), ErrorCode::kBackendUnavailable,
          kWho + std::string("context ") + context.describe() + " is a CUDA device, and this build has no CUDA backend");
#endif
  if (options.method == CoilMapMethod::kEspirit)
    return espirit(encoding, context, data.data(), coils, options, maps.data());
  return rss_maps(encoding, context, data.data(), coils, options, maps.data());
}

template CoilMapInfo estimate_coil_maps<float>(const Encoding<float>&, const Context&, std::span<const std::complex<float>>,
                                               std::int64_t, const CoilMapOptions&, std::span<std::complex<float>>);
template CoilMapInfo estimate_coil_maps<double>(const Encoding<double>&, const Context&,
                                                std::span<const std::complex<double>>, std::int64_t,
                                                const CoilMapOptions&, std::span<std::complex<double>>);

}  // namespace fieldft::mri
