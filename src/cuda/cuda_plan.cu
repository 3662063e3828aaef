// CUDA NUFFT plan. Type 1: zero the fine grid, spread (nonuniform-point driven or shared-memory
// subproblems), cuFFT, copy the modes out with deconvolution. Type 2: copy the modes in with
// deconvolution, cuFFT, interpolate. Host pointers are staged through device buffers owned by the
// plan (the call then synchronises); device pointers never leave the device and the work is
// queued on the plan's stream.
#include "cuda/cuda_plan.hpp"

#include <cufft.h>

#include <algorithm>
#include <climits>
#include <map>
#include <sstream>

#include "cuda/cuda_check.cuh"
#include "cuda/device_buffer.cuh"
#include "cuda/device_utils.cuh"
#include "cuda/nufft_launch.hpp"

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

template <class T>
struct CufftTraits;
template <>
struct CufftTraits<float> {
  static constexpr cufftType kType = CUFFT_C2C;
  static cufftResult exec(cufftHandle h, Cplx<float>* d, int dir) {
    auto* p = reinterpret_cast<cufftComplex*>(d);
    return cufftExecC2C(h, p, p, dir);
  }
};
template <>
struct CufftTraits<double> {
  static constexpr cufftType kType = CUFFT_Z2Z;
  static cufftResult exec(cufftHandle h, Cplx<double>* d, int dir) {
    auto* p = reinterpret_cast<cufftDoubleComplex*>(d);
    return cufftExecZ2Z(h, p, p, dir);
  }
};

// A batched in-place cuFFT plan over the fine grid (x fastest), 64-bit sizes.
template <class T>
class CufftPlan {
 public:
  CufftPlan(int dim, const std::int64_t* nf, std::int64_t batch, cudaStream_t stream) {
    FIELDFT_CUDA_CHECK(cufftCreate(&h_));
    long long n[3];
    long long dist = 1;
    for (int d = 0; d < dim; ++d) {
      n[d] = nf[dim - 1 - d];  // slowest first
      dist *= nf[d];
    }
    std::size_t work = 0;
    try {
      FIELDFT_CUDA_CHECK(cufftMakePlanMany64(h_, dim, n, nullptr, 1, dist, nullptr, 1, dist, CufftTraits<T>::kType,
                                             batch, &work));
      FIELDFT_CUDA_CHECK(cufftSetStream(h_, stream));
    } catch (...) {
      cufftDestroy(h_);
      throw;
    }
  }
  ~CufftPlan() { cufftDestroy(h_); }
  CufftPlan(const CufftPlan&) = delete;
  CufftPlan& operator=(const CufftPlan&) = delete;
  void exec(Cplx<T>* data, int sign) const {
    FIELDFT_CUDA_CHECK(CufftTraits<T>::exec(h_, data, sign > 0 ? CUFFT_INVERSE : CUFFT_FORWARD));
  }

 private:
  cufftHandle h_{};
};

constexpr std::int64_t kMaxSubproblem = 1024;         // points per subproblem, for load balance
constexpr std::size_t kSubproblemSmem = 48 * 1024;     // tile budget that keeps several blocks per SM

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
    info.backend = Backend::kCuda;
    info.max_batch = static_cast<int>(opt.max_batch > 0 ? std::min<std::int64_t>(opt.max_batch, info.ntransf)
                                                        : std::min<std::int64_t>(info.ntransf, 8));
    const int w = info.kernel_width;
    // Bins. Subproblem / nonuniform-point methods: square tiles in 2D, flat bricks in 3D, trimmed
    // until a subproblem tile (bin + w per dimension) fits the shared-memory budget: 48 KiB when
    // chosen automatically (several blocks per SM), the device's opt-in maximum when requested.
    // Output-driven: the bin is the block's tile, one cell per thread (256 cells).
    const bool output = opt.method == nufft::Method::kOutputDriven;
    std::array<int, 3> bins = output ? (info.dim == 1   ? std::array<int, 3>{256, 1, 1}
                                        : info.dim == 2 ? std::array<int, 3>{16, 16, 1}
                                                        : std::array<int, 3>{8, 8, 4})
                                     : (info.dim == 1   ? std::array<int, 3>{1024, 1, 1}
                                        : info.dim == 2 ? std::array<int, 3>{32, 32, 1}
                                                        : std::array<int, 3>{16, 8, 8});  // 22.4 ms vs 24.1 (16,16,2), case B
    for (int d = 0; d < info.dim; ++d)
      if (opt.bin_size[d] > 0) bins[d] = opt.bin_size[d];
    if (output)
      require(bins[0] * bins[1] * bins[2] <= 256, ErrorCode::kInvalidArgument,
              "method output: a bin (the block's tile) may have at most 256 cells");
    int optin = 0;
    FIELDFT_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device_));
    const std::size_t budget =
        opt.method == nufft::Method::kSubproblem ? static_cast<std::size_t>(optin) - 4096 : kSubproblemSmem;
    if (!output) {
      while (subproblem_tile_bytes<T>(info.dim, bins.data(), w) > budget && (bins[0] > 4 || bins[2] > 1)) {
        if (info.dim == 3 && bins[2] > 1) bins[2] /= 2;
        else
          for (int d = 0; d < std::min(info.dim, 2); ++d) bins[d] = std::max(4, bins[d] / 2);
      }
    }
    info.bin_size = bins;
    const bool tile_fits = subproblem_tile_bytes<T>(info.dim, bins.data(), w) <= budget;
    if (opt.method == nufft::Method::kSubproblem)
      require(tile_fits, ErrorCode::kInvalidArgument,
              "method subproblem: a shared-memory tile for kernel width " + std::to_string(w) +
                  " does not fit; use a larger eps or method nupts");
    // Auto: subproblems when the tile fits and its padding is moderate. Each tile is zeroed and
    // added to the grid whole, so a tile much larger than its bin (wide kernels trimmed to tiny
    // bins: 169x for 3D double at w = 11, measured 2.1 s) costs more than global atomics.
    std::int64_t bin_cells = 1;
    for (int d = 0; d < info.dim; ++d) bin_cells *= bins[d];
    const double padding = static_cast<double>(subproblem_tile_bytes<T>(info.dim, bins.data(), w)) /
                           (2.0 * sizeof(T) * static_cast<double>(bin_cells));
    info.method = opt.method != nufft::Method::kAuto ? opt.method
                  : (tile_fits && padding <= 16.0 ? nufft::Method::kSubproblem : nufft::Method::kNuptsDriven);
    if (info.method == nufft::Method::kOutputDriven) {
      for (int d = 0; d < 3; ++d) od_.radius[d] = d < info.dim ? (w + bins[d] - 1) / bins[d] : 0;
      const std::size_t per_point = output_batch_bytes<T>(info.dim, w, 1);
      od_.batch = static_cast<int>(std::min<std::size_t>(256, (48 * 1024 / per_point) / 32 * 32));
    }

    for (int d = 0; d < 3; ++d) {
      dg_.nf[d] = info.fine_grid[d];
      dg_.bin[d] = d < info.dim ? bins[d] : 1;
      dg_.nbins[d] = static_cast<int>((info.fine_grid[d] + dg_.bin[d] - 1) / dg_.bin[d]);
    }
    dg_.size = this->setup_.fine_grid_size();
    require(dg_.size < (std::int64_t(1) << 31), ErrorCode::kTooLarge,
            "the CUDA backend indexes a fine grid with 32-bit offsets; this plan's fine grid has " +
                std::to_string(dg_.size) + " cells (reduce the modes or upsampfac)");

    const double grid_bytes = static_cast<double>(dg_.size) * info.max_batch * sizeof(Complex);
    std::size_t free_b = 0, total_b = 0;
    FIELDFT_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    if (grid_bytes > 0.9 * static_cast<double>(free_b)) {
      std::ostringstream os;
      os << "the fine grid needs " << grid_bytes / (1 << 20) << " MiB on GPU " << device_ << " but only "
         << free_b / (1 << 20) << " MiB are free; reduce the modes, max_batch or upsampfac";
      throw Error(ErrorCode::kTooLarge, os.str());
    }
    fine_ = DeviceBuffer<Cplx<T>>(static_cast<std::size_t>(dg_.size * info.max_batch), "the fine grid");
    upload(horner_, std::vector<T>(this->setup_.kernel.horner.begin(), this->setup_.kernel.horner.end()));
    for (int d = 0; d < 3; ++d) {
      upload(deconv_[d], std::vector<T>(this->setup_.deconv[d].begin(), this->setup_.deconv[d].end()));
      upload(fine_index_[d], this->setup_.fine_index[d]);
      modes_.n[d] = info.modes[d];
      modes_.fine_index[d] = fine_index_[d].get();
    }
    FIELDFT_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

  void set_points(std::int64_t m, const T* x, const T* y, const T* z) override {
    const auto& info = this->setup_.info;
    DeviceGuard guard(device_);
    require(m >= 0, ErrorCode::kInvalidArgument, "number of points must be >= 0, got " + std::to_string(m));
    require(m < (std::int64_t(1) << 31), ErrorCode::kTooLarge,
            "the CUDA backend takes at most 2^31-1 points per plan, got " + std::to_string(m));
    const T* in[3] = {x, y, z};
    const char* names[3] = {"x", "y", "z"};
    const T* dx[3] = {nullptr, nullptr, nullptr};
    for (int d = 0; d < info.dim; ++d) {
      require(m == 0 || in[d] != nullptr, ErrorCode::kInvalidArgument,
              std::string("coordinate array ") + names[d] + " is null but the plan has dimension " +
                  std::to_string(info.dim));
      if (m == 0) continue;
      if (is_device_pointer(in[d])) {
        dx[d] = in[d];
      } else {
        if (coords_[d].size() < static_cast<std::size_t>(m)) coords_[d] = DeviceBuffer<T>(m, "point coordinates");
        FIELDFT_CUDA_CHECK(cudaMemcpyAsync(coords_[d].get(), in[d], m * sizeof(T), cudaMemcpyHostToDevice, stream_));
        dx[d] = coords_[d].get();
      }
    }
    // Finite check on the device, one dimension at a time so the error can name the array.
    DeviceBuffer<unsigned long long> bad(1, "validation flag");
    for (int d = 0; d < info.dim && m > 0; ++d) {
      FIELDFT_CUDA_CHECK(cudaMemsetAsync(bad.get(), 0xff, sizeof(unsigned long long), stream_));
      launch_find_non_finite<T>(stream_, m, dx[d], bad.get());
      unsigned long long first = 0;
      FIELDFT_CUDA_CHECK(cudaMemcpyAsync(&first, bad.get(), sizeof(first), cudaMemcpyDeviceToHost, stream_));
      FIELDFT_CUDA_CHECK(cudaStreamSynchronize(stream_));
      if (first != ULLONG_MAX) {
        T v{};
        FIELDFT_CUDA_CHECK(cudaMemcpy(&v, dx[d] + first, sizeof(T), cudaMemcpyDeviceToHost));
        throw Error(ErrorCode::kNonFinite, std::string("non-finite value (") + std::to_string(double(v)) + ") in " +
                                               names[d] + "[" + std::to_string(first) + "]; coordinates must be finite");
      }
    }
    // Bin sort: count, prefix sum on the host (the counts also define the subproblems), scatter.
    const std::int64_t nbins = std::int64_t(dg_.nbins[0]) * dg_.nbins[1] * dg_.nbins[2];
    DeviceBuffer<int> bin_count(nbins, "bin counts"), rank(m, "bin ranks"), bin_of(m, "point bins");
    FIELDFT_CUDA_CHECK(cudaMemsetAsync(bin_count.get(), 0, nbins * sizeof(int), stream_));
    std::vector<int> counts(nbins, 0);
    for (int d = 0; d < 3; ++d) {
      i0_[d] = DeviceBuffer<std::int32_t>(d < info.dim ? m : 0, "sorted points");
      t_[d] = DeviceBuffer<T>(d < info.dim ? m : 0, "sorted points");
    }
    perm_ = DeviceBuffer<std::int64_t>(m, "sort permutation");
    if (m > 0) {
      dispatch_dim([&]<int D>() { Launch<T, D>::count_bins(stream_, m, dx, dg_, bin_count.get(), rank.get(), bin_of.get()); });
      FIELDFT_CUDA_CHECK(cudaMemcpyAsync(counts.data(), bin_count.get(), nbins * sizeof(int), cudaMemcpyDeviceToHost, stream_));
      FIELDFT_CUDA_CHECK(cudaStreamSynchronize(stream_));
    }
    std::vector<std::int64_t> start(nbins + 1, 0);
    std::vector<int> sub_bin;
    std::vector<std::int64_t> sub_begin, sub_end;
    for (std::int64_t b = 0; b < nbins; ++b) {
      start[b + 1] = start[b] + counts[b];
      for (std::int64_t s = start[b]; s < start[b + 1]; s += kMaxSubproblem) {
        sub_bin.push_back(static_cast<int>(b));
        sub_begin.push_back(s);
        sub_end.push_back(std::min(s + kMaxSubproblem, start[b + 1]));
      }
    }
    if (m > 0) {
      upload(bin_start_, start);
      std::int32_t* i0p[3] = {i0_[0].get(), i0_[1].get(), i0_[2].get()};
      T* tp[3] = {t_[0].get(), t_[1].get(), t_[2].get()};
      dispatch_dim([&]<int D>() {
        Launch<T, D>::scatter_sorted(stream_, m, dx, dg_, info.kernel_width, bin_start_.get(), rank.get(),
                                     bin_of.get(), i0p, tp, perm_.get());
      });
      upload(sub_bin_, sub_bin);
      upload(sub_begin_, sub_begin);
      upload(sub_end_, sub_end);
      FIELDFT_CUDA_CHECK(cudaStreamSynchronize(stream_));  // before the temporaries above are freed
    }
    nsub_ = static_cast<int>(sub_bin.size());
    if (m == 0) bin_start_ = DeviceBuffer<std::int64_t>();
    od_.bin_start = bin_start_.get();
    pts_ = DevPoints<T>{{i0_[0].get(), i0_[1].get(), i0_[2].get()}, {t_[0].get(), t_[1].get(), t_[2].get()},
                        perm_.get(), m};
    this->setup_.info.num_points = m;
    this->has_points_ = true;
  }

  void execute(const Complex* in, Complex* out, bool adjoint) override {
    const auto& info = this->setup_.info;
    DeviceGuard guard(device_);
    const int type = adjoint ? 3 - info.type : info.type;
    const int sign = adjoint ? -info.isign : info.isign;
    const std::int64_t m = pts_.m, n = info.num_modes();
    const std::int64_t in_len = (type == 1 ? m : n) * info.ntransf, out_len = (type == 1 ? n : m) * info.ntransf;
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
    if (m == 0) {
      if (type == 1 && out_len > 0) FIELDFT_CUDA_CHECK(cudaMemsetAsync(dout, 0, out_len * sizeof(Complex), stream_));
    } else {
      const T* deconv[3] = {deconv_[0].get(), deconv_[1].get(), deconv_[2].get()};
      for (std::int64_t b0 = 0; b0 < info.ntransf; b0 += info.max_batch) {
        const int nb = static_cast<int>(std::min<std::int64_t>(info.max_batch, info.ntransf - b0));
        // The output-driven spreader writes every cell; the others add into a zeroed grid.
        if (type == 2 || info.method != nufft::Method::kOutputDriven)
          FIELDFT_CUDA_CHECK(cudaMemsetAsync(fine_.get(), 0, nb * dg_.size * sizeof(Complex), stream_));
        if (type == 1) {
          spread(din + b0 * m, nb);
          cufft(nb).exec(fine_.get(), sign);
          launch_copy_modes<T>(stream_, modes_, deconv, dg_, fine_.get(), dout + b0 * n, nb, true);
        } else {
          launch_copy_modes<T>(stream_, modes_, deconv, dg_, fine_.get(), const_cast<Cplx<T>*>(din) + b0 * n, nb, false);
          cufft(nb).exec(fine_.get(), sign);
          dispatch_dim([&]<int D>() {
            Launch<T, D>::interp_nupts(stream_, pts_, dg_, info.kernel_width, horner_.get(), info.horner_degree,
                                       fine_.get(), dout + b0 * m, m, nb);
          });
        }
      }
    }
    if (!out_dev && out_len > 0)
      FIELDFT_CUDA_CHECK(cudaMemcpyAsync(out, dout, out_len * sizeof(Complex), cudaMemcpyDeviceToHost, stream_));
    if (!in_dev || !out_dev) FIELDFT_CUDA_CHECK(cudaStreamSynchronize(stream_));
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
      if (info.method == nufft::Method::kOutputDriven) {
        Launch<T, D>::spread_output(stream_, pts_, dg_, info.kernel_width, horner_.get(), info.horner_degree, c,
                                    pts_.m, fine_.get(), nb, od_);
      } else if (info.method == nufft::Method::kSubproblem) {
        Subproblems sp{sub_bin_.get(), sub_begin_.get(), sub_end_.get()};
        Launch<T, D>::spread_subproblem(stream_, pts_, dg_, info.kernel_width, horner_.get(), info.horner_degree, c,
                                        pts_.m, fine_.get(), nb, sp, nsub_);
      } else {
        Launch<T, D>::spread_nupts(stream_, pts_, dg_, info.kernel_width, horner_.get(), info.horner_degree, c, pts_.m,
                                   fine_.get(), nb);
      }
    });
  }

  const CufftPlan<T>& cufft(int nb) {
    auto& slot = ffts_[nb];
    if (!slot) slot = std::make_unique<CufftPlan<T>>(this->setup_.info.dim, dg_.nf, nb, stream_);
    return *slot;
  }

  template <class U>
  void upload(DeviceBuffer<U>& buf, const std::vector<U>& v) {
    buf = DeviceBuffer<U>(v.size(), "plan tables");
    if (!v.empty())
      FIELDFT_CUDA_CHECK(cudaMemcpyAsync(buf.get(), v.data(), v.size() * sizeof(U), cudaMemcpyHostToDevice, stream_));
    // Pageable host memory: cudaMemcpyAsync returns once the source has been copied out.
  }

  int device_ = 0;
  cudaStream_t stream_ = nullptr;
  DevGrid dg_{};
  ModeMap modes_{};
  DevPoints<T> pts_{};
  DeviceBuffer<Cplx<T>> fine_, stage_in_, stage_out_;
  DeviceBuffer<T> horner_, deconv_[3], coords_[3], t_[3];
  DeviceBuffer<std::int64_t> fine_index_[3], perm_, sub_begin_, sub_end_, bin_start_;
  OutputDriven<T> od_{};
  DeviceBuffer<std::int32_t> i0_[3];
  DeviceBuffer<int> sub_bin_;
  int nsub_ = 0;
  std::map<int, std::unique_ptr<CufftPlan<T>>> ffts_;
};

}  // namespace

template <class T>
std::unique_ptr<nufft::detail::PlanImpl<T>> make_cuda_plan(core::PlanSetup setup) {
  return std::make_unique<CudaPlan<T>>(std::move(setup));
}

template std::unique_ptr<nufft::detail::PlanImpl<float>> make_cuda_plan<float>(core::PlanSetup);
template std::unique_ptr<nufft::detail::PlanImpl<double>> make_cuda_plan<double>(core::PlanSetup);

}  // namespace fieldft::cuda
