// fieldft::io ISMRMRD reader and writer (src/io/ismrmrd.hpp): simulated datasets written and
// read back field by field, files written directly with libismrmrd's own API (not fieldft's
// writer) read correctly with each unit and layout convention, and every kind of bad input
// refused with a message that names the file and the expectation. Skips itself in a build
// without ISMRMRD, where it checks that every function says so.
#include "io/ismrmrd.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <complex>
#include <filesystem>
#include <algorithm>
#include <fstream>
#include <functional>
#include <numbers>
#include <string>
#include <vector>

#include "fieldft/config.hpp"
#include "fieldft/error.hpp"
#include "fieldft/mri/simulate.hpp"

#if FIELDFT_HAVE_ISMRMRD
#include <hdf5.h>
#include <ismrmrd/dataset.h>
#include <ismrmrd/ismrmrd.h>
#include <ismrmrd/xml.h>

#include <sstream>
#endif

namespace fieldft::io {
namespace {

namespace fs = std::filesystem;
using cd = std::complex<double>;

class IsmrmrdTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("fieldft_ismrmrd_test_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::vector<std::string> entries() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(dir_)) names.push_back(e.path().filename());
    return names;
  }
  fs::path dir_;
};

// Expects fn to throw fieldft::Error with `code` and a message containing every one of `parts`.
void expect_error(const std::function<void()>& fn, ErrorCode code, const std::vector<std::string>& parts) {
  try {
    fn();
    ADD_FAILURE() << "no error thrown";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    for (const auto& p : parts) EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what() << " lacks: " << p;
  }
}

#if !FIELDFT_HAVE_ISMRMRD

TEST_F(IsmrmrdTest, UnavailableBuildSaysSo) {
  EXPECT_FALSE(ismrmrd_available());
  expect_error([&] { read_ismrmrd(path("a.h5")); }, ErrorCode::kBackendUnavailable, {"a.h5", "ISMRMRD"});
  expect_error([&] { write_ismrmrd(path("a.h5"), RawData{}); }, ErrorCode::kBackendUnavailable, {"ISMRMRD"});
  GTEST_SKIP() << "built without ISMRMRD (FIELDFT_ISMRMRD)";
}

#else

// ---------------------------------------------------------------------------------------------
// Simulated datasets.

// A multi-coil multi-shot spiral dataset with every optional part: field map, per-shot phase
// maps (a different linear phase per shot), truth image, readout times. A round trip needs no
// physics in the samples: they are seeded noise of unit variance.
RawData simulated(int dim, std::int64_t coils, std::int64_t shots) {
  RawData d;
  d.dim = dim;
  const std::vector<std::int64_t> grid =
      dim == 2 ? std::vector<std::int64_t>{24, 20} : std::vector<std::int64_t>{16, 14, 4};
  d.grid = {grid[0], grid[1], dim == 3 ? grid[2] : 1};
  d.fov_mm = {240, 200, dim == 3 ? 40.0 : 5.0};
  d.coils = coils;
  d.trajectory = "spiral";
  mri::SpiralOptions so;
  so.interleaves = shots;
  const mri::Trajectory t = mri::spiral_trajectory(grid, so);
  d.kx = t.kx;
  d.ky = t.ky;
  if (dim == 3) d.kz = t.kz;
  d.times = mri::readout_times(t, 4e-6, 1e-3);
  d.num_shots = shots;
  for (std::int64_t p = 0; p < t.partitions; ++p)
    for (std::int64_t l = 0; l < t.interleaves; ++l) {
      d.readouts.push_back(t.samples);
      for (std::int64_t s = 0; s < t.samples; ++s) d.shots.push_back(static_cast<std::int32_t>(l));
    }
  std::vector<cd> y(static_cast<std::size_t>(t.size() * coils), cd{0, 0});
  mri::add_noise(std::span<cd>(y), 1.0, 7);
  d.data.assign(y.begin(), y.end());  // single precision, as RawData holds the samples
  const auto maps = mri::coil_maps(grid, coils);
  d.coil_maps.assign(maps.begin(), maps.end());
  d.field_map = mri::field_map(grid, {.max_hz = 60, .blobs = 2, .seed = 3});
  const std::int64_t v = d.num_voxels();
  d.phase_maps.resize(static_cast<std::size_t>(v * shots));
  for (std::int64_t s = 0; s < shots; ++s)
    for (std::int64_t i = 0; i < v; ++i)
      d.phase_maps[static_cast<std::size_t>(i + v * s)] = 0.3 * s + 0.01 * static_cast<double>(i % d.grid[0]);
  const auto sl = mri::shepp_logan(grid, 2);
  d.truth.assign(sl.begin(), sl.end());
  d.limits.kspace_encode_step_1 = Limit{0, static_cast<int>(shots - 1), 0};
  return d;
}

// Stored as float32: relative rounding 2^-24 of each value.
void expect_float_close(const std::vector<double>& a, const std::vector<double>& b, const char* what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (std::size_t i = 0; i < a.size(); ++i)
    ASSERT_NEAR(a[i], b[i], 1e-6 * std::abs(b[i]) + 1e-30) << what << "[" << i << "]";
}

void expect_round_trip(const RawData& in, const RawData& out) {
  EXPECT_EQ(out.dim, in.dim);
  EXPECT_EQ(out.grid, in.grid);
  for (int a = 0; a < 3; ++a) EXPECT_FLOAT_EQ(out.fov_mm[a], in.fov_mm[a]);
  EXPECT_EQ(out.coils, in.coils);
  EXPECT_EQ(out.trajectory, in.trajectory);
  EXPECT_EQ(out.limits, in.limits);
  EXPECT_EQ(out.readouts, in.readouts);
  expect_float_close(out.kx, in.kx, "kx");
  expect_float_close(out.ky, in.ky, "ky");
  expect_float_close(out.kz, in.kz, "kz");
  expect_float_close(out.times, in.times, "times");
  EXPECT_EQ(out.shots, in.shots);
  EXPECT_EQ(out.num_shots, in.num_shots);
  // The samples are held and stored in single precision, the coil maps held in single and
  // stored in double: both exact.
  EXPECT_EQ(out.data, in.data);
  EXPECT_EQ(out.coil_maps, in.coil_maps);
  EXPECT_EQ(out.field_map, in.field_map);
  EXPECT_EQ(out.phase_maps, in.phase_maps);
  EXPECT_EQ(out.truth, in.truth);
}

TEST_F(IsmrmrdTest, RoundTrip2DSpiralMultiCoilMultiShot) {
  ASSERT_TRUE(ismrmrd_available());
  const RawData in = simulated(2, 4, 3);
  write_ismrmrd(path("sim.h5"), in);
  EXPECT_EQ(entries(), std::vector<std::string>{"sim.h5"});  // no temporary file left
  const RawData out = read_ismrmrd(path("sim.h5"));
  expect_round_trip(in, out);
  validate(out, "read back");
}

TEST_F(IsmrmrdTest, RoundTrip3DStackOfSpirals) {
  const RawData in = simulated(3, 2, 2);
  write_ismrmrd(path("sim3.h5"), in);
  expect_round_trip(in, read_ismrmrd(path("sim3.h5")));
}

TEST_F(IsmrmrdTest, RoundTripWithoutOptionalParts) {
  RawData in = simulated(2, 1, 1);
  in.times.clear();
  in.coil_maps.clear();
  in.field_map.clear();
  in.phase_maps.clear();
  in.truth.clear();
  write_ismrmrd(path("bare.h5"), in);
  RawData out = read_ismrmrd(path("bare.h5"));
  // Without a time column the times come from sample_time_us, 0 when unknown.
  EXPECT_EQ(out.times, std::vector<double>(static_cast<std::size_t>(in.num_samples()), 0.0));
  out.times.clear();
  expect_round_trip(in, out);
}

TEST_F(IsmrmrdTest, ReadWithoutMaps) {
  write_ismrmrd(path("sim.h5"), simulated(2, 2, 2));
  IsmrmrdReadOptions o;
  o.read_maps = false;
  const RawData out = read_ismrmrd(path("sim.h5"), o);
  EXPECT_TRUE(out.coil_maps.empty() && out.field_map.empty() && out.phase_maps.empty() && out.truth.empty());
  EXPECT_EQ(out.num_samples() * 2, static_cast<std::int64_t>(out.data.size()));
}

// PowerGrid's map vectors are y fastest: written in that order and read in fieldft's order, a
// map comes back transposed; read in the order it was written, unchanged.
TEST_F(IsmrmrdTest, MapOrderYFastestTransposes) {
  const RawData in = simulated(2, 2, 2);
  write_ismrmrd(path("pg.h5"), in, {.map_order = MapOrder::kYFastest});
  IsmrmrdReadOptions o;
  o.map_order = MapOrder::kYFastest;
  expect_round_trip(in, read_ismrmrd(path("pg.h5"), o));
  const RawData x = read_ismrmrd(path("pg.h5"));
  const auto nx = in.grid[0], ny = in.grid[1];
  for (std::int64_t y = 0; y < ny; ++y)
    for (std::int64_t xx = 0; xx < nx; ++xx)
      ASSERT_EQ(x.field_map[static_cast<std::size_t>(y + ny * xx)], in.field_map[static_cast<std::size_t>(xx + nx * y)]);
}

TEST_F(IsmrmrdTest, WriteFailuresLeaveNothing) {
  const RawData in = simulated(2, 2, 2);
  expect_error([&] { write_ismrmrd(path("no_dir/x.h5"), in); }, ErrorCode::kInvalidArgument, {"no_dir/x.h5"});
  expect_error([&] { write_ismrmrd(dir_.string(), in); }, ErrorCode::kInvalidArgument, {"directory"});
  // A bad dataset is refused before anything is written, and an existing file is kept.
  write_ismrmrd(path("keep.h5"), in);
  const auto size = fs::file_size(path("keep.h5"));
  RawData bad = in;
  bad.data.pop_back();
  expect_error([&] { write_ismrmrd(path("keep.h5"), bad); }, ErrorCode::kShapeMismatch, {"data"});
  bad = in;
  bad.kx[5] = in.grid[0];  // beyond N/2
  expect_error([&] { write_ismrmrd(path("keep.h5"), bad); }, ErrorCode::kInvalidArgument, {"kx[5]", "Nyquist"});
  bad = in;
  bad.shots[1] = 1;  // a readout with two shot labels
  expect_error([&] { write_ismrmrd(path("keep.h5"), bad); }, ErrorCode::kInvalidArgument, {"one shot label"});
  bad = in;
  bad.field_map[3] = std::nan("");
  expect_error([&] { write_ismrmrd(path("keep.h5"), bad); }, ErrorCode::kNonFinite, {"field_map[3]"});
  EXPECT_EQ(fs::file_size(path("keep.h5")), size);
  EXPECT_EQ(entries(), std::vector<std::string>{"keep.h5"});
}

// ---------------------------------------------------------------------------------------------
// Files written with libismrmrd's API directly.

struct ApiFile {
  unsigned short nx = 16, ny = 16, nz = 1;
  float fov[3] = {200, 200, 5};
  unsigned short rx = 16, ry = 16;  // recon space
  float rfov[3] = {200, 200, 5};
  int receiver_channels = 2;        // < 0: not in the header
  std::string units;                // the header's trajectoryUnits ("" = none)
  int readouts = 3;
  std::uint16_t samples = 10, channels = 2, traj_dims = 2;
  std::uint16_t discard_pre = 0, discard_post = 0;
  float dwell_us = 5;
  // k and t of readout r, sample s, axis a (a = traj_dims - 1 is the time when it is one).
  std::function<float(int, int, int)> traj = [](int r, int s, int a) { return 0.1f * (s - 5) + 0.2f * r * a; };
  std::function<std::complex<float>(int, int, int)> data = [](int r, int s, int c) {
    return std::complex<float>(static_cast<float>(r + 0.5 * s), static_cast<float>(c));
  };
  std::function<void(ISMRMRD::Acquisition&, int)> edit = [](ISMRMRD::Acquisition&, int) {};
  std::function<void(ISMRMRD::Dataset&)> extra = [](ISMRMRD::Dataset&) {};
  bool header = true;

  void write(const std::string& path) const {
    ISMRMRD::Dataset ds(path.c_str(), "dataset", true);
    if (header) {
      ISMRMRD::IsmrmrdHeader h;
      h.experimentalConditions.H1resonanceFrequency_Hz = 63'000'000;
      if (receiver_channels >= 0) {
        ISMRMRD::AcquisitionSystemInformation sys;
        sys.receiverChannels = static_cast<unsigned short>(receiver_channels);
        h.acquisitionSystemInformation = sys;
      }
      ISMRMRD::Encoding e;
      e.encodedSpace.matrixSize = ISMRMRD::MatrixSize(nx, ny, nz);
      e.encodedSpace.fieldOfView_mm = {fov[0], fov[1], fov[2]};
      e.reconSpace.matrixSize = ISMRMRD::MatrixSize(rx, ry, nz);
      e.reconSpace.fieldOfView_mm = {rfov[0], rfov[1], rfov[2]};
      e.encodingLimits.kspace_encoding_step_1 = ISMRMRD::Limit(0, static_cast<unsigned short>(readouts - 1), 0);
      e.trajectory = ISMRMRD::TrajectoryType::RADIAL;
      h.encoding.push_back(e);
      if (!units.empty()) {
        ISMRMRD::UserParameters up;
        up.userParameterString.push_back({"trajectoryUnits", units});
        h.userParameters = up;
      }
      std::ostringstream xml;
      ISMRMRD::serialize(h, xml);
      ds.writeHeader(xml.str());
    }
    for (int r = 0; r < readouts; ++r) {
      ISMRMRD::Acquisition acq(samples, channels, traj_dims);
      acq.discard_pre() = discard_pre;
      acq.discard_post() = discard_post;
      acq.sample_time_us() = dwell_us;
      acq.idx().kspace_encode_step_1 = static_cast<std::uint16_t>(r);
      for (int s = 0; s < samples; ++s) {
        for (int a = 0; a < traj_dims; ++a)
          acq.traj(static_cast<std::uint16_t>(a), static_cast<std::uint16_t>(s)) = traj(r, s, a);
        for (int c = 0; c < channels; ++c)
          acq.data(static_cast<std::uint16_t>(s), static_cast<std::uint16_t>(c)) = data(r, s, c);
      }
      edit(acq, r);
      ds.appendAcquisition(acq);
    }
    extra(ds);
  }
};

TEST_F(IsmrmrdTest, ApiWrittenFileReadsCorrectly) {
  ApiFile f;
  f.write(path("api.h5"));
  const RawData d = read_ismrmrd(path("api.h5"));
  EXPECT_EQ(d.dim, 2);
  EXPECT_EQ(d.grid, (std::array<std::int64_t, 3>{16, 16, 1}));
  EXPECT_EQ(d.coils, 2);
  EXPECT_EQ(d.trajectory, "radial");
  ASSERT_TRUE(d.limits.kspace_encode_step_1.has_value());
  EXPECT_EQ(d.limits.kspace_encode_step_1->maximum, 2);
  EXPECT_FALSE(d.limits.slice.has_value());
  const std::int64_t m = 30;
  ASSERT_EQ(d.num_samples(), m);
  EXPECT_EQ(d.readouts, (std::vector<std::int64_t>{10, 10, 10}));
  EXPECT_EQ(d.num_shots, 3);
  for (int r = 0; r < 3; ++r)
    for (int s = 0; s < 10; ++s) {
      const auto j = static_cast<std::size_t>(r * 10 + s);
      EXPECT_FLOAT_EQ(d.kx[j], f.traj(r, s, 0));
      EXPECT_FLOAT_EQ(d.ky[j], f.traj(r, s, 1));
      EXPECT_NEAR(d.times[j], s * 5e-6, 1e-12);  // dwell-derived, from the ADC start
      EXPECT_EQ(d.shots[j], r);
      for (int c = 0; c < 2; ++c) EXPECT_EQ(d.data[j + m * c], f.data(r, s, c));
    }
  EXPECT_TRUE(d.coil_maps.empty() && d.field_map.empty() && d.phase_maps.empty() && d.truth.empty());
}

// Discarded samples are dropped, and the times of the kept ones count them: (pre + i) · dwell.
TEST_F(IsmrmrdTest, DiscardedSamplesAndDwellTimes) {
  ApiFile f;
  f.discard_pre = 2;
  f.discard_post = 1;
  f.write(path("discard.h5"));
  IsmrmrdReadOptions o;
  o.time_offset_s = 2e-3;
  const RawData d = read_ismrmrd(path("discard.h5"), o);
  ASSERT_EQ(d.num_samples(), 3 * 7);
  EXPECT_EQ(d.readouts, (std::vector<std::int64_t>{7, 7, 7}));
  for (int r = 0; r < 3; ++r)
    for (int i = 0; i < 7; ++i) {
      const auto j = static_cast<std::size_t>(r * 7 + i);
      EXPECT_NEAR(d.times[j], (2 + i) * 5e-6 + 2e-3, 1e-12);
      EXPECT_FLOAT_EQ(d.kx[j], f.traj(r, 2 + i, 0));
      EXPECT_EQ(d.data[j + 21], f.data(r, 2 + i, 1));
    }
}

// A time column: dim + 1 trajectory dimensions (k, then t), and PowerGrid's 4 in 2D.
TEST_F(IsmrmrdTest, TimeColumnAndPowerGridLayout) {
  ApiFile f;
  f.traj_dims = 3;
  f.traj = [](int r, int s, int a) { return a == 2 ? 1e-3f + 4e-6f * s : 0.5f * (s - 5) - r; };
  f.write(path("t3.h5"));
  RawData d = read_ismrmrd(path("t3.h5"));
  for (int s = 0; s < 10; ++s) EXPECT_FLOAT_EQ(d.times[static_cast<std::size_t>(10 + s)], 1e-3f + 4e-6f * s);
  IsmrmrdReadOptions none;
  none.time_column = TimeColumn::kNone;  // then the third column is kz, which must be 0 in 2D
  expect_error([&] { read_ismrmrd(path("t3.h5"), none); }, ErrorCode::kInvalidArgument, {"kz = 0.001", "2D"});

  ApiFile pg;  // PowerGrid: kx, ky, kz = 0, t
  pg.traj_dims = 4;
  pg.traj = [](int, int s, int a) { return a == 3 ? 2e-6f * s : a == 2 ? 0.f : 0.25f * s; };
  pg.write(path("pg.h5"));
  d = read_ismrmrd(path("pg.h5"));
  EXPECT_TRUE(d.kz.empty());
  EXPECT_FLOAT_EQ(d.times[9], 18e-6f);
  EXPECT_FLOAT_EQ(d.ky[9], 2.25f);
  pg.traj = [](int, int s, int a) { return a == 3 ? 2e-6f * s : a == 2 ? 1.f : 0.25f * s; };
  pg.write(path("pg_kz.h5"));
  expect_error([&] { read_ismrmrd(path("pg_kz.h5")); }, ErrorCode::kInvalidArgument, {"kz", "2D"});
}

// Units: the same physical trajectory stored in each unit reads back in cycles/FOV.
TEST_F(IsmrmrdTest, TrajectoryUnitConversions) {
  const double fov_m = 0.2, n = 16;
  const auto k_cycles = [](int r, int s, int a) { return 0.7 * (s - 5) + 0.3 * r - 0.2 * a; };
  struct Case {
    std::string header;
    TrajectoryUnits option;
    double factor;  // file value = k_cycles · factor
  };
  const Case cases[] = {
      {"", TrajectoryUnits::kAuto, 1.0},
      {"cycles/FOV", TrajectoryUnits::kAuto, 1.0},
      {"normalized", TrajectoryUnits::kAuto, 1.0 / n},
      {"1/m", TrajectoryUnits::kAuto, 1.0 / fov_m},
      {"rad/m", TrajectoryUnits::kAuto, 2 * std::numbers::pi / fov_m},
      {"", TrajectoryUnits::kPerMeter, 1.0 / fov_m},             // the option when the header is silent
      {"cycles/FOV", TrajectoryUnits::kNormalized, 1.0 / n},     // the option overrides the header
  };
  int i = 0;
  for (const Case& c : cases) {
    ApiFile f;
    f.units = c.header;
    f.traj = [&](int r, int s, int a) { return static_cast<float>(k_cycles(r, s, a) * c.factor); };
    std::string name = "u";  // appended piecewise: GCC 12 misreads "u" + string (-Wrestrict)
    name += std::to_string(i++);
    const std::string p = path(name + ".h5");
    f.write(p);
    IsmrmrdReadOptions o;
    o.units = c.option;
    const RawData d = read_ismrmrd(p, o);
    for (int r = 0; r < 3; ++r)
      for (int s = 0; s < 10; ++s) {
        const auto j = static_cast<std::size_t>(r * 10 + s);
        EXPECT_NEAR(d.kx[j], k_cycles(r, s, 0), 1e-5) << c.header << " sample " << j;
        EXPECT_NEAR(d.ky[j], k_cycles(r, s, 1), 1e-5) << c.header << " sample " << j;
      }
  }
  // The recon space: a readout-oversampled encoding (32 over 400 mm) reconstructed on 16 over
  // 200 mm: k per encoded FOV times 200/400.
  ApiFile f;
  f.nx = 32;
  f.fov[0] = 400;
  f.traj = [&](int r, int s, int a) { return static_cast<float>(k_cycles(r, s, a) * (a == 0 ? 2 : 1)); };
  f.write(path("recon.h5"));
  IsmrmrdReadOptions o;
  o.space = EncodingSpaceChoice::kRecon;
  const RawData d = read_ismrmrd(path("recon.h5"), o);
  EXPECT_EQ(d.grid, (std::array<std::int64_t, 3>{16, 16, 1}));
  EXPECT_FLOAT_EQ(d.fov_mm[0], 200);
  EXPECT_NEAR(d.kx[13], k_cycles(1, 3, 0), 1e-5);
  EXPECT_NEAR(d.ky[13], k_cycles(1, 3, 1), 1e-5);
  // A header with an unknown unit is refused by name.
  ApiFile bad;
  bad.units = "furlongs";
  bad.write(path("furlongs.h5"));
  expect_error([&] { read_ismrmrd(path("furlongs.h5")); }, ErrorCode::kInvalidArgument, {"furlongs", "trajectoryUnits"});
}

// Maps from NDArrays written with the API: PowerGrid's flat vectors and shaped arrays, real
// arrays of any type, and from separate files.
TEST_F(IsmrmrdTest, MapsFromNdArraysAndSeparateFiles) {
  ApiFile f;
  f.nx = 4;
  f.ny = 3;
  f.traj = [](int, int s, int) { return 0.1f * s; };
  f.extra = [](ISMRMRD::Dataset& ds) {
    ISMRMRD::NDArray<std::complex<float>> sense(std::vector<size_t>{24});  // flat: 12 voxels x 2 coils
    for (int i = 0; i < 24; ++i) sense.getDataPtr()[i] = {static_cast<float>(i), -1.f};
    ds.appendNDArray("SENSEMap", sense);
    ISMRMRD::NDArray<float> field(std::vector<size_t>{4, 3});
    for (int i = 0; i < 12; ++i) field.getDataPtr()[i] = 10.f * i;
    ds.appendNDArray("FieldMap", field);
    ISMRMRD::NDArray<int> phase(std::vector<size_t>{4, 3, 1, 3});  // 3 shots, as int
    for (int i = 0; i < 36; ++i) phase.getDataPtr()[i] = i;
    ds.appendNDArray("PhaseMaps", phase);
  };
  f.write(path("maps.h5"));
  const RawData d = read_ismrmrd(path("maps.h5"));
  ASSERT_EQ(d.coil_maps.size(), 24u);
  EXPECT_EQ(d.coil_maps[13], std::complex<float>(13, -1));
  ASSERT_EQ(d.field_map.size(), 12u);
  EXPECT_EQ(d.field_map[7], 70);
  ASSERT_EQ(d.phase_maps.size(), 36u);
  EXPECT_EQ(d.phase_maps[35], 35);

  // The same maps from separate files, over a data file without maps.
  ApiFile plain = f;
  plain.extra = [](ISMRMRD::Dataset&) {};
  plain.write(path("plain.h5"));
  IsmrmrdReadOptions o;
  o.coil_maps_path = o.field_map_path = o.phase_maps_path = path("maps.h5");
  const RawData s = read_ismrmrd(path("plain.h5"), o);
  EXPECT_EQ(s.coil_maps, d.coil_maps);
  EXPECT_EQ(s.field_map, d.field_map);
  EXPECT_EQ(s.phase_maps, d.phase_maps);
  o.field_map_path = path("plain.h5");  // a separate file without the array
  expect_error([&] { read_ismrmrd(path("plain.h5"), o); }, ErrorCode::kInvalidArgument, {"FieldMap", "plain.h5"});
  o.field_map_path = path("absent.h5");
  expect_error([&] { read_ismrmrd(path("plain.h5"), o); }, ErrorCode::kInvalidArgument, {"absent.h5", "no such file"});
}

TEST_F(IsmrmrdTest, MapsOfTheWrongShape) {
  const auto with = [&](const std::string& name, std::function<void(ISMRMRD::Dataset&)> extra) {
    ApiFile f;
    f.nx = 4;
    f.ny = 3;
    f.traj = [](int, int s, int) { return 0.1f * s; };
    f.extra = std::move(extra);
    f.write(path(name));
    return path(name);
  };
  auto p = with("wrong_sense.h5", [](ISMRMRD::Dataset& ds) {
    ds.appendNDArray("SENSEMap", ISMRMRD::NDArray<std::complex<float>>(std::vector<size_t>{4, 3, 3}));  // 3 coils, not 2
  });
  expect_error([&] { read_ismrmrd(p); }, ErrorCode::kShapeMismatch, {"SENSEMap", "{4, 3, 3}", "{4, 3, 2}"});
  p = with("huge_sense.h5", [](ISMRMRD::Dataset& ds) {  // finite in double, beyond single precision
    ISMRMRD::NDArray<std::complex<double> > sense(std::vector<size_t>{4, 3, 2});
    for (int i = 0; i < 24; ++i) sense.getDataPtr()[i] = {1.0, 0.0};
    sense.getDataPtr()[17] = {0.5, 1e39};
    ds.appendNDArray("SENSEMap", sense);
  });
  expect_error([&] { read_ismrmrd(p); }, ErrorCode::kNonFinite, {"SENSEMap[17]", "single precision", "huge_sense.h5"});
  p = with("wrong_field.h5", [](ISMRMRD::Dataset& ds) {
    ds.appendNDArray("FieldMap", ISMRMRD::NDArray<double>(std::vector<size_t>{3, 4}));  // transposed
  });
  expect_error([&] { read_ismrmrd(p); }, ErrorCode::kShapeMismatch, {"FieldMap", "{3, 4}"});
  p = with("complex_field.h5", [](ISMRMRD::Dataset& ds) {
    ds.appendNDArray("FieldMap", ISMRMRD::NDArray<std::complex<double>>(std::vector<size_t>{4, 3}));
  });
  expect_error([&] { read_ismrmrd(p); }, ErrorCode::kInvalidArgument, {"FieldMap", "complex"});
  p = with("two_fields.h5", [](ISMRMRD::Dataset& ds) {
    ds.appendNDArray("FieldMap", ISMRMRD::NDArray<double>(std::vector<size_t>{4, 3}));
    ds.appendNDArray("FieldMap", ISMRMRD::NDArray<double>(std::vector<size_t>{4, 3}));
  });
  expect_error([&] { read_ismrmrd(p); }, ErrorCode::kShapeMismatch, {"FieldMap", "2 arrays"});
  p = with("flat_phase.h5", [](ISMRMRD::Dataset& ds) {
    ds.appendNDArray("PhaseMaps", ISMRMRD::NDArray<double>(std::vector<size_t>{12, 3}));  // neither flat nor a map
  });
  expect_error([&] { read_ismrmrd(p); }, ErrorCode::kShapeMismatch, {"PhaseMaps", "{12, 3}"});
  p = with("nan_phase.h5", [](ISMRMRD::Dataset& ds) {
    ISMRMRD::NDArray<double> a(std::vector<size_t>{4, 3, 3});
    for (auto& x : a) x = 0;
    a.getDataPtr()[5] = std::nan("");
    ds.appendNDArray("PhaseMaps", a);
  });
  expect_error([&] { read_ismrmrd(p); }, ErrorCode::kNonFinite, {"PhaseMaps", "value 5"});
}

// ---------------------------------------------------------------------------------------------
// Bad input.

TEST_F(IsmrmrdTest, MissingFile) {
  expect_error([&] { read_ismrmrd(path("nope.h5")); }, ErrorCode::kInvalidArgument, {"nope.h5", "no such file"});
  expect_error([&] { read_ismrmrd(dir_.string()); }, ErrorCode::kInvalidArgument, {"not a regular file"});
}

TEST_F(IsmrmrdTest, NotHdf5) {
  std::ofstream(path("text.h5")) << "this is not an HDF5 file, it is some text that goes on for a while\n";
  expect_error([&] { read_ismrmrd(path("text.h5")); }, ErrorCode::kInvalidArgument, {"text.h5", "not an HDF5 file"});
  std::ofstream(path("empty.h5")).flush();
  expect_error([&] { read_ismrmrd(path("empty.h5")); }, ErrorCode::kInvalidArgument, {"not an HDF5 file"});
}

TEST_F(IsmrmrdTest, TruncatedFile) {
  write_ismrmrd(path("full.h5"), simulated(2, 2, 2));
  const auto size = fs::file_size(path("full.h5"));
  for (const auto keep : {size / 2, std::uintmax_t{600}, size - 100}) {
    fs::copy_file(path("full.h5"), path("cut.h5"), fs::copy_options::overwrite_existing);
    fs::resize_file(path("cut.h5"), keep);
    expect_error([&] { read_ismrmrd(path("cut.h5")); }, ErrorCode::kInvalidArgument, {"cut.h5"});
  }
}

// libhdf5 1.10 would loop forever on a global heap collection whose first object is a free-space
// object of size 0 (found by fuzz/ismrmrd_fuzz.cpp): the reader refuses it before libhdf5 reads it.
TEST_F(IsmrmrdTest, CorruptGlobalHeapIsRefusedNotHung) {
  write_ismrmrd(path("full.h5"), simulated(2, 2, 2));
  std::vector<char> bytes(fs::file_size(path("full.h5")));
  std::ifstream(path("full.h5"), std::ios::binary).read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  const std::string gcol("GCOL\1", 5);
  const auto at = std::string(bytes.begin(), bytes.end()).find(gcol);
  ASSERT_NE(at, std::string::npos);
  std::fill(bytes.begin() + static_cast<std::ptrdiff_t>(at + 16), bytes.begin() + static_cast<std::ptrdiff_t>(at + 32), 0);
  std::ofstream(path("heap.h5"), std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  expect_error([&] { read_ismrmrd(path("heap.h5")); }, ErrorCode::kInvalidArgument, {"heap.h5", "global heap"});
}

// libhdf5 1.10 follows a local heap's free list until its end marker without looking for a cycle,
// allocating as it goes (found by fuzz/ismrmrd_fuzz.cpp: past 2 GB): a free block that names
// itself as the next is refused, in the root group's heap (inspect) and in the ISMRMRD group's
// (open_group), before libhdf5 looks a name up there.
TEST_F(IsmrmrdTest, CyclicLocalHeapFreeListIsRefusedNotFollowed) {
  write_ismrmrd(path("full.h5"), simulated(2, 2, 2));
  std::vector<char> bytes(fs::file_size(path("full.h5")));
  std::ifstream(path("full.h5"), std::ios::binary).read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  const auto le8 = [&](std::size_t at) {
    std::uint64_t v = 0;
    for (int i = 7; i >= 0; --i) v = v << 8 | static_cast<unsigned char>(bytes[at + static_cast<std::size_t>(i)]);
    return v;
  };
  // Local heap (superblock at 0, 8-byte lengths and addresses): "HEAP", version 0, 3 reserved
  // bytes, data size, offset of the first free block (1: none), data address.
  const std::string text(bytes.begin(), bytes.end()), sig("HEAP\0", 5);
  std::vector<std::string> groups;
  for (auto at = text.find(sig); at != std::string::npos; at = text.find(sig, at + 1)) {
    const std::uint64_t free = le8(at + 16), data = le8(at + 24);
    if (free == 1) continue;
    std::vector<char> patched = bytes;
    for (int i = 0; i < 8; ++i) patched[data + free + static_cast<std::uint64_t>(i)] = static_cast<char>(free >> (8 * i));
    std::ofstream(path("cycle.h5"), std::ios::binary).write(patched.data(), static_cast<std::streamsize>(patched.size()));
    try {
      (void)read_ismrmrd(path("cycle.h5"));
      ADD_FAILURE() << "a cyclic free list in the heap at byte " << at << " was not refused";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument) << e.what();
      const std::string what = e.what();
      EXPECT_NE(what.find("cycle.h5"), std::string::npos) << what;
      EXPECT_NE(what.find("has a free list that runs in a cycle"), std::string::npos) << what;
      groups.push_back(what);
    }
  }
  // The writer leaves a free block in both heaps; both checks are reached.
  const auto said = [&](const std::string& who) {
    return std::any_of(groups.begin(), groups.end(), [&](const std::string& w) { return w.find(who) != std::string::npos; });
  };
  EXPECT_TRUE(said("local heap of its root group")) << "no free block in the root group's heap";
  EXPECT_TRUE(said("local heap of group '/dataset'")) << "no free block in the group's heap";
}

// libhdf5 1.10 dereferences an empty heap slot when a trajectory's heap ID names an object that
// its collection does not hold (found by fuzz/ismrmrd_fuzz.cpp): refused before the read.
TEST_F(IsmrmrdTest, DanglingHeapReferenceIsRefusedNotCrashed) {
  write_ismrmrd(path("full.h5"), simulated(2, 2, 2));
  haddr_t chunk = HADDR_UNDEF;
  std::size_t traj_offset = 0;
  {
    const hid_t f = H5Fopen(path("full.h5").c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    const hid_t d = H5Dopen2(f, "/dataset/data", H5P_DEFAULT);
    const hid_t t = H5Dget_type(d), space = H5Dget_space(d);
    traj_offset = H5Tget_member_offset(t, static_cast<unsigned>(H5Tget_member_index(t, "traj")));
    hsize_t start = 0, size = 0;
    unsigned mask = 0;
    ASSERT_GE(H5Dget_chunk_info(d, space, 0, &start, &mask, &chunk, &size), 0);
    H5Sclose(space);
    H5Tclose(t);
    H5Dclose(d);
    H5Fclose(f);
  }
  // The first acquisition's trajectory: length u32, collection address u64, object index u32.
  std::fstream io(path("full.h5"), std::ios::binary | std::ios::in | std::ios::out);
  io.seekp(static_cast<std::streamoff>(chunk + traj_offset + 12));
  const char index[4] = {'\x77', '\x77', 0, 0};
  io.write(index, 4);
  io.close();
  expect_error([&] { read_ismrmrd(path("full.h5")); }, ErrorCode::kInvalidArgument,
               {"the acquisitions element 0", "no heap object", "30583"});
}

// Files from the fuzzer on which libhdf5 1.10 hung or crashed before src/io/hdf5_guard.* refused
// them (tests/io/ismrmrd_regressions); each is now a clear error.
TEST_F(IsmrmrdTest, FuzzerRegressions) {
  const fs::path dir = FIELDFT_ISMRMRD_REGRESSIONS;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"heap_does_not_tile.h5", "global heap"},
      {"dangling_heap_id.h5", "no heap object"},
      {"dangling_heap_collection.h5", "no heap object"},
      {"compound_member_outside.h5", "outside its compound"},
      {"storage_smaller_than_dataspace.h5", "storage holds less than its dataspace"},
      {"zero_size_member_type.h5", "member of size 0"},
      {"chunk_dims_do_not_fit.h5", "chunk dimensions"},
      {"unterminated_member_name.h5", "unterminated member name"},
      {"root_heap_undefined.h5", "B-tree of its root group"},
      // An XML header whose datatype is a 16-byte enumeration of a 1-byte integer: libhdf5 stores
      // the values by the base's size and H5T_copy copies them by the enumeration's (a heap
      // overflow at H5Dopen2).
      {"enum_larger_than_base.h5", "enumeration of another size than its base type"},
      // The root group's local heap has a free block that names itself as the next: libhdf5
      // allocated a node per step until the process passed 2 GB (at H5Lexists).
      {"heap_free_list_cycle.h5", "local heap of its root group has a free list that runs in a cycle"},
  };
  for (const auto& [name, expected] : cases)
    expect_error([&] { read_ismrmrd((dir / name).string()); }, ErrorCode::kInvalidArgument, {name, expected});
}

// A fuzzer input that declares more acquisitions than it stores: counting only the records
// against options.max_bytes let libhdf5's conversion buffers take ~3.5x the budget (2.1 GB under
// 256 MiB). Under a 64 MiB budget it is now refused or read within it; anything but a
// fieldft::Error is a failure (and an out-of-memory kill shows as one).
TEST_F(IsmrmrdTest, RecordsBeyondTheBudget) {
  const fs::path file = fs::path(FIELDFT_ISMRMRD_REGRESSIONS) / "records_beyond_budget.h5";
  IsmrmrdReadOptions o;
  o.max_bytes = std::uint64_t{64} << 20;
  try {
    (void)read_ismrmrd(file.string(), o);
  } catch (const Error& e) {
    SUCCEED() << e.what();
  }
}

TEST_F(IsmrmrdTest, Hdf5ButNotIsmrmrd) {
  const hid_t f = H5Fcreate(path("plain.h5").c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  ASSERT_GE(f, 0);
  H5Fclose(f);
  expect_error([&] { read_ismrmrd(path("plain.h5")); }, ErrorCode::kInvalidArgument, {"plain.h5", "not an ISMRMRD file"});
  // The reader opens read-only: the file is not modified (libismrmrd's own reader adds a group).
  const auto before = fs::last_write_time(path("plain.h5"));
  EXPECT_THROW(read_ismrmrd(path("plain.h5")), Error);
  EXPECT_EQ(fs::last_write_time(path("plain.h5")), before);
}

TEST_F(IsmrmrdTest, NoHeaderOrNoAcquisitions) {
  ApiFile f;
  f.header = false;
  f.write(path("nohdr.h5"));
  expect_error([&] { read_ismrmrd(path("nohdr.h5")); }, ErrorCode::kInvalidArgument, {"no XML header"});
  ApiFile g;
  g.readouts = 0;
  g.write(path("noacq.h5"));
  expect_error([&] { read_ismrmrd(path("noacq.h5")); }, ErrorCode::kInvalidArgument, {"no acquisitions"});
  {
    ISMRMRD::Dataset ds(path("badxml.h5").c_str(), "dataset", true);
    ds.writeHeader("<ismrmrdHeader><encoding>");
  }
  expect_error([&] { read_ismrmrd(path("badxml.h5")); }, ErrorCode::kInvalidArgument, {"XML header"});
}

TEST_F(IsmrmrdTest, MissingTrajectory) {
  ApiFile f;
  f.traj_dims = 0;
  f.write(path("cart.h5"));
  expect_error([&] { read_ismrmrd(path("cart.h5")); }, ErrorCode::kInvalidArgument,
               {"acquisition 0", "no trajectory"});
}

TEST_F(IsmrmrdTest, InconsistentCoilCounts) {
  ApiFile f;
  f.edit = [](ISMRMRD::Acquisition& a, int r) {
    if (r == 2) a.resize(a.number_of_samples(), 3, a.trajectory_dimensions());
  };
  f.write(path("coils.h5"));
  expect_error([&] { read_ismrmrd(path("coils.h5")); }, ErrorCode::kShapeMismatch,
               {"inconsistent coil counts", "acquisition 2", "3"});
  ApiFile g;
  g.receiver_channels = 8;  // the header disagrees with the readouts
  g.write(path("coils_hdr.h5"));
  expect_error([&] { read_ismrmrd(path("coils_hdr.h5")); }, ErrorCode::kShapeMismatch, {"receiverChannels", "8"});
}

TEST_F(IsmrmrdTest, NonFiniteValues) {
  ApiFile f;
  f.data = [](int r, int s, int c) {
    return r == 1 && s == 4 && c == 1 ? std::complex<float>(NAN, 0) : std::complex<float>(1, 0);
  };
  f.write(path("nan.h5"));
  expect_error([&] { read_ismrmrd(path("nan.h5")); }, ErrorCode::kNonFinite, {"acquisition 1 sample 4 coil 1"});
  ApiFile g;
  g.traj = [](int r, int s, int a) { return r == 2 && s == 3 && a == 1 ? INFINITY : 0.f; };
  g.write(path("inf.h5"));
  expect_error([&] { read_ismrmrd(path("inf.h5")); }, ErrorCode::kNonFinite, {"acquisition 2 sample 3", "ky"});
}

TEST_F(IsmrmrdTest, TrajectoryBeyondNyquist) {
  ApiFile f;  // a 16 x 16 grid: |k| <= 8
  f.traj = [](int r, int s, int a) { return r == 1 && s == 9 && a == 0 ? 8.5f : 0.f; };
  f.write(path("far.h5"));
  expect_error([&] { read_ismrmrd(path("far.h5")); }, ErrorCode::kInvalidArgument,
               {"acquisition 1 sample 9", "kx", "Nyquist", "options.units"});
  // Within the tolerance: clamped to the edge, so that mri::Encoding accepts it.
  ApiFile g;
  g.traj = [](int, int s, int a) { return s == 9 && a == 0 ? 8.004f : 0.f; };
  g.write(path("edge.h5"));
  EXPECT_EQ(read_ismrmrd(path("edge.h5")).kx[9], 8.0);
  // A trajectory in 1/m read as cycles/FOV is the usual cause.
  ApiFile h;
  h.traj = [](int, int s, int) { return 4.f * s; };  // up to 36/m: 7.2 cycles over 0.2 m
  h.write(path("per_m.h5"));
  expect_error([&] { read_ismrmrd(path("per_m.h5")); }, ErrorCode::kInvalidArgument, {"cycles/FOV", "Nyquist"});
  IsmrmrdReadOptions o;
  o.units = TrajectoryUnits::kPerMeter;
  EXPECT_NEAR(read_ismrmrd(path("per_m.h5"), o).kx[9], 36 * 0.2, 1e-5);
}

TEST_F(IsmrmrdTest, SlicesMustBeChosen) {
  ApiFile f;
  f.edit = [](ISMRMRD::Acquisition& a, int r) { a.idx().slice = static_cast<std::uint16_t>(r % 2); };
  f.write(path("slices.h5"));
  expect_error([&] { read_ismrmrd(path("slices.h5")); }, ErrorCode::kInvalidArgument, {"slice", "select_slice"});
  IsmrmrdReadOptions o;
  o.select_slice = 1;
  const RawData d = read_ismrmrd(path("slices.h5"), o);
  EXPECT_EQ(d.readouts, std::vector<std::int64_t>{10});
  EXPECT_EQ(d.shots.front(), 1);
  o.select_slice = 5;
  expect_error([&] { read_ismrmrd(path("slices.h5"), o); }, ErrorCode::kInvalidArgument, {"no imaging readouts"});
}

TEST_F(IsmrmrdTest, NonImagingReadoutsAndShotCounters) {
  ApiFile f;
  f.readouts = 4;
  f.edit = [](ISMRMRD::Acquisition& a, int r) {
    if (r == 0) a.setFlag(ISMRMRD::ISMRMRD_ACQ_IS_NOISE_MEASUREMENT);
    a.idx().segment = static_cast<std::uint16_t>(10 - r);
  };
  f.write(path("noise.h5"));
  RawData d = read_ismrmrd(path("noise.h5"));
  EXPECT_EQ(d.readouts.size(), 3u);
  EXPECT_EQ(d.shots.front(), 1);
  EXPECT_EQ(d.num_shots, 4);
  IsmrmrdReadOptions o;
  o.shot_counter = Counter::kSegment;
  d = read_ismrmrd(path("noise.h5"), o);
  EXPECT_EQ(d.shots.front(), 9);
  EXPECT_EQ(d.num_shots, 10);
  o.shot_counter = Counter::kNone;
  d = read_ismrmrd(path("noise.h5"), o);
  EXPECT_EQ(d.num_shots, 1);
  EXPECT_EQ(d.shots.back(), 0);
}

TEST_F(IsmrmrdTest, SizeLimit) {
  write_ismrmrd(path("sim.h5"), simulated(2, 2, 2));
  IsmrmrdReadOptions o;
  o.max_bytes = 4096;
  EXPECT_THROW(read_ismrmrd(path("sim.h5"), o), Error);
}

#endif  // FIELDFT_HAVE_ISMRMRD

}  // namespace
}  // namespace fieldft::io
