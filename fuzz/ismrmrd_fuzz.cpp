// libFuzzer target: fieldft::io::read_ismrmrd on arbitrary bytes (issue 24, item 6).
//
// The input is written to a temporary file (libhdf5 reads files, not memory) and read with the
// default options, maps included, under a 256 MiB content budget (options.max_bytes). The
// reader may refuse the file with fieldft::Error; anything else — a crash, a sanitizer report, a
// leak, another exception, a hang — is a finding. Seeds: fuzz/ismrmrd_seeds.cpp writes them
// with fieldft's writer and with libismrmrd's own API (usage: ismrmrd_seeds DIR).
//
// Build: fuzz/ismrmrd.cmake (one include in the fuzz project), or by hand from the repository
// root with Debian's clang (libismrmrd and libhdf5 are not instrumented) and a configured build
// tree B (for include/fieldft/config.hpp, FIELDFT_HAVE_ISMRMRD 1):
//   F="-std=c++20 -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=undefined -Iinclude -Isrc -IB/include -I/usr/include/hdf5/serial"
//   L="-lismrmrd -L/usr/lib/x86_64-linux-gnu/hdf5/serial -lhdf5 -lpugixml"
//   S="src/io/ismrmrd.cpp src/io/ismrmrd_read.cpp src/io/ismrmrd_maps.cpp src/io/hdf5_util.cpp src/io/hdf5_guard.cpp src/io/hdf5_headers.cpp src/core/names.cpp"
//   clang++ $F -fsanitize=fuzzer fuzz/ismrmrd_fuzz.cpp $S $L -o build/fuzz/ismrmrd_fuzz
//   clang++ $F fuzz/ismrmrd_seeds.cpp $S src/io/ismrmrd_write.cpp $L -o build/fuzz/ismrmrd_seeds
//   build/fuzz/ismrmrd_seeds build/fuzz/ismrmrd_corpus
//   TMPDIR=/dev/shm build/fuzz/ismrmrd_fuzz -fork=2 -ignore_crashes=1 -max_len=65536 -timeout=10 build/fuzz/ismrmrd_corpus
//
// What libhdf5 1.10.8 (Debian 12) does on corrupt files, and how this target treats it:
//   * leaks: when H5Dopen2 fails on a damaged object header it keeps internal objects, and the
//     file, open for the life of the process (fieldft's identifiers are all closed). The built-in
//     LeakSanitizer suppression below ignores leaks allocated inside libhdf5; leaks of fieldft's
//     own code are still reported. Each input gets a new file name, since libhdf5 recognises a
//     file it still holds by device and inode and would answer from its cache.
//   * large allocations: it sizes a conversion buffer from a stored length before reading the
//     data (fieldft checks those lengths against the heap first, src/io/hdf5_guard.*, but other
//     paths remain). The built-in AddressSanitizer options make allocations over 1 GiB fail, as
//     they may on a real system, instead of reporting them as out-of-memory.
//   * crashes: every one found so far is guarded before libhdf5 gets there (src/io/hdf5_guard.*,
//     tests/io/ismrmrd_regressions). libhdf5 surely has more, hence -fork=N -ignore_crashes=1
//     above for long runs: triage every saved crash by its stack.
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

// The sanitizer settings this target needs (reasons above), built in so that a generic fuzz
// runner needs no per-target environment; ASAN_OPTIONS and LSAN_OPTIONS still override them.
extern "C" const char* __asan_default_options() { return "max_allocation_size_mb=1024:allocator_may_return_null=1"; }
extern "C" const char* __lsan_default_suppressions() { return "leak:libhdf5_serial.so\n"; }

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
