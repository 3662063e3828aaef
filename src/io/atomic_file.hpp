// fieldft::io — files that appear at their path only when complete.
//
// Every writer of src/io goes through AtomicFile: bytes go to a hidden temporary file in the
// destination's directory (rename is atomic only within one file system), and commit() syncs it
// and renames it onto the destination. A write that fails or is abandoned (an exception before
// commit) removes its temporary file, so the destination is either the old file or the complete
// new one, never half written, and nothing else is left behind. Failures throw fieldft::Error
// (kInvalidArgument) naming the path and the system's reason.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace fieldft::io {

class AtomicFile {
 public:
  // keep_extension: the temporary name ends with the destination's extension (".nii", or
  // ".nii.gz" for two), for libraries that choose the format from the name they write to.
  explicit AtomicFile(const std::string& path, int keep_extension = 0);
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  ~AtomicFile();

  void write(const void* data, std::size_t n);
  void write(std::span<const std::uint8_t> bytes) { write(bytes.data(), bytes.size()); }

  // The temporary file (already created, empty) for a library that writes by name.
  const std::string& temp_path() const noexcept { return tmp_; }
  const std::string& path() const noexcept { return path_; }

  // Flushes, syncs, closes and renames the temporary file onto the destination.
  void commit();

 private:
  void flush();
  [[noreturn]] void fail(const std::string& what) const;

  std::string path_, tmp_;
  int fd_ = -1;
  bool committed_ = false;
  std::vector<std::uint8_t> buffer_;
};

}  // namespace fieldft::io
