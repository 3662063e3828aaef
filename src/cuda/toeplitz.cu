// The CUDA Toeplitz engine (src/cuda/toeplitz.hpp). Two ways to apply it:
//
// FUSED (2D, or 3D with a stacked z axis, core::fused_toeplitz_geometry: 2N_x and 2N_y powers of
// two in [16, 2048], x and y not periodic): three kernels that each read and write memory once,
// with the FFTs in registers and shared memory (line_fft.cuh), on a buffer of half the 2N grid,
// B·N_z·N_y rows of 2N_x (N_z = 1 in 2D; on a stack each z plane of an image is a 2D problem of
// its own with the one plane kernel, so the planes are just more rows and columns):
//   rows_forward   row (z, y < N_y) of image b: load x (times the coil map S_b in the SENSE
//                  form), zero-pad to 2N_x, FFT along x, store the row;
//   columns        column k_x of plane z of image b: load its N_y rows, zero-pad to 2N_y, FFT
//                  along y, multiply by the kernel, inverse FFT, store the first N_y;
//   rows_inverse   inverse FFT along x, keep the first N_x; store each image, or (SENSE form)
//                  sum conj(S_b) times it over the B coils in registers and store one image.
// The B images run in chunks (core::toeplitz_chunk's memory budget; one chunk in 2D at
// reconstruction sizes), the SENSE form's sum added into z after the first.
// The zero padding is never stored and the crop never read back. Memory traffic per image, in
// complex values: N (x) + N (map) + 2·2N (rows) + 2·2N (columns) + 2N + N (map) ≈ 11 N, against
// about 50 N for the cuFFT path below plus the separate coil expansion and combination (R1,
// 256², 32 coils on an H100: see docs/benchmarks.md, "R1").
//
// CUFFT (every other geometry, any dim 1–3, and every other geometry with a periodic axis: L_d = N_d
// there, core::ToeplitzGeometry; its grids below are L grids, 2N read L_d, and its kernels need no
// special case: a periodic axis has no padding, so pad and crop copy all of it, and a periodic
// last axis leaves no plane to zero and none to prune). The B images run in chunks of Bc
// (core::toeplitz_chunk: a memory budget, so that the field-corrected normal's C·K images never
// take C·K grids at once). Layout of a chunk's 2N grids: the image axis sits just before the LAST
// used axis, cell (p, b, l) at p + P·(b + Bc·l), where p indexes the plane of the other axes
// (P = 1 in 1D, 2Nx in 2D, 4NxNy in 3D) and l the last axis. Then the zero padding prunes with ONE
// batched cuFFT plan per pass, no loop over images:
//   plane pass  the (dim−1)-D transform of the planes l < N_last of every image — the first
//               Bc·N_last planes, contiguous: forward those are the only nonzero ones, inverse
//               (run last) the only ones the crop keeps (none in 1D);
//   last pass   the 1D transform along l of every (p, b) column, stride P·Bc.
// That skips 1/4 of a full 2N FFT in 2D and 1/3 in 3D (the CPU engine, with FFTW's nested loops,
// also prunes the x pass in 3D). Per chunk: pad (the planes l < N_last, each image's value times
// its SENSE factor S_c·b_l where there is one, computed there) and a memset of the other planes;
// the forward passes; the kernel (real, or the image's segment's complex one) on every cell; the
// inverse passes; crop (to each image, or Σ conj(S_c·b_l) times it over the chunk's images added
// into the one output image, which the first chunk writes). The plans share one cuFFT work area.
// A stacked last axis (core::ToeplitzGeometry::stacked; always periodic, so the cuFFT path) has
// no last pass: the kernel is one plane, cell p of it for every cell (p, l).
#include <cuda_runtime.h>

#include <cmath>
#include <complex>
#include <cstdint>
#include <memory>
#include <numbers>
#include <type_traits>
#include <vector>

#include "cuda/cuda_check.cuh"
#include "cuda/cufft_plan.cuh"
#include "cuda/device_buffer.cuh"
#include "cuda/device_utils.cuh"
#include "cuda/line_fft.cuh"
#include "cuda/stream.hpp"
#include "cuda/toeplitz.hpp"
#include "fieldft/detail/toeplitz.hpp"

namespace fieldft::cuda {

namespace {

constexpr int kThreads = 256;
constexpr std::int64_t kMaxBlocks = 4096;  // grid-stride loops beyond

unsigned blocks_for(std::int64_t n) {
  const std::int64_t b = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(b < kMaxBlocks ? b : kMaxBlocks);
}

// The geometry of the cuFFT path's kernels, by value (cells of a chunk: top of the file).
struct Layout {
  int dim;
  std::int64_t nx, ny, nz;  // image
  std::int64_t lx;          // L_x: 2 Nx (Nx if x is periodic)
  std::int64_t plane;       // P
  std::int64_t n_last;      // N of the last used axis
  std::int64_t chunk;       // Bc: images of one chunk
  std::int64_t voxels;      // Nx Ny Nz
  std::int64_t cells;       // ∏ L_d: one image's grid
  std::int64_t kernel_cells;  // one kernel: cells, or P on a stacked last axis
};

// Voxel v's plane index p and last-axis index l.
__device__ __forceinline__ void voxel_cell(const Layout& g, std::int64_t v, std::int64_t& p, std::int64_t& l) {
  const std::int64_t cx = v % g.nx, cy = (v / g.nx) % g.ny, cz = v / (g.nx * g.ny);
  if (g.dim == 1) {
    p = 0;
    l = cx;
  } else if (g.dim == 2) {
    p = cx;
    l = cy;
  } else {
    p = cx + g.lx * cy;
    l = cz;
  }
}

// The voxel at plane index p and last-axis index l < N_last, or −1 in the padding.
__device__ __forceinline__ std::int64_t cell_voxel(const Layout& g, std::int64_t p, std::int64_t l) {
  const std::int64_t cx = g.dim == 1 ? l : g.dim == 2 ? p : p % g.lx;
  const std::int64_t cy = g.dim == 1 ? 0 : g.dim == 2 ? l : p / g.lx;
  const std::int64_t cz = g.dim == 3 ? l : 0;
  if (cx >= g.nx || cy >= g.ny) return -1;
  return cx + g.nx * (cy + g.ny * cz);
}

// The images b0 … b0 + count − 1 of one chunk: x, their SENSE factors (SENSE) or their own
// images (x + b·N, plain), and where the results go.
template <class T>
struct ChunkImages {
  std::int64_t b0, count;
  const Cplx<T>* x;
  Cplx<T>* z;
  detail::toeplitz::SenseImages<T> sense;  // SENSE only
  bool first;                              // SENSE: the first chunk writes z, the others add
};

// The planes l < N_last of the chunk's grids: each image's value in the first N_d of each axis,
// zero elsewhere and for the chunk's unused images (a partial last chunk).
template <class T, bool SENSE>
__global__ void pad_kernel(Layout g, ChunkImages<T> c, Cplx<T>* __restrict__ grid) {
  const std::int64_t n = g.plane * g.chunk * g.n_last;
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t p = i % g.plane, q = i / g.plane, bi = q % g.chunk, l = q / g.chunk;
    const std::int64_t v = cell_voxel(g, p, l);
    Cplx<T> out{0, 0};
    if (v >= 0 && bi < c.count) {
      const std::int64_t b = c.b0 + bi;
      if constexpr (SENSE) {
        out = detail::toeplitz::image_value(c.sense, b, v, c.x[v]);
      } else {
        out = c.x[b * g.voxels + v];
      }
    }
    grid[i] = out;
  }
}

// Cell s (= p + P·l, the kernel's own index) of every image of the chunk times the kernel: real
// (K = T, one for all), or complex (K = Cplx<T>) with image b taking kernel b / coils, read once
// per run of images that share it.
template <class T, class K>
__global__ void multiply_kernel(Layout g, const K* __restrict__ kernel, std::int64_t coils, std::int64_t b0,
                                std::int64_t count, Cplx<T>* __restrict__ grid) {
  for (std::int64_t s = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; s < g.cells;
       s += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t p = s % g.plane, l = s / g.plane;
    const std::int64_t ks = g.kernel_cells == g.cells ? s : p;  // a stacked axis: the plane's kernel
    std::int64_t segment = -1;
    K k{};
    for (std::int64_t bi = 0; bi < count; ++bi) {
      if constexpr (std::is_same_v<K, T>) {
        if (bi == 0) k = kernel[ks];
      } else {
        const std::int64_t seg = (b0 + bi) / coils;
        if (seg != segment) {
          segment = seg;
          k = kernel[seg * g.kernel_cells + ks];
        }
      }
      Cplx<T>& v = grid[p + g.plane * (bi + g.chunk * l)];
      if constexpr (std::is_same_v<K, T>) {
        v = v * k;
      } else {
        v = cmul(v, k);
      }
    }
  }
}

// The first N_d of each axis of the chunk's grids: to each image (plain), or Σ over the chunk's
// images of conj(factor)·result added into the one image z (SENSE).
template <class T, bool SENSE>
__global__ void crop_kernel(Layout g, ChunkImages<T> c, const Cplx<T>* __restrict__ grid) {
  const std::int64_t n = SENSE ? g.voxels : g.voxels * c.count;
  for (std::int64_t j = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; j < n;
       j += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::int64_t v = j % g.voxels;
    std::int64_t p, l;
    voxel_cell(g, v, p, l);
    if constexpr (SENSE) {
      Cplx<T> acc = c.first ? Cplx<T>{0, 0} : c.z[v];
      for (std::int64_t bi = 0; bi < c.count; ++bi)
        acc = detail::toeplitz::combine_value(c.sense, c.b0 + bi, v, grid[p + g.plane * (bi + g.chunk * l)], acc);
      c.z[v] = acc;
    } else {
      const std::int64_t bi = j / g.voxels;
      c.z[(c.b0 + bi) * g.voxels + v] = grid[p + g.plane * (bi + g.chunk * l)];
    }
  }
}

// kernel[s] = f[s] · scale.
template <class T>
__global__ void scaled_copy_kernel(std::int64_t n, T scale, const Cplx<T>* __restrict__ f, Cplx<T>* __restrict__ kernel) {
  for (std::int64_t s = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; s < n;
       s += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
    kernel[s] = f[s] * scale;
}

// kernel[s] = Re(f[s]) · scale.
template <class T>
__global__ void real_part_kernel(std::int64_t n, T scale, const Cplx<T>* __restrict__ f, T* __restrict__ kernel) {
  for (std::int64_t s = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; s < n;
       s += static_cast<std::int64_t>(gridDim.x) * blockDim.x)
    kernel[s] = f[s].re * scale;
}

// ---------------------------------------------------------------------------------------------
// The fused path (top of the file).

constexpr int kFusedRowThreads = 256;  // per block of the row kernels: 2048/L lines of L/8 threads

// Geometry of the fused kernels: the image (N_z planes of N_x·N_y; 1 in 2D), and the chunk of
// images b0 … b0 + count − 1 of the B (images, or coils in the SENSE form) in the row buffer.
struct Fused {
  int nx, ny;
  std::int64_t planes;  // N_z
  std::int64_t voxels;  // nx·ny·planes
  std::int64_t batch;   // B
  // The SENSE form's factor of image b at voxel v: S_{b mod C}(v) (maps; C = coils), times
  // b_{b / C}(v) (phases, the field-corrected form; null otherwise).
  std::int64_t coils;
  const void* phases;
  std::int64_t b0 = 0, count = 0;
  bool first = true;  // SENSE: the first chunk writes z, the others add
  // Rows of one image: N_z·N_y.
  __host__ __device__ std::int64_t rows() const { return planes * ny; }
};

// S_c(v)·b_l(v) of image b (the SENSE form's factor; maps null: S = 1).
template <class T>
__device__ __forceinline__ Cplx<T> sense_factor(const Fused& f, const Cplx<T>* __restrict__ maps, std::int64_t b,
                                                std::int64_t v) {
  const detail::toeplitz::SenseImages<T> s{f.voxels, f.coils, maps, static_cast<const Cplx<T>*>(f.phases)};
  return detail::toeplitz::factor(s, b, v);
}

template <int L>
constexpr int row_lines() {
  return kFusedRowThreads / (L / 8);
}
// Columns per block of the column kernel: the most (a power of two up to 8, for coalesced rows
// of 32 bytes and more) whose buffers fit the 48 KiB of shared memory a kernel gets without an
// opt-in, at most 1024 threads.
template <class T, int L>
constexpr int column_group() {
  int g = 8;
  while (g > 1 && (static_cast<std::size_t>(g) * line_fft_padded(L) * sizeof(Cplx<T>) > 48 * 1024 || g * (L / 8) > 1024))
    g /= 2;
  return g;
}
template <class T, int L>
constexpr std::size_t row_smem() {
  return static_cast<std::size_t>(row_lines<L>()) * line_fft_padded(L) * sizeof(Cplx<T>);
}

// Row r = z·N_y + y of image b0 + i (line i·N_z·N_y + r of the buffer): x (SENSE: times S_b),
// padded, FFT.
template <class T, int L, bool SENSE>
__global__ void __launch_bounds__(kFusedRowThreads)
    rows_forward(Fused f, const Cplx<T>* __restrict__ x, const Cplx<T>* __restrict__ maps,
                 const Cplx<T>* __restrict__ tw, Cplx<T>* __restrict__ rows) {
  constexpr int TG = L / 8, LINES = row_lines<L>();
  extern __shared__ __align__(16) unsigned char fused_raw[];
  Cplx<T>* buf = reinterpret_cast<Cplx<T>*>(fused_raw) + (threadIdx.x / TG) * line_fft_padded(L);
  const int t = threadIdx.x % TG;
  const std::int64_t lines = f.count * f.rows();
  std::int64_t line = static_cast<std::int64_t>(blockIdx.x) * LINES + threadIdx.x / TG;
  const bool on = line < lines;
  if (!on) line = lines - 1;  // a copy of the last line, not stored: every thread meets the barriers
  const std::int64_t bi = line / f.rows(), b = f.b0 + bi, row = (line - bi * f.rows()) * f.nx;
  Cplx<T> v[8];
#pragma unroll
  for (int m = 0; m < 4; ++m) {  // t + m·L/8 < L/2 = N_x: the image; the upper half is the padding
    const std::int64_t i = row + t + m * TG;
    if constexpr (SENSE) {
      v[m] = cmul(x[i], sense_factor(f, maps, b, i));
    } else {
      v[m] = x[b * f.voxels + i];
    }
    v[m + 4] = Cplx<T>{0, 0};
  }
  line_fft<T, L, -1>(v, t, buf, 1, tw);
  if (on)
#pragma unroll
    for (int m = 0; m < 8; ++m) rows[line * L + t + m * TG] = v[m];
}

// Column kx of plane z of image b: its N_y rows, padded, FFT, kernel, inverse FFT, the first N_y
// back. lx = 2N_x, the rows' length; the kernel (one plane) is kernel[kx + lx·ky]: real (K = T),
// or complex (K = Cplx<T>, the field-corrected form) with image b taking kernel b / coils, lx·L
// cells apart.
template <class T, class K, int L, int G>
__global__ void __launch_bounds__(G*(L / 8))
    columns(Fused f, int lx, const K* __restrict__ kernel, const Cplx<T>* __restrict__ tw, Cplx<T>* __restrict__ rows) {
  constexpr int TG = L / 8;
  extern __shared__ __align__(16) unsigned char fused_raw[];
  const int g = threadIdx.x % G, t = threadIdx.x / G;
  Cplx<T>* buf = reinterpret_cast<Cplx<T>*>(fused_raw) + g;
  const std::int64_t kx = static_cast<std::int64_t>(blockIdx.x) * G + g;
  for (std::int64_t bz = blockIdx.y; bz < f.count * f.planes; bz += gridDim.y) {  // (image, plane)
    const std::int64_t b = f.b0 + bz / f.planes;
    Cplx<T>* col = rows + bz * f.ny * lx + kx;
    Cplx<T> v[8];
#pragma unroll
    for (int m = 0; m < 4; ++m) {
      v[m] = col[(t + m * TG) * static_cast<std::int64_t>(lx)];
      v[m + 4] = Cplx<T>{0, 0};
    }
    line_fft<T, L, -1>(v, t, buf, G, tw);
    const K* kb = kernel;
    if constexpr (!std::is_same_v<K, T>) kb += (b / f.coils) * lx * static_cast<std::int64_t>(L);
#pragma unroll
    for (int m = 0; m < 8; ++m) {
      const K k = kb[kx + lx * static_cast<std::int64_t>(t + m * TG)];
      if constexpr (std::is_same_v<K, T>) {
        v[m] = v[m] * k;
      } else {
        v[m] = cmul(v[m], k);
      }
    }
    line_fft<T, L, +1>(v, t, buf, G, tw);
#pragma unroll
    for (int m = 0; m < 4; ++m) col[(t + m * TG) * static_cast<std::int64_t>(lx)] = v[m];
  }
}

// Inverse FFT of each row, the first N_x kept: to image b (plain), or Σ_b conj(S_b) · row over
// the chunk's coils of row r = blockIdx.x (SENSE: the block's lines take the coils in turn and add
// their sums at the end, to z's unless the chunk is the first).
template <class T, int L, bool SENSE>
__global__ void __launch_bounds__(kFusedRowThreads)
    rows_inverse(Fused f, const Cplx<T>* __restrict__ rows, const Cplx<T>* __restrict__ maps,
                 const Cplx<T>* __restrict__ tw, Cplx<T>* __restrict__ z) {
  constexpr int TG = L / 8, LINES = row_lines<L>();
  extern __shared__ __align__(16) unsigned char fused_raw[];
  Cplx<T>* shared = reinterpret_cast<Cplx<T>*>(fused_raw);
  const int t = threadIdx.x % TG, li = threadIdx.x / TG;
  Cplx<T>* buf = shared + li * line_fft_padded(L);
  Cplx<T> v[8];
  if constexpr (!SENSE) {
    const std::int64_t lines = f.count * f.rows();
    std::int64_t line = static_cast<std::int64_t>(blockIdx.x) * LINES + li;
    const bool on = line < lines;
    if (!on) line = lines - 1;
#pragma unroll
    for (int m = 0; m < 8; ++m) v[m] = rows[line * L + t + m * TG];
    line_fft<T, L, +1>(v, t, buf, 1, tw);
    const std::int64_t bi = line / f.rows(), out = (f.b0 + bi) * f.voxels + (line - bi * f.rows()) * f.nx;
    if (on)
#pragma unroll
      for (int m = 0; m < 4; ++m) z[out + t + m * TG] = v[m];
  } else {
    const std::int64_t r = blockIdx.x, row = r * f.nx;
    Cplx<T> acc[4];
#pragma unroll
    for (int m = 0; m < 4; ++m) acc[m] = Cplx<T>{0, 0};
    for (std::int64_t i0 = 0; i0 < f.count; i0 += LINES) {
      const bool on = i0 + li < f.count;
      const std::int64_t bi = on ? i0 + li : f.count - 1;
#pragma unroll
      for (int m = 0; m < 8; ++m) v[m] = rows[(bi * f.rows() + r) * L + t + m * TG];
      line_fft<T, L, +1>(v, t, buf, 1, tw);
      if (on)
#pragma unroll
        for (int m = 0; m < 4; ++m) {
          const Cplx<T> s = sense_factor(f, maps, f.b0 + bi, row + t + m * TG);
          acc[m] = cadd(acc[m], Cplx<T>{s.re * v[m].re + s.im * v[m].im, s.re * v[m].im - s.im * v[m].re});
        }
    }
    // The lines' partial sums through shared memory (LINES·N_x <= 1024 values fit the buffers).
    __syncthreads();
#pragma unroll
    for (int m = 0; m < 4; ++m) shared[li * f.nx + t + m * TG] = acc[m];
    __syncthreads();
    if (li == 0) {
      if (!f.first)
#pragma unroll
        for (int m = 0; m < 4; ++m) acc[m] = cadd(acc[m], z[row + t + m * TG]);
      for (int l = 1; l < LINES; ++l)
#pragma unroll
        for (int m = 0; m < 4; ++m) acc[m] = cadd(acc[m], shared[l * f.nx + t + m * TG]);
#pragma unroll
      for (int m = 0; m < 4; ++m) z[row + t + m * TG] = acc[m];
    }
  }
}

// f(std::integral_constant<int, L>{}) for the line length L (a power of two in [16, 2048]).
template <class F>
void with_line_length(int L, F&& f) {
  switch (L) {
    case 16: f(std::integral_constant<int, 16>{}); break;
    case 32: f(std::integral_constant<int, 32>{}); break;
    case 64: f(std::integral_constant<int, 64>{}); break;
    case 128: f(std::integral_constant<int, 128>{}); break;
    case 256: f(std::integral_constant<int, 256>{}); break;
    case 512: f(std::integral_constant<int, 512>{}); break;
    case 1024: f(std::integral_constant<int, 1024>{}); break;
    default: f(std::integral_constant<int, 2048>{}); break;
  }
}

// exp(−2πi·k/L) for k < L, computed in double.
template <class T>
std::vector<Cplx<T>> twiddles(std::int64_t L) {
  std::vector<Cplx<T>> w(static_cast<std::size_t>(L));
  for (std::int64_t k = 0; k < L; ++k) {
    const double a = -2 * std::numbers::pi * static_cast<double>(k) / static_cast<double>(L);
    w[static_cast<std::size_t>(k)] = Cplx<T>{static_cast<T>(std::cos(a)), static_cast<T>(std::sin(a))};
  }
  return w;
}

template <class T>
class ToeplitzCuda final : public core::ToeplitzEngine<T> {
 public:
  using Complex = std::complex<T>;

  ToeplitzCuda(const core::ToeplitzGeometry& g, int device, void* stream)
      : g_(g), device_(device), stream_(static_cast<cudaStream_t>(stream)), fused_(core::fused_toeplitz_geometry(g)) {
    DeviceGuard guard(device_);
    const auto l = g.padded();
    if (fused_) {
      // The rows of one chunk of images (half the 2N grid), and room for the set-up's one kernel
      // grid (a plane on a stack).
      fused_chunk_ = core::toeplitz_chunk(g, sizeof(Cplx<T>));
      const std::int64_t rows = fused_chunk_ * g.n[2] * g.n[1] * l[0];
      grid_ = DeviceBuffer<Cplx<T>>(static_cast<std::size_t>(rows > g.kernel_cells() ? rows : g.kernel_cells()),
                                    "Toeplitz row buffer");
      fused_layout_ = {
          static_cast<int>(g.n[0]), static_cast<int>(g.n[1]), g.n[2], g.voxels(), g.batch, g.batch, nullptr};
      for (int d = 0; d < 2; ++d) {
        const auto w = twiddles<T>(l[d]);
        twiddle_[d] = DeviceBuffer<Cplx<T>>(w.size(), "Toeplitz twiddles");
        copy_to_device_async(twiddle_[d].get(), w.data(), w.size() * sizeof(Cplx<T>), device_, stream_);
      }
      return;
    }
    // The cuFFT path: one chunk's grids, and the plans of one chunk sharing one work area.
    const std::int64_t chunk = core::toeplitz_chunk(g, sizeof(Cplx<T>));
    const int last = g.dim - 1;
    layout_ = {g.dim, g.n[0],     g.n[1],           g.n[2],          l[0], g.padded_cells() / l[last], g.n[last],
               chunk, g.voxels(), g.padded_cells(), g.kernel_cells()};
    grid_ = DeviceBuffer<Cplx<T>>(static_cast<std::size_t>(chunk * g.padded_cells()), "Toeplitz 2N grids");
    std::size_t work = 0;
    if (g.dim > 1) {
      long long plane_n[2] = {l[1], l[0]};  // slowest first: 3D (2Ny, 2Nx); 2D uses plane_n + 1
      long long* pn = g.dim == 3 ? plane_n : plane_n + 1;
      plane_ = std::make_unique<CufftPlan<T>>(g.dim - 1, pn, 1, layout_.plane, chunk * g.n[last], stream_, false);
      work = plane_->work_size();
    }
    if (!g.stacked) {  // a stacked last axis is not transformed
      long long ln = l[last];
      last_ = std::make_unique<CufftPlan<T>>(1, &ln, layout_.plane * chunk, 1, layout_.plane * chunk, stream_, false);
      if (last_->work_size() > work) work = last_->work_size();
    }
    if (work > 0) {
      work_ = DeviceBuffer<unsigned char>(work, "Toeplitz cuFFT work area");
      if (plane_) plane_->set_work_area(work_.get());
      if (last_) last_->set_work_area(work_.get());
    }
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

  // Both kernels are scaled by 1 / kernel_cells(): the unnormalised FFT pair of apply multiplies
  // by the cells it transforms (∏ L_d, or a plane's on a stacked axis, whose plane of frequency 0
  // is kept: the first kernel_cells() values of the FFT).
  void make_kernel(T* kernel) override {
    DeviceGuard guard(device_);
    psf_fft();
    const std::int64_t cells = g_.kernel_cells();
    real_part_kernel<T><<<blocks_for(cells), kThreads, 0, stream_>>>(
        cells, static_cast<T>(1.0 / static_cast<double>(cells)), grid_.get(), kernel);
    FIELDFT_CUDA_CHECK_LAUNCH();
    FIELDFT_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

  void make_complex_kernel(Complex* kernel) override {
    DeviceGuard guard(device_);
    psf_fft();
    const std::int64_t cells = g_.kernel_cells();
    scaled_copy_kernel<T><<<blocks_for(cells), kThreads, 0, stream_>>>(
        cells, static_cast<T>(1.0 / static_cast<double>(cells)), grid_.get(), reinterpret_cast<Cplx<T>*>(kernel));
    FIELDFT_CUDA_CHECK_LAUNCH();
    FIELDFT_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

  bool has_field_sense() const override { return true; }
  bool apply_field_sense(const Complex* kernels, std::int64_t k, const Complex* maps, const Complex* phases,
                         const Complex* x, Complex* z) override {
    DeviceGuard guard(device_);
    const std::int64_t coils = g_.batch / k;
    if (fused_) {
      Fused f = fused_layout_;
      f.coils = coils;
      f.phases = phases;
      run_fused<true>(f, reinterpret_cast<const Cplx<T>*>(kernels), maps, x, z);
    } else {
      run_chunks<true>(reinterpret_cast<const Cplx<T>*>(kernels), coils, maps, phases, x, z);
    }
    return true;
  }

  void apply(const T* kernel, const Complex* x, Complex* z) override {
    DeviceGuard guard(device_);
    if (fused_) {
      run_fused<false>(fused_layout_, kernel, nullptr, x, z);
    } else {
      run_chunks<false>(kernel, g_.batch, nullptr, nullptr, x, z);
    }
  }

  bool apply_sense(const T* kernel, const Complex* maps, const Complex* x, Complex* z) override {
    DeviceGuard guard(device_);
    if (fused_) {
      run_fused<true>(fused_layout_, kernel, maps, x, z);
    } else {
      run_chunks<true>(kernel, g_.batch, maps, nullptr, x, z);
    }
    return true;
  }

 private:
  // The psf_buffer's FFT (one full grid; one plane, over the other axes, on a stacked geometry)
  // on the stream. A plan of its own (the standard layout of one grid), used once: destroyed only
  // after the stream has run it.
  void psf_fft() {
    const auto l = g_.padded();
    const int dims = g_.stacked ? g_.dim - 1 : g_.dim;
    long long n[3];
    for (int d = 0; d < dims; ++d) n[d] = l[dims - 1 - d];  // slowest first
    const CufftPlan<T> fft(dims, n, 1, g_.kernel_cells(), 1, stream_);
    fft.exec(grid_.get(), -1);
  }

  // The three fused kernels (top of the file) on the stream, per chunk of images; K: the
  // kernel's type (T, or Cplx<T> for the field-corrected form's kernels).
  template <bool SENSE, class K>
  void run_fused(Fused f, const K* kernel, const Complex* maps, const Complex* x, Complex* z) {
    for (std::int64_t b0 = 0; b0 < f.batch; b0 += fused_chunk_) {
      f.b0 = b0;
      f.count = f.batch - b0 < fused_chunk_ ? f.batch - b0 : fused_chunk_;
      f.first = b0 == 0;
      run_fused_chunk<SENSE>(f, kernel, maps, x, z);
    }
  }

  template <bool SENSE, class K>
  void run_fused_chunk(const Fused f, const K* kernel, const Complex* maps, const Complex* x, Complex* z) {
    const auto* xc = reinterpret_cast<const Cplx<T>*>(x);
    const auto* mc = reinterpret_cast<const Cplx<T>*>(maps);
    auto* zc = reinterpret_cast<Cplx<T>*>(z);
    Cplx<T>* rows = grid_.get();
    const int lx = 2 * f.nx, ly = 2 * f.ny;
    const std::int64_t lines = f.count * f.rows(), columns_y = f.count * f.planes;
    with_line_length(lx, [&](auto lc) {
      constexpr int L = decltype(lc)::value;
      const auto blocks = static_cast<unsigned>((lines + row_lines<L>() - 1) / row_lines<L>());
      rows_forward<T, L, SENSE><<<blocks, kFusedRowThreads, row_smem<T, L>(), stream_>>>(f, xc, mc, twiddle_[0].get(), rows);
      FIELDFT_CUDA_CHECK_LAUNCH();
    });
    with_line_length(ly, [&](auto lc) {
      constexpr int L = decltype(lc)::value, G = column_group<T, L>();
      const dim3 grid(static_cast<unsigned>(lx / G), static_cast<unsigned>(columns_y < 65535 ? columns_y : 65535));
      columns<T, K, L, G><<<grid, G * (L / 8), G * line_fft_padded(L) * sizeof(Cplx<T>), stream_>>>(
          f, lx, kernel, twiddle_[1].get(), rows);
      FIELDFT_CUDA_CHECK_LAUNCH();
    });
    with_line_length(lx, [&](auto lc) {
      constexpr int L = decltype(lc)::value;
      const auto blocks = static_cast<unsigned>(SENSE ? f.rows() : (lines + row_lines<L>() - 1) / row_lines<L>());
      rows_inverse<T, L, SENSE><<<blocks, kFusedRowThreads, row_smem<T, L>(), stream_>>>(f, rows, mc, twiddle_[0].get(), zc);
      FIELDFT_CUDA_CHECK_LAUNCH();
    });
  }

  // The cuFFT path (top of the file): each chunk of the B images in turn, all on the stream. K:
  // the kernel's type (T, or Cplx<T>: kernel b / coils for image b). SENSE: the images are the
  // factors of x (maps, phases: SenseImages) summed back into z; else x and z hold B images.
  template <bool SENSE, class K>
  void run_chunks(const K* kernel, std::int64_t coils, const Complex* maps, const Complex* phases, const Complex* x,
                  Complex* z) {
    const Layout& g = layout_;
    Cplx<T>* grid = grid_.get();
    const std::int64_t head = g.plane * g.chunk * g.n_last, cells = g.cells * g.chunk;
    ChunkImages<T> c{0, 0, reinterpret_cast<const Cplx<T>*>(x), reinterpret_cast<Cplx<T>*>(z),
                     {g.voxels, coils, reinterpret_cast<const Cplx<T>*>(maps), reinterpret_cast<const Cplx<T>*>(phases)},
                     true};
    for (std::int64_t b0 = 0; b0 < g_.batch; b0 += g.chunk) {
      c.b0 = b0;
      c.count = g_.batch - b0 < g.chunk ? g_.batch - b0 : g.chunk;
      c.first = b0 == 0;
      pad_kernel<T, SENSE><<<blocks_for(head), kThreads, 0, stream_>>>(g, c, grid);
      FIELDFT_CUDA_CHECK_LAUNCH();
      if (cells > head)
        FIELDFT_CUDA_CHECK(cudaMemsetAsync(grid + head, 0, static_cast<std::size_t>(cells - head) * sizeof(Cplx<T>), stream_));
      if (plane_) plane_->exec(grid, -1);
      if (last_) last_->exec(grid, -1);
      multiply_kernel<T, K><<<blocks_for(g.cells), kThreads, 0, stream_>>>(g, kernel, coils, c.b0, c.count, grid);
      FIELDFT_CUDA_CHECK_LAUNCH();
      if (last_) last_->exec(grid, +1);
      if (plane_) plane_->exec(grid, +1);
      crop_kernel<T, SENSE><<<blocks_for(SENSE ? g.voxels : g.voxels * c.count), kThreads, 0, stream_>>>(g, c, grid);
      FIELDFT_CUDA_CHECK_LAUNCH();
    }
  }

  void release() noexcept {
    plane_.reset();
    last_.reset();
    work_.reset();
    grid_.reset();
    twiddle_[0].reset();
    twiddle_[1].reset();
  }

  core::ToeplitzGeometry g_;
  int device_;
  cudaStream_t stream_;
  Layout layout_{};
  bool fused_;
  Fused fused_layout_{};
  std::int64_t fused_chunk_ = 0;  // images per chunk of the fused path
  DeviceBuffer<Cplx<T>> grid_;  // one chunk's 2N grids (cuFFT path), or the rows (fused)
  DeviceBuffer<Cplx<T>> twiddle_[2];  // fused: exp(−2πi·k/2N_d) along x and y
  std::unique_ptr<CufftPlan<T>> plane_, last_;  // cuFFT path only (no plane pass in 1D, no last
                                                // pass on a stacked axis)
  DeviceBuffer<unsigned char> work_;  // their shared work area (they run one after the other)
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
