// fieldft::io — checks of an HDF5 file's own bytes, made before libhdf5 reads what they describe.
//
// libhdf5 1.10 (Debian 12) trusts parts of a file that a corrupt or hostile file gets wrong; the
// fuzzer (fuzz/ismrmrd_fuzz.cpp) found two that stop the process:
//   * a global heap collection (where variable-length data live) whose objects do not tile it,
//     e.g. a free-space object of size 0: H5HG's deserialiser never advances (a hang);
//   * a variable-length element whose heap ID names an object the collection does not hold:
//     H5HG_read dereferences an empty or out-of-range slot (a segmentation fault).
// inspect() walks every collection ("GCOL", version 1) as libhdf5 would, refuses one that runs
// past the end of the file (libhdf5 would allocate all of it), and records the objects each holds; check_vlen_references() reads a dataset's raw storage and checks that every non-null
// heap ID names a recorded object at least as long as its sequence. Valid files always pass; a
// false alarm would need "GCOL\1" inside stored data followed by bytes that do not tile. Cost:
// one sequential pass over the file, and one over each checked dataset's storage.
#pragma once

#include <hdf5.h>

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace fieldft::io::hdf5 {

struct FileFacts {
  std::string path;
  std::uint64_t size = 0;       // bytes
  std::uint64_t base = 0;       // offset of the superblock (0, or after a user block)
  unsigned addr_size = 8, length_size = 8;
  // collection (file offset) -> object index -> object size in bytes
  std::unordered_map<std::uint64_t, std::unordered_map<std::uint64_t, std::uint64_t>> heaps;
};

// Refuses (fieldft::Error kInvalidArgument, naming the file) a path that is missing, not a
// regular file, has no HDF5 signature (at 0, 512, 1024, ...), whose root group's symbol table
// is corrupt (see check_group), or holds a collection that does not tile; else the facts above.
FileFacts inspect(const std::string& path);

// A variable-length member of a dataset's elements: its byte offset in the element on disk (where
// it is a sequence length u32, a collection address and an object index u32) and the size of its
// base type in the file.
struct VlenMember {
  std::size_t offset = 0, base_size = 1;
};

// For the dataset `dset` of n elements of `element_size` bytes on disk with these members: refuses
// heap IDs that name no recorded object or an object shorter than the sequence, and storage it
// cannot check (filters, external files, compact layout, chunks of another size, addresses other
// than 8 bytes). `what` names the dataset in messages.
void check_vlen_references(hid_t dset, const FileFacts& facts, const std::string& what, std::uint64_t n,
                           std::size_t element_size, const std::vector<VlenMember>& members);

// Refuses a datatype whose compound members (at any depth, through arrays) do not lie inside
// their compound: libhdf5's conversion copies each member from offset to offset + size without
// checking (a segmentation fault in H5T__conv_struct_opt, found by the fuzzer).
void check_type_layout(hid_t type, const std::string& path, const std::string& what);

// Refuses a dataset whose storage holds fewer bytes than n elements of `element_size` (its size
// in the file): compact or contiguous storage smaller than the dataspace, or an unfiltered chunk
// of another size than its dimensions. libhdf5 copies the whole selection out of a buffer sized
// by the storage without checking (a heap overflow in H5VM_memcpyvv, found by the fuzzer).
void check_storage_size(hid_t dset, const std::string& path, const std::string& what, std::uint64_t n,
                        std::size_t element_size);

// Before H5Gopen2(loc, name) or a lookup in that group: refuses a group (in a superblock version
// 0 or 1 file) whose symbol table names a B-tree or local heap that is not there, or a local heap
// whose free list runs in a cycle or past the heap's end (libhdf5 reads a missing heap through a
// null pointer and follows a cyclic free list until memory runs out; found by the fuzzer).
// inspect() checks the root group the same way. Gives no verdict on what it cannot parse.
void check_group(hid_t loc, const char* name, const FileFacts& facts);

// Before H5Dopen2(loc, name): refuses a dataset whose datatype message holds a type of size 0, an
// array dimension of 0, an unterminated member name or an enumeration of another size than its
// base type, or whose chunked layout has a chunk dimension of 0 or not one per axis of its
// dataspace (+ 1): libhdf5 divides by those sizes, strdups those names and copies an
// enumeration's values by its own size while decoding (SIGFPE in H5T_copy and
// H5D__chunk_set_info, heap overflows in strdup and H5T_copy; found by the fuzzer). Reads version 1 object headers only and gives no
// verdict on what it cannot parse (src/io/hdf5_headers.cpp).
void check_object_header(hid_t loc, const char* name, const FileFacts& facts, const std::string& what);

}  // namespace fieldft::io::hdf5
