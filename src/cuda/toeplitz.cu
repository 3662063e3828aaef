// The CUDA Toeplitz engine (src/cuda/toeplitz.hpp).
//
// Layout of the 2N grids of the B images: the batch axis sits just before the LAST used axis,
// cell (p, b, l) at p + P·(b + B·l), where p indexes the plane of the other axes (P = 2Nx in 2D,
// 4NxNy in 3D) and l the last axis (2Ny in 2D, 2Nz in 3D). Then the zero padding prunes with
// ONE batched cuFFT plan per pass, no loop over images:
//   plane pass  the (dim−1)-D transform of the planes l < N_last of every image — the first
//               B·N_last planes, contiguous: forward those are the only nonzero ones, inverse
//               (run last) the only ones the crop keeps;
//   last pass   the 1D transform along l of every (p, b) column, stride P·B.
// That skips 1/4 of a full 2N FFT in 2D and 1/3 in 3D (the CPU engine, with FFTW's nested loops,
// also prunes the x pass in 3D). The kernel multiplies cell (p, l) of every image.
#include <cuda_runtime.h>

#include <complex>
#include <cstdint>
#include <memory>

#include "cuda/cuda_check.cuh"
#include "cuda/cufft_plan.cuh"
#include "cuda/device_buffer.cuh"
#include "cuda/device_utils.cuh"
#include "cuda/toeplitz.hpp"

namespace fieldft::cuda {

namespace {

constexpr int kThreads = 256;
constexpr std::int64_t kMaxBlocks = 4096;  // grid-stride loops beyond

unsigned blocks_for(std::int64_t n) {
  const std::int64_t b = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(b < kMaxBlocks ? b : kMaxBlocks);
}

// The geometry the kernels need, by value.
struct Layout {
  std::int64_t nx, ny, nz;  // image
  std::int64_t lx;          // 2 Nx
  std::int64_t plane;       // P
  std::int64_t batch;       // B
  std::int64_t voxels;      // Nx Ny Nz
  std::int64_t total;       // P · B · L_last: the cells of all B grids
  bool three_d;
};

// Every cell of every grid: the image value in the first N_d of each axis, zero elsewhere.
template <class T>
__global__ void pad_kernel(Layout g, const Cplx<T>* __restrict__ x, Cplx<T>* __restrict__ grid) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < g.total;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t p = i % g.plane, q = i / g.plane, b = q % g.batch, l = q / g.batch;
    const std::int64_t cx = p % g.lx, cy = g.three_d ? p / g.lx : l, cz = g.three_d ? l : 0;
    Cplx<T> v{0, 0};
    if (cx < g.nx && cy < g.ny && cz < g.nz) v = x[b * g.voxels + cx + g.nx * (cy + g.ny * cz)];
    grid[i] = v;
  }
}

template <class T>
__global__ void multiply_kernel(Layout g, const T* __restrict__ kernel, Cplx<T>* __restrict__ grid) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < g.total;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t p = i % g.plane, l = i / (g.plane * g.batch);
    const T k = kernel[p + g.plane * l];
    Cplx<T> v = grid[i];
    v.re *= k;
    v.im *= k;
    grid[i] = v;
  }
}

// The first N_d of each axis of every grid, to the B images.
template <class T>
__global__ void crop_kernel(Layout g, const Cplx<T>* __restrict__ grid, Cplx<T>* __restrict__ z) {
  const std::int64_t n = g.voxels * g.batch;
  for (std::int64_t j = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; j < n;
       j += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t b = j / g.voxels, v = j % g.voxels;
    const std::int64_t cx = v % g.nx, cy = (v / g.nx) % g.ny, cz = v / (g.nx * g.ny);
    const std::int64_t p = cx + g.lx * (g.three_d ? cy : 0), l = g.three_d ? cz : cy;
    z[j] = grid[p + g.plane * (b + g.batch * l)];
  }
}

// kernel[s] = Re(f[s]) · scale.
template <class T>
__global__ void real_part_kernel(std::int64_t n, T scale, const Cplx<T>* __restrict__ f, T* __restrict__ kernel) {
  for (std::int64_t s = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; s < n;
       s += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
    kernel[s] = f[s].re * scale;
}

template <class T>
class ToeplitzCuda final : public core::ToeplitzEngine<T> {
 public:
  using Complex = std::complex<T>;

  ToeplitzCuda(const core::ToeplitzGeometry& g, int device, void* stream)
      : g_(g), device_(device), stream_(static_cast<cudaStream_t>(stream)) {
    DeviceGuard guard(device_);
    const auto l = g.padded();
    const int last = g.dim - 1;
    layout_ = {g.n[0], g.n[1], g.n[2], l[0], g.dim == 3 ? l[0] * l[1] : l[0], g.batch, g.voxels(),
               g.padded_cells() * g.batch, g.dim == 3};
    grid_ = DeviceBuffer<Cplx<T>>(static_cast<std::size_t>(layout_.total), "Toeplitz 2N grid");
    long long plane_n[2] = {l[1], l[0]};  // slowest first: 3D (2Ny, 2Nx); 2D uses plane_n + 1
    long long* pn = g.dim == 3 ? plane_n : plane_n + 1;
    plane_ = std::make_unique<CufftPlan<T>>(g.dim - 1, pn, 1, layout_.plane, g.batch * g.n[last], stream_);
    long long ln = l[last];
    last_ = std::make_unique<CufftPlan<T>>(1, &ln, layout_.plane * g.batch, 1, layout_.plane * g.batch, stream_);
  }

  ~ToeplitzCuda() override {
    try {
      DeviceGuard guard(device_);
      release();
    } catch (...) {
      release();  // the device could not be made current: free what can be freed
    }
  }

  Complex* psf_buffer() override { return reinterpret_cast<Complex*>(grid_.get()); }

  void make_kernel(T* kernel) override {
    DeviceGuard guard(device_);
    const auto l = g_.padded();
    long long n[3];
    for (int d = 0; d < g_.dim; ++d) n[d] = l[g_.dim - 1 - d];  // slowest first
    const std::int64_t cells = g_.padded_cells();
    // A plan of its own (the standard layout of one grid), used once: destroyed only after the
    // stream has run it.
    const CufftPlan<T> fft(g_.dim, n, 1, cells, 1, stream_);
    fft.exec(grid_.get(), -1);
    real_part_kernel<T><<<blocks_for(cells), kThreads, 0, stream_>>>(
        cells, static_cast<T>(1.0 / static_cast<double>(cells)), grid_.get(), kernel);
    FIELDFT_CUDA_CHECK_LAUNCH();
    FIELDFT_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

  void apply(const T* kernel, const Complex* x, Complex* z) override {
    DeviceGuard guard(device_);
    Cplx<T>* grid = grid_.get();
    const unsigned blocks = blocks_for(layout_.total);
    pad_kernel<T><<<blocks, kThreads, 0, stream_>>>(layout_, reinterpret_cast<const Cplx<T>*>(x), grid);
    FIELDFT_CUDA_CHECK_LAUNCH();
    plane_->exec(grid, -1);
    last_->exec(grid, -1);
    multiply_kernel<T><<<blocks, kThreads, 0, stream_>>>(layout_, kernel, grid);
    FIELDFT_CUDA_CHECK_LAUNCH();
    last_->exec(grid, +1);
    plane_->exec(grid, +1);
    crop_kernel<T><<<blocks_for(layout_.voxels * layout_.batch), kThreads, 0, stream_>>>(
        layout_, grid, reinterpret_cast<Cplx<T>*>(z));
    FIELDFT_CUDA_CHECK_LAUNCH();
  }

 private:
  void release() noexcept {
    plane_.reset();
    last_.reset();
    grid_.reset();
  }

  core::ToeplitzGeometry g_;
  int device_;
  cudaStream_t stream_;
  Layout layout_{};
  DeviceBuffer<Cplx<T>> grid_;
  std::unique_ptr<CufftPlan<T>> plane_, last_;
};

}  // namespace

template <class T>
std::unique_ptr<core::ToeplitzEngine<T>> make_toeplitz_engine(const core::ToeplitzGeometry& g, int device,
                                                             void* stream) {
  return std::make_unique<ToeplitzCuda<T>>(g, device, stream);
}

template std::unique_ptr<core::ToeplitzEngine<float>> make_toeplitz_engine<float>(const core::ToeplitzGeometry&, int,
                                                                                 void*);
template std::unique_ptr<core::ToeplitzEngine<double>> make_toeplitz_engine<double>(const core::ToeplitzGeometry&,
                                                                                   int, void*);

}  // namespace fieldft::cuda
