// CUDA backend of the field-corrected DFT: device-resident problem data, the choice of kernel
// family (CUDA cores or tensor cores), work splitting, and the host-pointer entry points. All
// work is ordered on the stream the engine is given (the operator's context); device-pointer
// calls never synchronise the host, and their scratch memory grows stream-ordered.
#include <algorithm>
#include <cstdlib>
#include <string>
#include <type_traits>
#include <vector>

#include "cuda/cuda_check.cuh"
#include "cuda/device_buffer.cuh"
#include "cuda/device_utils.cuh"
#include "cuda/dft_engine.hpp"
#include "cuda/dft_launch.cuh"
#include "cuda/stream.hpp"

namespace fieldft::cuda {

namespace {

namespace cd = fieldft::cuda::dft;
using core::DftEngine;
using core::DftSetup;

// Scratch on the engine's device that grows stream-ordered: cudaMallocAsync / cudaFreeAsync on
// the engine's stream, so that growing it never waits for the host, and the old block returns to
// the pool only after the work already enqueued that uses it. Sized by the first calls, then
// reused: later calls allocate nothing.
template <class U>
class StreamScratch {
 public:
  StreamScratch() = default;
  ~StreamScratch() { release(); }
  StreamScratch(const StreamScratch&) = delete;
  StreamScratch& operator=(const StreamScratch&) = delete;

  void bind(int device, cudaStream_t stream) {
    device_ = device;
    stream_ = stream;
  }
  // At least n elements (n >= 1 is allocated even for n = 0).
  U* grow(std::int64_t n) {
    const std::size_t want = static_cast<std::size_t>(std::max<std::int64_t>(n, 1));
    if (size_ < want) {
      release();
      ptr_ = static_cast<U*>(malloc_async(want * sizeof(U), device_, stream_));
      size_ = want;
    }
    return ptr_;
  }
  U* get() const noexcept { return ptr_; }
  void release() noexcept {
    if (ptr_) free_async(ptr_, device_, stream_);
    ptr_ = nullptr;
    size_ = 0;
  }

 private:
  U* ptr_ = nullptr;
  std::size_t size_ = 0;
  int device_ = 0;
  cudaStream_t stream_ = nullptr;
};

constexpr std::int64_t kSamplePad = 4096;  // multiple of every kernel's samples per block
constexpr std::size_t kMaxPartialBytes = std::size_t(1) << 30;

template <class T>
class CudaDft final : public DftEngine<T> {
 public:
  using Complex = std::complex<T>;
  using C = cd::Cplx<T>;

  CudaDft(std::shared_ptr<const DftSetup> setup, int device, void* stream)
      : s_(std::move(setup)), device_(device), stream_(static_cast<cudaStream_t>(stream)) {
    DeviceGuard guard(device_);
    const DftSetup& s = *s_;
    FIELDFT_CUDA_CHECK(cudaDeviceGetAttribute(&sms_, cudaDevAttrMultiProcessorCount, device_));
    for (auto* b : {&in_, &out_, &part_}) b->bind(device_, stream_);
    frag_.bind(device_, stream_);
    bits_.bind(device_, stream_);
    scale_.bind(device_, stream_);
    inv_scale_.bind(device_, stream_);
    // The knobs (mri::DftTuning), resolved in the setup: pairs on the polynomial, and the
    // smallest image count for the tensor cores.
    poly_ = s.poly;
    tc_min_images_ = s.tc_min_images;

    const std::int64_t m = s.num_samples;
    const std::int64_t mpad = std::max<std::int64_t>(1, (m + kSamplePad - 1) / kSamplePad) * kSamplePad;
    std::vector<cd::Sample4<T>> st(static_cast<std::size_t>(mpad), cd::Sample4<T>{T(0), T(0), T(0), T(0)});
    std::vector<cd::SampleD> sd(static_cast<std::size_t>(mpad), cd::SampleD{0, 0, 0, 0});
    for (std::int64_t j = 0; j < m; ++j) {
      st[j] = cd::Sample4<T>{static_cast<T>(s.u[0][j]), static_cast<T>(s.u[1][j]),
                             static_cast<T>(s.u[2][j]), static_cast<T>(s.t[j])};
      sd[j] = cd::SampleD{s.u[0][j], s.u[1][j], s.u[2][j], s.t[j]};
    }
    st_ = upload(st, "DFT trajectory");
    sd_ = upload(sd, "DFT trajectory (double)");
    fref_ = upload(s.fref, "DFT tile frequencies");
    fp_ = upload(convert(s.fprime), "DFT field map");
    if (s.r2) {
      gx_ = upload(convert(s.g[0]), "DFT gradient map x");
      gy_ = upload(convert(s.g[1]), "DFT gradient map y");
      gz_ = upload(convert(s.g[2]), "DFT gradient map z");
    }
    if (s.grouped()) upload_groups(s, mpad);
    FIELDFT_CUDA_CHECK(cudaStreamSynchronize(stream_));

    p_.dim = s.dim;
    p_.n0 = s.n[0];
    p_.n1 = s.n[1];
    p_.n2 = s.n[2];
    p_.ntx = static_cast<int>(s.ntiles[0]);
    p_.nty = static_cast<int>(s.ntiles[1]);
    p_.ntz = static_cast<int>(s.ntiles[2]);
    p_.num_tiles = s.num_tiles;
    p_.num_voxels = s.num_voxels;
    p_.num_samples = m;
    p_.st = st_.get();
    p_.sd = sd_.get();
    p_.fref = fref_.get();
    p_.fp = fp_.get();
    p_.gx = gx_.get();
    p_.gy = gy_.get();
    p_.gz = gz_.get();
    groups_.src = src_.get();
    groups_.grp = grp_.get();
    groups_.goff = goff_.get();
  }

  // Frees everything on the engine's device (stream-ordered where the memory was), then restores
  // the caller's device. The stream belongs to the operator's context and outlives the engine.
  ~CudaDft() override {
    try {
      DeviceGuard guard(device_);
      release();
    } catch (...) {
      release();  // the device could not be made current: free what can be freed
    }
  }

  void forward(const Complex* image, Complex* samples, bool device_pointers) override {
    const DftSetup& s = *s_;
    apply(image, s.num_voxels * s.images, "image", samples, s.caller_samples() * s.images, "samples",
          device_pointers, [this](const C* in, C* out) { run_forward(in, out); });
  }

  void adjoint(const Complex* samples, Complex* image, bool device_pointers) override {
    const DftSetup& s = *s_;
    apply(samples, s.caller_samples() * s.images, "samples", image, s.num_voxels * s.images, "image",
          device_pointers, [this](const C* in, C* out) { run_adjoint(in, out); });
  }

 private:
  static std::vector<T> convert(const std::vector<double>& v) { return std::vector<T>(v.begin(), v.end()); }

  // A grouped setup (core::DftSetup::grouped): checked against what the tensor-core kernels
  // assume, then its caller indices (padded with −1 to mpad), groups and offsets uploaded.
  void upload_groups(const DftSetup& s, std::int64_t mpad) {
    const std::string who = "Dft (CUDA backend), grouped samples: ";
    require(use_tc(s.images) && !s.r2, ErrorCode::kInvalidArgument,
            who + "only the float tensor-core path without R2* runs them (cuda::dft_groups_supported)");
    const std::int64_t m = s.num_samples, groups = static_cast<std::int64_t>(s.group_offset.size()) /
                                                      std::max<std::int64_t>(s.num_voxels, 1);
    require(static_cast<std::int64_t>(s.source.size()) == m && static_cast<std::int64_t>(s.group.size()) == m &&
                static_cast<std::int64_t>(s.group_offset.size()) == groups * s.num_voxels,
            ErrorCode::kShapeMismatch, who + "source, group and group_offset sizes disagree with the setup");
    static_assert(core::kDftGroupAlign % 256 == 0 && core::kDftGroupAlign % 128 == 0);
    require(cd::tc_adjoint_stage() == 256 && cd::tc_forward_block_samples() == 128, ErrorCode::kInternal,
            who + "the kernels' block sizes changed; core::kDftGroupAlign must follow them");
    for (std::int64_t j = 0; j < m; ++j) {
      const std::int32_t g = s.group[static_cast<std::size_t>(j)];
      const std::int64_t src = s.source[static_cast<std::size_t>(j)];
      require(g >= 0 && g < groups && src >= -1 && src < s.user_samples, ErrorCode::kInvalidArgument, [&] {
        return std::string(who + "sample " + std::to_string(j) + " has group " + std::to_string(g) + " and source " +
                           std::to_string(src));
      });
      require(j % core::kDftGroupAlign == 0 || g == s.group[static_cast<std::size_t>(j - 1)],
              ErrorCode::kInvalidArgument, [&] {
                return std::string(who + "a group starts at sample " + std::to_string(j) + ", not a multiple of " +
                                   std::to_string(core::kDftGroupAlign));
              });
    }
    std::vector<char> seen(static_cast<std::size_t>(s.user_samples), 0);  // each caller sample once
    for (std::int64_t j = 0; j < m; ++j) {
      const std::int64_t i = s.source[static_cast<std::size_t>(j)];
      if (i < 0) continue;
      require(!seen[static_cast<std::size_t>(i)], ErrorCode::kInvalidArgument,
              [&] { return std::string(who + "the caller's sample " + std::to_string(i) + " appears twice"); });
      seen[static_cast<std::size_t>(i)] = 1;
    }
    require(std::find(seen.begin(), seen.end(), char(0)) == seen.end(), ErrorCode::kInvalidArgument,
            who + "not every caller sample has a place");
    std::vector<std::int64_t> src(static_cast<std::size_t>(mpad), -1);
    std::copy(s.source.begin(), s.source.end(), src.begin());
    std::vector<int> grp(static_cast<std::size_t>(mpad), 0);
    std::copy(s.group.begin(), s.group.end(), grp.begin());
    src_ = upload(src, "DFT sample sources");
    grp_ = upload(grp, "DFT sample groups");
    std::vector<float> off(s.group_offset.begin(), s.group_offset.end());
    goff_ = upload(off, "DFT group phase offsets");
  }

  template <class U>
  DeviceBuffer<U> upload(const std::vector<U>& v, const char* what) {
    DeviceBuffer<U> b(v.size(), what);
    if (!v.empty())
      FIELDFT_CUDA_CHECK(cudaMemcpyAsync(b.get(), v.data(), v.size() * sizeof(U), cudaMemcpyHostToDevice, stream_));
    return b;
  }

  void release() noexcept {
    for (auto* b : {&in_, &out_, &part_}) b->release();
    frag_.release();
    bits_.release();
    scale_.release();
    inv_scale_.release();
    st_.reset();
    sd_.reset();
    fref_.reset();
    src_.reset();
    grp_.reset();
    goff_.reset();
    for (auto* b : {&fp_, &gx_, &gy_, &gz_}) b->reset();
  }

  // One direction (run: run_forward or run_adjoint) from nin inputs to nout outputs. Device
  // pointers: enqueued on the stream, no host synchronisation. Host pointers: staged through the
  // engine's device scratch; the call returns when the result is on the host.
  template <class Run>
  void apply(const Complex* in, std::int64_t nin, const char* in_name, Complex* out, std::int64_t nout,
             const char* out_name, bool device_pointers, Run run) {
    DeviceGuard guard(device_);
    if (device_pointers) {
      if (nin > 0) require_device(in, in_name);
      if (nout > 0) require_device(out, out_name);
      run(reinterpret_cast<const C*>(in), reinterpret_cast<C*>(out));
      return;
    }
    C* din = in_.grow(nin);
    C* dout = out_.grow(nout);
    if (nin > 0) FIELDFT_CUDA_CHECK(cudaMemcpyAsync(din, in, nin * sizeof(C), cudaMemcpyHostToDevice, stream_));
    run(din, dout);
    if (nout > 0) FIELDFT_CUDA_CHECK(cudaMemcpyAsync(out, dout, nout * sizeof(C), cudaMemcpyDeviceToHost, stream_));
    FIELDFT_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

  static void require_device(const void* ptr, const char* what) {
    require(fieldft::cuda::is_device_pointer(ptr), ErrorCode::kInvalidArgument,
            std::string("Dft (CUDA backend): the ") + what +
                " pointer is not device memory; use forward/adjoint for host pointers");
  }

  // Splits of the inner sum across blocks so that the grid fills the GPU in whole waves.
  std::int64_t choose_splits(std::int64_t base_blocks, int occupancy, std::int64_t max_splits,
                             std::int64_t bytes_per_split) const {
    const std::int64_t capacity = static_cast<std::int64_t>(occupancy) * sms_;
    if (base_blocks <= 0 || max_splits <= 1 || base_blocks >= 4 * capacity) return 1;
    const std::int64_t by_memory =
        std::max<std::int64_t>(1, static_cast<std::int64_t>(kMaxPartialBytes) / std::max<std::int64_t>(bytes_per_split, 1));
    const std::int64_t limit = std::min({max_splits, by_memory, std::int64_t(256)});
    std::int64_t best = 1;
    double best_eff = 0;
    for (std::int64_t sp = 1; sp <= limit; ++sp) {
      const std::int64_t total = base_blocks * sp;
      const std::int64_t waves = (total + capacity - 1) / capacity;
      const double eff = static_cast<double>(total) / static_cast<double>(waves * capacity);
      if (total >= capacity && eff >= 0.9) return sp;
      if (eff > best_eff + 1e-9) {
        best_eff = eff;
        best = sp;
      }
    }
    return best;
  }

  // Splits the inner sum, `units` chunks of `unit` items (`total` items in all), into a.splits
  // parts of a.per_split items each: forward over tiles (unit 1), adjoint over sample stages.
  template <class Args>
  void set_splits(Args& a, std::int64_t base_blocks, int occupancy, std::int64_t units, std::int64_t unit,
                  std::int64_t total, std::int64_t bytes_per_split) const {
    a.splits = choose_splits(base_blocks, occupancy, units, bytes_per_split);
    a.per_split = (units + a.splits - 1) / a.splits * unit;
    a.splits = (total + a.per_split - 1) / a.per_split;
  }

  // launch(dst) writes len outputs per split at dst + split·len: straight into out with one
  // split, else into partial sums that are then reduced into out.
  template <class Args, class Launch>
  void launch_split(Args& a, std::int64_t len, C* out, Launch launch) {
    if (a.splits == 1) return launch(out);
    a.split_stride = len;
    C* part = part_.grow(a.splits * len);
    launch(part);
    cd::launch_reduce_splits<T>(part, len, a.splits, out, stream_);
  }

  bool use_tc(std::int64_t images) const {
    if constexpr (std::is_same_v<T, float>)
      return tc_min_images_ > 0 && images >= tc_min_images_;
    else
      return false;
  }

  void run_forward(const C* x, C* y) {
    const DftSetup& s = *s_;
    const std::int64_t m = s.num_samples, n = s.num_voxels, nimg = s.images;
    if (m == 0) return;
    if constexpr (std::is_same_v<T, float>) {
      if (use_tc(nimg)) return run_forward_tc(x, y);
    }
    for (std::int64_t c0 = 0; c0 < nimg;) {
      cd::DirectArgs a = direct_args(nimg - c0);
      const std::int64_t fbs = cd::direct_forward_block_samples<T>(p_, a);
      const std::int64_t base = (m + fbs - 1) / fbs;
      const int occ = cd::direct_occupancy<T>(true, p_, a);
      const std::int64_t bytes = a.ct * m * static_cast<std::int64_t>(sizeof(C));
      set_splits(a, base, occ, s.num_tiles, 1, s.num_tiles, bytes);
      launch_split(a, a.ct * m, y + c0 * m, [&](C* out) { cd::launch_forward_direct<T>(p_, a, x + c0 * n, out, m); });
      c0 += a.ct;
    }
  }

  void run_adjoint(const C* y, C* x) {
    const DftSetup& s = *s_;
    const std::int64_t m = s.num_samples, n = s.num_voxels, nimg = s.images;
    if (m == 0) {
      FIELDFT_CUDA_CHECK(cudaMemsetAsync(x, 0, n * nimg * sizeof(C), stream_));
      return;
    }
    if constexpr (std::is_same_v<T, float>) {
      if (use_tc(nimg)) return run_adjoint_tc(y, x);
    }
    const std::int64_t stage = cd::direct_adjoint_stage();
    const std::int64_t stages = (m + stage - 1) / stage;
    for (std::int64_t c0 = 0; c0 < nimg;) {
      cd::DirectArgs a = direct_args(nimg - c0);
      const std::int64_t tpb = cd::direct_adjoint_block_tiles();
      const std::int64_t base = (s.num_tiles + tpb - 1) / tpb;
      const int occ = cd::direct_occupancy<T>(false, p_, a);
      const std::int64_t bytes = a.ct * n * static_cast<std::int64_t>(sizeof(C));
      set_splits(a, base, occ, stages, stage, m, bytes);
      launch_split(a, a.ct * n, x + c0 * n, [&](C* out) { cd::launch_adjoint_direct<T>(p_, a, y + c0 * m, out, n); });
      c0 += a.ct;
    }
  }

  static int n_tiles_for(std::int64_t images) {
    return images <= 4 ? 1 : (images <= 8 ? 2 : (images <= 16 ? 4 : 8));
  }

  // CUDA-core launch arguments for the next pass, `left` images still to do.
  cd::DirectArgs direct_args(std::int64_t left) const {
    cd::DirectArgs a;
    a.ct = left >= 2 ? 2 : 1;
    a.poly = poly_;
    a.r2 = s_->r2;
    a.stream = stream_;
    return a;
  }

  // Tensor-core launch arguments for cg images whose input vectors (len values each, at v)
  // get their per-image scales computed here.
  cd::TcArgs tc_args(int cg, const C* v, std::int64_t len) {
    cd::TcArgs a;
    a.nt = n_tiles_for(cg);
    a.images = cg;
    a.groups = groups_;
    a.r2 = s_->r2;
    a.stream = stream_;
    scales(v, len, cg);
    a.inv_scale = inv_scale_.get();
    return a;
  }

  void run_forward_tc(const C* x, C* y) {
    if constexpr (std::is_same_v<T, float>) {
      const DftSetup& s = *s_;
      // m: the setup's samples (the kernels' grid); um: the caller's, the output's layout.
      const std::int64_t m = s.num_samples, um = s.caller_samples(), n = s.num_voxels, nimg = s.images;
      const int cmax = cd::tc_max_images();
      for (std::int64_t c0 = 0; c0 < nimg; c0 += cmax) {
        const int cg = static_cast<int>(std::min<std::int64_t>(cmax, nimg - c0));
        cd::TcArgs a = tc_args(cg, x + c0 * n, n);
        uint4* frag = frag_.grow(cd::forward_frag_count(p_, a.nt));
        cd::launch_forward_frags(p_, a.nt, x + c0 * n, cg, scale_.get(), frag, stream_);
        const std::int64_t fbs = cd::tc_forward_block_samples();
        const std::int64_t base = (m + fbs - 1) / fbs;
        const int occ = cd::tc_occupancy(true, p_, a);
        set_splits(a, base, occ, s.num_tiles, 1, s.num_tiles, cg * um * static_cast<std::int64_t>(sizeof(C)));
        launch_split(a, cg * um, y + c0 * um, [&](C* out) { cd::launch_forward_tc(p_, a, frag, out, um); });
      }
    }
  }

  void run_adjoint_tc(const C* y, C* x) {
    if constexpr (std::is_same_v<T, float>) {
      const DftSetup& s = *s_;
      const std::int64_t m = s.num_samples, um = s.caller_samples(), n = s.num_voxels, nimg = s.images;
      const int cmax = cd::tc_max_images();
      const std::int64_t stage = cd::tc_adjoint_stage();
      const std::int64_t stages = (m + stage - 1) / stage;
      for (std::int64_t c0 = 0; c0 < nimg; c0 += cmax) {
        const int cg = static_cast<int>(std::min<std::int64_t>(cmax, nimg - c0));
        cd::TcArgs a = tc_args(cg, y + c0 * um, um);
        uint4* frag = frag_.grow(cd::adjoint_frag_count(m, a.nt));
        cd::launch_adjoint_frags(y + c0 * um, m, um, groups_.src, a.nt, cg, scale_.get(), frag, stream_);
        const std::int64_t base = 2 * s.num_tiles;
        const int occ = cd::tc_occupancy(false, p_, a);
        set_splits(a, base, occ, stages, stage, m, cg * n * static_cast<std::int64_t>(sizeof(C)));
        launch_split(a, cg * n, x + c0 * n, [&](C* out) { cd::launch_adjoint_tc(p_, a, frag, out, n); });
      }
    }
  }

  // Per-image power-of-two scales of cg vectors of length len (tensor-core path).
  void scales(const C* v, std::int64_t len, int cg) {
    if constexpr (std::is_same_v<T, float>) {
      bits_.grow(cg);
      scale_.grow(cg);
      inv_scale_.grow(cg);
      cd::launch_scales(v, len, cg, bits_.get(), scale_.get(), inv_scale_.get(), stream_);
    }
  }

  std::shared_ptr<const DftSetup> s_;
  int device_ = 0;
  int sms_ = 1;
  cudaStream_t stream_ = nullptr;  // the operator's context's (borrowed)
  int poly_ = core::kDftDefaultPoly;
  int tc_min_images_ = core::kDftDefaultTcMinImages;
  DeviceBuffer<cd::Sample4<T>> st_;
  DeviceBuffer<cd::SampleD> sd_;
  DeviceBuffer<double> fref_;
  DeviceBuffer<T> fp_, gx_, gy_, gz_;
  DeviceBuffer<std::int64_t> src_;  // grouped setups only
  DeviceBuffer<int> grp_;
  DeviceBuffer<float> goff_;
  cd::Params<T> p_{};
  cd::Groups groups_{};  // null pointers without groups
  StreamScratch<C> in_, out_, part_;  // host-pointer staging; partial sums of split work
  StreamScratch<uint4> frag_;
  StreamScratch<unsigned> bits_;
  StreamScratch<float> scale_, inv_scale_;
};

}  // namespace

template <class T>
bool dft_groups_supported(std::int64_t images, int tc_min_images) {
  if constexpr (std::is_same_v<T, float>) {
    return tc_min_images > 0 && images >= tc_min_images;
  } else {
    (void)images, (void)tc_min_images;
    return false;
  }
}

template bool dft_groups_supported<float>(std::int64_t, int);
template bool dft_groups_supported<double>(std::int64_t, int);

template <class T>
std::unique_ptr<DftEngine<T>> make_dft_engine(std::shared_ptr<const DftSetup> setup, int device, void* stream) {
  return std::make_unique<CudaDft<T>>(std::move(setup), device, stream);
}

template std::unique_ptr<DftEngine<float>> make_dft_engine(std::shared_ptr<const DftSetup>, int, void*);
template std::unique_ptr<DftEngine<double>> make_dft_engine(std::shared_ptr<const DftSetup>, int, void*);

}  // namespace fieldft::cuda
