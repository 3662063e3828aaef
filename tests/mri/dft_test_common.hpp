// Common pieces of the field-corrected DFT battery, compiled once per backend
// (support/battery.hpp: fieldft_test_mri_cpu runs kCpu, fieldft_test_mri_gpu kCuda).
#pragma once

#include <memory>
#include <numbers>

#include "fieldft/config.hpp"
#include "fieldft/mri/dft.hpp"
#include "support/battery.hpp"

namespace fieldft::test {

inline mri::DftOptions dft_options(std::int64_t images = 1) {
  mri::DftOptions o;
  o.backend = kBackend;
  o.images = images;
  return o;
}

// A field-corrected DFT problem: values of precision T (what the operator reads) and the same
// values in double (what the oracle reads), so that comparisons measure the transform only.
template <class T>
struct DftProblem {
  int dim = 3;
  std::vector<std::int64_t> grid;
  std::int64_t voxels = 0, samples = 0;
  std::vector<T> kx, ky, kz, field, times;
  reference::Points ksp, pos;
  std::vector<double> field_d, times_d;

  std::span<const T> kz_span() const { return dim == 3 ? std::span<const T>(kz) : std::span<const T>(); }
};

enum class FieldKind {
  kRandom,  // independent per voxel, uniform in ±field_hz: the hardest case per pair
  kSmooth,  // a linear ramp plus a quadratic bump reaching ±field_hz
};

// Voxel positions r_d = (i_d − ⌊N_d/2⌋)/N_d, x fastest (the operator's grid).
inline reference::Points grid_positions(std::span<const std::int64_t> grid) {
  reference::Points p;
  p.dim = static_cast<int>(grid.size());
  const std::int64_t nx = grid[0], ny = grid[1], nz = grid.size() == 3 ? grid[2] : 1;
  for (std::int64_t z = 0; z < nz; ++z)
    for (std::int64_t y = 0; y < ny; ++y)
      for (std::int64_t x = 0; x < nx; ++x) {
        p.x.push_back(static_cast<double>(x - nx / 2) / static_cast<double>(nx));
        p.y.push_back(static_cast<double>(y - ny / 2) / static_cast<double>(ny));
        if (p.dim == 3) p.z.push_back(static_cast<double>(z - nz / 2) / static_cast<double>(nz));
      }
  return p;
}

// Random trajectory uniform over [−N_d/2, N_d/2) per axis, readout times uniform in [0, tmax),
// field map in ±field_hz (Δω = 2π·f).
template <class T>
DftProblem<T> make_dft_problem(std::vector<std::int64_t> grid, std::int64_t samples, std::uint64_t seed,
                               double field_hz = 50.0, double tmax = 0.041,
                               FieldKind kind = FieldKind::kRandom) {
  DftProblem<T> p;
  p.dim = static_cast<int>(grid.size());
  p.grid = grid;
  p.samples = samples;
  p.voxels = 1;
  for (auto g : grid) p.voxels *= g;
  Rng rng(seed);
  std::vector<T>* ks[3] = {&p.kx, &p.ky, &p.kz};
  std::vector<double>* kd[3] = {&p.ksp.x, &p.ksp.y, &p.ksp.z};
  p.ksp.dim = p.dim;
  for (int d = 0; d < p.dim; ++d) {
    const double half = static_cast<double>(grid[d]) / 2;
    for (std::int64_t j = 0; j < samples; ++j) {
      const T v = static_cast<T>(rng.uniform(-half, half));
      ks[d]->push_back(v);
      kd[d]->push_back(static_cast<double>(v));
    }
  }
  for (std::int64_t j = 0; j < samples; ++j) {
    const T t = static_cast<T>(rng.uniform(0.0, tmax));
    p.times.push_back(t);
    p.times_d.push_back(static_cast<double>(t));
  }
  p.pos = grid_positions(grid);
  for (std::int64_t v = 0; v < p.voxels; ++v) {
    double f;
    if (kind == FieldKind::kRandom) {
      f = rng.uniform(-field_hz, field_hz);
    } else {
      const double x = p.pos.x[v], y = p.pos.y[v], z = p.dim == 3 ? p.pos.z[v] : 0.0;
      f = field_hz * (0.6 * (x + 0.3 * y - 0.2 * z) + 0.8 * (x * x + y * y + z * z) - 0.2);
    }
    const T w = static_cast<T>(2 * std::numbers::pi * f);
    p.field.push_back(w);
    p.field_d.push_back(static_cast<double>(w));
  }
  return p;
}

template <class T>
std::unique_ptr<mri::Dft<T>> make_dft(const DftProblem<T>& p, std::int64_t images = 1) {
  return std::make_unique<mri::Dft<T>>(p.grid, std::span<const T>(p.kx), std::span<const T>(p.ky),
                                       p.kz_span(), std::span<const T>(p.field),
                                       std::span<const T>(p.times), dft_options(images));
}

// The oracle at a subset of outputs: the forward at the samples `which` (all voxels), or the
// adjoint at the voxels `which` (all samples).
template <class T>
std::vector<cdouble> oracle_forward_at(const DftProblem<T>& p, std::span<const cdouble> image,
                                       std::span<const std::int64_t> which) {
  return reference::field_dft_forward_at(p.ksp, p.pos, p.field_d, p.times_d, image, which);
}

template <class T>
std::vector<cdouble> oracle_adjoint_at(const DftProblem<T>& p, std::span<const cdouble> samples,
                                       std::span<const std::int64_t> which) {
  return reference::field_dft_adjoint_at(p.ksp, p.pos, p.field_d, p.times_d, samples, which);
}

inline std::vector<std::int64_t> all_indices(std::int64_t n) {
  std::vector<std::int64_t> v(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) v[i] = i;
  return v;
}

// k distinct sorted indices in [0, n).
inline std::vector<std::int64_t> index_subset(std::int64_t n, std::int64_t k, std::uint64_t seed) {
  if (k >= n) return all_indices(n);
  Rng rng(seed);
  std::vector<char> taken(static_cast<std::size_t>(n), 0);
  std::vector<std::int64_t> v;
  while (static_cast<std::int64_t>(v.size()) < k) {
    const std::int64_t i = rng.integer(0, n - 1);
    if (!taken[i]) {
      taken[i] = 1;
      v.push_back(i);
    }
  }
  std::sort(v.begin(), v.end());
  return v;
}

// Values of image c of a stacked vector, widened to double, at the given indices.
template <class T>
std::vector<cdouble> pick(const std::vector<std::complex<T>>& v, std::int64_t offset,
                          std::span<const std::int64_t> which) {
  std::vector<cdouble> out;
  out.reserve(which.size());
  for (auto i : which) out.emplace_back(v[offset + i]);
  return out;
}

// A "realistic" image: positive magnitude with a slowly varying phase. Unlike zero-mean noise,
// it sums coherently, so any bias of the sine/cosine approximation shows up.
template <class T>
std::vector<std::complex<T>> positive_image(std::int64_t n, std::uint64_t seed) {
  Rng rng(seed);
  std::vector<std::complex<T>> v(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i)
    v[i] = std::polar(static_cast<T>(1.0 + 0.5 * rng.uniform()), static_cast<T>(0.3 * std::sin(0.01 * i)));
  return v;
}

}  // namespace fieldft::test
