// Writes the seed corpus of fuzz/ismrmrd_fuzz.cpp into a directory: small ISMRMRD files that
// reach every part of the reader — fieldft's writer (2D and 3D, with and without times and
// maps, both map orders) and libismrmrd's own API (PowerGrid's 4-column trajectories, discarded
// samples, dwell times, a noise readout, units in the header, flat float NDArrays).
// Usage: ismrmrd_seeds DIR
#include <ismrmrd/dataset.h>
#include <ismrmrd/ismrmrd.h>
#include <ismrmrd/xml.h>

#include <cmath>
#include <complex>
#include <cstdio>
#include <filesystem>
#include <numbers>
#include <sstream>
#include <string>

#include "io/ismrmrd.hpp"

namespace {

using fieldft::io::RawData;

// A small spiral dataset with every optional part.
RawData dataset(int dim, std::int64_t coils, std::int64_t shots, std::int64_t samples) {
  RawData d;
  d.dim = dim;
  d.grid = {8, 8, dim == 3 ? 2 : 1};
  d.fov_mm = {200, 200, dim == 3 ? 20.0 : 5.0};
  d.coils = coils;
  d.num_shots = shots;
  d.trajectory = "spiral";
  const std::int64_t planes = d.grid[2];
  for (std::int64_t p = 0; p < planes; ++p)
    for (std::int64_t l = 0; l < shots; ++l) {
      d.readouts.push_back(samples);
      for (std::int64_t s = 0; s < samples; ++s) {
        const double tau = double(s) / samples, th = 2 * std::numbers::pi * (double(l) / shots + 2 * tau);
        d.kx.push_back(3.9 * tau * std::cos(th));
        d.ky.push_back(3.9 * tau * std::sin(th));
        if (dim == 3) d.kz.push_back(double(p) - planes / 2);
        d.times.push_back(1e-3 + 4e-6 * s);
        d.shots.push_back(static_cast<std::int32_t>(l));
      }
    }
  const auto m = d.kx.size();
  for (std::size_t i = 0; i < m * coils; ++i) d.data.emplace_back(std::cos(0.1 * i), std::sin(0.3 * i));
  const auto v = static_cast<std::size_t>(d.num_voxels());
  for (std::size_t i = 0; i < v * coils; ++i) d.coil_maps.emplace_back(1.0 / (1 + i % 7), 0.1 * (i % 3));
  for (std::size_t i = 0; i < v; ++i) d.field_map.push_back(20.0 * std::sin(0.2 * i));
  for (std::size_t i = 0; i < v * shots; ++i) d.phase_maps.push_back(0.01 * i);
  for (std::size_t i = 0; i < v; ++i) d.truth.emplace_back(i % 5 == 0 ? 1.0 : 0.2, 0.0);
  return d;
}

// A PowerGrid-style file through libismrmrd: (kx, ky, kz = 0, t) trajectories, flat maps.
void powergrid_file(const std::string& path, const char* units, bool discard, bool noise) {
  std::filesystem::remove(path);
  ISMRMRD::Dataset ds(path.c_str(), "dataset", true);
  ISMRMRD::IsmrmrdHeader h;
  h.experimentalConditions.H1resonanceFrequency_Hz = 63'000'000;
  ISMRMRD::Encoding e;
  e.encodedSpace.matrixSize = ISMRMRD::MatrixSize(8, 8, 1);
  e.encodedSpace.fieldOfView_mm = {200, 200, 5};
  e.reconSpace = e.encodedSpace;
  e.encodingLimits.kspace_encoding_step_1 = ISMRMRD::Limit(0, 1, 0);
  e.trajectory = ISMRMRD::TrajectoryType::SPIRAL;
  h.encoding.push_back(e);
  if (units) {
    ISMRMRD::UserParameters up;
    up.userParameterString.push_back({"trajectoryUnits", units});
    h.userParameters = up;
  }
  std::ostringstream xml;
  ISMRMRD::serialize(h, xml);
  ds.writeHeader(xml.str());
  const double scale = units && std::string(units) == "normalized" ? 1.0 / 8 : 1.0;
  for (int r = 0; r < (noise ? 3 : 2); ++r) {
    ISMRMRD::Acquisition acq(12, 2, 4);
    if (noise && r == 0) acq.setFlag(ISMRMRD::ISMRMRD_ACQ_IS_NOISE_MEASUREMENT);
    acq.idx().kspace_encode_step_1 = static_cast<std::uint16_t>(r % 2);
    acq.sample_time_us() = 4;
    if (discard) {
      acq.discard_pre() = 2;
      acq.discard_post() = 1;
    }
    for (int s = 0; s < 12; ++s) {
      acq.traj(0, static_cast<std::uint16_t>(s)) = static_cast<float>(0.3 * s * scale);
      acq.traj(1, static_cast<std::uint16_t>(s)) = static_cast<float>(-0.2 * s * scale);
      acq.traj(2, static_cast<std::uint16_t>(s)) = 0;
      acq.traj(3, static_cast<std::uint16_t>(s)) = static_cast<float>(4e-6 * s);
      for (int c = 0; c < 2; ++c) acq.data(static_cast<std::uint16_t>(s), static_cast<std::uint16_t>(c)) = {float(s), float(c)};
    }
    ds.appendAcquisition(acq);
  }
  ISMRMRD::NDArray<std::complex<float>> sense(std::vector<size_t>{128});
  for (auto& x : sense) x = {0.5f, 0.1f};
  ds.appendNDArray("SENSEMap", sense);
  ISMRMRD::NDArray<float> field(std::vector<size_t>{64});
  for (auto& x : field) x = 3.f;
  ds.appendNDArray("FieldMap", field);
  ISMRMRD::NDArray<double> phase(std::vector<size_t>{8, 8, 1, 2});
  for (auto& x : phase) x = 0.25;
  ds.appendNDArray("PhaseMaps", phase);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  namespace fs = std::filesystem;
  const fs::path dir(argv[1]);
  fs::create_directories(dir);
  using fieldft::io::write_ismrmrd;
  write_ismrmrd((dir / "full_2d.h5").string(), dataset(2, 2, 2, 12));
  RawData bare = dataset(2, 1, 1, 10);
  bare.times.clear();
  bare.coil_maps.clear();
  bare.field_map.clear();
  bare.phase_maps.clear();
  bare.truth.clear();
  write_ismrmrd((dir / "bare_2d.h5").string(), bare);
  write_ismrmrd((dir / "full_3d.h5").string(), dataset(3, 2, 2, 8));
  write_ismrmrd((dir / "yfastest_2d.h5").string(), dataset(2, 3, 3, 6), {.map_order = fieldft::io::MapOrder::kYFastest});
  powergrid_file((dir / "powergrid.h5").string(), nullptr, false, false);
  powergrid_file((dir / "powergrid_discard_noise.h5").string(), "normalized", true, true);
  int n = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    std::printf("%s %ju bytes\n", e.path().filename().c_str(), static_cast<std::uintmax_t>(fs::file_size(e.path())));
    ++n;
  }
  return n > 0 ? 0 : 1;
}
