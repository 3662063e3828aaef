// The FFT strategies of the fine grid (nufft::FftStrategy, chosen by core::plan_grid): one
// batched cuFFT plan over the whole grid, or cuFFT pruned along the slowest axis.
#pragma once

#include <cstdint>
#include <memory>

#include "cuda/cufft_plan.cuh"
#include "fieldft/detail/complex.hpp"
#include "fieldft/nufft.hpp"

namespace fieldft::cuda {

using detail::Cplx;

// The FFT of nb fine grids for types 1 and 2 (core::FftStrategy, the planner's). kWhole: one
// batched plan. kPruned (large 2D and 3D grids): pruned along the slowest axis (the zero-padding of the modes is known): the 1D pass
// along it over every column, and the passes over the other axes only for the slabs (planes in
// 3D, rows in 2D) that hold modes, the two ends of that axis; type 2 has zeros elsewhere on
// input, type 1 uses no other slab on output. At upsampfac 2 this skips half of the work of all
// passes but the last.
template <class T>
class GridFft {
 public:
  GridFft(int dim, const std::int64_t* nf, const std::int64_t* modes, int nb, nufft::FftStrategy strategy,
          cudaStream_t stream) {
    long long n[3];
    std::int64_t size = 1;
    for (int d = 0; d < dim; ++d) {
      n[d] = nf[dim - 1 - d];  // slowest first
      size *= nf[d];
    }
    const int last = dim - 1;
    ends_ = modes[last] - modes[last] / 2;  // slabs k = 0 .. ends_-1 and nf-ends_ .. nf-1 hold the modes
    if (strategy != nufft::FftStrategy::kPruned) {
      whole_ = std::make_unique<CufftPlan<T>>(dim, n, 1, size, nb, stream);
      return;
    }
    size_ = size;
    slab_ = size / nf[last];
    nlast_ = nf[last];
    slabs_ = std::make_unique<CufftPlan<T>>(dim - 1, n + 1, 1, slab_, ends_, stream);
    long long nl = nf[last];
    columns_ = std::make_unique<CufftPlan<T>>(1, &nl, slab_, 1, slab_, stream);
  }

  // type 1: spread grid -> modes; type 2: modes -> grid to interpolate.
  void exec(Cplx<T>* data, int sign, int type, int nb) const {
    if (whole_) {
      whole_->exec(data, sign);
      return;
    }
    for (int b = 0; b < nb; ++b) {
      Cplx<T>* g = data + b * size_;
      if (type == 1) columns_->exec(g, sign);
      slabs_->exec(g, sign);
      slabs_->exec(g + (nlast_ - ends_) * slab_, sign);
      if (type == 2) columns_->exec(g, sign);
    }
  }

 private:
  std::unique_ptr<CufftPlan<T>> whole_, slabs_, columns_;
  std::int64_t size_ = 0, slab_ = 0, nlast_ = 0, ends_ = 0;
};

}  // namespace fieldft::cuda
