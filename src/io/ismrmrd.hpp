// fieldft::io — ISMRMRD raw data (HDF5) in and out: non-Cartesian multi-coil acquisitions with
// their trajectories and readout times, and the coil, field and phase maps that a field-corrected
// or phase-corrected SENSE reconstruction needs (DESIGN.md §1, io layer).
//
// Built on Debian's libismrmrd (1.8) and libhdf5 when fieldft is configured with FIELDFT_ISMRMRD
// (on by default where libismrmrd-dev is installed); without it ismrmrd_available() is false and
// every other function throws Error(kBackendUnavailable).
//
// What is read (one encoding space, `options.encoding`, default 0):
//   grid      the encoding space's matrix size {Nx, Ny} (2D when its z is 1) or {Nx, Ny, Nz};
//             options.space picks the encoded space (default: the space the trajectory encodes,
//             at its own field of view) or the recon space. fov_mm is that space's field of view.
//   k         cycles per field of view of the chosen space, within [-N_d/2, N_d/2] per axis
//             (fieldft's Encoding unit). ISMRMRD does not fix the units of trajectories; the rule:
//               k_file in units U, relative to the ENCODED space (matrix N_enc, FOV F_enc in m):
//                 kCyclesPerFov  k = k_file                   (PowerGrid, fieldft)
//                 kNormalized    k = k_file · N_enc           ([-1/2, 1/2): fraction of the
//                                                              sampling rate, Gadgetron's spiral)
//                 kPerMeter      k = k_file · F_enc           (1/m: Pulseq, scanner gradients)
//                 kRadPerMeter   k = k_file · F_enc / (2π)    (rad/m)
//               then, for the recon space, k · F_recon / F_enc.
//             U = options.units when given, else the header's top-level userParameterString
//             "trajectoryUnits" ("cycles/FOV", "normalized", "1/m", "rad/m"; fieldft writes it),
//             else cycles/FOV. A sample with |k_d| > N_d/2 · (1 + 1e-3) is refused (a trajectory
//             in other units than assumed is the usual cause; the message says so).
//   times     seconds. From a time column of the trajectory when it has one (see time_column),
//             else t = (discard_pre + i) · sample_time_us · 1e-6 + options.time_offset_s for the
//             kept sample i of a readout (time since the ADC start; the field map's phase at the
//             echo is absorbed in the image phase).
//   trajectory columns: trajectory_dimensions D = dim: k only; D = dim + 1: k then time; in 2D
//             D = 4 is PowerGrid's (kx, ky, kz, t) with kz = 0. options.time_column overrides.
//   shots     the shot label of every sample: the value of one encoding counter of its readout,
//             options.shot_counter (default kspace_encode_step_1, PowerGrid's interleave index);
//             num_shots = largest label + 1.
//   data      M samples × C coils, sample j of coil c at j + M·c; samples ordered readout by readout
//             in file order, each readout without its discard_pre / discard_post samples.
//             Readouts flagged as noise, calibration-only, navigator, phase correction, dummy
//             scan, feedback or surface-coil scan, or of another encoding space, are skipped.
//             Slices, contrasts, phases, repetitions and sets: a file holding several values of
//             one of them must be narrowed with the matching options.select_* (else an error).
//   coil_maps, field_map, phase_maps, truth: from NDArrays of the same file named "SENSEMap"
//             (complex, voxels × C), "FieldMap" (real, rad/s, voxels), "PhaseMaps" (real,
//             radians, voxels × num_shots) and "Truth" (complex, voxels) — PowerGrid's names —
//             or from separate ISMRMRD files (options.*_path, the same array name inside). Each
//             is empty when absent. Any numeric type is converted (real arrays into complex
//             maps get zero imaginary parts; complex into real is refused). Accepted shapes (ISMRMRD
//             dims, fastest first, trailing 1s ignored): the flat vector of PowerGrid, or
//             {Nx, Ny[, Nz][, K]} with K = C or num_shots. The coil maps are held in single
//             precision (RawData), their values beyond it an error. Voxel order x fastest (ISMRMRD's own
//             image order); options.map_order = kYFastest reads PowerGrid's vectors, whose
//             voxel index is y + Ny·x (+ Nx·Ny·z) (its initImageSpaceCoords), transposing x and y.
//
// What is written (write_ismrmrd): a header with one encoding (encoded = recon space: grid and
// fov_mm; trajectory type from `trajectory`; limits of kspace_encode_step_1 over the shots), the
// coil count, "trajectoryUnits" = "cycles/FOV"; one acquisition per readout (readouts[r] samples,
// trajectory_dimensions = dim + 1 with the time column when times are given, else dim;
// kspace_encode_step_1 = the readout's shot; sample_time_us from the first readout's times);
// the maps as NDArrays of PowerGrid's types (SENSEMap complex double {Nx, Ny, Nz, C} from the
// single-precision values, FieldMap
// double {Nx, Ny, Nz}, PhaseMaps double {Nx, Ny, Nz, S}) and the truth as "Truth" (complex double
// {Nx, Ny, Nz}), in options.map_order. The file is written under a temporary name in the same
// directory and renamed when complete: a failure leaves the destination as it was.
//
// Errors: fieldft::Error naming the file and what was expected — kInvalidArgument for a missing or
// unreadable file, a file that is not HDF5 or not ISMRMRD, a missing header or trajectory, values
// outside their ranges; kNonFinite for NaN/Inf in data, trajectories, times or maps;
// kShapeMismatch for inconsistent coil counts, sample counts or map shapes; kTooLarge for a file
// that declares more than options.max_bytes of content.
#pragma once

#include <array>
#include <complex>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fieldft::io {

// Whether this build reads and writes ISMRMRD (FIELDFT_ISMRMRD).
bool ismrmrd_available() noexcept;

enum class TrajectoryUnits { kAuto, kCyclesPerFov, kNormalized, kPerMeter, kRadPerMeter };
enum class EncodingSpaceChoice { kEncoded, kRecon };
enum class TimeColumn { kAuto, kNone, kLast };
enum class MapOrder { kXFastest, kYFastest };
enum class Counter {
  kKspaceEncodeStep1, kKspaceEncodeStep2, kAverage, kSlice, kContrast, kPhase, kRepetition, kSet,
  kSegment, kNone  // kNone: one shot
};

// The encoding limits of the header (minimum, maximum, center), absent ones as nullopt.
struct Limit {
  int minimum = 0, maximum = 0, center = 0;
  bool operator==(const Limit&) const = default;
};
struct EncodingLimits {
  std::optional<Limit> kspace_encode_step_0, kspace_encode_step_1, kspace_encode_step_2, average, slice,
      contrast, phase, repetition, set, segment;
  bool operator==(const EncodingLimits&) const = default;
};

struct RawData {
  int dim = 2;
  std::array<std::int64_t, 3> grid{1, 1, 1};  // {Nx, Ny, Nz}, Nz = 1 in 2D
  std::array<double, 3> fov_mm{0, 0, 0};
  std::int64_t coils = 0;                     // C
  std::string trajectory = "other";           // ISMRMRD trajectory type: spiral, radial, other, ...
  EncodingLimits limits;
  std::vector<std::int64_t> readouts;         // samples per readout (acquisition); sum = M
  std::vector<double> kx, ky, kz;             // M each (kz empty in 2D), cycles/FOV
  std::vector<double> times;                  // M, seconds (empty: none)
  std::vector<std::int32_t> shots;            // M, labels >= 0
  std::int64_t num_shots = 1;
  // The two arrays that scale with the coils in single precision, as the files hold them
  // (ISMRMRD acquisitions and BART .cfl are complex float): a stack of slices is gigabytes, and
  // a double copy of it only cost memory and time (the reader, then the solver's float copy).
  std::vector<std::complex<float>> data;       // M × C
  std::vector<std::complex<float>> coil_maps;  // voxels × C, or empty
  std::vector<double> field_map;              // voxels, rad/s, or empty
  std::vector<double> phase_maps;             // voxels × num_shots, radians, or empty
  std::vector<std::complex<double>> truth;    // voxels, or empty

  std::int64_t num_samples() const noexcept { return static_cast<std::int64_t>(kx.size()); }
  std::int64_t num_voxels() const noexcept { return grid[0] * grid[1] * grid[2]; }
};

struct IsmrmrdReadOptions {
  std::string group = "dataset";  // the HDF5 group of the dataset
  int encoding = 0;               // which <encoding> of the header; readouts of others are skipped
  EncodingSpaceChoice space = EncodingSpaceChoice::kEncoded;
  TrajectoryUnits units = TrajectoryUnits::kAuto;
  TimeColumn time_column = TimeColumn::kAuto;
  double time_offset_s = 0;       // added to dwell-derived times
  Counter shot_counter = Counter::kKspaceEncodeStep1;
  // Keep only readouts with these counter values (-1: keep all, and require one value in the file).
  int select_slice = -1, select_contrast = -1, select_phase = -1, select_repetition = -1, select_set = -1;
  MapOrder map_order = MapOrder::kXFastest;
  bool read_maps = true;          // the NDArrays SENSEMap, FieldMap, PhaseMaps, Truth
  std::string coil_maps_path, field_map_path, phase_maps_path;  // separate files (else this one)
  double nyquist_tolerance = 1e-3;  // relative, on |k_d| <= N_d/2
  // Refuse files that declare more content than this (bytes in memory; 0: 16 GiB): a corrupt
  // header must not make the reader allocate without bound.
  std::uint64_t max_bytes = 0;
};

struct IsmrmrdWriteOptions {
  MapOrder map_order = MapOrder::kXFastest;
};

RawData read_ismrmrd(const std::string& path, const IsmrmrdReadOptions& options = {});
void write_ismrmrd(const std::string& path, const RawData& data, const IsmrmrdWriteOptions& options = {});

// Checks the invariants of RawData (sizes, ranges, finiteness); write_ismrmrd calls it, and
// read_ismrmrd's result satisfies it. `what` names the data in messages.
void validate(const RawData& data, const std::string& what);

}  // namespace fieldft::io
