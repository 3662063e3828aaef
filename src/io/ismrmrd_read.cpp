// fieldft::io ISMRMRD reader (src/io/ismrmrd.hpp).
//
// The file is read through the HDF5 C API, read-only, and the XML header is parsed by
// libismrmrd's deserialize. libismrmrd's own Dataset reader is not used: it opens files
// read-write and creates its group in files that lack one, and it does not check what it reads
// (an acquisition whose stored trajectory or data is shorter than its header says is copied past
// its end; a failed read is copied from uninitialised memory). Here every size is checked before
// it is used, the variable-length arrays are allocated through a budget (options.max_bytes), and
// only the header fields fieldft needs are read (HDF5 converts compound types by member name).
// Before libhdf5 reads variable-length data, src/io/hdf5_guard.* checks the file's global heaps
// and the heap IDs that point into them (libhdf5 1.10 hangs or crashes on corrupt ones).
#include <hdf5.h>
#include <ismrmrd/xml.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numbers>

#include "fieldft/error.hpp"
#include "io/hdf5_guard.hpp"
#include "io/hdf5_util.hpp"
#include "io/ismrmrd.hpp"
#include "io/ismrmrd_maps.hpp"

namespace fieldft::io {

namespace {

using namespace hdf5;
using namespace detail;

// ---------------------------------------------------------------------------------------------
// The XML header.

std::string read_xml(hid_t group, const hdf5::FileFacts& facts, const std::string& gname, std::uint64_t max_bytes) {
  const std::string& path = facts.path;
  if (!has_link(group, "xml")) fail(ErrorCode::kInvalidArgument, path, "no XML header ('/" + gname + "/xml')");
  check_object_header(group, "xml", facts, "the XML header");
  Id dset(H5Dopen2(group, "xml", H5P_DEFAULT), H5Dclose);
  if (!dset.ok()) fail(ErrorCode::kInvalidArgument, path, "the XML header is not a readable dataset");
  Id ftype(H5Dget_type(dset.get()), H5Tclose);
  if (!ftype.ok() || H5Tget_class(ftype.get()) != H5T_STRING)
    fail(ErrorCode::kInvalidArgument, path, "the XML header is not a string");
  const auto dims = extent(dset.get(), path, "the XML header");
  if (count(dims, 1u << 20, path, "the XML header") != 1)
    fail(ErrorCode::kInvalidArgument, path, "the XML header must be one string");
  Id mtype(H5Tcopy(H5T_C_S1), H5Tclose);
  std::string xml;
  if (H5Tis_variable_str(ftype.get()) > 0) {
    hdf5::check_vlen_references(dset.get(), facts, "the XML header", 1, 8 + facts.addr_size, {{0, 1}});
    H5Tset_size(mtype.get(), H5T_VARIABLE);
    VlenArena arena(max_bytes);
    Id dxpl = arena.transfer_list(64);
    char* s = nullptr;
    if (H5Dread(dset.get(), mtype.get(), H5S_ALL, H5S_ALL, dxpl.get(), &s) < 0 || s == nullptr)
      fail(ErrorCode::kInvalidArgument, path, "cannot read the XML header");
    xml = s;  // the arena frees s
  } else {
    const std::size_t n = H5Tget_size(ftype.get());
    if (n == 0 || n > (std::size_t{64} << 20)) fail(ErrorCode::kInvalidArgument, path, "XML header of implausible size");
    H5Tset_size(mtype.get(), n);
    check_storage_size(dset.get(), path, "the XML header", 1, n);
    std::vector<char> buf(n + 1, '\0');
    if (H5Dread(dset.get(), mtype.get(), H5S_ALL, H5S_ALL, transfer_list(n).get(), buf.data()) < 0)
      fail(ErrorCode::kInvalidArgument, path, "cannot read the XML header");
    xml = buf.data();
  }
  if (xml.empty()) fail(ErrorCode::kInvalidArgument, path, "the XML header is empty");
  return xml;
}

std::optional<Limit> convert(const ISMRMRD::Optional<ISMRMRD::Limit>& l) {
  if (!l) return std::nullopt;
  return Limit{l->minimum, l->maximum, l->center};
}

TrajectoryUnits units_from_header(const ISMRMRD::IsmrmrdHeader& h, const std::string& path) {
  if (!h.userParameters) return TrajectoryUnits::kCyclesPerFov;
  for (const auto& p : h.userParameters->userParameterString) {
    if (p.name != "trajectoryUnits") continue;
    if (p.value == "cycles/FOV") return TrajectoryUnits::kCyclesPerFov;
    if (p.value == "normalized") return TrajectoryUnits::kNormalized;
    if (p.value == "1/m") return TrajectoryUnits::kPerMeter;
    if (p.value == "rad/m") return TrajectoryUnits::kRadPerMeter;
    fail(ErrorCode::kInvalidArgument, path,
         "the header's trajectoryUnits '" + p.value +
             "' is not one of cycles/FOV, normalized, 1/m, rad/m (options.units overrides it)");
  }
  return TrajectoryUnits::kCyclesPerFov;
}

const char* units_name(TrajectoryUnits u) {
  switch (u) {
    case TrajectoryUnits::kNormalized: return "normalized";
    case TrajectoryUnits::kPerMeter: return "1/m";
    case TrajectoryUnits::kRadPerMeter: return "rad/m";
    default: return "cycles/FOV";
  }
}

std::string trajectory_name(ISMRMRD::TrajectoryType t) {
  switch (t) {
    case ISMRMRD::TrajectoryType::CARTESIAN: return "cartesian";
    case ISMRMRD::TrajectoryType::EPI: return "epi";
    case ISMRMRD::TrajectoryType::RADIAL: return "radial";
    case ISMRMRD::TrajectoryType::GOLDENANGLE: return "goldenangle";
    case ISMRMRD::TrajectoryType::SPIRAL: return "spiral";
    default: return "other";
  }
}

// ---------------------------------------------------------------------------------------------
// Acquisitions: the subset of ISMRMRD's acquisition record that fieldft reads.

struct Counters {
  std::uint16_t kspace_encode_step_1, kspace_encode_step_2, average, slice, contrast, phase, repetition, set,
      segment;
};
struct Head {
  std::uint64_t flags;
  std::uint16_t number_of_samples, active_channels, discard_pre, discard_post, encoding_space_ref,
      trajectory_dimensions;
  float sample_time_us;
  Counters idx;
};
struct Record {
  Head head;
  hvl_t traj;
  hvl_t data;
};

constexpr const char* kCounterNames[] = {"kspace_encode_step_1", "kspace_encode_step_2", "average", "slice",
                                         "contrast", "phase", "repetition", "set", "segment"};
constexpr const char* kHeadNames[] = {"flags", "number_of_samples", "active_channels", "discard_pre",
                                      "discard_post", "encoding_space_ref", "trajectory_dimensions",
                                      "sample_time_us", "idx"};

Id counters_type() {
  Id t(H5Tcreate(H5T_COMPOUND, sizeof(Counters)), H5Tclose);
  const std::size_t off[] = {offsetof(Counters, kspace_encode_step_1), offsetof(Counters, kspace_encode_step_2),
                             offsetof(Counters, average), offsetof(Counters, slice), offsetof(Counters, contrast),
                             offsetof(Counters, phase), offsetof(Counters, repetition), offsetof(Counters, set),
                             offsetof(Counters, segment)};
  for (int i = 0; i < 9; ++i) H5Tinsert(t.get(), kCounterNames[i], off[i], H5T_NATIVE_UINT16);
  return t;
}

Id record_type() {
  Id head(H5Tcreate(H5T_COMPOUND, sizeof(Head)), H5Tclose);
  H5Tinsert(head.get(), "flags", offsetof(Head, flags), H5T_NATIVE_UINT64);
  H5Tinsert(head.get(), "number_of_samples", offsetof(Head, number_of_samples), H5T_NATIVE_UINT16);
  H5Tinsert(head.get(), "active_channels", offsetof(Head, active_channels), H5T_NATIVE_UINT16);
  H5Tinsert(head.get(), "discard_pre", offsetof(Head, discard_pre), H5T_NATIVE_UINT16);
  H5Tinsert(head.get(), "discard_post", offsetof(Head, discard_post), H5T_NATIVE_UINT16);
  H5Tinsert(head.get(), "encoding_space_ref", offsetof(Head, encoding_space_ref), H5T_NATIVE_UINT16);
  H5Tinsert(head.get(), "trajectory_dimensions", offsetof(Head, trajectory_dimensions), H5T_NATIVE_UINT16);
  H5Tinsert(head.get(), "sample_time_us", offsetof(Head, sample_time_us), H5T_NATIVE_FLOAT);
  Id idx = counters_type();
  H5Tinsert(head.get(), "idx", offsetof(Head, idx), idx.get());
  Id rec(H5Tcreate(H5T_COMPOUND, sizeof(Record)), H5Tclose);
  H5Tinsert(rec.get(), "head", offsetof(Record, head), head.get());
  Id vf(H5Tvlen_create(H5T_NATIVE_FLOAT), H5Tclose);
  H5Tinsert(rec.get(), "traj", offsetof(Record, traj), vf.get());
  H5Tinsert(rec.get(), "data", offsetof(Record, data), vf.get());
  return rec;
}

// The file's acquisition type must hold every member read here, with the right classes: HDF5
// would leave a missing member's memory untouched instead of failing.
void check_record_type(hid_t ftype, const std::string& path) {
  const std::string where = "the acquisitions' type";
  if (H5Tget_class(ftype) != H5T_COMPOUND) fail(ErrorCode::kInvalidArgument, path, where + " is not compound");
  Id head = member(ftype, "head", H5T_COMPOUND, path, where);
  for (const char* n : kHeadNames) {
    const bool is_idx = std::strcmp(n, "idx") == 0;
    const bool is_float = std::strcmp(n, "sample_time_us") == 0;
    Id m = member(head.get(), n, is_idx ? H5T_COMPOUND : is_float ? H5T_FLOAT : H5T_INTEGER, path,
                  "the acquisition header");
    if (is_idx)
      for (const char* c : kCounterNames) member(m.get(), c, H5T_INTEGER, path, "the encoding counters");
  }
  for (const char* n : {"traj", "data"}) {
    Id v = member(ftype, n, H5T_VLEN, path, where);
    Id base(H5Tget_super(v.get()), H5Tclose);
    if (!base.ok() || H5Tget_class(base.get()) != H5T_FLOAT)
      fail(ErrorCode::kInvalidArgument, path, std::string("the acquisitions' ") + n + " is not a float array");
  }
}

std::uint16_t counter_value(const Counters& c, Counter which) {
  switch (which) {
    case Counter::kKspaceEncodeStep1: return c.kspace_encode_step_1;
    case Counter::kKspaceEncodeStep2: return c.kspace_encode_step_2;
    case Counter::kAverage: return c.average;
    case Counter::kSlice: return c.slice;
    case Counter::kContrast: return c.contrast;
    case Counter::kPhase: return c.phase;
    case Counter::kRepetition: return c.repetition;
    case Counter::kSet: return c.set;
    case Counter::kSegment: return c.segment;
    default: return 0;
  }
}

bool flag(std::uint64_t flags, int bit) { return (flags >> (bit - 1)) & 1u; }

// Readouts that carry no imaging data: noise, calibration only, navigator, phase correction,
// HP feedback, dummy scan, RT feedback, surface coil scan, phase stabilisation (ISMRMRD's bits).
bool is_imaging(std::uint64_t flags) {
  for (int bit : {19, 20, 23, 24, 26, 27, 28, 29, 30, 31})
    if (flag(flags, bit)) return false;
  return true;
}

}  // namespace

RawData read_ismrmrd(const std::string& path, const IsmrmrdReadOptions& o) {
  QuietHdf5 quiet;
  const std::uint64_t max_bytes = o.max_bytes ? o.max_bytes : (std::uint64_t{16} << 30);
  require(o.encoding >= 0, ErrorCode::kInvalidArgument, "ISMRMRD: options.encoding must be >= 0");
  require(std::isfinite(o.time_offset_s) && std::isfinite(o.nyquist_tolerance) && o.nyquist_tolerance >= 0,
          ErrorCode::kInvalidArgument, "ISMRMRD: time_offset_s and nyquist_tolerance must be finite (tolerance >= 0)");

  const File file = open_file(path);
  Id group = open_group(file, o.group);

  // Header.
  ISMRMRD::IsmrmrdHeader hdr;
  const std::string xml = read_xml(group.get(), file.facts, o.group, max_bytes);
  try {
    ISMRMRD::deserialize(xml.c_str(), hdr);
  } catch (const std::exception& e) {
    fail(ErrorCode::kInvalidArgument, path, std::string("invalid ISMRMRD XML header: ") + e.what());
  }
  if (hdr.encoding.size() <= static_cast<std::size_t>(o.encoding))
    fail(ErrorCode::kInvalidArgument, path,
         "the header has " + std::to_string(hdr.encoding.size()) + " encodings; options.encoding = " +
             std::to_string(o.encoding));
  const ISMRMRD::Encoding& enc = hdr.encoding[static_cast<std::size_t>(o.encoding)];
  const ISMRMRD::EncodingSpace& space = o.space == EncodingSpaceChoice::kRecon ? enc.reconSpace : enc.encodedSpace;
  const char* space_name = o.space == EncodingSpaceChoice::kRecon ? "reconSpace" : "encodedSpace";

  RawData d;
  d.grid = {space.matrixSize.x, space.matrixSize.y, space.matrixSize.z};
  for (auto n : d.grid)
    if (n < 1) fail(ErrorCode::kInvalidArgument, path, std::string(space_name) + " has a matrix size < 1");
  d.dim = d.grid[2] > 1 ? 3 : 2;
  d.fov_mm = {space.fieldOfView_mm.x, space.fieldOfView_mm.y, space.fieldOfView_mm.z};
  d.trajectory = trajectory_name(enc.trajectory);
  const auto& L = enc.encodingLimits;
  d.limits = {convert(L.kspace_encoding_step_0), convert(L.kspace_encoding_step_1), convert(L.kspace_encoding_step_2),
              convert(L.average), convert(L.slice), convert(L.contrast), convert(L.phase), convert(L.repetition),
              convert(L.set), convert(L.segment)};
  const TrajectoryUnits units = o.units == TrajectoryUnits::kAuto ? units_from_header(hdr, path) : o.units;

  // k-space scale per axis: file units -> cycles per FOV of the chosen space.
  const double nenc[3] = {double(enc.encodedSpace.matrixSize.x), double(enc.encodedSpace.matrixSize.y),
                          double(enc.encodedSpace.matrixSize.z)};
  const double fenc[3] = {enc.encodedSpace.fieldOfView_mm.x, enc.encodedSpace.fieldOfView_mm.y,
                          enc.encodedSpace.fieldOfView_mm.z};
  double scale[3];
  for (int a = 0; a < d.dim; ++a) {
    const bool needs_fov = units == TrajectoryUnits::kPerMeter || units == TrajectoryUnits::kRadPerMeter ||
                           o.space == EncodingSpaceChoice::kRecon;
    if (needs_fov && !(std::isfinite(fenc[a]) && fenc[a] > 0 && std::isfinite(d.fov_mm[a]) && d.fov_mm[a] > 0))
      fail(ErrorCode::kInvalidArgument, path,
           "the fields of view must be finite and > 0 to convert trajectories in " + std::string(units_name(units)) +
               " or to the reconSpace");
    switch (units) {
      case TrajectoryUnits::kNormalized: scale[a] = nenc[a]; break;
      case TrajectoryUnits::kPerMeter: scale[a] = fenc[a] * 1e-3; break;
      case TrajectoryUnits::kRadPerMeter: scale[a] = fenc[a] * 1e-3 / (2 * std::numbers::pi); break;
      default: scale[a] = 1;
    }
    if (o.space == EncodingSpaceChoice::kRecon) scale[a] *= d.fov_mm[a] / fenc[a];
  }
  if (hdr.acquisitionSystemInformation && hdr.acquisitionSystemInformation->receiverChannels)
    d.coils = *hdr.acquisitionSystemInformation->receiverChannels;

  // Acquisitions.
  const std::string gname = "/" + o.group + "/data";
  if (!has_link(group.get(), "data")) fail(ErrorCode::kInvalidArgument, path, "no acquisitions ('" + gname + "')");
  check_object_header(group.get(), "data", file.facts, "the acquisitions");
  Id dset(H5Dopen2(group.get(), "data", H5P_DEFAULT), H5Dclose);
  if (!dset.ok()) fail(ErrorCode::kInvalidArgument, path, "the acquisitions are not a readable dataset");
  const auto adims = extent(dset.get(), path, "the acquisitions");
  if (adims.size() != 1) fail(ErrorCode::kInvalidArgument, path, "the acquisitions must be a 1D dataset");
  // The read's memory per record: the Record itself and libhdf5's type-conversion and background
  // buffers (H5Pset_buffer, kTransferPerRecord bytes each). All three count against max_bytes;
  // counting the Records alone let a file declaring max_bytes/sizeof(Record) unwritten records
  // take ~3.5x the budget (found by the fuzzer: 2.1 GB under a 256 MiB budget).
  constexpr std::uint64_t kTransferPerRecord = 512;  // a record is about 350 bytes on disk
  constexpr std::uint64_t kPerRecord = sizeof(Record) + 2 * kTransferPerRecord;
  const std::uint64_t nacq = count(adims, max_bytes / kPerRecord, path, "the acquisitions");
  if (nacq == 0) fail(ErrorCode::kInvalidArgument, path, "no acquisitions");
  {
    Id ftype(H5Dget_type(dset.get()), H5Tclose);
    if (!ftype.ok()) fail(ErrorCode::kInvalidArgument, path, "the acquisitions' type is unreadable");
    check_record_type(ftype.get(), path);
    hdf5::check_type_layout(ftype.get(), path, "the acquisitions' type");
    const std::size_t esize = H5Tget_size(ftype.get());
    if (esize == 0 || nacq > max_bytes / esize)
      fail(ErrorCode::kTooLarge, path, "the acquisitions' storage exceeds options.max_bytes");
    std::vector<hdf5::VlenMember> members;
    for (const char* n : {"traj", "data"}) {
      const unsigned i = static_cast<unsigned>(H5Tget_member_index(ftype.get(), n));
      Id v(H5Tget_member_type(ftype.get(), i), H5Tclose);
      Id base(H5Tget_super(v.get()), H5Tclose);
      members.push_back({H5Tget_member_offset(ftype.get(), i), H5Tget_size(base.get())});
    }
    hdf5::check_vlen_references(dset.get(), file.facts, "the acquisitions", nacq, esize, members);
  }
  std::vector<Record> recs(nacq);
  std::memset(static_cast<void*>(recs.data()), 0, nacq * sizeof(Record));
  VlenArena arena(max_bytes - nacq * kPerRecord);
  {
    Id dxpl = arena.transfer_list(nacq * kTransferPerRecord);
    Id mtype = record_type();
    if (!dxpl.ok() || !mtype.ok() || H5Dread(dset.get(), mtype.get(), H5S_ALL, H5S_ALL, dxpl.get(), recs.data()) < 0)
      fail(ErrorCode::kInvalidArgument, path,
           "cannot read the acquisitions (corrupt file, or variable-length data beyond options.max_bytes)");
  }

  // Which readouts are kept, and the checks that need all of them.
  const int selects[5] = {o.select_slice, o.select_contrast, o.select_phase, o.select_repetition, o.select_set};
  const Counter sel_counter[5] = {Counter::kSlice, Counter::kContrast, Counter::kPhase, Counter::kRepetition,
                                  Counter::kSet};
  const char* sel_name[5] = {"slice", "contrast", "phase", "repetition", "set"};
  std::vector<std::uint64_t> kept;
  int first_value[5] = {-1, -1, -1, -1, -1};
  for (std::uint64_t i = 0; i < nacq; ++i) {
    const Head& h = recs[i].head;
    if (!is_imaging(h.flags) || h.encoding_space_ref != o.encoding) continue;
    bool keep = true;
    for (int s = 0; s < 5; ++s) {
      const int v = counter_value(h.idx, sel_counter[s]);
      if (selects[s] >= 0) {
        keep = keep && v == selects[s];
      } else if (first_value[s] < 0) {
        first_value[s] = v;
      } else if (v != first_value[s]) {
        fail(ErrorCode::kInvalidArgument, path,
             std::string("the readouts hold several ") + sel_name[s] + " values (" + std::to_string(first_value[s]) +
                 " and " + std::to_string(v) + "): choose one with options.select_" + sel_name[s]);
      }
    }
    if (keep) kept.push_back(i);
  }
  if (kept.empty()) fail(ErrorCode::kInvalidArgument, path, "no imaging readouts (after the selections)");

  // Sizes first: every readout's arrays must hold what its header says.
  std::int64_t m = 0;
  std::int64_t coils = 0;
  int traj_dims = -1;
  for (std::uint64_t i : kept) {
    const Head& h = recs[i].head;
    const std::string acq = "acquisition " + std::to_string(i);
    const std::uint64_t ns = h.number_of_samples, c = h.active_channels, td = h.trajectory_dimensions;
    if (ns == 0 || c == 0) fail(ErrorCode::kInvalidArgument, path, acq + " has no samples or no channels");
    if (td == 0)
      fail(ErrorCode::kInvalidArgument, path,
           acq + " has no trajectory (trajectory_dimensions = 0): fieldft reads non-Cartesian data with its "
                 "trajectory");
    if (recs[i].traj.len != ns * td)
      fail(ErrorCode::kShapeMismatch, path,
           acq + ": its trajectory holds " + std::to_string(recs[i].traj.len) + " values, expected " +
               std::to_string(ns) + " samples x " + std::to_string(td) + " dimensions");
    if (recs[i].data.len != 2 * ns * c)
      fail(ErrorCode::kShapeMismatch, path,
           acq + ": its data holds " + std::to_string(recs[i].data.len) + " floats, expected 2 x " +
               std::to_string(ns) + " samples x " + std::to_string(c) + " channels");
    if (coils == 0) coils = static_cast<std::int64_t>(c);
    if (static_cast<std::int64_t>(c) != coils)
      fail(ErrorCode::kShapeMismatch, path,
           "inconsistent coil counts: " + acq + " has " + std::to_string(c) + " active channels, the first readout " +
               std::to_string(coils));
    if (traj_dims < 0) traj_dims = static_cast<int>(td);
    if (static_cast<int>(td) != traj_dims)
      fail(ErrorCode::kShapeMismatch, path,
           "inconsistent trajectory dimensions: " + acq + " has " + std::to_string(td) + ", the first readout " +
               std::to_string(traj_dims));
    if (std::uint64_t{h.discard_pre} + h.discard_post >= ns)
      fail(ErrorCode::kInvalidArgument, path, acq + ": discard_pre + discard_post leave no sample");
    m += static_cast<std::int64_t>(ns - h.discard_pre - h.discard_post);
  }
  if (d.coils != 0 && d.coils != coils)
    fail(ErrorCode::kShapeMismatch, path,
         "inconsistent coil counts: the header's receiverChannels is " + std::to_string(d.coils) +
             ", the readouts have " + std::to_string(coils) + " active channels");
  d.coils = coils;
  const std::uint64_t bytes = static_cast<std::uint64_t>(m) * (32 + 16 * static_cast<std::uint64_t>(coils));
  if (bytes > max_bytes) fail(ErrorCode::kTooLarge, path, "the data need more memory than options.max_bytes");

  // Trajectory columns.
  bool has_time = false;
  switch (o.time_column) {
    case TimeColumn::kNone: has_time = false; break;
    case TimeColumn::kLast: has_time = true; break;
    default: has_time = traj_dims == d.dim + 1 || (d.dim == 2 && traj_dims == 4);
  }
  const int kdims = has_time ? traj_dims - 1 : traj_dims;
  if (kdims < d.dim || (kdims > d.dim && !(d.dim == 2 && kdims == 3)))
    fail(ErrorCode::kShapeMismatch, path,
         "trajectory_dimensions = " + std::to_string(traj_dims) + " does not fit a " + std::to_string(d.dim) +
             "D grid" + (has_time ? " with a time column" : "") + ": expected " + std::to_string(d.dim) + " or " +
             std::to_string(d.dim + 1) + " (k, then time)" + (d.dim == 2 ? ", or 4 (kx, ky, kz = 0, t)" : ""));

  d.kx.reserve(m);
  d.ky.reserve(m);
  if (d.dim == 3) d.kz.reserve(m);
  d.times.reserve(m);
  d.shots.reserve(m);
  d.data.resize(static_cast<std::size_t>(m * coils));
  int max_shot = 0;
  std::int64_t j = 0;
  for (std::uint64_t i : kept) {
    const Head& h = recs[i].head;
    const std::string acq = "acquisition " + std::to_string(i);
    const auto* traj = static_cast<const float*>(recs[i].traj.p);
    const auto* data = static_cast<const float*>(recs[i].data.p);
    const int ns = h.number_of_samples;
    const int first = h.discard_pre, last = ns - h.discard_post;
    d.readouts.push_back(last - first);
    const int shot = counter_value(h.idx, o.shot_counter);
    max_shot = std::max(max_shot, shot);
    if (!has_time && !(std::isfinite(h.sample_time_us) && h.sample_time_us >= 0))
      fail(ErrorCode::kInvalidArgument, path, acq + ": sample_time_us must be finite and >= 0");
    for (int s = first; s < last; ++s, ++j) {
      const float* t = traj + static_cast<std::size_t>(s) * traj_dims;
      for (int a = 0; a < kdims; ++a) {
        const double half = d.grid[a < 3 ? a : 2] / 2.0;
        const double k = a < d.dim ? t[a] * scale[a] : t[a];
        const char axis = "xyz"[a];
        if (!std::isfinite(k))
          fail(ErrorCode::kNonFinite, path, acq + " sample " + std::to_string(s) + ": k" + axis + " is not finite");
        if (a >= d.dim) {  // PowerGrid's kz column of a 2D dataset
          if (k != 0)
            fail(ErrorCode::kInvalidArgument, path,
                 acq + " sample " + std::to_string(s) + ": kz = " + std::to_string(k) + " in a 2D dataset");
          continue;
        }
        double kc = k;
        if (std::abs(k) > half) {
          if (std::abs(k) > half * (1 + o.nyquist_tolerance))
            fail(ErrorCode::kInvalidArgument, path,
                 acq + " sample " + std::to_string(s) + ": k" + axis + " = " + std::to_string(k) +
                     " cycles/FOV is beyond the grid's Nyquist range [-" + std::to_string(half) + ", " +
                     std::to_string(half) + "] (" + space_name + " matrix " + std::to_string(d.grid[a]) +
                     "; trajectory read as " + units_name(units) +
                     "): a trajectory in other units needs options.units");
          kc = std::copysign(half, k);
        }
        (a == 0 ? d.kx : a == 1 ? d.ky : d.kz).push_back(kc);
      }
      double time = 0;
      if (has_time) {
        time = t[traj_dims - 1];
        if (!std::isfinite(time))
          fail(ErrorCode::kNonFinite, path, acq + " sample " + std::to_string(s) + ": its time is not finite");
      } else {
        time = s * (h.sample_time_us * 1e-6) + o.time_offset_s;
      }
      d.times.push_back(time);
      d.shots.push_back(shot);
      for (std::int64_t c = 0; c < coils; ++c) {
        const float* z = data + 2 * (static_cast<std::size_t>(c) * ns + s);
        if (!std::isfinite(z[0]) || !std::isfinite(z[1]))
          fail(ErrorCode::kNonFinite, path,
               acq + " sample " + std::to_string(s) + " coil " + std::to_string(c) + ": data not finite");
        d.data[static_cast<std::size_t>(j + m * c)] = {z[0], z[1]};
      }
    }
  }
  d.num_shots = max_shot + 1;
  if (o.shot_counter == Counter::kNone) d.num_shots = 1;

  // Maps.
  if (o.read_maps) {
    const std::uint64_t mb = max_bytes;
    auto from = [&](const std::string& other, const std::string& name, std::int64_t k) -> std::optional<NdArray> {
      if (other.empty()) return read_ndarray(group.get(), file.facts, name, mb, d, k);
      const File f2 = open_file(other);
      Id g2 = open_group(f2, o.group);
      auto a = read_ndarray(g2.get(), f2.facts, name, mb, d, k);
      if (!a) fail(ErrorCode::kInvalidArgument, other, "no NDArray '" + name + "' in '/" + o.group + "'");
      return a;
    };
    const std::string& cp = o.coil_maps_path.empty() ? path : o.coil_maps_path;
    const std::string& fp = o.field_map_path.empty() ? path : o.field_map_path;
    const std::string& pp = o.phase_maps_path.empty() ? path : o.phase_maps_path;
    if (auto a = from(o.coil_maps_path, "SENSEMap", d.coils))
      d.coil_maps =
          single_precision(map_values(std::move(*a), d, d.coils, o.map_order, cp, "SENSEMap", true), cp, "SENSEMap");
    if (auto a = from(o.field_map_path, "FieldMap", 0))
      d.field_map = real_part(map_values(std::move(*a), d, 0, o.map_order, fp, "FieldMap", false));
    if (auto a = from(o.phase_maps_path, "PhaseMaps", d.num_shots))
      d.phase_maps = real_part(map_values(std::move(*a), d, d.num_shots, o.map_order, pp, "PhaseMaps", false));
    if (auto a = read_ndarray(group.get(), file.facts, "Truth", mb, d, 0))
      d.truth = map_values(std::move(*a), d, 0, o.map_order, path, "Truth", true);
  }
  return d;
}

}  // namespace fieldft::io
