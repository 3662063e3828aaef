// The pieces of `fieldft recon` around the reconstruction (recon_command.cpp): where it runs
// (--backend / --device), the progress bar, the reference image and the output files.
#pragma once

#include <array>
#include <algorithm>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "fieldft/context.hpp"

namespace fieldft::cli {

// The context of --backend / --device, and why.
struct Placement {
  Context context;
  std::string reason;
  std::string device_name;  // CUDA: the device's name
};

// CUDA device `device` when --backend (auto, cpu, cuda) and the build and machine allow, else the
// host; kBackendUnavailable for cuda without CUDA or a device, or a device out of range. A CUDA
// context owns its stream; `threads` serve the host-side set-up.
Placement choose_placement(const std::string& backend_text, int device, int threads);

// Every output checked before any work: a known extension (.nii, .nii.gz, .npy, .cfl, .png,
// .pgm), a directory that exists and that we may write (so that one bad -o never leaves the others
// written and this one missing). UsageError / fieldft::Error naming the output.
void check_outputs(const std::vector<std::string>& outs);

// The image x (shape {Nx, Ny[, Nz]}) into every output, by extension; each written atomically.
template <class T>
void write_outputs(const std::vector<std::string>& outs, const std::vector<std::int64_t>& shape,
                   const std::vector<std::complex<T>>& x, const std::array<double, 3>& fov_mm,
                   const std::string& description);

// A truth image from --truth: .cfl image, .npy (numpy order, complex or real), or ISMRMRD's Truth.
std::vector<std::complex<double>> read_truth(const std::string& path, std::int64_t voxels);

// The progress of CG's iterations, or (slice by slice) of the slices.
class ProgressBar {
 public:
  ProgressBar(bool on, int total, std::string label) : on_(on), total_(total), label_(std::move(label)) {}
  void update(int done, double seconds, double residual) {
    if (!on_) return;
    const int width = 30, bars = std::min(width, done * width / std::max(total_, 1));
    const double eta = done > 0 ? seconds / done * (total_ - done) : 0;
    std::fprintf(stderr, "\r%s [%s%s] %d/%d  residual %.3e  %.1f s  ETA %.1f s ", label_.c_str(),
                 std::string(bars, '#').c_str(), std::string(width - bars, '.').c_str(), done, total_, residual, seconds,
                 eta);
    std::fflush(stderr);
    shown_ = true;
  }
  void finish() {
    if (shown_) std::fputc('\n', stderr);
  }

 private:
  bool on_;
  int total_;
  std::string label_;
  bool shown_ = false;
};

}  // namespace fieldft::cli
