#include "dataset.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <optional>

#include "fieldft/error.hpp"
#include "io/cfl.hpp"

namespace fieldft::cli {

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

namespace {

bool cfl_exists(const std::string& base) {
  std::error_code ec;
  return std::filesystem::exists(base + ".cfl", ec) && std::filesystem::exists(base + ".hdr", ec);
}

std::vector<std::complex<float>> to_cfloat(const std::vector<std::complex<double>>& v) {
  return {v.begin(), v.end()};
}
std::vector<std::complex<float>> to_cfloat(const std::vector<double>& v) { return {v.begin(), v.end()}; }
template <class I>
std::vector<std::complex<float>> to_cfloat_int(const std::vector<I>& v) {
  std::vector<std::complex<float>> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) out[i] = static_cast<float>(v[i]);
  return out;
}

// Real parts of a [1, S, R] or image array; the imaginary parts must be 0.
std::vector<double> real_parts(const io::CflArray& a, const std::string& name) {
  std::vector<double> out(a.data.size());
  for (std::size_t i = 0; i < a.data.size(); ++i) {
    if (a.data[i].imag() != 0.0f)
      throw Error(ErrorCode::kInvalidArgument,
                  name + ": expected real values (imaginary parts 0), element " + std::to_string(i) + " is complex");
    out[i] = a.data[i].real();
  }
  return out;
}

void require_sample_array(const io::CflArray& a, std::int64_t samples, std::int64_t readouts, const std::string& name) {
  std::int64_t prod = 1;
  for (auto d : a.dims) prod *= d;
  if (a.dims.size() < 3 || a.dims[0] != 1 || a.dims[1] != samples || a.dims[2] != readouts ||
      prod != samples * readouts)
    throw Error(ErrorCode::kShapeMismatch, name + ": expected dimensions [1, " + std::to_string(samples) + ", " +
                                               std::to_string(readouts) + "] like the k-space");
}

// The image grid of an image-layout BART array ([x, y, z, K]); K returned.
std::array<std::int64_t, 3> image_grid(const std::vector<std::int64_t>& dims, std::int64_t& k) {
  std::array<std::int64_t, 3> g{1, 1, 1};
  for (std::size_t d = 0; d < 3 && d < dims.size(); ++d) g[d] = dims[d];
  k = dims.size() > 3 ? dims[3] : 1;
  return g;
}

}  // namespace

io::RawData read_cfl_set(const std::string& ksp_name, const std::string& traj_name, const std::string& prefix,
                         std::array<std::int64_t, 3> matrix);

bool is_ismrmrd_path(const std::string& path) {
  return ends_with(path, ".h5") || ends_with(path, ".hdf5") || ends_with(path, ".mrd");
}

std::string cfl_prefix(const std::string& path) {
  std::string base = io::cfl_base(path);
  if (ends_with(base, "_ksp")) return base.substr(0, base.size() - 4);
  return base;
}

void write_cfl_dataset(const std::string& prefix, const io::RawData& d) {
  io::validate(d, prefix);
  const std::int64_t m = d.num_samples();
  const std::int64_t s = d.readouts.empty() ? m : d.readouts.front();
  for (auto r : d.readouts)
    if (r != s)
      throw Error(ErrorCode::kInvalidArgument, prefix + ": BART's layout needs readouts of one length");
  const std::int64_t r = s > 0 ? m / s : 0;
  std::vector<std::int64_t> shape{d.grid[0], d.grid[1]};
  if (d.dim == 3) shape.push_back(d.grid[2]);
  const auto sample_dims = io::bart_kspace_dims(s, r, 1);
  io::write_cfl_trajectory<double>(prefix + "_traj", s, r, d.kx, d.ky, d.kz);
  if (!d.times.empty()) io::write_cfl(prefix + "_times", sample_dims, to_cfloat(d.times));
  if (d.num_shots > 1 && !d.shots.empty()) io::write_cfl(prefix + "_shots", sample_dims, to_cfloat_int(d.shots));
  if (!d.coil_maps.empty()) io::write_cfl_image(prefix + "_maps", shape, d.coils, d.coil_maps);
  if (!d.field_map.empty()) io::write_cfl_image(prefix + "_field", shape, 1, to_cfloat(d.field_map));
  if (!d.phase_maps.empty()) io::write_cfl_image(prefix + "_phase", shape, d.num_shots, to_cfloat(d.phase_maps));
  if (!d.truth.empty()) io::write_cfl_image(prefix + "_truth", shape, 1, to_cfloat(d.truth));
  // The k-space last: a reader that finds it finds the rest complete.
  io::write_cfl_kspace(prefix + "_ksp", s, r, d.coils, d.data);
}

io::RawData read_cfl_dataset(const std::string& prefix, std::array<std::int64_t, 3> matrix, const std::string& traj) {
  return read_cfl_set(prefix + "_ksp", traj.empty() ? prefix + "_traj" : io::cfl_base(traj), prefix, matrix);
}

io::RawData read_cfl_set(const std::string& ksp_name, const std::string& traj_name, const std::string& prefix,
                         std::array<std::int64_t, 3> matrix) {
  if (!cfl_exists(ksp_name))
    throw Error(ErrorCode::kInvalidArgument,
                "'" + prefix + "': no BART k-space " + ksp_name + ".cfl/.hdr (expected an ISMRMRD .h5 file or a .cfl "
                "set P_ksp, P_traj, ... named by P or P_ksp.cfl, or a BART k-space with --traj)");
  if (!cfl_exists(traj_name))
    throw Error(ErrorCode::kInvalidArgument, "'" + prefix + "': the trajectory " + traj_name + ".cfl/.hdr is missing");
  io::RawData d;
  io::BartKspace k = io::read_cfl_kspace(ksp_name);
  io::BartTrajectory t = io::read_cfl_trajectory(traj_name);
  if (t.samples != k.samples || t.spokes != k.spokes)
    throw Error(ErrorCode::kShapeMismatch, traj_name + ": " + std::to_string(t.samples) + " x " +
                                               std::to_string(t.spokes) + " samples, the k-space has " +
                                               std::to_string(k.samples) + " x " + std::to_string(k.spokes));
  const std::int64_t m = k.samples * k.spokes;
  d.coils = k.coils;
  d.data = std::move(k.data);  // complex float, as RawData holds it
  d.readouts.assign(static_cast<std::size_t>(k.spokes), k.samples);
  d.kx.assign(t.k[0].begin(), t.k[0].end());
  d.ky.assign(t.k[1].begin(), t.k[1].end());
  d.dim = t.dim;
  if (t.dim == 3) d.kz.assign(t.k[2].begin(), t.k[2].end());
  if (cfl_exists(prefix + "_times")) {
    auto a = io::read_cfl(prefix + "_times");
    require_sample_array(a, k.samples, k.spokes, prefix + "_times");
    d.times = real_parts(a, prefix + "_times");
  }
  d.shots.assign(static_cast<std::size_t>(m), 0);
  if (cfl_exists(prefix + "_shots")) {
    auto a = io::read_cfl(prefix + "_shots");
    require_sample_array(a, k.samples, k.spokes, prefix + "_shots");
    const auto v = real_parts(a, prefix + "_shots");
    std::int64_t most = 0;
    for (std::size_t j = 0; j < v.size(); ++j) {
      if (v[j] < 0 || v[j] > 1e6 || v[j] != std::floor(v[j]))
        throw Error(ErrorCode::kInvalidArgument, prefix + "_shots: label " + std::to_string(v[j]) + " at sample " +
                                                     std::to_string(j) + " is not an integer in [0, 1e6]");
      d.shots[j] = static_cast<std::int32_t>(v[j]);
      most = std::max<std::int64_t>(most, d.shots[j]);
    }
    d.num_shots = most + 1;
  }
  // The grid: from an image-shaped companion, else --matrix, else the trajectory's extent.
  bool have_grid = false;
  const auto take_grid = [&](const std::string& part, std::int64_t expect_k, const char* what) {
    const std::string name = prefix + "_" + part;
    if (!cfl_exists(name)) return std::optional<io::CflArray>();
    io::CflArray a = io::read_cfl(name);
    std::int64_t kk = 1;
    const auto g = image_grid(a.dims, kk);
    std::int64_t prod = 1;
    for (auto x : a.dims) prod *= x;
    if (prod != g[0] * g[1] * g[2] * kk || (expect_k > 0 && kk != expect_k))
      throw Error(ErrorCode::kShapeMismatch, name + ": expected " + what + " of dimensions [Nx, Ny, Nz" +
                                                 (expect_k > 0 ? ", " + std::to_string(expect_k) : std::string()) + "]");
    if (have_grid && g != d.grid)
      throw Error(ErrorCode::kShapeMismatch, name + ": its image grid differs from the other maps'");
    d.grid = g;
    have_grid = true;
    return std::optional<io::CflArray>(std::move(a));
  };
  if (auto a = take_grid("maps", d.coils, "coil maps")) d.coil_maps = std::move(a->data);
  if (auto a = take_grid("field", 1, "a field map")) d.field_map = real_parts(*a, prefix + "_field");
  if (auto a = take_grid("phase", d.num_shots, "one phase map per shot"))
    d.phase_maps = real_parts(*a, prefix + "_phase");
  if (auto a = take_grid("truth", 1, "one image")) d.truth.assign(a->data.begin(), a->data.end());
  if (!have_grid) {
    const std::vector<double>* ks[3] = {&d.kx, &d.ky, &d.kz};
    for (int a = 0; a < 3; ++a) {
      if (a >= d.dim) break;
      if (matrix[static_cast<std::size_t>(a)] > 0) {
        d.grid[static_cast<std::size_t>(a)] = matrix[static_cast<std::size_t>(a)];
        continue;
      }
      double most = 0;
      for (double v : *ks[a]) most = std::max(most, std::abs(v));
      d.grid[static_cast<std::size_t>(a)] = std::max<std::int64_t>(2, 2 * static_cast<std::int64_t>(std::ceil(most - 1e-6)));
    }
  }
  if (d.dim == 2 && d.grid[2] != 1)
    throw Error(ErrorCode::kShapeMismatch, prefix + ": 3D maps (Nz = " + std::to_string(d.grid[2]) + ") for a 2D trajectory");
  if (d.dim == 2 && d.grid[2] == 1 && have_grid && !d.kz.empty()) d.kz.clear();
  if (d.dim == 3 && d.grid[2] == 1)
    throw Error(ErrorCode::kShapeMismatch, prefix + ": a 3D trajectory but 2D maps (Nz = 1)");
  for (int a = 0; a < 3; ++a) d.fov_mm[static_cast<std::size_t>(a)] = 0;
  io::validate(d, prefix);
  return d;
}

io::RawData read_dataset(const std::string& path, std::array<std::int64_t, 3> matrix, const std::string& traj) {
  if (is_ismrmrd_path(path)) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec))
      throw Error(ErrorCode::kInvalidArgument, "'" + path + "' does not exist");
    return io::read_ismrmrd(path);
  }
  const std::string base = io::cfl_base(path);
  if (!traj.empty() && !ends_with(base, "_ksp") && cfl_exists(base))
    return read_cfl_set(base, io::cfl_base(traj), base, matrix);  // BART naming: ksp + traj, no companions
  return read_cfl_dataset(cfl_prefix(path), matrix, traj);
}

std::string grid_text(const io::RawData& d) {
  std::string s = std::to_string(d.grid[0]) + "x" + std::to_string(d.grid[1]);
  if (d.dim == 3) s += "x" + std::to_string(d.grid[2]);
  return s;
}

}  // namespace fieldft::cli
