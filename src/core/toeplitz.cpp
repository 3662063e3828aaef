// The cost model of the Toeplitz normal operator (src/core/toeplitz.hpp).
#include "core/toeplitz.hpp"

#include <cmath>
#include <cstdio>
#include <string>

#include "fieldft/error.hpp"

namespace fieldft::core {

namespace {

// L·log2 L for one 1D transform of length L (0 for L = 1: nothing to transform).
double butterfly_units(std::int64_t l) {
  return l > 1 ? static_cast<double>(l) * std::log2(static_cast<double>(l)) : 0.0;
}

double nufft_units(const NufftShape& s, int dim, std::int64_t samples) {
  double cells = 1, fft = 0, footprint = 1;
  for (int d = 0; d < dim; ++d) cells *= static_cast<double>(s.fine_grid[d]);
  for (int d = 0; d < dim; ++d) {
    fft += cells / static_cast<double>(s.fine_grid[d]) * butterfly_units(s.fine_grid[d]);
    footprint *= s.kernel_width;
  }
  return fft + cells + kSpreadUnitsPerCell * static_cast<double>(samples) * footprint;
}

}  // namespace

double toeplitz_fft_units(const ToeplitzGeometry& g) {
  const auto l = g.padded();
  double units = 0;
  for (int a = 0; a < (g.stacked ? g.dim - 1 : g.dim); ++a) {
    double lines = 1;  // the 1D transforms of the pass along axis a
    for (int b = 0; b < g.dim; ++b)
      if (b != a) lines *= static_cast<double>(b < a ? l[b] : g.n[b]);
    units += lines * butterfly_units(l[a]);
  }
  return units;
}

std::string toeplitz_grid_string(const ToeplitzGeometry& g) {
  const auto l = g.padded();
  std::string s, axes;
  // Appended piece by piece: GCC 12's -Wrestrict misfires on `const char* + std::string&&`.
  for (int d = 0; d < g.dim; ++d) {
    if (d) s += 'x';
    s += std::to_string(l[d]);
    if (g.periodic[d]) {
      if (!axes.empty()) axes += ',';
      axes += "xyz"[d];
    }
  }
  if (axes.empty()) return s;
  s += " (" + axes + " periodic";
  if (g.stacked) s += std::string(", ") + "xyz"[g.dim - 1] + " stacked";
  return s + ")";
}

std::int64_t toeplitz_chunk(const ToeplitzGeometry& g, std::size_t complex_bytes) {
  const double grid = static_cast<double>(g.padded_cells()) * static_cast<double>(complex_bytes);
  const double fit = std::floor((g.chunk_bytes > 0 ? g.chunk_bytes : kToeplitzChunkBytes) / grid);
  const std::int64_t batch = g.batch > 1 ? g.batch : 1;
  const std::int64_t most = fit < 1 ? 1 : fit >= static_cast<double>(batch) ? batch : static_cast<std::int64_t>(fit);
  const std::int64_t chunks = (batch + most - 1) / most;
  return (batch + chunks - 1) / chunks;
}

void check_chunk_bytes(double chunk_bytes, const std::string& who) {
  require(std::isfinite(chunk_bytes) && chunk_bytes >= 0, ErrorCode::kInvalidArgument,
          who + ": options.chunk_bytes is " + std::to_string(chunk_bytes) + ", expected a finite value >= 0 (0: " +
              std::to_string(static_cast<long long>(kToeplitzChunkBytes)) + " bytes)");
}

ToeplitzChoice choose_toeplitz(const ToeplitzGeometry& g, const NufftShape& forward, const NufftShape& adjoint,
                               std::int64_t samples, std::size_t complex_bytes) {
  ToeplitzChoice c;
  const double cells = static_cast<double>(g.padded_cells());
  c.toeplitz_units = 2 * toeplitz_fft_units(g) + 3 * cells;
  c.nufft_units = nufft_units(forward, g.dim, samples) + nufft_units(adjoint, g.dim, samples);
  const double bytes = cells * static_cast<double>(g.batch) * static_cast<double>(complex_bytes);
  char buf[200];
  if (bytes > kToeplitzAutoMaxBytes) {
    std::snprintf(buf, sizeof buf, "NUFFT: the Toeplitz grid would take %.1f GiB, above the %.0f GiB of kAuto",
                  bytes / (1ull << 30), kToeplitzAutoMaxBytes / (1ull << 30));
  } else {
    c.toeplitz = c.toeplitz_units < c.nufft_units;
    std::snprintf(buf, sizeof buf, "%s: Toeplitz %.3g %s NUFFT %.3g work units per image",
                  c.toeplitz ? "Toeplitz" : "NUFFT", c.toeplitz_units, c.toeplitz ? "<" : ">=", c.nufft_units);
  }
  c.reason = buf;
  return c;
}

}  // namespace fieldft::core
