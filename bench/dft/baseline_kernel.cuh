// The design's field-corrected DFT kernel as written (the anchor of docs/benchmarks.md): one
// thread per output, sincosf on the full phase in radians, no fast math, 32-bit indices.
#pragma once

#include <complex>
#include <vector>

namespace fieldft::bench {

struct BaselineProblem {
  int num_samples = 0, num_voxels = 0;
  std::vector<float> kx, ky, kz, t;  // cycles/FOV, s
  std::vector<float> x, y, z, dw;    // FOV units, rad/s
};

struct BaselineResult {
  double forward_ms = 0, adjoint_ms = 0;  // best of `repeat` runs, CUDA events
  std::vector<std::complex<float>> forward_out, adjoint_out;
};

// Uploads the problem once, then times forward(image) and adjoint(samples).
BaselineResult run_baseline(const BaselineProblem& p, const std::vector<std::complex<float>>& image,
                            const std::vector<std::complex<float>>& samples, int repeat);

}  // namespace fieldft::bench
