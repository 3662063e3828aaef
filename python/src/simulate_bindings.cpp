// fieldft._core's simulation helpers (fieldft/mri/simulate.hpp) for python/fieldft/mri.py. Shapes
// and k columns cross here in the C++ order (x first); mri.py reverses them. Results come back
// as numpy arrays that own the C++ vectors (no copy).
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/vector.h>

#include <complex>
#include <cstdint>
#include <span>
#include <vector>

#include "fieldft/error.hpp"
#include "fieldft/mri/simulate.hpp"
#include "gil.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace fieldft::python {
namespace {

template <class V>
using Array1 = nb::ndarray<nb::numpy, V, nb::ndim<1>>;

// A 1-D numpy array owning v.
template <class V>
Array1<V> to_numpy(std::vector<V>&& v) {
  auto* owned = new std::vector<V>(std::move(v));
  nb::capsule owner(owned, [](void* p) noexcept { delete static_cast<std::vector<V>*>(p); });
  return Array1<V>(owned->data(), {owned->size()}, owner);
}

template <class T>
void add_noise(std::uintptr_t data, std::int64_t n, double sigma, std::uint64_t seed) {
  require(n >= 0, ErrorCode::kInvalidArgument, "negative array length");
  without_gil([&] {
    mri::add_noise<T>(std::span<std::complex<T>>(reinterpret_cast<std::complex<T>*>(data), static_cast<std::size_t>(n)),
                      sigma, seed);
  });
}

}  // namespace

void bind_simulate(nb::module_& m) {
  m.def("sim_shepp_logan", [](const std::vector<std::int64_t>& grid, int subsamples) {
    std::vector<double> v;
    without_gil([&] { v = mri::shepp_logan(grid, subsamples); });
    return to_numpy(std::move(v));
  }, "grid"_a, "subsamples"_a);
  // kind 0: spiral (a, b = interleaves, samples; oversampling, reach); 1: radial (a, b = spokes,
  // samples; centre_out). Returns (kx, ky, kz, interleaves, samples, partitions).
  m.def("sim_trajectory", [](const std::vector<std::int64_t>& grid, int kind, std::int64_t a, std::int64_t b,
                             double oversampling, double reach, bool centre_out) {
    mri::Trajectory t;
    without_gil([&] {
      t = kind == 0 ? mri::spiral_trajectory(grid, {.interleaves = a, .samples = b, .oversampling = oversampling,
                                                    .reach = reach})
                    : mri::radial_trajectory(grid, {.spokes = a, .samples = b, .centre_out = centre_out});
    });
    const std::int64_t l = t.interleaves, s = t.samples, p = t.partitions;
    return nb::make_tuple(to_numpy(std::move(t.kx)), to_numpy(std::move(t.ky)), to_numpy(std::move(t.kz)), l, s, p);
  }, "grid"_a, "kind"_a, "a"_a, "b"_a, "oversampling"_a, "reach"_a, "centre_out"_a);
  m.def("sim_coil_maps", [](const std::vector<std::int64_t>& grid, std::int64_t coils, double radius, double width,
                            double phase, bool normalize) {
    std::vector<std::complex<double>> v;
    without_gil([&] { v = mri::coil_maps(grid, coils, {radius, width, phase, normalize}); });
    return to_numpy(std::move(v));
  }, "grid"_a, "coils"_a, "radius"_a, "width"_a, "phase"_a, "normalize"_a);
  m.def("sim_field_map", [](const std::vector<std::int64_t>& grid, double max_hz, int blobs, std::uint64_t seed) {
    std::vector<double> v;
    without_gil([&] { v = mri::field_map(grid, {max_hz, blobs, seed}); });
    return to_numpy(std::move(v));
  }, "grid"_a, "max_hz"_a, "blobs"_a, "seed"_a);
  // Layout image + {S} (φ_s(v) at v + voxels·s), radians.
  m.def("sim_shot_phase_maps", [](const std::vector<std::int64_t>& grid, std::int64_t shots, double max_phase,
                                  std::uint64_t seed) {
    std::vector<double> v;
    without_gil([&] { v = mri::shot_phase_maps(grid, shots, {max_phase, seed}); });
    return to_numpy(std::move(v));
  }, "grid"_a, "shots"_a, "max_phase"_a, "seed"_a);
  // The labels of a trajectory of `partitions` × `interleaves` × `samples` samples (readouts
  // contiguous, partitions slowest), as mri::shot_labels gives them.
  m.def("sim_shot_labels", [](std::int64_t interleaves, std::int64_t samples, std::int64_t partitions,
                              std::int64_t shots) {
    mri::Trajectory t;
    t.interleaves = interleaves;
    t.samples = samples;
    t.partitions = partitions;
    std::vector<std::int32_t> v;
    without_gil([&] {
      std::int64_t n = 0;
      require(interleaves >= 0 && samples >= 0 && partitions >= 0 &&
                  !__builtin_mul_overflow(interleaves, samples, &n) && !__builtin_mul_overflow(n, partitions, &n),
              ErrorCode::kInvalidArgument, "shot_labels: the trajectory's sizes are negative or overflow");
      t.kx.assign(static_cast<std::size_t>(n), 0.0);
      v = mri::shot_labels(t, shots);
    });
    return to_numpy(std::move(v));
  }, "interleaves"_a, "samples"_a, "partitions"_a, "shots"_a);
  // In place on n contiguous host values of complex64 / complex128.
  m.def("sim_add_noise_f", &add_noise<float>, "data"_a, "n"_a, "sigma"_a, "seed"_a);
  m.def("sim_add_noise_d", &add_noise<double>, "data"_a, "n"_a, "sigma"_a, "seed"_a);
}

}  // namespace fieldft::python
