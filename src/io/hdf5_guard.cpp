// fieldft::io::hdf5 — see hdf5_guard.hpp.
#include "io/hdf5_guard.hpp"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>

#include "fieldft/error.hpp"

namespace fieldft::io::hdf5 {

namespace {

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw Error(ErrorCode::kInvalidArgument, "ISMRMRD file '" + path + "': " + what);
}

// Random access to the file's bytes, zeros past its end (as libhdf5's sec2 driver reads them).
class Bytes {
 public:
  Bytes(const std::string& path, std::uint64_t size) : f_(path, std::ios::binary), size_(size) {}
  void read(std::uint64_t off, std::size_t n, unsigned char* out) {
    std::memset(out, 0, n);
    if (off >= size_) return;
    f_.clear();
    f_.seekg(static_cast<std::streamoff>(off));
    f_.read(reinterpret_cast<char*>(out), static_cast<std::streamsize>(std::min<std::uint64_t>(n, size_ - off)));
  }
  std::uint64_t le(std::uint64_t off, unsigned n) {
    unsigned char b[8];
    read(off, n, b);
    return decode(b, n);
  }
  static std::uint64_t decode(const unsigned char* b, unsigned n) {
    std::uint64_t v = 0;
    for (unsigned i = n; i-- > 0;) v = v << 8 | b[i];
    return v;
  }

 private:
  std::ifstream f_;
  std::uint64_t size_;
};

std::optional<std::uint64_t> signature_offset(Bytes& bytes, std::uint64_t size) {
  static constexpr unsigned char kSignature[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
  for (std::uint64_t at = 0; at + 8 <= size; at = at == 0 ? 512 : at * 2) {
    unsigned char b[8];
    bytes.read(at, 8, b);
    if (std::memcmp(b, kSignature, 8) == 0) return at;
  }
  return std::nullopt;
}

std::uint64_t align8(std::uint64_t n) { return (n + 7) & ~std::uint64_t{7}; }

// Walks the collection at file offset `at` as H5HG's deserialiser does; false when it would stall
// or overrun. Records the objects with index > 0.
bool walk(Bytes& bytes, std::uint64_t at, std::uint64_t file_size, unsigned lsize,
          std::unordered_map<std::uint64_t, std::uint64_t>& objects) {
  const std::uint64_t hdr = align8(8 + lsize), objhdr = align8(8 + lsize);
  const std::uint64_t csize = bytes.le(at + 8, lsize);
  if (csize < hdr) return true;  // libhdf5 refuses a collection smaller than its header
  // libhdf5 allocates the whole collection: one that runs past the end of the file is corrupt
  // (or the file truncated), and could ask for any amount of memory.
  if (csize > file_size - at) return false;
  for (std::uint64_t p = hdr; p < csize;) {
    if (p + objhdr > csize) return true;  // the rest is free space
    const std::uint64_t idx = bytes.le(at + p, 2);
    const std::uint64_t osize = bytes.le(at + p + 8, lsize);
    const std::uint64_t need = idx > 0 ? objhdr + align8(osize) : osize;
    if (need == 0 || osize > csize || need > csize - p) return false;  // stalls or overruns
    if (idx > 0) objects[idx] = osize;
    p += need;
  }
  return true;
}

// n bytes at address rel (relative to the superblock) inside the file, without overflow.
bool within(const FileFacts& facts, std::uint64_t rel, std::uint64_t n) {
  return rel <= facts.size && n <= facts.size && facts.base + rel + n <= facts.size;
}

// The free list of a local heap whose data segment (data_size bytes at address data) lies in the
// file. HDF5 File Format Specification, section III.D "Disk Format: Level 1D - Local Heaps": the
// heap's header holds the offset of the first free block in the data segment, each free block
// starts with the offset of the next (1 ends the list) and its own size, both lengths.
// libhdf5 1.10's H5HL__fl_deserialize follows the list until it reads 1, allocating a node per
// block, with no check for a cycle: a block that names itself grew the process past 2 GB (found
// by the fuzzer). It also reads both fields of any block that starts inside the data segment,
// even where they run past its end. Free blocks are disjoint and each holds its two fields
// (libhdf5 never keeps a smaller one), so a valid list has at most data_size / (2 * length size)
// blocks. An offset libhdf5 refuses itself (outside the data segment) ends the walk.
std::optional<std::string> free_list_problem(Bytes& bytes, const FileFacts& facts, std::uint64_t heap,
                                             std::uint64_t data, std::uint64_t data_size) {
  const unsigned ls = facts.length_size;
  const std::uint64_t limit = data_size / (2 * ls);
  std::uint64_t block = bytes.le(facts.base + heap + 8 + ls, ls);
  for (std::uint64_t n = 0; block != 1 && block < data_size; ++n) {
    if (block + 2 * ls > data_size)
      return "has a free block at offset " + std::to_string(block) + " that runs past its data segment";
    if (n >= limit) return "has a free list that runs in a cycle";
    block = bytes.le(facts.base + data + block, ls);
  }
  return std::nullopt;
}

// The group whose object header is at `ohdr` (relative to the superblock), in a superblock
// version 0 or 1 file (what libhdf5 1.10 writes by default, and ISMRMRD files have): its object
// header's symbol-table message (section IV.A.2.r) names a v1 B-tree ("TREE", section III.A.1)
// and a local heap ("HEAP", version 0, section III.D) whose data segment lies in the file.
// libhdf5 looks every name up there (H5Lexists, H5Gopen2, H5Dopen2) without checking that either
// exists: an undefined heap address reaches H5HL_protect and a null read in H5F__accum_read (a
// segmentation fault), a cycle in the heap's free list an unbounded allocation (both found by the
// fuzzer). Returns what is wrong, or nothing; a header it cannot walk (another version, the
// message in a continuation block) gives no verdict. `who` names the group ("its root group").
std::optional<std::string> symbol_table_problem(Bytes& bytes, const FileFacts& facts, std::uint64_t ohdr,
                                                const std::string& who) {
  const unsigned as = facts.addr_size, ls = facts.length_size;
  const std::uint64_t sb = facts.base;
  if (!within(facts, ohdr, 16) || bytes.le(sb + ohdr, 1) != 1) return std::nullopt;  // not a v1 header
  const std::uint64_t messages = bytes.le(sb + ohdr + 2, 2), size = bytes.le(sb + ohdr + 8, 4);
  std::uint64_t p = sb + ohdr + 16;
  const std::uint64_t end = p + size;
  for (std::uint64_t i = 0; i < messages && p + 8 <= end; ++i) {
    const std::uint64_t type = bytes.le(p, 2), msize = bytes.le(p + 2, 2);
    if (type == 0x11) {  // symbol table: B-tree address, local heap address
      if (msize < 2 * std::uint64_t{as}) return std::nullopt;
      const std::uint64_t tree = bytes.le(p + 8, as), heap = bytes.le(p + 8 + as, as);
      unsigned char sig[5];
      if (!within(facts, tree, 4)) return "the B-tree of " + who + " lies outside the file (address " + std::to_string(tree) + ")";
      bytes.read(sb + tree, 4, sig);
      if (std::memcmp(sig, "TREE", 4) != 0) return "the B-tree of " + who + " has no TREE signature";
      if (!within(facts, heap, 8 + 2 * std::uint64_t{ls} + as))
        return "the local heap of " + who + " lies outside the file (address " + std::to_string(heap) + ")";
      bytes.read(sb + heap, 5, sig);
      if (std::memcmp(sig, "HEAP", 4) != 0 || sig[4] != 0) return "the local heap of " + who + " has no HEAP signature (version 0)";
      const std::uint64_t data_size = bytes.le(sb + heap + 8, ls);
      const std::uint64_t data = bytes.le(sb + heap + 8 + 2 * ls, as);
      if (data_size > facts.size || !within(facts, data, data_size))
        return "the data of the local heap of " + who + " (" + std::to_string(data_size) + " bytes at " +
               std::to_string(data) + ") lie outside the file";
      if (const auto problem = free_list_problem(bytes, facts, heap, data, data_size))
        return "the local heap of " + who + " " + *problem;
      return std::nullopt;
    }
    p += 8 + msize;
  }
  return std::nullopt;
}

// The root group of a superblock version 0 or 1 file (section II.A): its object header's address
// is in the root's symbol-table entry at the superblock's end.
std::optional<std::string> root_group_problem(Bytes& bytes, const FileFacts& facts) {
  const unsigned as = facts.addr_size;
  const unsigned version = static_cast<unsigned>(bytes.le(facts.base + 8, 1));
  if (version > 1) return std::nullopt;
  // Signature, versions and sizes (16 bytes), the B-tree K values and flags (8), version 1's
  // indexed-storage K and reserved bytes (4), four addresses, then the root's symbol-table entry
  // (link-name offset, object header address, ...).
  const std::uint64_t entry = facts.base + 24 + (version == 1 ? 4 : 0) + 4 * std::uint64_t{as};
  return symbol_table_problem(bytes, facts, bytes.le(entry + as, as), "its root group");
}

}  // namespace

FileFacts inspect(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const auto status = fs::status(path, ec);
  if (ec || !fs::exists(status)) fail(path, "no such file");
  if (!fs::is_regular_file(status)) fail(path, "not a regular file");
  FileFacts facts;
  facts.path = path;
  facts.size = fs::file_size(path, ec);
  if (ec) fail(path, "cannot read its size");
  Bytes bytes(path, facts.size);
  const auto base = signature_offset(bytes, facts.size);
  if (!base)
    fail(path, "not an HDF5 file (no HDF5 signature; " + std::to_string(facts.size) +
                   " bytes): expected an ISMRMRD file");
  facts.base = *base;
  // Sizes of addresses and lengths: superblock version 0/1 at bytes 13/14, 2/3 at 9/10.
  unsigned char sb[16];
  bytes.read(facts.base, 16, sb);
  facts.addr_size = sb[8] <= 1 ? sb[13] : sb[9];
  facts.length_size = sb[8] <= 1 ? sb[14] : sb[10];
  const auto valid = [](unsigned s) { return s == 2 || s == 4 || s == 8; };
  if (!valid(facts.addr_size) || !valid(facts.length_size)) return facts;  // libhdf5 refuses it
  if (const auto problem = root_group_problem(bytes, facts)) fail(path, "corrupt HDF5 file: " + *problem);

  static constexpr char kGcol[5] = {'G', 'C', 'O', 'L', '\1'};
  std::ifstream f(path, std::ios::binary);
  std::vector<char> buf(static_cast<std::size_t>(std::min<std::uint64_t>(facts.size, std::uint64_t{1} << 20)) + 8);
  std::uint64_t offset = 0;  // file offset of buf[0]
  std::size_t keep = 0;      // bytes carried over from the previous block
  while (f) {
    f.read(buf.data() + keep, static_cast<std::streamsize>(buf.size() - keep));
    const std::size_t n = keep + static_cast<std::size_t>(f.gcount());
    if (n < sizeof kGcol) break;
    for (std::size_t i = 0; i + sizeof kGcol <= n; ++i) {
      if (buf[i] != 'G' || std::memcmp(buf.data() + i, kGcol, sizeof kGcol) != 0) continue;
      if (!walk(bytes, offset + i, facts.size, facts.length_size, facts.heaps[offset + i]))
        fail(path, "corrupt HDF5 global heap at byte " + std::to_string(offset + i) +
                       " (its objects do not tile it, or it runs past the end of the file)");
    }
    keep = sizeof kGcol - 1;
    std::memmove(buf.data(), buf.data() + n - keep, keep);
    offset += n - keep;
  }
  return facts;
}

void check_group(hid_t loc, const char* name, const FileFacts& facts) {
  H5O_info_t info;
  if (H5Oget_info_by_name2(loc, name, &info, H5O_INFO_BASIC, H5P_DEFAULT) < 0) return;  // H5Gopen2 will say
  if (info.type != H5O_TYPE_GROUP) return;
  Bytes bytes(facts.path, facts.size);
  if (bytes.le(facts.base + 8, 1) > 1) return;  // superblock version 2 or 3: no verdict
  if (const auto problem = symbol_table_problem(bytes, facts, info.addr, "group '/" + std::string(name) + "'"))
    fail(facts.path, "corrupt HDF5 file: " + *problem);
}

void check_vlen_references(hid_t dset, const FileFacts& facts, const std::string& what, std::uint64_t n,
                           std::size_t element_size, const std::vector<VlenMember>& members) {
  const std::string& path = facts.path;
  // Memory and disk layouts of an element agree only for 8-byte addresses (a heap ID is then as
  // large as libhdf5's hvl_t); libhdf5 writes those by default.
  if (facts.addr_size != 8) fail(path, what + ": variable-length data need 8-byte file addresses");
  const std::size_t ref_size = 8 + facts.addr_size;
  for (const VlenMember& m : members)
    if (m.offset + ref_size > element_size) fail(path, what + ": unexpected storage layout");
  // The raw bytes of every element, in order.
  std::vector<unsigned char> raw(static_cast<std::size_t>(n * element_size), 0);
  Bytes bytes(path, facts.size);
  const hid_t dcpl = H5Dget_create_plist(dset);
  if (dcpl < 0) fail(path, what + ": unreadable storage properties");
  const H5D_layout_t layout = H5Pget_layout(dcpl);
  const int nfilters = H5Pget_nfilters(dcpl);
  const int external = H5Pget_external_count(dcpl);
  hsize_t chunk = 0;
  const bool chunk_ok = layout != H5D_CHUNKED || H5Pget_chunk(dcpl, 1, &chunk) == 1;
  H5Pclose(dcpl);
  if (nfilters != 0) fail(path, what + ": filtered (compressed) variable-length data are not supported");
  if (external != 0) fail(path, what + ": variable-length data in external files are not supported");
  if (layout == H5D_CONTIGUOUS) {
    const haddr_t addr = H5Dget_offset(dset);
    if (addr != HADDR_UNDEF) {
      if (H5Dget_storage_size(dset) != n * element_size) fail(path, what + ": unexpected storage size");
      bytes.read(addr, raw.size(), raw.data());
    }
  } else if (layout == H5D_CHUNKED) {
    if (!chunk_ok || chunk == 0) fail(path, what + ": unreadable chunk size");
    // libhdf5 1.10 mishandles H5S_ALL here (its documentation says so): the dataset's own space.
    const hid_t space = H5Dget_space(dset);
    hsize_t nchunks = 0;
    const bool counted = space >= 0 && H5Dget_num_chunks(dset, space, &nchunks) >= 0;
    if (!counted) {
      if (space >= 0) H5Sclose(space);
      fail(path, what + ": unreadable chunk index");
    }
    for (hsize_t i = 0; i < nchunks; ++i) {
      hsize_t start = 0, size = 0;
      haddr_t addr = HADDR_UNDEF;
      unsigned mask = 0;
      const bool got = H5Dget_chunk_info(dset, space, i, &start, &mask, &addr, &size) >= 0 && addr != HADDR_UNDEF;
      if (!got || size != chunk * element_size) {
        H5Sclose(space);
        fail(path, what + (got ? ": unexpected chunk size" : ": unreadable chunk index"));
      }
      if (start >= n) continue;
      const std::uint64_t count = std::min<std::uint64_t>(chunk, n - start);
      bytes.read(facts.base + addr, static_cast<std::size_t>(count * element_size), raw.data() + start * element_size);
    }
    H5Sclose(space);
  } else {
    fail(path, what + ": variable-length data in compact storage are not supported");
  }
  for (std::uint64_t e = 0; e < n; ++e)
    for (const VlenMember& m : members) {
      const unsigned char* r = raw.data() + e * element_size + m.offset;
      const std::uint64_t len = Bytes::decode(r, 4);
      const std::uint64_t addr = Bytes::decode(r + 4, facts.addr_size);
      const std::uint64_t idx = Bytes::decode(r + 4 + facts.addr_size, 4);
      if (addr == 0) continue;  // a null sequence: libhdf5 reads no heap
      const auto heap = facts.heaps.find(facts.base + addr);
      const bool found = heap != facts.heaps.end() && heap->second.count(idx) > 0;
      if (!found || heap->second.at(idx) < len * m.base_size)
        fail(path, what + " element " + std::to_string(e) + ": its variable-length data point at no heap object (" +
                       "collection " + std::to_string(addr) + ", object " + std::to_string(idx) + ")");
    }
}

void check_storage_size(hid_t dset, const std::string& path, const std::string& what, std::uint64_t n,
                        std::size_t element_size) {
  const hid_t dcpl = H5Dget_create_plist(dset);
  if (dcpl < 0) fail(path, what + ": unreadable storage properties");
  const H5D_layout_t layout = H5Pget_layout(dcpl);
  hsize_t chunk[32] = {};
  const int rank = layout == H5D_CHUNKED ? H5Pget_chunk(dcpl, 32, chunk) : 0;
  const int nfilters = H5Pget_nfilters(dcpl);
  H5Pclose(dcpl);
  const std::string corrupt = what + ": its storage holds less than its dataspace (corrupt dataset)";
  if (element_size == 0) fail(path, what + ": invalid datatype");
  if (layout == H5D_COMPACT || layout == H5D_CONTIGUOUS) {
    const hsize_t stored = H5Dget_storage_size(dset);
    const bool unallocated = layout == H5D_CONTIGUOUS && stored == 0 && H5Dget_offset(dset) == HADDR_UNDEF;
    if (!unallocated && n > stored / element_size) fail(path, corrupt);
    return;
  }
  if (layout != H5D_CHUNKED || nfilters != 0) return;  // filtered chunks: sizes vary
  if (rank < 1 || rank > 32) fail(path, what + ": unreadable chunk dimensions");
  std::uint64_t chunk_bytes = element_size;
  for (int i = 0; i < rank; ++i) {
    if (chunk[i] == 0 || chunk_bytes > (std::uint64_t{1} << 40) / chunk[i]) fail(path, what + ": invalid chunk dimensions");
    chunk_bytes *= chunk[i];
  }
  const hid_t space = H5Dget_space(dset);
  hsize_t nchunks = 0;
  if (space < 0 || H5Dget_num_chunks(dset, space, &nchunks) < 0) {
    if (space >= 0) H5Sclose(space);
    fail(path, what + ": unreadable chunk index");
  }
  for (hsize_t i = 0; i < nchunks; ++i) {
    hsize_t start[32] = {}, size = 0;
    haddr_t addr = HADDR_UNDEF;
    unsigned mask = 0;
    if (H5Dget_chunk_info(dset, space, i, start, &mask, &addr, &size) < 0 || size != chunk_bytes) {
      H5Sclose(space);
      fail(path, corrupt);
    }
  }
  H5Sclose(space);
}

void check_type_layout(hid_t type, const std::string& path, const std::string& what) {
  const auto check = [&](auto&& self, hid_t t, int depth) -> void {
    if (depth > 16) fail(path, what + ": datatype nested too deeply");
    const H5T_class_t cls = H5Tget_class(t);
    const std::size_t size = H5Tget_size(t);
    if (cls == H5T_NO_CLASS || size == 0) fail(path, what + ": invalid datatype");
    if (cls == H5T_ARRAY || cls == H5T_VLEN) {
      const hid_t base = H5Tget_super(t);
      if (base < 0) fail(path, what + ": invalid datatype");
      try {
        self(self, base, depth + 1);
      } catch (...) {
        H5Tclose(base);
        throw;
      }
      H5Tclose(base);
      return;
    }
    if (cls != H5T_COMPOUND) return;
    const int n = H5Tget_nmembers(t);
    if (n < 0) fail(path, what + ": invalid datatype");
    for (int i = 0; i < n; ++i) {
      const std::size_t off = H5Tget_member_offset(t, static_cast<unsigned>(i));
      const hid_t m = H5Tget_member_type(t, static_cast<unsigned>(i));
      if (m < 0) fail(path, what + ": invalid datatype");
      const std::size_t msize = H5Tget_size(m);
      try {
        if (msize == 0 || off > size || msize > size - off)
          fail(path, what + ": a compound member lies outside its compound (corrupt datatype)");
        self(self, m, depth + 1);
      } catch (...) {
        H5Tclose(m);
        throw;
      }
      H5Tclose(m);
    }
  };
  check(check, type, 0);
}

}  // namespace fieldft::io::hdf5
