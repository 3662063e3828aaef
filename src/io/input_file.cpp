#include "io/input_file.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <system_error>
#include <thread>
#include <vector>

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
  // Large reads in parallel pieces, each thread its own part of `out`: copying out of the page
  // cache and the first touch of fresh pages took one core ~1 s per 2 GB (a 64-slice stack's
  // k-space and maps are gigabytes), and both spread over cores. 32 MiB a piece at least, 8 at most.
  constexpr std::uint64_t kPiece = std::uint64_t{32} << 20;
  const int fd = ::fileno(file_);
  auto* const bytes = static_cast<unsigned char*>(out);
  const std::uint64_t pieces =
      std::min<std::uint64_t>({n / kPiece, std::max(1u, std::thread::hardware_concurrency()), 8});
  std::vector<int> status(static_cast<std::size_t>(std::max<std::uint64_t>(pieces, 1)), 0);
  if (pieces < 2) {
    status[0] = pread_all(fd, offset, bytes, n);
  } else {
    const std::uint64_t step = (n + pieces - 1) / pieces;
    std::vector<std::thread> threads;
    threads.reserve(static_cast<std::size_t>(pieces));
    std::uint64_t started = 0;  // pieces handed to threads; the rest are read here
    try {
      for (; started < pieces; ++started) {
        const std::uint64_t begin = started * step, len = std::min(step, n - begin);
        threads.emplace_back([&status, fd, offset, bytes, begin, len, i = started] {
          status[static_cast<std::size_t>(i)] = pread_all(fd, offset + begin, bytes + begin, len);
        });
      }
    } catch (const std::system_error&) {  // no thread to be had: read what is left on this one
    }
    if (started < pieces) {
      const std::uint64_t begin = started * step;
      status[static_cast<std::size_t>(started)] = pread_all(fd, offset + begin, bytes + begin, n - begin);
    }
    for (auto& t : threads) t.join();
  }
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
