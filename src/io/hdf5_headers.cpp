// fieldft::io::hdf5::check_object_header (hdf5_guard.hpp): a dataset's datatype, dataspace and
// layout messages, read from the file's bytes before H5Dopen2 decodes them.
//
// Only version 1 object headers (what libhdf5 writes by default, and ISMRMRD files have) are
// walked, and only unshared datatype messages, dataspace messages of versions 1 and 2 and layout
// messages of versions 1 to 4 are read.
// Anything else (shared datatypes, opaque types, other header versions), or anything that does
// not parse, gives no verdict: the check refuses a file only on what it has read in a message it
// parsed up to that point (a size or dimension of 0, an enumeration of another size than its base
// type, an unterminated name, chunk dimensions that do not fit).
#include <algorithm>
#include <cstring>
#include <fstream>
#include <vector>

#include "fieldft/error.hpp"
#include "io/hdf5_guard.hpp"

namespace fieldft::io::hdf5 {

namespace {

constexpr int kMaxDepth = 16;
constexpr const char* kZeroSize = "its datatype has a member of size 0 (corrupt datatype)";
constexpr const char* kEnumSize = "its datatype has an enumeration of another size than its base type (corrupt datatype)";

struct Reader {
  const std::vector<unsigned char>& b;
  std::size_t p = 0;
  bool ok = true;
  bool unterminated = false;  // a name ran to the end of the message: corrupt for certain
  std::uint64_t u(unsigned n) {
    if (!ok || n > 8 || p + n > b.size()) {
      ok = false;
      return 0;
    }
    std::uint64_t v = 0;
    for (unsigned i = n; i-- > 0;) v = v << 8 | b[p + i];
    p += n;
    return v;
  }
  void skip(std::size_t n) {
    if (p + n > b.size()) ok = false;
    else p += n;
  }
  // A null-terminated name, then padding to a multiple of 8 (from the name's start) when asked.
  void name(bool pad8) {
    const std::size_t start = p;
    while (ok && p < b.size() && b[p] != 0) ++p;
    if (p >= b.size()) {
      ok = false;
      unterminated = true;
      return;
    }
    ++p;
    if (pad8) skip((8 - (p - start) % 8) % 8);
  }
};

// Parses one datatype at r.p (HDF5 File Format Specification, section IV.A.2.d "The Datatype
// Message"); returns what makes libhdf5 1.10 misbehave on it, or nullptr:
//   * a size of 0 (of the type or of any nested type) or an array dimension of 0 (it divides by
//     them: SIGFPE in H5T_copy);
//   * an enumeration (class 8) of another size than its base type. The specification stores the
//     enumeration's values in its base type's size, and libhdf5 only ever writes the two equal
//     (H5Tenum_create takes the base's size; H5Tset_size resizes both). The decoder allocates the
//     values by the base's size but H5T_copy copies them by the enumeration's (a heap overflow at
//     H5Dopen2, found by the fuzzer).
// A finding is returned only when the bytes it rests on parsed, and ends the parse; other parse
// failures leave r.ok false and return nullptr (no verdict).
const char* type_problem(Reader& r, int depth) {
  if (depth > kMaxDepth) {
    r.ok = false;
    return nullptr;
  }
  const std::uint64_t head = r.u(4);
  const std::uint64_t size = r.u(4);
  if (!r.ok) return nullptr;
  const unsigned cls = head & 0x0f, version = (head >> 4) & 0x0f;
  const std::uint64_t bits = head >> 8;
  if (size == 0) return kZeroSize;
  switch (cls) {
    case 0: r.skip(4); return nullptr;   // fixed-point
    case 1: r.skip(12); return nullptr;  // floating-point
    case 2: r.skip(2); return nullptr;   // time
    case 3: case 7: return nullptr;      // string, reference
    case 4: r.skip(4); return nullptr;   // bitfield
    case 5: r.ok = false; return nullptr;  // opaque: its tag's padding is not certain here, no verdict
    case 6: {                          // compound
      const std::uint64_t n = bits & 0xffff;
      const unsigned offset_bytes = size < (1u << 8) ? 1 : size < (1u << 16) ? 2 : size < (1u << 24) ? 3 : 4;
      for (std::uint64_t i = 0; i < n && r.ok; ++i) {
        r.name(version < 3);
        if (version < 3) {
          r.skip(4);                   // offset
          if (version == 1) r.skip(28);  // dimensionality, reserved, permutation, reserved, 4 dims
        } else {
          r.skip(offset_bytes);
        }
        if (const char* problem = type_problem(r, depth + 1)) return problem;
      }
      return nullptr;
    }
    case 8: {                          // enumeration: base type, names, values
      const std::uint64_t n = bits & 0xffff;
      const std::size_t before = r.p;
      if (const char* problem = type_problem(r, depth + 1)) return problem;
      const std::uint64_t base = r.ok ? Reader{r.b, before + 4}.u(4) : 0;
      const bool mismatch = r.ok && base != size;
      for (std::uint64_t i = 0; i < n && r.ok; ++i) r.name(version < 3);
      // An unterminated name is what libhdf5 trips on first (its decoder strdups the names): the
      // caller reports that. The sizes were read before the names: a verdict whatever follows.
      if (r.unterminated) return nullptr;
      if (mismatch) return kEnumSize;
      if (n > r.b.size() || base > r.b.size()) r.ok = false;
      else r.skip(static_cast<std::size_t>(n * base));
      return nullptr;
    }
    case 9: return type_problem(r, depth + 1);  // variable-length: base type
    case 10: {                         // array
      const std::uint64_t ndims = r.u(1);
      if (version < 3) r.skip(3);
      for (std::uint64_t i = 0; i < ndims && r.ok; ++i)
        if (r.u(4) == 0 && r.ok) return kZeroSize;
      if (version < 3) r.skip(static_cast<std::size_t>(4 * ndims));  // permutation
      return type_problem(r, depth + 1);
    }
    default: r.ok = false; return nullptr;
  }
}

// A chunked layout message's dimensionality (the dataspace's rank + 1) and whether one of its
// chunk dimensions is zero; chunked = false for another layout or a message it cannot parse.
struct Chunking {
  bool chunked = false;
  std::uint64_t dims = 0;
  bool zero = false;
};

Chunking chunking(const std::vector<unsigned char>& msg, unsigned addr_size) {
  Reader r{msg};
  Chunking c;
  const std::uint64_t version = r.u(1);
  unsigned width = 4;
  if (version == 1 || version == 2) {
    c.dims = r.u(1);
    if (r.u(1) != 2) return {};
    r.skip(5 + addr_size);
  } else if (version == 3) {
    if (r.u(1) != 2) return {};
    c.dims = r.u(1);
    r.skip(addr_size);
  } else if (version == 4) {
    if (r.u(1) != 2) return {};
    r.skip(1);  // flags
    c.dims = r.u(1);
    width = static_cast<unsigned>(r.u(1));
    if (width < 1 || width > 8) return {};
  } else {
    return {};
  }
  for (std::uint64_t i = 0; i < c.dims && r.ok; ++i)
    if (r.u(width) == 0 && r.ok) c.zero = true;
  if (!r.ok) return {};
  c.chunked = true;
  return c;
}

}  // namespace

void check_object_header(hid_t loc, const char* name, const FileFacts& facts, const std::string& what) {
  H5O_info_t info;
  if (H5Oget_info_by_name2(loc, name, &info, H5O_INFO_BASIC, H5P_DEFAULT) < 0) return;  // H5Dopen2 will say
  std::ifstream f(facts.path, std::ios::binary);
  const auto read = [&](std::uint64_t at, std::uint64_t n) {
    std::vector<unsigned char> v;
    if (at >= facts.size || n > facts.size - at) return v;
    v.resize(static_cast<std::size_t>(n));
    f.seekg(static_cast<std::streamoff>(at));
    if (!f.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(n))) v.clear();
    return v;
  };
  const std::uint64_t at = facts.base + info.addr;
  const std::vector<unsigned char> prefix = read(at, 16);
  if (prefix.size() != 16 || prefix[0] != 1) return;  // not a version 1 header: no verdict
  Reader pr{prefix};
  pr.skip(2);
  std::uint64_t left = pr.u(2);
  pr.skip(4);
  const std::uint64_t first = pr.u(4);
  std::vector<std::pair<std::uint64_t, std::uint64_t>> blocks = {{at + 16, first}};
  Chunking chunk;
  int rank = -1;
  for (std::size_t k = 0; k < blocks.size() && k < 64 && left > 0; ++k) {
    const std::vector<unsigned char> block = read(blocks[k].first, blocks[k].second);
    Reader r{block};
    while (r.ok && r.p + 8 <= block.size() && left > 0) {
      const std::uint64_t type = r.u(2), size = r.u(2), flags = r.u(1);
      r.skip(3);
      if (!r.ok || r.p + size > block.size()) return;  // no verdict
      const std::vector<unsigned char> msg(block.begin() + static_cast<std::ptrdiff_t>(r.p),
                                           block.begin() + static_cast<std::ptrdiff_t>(r.p + size));
      r.skip(static_cast<std::size_t>(size));
      --left;
      if (type == 0x10) {  // continuation: another block of messages
        Reader c{msg};
        const std::uint64_t offset = c.u(facts.addr_size), length = c.u(facts.length_size);
        if (c.ok) blocks.push_back({facts.base + offset, length});
      } else if (type == 0x03 && (flags & 0x02) == 0) {
        Reader t{msg};
        if (const char* problem = type_problem(t, 0))
          throw Error(ErrorCode::kInvalidArgument, "ISMRMRD file '" + facts.path + "': " + what + ": " + problem);
        // libhdf5 copies member names with strdup: one without its terminator reads past the message.
        if (t.unterminated)
          throw Error(ErrorCode::kInvalidArgument, "ISMRMRD file '" + facts.path + "': " + what +
                                                       ": its datatype has an unterminated member name (corrupt datatype)");
      } else if (type == 0x08) {
        chunk = chunking(msg, facts.addr_size);
      } else if (type == 0x01 && msg.size() >= 2 && (msg[0] == 1 || msg[0] == 2)) {
        rank = msg[1];  // dataspace message, versions 1 and 2: the rank at byte 1
      }
    }
  }
  // libhdf5 divides the dataspace's extent by one chunk dimension per axis (+ the element size).
  if (chunk.chunked && (chunk.zero || (rank >= 0 && chunk.dims != static_cast<std::uint64_t>(rank) + 1)))
    throw Error(ErrorCode::kInvalidArgument,
                "ISMRMRD file '" + facts.path + "': " + what +
                    ": its chunk dimensions do not fit its dataspace, or one is 0 (corrupt layout)");
}

}  // namespace fieldft::io::hdf5
