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
#include <chrono>
#include <cstdlib>
#include <limits>
#include <map>
#include <numbers>
#include <sstream>
#include <type_traits>

#include "core/nufft_planner.hpp"
#include "core/type3.hpp"
#include "cuda/cuda_check.cuh"
#include "cuda/cufft_plan.cuh"
#include "cuda/device_buffer.cuh"
#include "cuda/device_utils.cuh"
#include "cuda/grid_fft.cuh"
#include "cuda/mode_fft_plan.cuh"
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

// What the planner needs to know of device `dev`.
core::DeviceCaps device_caps(int dev) {
  core::DeviceCaps c;
  int v = 0;
  FIELDFT_CUDA_CHECK(cudaDeviceGetAttribute(&c.sm_count, cudaDevAttrMultiProcessorCount, dev));
  FIELDFT_CUDA_CHECK(cudaDeviceGetAttribute(&v, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
  c.smem_per_block_optin = static_cast<std::size_t>(v);
  FIELDFT_CUDA_CHECK(cudaDeviceGetAttribute(&v, cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev));
  c.smem_per_sm = static_cast<std::size_t>(v);
  FIELDFT_CUDA_CHECK(cudaDeviceGetAttribute(&v, cudaDevAttrL2CacheSize, dev));
  c.l2_bytes = static_cast<std::size_t>(v);
  FIELDFT_CUDA_CHECK(cudaDeviceGetAttribute(&c.cc_major, cudaDevAttrComputeCapabilityMajor, dev));
  FIELDFT_CUDA_CHECK(cudaDeviceGetAttribute(&c.cc_minor, cudaDevAttrComputeCapabilityMinor, dev));
  std::size_t free_b = 0, total_b = 0;
  FIELDFT_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  c.memory_bytes = total_b;
  return c;
}

template <class T>
class CudaPlan final : public PlanImpl<T> {
 public:
  using Complex = std::complex<T>;

  explicit CudaPlan(core::PlanSetup setup) : PlanImpl<T>(std::move(setup)) {
    const auto& opt = this->setup_.options;
    const int ndev = device_count();
    require(ndev > 0, ErrorCode::kBackendUnavailable, "backend cuda requested but no CUDA device is visible");
    require(opt.device >= 0 && opt.device < ndev, ErrorCode::kInvalidArgument,
            "CUDA device " + std::to_string(opt.device) + " does not exist (" + std::to_string(ndev) + " visible)");
    device_ = opt.device;
    stream_ = static_cast<cudaStream_t>(opt.stream);
    DeviceGuard guard(device_);
    caps_ = device_caps(device_);
    grid_ = core::plan_nufft<T>(this->setup_, caps_).grid;
    choose_upsampfac_ = grid_.auto_upsampfac;
    configure();
  }

  void set_points(std::int64_t m, const T* x, const T* y, const T* z) override {
    DeviceGuard guard(device_);
    require(m < (std::int64_t(1) << 31), ErrorCode::kTooLarge,
            "the CUDA backend takes at most 2^31-1 points per plan, got " + std::to_string(m));
    const T* in[3] = {x, y, z};
    const T* dx[3] = {nullptr, nullptr, nullptr};
    stage_coordinates(m, in, kSourceNames, "points", coords_, dx, /*foldable=*/true);
    // The planner, once, with the points' statistics: the upsampling factor (upsampfac 0, first
    // points), then the sort's and the kernels' choices.
    core::PointStats stats;
    stats.m = m;
    stats.grid = {dg_.nf[0], dg_.nf[1], dg_.nf[2]};
    stats.choose_upsampfac = choose_upsampfac_ && m > 0;
    {  // free memory as it will be: the earlier points' precomputed weights are replaced
      std::size_t free_b = 0, total_b = 0;
      FIELDFT_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
      stats.free_device_bytes = free_b + weights_.size() * sizeof(T);
    }
    // May refuse (precomputed weights above their limit): the plan keeps its earlier points.
    core::NufftConfig cfg = core::plan_nufft<T>(this->setup_, caps_, &stats);
    if (stats.choose_upsampfac) {
      choose_upsampfac_ = false;
      grid_ = cfg.grid;  // the same choices, or those of the new setup, with the factor's reason
      if (cfg.replanned) {
        this->setup_ = std::move(*cfg.replanned);
        ffts_.clear();
        configure();
      } else {
        this->setup_.info.plan_reason = grid_.reason;
      }
      allocate_fine_grid();
    }
    this->has_points_ = false;  // until the new points are in place (the sort reuses their buffers)
    const core::PointsConfig& pc = *cfg.points;
    pts_.w = nullptr;
    // The weights' buffer: kept when its size is unchanged (as the sort's), else the earlier
    // points' freed before the new one is allocated.
    const std::size_t nweights = static_cast<std::size_t>(pc.precomputed_bytes) / sizeof(T);
    if (weights_.size() != nweights) {
      weights_ = DeviceBuffer<T>();
      if (nweights > 0) {
        check_device_memory(static_cast<double>(pc.precomputed_bytes), "the precomputed kernel weights");
        weights_ = DeviceBuffer<T>(nweights, "precomputed kernel weights");
      }
    }
    sort_device<T>(m, dx, pc);
    auto& info = this->setup_.info;
    if (pc.precompute && m > 0) {
      dispatch_dim([&]<int D>() {
        Launch<T, D>::store_weights(stream_, pts_, dg_, info.kernel_width, horner_.get(), info.horner_degree,
                                    weights_.get());
      });
      pts_.w = weights_.get();
    }
    info.method = pc.precompute ? nufft::Method::kPrecomputed : grid_.method;
    info.precomputed_bytes = pc.precomputed_bytes;
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
      sort_device<double>(m, cxg, points_config(m));
      inner_->template sort_device<double>(nk, csg, inner_->points_config(nk));
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
    const T* src[3] = {direct_src_[0].get(), direct_src_[1].get(), direct_src_[2].get()};
    const T* tgt[3] = {direct_tgt_[0].get(), direct_tgt_[1].get(), direct_tgt_[2].get()};
    const std::int64_t n_out = adjoint ? info.num_points : info.num_targets;
    const std::int64_t n_in = adjoint ? info.num_targets : info.num_points;
    const double sign = adjoint ? -info.isign : info.isign;
    launch_type3_direct_sums<T>(stream_, info.dim, sign, n_out, adjoint ? src : tgt, n_in, adjoint ? tgt : src,
                                info.ntransf, din, dout);
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

  // Planning kMeasure's clock: zero data in device memory (so no staging copies are timed), the
  // stream drained before and after.
  double time_transforms(int reps) override {
    const auto& info = this->setup_.info;
    DeviceGuard guard(device_);
    DeviceBuffer<Complex> pts(info.num_points * info.ntransf, "measured planning points"),
        modes(info.num_modes() * info.ntransf, "measured planning modes");
    FIELDFT_CUDA_CHECK(cudaMemsetAsync(pts.get(), 0, pts.bytes(), stream_));
    FIELDFT_CUDA_CHECK(cudaMemsetAsync(modes.get(), 0, modes.bytes(), stream_));
    Complex* c = pts.get();
    Complex* f = modes.get();
    const auto pair = [&] {
      execute(info.type == 1 ? c : f, info.type == 1 ? f : c, false);
      execute(info.type == 1 ? f : c, info.type == 1 ? c : f, true);
    };
    pair();
    FIELDFT_CUDA_CHECK(cudaStreamSynchronize(stream_));
    const auto t0 = std::chrono::steady_clock::now();
    for (int r = 0; r < reps; ++r) pair();
    FIELDFT_CUDA_CHECK(cudaStreamSynchronize(stream_));
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }

 private:
  // Applies the planner's grid choices (grid_) to the setup's kernel and grid: the fine grid and
  // the tables on the device.
  void configure() {
    auto& info = this->setup_.info;
    info.backend = Backend::kCuda;
    info.max_batch = grid_.max_batch;
    info.method = grid_.method;
    info.bin_size = grid_.bins;
    info.fft = grid_.fft;
    info.mode_fft = grid_.mode_fft;
    info.plan_reason = grid_.reason;
    const std::array<int, 3> bins = grid_.bins;
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
    const bool tile_interp = info.interp_kernel == nufft::InterpKernel::kTile;  // the planner's
    dispatch_dim([&]<int D>() {
      if (tile_interp) {
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

  // Sort sub-bins (point_bin): the planner's (core::sort_sub_bins) for the grid's bins.
  void set_sub_bins(DevGrid& g, bool boxes) const {
    const auto& info = this->setup_.info;
    const std::array<int, 3> sub = core::sort_sub_bins(info.dim, info.method, boxes, {g.bin[0], g.bin[1], g.bin[2]});
    g.nsub = 1;
    for (int d = 0; d < 3; ++d) {
      g.sub[d] = sub[d];
      if (d < info.dim) g.nsub *= g.bin[d] / g.sub[d];
    }
    g.boxes = boxes ? 1 : 0;
  }

  // The planner's choices for m points on this plan's grid (the sort's bins and sub-bins, the
  // kernels).
  core::PointsConfig points_config(std::int64_t m) const {
    return core::plan_points<T>(this->setup_, grid_, caps_, m, {dg_.nf[0], dg_.nf[1], dg_.nf[2]});
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
  void sort_device(std::int64_t m, const C* const* dx, const core::PointsConfig& pc) {
    auto& info = this->setup_.info;
    dg_.tc = pc.tensor_cores ? 1 : 0;
    for (int d = 0; d < info.dim; ++d) {
      dg_.bin[d] = pc.bins[d];
      dg_.nbins[d] = static_cast<int>((dg_.nf[d] + dg_.bin[d] - 1) / dg_.bin[d]);
      info.bin_size[d] = dg_.bin[d];
    }
    set_sub_bins(dg_, pc.boxes);
    dg_.bulk = pc.bulk_rows ? 1 : 0;
    info.spread_boxes = pc.boxes;
    info.spread_tensor_cores = pc.tensor_cores;
    info.spread_bulk_rows = pc.bulk_rows;
    info.spread_kernel = pc.spread;
    info.interp_kernel = pc.interp;
    info.sub_bins = {dg_.sub[0], dg_.sub[1], dg_.sub[2]};
    info.subproblem_points = pc.subproblem_points;
    info.plan_reason = grid_.reason + pc.reason;
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
    const std::int64_t cap = pc.subproblem_points;  // the planner's
    // Subproblems cover whole bins: the keys of a bin are consecutive. Those with fewer than 3/4
    // of the mean points come last, in order, so that the light ones (the short bins at the grid's
    // far ends, the rests of split bins) fill the last wave of blocks rather than leave heavy
    // ones to run alone after it; sorted by count throughout, the flushes would lose L2 locality
    // (docs/tuning.md, row 18).
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
                                  pts_.m, fine_.get(), nb, sp, nsub_, info.spread_kernel);
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
      slot = std::make_unique<GridFft<T>>(this->setup_.info.dim, dg_.nf, this->setup_.info.modes.data(), nb,
                                          grid_.fft, stream_);
    return *slot;
  }

  // Type 1's fused last FFT axis for the current grid, or null where it does not fit.
  const ModeFft<T>* mode_fft() {
    const auto& info = this->setup_.info;
    const std::array<std::int64_t, 3> nf{dg_.nf[0], dg_.nf[1], dg_.nf[2]};
    if (mode_fft_nf_ != nf) {
      mode_fft_nf_ = nf;
      mode_fft_.reset();
      if (grid_.mode_fft)  // the planner's
        mode_fft_ = std::make_unique<ModeFft<T>>(info.dim, dg_.nf, info.modes.data(), caps_.sm_count, stream_);
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
  core::DeviceCaps caps_{};
  core::GridConfig grid_{};  // the planner's choices for the setup in force
  cudaStream_t stream_ = nullptr;
  DevGrid dg_{};
  ModeMap modes_{};
  DevPoints<T> pts_{};
  DeviceBuffer<Cplx<T>> fine_, stage_in_, stage_out_;
  DeviceBuffer<T> horner_, deconv_[3], coords_[3], target_coords_[3], t_[3];
  DeviceBuffer<T> weights_;  // Method kPrecomputed: the sorted points' kernel weights (DevPoints::w)
  DeviceBuffer<std::int64_t> fine_index_[3], perm_, sub_begin_, sub_end_, bin_start_;
  DeviceBuffer<std::int32_t> i0_[3];
  DeviceBuffer<int> sub_bin_;
  int nsub_ = 0;
  bool choose_upsampfac_ = false;  // upsampfac 0, not yet chosen (the first set_points with points)
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
