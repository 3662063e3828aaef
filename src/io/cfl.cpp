#include "io/cfl.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

#include "fieldft/error.hpp"
#include "io/atomic_file.hpp"
#include "io/input_file.hpp"
#include "io/parallel_pieces.hpp"

namespace fieldft::io {

static_assert(std::endian::native == std::endian::little, "the .cfl reader and writer assume a little-endian host");

namespace {

constexpr std::uint64_t kMaxHeader = 1 << 16;
constexpr std::size_t kMaxDims = 64;

[[noreturn]] void bad(const std::string& name, const std::string& what) {
  throw Error(ErrorCode::kInvalidArgument, "BART file '" + name + "': " + what);
}

std::string dims_text(std::span<const std::int64_t> dims) {
  std::string s = "[";
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (i) s += ' ';
    s += std::to_string(dims[i]);
  }
  return s + "]";
}

// The dimensions line that follows "# Dimensions".
std::vector<std::int64_t> parse_header(std::string_view text, const std::string& name) {
  std::size_t pos = 0;
  bool want_dims = false;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (!want_dims) {
      if (line.starts_with("# Dimensions")) want_dims = true;
      continue;
    }
    std::vector<std::int64_t> dims;
    std::size_t i = 0;
    while (true) {
      while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
      if (i == line.size()) break;
      if (line[i] < '0' || line[i] > '9') bad(name, "the dimensions line holds '" + std::string(line.substr(i, 1)) +
                                                        "'; expected positive integers");
      std::int64_t v = 0;
      while (i < line.size() && line[i] >= '0' && line[i] <= '9') {
        if (v > (std::int64_t{1} << 56)) bad(name, "a dimension beyond 2^56");
        v = 10 * v + (line[i++] - '0');
      }
      if (i < line.size() && line[i] != ' ' && line[i] != '\t') bad(name, "the dimensions line is malformed");
      if (v < 1) bad(name, "dimension " + std::to_string(dims.size()) + " is 0; expected every dimension >= 1");
      dims.push_back(v);
      if (dims.size() > kMaxDims) bad(name, "more than 64 dimensions");
    }
    if (dims.empty()) bad(name, "the line after '# Dimensions' lists no dimensions");
    return dims;
  }
  bad(name, want_dims ? "the header ends after '# Dimensions'" : "the header has no '# Dimensions' line");
}

std::uint64_t data_bytes(std::span<const std::int64_t> dims, const std::string& name) {
  return checked_bytes(dims, sizeof(std::complex<float>), "BART file '" + name + "'");
}

void check_finite(std::span<const std::complex<float>> v, const std::string& name) {
  const std::size_t i =
      first_where(v.size(), [v](std::size_t j) { return !std::isfinite(v[j].real()) || !std::isfinite(v[j].imag()); });
  if (i < v.size())
    throw Error(ErrorCode::kNonFinite, "BART file '" + name + ".cfl': non-finite value at element " +
                                           std::to_string(i) + "; expected finite data");
}

std::string header_text(const std::string& base) {
  const InputFile f(base + ".hdr", "BART header");
  require(f.size() <= kMaxHeader, ErrorCode::kInvalidArgument,
          "BART header '" + base + ".hdr' has " + std::to_string(f.size()) + " bytes; expected a short text file");
  std::string text(static_cast<std::size_t>(f.size()), '\0');
  f.read(0, text.data(), text.size());
  return text;
}

// dims with trailing ones removed beyond `keep` entries.
std::vector<std::int64_t> trimmed(std::vector<std::int64_t> d, std::size_t keep) {
  while (d.size() > keep && d.back() == 1) d.pop_back();
  d.resize(std::max(d.size(), keep), 1);
  return d;
}

void write_pair(const std::string& base_in, std::span<const std::int64_t> dims_in,
                std::span<const std::complex<float>> data) {
  const std::string base = cfl_base(base_in);
  std::vector<std::int64_t> dims(dims_in.begin(), dims_in.end());
  require(!dims.empty() && dims.size() <= kMaxDims, ErrorCode::kInvalidArgument,
          "write_cfl '" + base + "': 1 to 64 dimensions expected, got " + std::to_string(dims.size()));
  for (const auto d : dims)
    require(d >= 1, ErrorCode::kInvalidArgument,
            "write_cfl '" + base + "': dimensions " + dims_text(dims) + " must all be >= 1 (BART has no empty arrays)");
  if (dims.size() < kBartDims) dims.resize(kBartDims, 1);
  const std::uint64_t n = data_bytes(dims, base) / sizeof(std::complex<float>);
  require(n == data.size(), ErrorCode::kShapeMismatch,
          "write_cfl '" + base + "': dimensions " + dims_text(dims) + " hold " + std::to_string(n) + " values, given " +
              std::to_string(data.size()));
  std::string hdr = "# Dimensions\n";
  for (const auto d : dims) hdr += std::to_string(d) + " ";
  hdr += "\n# Creator\nfieldft\n";
  AtomicFile cfl(base + ".cfl"), header(base + ".hdr");
  cfl.write(data.data(), data.size_bytes());
  header.write(hdr.data(), hdr.size());
  cfl.commit();
  header.commit();
}

void require_ones(std::span<const std::int64_t> dims, std::size_t from, const std::string& name, const char* layout) {
  for (std::size_t i = from; i < dims.size(); ++i)
    if (dims[i] != 1)
      throw Error(ErrorCode::kShapeMismatch, "BART file '" + name + "': dimensions " + dims_text(dims) +
                                                 " are not " + layout + " (dimension " + std::to_string(i) +
                                                 " is " + std::to_string(dims[i]) + ", expected 1)");
}

// The dims of an array handed to the *_from_cfl functions must describe its data.
void require_consistent(const CflArray& a, const std::string& name) {
  for (const auto d : a.dims) require(d >= 1, ErrorCode::kInvalidArgument, "BART array '" + name + "': a dimension < 1");
  require(!a.dims.empty() && data_bytes(a.dims, name) / sizeof(std::complex<float>) == a.data.size(),
          ErrorCode::kShapeMismatch, "BART array '" + name + "': dimensions " + dims_text(a.dims) + " for " +
                                         std::to_string(a.data.size()) + " values");
}

}  // namespace

std::string cfl_base(const std::string& path) {
  for (const char* ext : {".cfl", ".hdr"})
    if (path.size() > 4 && path.ends_with(ext)) return path.substr(0, path.size() - 4);
  return path;
}

std::vector<std::int64_t> read_cfl_dims(const std::string& base_in) {
  const std::string base = cfl_base(base_in);
  return parse_header(header_text(base), base + ".hdr");
}

CflArray read_cfl(const std::string& base_in, const CflReadOptions& options) {
  const std::string base = cfl_base(base_in);
  CflArray a;
  a.dims = read_cfl_dims(base);
  const std::uint64_t bytes = data_bytes(a.dims, base + ".hdr");
  const InputFile f(base + ".cfl", "BART data file");
  if (f.size() != bytes)
    bad(base + ".cfl", "the header's dimensions " + dims_text(a.dims) + " need " + std::to_string(bytes) +
                           " bytes of complex float, the file has " + std::to_string(f.size()) +
                           (f.size() < bytes ? " (truncated)" : " (extra bytes)"));
  a.data.resize(static_cast<std::size_t>(bytes / sizeof(std::complex<float>)));
  f.read(0, a.data.data(), bytes);
  if (!options.allow_nonfinite) check_finite(a.data, base);
  return a;
}

CflArray parse_cfl(std::string_view header, std::span<const std::uint8_t> data, const std::string& name,
                   const CflReadOptions& options) {
  CflArray a;
  a.dims = parse_header(header, name + ".hdr");
  const std::uint64_t bytes = data_bytes(a.dims, name);
  if (data.size() != bytes)
    bad(name + ".cfl", "the header's dimensions " + dims_text(a.dims) + " need " + std::to_string(bytes) +
                           " bytes, the data have " + std::to_string(data.size()));
  a.data.resize(static_cast<std::size_t>(bytes / sizeof(std::complex<float>)));
  if (bytes) std::memcpy(a.data.data(), data.data(), bytes);
  if (!options.allow_nonfinite) check_finite(a.data, name);
  return a;
}

void write_cfl(const std::string& base, std::span<const std::int64_t> dims, std::span<const std::complex<float>> data) {
  write_pair(base, dims, data);
}

std::vector<std::int64_t> bart_kspace_dims(std::int64_t samples, std::int64_t spokes, std::int64_t coils) {
  std::vector<std::int64_t> d(kBartDims, 1);
  d[1] = samples;
  d[2] = spokes;
  d[3] = coils;
  return d;
}

std::vector<std::int64_t> bart_trajectory_dims(std::int64_t samples, std::int64_t spokes) {
  std::vector<std::int64_t> d(kBartDims, 1);
  d[0] = 3;
  d[1] = samples;
  d[2] = spokes;
  return d;
}

std::vector<std::int64_t> bart_image_dims(std::span<const std::int64_t> image_shape, std::int64_t coils) {
  require(image_shape.size() == 2 || image_shape.size() == 3, ErrorCode::kInvalidArgument,
          "a BART image needs a 2D or 3D shape, got " + std::to_string(image_shape.size()) + " dimensions");
  std::vector<std::int64_t> d(kBartDims, 1);
  std::copy(image_shape.begin(), image_shape.end(), d.begin());
  d[3] = coils;
  return d;
}

void write_cfl_kspace(const std::string& base, std::int64_t samples, std::int64_t spokes, std::int64_t coils,
                      std::span<const std::complex<float>> data) {
  write_pair(base, bart_kspace_dims(samples, spokes, coils), data);
}

BartKspace read_cfl_kspace(const std::string& base_in, const CflReadOptions& options) {
  const std::string base = cfl_base(base_in);
  return kspace_from_cfl(read_cfl(base, options), base);
}

BartKspace kspace_from_cfl(CflArray&& a, const std::string& base) {
  require_consistent(a, base);
  const auto d = trimmed(a.dims, 4);
  if (d[0] != 1)
    throw Error(ErrorCode::kShapeMismatch, "BART file '" + base + "': dimensions " + dims_text(a.dims) +
                                               " are not non-Cartesian k-space [1, samples, spokes, coils] (dimension 0 is " +
                                               std::to_string(d[0]) + ", expected 1)");
  require_ones(d, 4, base, "non-Cartesian k-space [1, samples, spokes, coils]");
  return {d[1], d[2], d[3], std::move(a.data)};
}

template <class T>
void write_cfl_trajectory(const std::string& base, std::int64_t samples, std::int64_t spokes, std::span<const T> kx,
                          std::span<const T> ky, std::span<const T> kz) {
  require(samples >= 1 && spokes >= 1, ErrorCode::kInvalidArgument,
          "write_cfl_trajectory '" + base + "': samples and spokes must be >= 1");
  const auto m = static_cast<std::size_t>(samples) * static_cast<std::size_t>(spokes);
  require(kx.size() == m && ky.size() == m && (kz.empty() || kz.size() == m), ErrorCode::kShapeMismatch,
          "write_cfl_trajectory '" + base + "': " + std::to_string(samples) + " x " + std::to_string(spokes) +
              " samples need kx, ky (and kz in 3D) of " + std::to_string(m) + " values each");
  std::vector<std::complex<float>> t(3 * m);
  for (std::size_t j = 0; j < m; ++j) {
    t[3 * j] = static_cast<float>(kx[j]);
    t[3 * j + 1] = static_cast<float>(ky[j]);
    t[3 * j + 2] = kz.empty() ? 0.0f : static_cast<float>(kz[j]);
    for (int a = 0; a < 3; ++a)
      require(std::isfinite(t[3 * j + a].real()), ErrorCode::kNonFinite, [&] {
        return std::string("write_cfl_trajectory '" + base + "': non-finite k at sample " + std::to_string(j));
      });
  }
  write_pair(base, bart_trajectory_dims(samples, spokes), t);
}

BartTrajectory read_cfl_trajectory(const std::string& base_in) {
  const std::string base = cfl_base(base_in);
  return trajectory_from_cfl(read_cfl(base), base);
}

BartTrajectory trajectory_from_cfl(const CflArray& a, const std::string& base) {
  require_consistent(a, base);
  const auto d = trimmed(a.dims, 3);
  if (d[0] != 3 && d[0] != 2)
    throw Error(ErrorCode::kShapeMismatch, "BART file '" + base + "': dimensions " + dims_text(a.dims) +
                                               " are not a trajectory [3, samples, spokes] (dimension 0 is " +
                                               std::to_string(d[0]) + ", expected 3)");
  require_ones(d, 3, base, "a trajectory [3, samples, spokes]");
  BartTrajectory t;
  t.samples = d[1];
  t.spokes = d[2];
  const auto m = static_cast<std::size_t>(d[1] * d[2]);
  const auto rows = static_cast<std::size_t>(d[0]);
  t.dim = 2;
  for (int ax = 0; ax < 3; ++ax) t.k[ax].assign(m, 0.0f);
  for (std::size_t j = 0; j < m; ++j)
    for (std::size_t ax = 0; ax < rows; ++ax) {
      const auto v = a.data[rows * j + ax];
      if (v.imag() != 0.0f)
        bad(base + ".cfl", "trajectory sample " + std::to_string(j) + " has an imaginary part; expected real coordinates");
      t.k[ax][j] = v.real();
      if (ax == 2 && v.real() != 0.0f) t.dim = 3;
    }
  return t;
}

void write_cfl_image(const std::string& base, std::span<const std::int64_t> image_shape, std::int64_t coils,
                     std::span<const std::complex<float>> data) {
  write_pair(base, bart_image_dims(image_shape, coils), data);
}

BartImage read_cfl_image(const std::string& base_in, const CflReadOptions& options) {
  const std::string base = cfl_base(base_in);
  return image_from_cfl(read_cfl(base, options), base);
}

BartImage image_from_cfl(CflArray&& a, const std::string& base) {
  require_consistent(a, base);
  const auto d = trimmed(a.dims, 4);
  require_ones(d, 4, base, "an image [x, y, z, coils]");
  BartImage im;
  im.shape = d[2] == 1 ? std::vector<std::int64_t>{d[0], d[1]} : std::vector<std::int64_t>{d[0], d[1], d[2]};
  im.coils = d[3];
  im.data = std::move(a.data);
  return im;
}

template void write_cfl_trajectory<float>(const std::string&, std::int64_t, std::int64_t, std::span<const float>,
                                          std::span<const float>, std::span<const float>);
template void write_cfl_trajectory<double>(const std::string&, std::int64_t, std::int64_t, std::span<const double>,
                                           std::span<const double>, std::span<const double>);

}  // namespace fieldft::io
