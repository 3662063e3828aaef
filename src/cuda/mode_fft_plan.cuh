// Type 1's FFT with the last axis fused with the copy to the modes (GridConfig::mode_fft): the
// host driver of the mode_fft_pass kernel (cuda/mode_fft.cuh).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <numbers>
#include <vector>

#include "core/nufft_planner.hpp"
#include "cuda/cuda_check.cuh"
#include "cuda/cufft_plan.cuh"
#include "cuda/device_buffer.cuh"
#include "cuda/nufft_launch.hpp"

namespace fieldft::cuda {

// Type 1's FFT of nb fine grids and the copy to the modes: cuFFT over the faster axes of every
// grid (one batched plan), then mode_fft_pass over the last axis of the columns that hold modes,
// keeping the modes' outputs only. Where the planner takes it: GridConfig::mode_fft.
template <class T>
class ModeFft {
 public:
  // The twiddles are uploaded on `stream` (the plan's): no legacy-stream synchronisation.
  ModeFft(int dim, const std::int64_t* nf, const std::int64_t* modes, int sms, cudaStream_t stream)
      : dim_(dim), nlast_(nf[dim - 1]) {
    const int a = dim - 1;
    for (int d = 0; d < a; ++d) {
      fft_n_[d] = nf[a - 1 - d];  // slowest first
      plane_ *= nf[d];
    }
    for (int sg = 0; sg < 2; ++sg) {  // exp(±2πi·k/L), from double
      std::vector<Cplx<T>> tw(static_cast<std::size_t>(nlast_));
      for (std::int64_t k = 0; k < nlast_; ++k) {
        const double phi = 2.0 * std::numbers::pi * static_cast<double>(k) / static_cast<double>(nlast_);
        tw[k] = {static_cast<T>(std::cos(phi)), static_cast<T>((sg == 0 ? 1.0 : -1.0) * std::sin(phi))};
      }
      twiddle_[sg] = DeviceBuffer<Cplx<T>>(tw.size(), "FFT twiddles");
      // Pageable source: the runtime copies it out before returning, so tw may go at once.
      FIELDFT_CUDA_CHECK(cudaMemcpyAsync(twiddle_[sg].get(), tw.data(), tw.size() * sizeof(Cplx<T>),
                                         cudaMemcpyHostToDevice, stream));
    }
    ModeFftPass<T>& p = pass_;
    p.L = static_cast<int>(nlast_);
    p.P = static_cast<int>(modes[a]);
    const std::vector<int> r = core::mode_fft_radices(nlast_);
    p.nradix = static_cast<int>(r.size());
    p.radices = 0;
    for (std::size_t k = 0; k < r.size(); ++k) p.radices |= static_cast<unsigned long long>(r[k]) << (5 * k);
    p.ncol = 1;
    for (int d = 0; d < a; ++d) p.ncol *= modes[d];
    p.n0 = modes[0];
    p.nf0 = nf[0];
    p.tstride = plane_;
    // Launch shape: the widest block (columns) that leaves two blocks per SM and three per SM's
    // shared memory (docs/tuning.md); threads, one per item of the stage with the most (the
    // smallest radix).
    columns_ = 8;
    for (const int c : {32, 16})
      if (mode_fft_smem<T>(p.L, c) <= 64 * 1024 && (p.ncol + c - 1) / c >= 2 * sms) {
        columns_ = c;
        break;
      }
    const int rmin = *std::min_element(r.begin(), r.end());
    threads_ = static_cast<int>(std::min<std::int64_t>(kModeFftThreads, (columns_ * nlast_ / rmin + 31) / 32 * 32));
  }

  // The cuFFT plan for nb grids, made on first use (CudaPlan::prepare_ffts makes it at set_points).
  const CufftPlan<T>& fft(int nb, cudaStream_t s) const {
    auto& plan = fft_[nb];
    if (!plan) {
      long long n[2] = {fft_n_[0], fft_n_[1]};
      plan = std::make_unique<CufftPlan<T>>(dim_ - 1, n, 1, plane_, nlast_ * nb, s);
    }
    return *plan;
  }

  void exec(cudaStream_t s, Cplx<T>* fine, std::int64_t fine_cells, Cplx<T>* f, std::int64_t f_cells, int nb,
            int sign, const ModeMap& mm, const T* const* deconv) const {
    fft(nb, s).exec(fine, sign);
    ModeFftPass<T> p = pass_;
    p.sign = sign > 0 ? 1 : -1;
    p.twiddle = twiddle_[sign > 0 ? 0 : 1].get();
    p.map0 = mm.fine_index[0];
    p.map1 = dim_ == 3 ? mm.fine_index[1] : nullptr;
    p.dec0 = deconv[0];
    p.dec1 = dim_ == 3 ? deconv[1] : nullptr;
    const int a = dim_ - 1;
    launch_mode_fft_pass<T>(s, p, columns_, threads_, mm.fine_index[a], deconv[a], fine, fine_cells, f, f_cells, nb);
  }

 private:
  int dim_;
  std::int64_t nlast_, plane_ = 1;
  long long fft_n_[2]{};
  ModeFftPass<T> pass_{};
  DeviceBuffer<Cplx<T>> twiddle_[2];  // for sign + and -
  int columns_ = 8, threads_ = 32;
  mutable std::map<int, std::unique_ptr<CufftPlan<T>>> fft_;  // per batch size
};

}  // namespace fieldft::cuda
