// libFuzzer target: fieldft::io::read_ismrmrd on arbitrary bytes (issue 24, item 6).
//
// The input is written to a temporary file (libhdf5 reads files, not memory) and read with the
// default options, maps included, under a 256 MiB content budget (options.max_bytes). The
// reader may refuse the file with fieldft::Error; anything else — a crash, a sanitizer report, a
// leak, another exception, a hang — is a finding. Seeds: fuzz/ismrmrd_seeds.cpp writes them
// with fieldft's writer and with libismrmrd's own API.
//
// Build and run by hand (Debian's clang; libismrmrd and libhdf5 are not instrumented), from the
// repository root, with a configured build tree B (for include/fieldft/config.hpp with
// FIELDFT_HAVE_ISMRMRD 1):
//   F="-std=c++20 -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=undefined -Iinclude -Isrc -IB/include -I/usr/include/hdf5/serial"
//   L="-lismrmrd -L/usr/lib/x86_64-linux-gnu/hdf5/serial -lhdf5 -lpugixml"
//   S="src/io/ismrmrd.cpp src/io/ismrmrd_read.cpp src/core/names.cpp"
//   clang++ $F -fsanitize=fuzzer fuzz/ismrmrd_fuzz.cpp $S $L -o build/fuzz/ismrmrd_fuzz
//   clang++ $F fuzz/ismrmrd_seeds.cpp $S src/io/ismrmrd_write.cpp $L -o build/fuzz/ismrmrd_seeds
//   build/fuzz/ismrmrd_seeds build/fuzz/ismrmrd_corpus
//   export LSAN_OPTIONS=suppressions=fuzz/ismrmrd_lsan.supp TMPDIR=/dev/shm
//   export ASAN_OPTIONS=max_allocation_size_mb=1024:allocator_may_return_null=1
//   build/fuzz/ismrmrd_fuzz -max_len=65536 -timeout=10 -rss_limit_mb=2048 build/fuzz/ismrmrd_corpus
// libhdf5 sizes its conversion buffer for a variable-length array from the length stored in the
// file, before it reads the array: a corrupt length makes it ask malloc for up to 16 GiB, which
// libFuzzer would report as out-of-memory. On a real system that allocation fails or stays
// virtual (the array itself is bounded by the file), and fieldft's own allocation of the result
// is bounded by options.max_bytes; ASAN_OPTIONS above make allocations over 1 GiB fail instead,
// as they may on a real system, so that libhdf5's failure path is what gets fuzzed.
// libhdf5 1.10.8 (Debian 12) leaks on some corrupt files: when H5Dopen2 fails on a damaged object
// header it keeps internal objects, and the file, open for the life of the process (our
// identifiers are all closed; H5F_CLOSE_STRONG does not reach those). fuzz/ismrmrd_lsan.supp
// suppresses leaks allocated inside libhdf5 so that the fuzzer can go on; leaks of fieldft's
// own code are still reported.
// or through CMake: include(fuzz/ismrmrd.cmake) in a fuzz build (see that file).
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "fieldft/error.hpp"
#include "io/ismrmrd.hpp"

namespace {

// A new file for every input, in TMPDIR (a tmpfs such as /dev/shm is fastest), removed after
// the read. Never the same file twice: libhdf5 recognises a file it still holds open by device
// and inode and would answer from its cache of the previous input, and on some corrupt files it
// keeps one open (see below).
std::string scratch_path() {
  static const std::string base = [] {
    const char* dir = std::getenv("TMPDIR");
    return std::string(dir && *dir ? dir : "/tmp") + "/fieldft_ismrmrd_fuzz_" + std::to_string(::getpid()) + "_";
  }();
  static std::uint64_t counter = 0;
  return base + std::to_string(counter++) + ".h5";
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = scratch_path();
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return 0;
  const bool written = std::fwrite(data, 1, size, f) == size;
  std::fclose(f);
  if (!written) {
    std::remove(path.c_str());
    return 0;
  }
  fieldft::io::IsmrmrdReadOptions options;
  options.max_bytes = std::uint64_t{256} << 20;
  try {
    const fieldft::io::RawData d = fieldft::io::read_ismrmrd(path, options);
    fieldft::io::validate(d, "fuzz");  // what the reader returns satisfies RawData's invariants
  } catch (const fieldft::Error&) {
  }
  std::remove(path.c_str());
  return 0;
}
