// The CPU Toeplitz engine (src/cpu/toeplitz_cpu.hpp). The L grids of the B images (L_d = 2N_d,
// N_d on a periodic axis: core::ToeplitzGeometry) are stacked, x fastest (cell i of image b at
// i + b·S, S = ∏L_d rounded up to 4 cells: see run()). A periodic axis has no padding, so its
// pass prunes nothing and pad and crop copy all of it; the loops below read L_d and need no
// special case. The zero padding is exploited by pruning: the pass
// along axis a transforms the full extent of the axes before it and only the first N_b indices
// of the axes after it — forward, those are the only nonzero lines (x sits in the first N_b of
// every axis); inverse, run in the opposite axis order, the only lines the crop keeps. One FFTW
// plan per pass, made for one image with FFTW_MEASURE and run on each image in turn (new-array
// execute): under FFTW_ESTIMATE the strided passes along y and z run unbuffered, about ten times
// slower (bench/mri/toeplitz_bench.cpp; docs/benchmarks.md), and planning one image keeps the
// measuring time independent of B. A stacked last axis (core::ToeplitzGeometry::stacked) has no
// pass: the kernel is one plane, applied to every plane of the last axis.
#include "cpu/toeplitz_cpu.hpp"

#include <algorithm>
#include <complex>
#include <cstdint>
#include <vector>

#include "cpu/fftw.hpp"
#include "fieldft/detail/toeplitz.hpp"

namespace fieldft::cpu {

namespace {

// Loops of fewer elements run on the calling thread (as VectorOps does).
constexpr std::int64_t kParallelMin = 32768;

template <class T>
class ToeplitzCpu final : public core::ToeplitzEngine<T> {
 public:
  using Complex = std::complex<T>;

  ToeplitzCpu(const core::ToeplitzGeometry& g, int nthreads, bool measure, bool pruned)
      : g_(g),
        l_(g.padded()),
        cells_(g.padded_cells()),
        kernel_cells_(g.kernel_cells()),
        stride_((cells_ + 3) / 4 * 4),
        nthreads_(nthreads),
        pruned_(pruned),
        grid_(static_cast<std::size_t>(stride_ * g.batch)) {
    for (int a = 0; a < (g_.stacked ? g_.dim - 1 : g_.dim); ++a) {
      forward_.push_back(pass(a, -1, measure));
      inverse_.push_back(pass(a, +1, measure));
    }
  }

  Complex* psf_buffer() override { return grid_.get(); }

  // Scaled by 1 / kernel_cells_: the unnormalised FFT pair of apply multiplies by the cells it
  // transforms (∏ L_d, or a plane's on a stacked axis, whose plane of frequency 0 is kept).
  void make_kernel(T* kernel) override {
    const Complex* p = psf_fft();
    const T scale = static_cast<T>(1.0 / static_cast<double>(kernel_cells_));
    const std::int64_t n = kernel_cells_;
#pragma omp parallel for schedule(static) num_threads(nthreads_) if (n >= kParallelMin)
    for (std::int64_t i = 0; i < n; ++i) kernel[i] = p[i].real() * scale;
  }

  void make_complex_kernel(Complex* kernel) override {
    const Complex* p = psf_fft();
    const T scale = static_cast<T>(1.0 / static_cast<double>(kernel_cells_));
    const std::int64_t n = kernel_cells_;
#pragma omp parallel for schedule(static) num_threads(nthreads_) if (n >= kParallelMin)
    for (std::int64_t i = 0; i < n; ++i) kernel[i] = p[i] * scale;
  }

  bool has_field_sense() const override { return true; }
  bool apply_field_sense(const Complex* kernels, std::int64_t k, const Complex* maps, const Complex* phases,
                         const Complex* x, Complex* z) override {
    Complex* grid = grid_.get();
    const std::int64_t nx = g_.n[0], ny = g_.n[1], nz = g_.n[2], lx = l_[0], ly = l_[1], lz = l_[2];
    const std::int64_t n = g_.voxels(), coils = g_.batch / k, rows = ly * lz * g_.batch, work = cells_ * g_.batch;
    const std::int64_t stride = stride_;
    namespace dt = ::fieldft::detail::toeplitz;
    using ::fieldft::detail::Cplx;
    const dt::SenseImages<T> images{n, coils, reinterpret_cast<const Cplx<T>*>(maps),
                                    reinterpret_cast<const Cplx<T>*>(phases)};
    const auto* xc = reinterpret_cast<const Cplx<T>*>(x);
#pragma omp parallel for schedule(static) num_threads(nthreads_) if (work >= kParallelMin)
    for (std::int64_t r = 0; r < rows; ++r) {
      const std::int64_t y = r % ly, z3 = (r / ly) % lz, b = r / (ly * lz);
      Complex* row = grid + b * stride + (r - b * ly * lz) * lx;
      std::int64_t copied = 0;
      if (y < ny && z3 < nz) {
        const std::int64_t v0 = nx * (y + ny * z3);
        auto* out = reinterpret_cast<Cplx<T>*>(row);
        for (std::int64_t i = 0; i < nx; ++i) out[i] = dt::image_value(images, b, v0 + i, xc[v0 + i]);
        copied = nx;
      }
      std::fill(row + copied, row + lx, Complex(0, 0));
    }
    run(forward_.begin(), forward_.end(), grid);
    const std::int64_t cells = cells_, kc = kernel_cells_, batch = g_.batch;
#pragma omp parallel for schedule(static) num_threads(nthreads_) if (work >= kParallelMin)
    for (std::int64_t i = 0; i < cells; ++i) {
      const std::int64_t ki = kc == cells ? i : i % kc;  // no division unless stacked
      for (std::int64_t b = 0; b < batch; ++b) grid[i + b * stride] *= kernels[(b / coils) * kc + ki];
    }
    run(inverse_.rbegin(), inverse_.rend(), grid);
#pragma omp parallel for schedule(static) num_threads(nthreads_) if (work >= kParallelMin)
    for (std::int64_t v = 0; v < n; ++v) {
      const std::int64_t i = v % nx, y = (v / nx) % ny, z3 = v / (nx * ny), cell = i + lx * (y + ly * z3);
      Cplx<T> acc{0, 0};
      for (std::int64_t b = 0; b < batch; ++b)
        acc = dt::combine_value(images, b, v, reinterpret_cast<const Cplx<T>&>(grid[cell + b * stride]), acc);
      z[v] = Complex(acc.re, acc.im);
    }
    return true;
  }

  void apply(const T* kernel, const Complex* x, Complex* z) override {
    Complex* grid = grid_.get();
    const std::int64_t nx = g_.n[0], ny = g_.n[1], nz = g_.n[2], lx = l_[0], ly = l_[1], lz = l_[2];
    const std::int64_t rows = ly * lz * g_.batch, work = cells_ * g_.batch, stride = stride_;
    // Pad: every row of every L grid is written (data and zeros), so nothing of the last call
    // survives.
#pragma omp parallel for schedule(static) num_threads(nthreads_) if (work >= kParallelMin)
    for (std::int64_t r = 0; r < rows; ++r) {
      const std::int64_t y = r % ly, z3 = (r / ly) % lz, b = r / (ly * lz);
      Complex* row = grid + b * stride + (r - b * ly * lz) * lx;
      std::int64_t copied = 0;
      if (y < ny && z3 < nz) {
        std::copy_n(x + nx * (y + ny * (z3 + nz * b)), nx, row);
        copied = nx;
      }
      std::fill(row + copied, row + lx, Complex(0, 0));
    }
    run(forward_.begin(), forward_.end(), grid);
    const std::int64_t cells = cells_, kc = kernel_cells_, batch = g_.batch;
#pragma omp parallel for schedule(static) num_threads(nthreads_) if (work >= kParallelMin)
    for (std::int64_t i = 0; i < cells; ++i) {
      const T k = kernel[kc == cells ? i : i % kc];  // no division unless stacked
      for (std::int64_t b = 0; b < batch; ++b) grid[i + b * stride] *= k;
    }
    run(inverse_.rbegin(), inverse_.rend(), grid);
    const std::int64_t kept = ny * nz * g_.batch;
#pragma omp parallel for schedule(static) num_threads(nthreads_) if (work >= kParallelMin)
    for (std::int64_t r = 0; r < kept; ++r) {
      const std::int64_t y = r % ny, z3 = (r / ny) % nz, b = r / (ny * nz);
      std::copy_n(grid + b * stride + lx * (y + ly * z3), nx, z + r * nx);
    }
  }

 private:
  // The full FFT of psf_buffer(), in place. FFTW_ESTIMATE plans without touching the data, which
  // already holds p.
  // On a stacked geometry p is one plane (psf_buffer), transformed over the other axes.
  const Complex* psf_fft() {
    Complex* p = grid_.get();
    const FftwPlan<T> fft(g_.stacked ? g_.dim - 1 : g_.dim, l_.data(), 1, p, -1, false, nthreads_);
    fft.execute();
    return p;
  }

  // The passes [first, last) on each image's grid. The images are stride_ apart, ∏ L_d rounded
  // up to a multiple of 4 complex values (32 bytes or more; ∏ 2N_d already is one, a periodic
  // axis of odd N_d may make ∏ L_d odd): each keeps the planned array's SIMD alignment, as
  // FFTW's new-array execute requires.
  template <class It>
  void run(It first, It last, Complex* grid) const {
    for (std::int64_t b = 0; b < g_.batch; ++b)
      for (It it = first; it != last; ++it) (*it)->execute(grid + b * stride_);
  }

  // The 1D pass along axis a over one L grid (see the top of the file).
  std::unique_ptr<FftwPlan<T>> pass(int a, int sign, bool measure) {
    std::int64_t stride[3] = {1, l_[0], l_[0] * l_[1]};
    const fftw_iodim64 dim = {static_cast<ptrdiff_t>(l_[a]), static_cast<ptrdiff_t>(stride[a]),
                              static_cast<ptrdiff_t>(stride[a])};
    std::vector<fftw_iodim64> loops;
    for (int b = g_.dim - 1; b >= 0; --b)  // slowest first, as FFTW lists loops
      if (b != a) {
        const std::int64_t count = b < a || !pruned_ ? l_[b] : g_.n[b];
        loops.push_back({static_cast<ptrdiff_t>(count), static_cast<ptrdiff_t>(stride[b]),
                         static_cast<ptrdiff_t>(stride[b])});
      }
    return std::make_unique<FftwPlan<T>>(1, &dim, static_cast<int>(loops.size()), loops.data(), grid_.get(), sign,
                                         measure, nthreads_);
  }

  core::ToeplitzGeometry g_;
  std::array<std::int64_t, 3> l_;
  std::int64_t cells_;         // ∏ L_d: one image's grid
  std::int64_t kernel_cells_;  // one kernel: cells_, or one plane of it (stacked)
  std::int64_t stride_;  // images apart in grid_ (run())
  int nthreads_;
  bool pruned_;
  FftwBuffer<T> grid_;
  std::vector<std::unique_ptr<FftwPlan<T>>> forward_, inverse_;  // per axis
};

}  // namespace

template <class T>
std::unique_ptr<core::ToeplitzEngine<T>> make_toeplitz_engine(const core::ToeplitzGeometry& g, int nthreads,
                                                             bool measure, bool pruned) {
  return std::make_unique<ToeplitzCpu<T>>(g, nthreads, measure, pruned);
}

template std::unique_ptr<core::ToeplitzEngine<float>> make_toeplitz_engine<float>(const core::ToeplitzGeometry&, int,
                                                                                 bool, bool);
template std::unique_ptr<core::ToeplitzEngine<double>> make_toeplitz_engine<double>(const core::ToeplitzGeometry&,
                                                                                   int, bool, bool);

}  // namespace fieldft::cpu
