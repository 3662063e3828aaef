// fieldft::mri simulation (fieldft/mri/simulate.hpp): phantoms, trajectories, coil maps, field
// maps and noise, in double on the host.
#include "fieldft/mri/simulate.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numbers>
#include <string>

#include "fieldft/error.hpp"

namespace fieldft::mri {

namespace {

constexpr double kPi = std::numbers::pi;

// The modified Shepp–Logan head (sources in the header). Columns: value, centre (x0, y0, z0),
// semi-axes (a, b, c), rotation about z in degrees. In 2D z0 and c are unused.
constexpr Ellipse kSheppLogan2d[] = {
    {1.0, {0, 0, 0}, {0.69, 0.92, 1}, 0},
    {-0.8, {0, -0.0184, 0}, {0.6624, 0.874, 1}, 0},
    {-0.2, {0.22, 0, 0}, {0.11, 0.31, 1}, -18},
    {-0.2, {-0.22, 0, 0}, {0.16, 0.41, 1}, 18},
    {0.1, {0, 0.35, 0}, {0.21, 0.25, 1}, 0},
    {0.1, {0, 0.1, 0}, {0.046, 0.046, 1}, 0},
    {0.1, {0, -0.1, 0}, {0.046, 0.046, 1}, 0},
    {0.1, {-0.08, -0.605, 0}, {0.046, 0.023, 1}, 0},
    {0.1, {0, -0.606, 0}, {0.023, 0.023, 1}, 0},
    {0.1, {0.06, -0.605, 0}, {0.023, 0.046, 1}, 0},
};

constexpr Ellipse kSheppLogan3d[] = {
    {1.0, {0, 0, 0}, {0.69, 0.92, 0.81}, 0},
    {-0.8, {0, -0.0184, 0}, {0.6624, 0.874, 0.78}, 0},
    {-0.2, {0.22, 0, 0}, {0.11, 0.31, 0.22}, -18},
    {-0.2, {-0.22, 0, 0}, {0.16, 0.41, 0.28}, 18},
    {0.1, {0, 0.35, -0.15}, {0.21, 0.25, 0.41}, 0},
    {0.1, {0, 0.1, 0.25}, {0.046, 0.046, 0.05}, 0},
    {0.1, {0, -0.1, 0.25}, {0.046, 0.046, 0.05}, 0},
    {0.1, {-0.08, -0.605, 0}, {0.046, 0.023, 0.05}, 0},
    {0.1, {0, -0.606, 0}, {0.023, 0.023, 0.02}, 0},
    {0.1, {0.06, -0.605, 0}, {0.023, 0.046, 0.02}, 0},
};

struct Grid {
  int dim = 0;
  std::array<std::int64_t, 3> n{1, 1, 1};
  std::int64_t voxels = 1;
};

std::int64_t checked_mul(std::int64_t a, std::int64_t b, const std::string& who, const char* what) {
  std::int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r))
    throw Error(ErrorCode::kTooLarge, who + ": " + what + " overflows 64 bits (" + std::to_string(a) + " x " +
                                          std::to_string(b) + ")");
  return r;
}

Grid check_grid(std::span<const std::int64_t> grid, const std::string& who) {
  require(grid.size() == 2 || grid.size() == 3, ErrorCode::kInvalidArgument,
          who + ": the grid must have 2 or 3 sizes ({Nx, Ny} or {Nx, Ny, Nz}), got " + std::to_string(grid.size()));
  Grid g;
  g.dim = static_cast<int>(grid.size());
  for (int d = 0; d < g.dim; ++d) {
    require(grid[d] >= 1, ErrorCode::kInvalidArgument,
            who + ": grid size " + std::to_string(d) + " is " + std::to_string(grid[d]) + ", expected >= 1");
    g.n[d] = grid[d];
    g.voxels = checked_mul(g.voxels, grid[d], who, "the number of voxels");
  }
  return g;
}

void require_range(double v, double lo, double hi, bool lo_open, const std::string& who, const char* name) {
  const bool ok = std::isfinite(v) && (lo_open ? v > lo : v >= lo) && v <= hi;
  if (ok) return;
  std::string range = std::string(lo_open ? "(" : "[") + std::to_string(lo) + ", " +
                      (std::isinf(hi) ? std::string("inf)") : std::to_string(hi) + "]");
  throw Error(ErrorCode::kInvalidArgument,
              who + ": " + name + " is " + std::to_string(v) + ", expected a finite value in " + range);
}

void require_count(std::int64_t v, bool zero_is_default, const std::string& who, const char* name) {
  require(v >= 1 || (zero_is_default && v == 0), ErrorCode::kInvalidArgument,
          who + ": " + name + " is " + std::to_string(v) + ", expected >= 1" +
              (zero_is_default ? " (or 0 for the default)" : ""));
}

// u_d of sub-sample s (of k per axis) of voxel i on an axis of n voxels: half-FOV units, the
// sub-samples centred in the voxel. The expression keeps the CLI demo's phantom bit for bit.
double subsample_coordinate(std::int64_t i, std::int64_t n, int s, int k) {
  return (static_cast<double>(i - n / 2) + (s + 0.5) / k - 0.5) * (2.0 / static_cast<double>(n));
}

// Voxel centre in half-FOV units: 2 r_d.
double voxel_coordinate(std::int64_t i, std::int64_t n) {
  return 2.0 * static_cast<double>(i - n / 2) / static_cast<double>(n);
}

// SplitMix64 (Steele, Lea & Flood, "Fast splittable pseudorandom number generators", OOPSLA
// 2014): a fixed, platform-independent sequence for a seed.
class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // (0, 1]: the top 53 bits, never 0 (Box–Muller takes its logarithm).
  double open_unit() { return (static_cast<double>(next() >> 11) + 1.0) * 0x1.0p-53; }
  double uniform(double lo, double hi) { return lo + (hi - lo) * (static_cast<double>(next() >> 11) * 0x1.0p-53); }

 private:
  std::uint64_t state_;
};

// The stack layout of a 2D pattern: kx, ky of one plane repeated on the kz planes of a 3D grid.
Trajectory stacked(const Grid& g, std::int64_t interleaves, std::int64_t samples, std::vector<double> kx,
                   std::vector<double> ky, const std::string& who) {
  Trajectory t;
  t.dim = g.dim;
  t.interleaves = interleaves;
  t.samples = samples;
  t.partitions = g.dim == 3 ? g.n[2] : 1;
  if (t.partitions == 1) {
    t.kx = std::move(kx);
    t.ky = std::move(ky);
    if (g.dim == 3) t.kz.assign(t.kx.size(), 0.0);
    return t;
  }
  const std::int64_t plane = static_cast<std::int64_t>(kx.size());
  const std::int64_t total = checked_mul(plane, t.partitions, who, "the number of samples");
  t.kx.reserve(static_cast<std::size_t>(total));
  t.ky.reserve(static_cast<std::size_t>(total));
  t.kz.reserve(static_cast<std::size_t>(total));
  for (std::int64_t p = 0; p < t.partitions; ++p) {
    t.kx.insert(t.kx.end(), kx.begin(), kx.end());
    t.ky.insert(t.ky.end(), ky.begin(), ky.end());
    t.kz.insert(t.kz.end(), static_cast<std::size_t>(plane), static_cast<double>(p - t.partitions / 2));
  }
  return t;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Phantoms.

std::span<const Ellipse> shepp_logan_ellipses(int dim) {
  require(dim == 2 || dim == 3, ErrorCode::kInvalidArgument,
          "shepp_logan_ellipses: dim is " + std::to_string(dim) + ", expected 2 or 3");
  if (dim == 2) return kSheppLogan2d;
  return kSheppLogan3d;
}

std::vector<double> ellipse_phantom(std::span<const std::int64_t> grid, std::span<const Ellipse> ellipses,
                                    int subsamples) {
  const std::string who = "ellipse_phantom";
  const Grid g = check_grid(grid, who);
  require(subsamples >= 1 && subsamples <= 16, ErrorCode::kInvalidArgument,
          who + ": subsamples is " + std::to_string(subsamples) + ", expected 1 ... 16 per axis");
  struct Prepared {
    double value, x0, y0, z0, a, b, c, cos_t, sin_t;
  };
  std::vector<Prepared> es;
  for (std::size_t i = 0; i < ellipses.size(); ++i) {
    const Ellipse& e = ellipses[i];
    const std::string which = who + ": ellipse " + std::to_string(i);
    for (double v : {e.value, e.center[0], e.center[1], e.center[2], e.angle_deg})
      require(std::isfinite(v), ErrorCode::kInvalidArgument, which + " has a non-finite value, centre or angle");
    for (int d = 0; d < g.dim; ++d)
      require(std::isfinite(e.semi_axes[d]) && e.semi_axes[d] > 0, ErrorCode::kInvalidArgument,
              which + ": semi-axis " + std::to_string(d) + " is " + std::to_string(e.semi_axes[d]) +
                  ", expected a finite value > 0");
    const double t = e.angle_deg * kPi / 180;
    es.push_back({e.value, e.center[0], e.center[1], e.center[2], e.semi_axes[0], e.semi_axes[1], e.semi_axes[2],
                  std::cos(t), std::sin(t)});
  }
  // p = ((u − x0) cos φ + (v − y0) sin φ)/a, q = (−(u − x0) sin φ + (v − y0) cos φ)/b, w = (z − z0)/c.
  const auto value_at = [&es, dim = g.dim](double u, double v, double z) {
    double sum = 0;
    for (const Prepared& e : es) {
      const double du = u - e.x0, dv = v - e.y0;
      const double p = (du * e.cos_t + dv * e.sin_t) / e.a;
      const double q = (-du * e.sin_t + dv * e.cos_t) / e.b;
      double r = p * p + q * q;
      if (dim == 3) {
        const double w = (z - e.z0) / e.c;
        r += w * w;
      }
      if (r <= 1) sum += e.value;
    }
    return sum;
  };
  const int k = subsamples;
  const int kz = g.dim == 3 ? k : 1;
  const double per_voxel = static_cast<double>(k) * k * kz;
  std::vector<double> img(static_cast<std::size_t>(g.voxels));
  const std::int64_t rows = g.n[1] * g.n[2];
#pragma omp parallel for schedule(static) if (g.voxels * k * k * kz > (1 << 16))
  for (std::int64_t row = 0; row < rows; ++row) {
    const std::int64_t iy = row % g.n[1], iz = row / g.n[1];
    for (std::int64_t ix = 0; ix < g.n[0]; ++ix) {
      double s = 0;
      for (int sz = 0; sz < kz; ++sz) {
        const double z = g.dim == 3 ? subsample_coordinate(iz, g.n[2], sz, k) : 0.0;
        for (int sy = 0; sy < k; ++sy)
          for (int sx = 0; sx < k; ++sx)
            s += value_at(subsample_coordinate(ix, g.n[0], sx, k), subsample_coordinate(iy, g.n[1], sy, k), z);
      }
      img[static_cast<std::size_t>(ix + g.n[0] * row)] = s / per_voxel;
    }
  }
  return img;
}

std::vector<double> shepp_logan(std::span<const std::int64_t> grid, int subsamples) {
  const Grid g = check_grid(grid, "shepp_logan");
  return ellipse_phantom(grid, shepp_logan_ellipses(g.dim), subsamples);
}

// ---------------------------------------------------------------------------------------------
// Trajectories.

Trajectory spiral_trajectory(std::span<const std::int64_t> grid, const SpiralOptions& o) {
  const std::string who = "spiral_trajectory";
  const Grid g = check_grid(grid, who);
  require_count(o.interleaves, true, who, "options.interleaves");
  require_count(o.samples, true, who, "options.samples");
  require_range(o.oversampling, 0, 1e6, true, who, "options.oversampling");
  require_range(o.reach, 0, 2, true, who, "options.reach");
  const double n = static_cast<double>(std::max(g.n[0], g.n[1]));
  const std::int64_t l = o.interleaves > 0 ? o.interleaves : std::max<std::int64_t>(1, std::max(g.n[0], g.n[1]) / 8);
  // turns·L·(arm spacing) = R: arms 1/oversampling apart at radius R = reach·N/2.
  const double turns = (o.oversampling * o.reach * n) / (2.0 * static_cast<double>(l));
  std::int64_t s = o.samples;
  if (s == 0) {
    // |dk/dτ| <= 2π·turns·R (reached at the edge): samples 1 cycle/FOV apart there.
    const double speed = 2 * kPi * turns * (o.reach * n) / 2;
    require(speed < 1e15, ErrorCode::kTooLarge, who + ": the default samples per interleave overflow");
    s = std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(speed)));
  }
  const std::int64_t m = checked_mul(l, s, who, "the number of samples");
  const double rx = o.reach * static_cast<double>(g.n[0]) / 2, ry = o.reach * static_cast<double>(g.n[1]) / 2;
  std::vector<double> kx(static_cast<std::size_t>(m)), ky(static_cast<std::size_t>(m));
  for (std::int64_t a = 0; a < l; ++a)
    for (std::int64_t j = 0; j < s; ++j) {
      const double tau = static_cast<double>(j) / static_cast<double>(s);
      const double theta = 2 * kPi * (static_cast<double>(a) / static_cast<double>(l) + turns * tau);
      kx[static_cast<std::size_t>(j + s * a)] = rx * tau * std::cos(theta);
      ky[static_cast<std::size_t>(j + s * a)] = ry * tau * std::sin(theta);
    }
  return stacked(g, l, s, std::move(kx), std::move(ky), who);
}

Trajectory radial_trajectory(std::span<const std::int64_t> grid, const RadialOptions& o) {
  const std::string who = "radial_trajectory";
  const Grid g = check_grid(grid, who);
  require_count(o.spokes, true, who, "options.spokes");
  require_count(o.samples, true, who, "options.samples");
  const std::int64_t n = std::max(g.n[0], g.n[1]);
  // Nyquist between spokes at the edge: 2πR/L <= 1 (centre-out), πR/L <= 1 (diameters), R = N/2.
  const std::int64_t half_turn = static_cast<std::int64_t>(std::ceil(kPi * static_cast<double>(n) / 2));
  const std::int64_t l = o.spokes > 0 ? o.spokes : (o.centre_out ? 2 * half_turn : half_turn);
  const std::int64_t s = o.samples > 0 ? o.samples : (o.centre_out ? n : 2 * n);
  const std::int64_t m = checked_mul(l, s, who, "the number of samples");
  const double rx = static_cast<double>(g.n[0]) / 2, ry = static_cast<double>(g.n[1]) / 2;
  std::vector<double> kx(static_cast<std::size_t>(m)), ky(static_cast<std::size_t>(m));
  for (std::int64_t a = 0; a < l; ++a) {
    const double theta = (o.centre_out ? 2 * kPi : kPi) * static_cast<double>(a) / static_cast<double>(l);
    const double c = std::cos(theta), sn = std::sin(theta);
    for (std::int64_t j = 0; j < s; ++j) {
      const double tau = o.centre_out ? static_cast<double>(j) / static_cast<double>(s)
                                      : 2 * static_cast<double>(j) / static_cast<double>(s) - 1;
      kx[static_cast<std::size_t>(j + s * a)] = rx * tau * c;
      ky[static_cast<std::size_t>(j + s * a)] = ry * tau * sn;
    }
  }
  return stacked(g, l, s, std::move(kx), std::move(ky), who);
}

std::vector<double> readout_times(const Trajectory& t, double dwell_s, double start_s) {
  const std::string who = "readout_times";
  require_range(dwell_s, 0, std::numeric_limits<double>::infinity(), false, who, "dwell_s");
  require_range(start_s, -std::numeric_limits<double>::max(), std::numeric_limits<double>::infinity(), false, who,
                "start_s");
  require(t.samples >= 1 && t.size() % t.samples == 0, ErrorCode::kInvalidArgument,
          who + ": the trajectory has " + std::to_string(t.size()) + " samples and " + std::to_string(t.samples) +
              " per readout; expected a whole number of readouts");
  std::vector<double> out(static_cast<std::size_t>(t.size()));
  for (std::int64_t j = 0; j < t.size(); ++j)
    out[static_cast<std::size_t>(j)] = start_s + static_cast<double>(j % t.samples) * dwell_s;
  return out;
}

// ---------------------------------------------------------------------------------------------
// Coil sensitivities and field maps.

std::vector<std::complex<double>> coil_maps(std::span<const std::int64_t> grid, std::int64_t coils,
                                            const CoilOptions& o) {
  const std::string who = "coil_maps";
  const Grid g = check_grid(grid, who);
  require_count(coils, false, who, "coils");
  const double inf = std::numeric_limits<double>::infinity();
  require_range(o.radius, 0, inf, true, who, "options.radius");
  require_range(o.width, 0, inf, true, who, "options.width");
  require_range(o.phase, -std::numeric_limits<double>::max(), inf, false, who, "options.phase");
  const std::int64_t total = checked_mul(g.voxels, coils, who, "voxels x coils");
  std::vector<std::complex<double>> maps(static_cast<std::size_t>(total));
  const double inv_w2 = 1 / (o.width * o.width);
#pragma omp parallel for schedule(static) if (total > (1 << 15))
  for (std::int64_t v = 0; v < g.voxels; ++v) {
    const double u = voxel_coordinate(v % g.n[0], g.n[0]);
    const double w = voxel_coordinate((v / g.n[0]) % g.n[1], g.n[1]);
    const double z = g.dim == 3 ? voxel_coordinate(v / (g.n[0] * g.n[1]), g.n[2]) : 0.0;
    double sum2 = 0;
    for (std::int64_t c = 0; c < coils; ++c) {
      const double a = 2 * kPi * static_cast<double>(c) / static_cast<double>(coils);
      const double ca = std::cos(a), sa = std::sin(a);
      const double dx = u - o.radius * ca, dy = w - o.radius * sa;
      const double mag = std::exp(-(dx * dx + dy * dy + z * z) * inv_w2);
      const auto s = std::polar(mag, a + o.phase * (u * ca + w * sa));
      maps[static_cast<std::size_t>(v + g.voxels * c)] = s;
      sum2 += mag * mag;
    }
    if (o.normalize) {
      // sum2 > 0 always: each Gaussian is positive (and >= exp(−(2 + radius)²·3/width²)).
      const double inv = 1 / std::sqrt(sum2);
      for (std::int64_t c = 0; c < coils; ++c) maps[static_cast<std::size_t>(v + g.voxels * c)] *= inv;
    }
  }
  return maps;
}

std::vector<double> field_map(std::span<const std::int64_t> grid, const FieldMapOptions& o) {
  const std::string who = "field_map";
  const Grid g = check_grid(grid, who);
  require_range(o.max_hz, 0, 1e9, false, who, "options.max_hz");
  require(o.blobs >= 1, ErrorCode::kInvalidArgument,
          who + ": options.blobs is " + std::to_string(o.blobs) + ", expected >= 1");
  struct Blob {
    double c[3], inv_w2, amp;
  };
  SplitMix64 rng(o.seed);
  std::vector<Blob> blobs;
  for (int b = 0; b < o.blobs; ++b) {
    Blob x{};
    for (int d = 0; d < 3; ++d) x.c[d] = d < g.dim ? rng.uniform(-0.5, 0.5) : 0.0;
    const double w = rng.uniform(0.2, 0.5);
    x.inv_w2 = 1 / (w * w);
    x.amp = rng.uniform(0.5, 1.0) * (b % 2 == 0 ? 1 : -1);  // alternating signs: both ±
    blobs.push_back(x);
  }
  std::vector<double> f(static_cast<std::size_t>(g.voxels));
  double peak = 0;
  for (std::int64_t v = 0; v < g.voxels; ++v) {
    const double u[3] = {voxel_coordinate(v % g.n[0], g.n[0]), voxel_coordinate((v / g.n[0]) % g.n[1], g.n[1]),
                         g.dim == 3 ? voxel_coordinate(v / (g.n[0] * g.n[1]), g.n[2]) : 0.0};
    double s = 0;
    for (const Blob& b : blobs) {
      double r2 = 0;
      for (int d = 0; d < g.dim; ++d) r2 += (u[d] - b.c[d]) * (u[d] - b.c[d]);
      s += b.amp * std::exp(-r2 * b.inv_w2);
    }
    f[static_cast<std::size_t>(v)] = s;
    peak = std::max(peak, std::abs(s));
  }
  // peak > 0: a sum of Gaussians with random real amplitudes vanishes at every voxel with
  // probability 0; guard anyway.
  const double scale = peak > 0 ? 2 * kPi * o.max_hz / peak : 0.0;
  for (double& x : f) x *= scale;
  if (o.susceptibility_hz != 0) {
    require_range(o.susceptibility_hz, -1e9, 1e9, false, who, "options.susceptibility_hz");
    require_range(o.susceptibility_width, 0, 1e3, true, who, "options.susceptibility_width");
    for (int d = 0; d < 3; ++d)
      require_range(o.susceptibility_center[d], -1e3, 1e3, false, who, "options.susceptibility_center");
    const double inv_w2 = 1 / (o.susceptibility_width * o.susceptibility_width);
    for (std::int64_t v = 0; v < g.voxels; ++v) {
      const double u[3] = {voxel_coordinate(v % g.n[0], g.n[0]), voxel_coordinate((v / g.n[0]) % g.n[1], g.n[1]),
                           g.dim == 3 ? voxel_coordinate(v / (g.n[0] * g.n[1]), g.n[2]) : 0.0};
      double r2 = 0;
      for (int d = 0; d < g.dim; ++d) r2 += (u[d] - o.susceptibility_center[d]) * (u[d] - o.susceptibility_center[d]);
      f[static_cast<std::size_t>(v)] += 2 * kPi * o.susceptibility_hz * std::exp(-r2 * inv_w2);
    }
  }
  return f;
}

// ---------------------------------------------------------------------------------------------
// Multi-shot phase.

std::vector<double> shot_phase_maps(std::span<const std::int64_t> grid, std::int64_t shots,
                                    const ShotPhaseOptions& o) {
  const std::string who = "shot_phase_maps";
  const Grid g = check_grid(grid, who);
  require_count(shots, false, who, "shots");
  require_range(o.max_phase, 0, 1e6, false, who, "options.max_phase");
  const std::int64_t total = checked_mul(g.voxels, shots, who, "voxels x shots");
  std::vector<double> phi(static_cast<std::size_t>(total));
  SplitMix64 rng(o.seed);
  for (std::int64_t s = 0; s < shots; ++s) {
    // a, b_d, q_de (d <= e) for the dim axes, drawn in this order.
    const double a = rng.uniform(-1, 1);
    double b[3] = {0, 0, 0}, q[3][3] = {};
    for (int d = 0; d < g.dim; ++d) b[d] = rng.uniform(-1, 1);
    for (int d = 0; d < g.dim; ++d)
      for (int e = d; e < g.dim; ++e) q[d][e] = rng.uniform(-1, 1);
    double* f = phi.data() + g.voxels * s;
    double peak = 0;
    for (std::int64_t v = 0; v < g.voxels; ++v) {
      const double u[3] = {voxel_coordinate(v % g.n[0], g.n[0]), voxel_coordinate((v / g.n[0]) % g.n[1], g.n[1]),
                           g.dim == 3 ? voxel_coordinate(v / (g.n[0] * g.n[1]), g.n[2]) : 0.0};
      double p = a;
      for (int d = 0; d < g.dim; ++d) {
        p += b[d] * u[d];
        for (int e = d; e < g.dim; ++e) p += q[d][e] * u[d] * u[e];
      }
      f[v] = p;
      peak = std::max(peak, std::abs(p));
    }
    // peak > 0 but for coefficients that cancel exactly at every voxel (probability 0); guard.
    const double scale = peak > 0 ? o.max_phase / peak : 0.0;
    for (std::int64_t v = 0; v < g.voxels; ++v) f[v] *= scale;
  }
  return phi;
}

std::vector<std::int32_t> shot_labels(const Trajectory& t, std::int64_t shots) {
  const std::string who = "shot_labels";
  require(t.interleaves >= 1 && t.samples >= 1 && t.partitions >= 1, ErrorCode::kInvalidArgument,
          who + ": the trajectory has " + std::to_string(t.interleaves) + " interleaves of " +
              std::to_string(t.samples) + " samples in " + std::to_string(t.partitions) +
              " partitions; expected each >= 1");
  const std::int64_t per_partition = checked_mul(t.interleaves, t.samples, who, "the number of samples");
  require(t.size() == checked_mul(per_partition, t.partitions, who, "the number of samples"),
          ErrorCode::kInvalidArgument,
          who + ": the trajectory has " + std::to_string(t.size()) + " samples, expected interleaves x samples x " +
              "partitions = " + std::to_string(t.interleaves) + " x " + std::to_string(t.samples) + " x " +
              std::to_string(t.partitions));
  const std::int64_t most = std::min<std::int64_t>(t.interleaves, std::numeric_limits<std::int32_t>::max());
  require(shots >= 1 && shots <= most, ErrorCode::kInvalidArgument,
          who + ": shots is " + std::to_string(shots) + ", expected 1 ... " + std::to_string(most) +
              " (at most the trajectory's interleaves: each shot needs at least one)");
  std::vector<std::int32_t> labels(static_cast<std::size_t>(t.size()));
  for (std::int64_t j = 0; j < t.size(); ++j)
    labels[static_cast<std::size_t>(j)] = static_cast<std::int32_t>(((j / t.samples) % t.interleaves) % shots);
  return labels;
}

// ---------------------------------------------------------------------------------------------
// Noise.

template <class T>
void add_noise(std::span<std::complex<T>> data, double sigma, std::uint64_t seed) {
  require_range(sigma, 0, std::numeric_limits<double>::infinity(), false, "add_noise", "sigma");
  SplitMix64 rng(seed);
  // Box–Muller: r = sqrt(−2 ln U1), (r cos 2πU2, r sin 2πU2) are two independent N(0, 1);
  // scaled by sigma/√2 each part has variance sigma²/2, so E|n|² = sigma².
  const double scale = sigma / std::numbers::sqrt2;
  for (auto& z : data) {
    const double r = std::sqrt(-2 * std::log(rng.open_unit()));
    const double t = 2 * kPi * rng.open_unit();
    z += std::complex<T>(static_cast<T>(scale * r * std::cos(t)), static_cast<T>(scale * r * std::sin(t)));
  }
}

template void add_noise<float>(std::span<std::complex<float>>, double, std::uint64_t);
template void add_noise<double>(std::span<std::complex<double>>, double, std::uint64_t);

}  // namespace fieldft::mri
