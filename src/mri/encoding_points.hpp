// The NUFFT coordinates of an encoding's samples, shared by the plans made on an Encoding
// (NufftEncoding, density compensation).
#pragma once

#include <array>
#include <cstdint>
#include <numbers>
#include <vector>

#include "fieldft/mri/encoding.hpp"

namespace fieldft::mri::detail {

// x_d = 2π k_d / N_d in radians for d < dim (in [−π, π] for k in range; empty for unused axes),
// computed in double: with the image grid as the modes, k·x_d = 2π k_d r_d (encoding.hpp), and
// one period of x is one period N_d of the encoding's k-space.
template <class T>
std::array<std::vector<T>, 3> nufft_points(const Encoding<T>& e) {
  std::array<std::vector<T>, 3> x;
  const std::int64_t m = e.num_samples();
  for (int d = 0; d < e.dim(); ++d) {
    const auto k = e.k(d);
    const double scale = 2 * std::numbers::pi / static_cast<double>(e.grid()[d]);
    x[d].resize(static_cast<std::size_t>(m));
    for (std::int64_t j = 0; j < m; ++j) x[d][j] = static_cast<T>(scale * static_cast<double>(k[j]));
  }
  return x;
}

}  // namespace fieldft::mri::detail
