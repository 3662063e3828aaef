#include "io/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "fieldft/error.hpp"

namespace fieldft::io {

namespace {
constexpr std::size_t kBufferBytes = std::size_t{1} << 20;
}  // namespace

AtomicFile::AtomicFile(const std::string& path, int keep_extension) : path_(path) {
  namespace fs = std::filesystem;
  const fs::path p(path);
  require(!p.filename().empty(), ErrorCode::kInvalidArgument, "cannot write '" + path + "': the path names no file");
  std::error_code ec;
  require(!fs::is_directory(p, ec), ErrorCode::kInvalidArgument, "cannot write '" + path + "': it is a directory");
  const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
  std::string stem = p.filename().string(), ext;
  for (int i = 0; i < keep_extension; ++i) {
    const auto dot = stem.rfind('.');
    if (dot == std::string::npos || dot == 0) break;
    ext = stem.substr(dot) + ext;
    stem.resize(dot);
  }
  // Hidden, and unique per process and attempt: two writers never share a temporary file.
  static std::atomic<int> counter{0};
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::string name = ".";  // appended piecewise: GCC 12 misreads "." + string as overlapping
    name += stem;
    name += ".tmp-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
    name += ext;
    tmp_ = (dir / name).string();
    fd_ = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd_ >= 0 || errno != EEXIST) break;
  }
  if (fd_ < 0) fail("cannot write '" + path + "': cannot create a file in '" + dir.string() + "'");
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_) ::unlink(tmp_.c_str());
}

void AtomicFile::write(const void* data, std::size_t n) {
  const auto* b = static_cast<const std::uint8_t*>(data);
  if (n >= kBufferBytes) {  // large blocks go straight out, without a copy
    flush();
    for (std::size_t left = n; left > 0;) {
      const ssize_t w = ::write(fd_, b, left);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) fail("cannot write '" + path_ + "'");
      b += w;
      left -= static_cast<std::size_t>(w);
    }
    return;
  }
  buffer_.insert(buffer_.end(), b, b + n);
  if (buffer_.size() >= kBufferBytes) flush();
}

void AtomicFile::commit() {
  flush();
  // fsync before rename: otherwise a crash soon after may leave an empty file at the path.
  if (::fsync(fd_) != 0) fail("cannot write '" + path_ + "'");
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) fail("cannot write '" + path_ + "'");
  if (std::rename(tmp_.c_str(), path_.c_str()) != 0) fail("cannot write '" + path_ + "'");
  committed_ = true;
}

void AtomicFile::flush() {
  const std::uint8_t* p = buffer_.data();
  std::size_t left = buffer_.size();
  while (left > 0) {
    const ssize_t n = ::write(fd_, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail("cannot write '" + path_ + "'");
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  buffer_.clear();
}

void AtomicFile::fail(const std::string& what) const {
  throw Error(ErrorCode::kInvalidArgument, what + ": " + std::strerror(errno));
}

}  // namespace fieldft::io
