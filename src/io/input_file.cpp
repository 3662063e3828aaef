#include "io/input_file.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "fieldft/error.hpp"
#include "io/parallel_pieces.hpp"

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

namespace {

// Reads n bytes at offset into out with pread, resuming after short reads: 0, errno, or -1 when
// the file ended first (it shrank while read).
int pread_all(int fd, std::uint64_t offset, unsigned char* out, std::uint64_t n) {
  while (n > 0) {
    const ssize_t got = ::pread(fd, out, static_cast<std::size_t>(std::min<std::uint64_t>(n, std::uint64_t{1} << 30)),
                                static_cast<off_t>(offset));
    if (got < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (got == 0) return -1;
    out += got;
    offset += static_cast<std::uint64_t>(got);
    n -= static_cast<std::uint64_t>(got);
  }
  return 0;
}

}  // namespace

void InputFile::read(std::uint64_t offset, void* out, std::uint64_t n) const {
  require(offset <= size_ && n <= size_ - offset, ErrorCode::kInvalidArgument,
          what_ + " '" + path_ + "' is truncated: " + std::to_string(size_) + " bytes, expected at least " +
              std::to_string(offset + n));
  if (n == 0) return;
  // Large reads in parallel pieces (io/parallel_pieces.hpp), each thread its own part of `out`:
  // the copy out of the page cache and the first touch of fresh pages spread over cores.
  const int fd = ::fileno(file_);
  auto* const bytes = static_cast<unsigned char*>(out);
  const std::size_t pieces = piece_count(static_cast<std::size_t>(n), std::size_t{32} << 20);
  std::vector<int> status(pieces, 0);
  for_pieces(static_cast<std::size_t>(n), pieces, [&](std::size_t p, std::size_t begin, std::size_t end) {
    status[p] = pread_all(fd, offset + begin, bytes + begin, end - begin);
  });
  for (const int e : status)
    if (e != 0)
      throw Error(ErrorCode::kInvalidArgument,
                  "cannot read " + what_ + " '" + path_ + "': " + (e > 0 ? std::strerror(e) : "it shrank while read"));
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
