// fieldft::io::hdf5 — small RAII and checking helpers over the HDF5 C API for the ISMRMRD reader
// (src/io/ismrmrd_read.cpp, src/io/ismrmrd_maps.cpp). Errors are fieldft::Error naming the file.
#pragma once

#include <hdf5.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <unordered_set>
#include <vector>

#include "fieldft/error.hpp"
#include "io/hdf5_guard.hpp"

namespace fieldft::io::hdf5 {

// An HDF5 identifier closed by its own close function.
class Id {
 public:
  Id() = default;
  Id(hid_t id, herr_t (*close)(hid_t)) : id_(id), close_(close) {}
  Id(const Id&) = delete;
  Id& operator=(const Id&) = delete;
  Id(Id&& o) noexcept : id_(o.id_), close_(o.close_) { o.id_ = -1; }
  Id& operator=(Id&& o) noexcept {
    reset();
    id_ = o.id_;
    close_ = o.close_;
    o.id_ = -1;
    return *this;
  }
  ~Id() { reset(); }
  hid_t get() const noexcept { return id_; }
  bool ok() const noexcept { return id_ >= 0; }

 private:
  void reset() {
    if (id_ >= 0 && close_) close_(id_);
    id_ = -1;
  }
  hid_t id_ = -1;
  herr_t (*close_)(hid_t) = nullptr;
};

// Silences HDF5's error printing while the reader runs (our messages say what failed).
class QuietHdf5 {
 public:
  QuietHdf5() {
    H5Eget_auto2(H5E_DEFAULT, &func_, &data_);
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  }
  ~QuietHdf5() { H5Eset_auto2(H5E_DEFAULT, func_, data_); }
  QuietHdf5(const QuietHdf5&) = delete;
  QuietHdf5& operator=(const QuietHdf5&) = delete;

 private:
  H5E_auto2_t func_ = nullptr;
  void* data_ = nullptr;
};

// Allocations of HDF5's variable-length reads: counted against a budget, and all freed by the
// destructor, so that a read that fails half-way leaks nothing.
class VlenArena {
 public:
  explicit VlenArena(std::uint64_t budget) : left_(budget) {}
  VlenArena(const VlenArena&) = delete;
  VlenArena& operator=(const VlenArena&) = delete;
  ~VlenArena() {
    for (void* p : live_) std::free(p);
  }
  // A transfer property list (transfer_list) that allocates variable-length data through this
  // arena.
  Id transfer_list(std::uint64_t bytes);

 private:
  static void* alloc(std::size_t n, void* self) {
    auto* a = static_cast<VlenArena*>(self);
    if (n > a->left_) return nullptr;
    void* p = std::malloc(n == 0 ? 1 : n);
    if (!p) return nullptr;
    a->left_ -= n;
    a->live_.insert(p);
    return p;
  }
  static void release(void* p, void* self) {
    auto* a = static_cast<VlenArena*>(self);
    if (p && a->live_.erase(p)) std::free(p);
  }
  std::uint64_t left_;
  std::unordered_set<void*> live_;
};

// A transfer property list whose type-conversion buffers fit a read of `bytes`: libhdf5's default
// allocates and clears 1 MiB buffers for every read, however small, which made reading a small
// file cost milliseconds.
Id transfer_list(std::uint64_t bytes);

// Throws Error(code, "ISMRMRD file 'path': what").
[[noreturn]] void fail(ErrorCode code, const std::string& path, const std::string& what);

// The file, checked by inspect() (hdf5_guard.hpp) before libhdf5 opens it, read-only.
struct File {
  FileFacts facts;
  Id id;
};
File open_file(const std::string& path);

// The group of an ISMRMRD dataset (refused, naming the file, when absent: not ISMRMRD), each
// group on its path checked by check_group (hdf5_guard.hpp) first.
Id open_group(const File& file, const std::string& group);

bool has_link(hid_t group, const char* name);

// The dataspace's dimensions (slowest first; {} for a scalar), or an error for another space.
std::vector<hsize_t> extent(hid_t dset, const std::string& path, const std::string& what);

// The product of dims, or kTooLarge when it exceeds `limit` elements.
std::uint64_t count(const std::vector<hsize_t>& dims, std::uint64_t limit, const std::string& path,
                    const std::string& what);

// The member `name` of compound type t, of class cls (or an error naming `where`).
Id member(hid_t t, const char* name, H5T_class_t cls, const std::string& path, const std::string& where);

}  // namespace fieldft::io::hdf5
