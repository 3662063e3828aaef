// fieldft::io ISMRMRD: the checks shared by the reader and the writer, and the stand-ins of a
// build without libismrmrd (src/io/ismrmrd.hpp).
#include "io/ismrmrd.hpp"

#include <cmath>
#include <string>

#include "fieldft/config.hpp"
#include "fieldft/error.hpp"
#include "io/parallel_pieces.hpp"

namespace fieldft::io {

namespace {

template <class V>
void check_size(const V& v, std::int64_t expected, const std::string& what, const std::string& name,
                bool may_be_empty) {
  const auto n = static_cast<std::int64_t>(v.size());
  if (may_be_empty && n == 0) return;
  require(n == expected, ErrorCode::kShapeMismatch,
          what + ": " + name + " holds " + std::to_string(n) + " values, expected " + std::to_string(expected));
}

bool finite(double x) { return std::isfinite(x); }
template <class T>
bool finite(const std::complex<T>& z) {
  return std::isfinite(z.real()) && std::isfinite(z.imag());
}

template <class V>
void check_finite(const V& v, const std::string& what, const std::string& name) {
  const std::size_t i = first_where(v.size(), [&v](std::size_t j) { return !finite(v[j]); });
  require(i == v.size(), ErrorCode::kNonFinite,
          [&] { return std::string(what + ": " + name + "[" + std::to_string(i) + "] is not finite"); });
}

}  // namespace

void validate(const RawData& d, const std::string& what) {
  require(d.dim == 2 || d.dim == 3, ErrorCode::kInvalidArgument,
          what + ": dim must be 2 or 3, got " + std::to_string(d.dim));
  for (int a = 0; a < 3; ++a)
    require(d.grid[a] >= 1 && d.grid[a] <= 65535, ErrorCode::kInvalidArgument,
            what + ": grid sizes must be in [1, 65535] (ISMRMRD's matrix sizes), got " + std::to_string(d.grid[a]));
  require(d.dim == 3 || d.grid[2] == 1, ErrorCode::kInvalidArgument, what + ": a 2D grid has Nz = 1");
  for (double f : d.fov_mm)
    require(std::isfinite(f) && f >= 0, ErrorCode::kInvalidArgument, what + ": fov_mm must be finite and >= 0");
  require(d.coils >= 1 && d.coils <= 65535, ErrorCode::kInvalidArgument,
          what + ": coils must be in [1, 65535], got " + std::to_string(d.coils));
  const std::int64_t m = d.num_samples();
  std::int64_t total = 0;
  for (auto r : d.readouts) {
    require(r >= 1 && r <= 65535, ErrorCode::kInvalidArgument,
            what + ": every readout holds 1 to 65535 samples (ISMRMRD's limit), got " + std::to_string(r));
    total += r;
  }
  require(total == m, ErrorCode::kShapeMismatch,
          what + ": the readouts hold " + std::to_string(total) + " samples, the trajectory " + std::to_string(m));
  check_size(d.ky, m, what, "ky", false);
  if (d.dim == 3) check_size(d.kz, m, what, "kz", false);
  require(d.dim == 3 || d.kz.empty(), ErrorCode::kShapeMismatch, what + ": kz must be empty in 2D");
  check_size(d.times, m, what, "times", true);
  check_size(d.shots, m, what, "shots", true);
  check_size(d.data, m * d.coils, what, "data (samples x coils)", false);
  const std::int64_t v = d.num_voxels();
  check_size(d.coil_maps, v * d.coils, what, "coil_maps (voxels x coils)", true);
  check_size(d.field_map, v, what, "field_map", true);
  require(d.num_shots >= 1, ErrorCode::kInvalidArgument, what + ": num_shots must be >= 1");
  check_size(d.phase_maps, v * d.num_shots, what, "phase_maps (voxels x shots)", true);
  check_size(d.truth, v, what, "truth", true);
  for (std::size_t j = 0; j < d.shots.size(); ++j)
    require(d.shots[j] >= 0 && d.shots[j] < d.num_shots, ErrorCode::kInvalidArgument, [&] {
      return std::string(what + ": shots[" + std::to_string(j) + "] = " + std::to_string(d.shots[j]) +
                         " is outside [0, num_shots = " + std::to_string(d.num_shots) + ")");
    });
  const std::vector<double>* k[3] = {&d.kx, &d.ky, &d.kz};
  for (int a = 0; a < d.dim; ++a) {
    const double half = d.grid[a] / 2.0;
    for (std::size_t j = 0; j < k[a]->size(); ++j) {
      const double x = (*k[a])[j];
      require(std::isfinite(x), ErrorCode::kNonFinite,
              [&] { return std::string(what + ": k" + "xyz"[a] + "[" + std::to_string(j) + "] is not finite"); });
      require(std::abs(x) <= half, ErrorCode::kInvalidArgument, [&] {
        return std::string(what + ": k" + "xyz"[a] + "[" + std::to_string(j) + "] = " + std::to_string(x) +
                           " cycles/FOV is beyond the grid's Nyquist range [-" + std::to_string(half) + ", " +
                           std::to_string(half) + "]");
      });
    }
  }
  check_finite(d.times, what, "times");
  check_finite(d.data, what, "data");
  check_finite(d.coil_maps, what, "coil_maps");
  check_finite(d.field_map, what, "field_map");
  check_finite(d.phase_maps, what, "phase_maps");
  check_finite(d.truth, what, "truth");
}

#if FIELDFT_HAVE_ISMRMRD
bool ismrmrd_available() noexcept { return true; }
#else
bool ismrmrd_available() noexcept { return false; }

namespace {
[[noreturn]] void unavailable(const std::string& path) {
  throw Error(ErrorCode::kBackendUnavailable,
              "cannot access '" + path +
                  "': this fieldft was built without ISMRMRD support (install Debian's libismrmrd-dev and "
                  "configure with FIELDFT_ISMRMRD=ON, the default)");
}
}  // namespace

RawData read_ismrmrd(const std::string& path, const IsmrmrdReadOptions&) { unavailable(path); }
void write_ismrmrd(const std::string& path, const RawData&, const IsmrmrdWriteOptions&) { unavailable(path); }
#endif

}  // namespace fieldft::io
