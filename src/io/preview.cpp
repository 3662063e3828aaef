#include "io/preview.hpp"

#include <algorithm>
#include <cmath>

#include "fieldft/error.hpp"
#include "io/png.hpp"

namespace fieldft::io {

namespace {

std::size_t check(std::span<const std::int64_t> shape, std::size_t given) {
  require(shape.size() == 2 || shape.size() == 3, ErrorCode::kInvalidArgument,
          "preview: a 2D {Nx, Ny} or 3D {Nx, Ny, Nz} shape expected, got " + std::to_string(shape.size()) + " axes");
  std::size_t n = 1;
  for (const auto d : shape) {
    require(d >= 1 && d <= (1 << 20), ErrorCode::kInvalidArgument,
            "preview: axis length " + std::to_string(d) + " outside [1, 2^20]");
    n *= static_cast<std::size_t>(d);
  }
  require(n == given, ErrorCode::kShapeMismatch,
          "preview: the shape holds " + std::to_string(n) + " voxels, given " + std::to_string(given));
  return n;
}

template <class V>
void write(const std::string& path, std::span<const std::int64_t> shape, std::span<const V> data,
           const PreviewOptions& options) {
  const auto format = image_format_from_path(path);
  require(format.has_value(), ErrorCode::kInvalidArgument, "preview '" + path + "': the name must end in .png or .pgm");
  const std::size_t n = check(shape, data.size());
  std::vector<double> mag(n);
  for (std::size_t i = 0; i < n; ++i) {
    mag[i] = static_cast<double>(std::abs(data[i]));
    require(std::isfinite(mag[i]), ErrorCode::kNonFinite,
            [&] { return std::string("preview '" + path + "': non-finite value at voxel " + std::to_string(i)); });
  }
  const Mosaic m = make_mosaic(shape, mag, options);
  write_gray_image(path, *format, m.width, m.height, m.pixels);
}

}  // namespace

Mosaic make_mosaic(std::span<const std::int64_t> shape, std::span<const double> magnitude, const PreviewOptions& o) {
  check(shape, magnitude.size());
  require(o.percentile > 0 && o.percentile <= 100, ErrorCode::kInvalidArgument,
          "preview: percentile " + std::to_string(o.percentile) + " outside (0, 100]");
  require(o.columns >= 0, ErrorCode::kInvalidArgument, "preview: columns must be >= 0");
  const std::int64_t nx = shape[0], ny = shape[1], nz = shape.size() == 3 ? shape[2] : 1;
  const std::int64_t cols = o.columns > 0 ? std::min<std::int64_t>(o.columns, nz)
                                          : static_cast<std::int64_t>(std::ceil(std::sqrt(static_cast<double>(nz))));
  const std::int64_t rows = (nz + cols - 1) / cols;
  std::vector<double> sorted(magnitude.begin(), magnitude.end());
  const auto k = static_cast<std::size_t>(
      std::clamp(std::ceil(o.percentile / 100.0 * static_cast<double>(sorted.size())) - 1.0, 0.0,
                 static_cast<double>(sorted.size() - 1)));
  std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(k), sorted.end());
  const double hi = sorted[k];
  Mosaic m;
  m.width = cols * nx;
  m.height = rows * ny;
  m.pixels.assign(static_cast<std::size_t>(m.width * m.height), 0);
  for (std::int64_t z = 0; z < nz; ++z) {
    const std::int64_t tx = (z % cols) * nx, ty = (z / cols) * ny;
    for (std::int64_t y = 0; y < ny; ++y)
      for (std::int64_t x = 0; x < nx; ++x) {
        const double v = magnitude[static_cast<std::size_t>((z * ny + y) * nx + x)];
        const double g = hi > 0 ? std::clamp(v / hi, 0.0, 1.0) : 0.0;
        const std::int64_t row = ty + (ny - 1 - y), col = tx + x;
        m.pixels[static_cast<std::size_t>(row * m.width + col)] = static_cast<std::uint8_t>(g * 255 + 0.5);
      }
  }
  return m;
}

template <class T>
void write_preview(const std::string& path, std::span<const std::int64_t> shape, std::span<const std::complex<T>> data,
                   const PreviewOptions& options) {
  write(path, shape, data, options);
}
template <class T>
void write_preview(const std::string& path, std::span<const std::int64_t> shape, std::span<const T> data,
                   const PreviewOptions& options) {
  write(path, shape, data, options);
}

template void write_preview<float>(const std::string&, std::span<const std::int64_t>,
                                   std::span<const std::complex<float>>, const PreviewOptions&);
template void write_preview<double>(const std::string&, std::span<const std::int64_t>,
                                    std::span<const std::complex<double>>, const PreviewOptions&);
template void write_preview<float>(const std::string&, std::span<const std::int64_t>, std::span<const float>,
                                   const PreviewOptions&);
template void write_preview<double>(const std::string&, std::span<const std::int64_t>, std::span<const double>,
                                    const PreviewOptions&);

}  // namespace fieldft::io
