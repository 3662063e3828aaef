#include "io/input_file.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "fieldft/error.hpp"

namespace fieldft::io {

InputFile::InputFile(const std::string& path, const std::string& what) : path_(path), what_(what) {
  file_ = std::fopen(path.c_str(), "rb");
  if (!file_)
    throw Error(ErrorCode::kInvalidArgument, "cannot read " + what + " '" + path + "': " + std::strerror(errno));
  struct stat st {};
  if (::fstat(::fileno(file_), &st) != 0 || !S_ISREG(st.st_mode)) {
    std::fclose(file_);
    file_ = nullptr;
    throw Error(ErrorCode::kInvalidArgument, "cannot read " + what + " '" + path + "': not a regular file");
  }
  size_ = static_cast<std::uint64_t>(st.st_size);
}

InputFile::~InputFile() {
  if (file_) std::fclose(file_);
}

void InputFile::read(std::uint64_t offset, void* out, std::uint64_t n) const {
  require(offset <= size_ && n <= size_ - offset, ErrorCode::kInvalidArgument,
          what_ + " '" + path_ + "' is truncated: " + std::to_string(size_) + " bytes, expected at least " +
              std::to_string(offset + n));
  if (n == 0) return;
  if (::fseeko(file_, static_cast<off_t>(offset), SEEK_SET) != 0 ||
      std::fread(out, 1, static_cast<std::size_t>(n), file_) != n)
    throw Error(ErrorCode::kInvalidArgument, "cannot read " + what_ + " '" + path_ + "': " +
                                                 (std::ferror(file_) ? std::strerror(errno) : "it shrank while read"));
}

std::uint64_t checked_bytes(std::span<const std::int64_t> dims, std::uint64_t element_size, const std::string& name) {
  std::uint64_t n = element_size;
  constexpr std::uint64_t kMax = std::uint64_t{1} << 62;
  for (const std::int64_t d : dims) {
    require(d >= 0, ErrorCode::kInvalidArgument, name + ": negative dimension " + std::to_string(d));
    if (d != 0 && n > kMax / static_cast<std::uint64_t>(d))
      throw Error(ErrorCode::kTooLarge, name + ": the dimensions' product overflows 64-bit sizes");
    n *= static_cast<std::uint64_t>(d);
  }
  return n;
}

}  // namespace fieldft::io
