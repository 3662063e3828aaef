// fieldft::runtime — what this build contains and which devices it sees.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace fieldft {

struct BuildInfo {
  std::string version;            // e.g. "0.1.0"
  bool cuda = false;              // CUDA backend compiled in
  std::string cuda_architectures; // e.g. "90"
  std::string build_type;         // CMake build type
  std::string compiler;           // host C++ compiler id and version
  std::string fftw_version;       // FFTW library version string
  int cpu_threads = 1;            // OpenMP threads available to the CPU backend
};
BuildInfo build_info();

struct DeviceInfo {
  int id = 0;
  std::string name;
  int cc_major = 0, cc_minor = 0;   // compute capability
  std::size_t total_memory = 0;     // bytes
  std::size_t free_memory = 0;      // bytes, at the time of the query
  int multiprocessors = 0;
};
// CUDA devices visible to this process; empty when CUDA is not compiled in or no device (or
// driver) is present. Never throws.
std::vector<DeviceInfo> cuda_devices() noexcept;

}  // namespace fieldft
