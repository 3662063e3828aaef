// CUDA NUFFT plan. Type 1: zero the fine grid, spread (nonuniform-point driven or shared-memory
// subproblems), cuFFT, copy the modes out with deconvolution. Type 2: copy the modes in with
// deconvolution, cuFFT, interpolate. Type 3 (core/type3.hpp): prephase, spread onto the type 3
// grid, inner type 2 plan (a CudaPlan of its own), postfactor; its adjoint runs the chain
// backwards with conjugate factors; where set_points chose the direct sums
// (PlanInfo::type3_direct), one kernel sums the terms (type3_direct_sums). Host pointers are
// staged through device buffers owned by the plan (the call then synchronises); device pointers
// never leave the device and the work is queued on the plan's stream (its context's) without any
// host synchronisation: the FFT plans of the plan's own type are made at set_points.
#include "cuda/cuda_plan.hpp"

#include <cufft.h>

#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <numbers>
#include <sstream>
#include <type_traits>

#include "core/type3.hpp"
#include "cuda/cuda_check.cuh"
#include "cuda/cufft_plan.cuh"
#include "cuda/device_buffer.cuh"
#include "cuda/device_utils.cuh"
#include "cuda/nufft_launch.hpp"
#include "cuda/type3_kernels.hpp"

namespace fieldft::cuda {

int device_count() noexcept {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return n;
}

namespace {

using nufft::detail::PlanImpl;

// Fine grids (x fastest) of this many cells and more are transformed pruned (GridFft). H100,
// ms for 2^22 -> 2^20: F (128^3 cells) 0.174 -> 0.168 and 0.171 -> 0.170 in two runs, L (144^3)
// 0.123 -> 0.120. Below 2^21 the whole plan wins (one 3D transform, us whole / pruned: 100^3
// 19.5 / 22.6, 108^3 22.7 / 25.5, 112^3 26.8 / 27.2, 120^3 28.8 / 29.5; 128^3 30.2 / 29.0,
// 144^3 38.0 / 34.4): F at sigma 1.6 (108^3) 0.150 -> 0.146 ms.
constexpr std::int64_t kPrunedFftCells = std::int64_t(1) << 21;

// The FFT of nb fine grids for types 1 and 2. Small grids: one batched plan. Large 2D and 3D
// grids: pruned along the slowest axis (the zero-padding of the modes is known): the 1D pass
// along it over every column, and the passes over the other axes only for the slabs (planes in
// 3D, rows in 2D) that hold modes, the two ends of that axis; type 2 has zeros elsewhere on
// input, type 1 uses no other slab on output. At upsampfac 2 this skips half of the work of all
// passes but the last.
template <class T>
class GridFft {
 public:
  GridFft(int dim, const std::int64_t* nf, const std::int64_t* modes, int nb, cudaStream_t stream) {
    long long n[3];
    std::int64_t size = 1;
    for (int d = 0; d < dim; ++d) {
      n[d] = nf[dim - 1 - d];  // slowest first
      size *= nf[d];
    }
    const int last = dim - 1;
    ends_ = modes[last] - modes[last] / 2;  // slabs k = 0 .. ends_-1 and nf-ends_ .. nf-1 hold the modes
    if (dim == 1 || size < kPrunedFftCells || 2 * ends_ >= nf[last]) {
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

// Type 1's last FFT axis fused with the copy to the modes (cuda/mode_fft.cuh): 2D and 3D grids
// whose last axis is at most this long and has no prime factor above 5; others take cuFFT over
// every axis and copy_modes.
constexpr std::int64_t kModeFftMaxLength = 512;

// Radices of kModeFftRadices (largest first) whose product is n, or none where n has a prime
// factor above 5: 108 = 12·9, 216 = 12·9·2, 128 = 8·8·2.
std::vector<int> mode_fft_radices(std::int64_t n) {
  std::vector<int> r;
  for (const int f : kModeFftRadices)
    while (n > 1 && n % f == 0) {
      r.push_back(f);
      n /= f;
    }
  if (n != 1 || r.size() > static_cast<std::size_t>(kModeFftMaxRadices)) r.clear();
  return r;
}

// Type 1's FFT of nb fine grids and the copy to the modes: cuFFT over the faster axes of every
// grid (one batched plan), then mode_fft_pass over the last axis of the columns that hold modes,
// keeping the modes' outputs only. For F (108^3 cells, 64^3 modes; H100, us): cuFFT 9.0 + 8.0 and
// the pass 6.9, against 24.8 for the 3D cuFFT and 4.7 for copy_modes; F 0.145 -> 0.140 ms.
template <class T>
class ModeFft {
 public:
  static bool fits(int dim, const std::int64_t* nf) {
    return dim >= 2 && nf[dim - 1] <= kModeFftMaxLength && !mode_fft_radices(nf[dim - 1]).empty();
  }

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
    const std::vector<int> r = mode_fft_radices(nlast_);
    p.nradix = static_cast<int>(r.size());
    p.radices = 0;
    for (std::size_t k = 0; k < r.size(); ++k) p.radices |= static_cast<unsigned long long>(r[k]) << (5 * k);
    p.ncol = 1;
    for (int d = 0; d < a; ++d) p.ncol *= modes[d];
    p.n0 = modes[0];
    p.nf0 = nf[0];
    p.tstride = plane_;
    // The widest block (columns) that leaves two blocks per SM and three per SM's shared memory
    // (H100, F's pass: 16 columns 6.3-6.9 us, 8 columns 6.7-7.0); threads, one per item of the
    // stage with the most (the smallest radix).
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

constexpr std::int64_t kMaxSubproblem = 1024;         // points per subproblem, for load balance
constexpr std::size_t kSubproblemSmem = 48 * 1024;     // tile budget that keeps several blocks per SM
// Points per fine-grid cell from which register boxes pay. Against spread_tile with two warps per
// tile (H100, float, eps 1e-5, ms plain -> boxes): C at 0.7 points per cell 35.0 -> 39.4; 128^3
// modes with 5e7 points at 2.1 points per cell 12.9 -> 11.8.
constexpr double kBoxDensity = 1.2;

// Points per fine-grid cell below which 3D warp tiles are added to the grid by bulk row
// reductions (DevGrid::bulk) rather than by the threads' vector atomics. H100, float, eps 1e-5,
// same run, ms threads -> bulk, sigma 2 (w = 7): E (0.12 points per cell) 8.43 -> 8.13, F (0.12)
// 0.171 -> 0.162, 128^3 modes with 3e6 points (0.18) 1.377 -> 1.341, 5e6 (0.30) 1.980 -> 1.983;
// sigma 2.25 (w = 6): 8e6 (0.33) 2.25 -> 2.46, B (0.42) 2.64 -> 2.92. On dense tiles the block
// waits longer for the engine to read its rows before it can exit than the threads took.
constexpr double kBulkDensity = 0.3;

// Tuning knob read once per plan, for benchmarks and diagnosis (docs/benchmarks.md):
// FIELDFT_NUFFT_BULK_ROWS = 0 never takes bulk tile rows, 1 takes them wherever the tile allows
// (bulk_rows_fit), unset or -1 by the density above.
int env_knob(const char* name, int hi) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return -1;
  const int k = std::atoi(v);
  return k >= 0 && k <= hi ? k : -1;
}
int bulk_rows_knob() { return env_knob("FIELDFT_NUFFT_BULK_ROWS", 1); }
// Points per fine-grid cell below which float 3D type 1 warp tiles are built by tensor-core
// products (DevGrid::tc, spread_tc.cuh) on 8x8x4 bins. FIELDFT_NUFFT_TC = 0 never takes them,
// 1 wherever they apply (float, 3D, type 1, warp tiles, W <= 8, sm_80 and later), unset or -1
// by this density.
constexpr double kTcDensity = 0.3;
int tc_knob() { return env_knob("FIELDFT_NUFFT_TC", 1); }
// FIELDFT_NUFFT_MODE_FFT = 0 never takes ModeFft (type 1 then runs cuFFT over every axis and
// copy_modes), 1 or unset wherever it fits.
bool mode_fft_knob_off() { return env_knob("FIELDFT_NUFFT_MODE_FFT", 1) == 0; }
// Points per cell of the sigma = 2 grid from which the automatic upsampling factor is 2.25 where
// that narrows the kernel (H100, float, eps 1e-5, w 7 -> 6, ms at sigma 2 -> 2.25: dense cases
// A 1.06 -> 1.00 (2.4 points per cell), G 1.12 -> 0.95 (2.4), B 4.44 -> 3.81 (0.6), H 2.65 ->
// 2.01 (0.6), C 49.3 -> 44.7 (1.0), I 30.4 -> 21.0 (1.0), J 0.74 -> 0.60 (1.0), D 1.52 -> 1.53
// (1.0); sparse ones E 12.3 -> 12.7 (0.12), K 8.29 -> 8.95 (0.12), F and L unchanged (0.125)).
constexpr double kWideDensity = 0.3;
// The same for 3D type 2 (interpolation from shared-memory tiles of 16x8x8 bins: no tile flush
// or zeroing that grow with the grid). H100, float, eps 1e-5, 0.12 points per cell, ms at sigma
// 2 -> 2.25: K 7.21 -> 6.84, L 0.157 -> 0.126.
constexpr double kWideDensityInterp3d = 0.1;
// Points per cell of the sigma = 2 grid below which 3D type 1 takes the narrow factor (1.6, the
// same kernel width on a grid of 216^3 instead of 256^3 cells for 128^3 modes): fewer, fuller
// tiles to zero and flush, and a smaller FFT; from it on, the wide factor (2.25, w 7 -> 6; see
// core::auto_upsampfac). H100, float, eps 1e-5, same run, ms at sigma 2 -> 1.6 (error): E
// (0.12) 8.10 -> 7.02 (1.6e-6 -> 7.7e-6), F (0.12) 0.161 -> 0.150 (1.5e-6 -> 6.9e-6); at 1.5
// (another run) E and F were faster still but their errors 1.6e-5 and 1.1e-5, above eps. The
// crossing with 2.25 (ms at 1.6 / 2.25, one run): 128^3 modes with 3e6 points (0.18 per cell)
// 1.21 / 1.31, 3.5e6 (0.21) 1.37 / 1.43, 4e6 (0.24) 1.52 / 1.53, 4.5e6 (0.27) 1.67 / 1.66, 5e6
// (0.30) 1.83 / 1.77; 64^3 modes with 3e5 (0.14) 0.163 / 0.166, 4e5 (0.19) 0.200 / 0.196, 5e5
// (0.24) 0.234 / 0.213, 6e5 (0.29) 0.266 / 0.238 (0.3 before: those up to 0.3 took 1.6).
constexpr double kNarrowDensity = 0.22;

// First index (atomicMin) of a finite coordinate beyond the fold limit (detail::within_fold_limit,
// the CPU's test); *bad starts at ULLONG_MAX. Run after find_non_finite, as the CPU checks.
template <class T>
__global__ void find_beyond_fold_limit(std::int64_t m, const T* __restrict__ x, double limit, unsigned long long* bad) {
  for (std::int64_t j = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; j < m;
       j += std::int64_t(gridDim.x) * blockDim.x)
    if (!fieldft::detail::within_fold_limit(static_cast<double>(x[j]), limit))
      atomicMin(bad, static_cast<unsigned long long>(j));
}

// Type 3 direct sums (PlanInfo::type3_direct): one thread per output and up to kDirectBatch
// transforms, each pair's phase computed once for them in double (core::type3_direct_phase, the
// CPU backend's arithmetic). Chosen only where the terms are few (core::type3_costs), so the
// plain loop over the inputs, whose coordinates every thread of a warp reads at once, suffices.
constexpr int kDirectBatch = 4;
constexpr int kDirectThreads = 128;
constexpr int kDirectMaxBlocksY = 65535;

template <class T>
struct DirectCoords {
  const T* c[3];
};

template <class T>
__global__ void type3_direct_sums(int dim, double sign, std::int64_t n_out, DirectCoords<T> oc, std::int64_t n_in,
                                  DirectCoords<T> ic, std::int64_t t_first, std::int64_t ntransf,
                                  const Cplx<T>* __restrict__ in, Cplx<T>* __restrict__ out) {
  const std::int64_t t0 = t_first + std::int64_t(blockIdx.y) * kDirectBatch;
  const int nb = static_cast<int>(min(std::int64_t(kDirectBatch), ntransf - t0));
  for (std::int64_t o = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; o < n_out;
       o += std::int64_t(gridDim.x) * blockDim.x) {
    double so[3] = {0, 0, 0};
    for (int d = 0; d < dim; ++d) so[d] = static_cast<double>(oc.c[d][o]);
    double re[kDirectBatch] = {}, im[kDirectBatch] = {};
    for (std::int64_t i = 0; i < n_in; ++i) {
      double xi[3] = {0, 0, 0};
      for (int d = 0; d < dim; ++d) xi[d] = static_cast<double>(ic.c[d][i]);
      double sn = 0, cs = 0;
      ::sincos(core::type3_direct_phase(dim, sign, so, xi), &sn, &cs);
#pragma unroll
      for (int b = 0; b < kDirectBatch; ++b)
        if (b < nb) {
          const Cplx<T> a = in[(t0 + b) * n_in + i];
          re[b] += static_cast<double>(a.re) * cs - static_cast<double>(a.im) * sn;
          im[b] += static_cast<double>(a.re) * sn + static_cast<double>(a.im) * cs;
        }
    }
#pragma unroll
    for (int b = 0; b < kDirectBatch; ++b)
      if (b < nb) out[(t0 + b) * n_out + o] = {static_cast<T>(re[b]), static_cast<T>(im[b])};
  }
}

template <class T>
class CudaPlan final : public PlanImpl<T> {
 public:
  using Complex = std::complex<T>;

  explicit CudaPlan(core::PlanSetup setup) : PlanImpl<T>(std::move(setup)) {
    auto& info = this->setup_.info;
    const auto& opt = this->setup_.options;
    const int ndev = device_count();
    require(ndev > 0, ErrorCode::kBackendUnavailable, "backend cuda requested but no CUDA device is visible");
    require(opt.device >= 0 && opt.device < ndev, ErrorCode::kInvalidArgument,
            "CUDA device " + std::to_string(opt.device) + " does not exist (" + std::to_string(ndev) + " visible)");
    device_ = opt.device;
    stream_ = static_cast<cudaStream_t>(opt.stream);
    DeviceGuard guard(device_);
    FIELDFT_CUDA_CHECK(cudaDeviceGetAttribute(&sms_, cudaDevAttrMultiProcessorCount, device_));
    int cc_major = 0;
    FIELDFT_CUDA_CHECK(cudaDeviceGetAttribute(&cc_major, cudaDevAttrComputeCapabilityMajor, device_));
    bulk_rows_ = cc_major >= 9 ? bulk_rows_knob() : 0;
    tc_ = cc_major >= 8 ? tc_knob() : 0;
    // Spread/interpolate-only plans keep the kernel of upsampfac 2 (nufft.hpp): no choice from the points.
    choose_upsampfac_ = opt.upsampfac == 0.0 && info.type != 3 && !info.spread_interp_only;
    configure();
  }

  void set_points(std::int64_t m, const T* x, const T* y, const T* z) override {
    DeviceGuard guard(device_);
    require(m < (std::int64_t(1) << 31), ErrorCode::kTooLarge,
            "the CUDA backend takes at most 2^31-1 points per plan, got " + std::to_string(m));
    const T* in[3] = {x, y, z};
    const T* dx[3] = {nullptr, nullptr, nullptr};
    stage_coordinates(m, in, kSourceNames, "points", coords_, dx, /*foldable=*/true);
    if (choose_upsampfac_ && m > 0) {
      choose_upsampfac_ = false;
      choose_upsampfac(m);
      allocate_fine_grid();
    }
    this->has_points_ = false;  // until the new points are in place (the sort reuses their buffers)
    sort_device<T>(m, dx);
    prepare_ffts();
    this->has_points_ = true;
  }

  // The FFT plans that execute() (the plan's own type) needs for its batches, made here rather
  // than at the first execute: cuFFT planning allocates device memory and may synchronise, and
  // execute with device pointers must only enqueue. (execute_adjoint makes its own on first use.)
  void prepare_ffts() {
    const auto& info = this->setup_.info;
    if (pts_.m == 0 || info.ntransf == 0) return;  // run() then only zeroes or returns
    if (info.spread_interp_only) return;           // no FFT
    const int full = info.max_batch;
    const int rest = static_cast<int>(info.ntransf % info.max_batch);
    for (const int nb : {full, rest}) {
      if (nb == 0) continue;
      if (info.type == 1) {
        if (const ModeFft<T>* mf = mode_fft())
          (void)mf->fft(nb, stream_);
        else
          (void)cufft(nb);
      } else {
        (void)cufft(nb);
      }
    }
  }

  // Type 3: the geometry's scalars on the host from the coordinates' ranges (reduced on the
  // device), the per-point factors and grid coordinates on the device (core/type3.hpp's per-point
  // code), then the sorts of the sources and of the inner plan's targets. Computed on the host,
  // the factors made case M's set_points 0.63-0.76 s (1e7 sources, 2.1e6 targets).
  void set_points_type3(std::int64_t m, const T* const* x, std::int64_t nk, const T* const* s) override {
    auto& info = this->setup_.info;
    DeviceGuard guard(device_);
    require(m < (std::int64_t(1) << 31) && nk < (std::int64_t(1) << 31), ErrorCode::kTooLarge,
            "the CUDA backend takes at most 2^31-1 sources and targets per plan, got " + std::to_string(m) +
                " and " + std::to_string(nk));
    const T* dx[3] = {nullptr, nullptr, nullptr};
    const T* ds[3] = {nullptr, nullptr, nullptr};
    stage_coordinates(m, x, kSourceNames, "points", coords_, dx, /*foldable=*/false);  // type 3 does not fold
    stage_coordinates(nk, s, kTargetNames, "targets", target_coords_, ds, /*foldable=*/false);
    const core::Type3Geometry g =
        core::type3_geometry(info, this->setup_.kernel, m, nk, device_ranges(m, dx), device_ranges(nk, ds),
                             std::numeric_limits<T>::epsilon() / 2, this->setup_.options.type3_direct);
    if (g.direct) {
      set_points_direct(m, dx, nk, ds);
      return;
    }
    // Device memory of the outer stage before allocating: grid, scaled batch, factors, sorted
    // points and the double coordinates they are sorted from.
    double nft = 1;
    for (int d = 0; d < info.dim; ++d) nft *= static_cast<double>(g.nf[d]);
    const double bytes = sizeof(Complex) * (nft + static_cast<double>(std::max(m, nk))) * info.max_batch +
                         sizeof(Complex) * static_cast<double>(m + nk) +
                         (sizeof(double) + sizeof(T) + sizeof(std::int32_t) + sizeof(std::int64_t)) * info.dim * m;
    check_device_memory(bytes, "the type 3 grid, factors and points");
    // The inner plan on the new grid (kept when the grid is unchanged: cuFFT plans are costly).
    if (!inner_ || inner_->dg_.nf[0] != g.nf[0] || inner_->dg_.nf[1] != g.nf[1] || inner_->dg_.nf[2] != g.nf[2])
      inner_ = std::make_unique<CudaPlan>(
          core::make_inner_setup(this->setup_, g.nf, nufft::min_eps<T>(), std::numeric_limits<T>::epsilon() / 2));
    this->has_points_ = false;  // until the new points are in place
    set_grid(g.nf);
    prephase_.resize(m, "type 3 factors");
    postfactor_.resize(nk, "type 3 factors");
    {
      DeviceBuffer<double> xg[3], sg[3];
      double* dxg[3] = {nullptr, nullptr, nullptr};
      double* dsg[3] = {nullptr, nullptr, nullptr};
      for (int d = 0; d < info.dim; ++d) {
        xg[d] = DeviceBuffer<double>(m, "type 3 grid coordinates");
        sg[d] = DeviceBuffer<double>(nk, "type 3 grid coordinates");
        dxg[d] = xg[d].get();
        dsg[d] = sg[d].get();
      }
      launch_type3_sources<T>(stream_, g, m, dx, dxg, prephase_.get());
      launch_type3_targets<T>(stream_, g, core::kernel_quadrature(this->setup_.kernel), nk, ds, dsg,
                              postfactor_.get());
      const double* cxg[3] = {dxg[0], dxg[1], dxg[2]};
      const double* csg[3] = {dsg[0], dsg[1], dsg[2]};
      sort_device<double>(m, cxg);
      inner_->template sort_device<double>(nk, csg);
      FIELDFT_CUDA_CHECK(cudaStreamSynchronize(stream_));  // before the coordinates are freed
    }
    scaled_.resize(static_cast<std::size_t>(std::max(m, nk) * info.max_batch), "type 3 batch");
    for (int d = 0; d < 3; ++d) {
      direct_src_[d].reset();
      direct_tgt_[d].reset();
    }
    info.type3_direct = false;
    info.fine_grid = g.nf;
    info.num_targets = nk;
    this->has_points_ = true;
  }

  // Type 3 direct sums: the plan's own copies of the (validated, device) coordinates; the grid
  // path's buffers are released (a grid chosen for earlier points may be large).
  void set_points_direct(std::int64_t m, const T* const* dx, std::int64_t nk, const T* const* ds) {
    auto& info = this->setup_.info;
    this->has_points_ = false;
    for (int d = 0; d < 3; ++d) {
      direct_src_[d].resize(d < info.dim ? m : 0, "type 3 coordinates");
      direct_tgt_[d].resize(d < info.dim ? nk : 0, "type 3 coordinates");
      if (d < info.dim && m > 0)
        FIELDFT_CUDA_CHECK(cudaMemcpyAsync(direct_src_[d].get(), dx[d], m * sizeof(T), cudaMemcpyDeviceToDevice, stream_));
      if (d < info.dim && nk > 0)
        FIELDFT_CUDA_CHECK(cudaMemcpyAsync(direct_tgt_[d].get(), ds[d], nk * sizeof(T), cudaMemcpyDeviceToDevice, stream_));
    }
    FIELDFT_CUDA_CHECK(cudaStreamSynchronize(stream_));  // the caller's arrays are read during this call only
    inner_.reset();
    fine_ = DeviceBuffer<Cplx<T>>();
    scaled_ = DeviceBuffer<Cplx<T>>();
    prephase_ = DeviceBuffer<Cplx<T>>();
    postfactor_ = DeviceBuffer<Cplx<T>>();
    ffts_.clear();
    info.type3_direct = true;
    info.fine_grid = {1, 1, 1};
    info.num_points = m;
    info.num_targets = nk;
    this->has_points_ = true;
  }

  void run_type3_direct(const Cplx<T>* din, Cplx<T>* dout, bool adjoint) {
    const auto& info = this->setup_.info;
    const DirectCoords<T> src{{direct_src_[0].get(), direct_src_[1].get(), direct_src_[2].get()}};
    const DirectCoords<T> tgt{{direct_tgt_[0].get(), direct_tgt_[1].get(), direct_tgt_[2].get()}};
    const std::int64_t n_out = adjoint ? info.num_points : info.num_targets;
    const std::int64_t n_in = adjoint ? info.num_targets : info.num_points;
    const double sign = adjoint ? -info.isign : info.isign;
    const unsigned blocks_x =
        static_cast<unsigned>(std::clamp<std::int64_t>((n_out + kDirectThreads - 1) / kDirectThreads, 1, 1 << 20));
    const std::int64_t per_launch = std::int64_t(kDirectBatch) * kDirectMaxBlocksY;
    for (std::int64_t t0 = 0; t0 < info.ntransf; t0 += per_launch) {
      const std::int64_t chunks = (std::min(per_launch, info.ntransf - t0) + kDirectBatch - 1) / kDirectBatch;
      type3_direct_sums<T><<<dim3(blocks_x, static_cast<unsigned>(chunks)), kDirectThreads, 0, stream_>>>(
          info.dim, sign, n_out, adjoint ? src : tgt, n_in, adjoint ? tgt : src, t0, info.ntransf, din, dout);
      FIELDFT_CUDA_CHECK_LAUNCH();
    }
  }

  void execute(const Complex* in, Complex* out, bool adjoint) override {
    const auto& info = this->setup_.info;
    DeviceGuard guard(device_);
    const int type = info.type == 3 ? 3 : (adjoint ? 3 - info.type : info.type);
    const std::int64_t m = pts_.m, n = info.num_modes(), nk = info.num_targets;
    std::int64_t in_per = type == 1 ? m : n, out_per = type == 1 ? n : m;
    if (type == 3) {
      in_per = adjoint ? nk : info.num_points;
      out_per = adjoint ? info.num_points : nk;
    }
    const std::int64_t in_len = in_per * info.ntransf, out_len = out_per * info.ntransf;
    require(in != nullptr || in_len == 0, ErrorCode::kInvalidArgument, "execute: input pointer is null");
    require(out != nullptr || out_len == 0, ErrorCode::kInvalidArgument, "execute: output pointer is null");
    const bool in_dev = is_device_pointer(in), out_dev = is_device_pointer(out);
    const Cplx<T>* din = reinterpret_cast<const Cplx<T>*>(in);
    Cplx<T>* dout = reinterpret_cast<Cplx<T>*>(out);
    if (!in_dev && in_len > 0) {
      if (stage_in_.size() < static_cast<std::size_t>(in_len)) stage_in_ = DeviceBuffer<Cplx<T>>(in_len, "input staging");
      FIELDFT_CUDA_CHECK(cudaMemcpyAsync(stage_in_.get(), in, in_len * sizeof(Complex), cudaMemcpyHostToDevice, stream_));
      din = stage_in_.get();
    }
    if (!out_dev && out_len > 0) {
      if (stage_out_.size() < static_cast<std::size_t>(out_len)) stage_out_ = DeviceBuffer<Cplx<T>>(out_len, "output staging");
      dout = stage_out_.get();
    }
    if (type == 3)
      run_type3(din, dout, adjoint);
    else
      run(type, adjoint ? -info.isign : info.isign, din, dout, info.ntransf);
    if (!out_dev && out_len > 0)
      FIELDFT_CUDA_CHECK(cudaMemcpyAsync(out, dout, out_len * sizeof(Complex), cudaMemcpyDeviceToHost, stream_));
    if (!in_dev || !out_dev) FIELDFT_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

 private:
  // Upsampfac 0 (types 1 and 2): the factor is chosen once, at the first set_points with points,
  // from their density (core::auto_upsampfac); the plan is set up again when it is not 2. The
  // other grid is taken only when it can be planned (host memory for its tables; at the narrow
  // factor, eps above the float rounding floor, which the deconvolution raises) and a larger one
  // fits in device memory; otherwise the plan stays at 2.
  void choose_upsampfac(std::int64_t m) {
    const auto& info = this->setup_.info;
    const double sigma = core::auto_upsampfac(info.eps, static_cast<double>(m) / static_cast<double>(dg_.size),
                                              info.type == 2 && info.dim == 3 ? kWideDensityInterp3d : kWideDensity,
                                              info.type == 1 && info.dim == 3 ? kNarrowDensity : 0.0);
    if (sigma == info.upsampfac) return;
    std::optional<core::PlanSetup> setup =
        core::setup_at_upsampfac(this->setup_, sigma, nufft::min_eps<T>(), std::numeric_limits<T>::epsilon() / 2);
    if (!setup) return;
    core::PlanSetup& chosen = *setup;
    std::size_t free_b = 0, total_b = 0;
    FIELDFT_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    // The sigma = 2 grid is not allocated yet (allocate_fine_grid): free memory as it would be.
    const double current = static_cast<double>(dg_.size) * info.max_batch * sizeof(Complex);
    const double grown = static_cast<double>(chosen.fine_grid_size() - dg_.size) * info.max_batch * sizeof(Complex);
    if (grown > 0.5 * (static_cast<double>(free_b) - current)) return;
    this->setup_ = std::move(chosen);
    ffts_.clear();
    configure();
  }

  // The backend's choices for the setup's kernel and grid: batch size, method, bins; the fine
  // grid and the tables on the device.
  void configure() {
    auto& info = this->setup_.info;
    const auto& opt = this->setup_.options;
    info.backend = Backend::kCuda;
    info.max_batch = static_cast<int>(opt.max_batch > 0 ? std::min<std::int64_t>(opt.max_batch, info.ntransf)
                                                        : std::min<std::int64_t>(info.ntransf, 8));
    const int w = info.kernel_width;
    // Bins: square tiles in 2D, flat bricks in 3D (case B: 16x8x8 22.4 ms vs 24.1 for 16x16x2 with
    // subproblems), trimmed until the method's shared-memory tile fits its budget: 48 KiB when
    // chosen automatically (several blocks per SM), the device's opt-in maximum less the
    // kernel's static arrays when requested.
    std::array<int, 3> defaults = info.dim == 1   ? std::array<int, 3>{1024, 1, 1}
                                  : info.dim == 2 ? std::array<int, 3>{32, 32, 1}
                                                  : std::array<int, 3>{16, 8, 8};
    for (int d = 0; d < info.dim; ++d)
      if (opt.bin_size[d] > 0) defaults[d] = opt.bin_size[d];
    int optin = 0;
    FIELDFT_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device_));
    auto tile_bytes = [&](nufft::Method m, const std::array<int, 3>& b) {
      return m == nufft::Method::kOutputDriven ? warp_tile_bytes<T>(info.dim, b.data(), w)
                                               : subproblem_tile_bytes<T>(info.dim, b.data(), w);
    };
    struct Fit {
      std::array<int, 3> bins;
      bool fits;
      double padding;  // tile cells per bin cell: each tile is zeroed and added to the grid whole
    };
    auto fit = [&](nufft::Method m, std::size_t budget) {
      std::array<int, 3> b = defaults;
      // Warp tiles in 3D: thinner bricks, smaller tiles, more blocks per SM (H200, float, eps
      // 1e-5: 16x8x4 gave B 6.98 ms, C 85.1, E 19.8, F 0.358 against 9.52, 124, 23.3, 0.494
      // for 16x8x8 and 8.47, 103, 25.3, 0.448 for 16x16x2). kTileBins: the bins of the
      // fixed-stride kernel instantiations.
      // Type 2 only interpolates, from tiles that a block loads once (interp_tile): deeper bins,
      // less halo per point (H100, sigma 2.25, ms for 16x8x4 -> 16x8x8: H 1.875 -> 1.835, I
      // 19.7 -> 19.4, K 7.49 -> 6.84, L 0.136 -> 0.126).
      if (m == nufft::Method::kOutputDriven && info.dim == 3 && info.type != 2 && opt.bin_size[2] <= 0)
        b[2] = kTileBins[2];
      while (tile_bytes(m, b) > budget && (b[0] > 4 || b[2] > 1)) {
        if (info.dim == 3 && b[2] > 1) b[2] /= 2;
        else
          for (int d = 0; d < std::min(info.dim, 2); ++d) b[d] = std::max(4, b[d] / 2);
      }
      std::int64_t cells = 1;
      for (int d = 0; d < info.dim; ++d) cells *= b[d];
      return Fit{b, tile_bytes(m, b) <= budget,
                 static_cast<double>(tile_bytes(m, b)) / (2.0 * sizeof(T) * static_cast<double>(cells))};
    };
    const std::size_t requested_budget = static_cast<std::size_t>(optin) - 20 * 1024;
    Fit chosen{defaults, true, 1.0};
    if (opt.method == nufft::Method::kSubproblem || opt.method == nufft::Method::kOutputDriven) {
      chosen = fit(opt.method, requested_budget);
      require(chosen.fits, ErrorCode::kInvalidArgument,
              std::string("method ") + nufft::method_name(opt.method) + ": a shared-memory tile for kernel width " +
                  std::to_string(w) + " does not fit; use a larger eps or method nupts");
      info.method = opt.method;
    } else if (opt.method == nufft::Method::kAuto) {
      // Auto: warp tiles (no shared-memory atomics; 2.7x faster than subproblems on cases A and
      // B, H200) when the tile fits 48 KiB and its padding is moderate, else subproblems on the
      // same terms, else warp tiles in the opt-in budget, else global atomics. A tile much larger
      // than its bin (wide kernels trimmed to tiny bins: 169x for 3D double at w = 11, measured
      // 2.1 s) costs more than global atomics. Wide kernels whose warp tile fits only the opt-in
      // budget still take it, one or two blocks per SM (H100, 3D double, ms, warp tiles against
      // global atomics: 128^3 modes, 1e7 points, eps 1e-9, w = 10, 16x8x4 bins (12.7 tile cells
      // per bin cell): 35.4 against 265; 64^3 modes, 2e6 points, w = 13, 14, 15 (padding 20, 23,
      // 47 with 16x8x2 bins): 10.4, 10.9, 13.5 against 118, 153, 182).
      info.method = nufft::Method::kNuptsDriven;
      struct Candidate {
        nufft::Method method;
        std::size_t budget;
        double max_padding;
      };
      const Candidate candidates[] = {{nufft::Method::kOutputDriven, kSubproblemSmem, 16.0},
                                      {nufft::Method::kSubproblem, kSubproblemSmem, 16.0},
                                      {nufft::Method::kOutputDriven, requested_budget, 64.0}};
      for (const Candidate& cand : candidates) {
        const Fit f = fit(cand.method, cand.budget);
        if (f.fits && f.padding <= cand.max_padding) {
          chosen = f;
          info.method = cand.method;
          break;
        }
      }
    } else {
      info.method = opt.method;
    }
    const std::array<int, 3> bins = chosen.bins;
    info.bin_size = bins;

    bins_ = bins;
    set_grid(info.fine_grid);
    {  // rows of W coefficients padded to whole 16-byte vectors (horner_pad, stage_horner)
      const int w = info.kernel_width, cols = horner_pad<T>(w);
      const auto& h = this->setup_.kernel.horner;
      std::vector<T> padded(h.size() / w * cols, T(0));
      for (std::size_t r = 0; r < h.size() / w; ++r)
        for (int k = 0; k < w; ++k) padded[r * cols + k] = static_cast<T>(h[r * w + k]);
      upload(horner_, padded);
    }
    for (int d = 0; d < 3; ++d) {
      upload(deconv_[d], std::vector<T>(this->setup_.deconv[d].begin(), this->setup_.deconv[d].end()));
      upload(fine_index_[d], this->setup_.fine_index[d]);
      modes_.n[d] = info.modes[d];
      modes_.fine_index[d] = fine_index_[d].get();
    }
    FIELDFT_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

  // Types 1 and 2 on ntransf transforms of device data (type and sign as applied, not as planned).
  void run(int type, int sign, const Cplx<T>* din, Cplx<T>* dout, std::int64_t ntransf) {
    const auto& info = this->setup_.info;
    const std::int64_t m = pts_.m, n = info.num_modes();
    if (m == 0) {
      if (type == 1 && n * ntransf > 0) FIELDFT_CUDA_CHECK(cudaMemsetAsync(dout, 0, n * ntransf * sizeof(Complex), stream_));
      return;
    }
    const T* deconv[3] = {deconv_[0].get(), deconv_[1].get(), deconv_[2].get()};
    for (std::int64_t b0 = 0; b0 < ntransf; b0 += info.max_batch) {
      const int nb = static_cast<int>(std::min<std::int64_t>(info.max_batch, ntransf - b0));
      FIELDFT_CUDA_CHECK(cudaMemsetAsync(fine_.get(), 0, nb * dg_.size * sizeof(Complex), stream_));
      if (type == 1) {
        spread(din + b0 * m, nb);
        if (info.spread_interp_only) {
          // No FFT: the unit-factor mode copy only places the cells in the mode order.
          launch_copy_modes<T>(stream_, modes_, deconv, dg_, fine_.get(), dout + b0 * n, nb, true);
        } else if (const ModeFft<T>* mf = mode_fft()) {
          mf->exec(stream_, fine_.get(), dg_.size, dout + b0 * n, n, nb, sign, modes_, deconv);
        } else {
          cufft(nb).exec(fine_.get(), sign, 1, nb);
          launch_copy_modes<T>(stream_, modes_, deconv, dg_, fine_.get(), dout + b0 * n, nb, true);
        }
      } else {
        launch_copy_modes<T>(stream_, modes_, deconv, dg_, fine_.get(), const_cast<Cplx<T>*>(din) + b0 * n, nb, false);
        if (!info.spread_interp_only) cufft(nb).exec(fine_.get(), sign, 2, nb);
        interp(fine_.get(), dout + b0 * m, nb);
      }
    }
  }

  // Type 3 on device data, one batch at a time. Forward: c·prephase -> spread -> inner type 2 ->
  // ·postfactor. Adjoint: f·conj(postfactor) -> inner adjoint (type 1) -> interpolate ->
  // ·conj(prephase).
  void run_type3(const Cplx<T>* din, Cplx<T>* dout, bool adjoint) {
    const auto& info = this->setup_.info;
    const std::int64_t m = info.num_points, nk = info.num_targets;
    const std::int64_t in_per = adjoint ? nk : m, out_per = adjoint ? m : nk;
    if (out_per == 0) return;
    if (in_per == 0) {  // empty sums
      FIELDFT_CUDA_CHECK(cudaMemsetAsync(dout, 0, out_per * info.ntransf * sizeof(Complex), stream_));
      return;
    }
    if (info.type3_direct) return run_type3_direct(din, dout, adjoint);
    for (std::int64_t b0 = 0; b0 < info.ntransf; b0 += info.max_batch) {
      const int nb = static_cast<int>(std::min<std::int64_t>(info.max_batch, info.ntransf - b0));
      if (!adjoint) {
        Cplx<T>* f = dout + b0 * nk;
        launch_scale_by_factor<T>(stream_, m, nb, din + b0 * m, prephase_.get(), false, scaled_.get());
        FIELDFT_CUDA_CHECK(cudaMemsetAsync(fine_.get(), 0, nb * dg_.size * sizeof(Complex), stream_));
        spread(scaled_.get(), nb);
        inner_->run(2, info.isign, fine_.get(), f, nb);
        launch_scale_by_factor<T>(stream_, nk, nb, f, postfactor_.get(), false, f);
      } else {
        Cplx<T>* c = dout + b0 * m;
        launch_scale_by_factor<T>(stream_, nk, nb, din + b0 * nk, postfactor_.get(), true, scaled_.get());
        inner_->run(1, -info.isign, scaled_.get(), fine_.get(), nb);
        interp(fine_.get(), c, nb);
        launch_scale_by_factor<T>(stream_, m, nb, c, prephase_.get(), true, c);
      }
    }
  }

  void interp(const Cplx<T>* grid, Cplx<T>* c, int nb) {
    const auto& info = this->setup_.info;
    // 3D: from a shared-memory copy of each subproblem's tile (H100: H 3.77 -> 3.09 ms, I 46.7
    // -> 38.1, K 9.78 -> 9.37, L 0.19 -> 0.15) when the tile fits the budget of a block with
    // several per SM, unless method nupts was asked for; otherwise, and in 1D and 2D, one
    // thread per sorted point gathering through L1.
    const bool tile_interp = info.dim == 3 && info.method != nufft::Method::kNuptsDriven && nsub_ > 0 &&
                             interp_tile_bytes<T>(info.dim, dg_.bin, info.kernel_width) <= kSubproblemSmem;
    dispatch_dim([&]<int D>() {
      if (D == 3 && tile_interp) {
        const Subproblems sp{sub_bin_.get(), sub_begin_.get(), sub_end_.get()};
        Launch<T, D>::interp_tile(stream_, pts_, dg_, info.kernel_width, horner_.get(), info.horner_degree, grid, c,
                                  pts_.m, nb, sp, nsub_);
      } else {
        Launch<T, D>::interp_nupts(stream_, pts_, dg_, info.kernel_width, horner_.get(), info.horner_degree, grid,
                                   c, pts_.m, nb);
      }
    });
  }

  // The fine grid (nf per dimension) with its bins, and its buffer for max_batch transforms.
  void set_grid(const std::array<std::int64_t, 3>& nf) {
    const auto& info = this->setup_.info;
    DevGrid g{};
    for (int d = 0; d < 3; ++d) {
      g.nf[d] = nf[d];
      g.bin[d] = d < info.dim ? bins_[d] : 1;
      g.nbins[d] = static_cast<int>((nf[d] + g.bin[d] - 1) / g.bin[d]);
    }
    g.width = info.kernel_width;
    set_sub_bins(g, false);
    g.size = nf[0] * nf[1] * nf[2];
    require(g.size < (std::int64_t(1) << 31), ErrorCode::kTooLarge,
            "the CUDA backend indexes a fine grid with 32-bit offsets; this plan's fine grid has " +
                std::to_string(g.size) + " cells (reduce the modes or upsampfac)");
    if (fine_.size() != static_cast<std::size_t>(g.size * info.max_batch)) fine_ = DeviceBuffer<Cplx<T>>();
    dg_ = g;
    // Deferred (allocate_fine_grid), the grid must still fit now: a plan too large fails here.
    if (choose_upsampfac_)
      check_device_memory(static_cast<double>(g.size) * info.max_batch * sizeof(Complex), "the fine grid");
    allocate_fine_grid();
  }

  // The fine grid's buffer, once the upsampling factor is known: an automatic one is chosen at
  // the first set_points with points (choose_upsampfac), and the grid is allocated then rather
  // than at sigma = 2 by the constructor and again at the chosen factor (E: a 134 MB grid
  // allocated and freed for nothing).
  void allocate_fine_grid() {
    const std::size_t cells = static_cast<std::size_t>(dg_.size * this->setup_.info.max_batch);
    if (choose_upsampfac_ || fine_.size() == cells) return;
    check_device_memory(static_cast<double>(cells) * sizeof(Complex), "the fine grid");
    fine_ = DeviceBuffer<Cplx<T>>();  // free the old grid first
    fine_ = DeviceBuffer<Cplx<T>>(cells, "the fine grid");
  }

  // Sort sub-bins (point_bin), each trimmed to divide the bin. 3D with tile kernels: 2x2x2
  // cells, the register boxes; interp_tile gains from them too (H100, case H: 2.99 -> 2.64 ms
  // against 16x4x2). Otherwise rows of 16 (3D, gathering through L1) or 8 (2D) cells along x,
  // thin across (H100, type 2: 3D 16x4x2 against 16x8x4 bins alone: H 4.48 -> 3.81 ms, I 56.4
  // -> 47.5; 2D 8x4 against 32x32: G 1.32 -> 1.13, J 0.98 -> 0.77).
  void set_sub_bins(DevGrid& g, bool boxes) const {
    const auto& info = this->setup_.info;
    const int dim = info.dim;
    const bool tiles3d = dim == 3 && info.method != nufft::Method::kNuptsDriven;
    const std::array<int, 3> sub = boxes || tiles3d ? std::array<int, 3>{2, 2, 2}
                                   : dim == 3       ? std::array<int, 3>{16, 4, 2}
                                   : dim == 2       ? std::array<int, 3>{8, 4, 1}
                                                    : std::array<int, 3>{g.bin[0], 1, 1};
    g.nsub = 1;
    for (int d = 0; d < 3; ++d) {
      g.sub[d] = std::max(1, std::min(sub[d], g.bin[d]));
      while (g.bin[d] % g.sub[d] != 0) --g.sub[d];
      if (d < dim) g.nsub *= g.bin[d] / g.sub[d];
    }
    g.boxes = boxes ? 1 : 0;
  }

  // Register boxes (spread_tile_boxes) for a warp-tile plan in 3D at W <= 7: as Options asks,
  // or automatically when the points are dense enough that a box holds several of them.
  bool use_boxes(std::int64_t m) const {
    const auto& info = this->setup_.info;
    const int opt = this->setup_.options.spread_boxes;
    if (info.dim != 3 || info.method != nufft::Method::kOutputDriven || info.kernel_width > 7 || opt == 0) return false;
    return opt == 1 || static_cast<double>(m) >= kBoxDensity * static_cast<double>(dg_.size);
  }

  // Tensor-core tiles (spread_tc) for float 3D type 1 warp tiles at W <= 8: as the knob asks, or
  // automatically for sparse points.
  bool use_tc(std::int64_t m) const {
    const auto& info = this->setup_.info;
    if (!std::is_same_v<T, float> || info.dim != 3 || info.type != 1 || info.method != nufft::Method::kOutputDriven ||
        info.kernel_width > 8 || tc_ == 0 || use_boxes(m))
      return false;
    const auto& bins = this->setup_.options.bin_size;
    if (bins[0] > 0 || bins[1] > 0 || bins[2] > 0) return false;  // the caller's bins
    return tc_ == 1 || static_cast<double>(m) < kTcDensity * static_cast<double>(dg_.size);
  }

  // The bins of the grid: the plan's (bins_), or kTcBins for tensor-core tiles.
  void set_tile_bins(bool tc) {
    auto& info = this->setup_.info;
    dg_.tc = tc ? 1 : 0;
    for (int d = 0; d < info.dim; ++d) {
      dg_.bin[d] = tc ? kTcBins[d] : bins_[d];
      dg_.nbins[d] = static_cast<int>((dg_.nf[d] + dg_.bin[d] - 1) / dg_.bin[d]);
      info.bin_size[d] = dg_.bin[d];
    }
  }

  static constexpr const char* kSourceNames[3] = {"x", "y", "z"};
  static constexpr const char* kTargetNames[3] = {"s", "t", "u"};

  // The count coordinates in[0..dim) on the device, checked as core::check_coordinates does on
  // the host (core::check_coordinate_arrays, then finite, on the device, one dimension at a time
  // so that the error names the array; foldable: then within the fold limit of types 1 and 2, as
  // core::check_points): device arrays as they are, host arrays copied into bufs. what: "points"
  // or "targets", for messages.
  void stage_coordinates(std::int64_t count, const T* const* in, const char* const* names, const char* what,
                         DeviceBuffer<T>* bufs, const T** out, bool foldable) {
    const int dim = this->setup_.info.dim;
    core::check_coordinate_arrays(dim, count, in, names, what);
    for (int d = 0; d < dim && count > 0; ++d) {
      if (is_device_pointer(in[d])) {
        out[d] = in[d];
      } else {
        if (bufs[d].size() < static_cast<std::size_t>(count)) bufs[d] = DeviceBuffer<T>(count, "point coordinates");
        FIELDFT_CUDA_CHECK(cudaMemcpyAsync(bufs[d].get(), in[d], count * sizeof(T), cudaMemcpyHostToDevice, stream_));
        out[d] = bufs[d].get();
      }
    }
    DeviceBuffer<unsigned long long> bad(1, "validation flag");
    for (int d = 0; d < dim && count > 0; ++d) {
      FIELDFT_CUDA_CHECK(cudaMemsetAsync(bad.get(), 0xff, sizeof(unsigned long long), stream_));
      launch_find_non_finite<T>(stream_, count, out[d], bad.get());
      unsigned long long first = 0;
      FIELDFT_CUDA_CHECK(cudaMemcpyAsync(&first, bad.get(), sizeof(first), cudaMemcpyDeviceToHost, stream_));
      FIELDFT_CUDA_CHECK(cudaStreamSynchronize(stream_));
      if (first != ULLONG_MAX) {
        T v{};
        FIELDFT_CUDA_CHECK(cudaMemcpy(&v, out[d] + first, sizeof(T), cudaMemcpyDeviceToHost));
        throw Error(ErrorCode::kNonFinite, std::string("non-finite value (") + std::to_string(double(v)) + ") in " +
                                               names[d] + "[" + std::to_string(first) + "]; coordinates must be finite");
      }
    }
    constexpr double limit = fieldft::detail::max_fold_coordinate<T>();
    for (int d = 0; d < dim && count > 0 && foldable; ++d) {
      FIELDFT_CUDA_CHECK(cudaMemsetAsync(bad.get(), 0xff, sizeof(unsigned long long), stream_));
      const unsigned blocks = static_cast<unsigned>(std::clamp<std::int64_t>((count + 255) / 256, 1, 1 << 20));
      find_beyond_fold_limit<T><<<blocks, 256, 0, stream_>>>(count, out[d], limit, bad.get());
      FIELDFT_CUDA_CHECK_LAUNCH();
      unsigned long long first = 0;
      FIELDFT_CUDA_CHECK(cudaMemcpyAsync(&first, bad.get(), sizeof(first), cudaMemcpyDeviceToHost, stream_));
      FIELDFT_CUDA_CHECK(cudaStreamSynchronize(stream_));
      if (first != ULLONG_MAX) {
        T v{};
        FIELDFT_CUDA_CHECK(cudaMemcpy(&v, out[d] + first, sizeof(T), cudaMemcpyDeviceToHost));
        core::throw_beyond_fold_limit(names[d], static_cast<std::int64_t>(first), static_cast<double>(v), limit,
                                      std::is_same_v<T, float> ? "float" : "double");
      }
    }
  }

  // [min, max] per dimension of count device coordinates ([0, 0] for none).
  core::CoordinateRanges device_ranges(std::int64_t count, const T* const* c) {
    core::CoordinateRanges r{};
    const int dim = this->setup_.info.dim;
    if (count == 0) return r;
    DeviceBuffer<T> ext(2 * dim, "coordinate ranges");
    std::size_t bytes = 0, need = 0;
    for (int d = 0; d < dim; ++d) {
      FIELDFT_CUDA_CHECK(cub::DeviceReduce::Min(nullptr, need, c[d], ext.get() + 2 * d, count, stream_));
      bytes = std::max(bytes, need);
      FIELDFT_CUDA_CHECK(cub::DeviceReduce::Max(nullptr, need, c[d], ext.get() + 2 * d + 1, count, stream_));
      bytes = std::max(bytes, need);
    }
    DeviceBuffer<unsigned char> scratch(bytes, "reduction workspace");
    for (int d = 0; d < dim; ++d) {
      FIELDFT_CUDA_CHECK(cub::DeviceReduce::Min(scratch.get(), bytes, c[d], ext.get() + 2 * d, count, stream_));
      FIELDFT_CUDA_CHECK(cub::DeviceReduce::Max(scratch.get(), bytes, c[d], ext.get() + 2 * d + 1, count, stream_));
    }
    T host[6] = {};
    FIELDFT_CUDA_CHECK(cudaMemcpyAsync(host, ext.get(), 2 * dim * sizeof(T), cudaMemcpyDeviceToHost, stream_));
    FIELDFT_CUDA_CHECK(cudaStreamSynchronize(stream_));
    for (int d = 0; d < dim; ++d) r[d] = {static_cast<double>(host[2 * d]), static_cast<double>(host[2 * d + 1])};
    return r;
  }

  void check_device_memory(double bytes, const char* what) const {
    std::size_t free_b = 0, total_b = 0;
    FIELDFT_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    if (bytes > 0.9 * static_cast<double>(free_b)) {
      std::ostringstream os;
      os << what << " needs " << bytes / (1 << 20) << " MiB on GPU " << device_ << " but only "
         << free_b / (1 << 20) << " MiB are free; reduce the modes, max_batch or upsampfac";
      throw Error(ErrorCode::kTooLarge, os.str());
    }
  }



  // Bin sort of m points with device coordinates dx of type C (the plan's T, or double for the
  // points type 3 computes): count, prefix sum on the device (the bins' starts, on the host,
  // also define the subproblems), the permutation, then the sorted points in order. Horner
  // variables computed in C are stored in T.
  template <class C>
  void sort_device(std::int64_t m, const C* const* dx) {
    auto& info = this->setup_.info;
    set_tile_bins(use_tc(m));
    set_sub_bins(dg_, use_boxes(m));
    info.spread_boxes = dg_.boxes != 0;
    info.spread_tensor_cores = dg_.tc != 0;
    dg_.bulk = bulk_rows_ == 1 || (bulk_rows_ == -1 && static_cast<double>(m) < kBulkDensity * static_cast<double>(dg_.size));
    const std::int64_t nbins = std::int64_t(dg_.nbins[0]) * dg_.nbins[1] * dg_.nbins[2];
    const std::int64_t nkeys = nbins * dg_.nsub;  // sort keys: (bin, sub-bin), point_bin
    // One count more than keys, left zero, so that the scan's last entry is the total.
    DeviceBuffer<int> bin_count(nkeys + 1, "bin counts"), rank(m, "bin ranks"), bin_of(m, "point bins");
    FIELDFT_CUDA_CHECK(cudaMemsetAsync(bin_count.get(), 0, (nkeys + 1) * sizeof(int), stream_));
    for (int d = 0; d < 3; ++d) {  // kept when the number of points is unchanged
      i0_[d].resize(d < info.dim ? m : 0, "sorted points");
      t_[d].resize(d < info.dim ? m : 0, "sorted points");
    }
    perm_.resize(m, "sort permutation");
    // First sorted point of each key (exclusive scan on the device: 3D tile plans have 64 keys
    // per bin, 24 million for case C, too many to add up on the host), and of each bin, the
    // only part the host needs.
    std::vector<std::int64_t> bin_first(nbins + 1, 0);
    if (m > 0) {
      dispatch_dim([&]<int D>() { Launch<C, D>::count_bins(stream_, m, dx, dg_, bin_count.get(), rank.get(), bin_of.get()); });
      bin_start_ = DeviceBuffer<std::int64_t>(nkeys + 1, "bin starts");
      std::size_t bytes = 0;
      FIELDFT_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, bytes, bin_count.get(), bin_start_.get(), nkeys + 1, stream_));
      DeviceBuffer<unsigned char> scratch(bytes, "scan workspace");
      FIELDFT_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(scratch.get(), bytes, bin_count.get(), bin_start_.get(), nkeys + 1, stream_));
      FIELDFT_CUDA_CHECK(cudaMemcpy2DAsync(bin_first.data(), sizeof(std::int64_t), bin_start_.get(),
                                           dg_.nsub * sizeof(std::int64_t), sizeof(std::int64_t), nbins + 1,
                                           cudaMemcpyDeviceToHost, stream_));
      FIELDFT_CUDA_CHECK(cudaStreamSynchronize(stream_));
    }
    // Points per subproblem. Subproblem blocks: kMaxSubproblem, for load balance. Warp tiles
    // (one warp per block): enough blocks for ~16 warps per SM, 64 to kMaxSubproblem points each
    // (case D, 262144 points in 256 bins, would otherwise run 256 warps on 132 SMs).
    const std::int64_t cap = info.method == nufft::Method::kOutputDriven
                                 ? std::clamp<std::int64_t>(m / (16 * std::int64_t(sms_)), 64, kMaxSubproblem)
                                 : kMaxSubproblem;
    // Subproblems cover whole bins: the keys of a bin are consecutive. Those with fewer than 3/4
    // of the mean points come last, in order, so that the light ones (the short bins at the grid's
    // far ends, the rests of split bins) fill the last wave of blocks rather than leave heavy
    // ones to run alone after it. H100, ms in bin order -> light last (same runs): F 0.1460 ->
    // 0.1426, 0.1468 -> 0.1456, 0.1444 -> 0.1432 (ncu: spread_tile 108.4 -> 107.2 us, SMs
    // idle from 172k cycles -> 179k of 214k), E 7.012 -> 6.978, B 2.638 -> 2.641, D 1.432 ->
    // 1.427. Ordered by count throughout, the tiles' flushes lose locality in L2: E 7.01 -> 7.56.
    std::vector<int> sub_bin;
    std::vector<std::int64_t> sub_begin, sub_end;
    std::int64_t nsub = 0;
    for (std::int64_t b = 0; b < nbins; ++b) nsub += (bin_first[b + 1] - bin_first[b] + cap - 1) / cap;
    const double light = 0.75 * static_cast<double>(m) / static_cast<double>(std::max<std::int64_t>(1, nsub));
    for (const bool heavy : {true, false})
      for (std::int64_t b = 0; b < nbins; ++b) {
        const std::int64_t first = bin_first[b], last = bin_first[b + 1];
        for (std::int64_t s = first; s < last; s += cap) {
          const std::int64_t end = std::min(s + cap, last);
          if ((static_cast<double>(end - s) >= light) != heavy) continue;
          sub_bin.push_back(static_cast<int>(b));
          sub_begin.push_back(s);
          sub_end.push_back(end);
        }
      }
    if (m > 0) {
      std::int32_t* i0p[3] = {i0_[0].get(), i0_[1].get(), i0_[2].get()};
      // Horner variables in C, narrowed to T afterwards when C is wider.
      DeviceBuffer<C> wide[3];
      C* tp[3] = {nullptr, nullptr, nullptr};
      for (int d = 0; d < info.dim; ++d) {
        if constexpr (std::is_same_v<C, T>) {
          tp[d] = t_[d].get();
        } else {
          wide[d] = DeviceBuffer<C>(m, "sorted points");
          tp[d] = wide[d].get();
        }
      }
      dispatch_dim([&]<int D>() {
        Launch<C, D>::write_sorted(stream_, m, dx, dg_, info.kernel_width, bin_start_.get(), rank.get(),
                                     bin_of.get(), i0p, tp, perm_.get());
      });
      if constexpr (!std::is_same_v<C, T>)
        for (int d = 0; d < info.dim; ++d) launch_narrow<T, C>(stream_, m, wide[d].get(), t_[d].get());
      upload(sub_bin_, sub_bin);
      upload(sub_begin_, sub_begin);
      upload(sub_end_, sub_end);
      FIELDFT_CUDA_CHECK(cudaStreamSynchronize(stream_));  // before the temporaries above are freed
    }
    nsub_ = static_cast<int>(sub_bin.size());
    if (m == 0) bin_start_ = DeviceBuffer<std::int64_t>();
    pts_ = DevPoints<T>{{i0_[0].get(), i0_[1].get(), i0_[2].get()}, {t_[0].get(), t_[1].get(), t_[2].get()},
                        perm_.get(), m};
    this->setup_.info.num_points = m;
  }

 private:
  template <class F>
  void dispatch_dim(F&& f) const {
    switch (this->setup_.info.dim) {
      case 1: f.template operator()<1>(); break;
      case 2: f.template operator()<2>(); break;
      default: f.template operator()<3>(); break;
    }
  }

  void spread(const Cplx<T>* c, int nb) {
    const auto& info = this->setup_.info;
    dispatch_dim([&]<int D>() {
      const Subproblems sp{sub_bin_.get(), sub_begin_.get(), sub_end_.get()};
      if (info.method == nufft::Method::kOutputDriven) {
        Launch<T, D>::spread_tile(stream_, pts_, dg_, info.kernel_width, horner_.get(), info.horner_degree, c,
                                  pts_.m, fine_.get(), nb, sp, nsub_);
      } else if (info.method == nufft::Method::kSubproblem) {
        Launch<T, D>::spread_subproblem(stream_, pts_, dg_, info.kernel_width, horner_.get(), info.horner_degree, c,
                                        pts_.m, fine_.get(), nb, sp, nsub_);
      } else {
        Launch<T, D>::spread_nupts(stream_, pts_, dg_, info.kernel_width, horner_.get(), info.horner_degree, c, pts_.m,
                                   fine_.get(), nb);
      }
    });
  }

  const GridFft<T>& cufft(int nb) {
    auto& slot = ffts_[nb];
    if (!slot)
      slot = std::make_unique<GridFft<T>>(this->setup_.info.dim, dg_.nf, this->setup_.info.modes.data(), nb, stream_);
    return *slot;
  }

  // Type 1's fused last FFT axis for the current grid, or null where it does not fit.
  const ModeFft<T>* mode_fft() {
    const auto& info = this->setup_.info;
    const std::array<std::int64_t, 3> nf{dg_.nf[0], dg_.nf[1], dg_.nf[2]};
    if (mode_fft_nf_ != nf) {
      mode_fft_nf_ = nf;
      mode_fft_.reset();
      if (!mode_fft_knob_off() && ModeFft<T>::fits(info.dim, dg_.nf))
        mode_fft_ = std::make_unique<ModeFft<T>>(info.dim, dg_.nf, info.modes.data(), sms_, stream_);
    }
    return mode_fft_.get();
  }

  template <class U>
  void upload(DeviceBuffer<U>& buf, const std::vector<U>& v) {
    buf = DeviceBuffer<U>(v.size(), "plan tables");
    if (!v.empty())
      FIELDFT_CUDA_CHECK(cudaMemcpyAsync(buf.get(), v.data(), v.size() * sizeof(U), cudaMemcpyHostToDevice, stream_));
    // Pageable host memory: cudaMemcpyAsync returns once the source has been copied out.
  }

  int device_ = 0;
  int tc_ = 0;         // tensor-core tiles (DevGrid::tc): 0 never (before sm_80), -1 sparse points, 1 always
  int bulk_rows_ = 0;  // bulk tile rows (DevGrid::bulk): 0 never (before sm_90), -1 sparse points, 1 always
  cudaStream_t stream_ = nullptr;
  DevGrid dg_{};
  ModeMap modes_{};
  DevPoints<T> pts_{};
  DeviceBuffer<Cplx<T>> fine_, stage_in_, stage_out_;
  DeviceBuffer<T> horner_, deconv_[3], coords_[3], target_coords_[3], t_[3];
  DeviceBuffer<std::int64_t> fine_index_[3], perm_, sub_begin_, sub_end_, bin_start_;
  DeviceBuffer<std::int32_t> i0_[3];
  DeviceBuffer<int> sub_bin_;
  int nsub_ = 0;
  int sms_ = 1;
  bool choose_upsampfac_ = false;  // upsampfac 0, not yet chosen (choose_upsampfac)
  std::array<int, 3> bins_{1, 1, 1};
  // Type 3: the inner type 2 plan on the grid, the factors of core/type3.hpp (source order), and
  // one batch of scaled strengths or targets.
  std::unique_ptr<CudaPlan> inner_;
  DeviceBuffer<Cplx<T>> prephase_, postfactor_, scaled_;
  DeviceBuffer<T> direct_src_[3], direct_tgt_[3];  // type 3 direct sums: the coordinates
  std::map<int, std::unique_ptr<GridFft<T>>> ffts_;
  std::unique_ptr<ModeFft<T>> mode_fft_;
  std::array<std::int64_t, 3> mode_fft_nf_{};  // the grid mode_fft_ was made for
};

}  // namespace

template <class T>
std::unique_ptr<nufft::detail::PlanImpl<T>> make_cuda_plan(core::PlanSetup setup) {
  return std::make_unique<CudaPlan<T>>(std::move(setup));
}

template std::unique_ptr<nufft::detail::PlanImpl<float>> make_cuda_plan<float>(core::PlanSetup);
template std::unique_ptr<nufft::detail::PlanImpl<double>> make_cuda_plan<double>(core::PlanSetup);

}  // namespace fieldft::cuda
