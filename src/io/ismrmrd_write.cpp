// fieldft::io ISMRMRD writer (src/io/ismrmrd.hpp), through libismrmrd's Dataset API so that the
// file is laid out exactly as ISMRMRD's own tools write it.
#include <ismrmrd/dataset.h>
#include <ismrmrd/ismrmrd.h>
#include <ismrmrd/xml.h>

#include <algorithm>
#include <cmath>
#include <sstream>

#include "fieldft/error.hpp"
#include "io/atomic_file.hpp"
#include "io/ismrmrd.hpp"

namespace fieldft::io {

namespace {

ISMRMRD::TrajectoryType trajectory_type(const std::string& name) {
  if (name == "spiral") return ISMRMRD::TrajectoryType::SPIRAL;
  if (name == "radial") return ISMRMRD::TrajectoryType::RADIAL;
  if (name == "goldenangle") return ISMRMRD::TrajectoryType::GOLDENANGLE;
  if (name == "cartesian") return ISMRMRD::TrajectoryType::CARTESIAN;
  if (name == "epi") return ISMRMRD::TrajectoryType::EPI;
  return ISMRMRD::TrajectoryType::OTHER;
}

ISMRMRD::Optional<ISMRMRD::Limit> convert(const std::optional<Limit>& l) {
  if (!l) return {};
  const auto u = [](int v) { return static_cast<unsigned short>(std::clamp(v, 0, 65535)); };
  return ISMRMRD::Limit(u(l->minimum), u(l->maximum), u(l->center));
}

std::string header_xml(const RawData& d) {
  ISMRMRD::IsmrmrdHeader h;
  h.experimentalConditions.H1resonanceFrequency_Hz = 127'740'000;  // 3 T; required by the schema
  ISMRMRD::AcquisitionSystemInformation sys;
  sys.receiverChannels = static_cast<unsigned short>(d.coils);
  h.acquisitionSystemInformation = sys;
  ISMRMRD::Encoding e;
  e.encodedSpace.matrixSize = ISMRMRD::MatrixSize(static_cast<unsigned short>(d.grid[0]),
                                                  static_cast<unsigned short>(d.grid[1]),
                                                  static_cast<unsigned short>(d.grid[2]));
  e.encodedSpace.fieldOfView_mm = {static_cast<float>(d.fov_mm[0]), static_cast<float>(d.fov_mm[1]),
                                   static_cast<float>(d.fov_mm[2])};
  e.reconSpace = e.encodedSpace;
  EncodingLimits limits = d.limits;
  if (!limits.kspace_encode_step_1) limits.kspace_encode_step_1 = Limit{0, static_cast<int>(d.num_shots - 1), 0};
  e.encodingLimits.kspace_encoding_step_0 = convert(limits.kspace_encode_step_0);
  e.encodingLimits.kspace_encoding_step_1 = convert(limits.kspace_encode_step_1);
  e.encodingLimits.kspace_encoding_step_2 = convert(limits.kspace_encode_step_2);
  e.encodingLimits.average = convert(limits.average);
  e.encodingLimits.slice = convert(limits.slice);
  e.encodingLimits.contrast = convert(limits.contrast);
  e.encodingLimits.phase = convert(limits.phase);
  e.encodingLimits.repetition = convert(limits.repetition);
  e.encodingLimits.set = convert(limits.set);
  e.encodingLimits.segment = convert(limits.segment);
  e.trajectory = trajectory_type(d.trajectory);
  h.encoding.push_back(e);
  ISMRMRD::UserParameters up;
  up.userParameterString.push_back({"trajectoryUnits", "cycles/FOV"});
  h.userParameters = up;
  std::ostringstream xml;
  ISMRMRD::serialize(h, xml);
  return xml.str();
}

// A map in fieldft's order (x fastest) as NDArray values in the requested order.
template <class T, class V>
ISMRMRD::NDArray<T> ndarray(const V& v, const RawData& d, std::size_t k, MapOrder order) {
  const auto nx = static_cast<std::size_t>(d.grid[0]), ny = static_cast<std::size_t>(d.grid[1]),
             nz = static_cast<std::size_t>(d.grid[2]);
  std::vector<std::size_t> dims = {nx, ny, nz};
  if (k > 0) dims.push_back(k);
  ISMRMRD::NDArray<T> a(dims);
  T* out = a.getDataPtr();
  const std::size_t kk = k > 0 ? k : 1;
  for (std::size_t m = 0; m < kk * nz; ++m)
    for (std::size_t y = 0; y < ny; ++y)
      for (std::size_t x = 0; x < nx; ++x) {
        const std::size_t from = x + nx * (y + ny * m);
        const std::size_t to = order == MapOrder::kXFastest ? from : y + ny * (x + nx * m);
        out[to] = static_cast<T>(v[from]);
      }
  return a;
}

}  // namespace

void write_ismrmrd(const std::string& path, const RawData& d, const IsmrmrdWriteOptions& o) {
  validate(d, "write_ismrmrd('" + path + "')");
  const std::int64_t m = d.num_samples();
  std::int64_t start = 0;
  for (auto r : d.readouts) {
    for (std::int64_t s = start + 1; s < start + r && !d.shots.empty(); ++s)
      require(d.shots[s] == d.shots[start], ErrorCode::kInvalidArgument,
              "write_ismrmrd('" + path + "'): the samples of one readout must share one shot label (readout at sample " +
                  std::to_string(start) + ")");
    start += r;
  }
  const std::string xml = header_xml(d);

  // The file appears at `path` only when complete (io/atomic_file.hpp). AtomicFile's temporary
  // file exists and is empty: libismrmrd cannot open it as HDF5 and so creates it afresh
  // (H5F_ACC_TRUNC); the Dataset is closed (end of the block) before commit() syncs and renames.
  AtomicFile tmp(path);
  try {
    ISMRMRD::Dataset ds(tmp.temp_path().c_str(), "dataset", true);
    ds.writeHeader(xml);
    const int kd = d.dim + (d.times.empty() ? 0 : 1);
    const std::vector<double>* k[3] = {&d.kx, &d.ky, &d.kz};
    start = 0;
    for (std::size_t r = 0; r < d.readouts.size(); ++r) {
      const auto ns = static_cast<std::uint16_t>(d.readouts[r]);
      ISMRMRD::Acquisition acq(ns, static_cast<std::uint16_t>(d.coils), static_cast<std::uint16_t>(kd));
      acq.scan_counter() = static_cast<std::uint32_t>(r);
      acq.available_channels() = static_cast<std::uint16_t>(d.coils);
      const int shot = d.shots.empty() ? 0 : d.shots[start];
      acq.idx().kspace_encode_step_1 = static_cast<std::uint16_t>(shot);
      if (!d.times.empty() && ns > 1)
        acq.sample_time_us() = static_cast<float>((d.times[start + 1] - d.times[start]) * 1e6);
      if (r == 0) acq.setFlag(ISMRMRD::ISMRMRD_ACQ_FIRST_IN_SLICE);
      if (r + 1 == d.readouts.size()) {
        acq.setFlag(ISMRMRD::ISMRMRD_ACQ_LAST_IN_SLICE);
        acq.setFlag(ISMRMRD::ISMRMRD_ACQ_LAST_IN_MEASUREMENT);
      }
      for (std::uint16_t s = 0; s < ns; ++s) {
        const std::int64_t j = start + s;
        for (int a = 0; a < d.dim; ++a) acq.traj(static_cast<std::uint16_t>(a), s) = static_cast<float>((*k[a])[j]);
        if (!d.times.empty()) acq.traj(static_cast<std::uint16_t>(d.dim), s) = static_cast<float>(d.times[j]);
        for (std::int64_t c = 0; c < d.coils; ++c)
          acq.data(s, static_cast<std::uint16_t>(c)) = std::complex<float>(d.data[j + m * c]);
      }
      ds.appendAcquisition(acq);
      start += ns;
    }
    const auto c = static_cast<std::size_t>(d.coils), shots = static_cast<std::size_t>(d.num_shots);
    if (!d.coil_maps.empty()) ds.appendNDArray("SENSEMap", ndarray<std::complex<double>>(d.coil_maps, d, c, o.map_order));
    if (!d.field_map.empty()) ds.appendNDArray("FieldMap", ndarray<double>(d.field_map, d, 0, o.map_order));
    if (!d.phase_maps.empty()) ds.appendNDArray("PhaseMaps", ndarray<double>(d.phase_maps, d, shots, o.map_order));
    if (!d.truth.empty()) ds.appendNDArray("Truth", ndarray<std::complex<double>>(d.truth, d, 0, o.map_order));
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw Error(ErrorCode::kInvalidArgument, "cannot write '" + path + "': libismrmrd: " + e.what());
  }
  tmp.commit();
}

}  // namespace fieldft::io
