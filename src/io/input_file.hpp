// fieldft::io — reading the files that src/io parses: sizes known before anything is allocated.
//
// InputFile opens a regular file and knows its size, so that a reader can compare what a header
// promises with what the file holds before it allocates; read() fails with a clear error when
// the file is shorter than asked (truncated). checked_count multiplies a shape without overflow.
// Every failure is a fieldft::Error (kInvalidArgument; kTooLarge for overflowing sizes) that
// names the file.
#pragma once

#include <cstdint>
#include <cstdio>
#include <span>
#include <string>

namespace fieldft::io {

class InputFile {
 public:
  // what: the kind of file for messages, e.g. "BART .cfl file".
  InputFile(const std::string& path, const std::string& what);
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;
  ~InputFile();

  std::uint64_t size() const noexcept { return size_; }
  const std::string& path() const noexcept { return path_; }

  // Reads n bytes at offset into out, or throws (truncated file, read error).
  void read(std::uint64_t offset, void* out, std::uint64_t n) const;

 private:
  std::string path_, what_;
  std::FILE* file_ = nullptr;
  std::uint64_t size_ = 0;
};

// The product of dims (each >= 0) times element_size, or kTooLarge / kInvalidArgument naming
// `name` when a dimension is negative or the product overflows 63 bits.
std::uint64_t checked_bytes(std::span<const std::int64_t> dims, std::uint64_t element_size, const std::string& name);

}  // namespace fieldft::io
