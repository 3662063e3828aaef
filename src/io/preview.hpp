// fieldft::io — previews of 2D images and 3D volumes as 8-bit grayscale PNG or PGM.
//
// The magnitude |v| of an image {Nx, Ny} or a volume {Nx, Ny, Nz} (x fastest) is scaled
// robustly: 0 stays black and the `percentile`-th percentile of the magnitudes (default 99.5)
// becomes white, so that a few bright voxels (vessels, fat, a reconstruction's outliers) do not
// darken the rest; values above it saturate. A volume becomes a mosaic of its z slices, left to
// right and then top to bottom, `columns` per row (default ⌈√Nz⌉; unused tiles black). Within a
// tile x runs to the right and y upwards (the top pixel row is y = Ny − 1), as in `fieldft demo`.
// The format follows the path's extension (.png or .pgm); writes are atomic (png.hpp).
// Errors: kInvalidArgument (shape, extension, options), kShapeMismatch (data size), kNonFinite.
#pragma once

#include <complex>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace fieldft::io {

struct PreviewOptions {
  double percentile = 99.5;  // in (0, 100]
  int columns = 0;           // tiles per mosaic row; 0: ⌈√Nz⌉
};

struct Mosaic {
  std::int64_t width = 0, height = 0;
  std::vector<std::uint8_t> pixels;  // row-major, top row first
};

// The mosaic of magnitudes (already |v|, >= 0) of shape {Nx, Ny[, Nz]}.
Mosaic make_mosaic(std::span<const std::int64_t> shape, std::span<const double> magnitude,
                   const PreviewOptions& options = {});

template <class T>
void write_preview(const std::string& path, std::span<const std::int64_t> shape, std::span<const std::complex<T>> data,
                   const PreviewOptions& options = {});
template <class T>
void write_preview(const std::string& path, std::span<const std::int64_t> shape, std::span<const T> data,
                   const PreviewOptions& options = {});

}  // namespace fieldft::io
