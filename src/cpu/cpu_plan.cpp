// CPU NUFFT: spread (or interpolate) with the slab-owned spreader, FFTW on the fine grid,
// deconvolve. Type 1: spread -> FFT -> deconvolve and copy the modes out. Type 2: deconvolve and
// copy the modes in -> FFT -> interpolate. The adjoint of each is the other with -isign.
// Type 3 (core/type3.hpp): prephase -> spread onto the type 3 grid -> inner type 2 plan (a
// CpuPlan of its own) -> postfactor; its adjoint runs the same chain backwards with the
// conjugate factors and the inner plan's adjoint. Where set_points chose the direct sums
// (PlanInfo::type3_direct), one OpenMP loop over the outputs sums the terms. Spread/interpolate-
// only plans (PlanInfo::spread_interp_only) run types 1 and 2 without the FFT.
#include "cpu/cpu_plan.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>

#include "core/nufft_planner.hpp"
#include "core/threads.hpp"
#include "core/type3.hpp"
#include "cpu/fftw.hpp"
#include "cpu/sorted_points.hpp"
#include "cpu/spread_interp.hpp"

namespace fieldft::cpu {

namespace {

using nufft::detail::PlanImpl;

// The kernel table (stride w) re-laid with stride `lanes`, zero-padded, each column written
// twice when `doubled` (see spread_interp_impl.hpp).
template <class T>
std::vector<T> padded_table(const std::vector<double>& h, int w, int degree, int lanes, bool doubled) {
  std::vector<T> out(static_cast<std::size_t>(degree + 1) * lanes, T(0));
  for (int p = 0; p <= degree; ++p)
    for (int k = 0; k < w; ++k) {
      const T v = static_cast<T>(h[static_cast<std::size_t>(p) * w + k]);
      if (doubled) {
        out[static_cast<std::size_t>(p) * lanes + 2 * k] = v;
        out[static_cast<std::size_t>(p) * lanes + 2 * k + 1] = v;
      } else {
        out[static_cast<std::size_t>(p) * lanes + k] = v;
      }
    }
  return out;
}

template <class T>
class CpuPlan final : public PlanImpl<T> {
 public:
  using Complex = std::complex<T>;

  explicit CpuPlan(core::PlanSetup setup) : PlanImpl<T>(std::move(setup)) {
    const auto& info = this->setup_.info;
    const auto& opt = this->setup_.options;
    require(opt.method == nufft::Method::kAuto || opt.method == nufft::Method::kNuptsDriven ||
                opt.method == nufft::Method::kPrecomputed,
            ErrorCode::kInvalidArgument,
            std::string("the CPU backend spreads with one method (nupts: slab-owned, bin-sorted; precomputed: the "
                        "same with the kernel weights computed at set_points); method '") +
                nufft::method_name(opt.method) + "' is for the CUDA backend");
    // Spread/interpolate-only plans keep the kernel of upsampfac 2 (nufft.hpp): no choice from the points.
    choose_upsampfac_ = opt.upsampfac == 0.0 && info.type != 3 && !info.spread_interp_only;
    configure();
  }

  void set_points(std::int64_t m, const T* x, const T* y, const T* z) override {
    core::check_points(this->setup_.info, m, x, y, z);
    if (choose_upsampfac_ && m > 0) {
      choose_upsampfac_ = false;
      choose_upsampfac(m);
    }
    // Method kPrecomputed (core::plan_cpu_precompute): decided, refused and allocated before the
    // plan's points change.
    auto& info = this->setup_.info;
    const std::int64_t nweights = precomputed_weight_values<T>(grid_, m);
    const core::PrecomputeChoice pc = core::plan_cpu_precompute(
        this->setup_.options, static_cast<double>(nweights) * sizeof(T), core::host_memory_bytes());
    if (pc.precompute) weights_.resize(static_cast<std::size_t>(nweights));
    else weights_ = BigVector<T>();
    this->has_points_ = false;
    const T* coords[3] = {x, y, z};
    sort_points<T>(grid_, info.bin_size, m, coords, sort_threads(m), pts_);
    if (pc.precompute && m > 0)
      dispatch_dim([&]<int D>() { precompute_weights<T, D>(grid_, pts_, horner_yz_.data(), sort_threads(m), weights_.data()); });
    info.method = pc.precompute ? nufft::Method::kPrecomputed : nufft::Method::kNuptsDriven;
    info.precomputed_bytes = pc.precompute ? nweights * static_cast<std::int64_t>(sizeof(T)) : 0;
    info.plan_reason = pc.reason;
    info.num_points = m;
    this->has_points_ = true;
  }

  void set_points_type3(std::int64_t m, const T* const* x, std::int64_t nk, const T* const* s) override {
    auto& info = this->setup_.info;
    core::Type3Setup t3 =
        core::make_type3_setup(info, this->setup_.kernel, m, x, nk, s, this->setup_.options.type3_direct);
    if (t3.direct) {
      // No grid: release the grid path's buffers (a grid chosen for earlier points may be large).
      this->has_points_ = false;
      inner_.reset();
      fine_ = FftwBuffer<T>();
      halo_ = std::vector<Complex>();
      ffts_.clear();
      pts_ = SortedPoints<T>();
      direct_source_ = std::move(t3.source);
      direct_target_ = std::move(t3.target);
      info.type3_direct = true;
      info.fine_grid = {1, 1, 1};
      info.num_points = m;
      info.num_targets = nk;
      this->has_points_ = true;
      return;
    }
    // Everything that can fail comes before the plan's own state changes.
    for (int d = 0; d < info.dim; ++d)
      require(t3.nf[d] < (std::int64_t(1) << 31) - 64, ErrorCode::kTooLarge,
              "type 3 grid of " + std::to_string(t3.nf[d]) + " points in dimension " + std::to_string(d + 1) +
                  " exceeds the CPU backend's per-dimension limit of 2^31");
    const std::int64_t nft = t3.nf[0] * t3.nf[1] * t3.nf[2];
    core::check_host_memory(static_cast<double>(nft) * info.max_batch * sizeof(Complex),
                            "the type 3 grid (" + std::to_string(info.max_batch) + " transform(s))");
    std::unique_ptr<CpuPlan> inner;
    if (!inner_ || inner_->grid_.nf != t3.nf)
      inner = std::make_unique<CpuPlan>(
          core::make_inner_setup(this->setup_, t3.nf, nufft::min_eps<T>(), std::numeric_limits<T>::epsilon() / 2));
    // The grid of earlier points is kept where it has the size (its pages are then in place).
    const auto fine_cells = static_cast<std::size_t>(nft * info.max_batch);
    FftwBuffer<T> fine;
    if (fine_.size() != fine_cells) fine = FftwBuffer<T>(fine_cells);

    this->has_points_ = false;  // until the new points are in place
    if (inner) inner_ = std::move(inner);
    if (fine.get()) fine_ = std::move(fine);
    grid_.nf = t3.nf;
    const double* xg[3] = {t3.x_grid[0].data(), t3.x_grid[1].data(), t3.x_grid[2].data()};
    sort_points<T, double>(grid_, info.bin_size, m, xg, sort_threads(m), pts_);
    const double* sg[3] = {t3.s_inner[0].data(), t3.s_inner[1].data(), t3.s_inner[2].data()};
    inner_->sort_points_from(nk, sg);
    // The prephase in sorted order, so that it streams with the gathered strengths.
    prephase_.resize(static_cast<std::size_t>(m));
    postfactor_.resize(static_cast<std::size_t>(nk));
    const std::int64_t* perm = pts_.perm.data();
#pragma omp parallel for num_threads(sort_threads(m)) schedule(static)
    for (std::int64_t p = 0; p < m; ++p) prephase_[p] = Complex(t3.prephase[perm[p]]);
#pragma omp parallel for num_threads(sort_threads(nk)) schedule(static)
    for (std::int64_t k = 0; k < nk; ++k) postfactor_[k] = Complex(t3.postfactor[k]);
    for (auto& v : direct_source_) v = {};
    for (auto& v : direct_target_) v = {};
    info.type3_direct = false;
    info.fine_grid = t3.nf;
    info.num_points = m;
    info.num_targets = nk;
    this->has_points_ = true;
  }

  void execute(const Complex* in, Complex* out, bool adjoint) override {
    const auto& info = this->setup_.info;
    if (info.type == 3) return execute_type3(in, out, adjoint);
    const int type = adjoint ? 3 - info.type : info.type;
    const std::int64_t m = pts_.m, n = info.num_modes();
    const std::int64_t in_len = type == 1 ? m : n, out_len = type == 1 ? n : m;
    require(in != nullptr || in_len == 0, ErrorCode::kInvalidArgument, "execute: input pointer is null");
    require(out != nullptr || out_len == 0, ErrorCode::kInvalidArgument, "execute: output pointer is null");
    run(type, adjoint ? -info.isign : info.isign, in, out, info.ntransf);
  }

 private:
  // The backend's choices for the setup's kernel and grid (threads, batch, bins) and the buffers
  // and tables they need; run again when choose_upsampfac changes the setup.
  void configure() {
    auto& info = this->setup_.info;
    const auto& opt = this->setup_.options;
    info.backend = Backend::kCpu;
    info.method = nufft::Method::kNuptsDriven;
    nthreads_ = info.nthreads;  // validated and capped by core (cpu_threads_for)
    info.max_batch = static_cast<int>(
        opt.max_batch > 0 ? std::min<std::int64_t>(opt.max_batch, info.ntransf)
                          : std::min<std::int64_t>(info.ntransf, nthreads_));

    grid_.dim = info.dim;
    grid_.nf = info.fine_grid;
    grid_.width = info.kernel_width;
    grid_.degree = info.horner_degree;
    for (int d = 0; d < info.dim; ++d)
      require(info.fine_grid[d] < (std::int64_t(1) << 31) - 64, ErrorCode::kTooLarge,
              "fine grid of " + std::to_string(info.fine_grid[d]) + " cells in dimension " + std::to_string(d + 1) +
                  " exceeds the CPU backend's per-dimension limit of 2^31 cells");
    // Bins: x rows of a few cache lines; y bins in 3D; the slab thickness of the slowest
    // dimension is at least 2w so that few points straddle two slabs.
    const int w = info.kernel_width, slow = info.dim - 1;
    std::array<int, 3> bins{info.dim == 3 ? 16 : 32, 4, 1};
    // 3D: slabs one kernel width thick, so that two threads get enough slabs to balance
    // (measured 393 -> 270 ms for 3D type 1 at w = 7 going from 16 to 7 planes).
    const int slab_default = info.dim == 1 ? std::max(256, 2 * w) : (info.dim == 2 ? std::max(16, 2 * w) : w);
    bins[slow] = slab_default;
    for (int d = 0; d < info.dim; ++d)
      if (opt.bin_size[d] > 0) bins[d] = opt.bin_size[d];
    bins[slow] = std::max(bins[slow], w);  // the spreader relies on slabs at least w thick
    info.bin_size = bins;

    const double grid_bytes = static_cast<double>(this->setup_.fine_grid_size()) * info.max_batch * sizeof(Complex);
    core::check_host_memory(grid_bytes, "the fine grid (" + std::to_string(info.max_batch) + " transform(s))");
    fine_ = FftwBuffer<T>(static_cast<std::size_t>(this->setup_.fine_grid_size() * info.max_batch));
    for (int d = 0; d < 3; ++d) deconv_[d].assign(this->setup_.deconv[d].begin(), this->setup_.deconv[d].end());
    const auto& kd = this->setup_.kernel;
    horner_x_ = padded_table<T>(kd.horner, kd.width, kd.degree, x_lanes<T>(kd.width), /*doubled=*/true);
    horner_yz_ = padded_table<T>(kd.horner, kd.width, kd.degree, yz_lanes<T>(kd.width), /*doubled=*/false);
  }

  // Upsampfac 0 (types 1 and 2): the factor is chosen once, at the first set_points with points,
  // from their density (core::auto_upsampfac, as the CUDA backend does): the wide factor where
  // its kernel is one cell narrower and there are at least kWideDensity points per cell of the
  // σ = 2 grid, since spreading and interpolation cost ∝ w^dim per point while the FFT and the
  // grid passes grow only by (2.25/2)^dim. The plan is set up again when the factor is not 2;
  // where the other setup cannot be made, it stays at 2.
  void choose_upsampfac(std::int64_t m) {
    const auto& info = this->setup_.info;
    const double density = static_cast<double>(m) / static_cast<double>(grid_.size());
    const double sigma = core::auto_upsampfac(info.eps, density, kWideDensity[info.dim - 1]);
    if (sigma == info.upsampfac) return;
    std::optional<core::PlanSetup> chosen =
        core::setup_at_upsampfac(this->setup_, sigma, nufft::min_eps<T>(), std::numeric_limits<T>::epsilon() / 2);
    if (!chosen) return;
    fine_ = FftwBuffer<T>();  // the σ = 2 grid goes before the other is allocated
    ffts_.clear();
    this->setup_ = std::move(*chosen);
    configure();
  }

  // Types 1 and 2 on ntransf transforms (type and sign as applied, not as planned).
  void run(int type, int sign, const Complex* in, Complex* out, std::int64_t ntransf) {
    const auto& info = this->setup_.info;
    const std::int64_t m = pts_.m, n = info.num_modes(), nft = grid_.size();
    if (m == 0) {  // no points: type 1 sums are empty, type 2 has nothing to write
      if (type == 1) std::fill(out, out + n * ntransf, Complex(0));
      return;
    }
    SpreadArgs<T> args = spread_args(type == 1);
    const bool with_fft = !info.spread_interp_only;
    // Strengths travel in sorted order: the random accesses through the permutation happen in
    // one streaming gather/scatter loop instead of in the middle of the kernel work (measured
    // 1.06-2x faster execute, bench/cpu_finufft).
    sorted_.resize(static_cast<std::size_t>(info.max_batch * m));
    const std::int64_t* perm = pts_.perm.data();
    for (std::int64_t b0 = 0; b0 < ntransf; b0 += info.max_batch) {
      const std::int64_t nb = std::min<std::int64_t>(info.max_batch, ntransf - b0);
      args.nbatch = nb;
      const int nt = core::threads_for_work(nb * (spread_ns() + (with_fft ? fft_ns() : 0.0)), nthreads_);
      args.nthreads = nt;
      // Spread/interpolate-only plans have no FFT: their mode copies with unit factors only
      // place the grid's cells in the mode order (core::spread_interp_setup).
      const FftwPlan<T>* fft = info.spread_interp_only ? nullptr : &fft_plan(sign, nb);
      if (type == 1) {
        const Complex* c = in + b0 * m;
#pragma omp parallel for collapse(2) num_threads(nt) schedule(static)
        for (std::int64_t t = 0; t < nb; ++t)
          for (std::int64_t j = 0; j < m; ++j) sorted_[t * m + j] = c[t * m + perm[j]];
        dispatch_dim([&]<int D>() { spread<T, D>(args, sorted_.data(), fine_.get()); });
        if (fft) fft->execute();
        copy_modes(nb, out + b0 * n, /*to_modes=*/true, nt);
      } else {
        std::fill(fine_.get(), fine_.get() + nb * nft, Complex(0));
        copy_modes(nb, const_cast<Complex*>(in + b0 * n), /*to_modes=*/false, nt);
        if (fft) fft->execute();
        dispatch_dim([&]<int D>() { interp<T, D>(args, fine_.get(), sorted_.data()); });
        Complex* c = out + b0 * m;
#pragma omp parallel for collapse(2) num_threads(nt) schedule(static)
        for (std::int64_t t = 0; t < nb; ++t)
          for (std::int64_t j = 0; j < m; ++j) c[t * m + perm[j]] = sorted_[t * m + j];
      }
    }
  }

  // Type 3, one batch at a time. Forward: c -> c·prephase -> spread -> inner type 2 ->
  // ·postfactor = f. Adjoint: f -> f·conj(postfactor) -> inner adjoint (type 1) -> interpolate ->
  // ·conj(prephase) = c.
  void execute_type3(const Complex* in, Complex* out, bool adjoint) {
    const auto& info = this->setup_.info;
    const std::int64_t m = info.num_points, nk = info.num_targets;
    const std::int64_t in_per = adjoint ? nk : m, out_per = adjoint ? m : nk;
    require(in != nullptr || in_per == 0, ErrorCode::kInvalidArgument, "execute: input pointer is null");
    require(out != nullptr || out_per == 0, ErrorCode::kInvalidArgument, "execute: output pointer is null");
    if (out_per == 0) return;
    if (in_per == 0) {  // empty sums
      std::fill(out, out + out_per * info.ntransf, Complex(0));
      return;
    }
    if (info.type3_direct) return execute_direct(in, out, adjoint);
    SpreadArgs<T> args = spread_args(!adjoint);
    sorted_.resize(static_cast<std::size_t>(info.max_batch * m));
    const std::int64_t* perm = pts_.perm.data();
    const Complex* pre = prephase_.data();
    const Complex* post = postfactor_.data();
    for (std::int64_t b0 = 0; b0 < info.ntransf; b0 += info.max_batch) {
      const std::int64_t nb = std::min<std::int64_t>(info.max_batch, info.ntransf - b0);
      args.nbatch = nb;
      const int nt = core::threads_for_work(nb * spread_ns(), nthreads_);
      args.nthreads = nt;
      if (!adjoint) {
        const Complex* c = in + b0 * m;
#pragma omp parallel for collapse(2) num_threads(nt) schedule(static)
        for (std::int64_t t = 0; t < nb; ++t)
          for (std::int64_t p = 0; p < m; ++p) sorted_[t * m + p] = c[t * m + perm[p]] * pre[p];
        dispatch_dim([&]<int D>() { spread<T, D>(args, sorted_.data(), fine_.get()); });
        Complex* f = out + b0 * nk;
        inner_->run(2, info.isign, fine_.get(), f, nb);
#pragma omp parallel for collapse(2) num_threads(nt) schedule(static)
        for (std::int64_t t = 0; t < nb; ++t)
          for (std::int64_t k = 0; k < nk; ++k) f[t * nk + k] *= post[k];
      } else {
        const Complex* f = in + b0 * nk;
        scaled_.resize(static_cast<std::size_t>(info.max_batch * nk));
#pragma omp parallel for collapse(2) num_threads(nt) schedule(static)
        for (std::int64_t t = 0; t < nb; ++t)
          for (std::int64_t k = 0; k < nk; ++k) scaled_[t * nk + k] = f[t * nk + k] * std::conj(post[k]);
        inner_->run(1, -info.isign, scaled_.data(), fine_.get(), nb);
        dispatch_dim([&]<int D>() { interp<T, D>(args, fine_.get(), sorted_.data()); });
        Complex* c = out + b0 * m;
#pragma omp parallel for collapse(2) num_threads(nt) schedule(static)
        for (std::int64_t t = 0; t < nb; ++t)
          for (std::int64_t p = 0; p < m; ++p) c[t * m + perm[p]] = sorted_[t * m + p] * std::conj(pre[p]);
      }
    }
  }

  // Type 3 direct sums, in double: forward f_k = Σ_j c_j e^{iσ s_k·x_j}, adjoint c_j = Σ_k f_k
  // e^{−iσ s_k·x_j}. One output per iteration; the inputs in tiles whose exponentials, computed
  // once, serve every transform.
  void execute_direct(const Complex* in, Complex* out, bool adjoint) {
    constexpr std::int64_t kTile = 256;
    const auto& info = this->setup_.info;
    const int dim = info.dim;
    const std::int64_t ntransf = info.ntransf;
    const auto& out_coords = adjoint ? direct_source_ : direct_target_;
    const auto& in_coords = adjoint ? direct_target_ : direct_source_;
    const std::int64_t n_out = adjoint ? info.num_points : info.num_targets;
    const std::int64_t n_in = adjoint ? info.num_targets : info.num_points;
    const double sign = adjoint ? -info.isign : info.isign;
    // About 20 ns per term (a sincos and the sums of every transform).
    const int nt = core::threads_for_work(20.0 * static_cast<double>(n_out) * static_cast<double>(n_in), nthreads_);
#pragma omp parallel num_threads(nt)
    {
      std::vector<double> acc(static_cast<std::size_t>(2 * ntransf));
      double er[kTile], ei[kTile];
#pragma omp for schedule(static)
      for (std::int64_t o = 0; o < n_out; ++o) {
        std::fill(acc.begin(), acc.end(), 0.0);
        double so[3] = {0, 0, 0};
        for (int d = 0; d < dim; ++d) so[d] = out_coords[d][o];
        for (std::int64_t i0 = 0; i0 < n_in; i0 += kTile) {
          const std::int64_t len = std::min(kTile, n_in - i0);
          for (std::int64_t i = 0; i < len; ++i) {
            double xi[3] = {0, 0, 0};
            for (int d = 0; d < dim; ++d) xi[d] = in_coords[d][i0 + i];
            ::sincos(core::type3_direct_phase(dim, sign, so, xi), &ei[i], &er[i]);
          }
          for (std::int64_t t = 0; t < ntransf; ++t) {
            const Complex* a = in + t * n_in + i0;
            double re = 0, im = 0;
            for (std::int64_t i = 0; i < len; ++i) {
              const double ar = static_cast<double>(a[i].real()), ai = static_cast<double>(a[i].imag());
              re += ar * er[i] - ai * ei[i];
              im += ar * ei[i] + ai * er[i];
            }
            acc[2 * t] += re;
            acc[2 * t + 1] += im;
          }
        }
        for (std::int64_t t = 0; t < ntransf; ++t)
          out[t * n_out + o] = Complex(static_cast<T>(acc[2 * t]), static_cast<T>(acc[2 * t + 1]));
      }
    }
  }

  // Arguments of spread and interp for batches of up to max_batch transforms; with `spreading`,
  // the spreader's workspace is allocated on first use (interpolating plans never need it).
  SpreadArgs<T> spread_args(bool spreading) {
    const std::int64_t cells = spreading ? spread_halo_cells(grid_, pts_, this->setup_.info.max_batch) : 0;
    if (static_cast<std::int64_t>(halo_.size()) < cells) {
      core::check_host_memory(static_cast<double>(cells) * sizeof(Complex), "the spreader's slab halos");
      halo_.resize(static_cast<std::size_t>(cells));
    }
    return {&grid_, &pts_, horner_x_.data(), horner_yz_.data(), 0, pts_.m, nthreads_, halo_.data(),
            weights_.empty() ? nullptr : weights_.data()};
  }

  // Sorts points given with coordinates of type C (the inner plan of type 3 takes double).
  template <class C>
  void sort_points_from(std::int64_t m, const C* const* coords) {
    sort_points<T, C>(grid_, this->setup_.info.bin_size, m, coords, sort_threads(m), pts_);
    this->setup_.info.num_points = m;
    this->has_points_ = true;
  }

  // Estimated single-thread times (ns) for the thread rule of core/threads.hpp. Deliberately low
  // (about 1 ns per footprint cell of one point, per n·log2 n of the FFT, 5 ns per coordinate
  // sorted; measured 1-2.5, 1-2.5 and 5-8 ns on the machine of docs/benchmarks.md, the last at
  // M = 1e5 and 2e6 in 3D, 2026-11-27), so that a
  // stage that could use more threads never loses them to the estimate by more than ~2x.
  double spread_ns() const {
    double cells = 1;
    for (int d = 0; d < grid_.dim; ++d) cells *= grid_.width;
    return static_cast<double>(pts_.m) * (cells + 4.0);  // + the gather/scatter of the strengths
  }
  double fft_ns() const {
    const double n = static_cast<double>(grid_.size());
    return n * std::log2(std::max(n, 2.0)) + 2.0 * n;  // + the mode copy and the zeroing
  }
  int sort_threads(std::int64_t m) const {
    return core::threads_for_work(5.0 * static_cast<double>(m) * grid_.dim, nthreads_);
  }

  template <class F>
  void dispatch_dim(F&& f) const {
    switch (grid_.dim) {
      case 1: f.template operator()<1>(); break;
      case 2: f.template operator()<2>(); break;
      default: f.template operator()<3>(); break;
    }
  }

  // The FFT of `nb` fine grids with exponent sign `sign`, planned on first use.
  const FftwPlan<T>& fft_plan(int sign, std::int64_t nb) {
    auto& slot = ffts_[{sign, nb}];
    if (!slot) {
      const bool measure = this->setup_.options.fft_planning == nufft::FftPlanning::kMeasure;
      slot = std::make_unique<FftwPlan<T>>(grid_.dim, grid_.nf.data(), nb, fine_.get(),
                                           sign > 0 ? FFTW_BACKWARD : FFTW_FORWARD, measure,
                                           core::threads_for_work(nb * fft_ns(), nthreads_));
    }
    return *slot;
  }

  // Moves the modes between the fine grid and a mode array with the deconvolution factors.
  // to_modes: f = fine · deconv (type 1); otherwise fine = f · deconv (type 2).
  void copy_modes(std::int64_t nb, Complex* f, bool to_modes, int nt) {
    const auto& info = this->setup_.info;
    const auto& fi = this->setup_.fine_index;
    const std::int64_t n1 = info.modes[0], n2 = info.modes[1], n3 = info.modes[2];
    const std::int64_t nf1 = grid_.nf[0], nf2 = grid_.nf[1], nft = grid_.size(), n = info.num_modes();
    Complex* fine = fine_.get();
#pragma omp parallel for collapse(3) num_threads(nt) schedule(static)
    for (std::int64_t t = 0; t < nb; ++t)
      for (std::int64_t p3 = 0; p3 < n3; ++p3)
        for (std::int64_t p2 = 0; p2 < n2; ++p2) {
          const T d23 = deconv_[1][p2] * deconv_[2][p3];
          Complex* frow = f + t * n + (p3 * n2 + p2) * n1;
          Complex* grow = fine + t * nft + (fi[2][p3] * nf2 + fi[1][p2]) * nf1;
          if (to_modes) {
            for (std::int64_t p1 = 0; p1 < n1; ++p1) frow[p1] = grow[fi[0][p1]] * (deconv_[0][p1] * d23);
          } else {
            for (std::int64_t p1 = 0; p1 < n1; ++p1) grow[fi[0][p1]] = frow[p1] * (deconv_[0][p1] * d23);
          }
        }
  }

  // Points per cell of the σ = 2 grid from which the wide upsampling factor is taken (1D, 2D, 3D).
  // Measured on the 2-core machine of docs/benchmarks.md (issue 29): at 0.95 (3D, 64³ modes, 2e6
  // points) and 1.9 (2D, 512²) the wide factor was faster in every case; 1D is not measured
  // and keeps the 2D value.
  static constexpr double kWideDensity[3] = {1.0, 1.0, 0.3};

  bool choose_upsampfac_ = false;  // upsampfac 0, not yet chosen (choose_upsampfac)
  int nthreads_ = 1;
  Grid grid_;
  SortedPoints<T> pts_;
  FftwBuffer<T> fine_;
  std::array<std::vector<T>, 3> deconv_;
  std::vector<T> horner_x_, horner_yz_;
  std::vector<Complex> sorted_;  // strengths or results of one batch in sorted point order
  std::vector<Complex> halo_;    // spread's workspace (SpreadArgs::halo)
  BigVector<T> weights_;         // Method::kPrecomputed: the points' kernel weights (SpreadArgs::weights)
  // Type 3: the inner type 2 plan on the grid, the factors of core/type3.hpp in T (prephase in
  // sorted point order), and the scaled targets of one batch (adjoint).
  std::unique_ptr<CpuPlan> inner_;
  std::vector<Complex> prephase_, postfactor_, scaled_;
  // Type 3 direct sums: sources and targets in double.
  std::array<std::vector<double>, 3> direct_source_, direct_target_;
  std::map<std::pair<int, std::int64_t>, std::unique_ptr<FftwPlan<T>>> ffts_;
};

}  // namespace

template <class T>
std::unique_ptr<nufft::detail::PlanImpl<T>> make_cpu_plan(core::PlanSetup setup) {
  return std::make_unique<CpuPlan<T>>(std::move(setup));
}

template std::unique_ptr<nufft::detail::PlanImpl<float>> make_cpu_plan<float>(core::PlanSetup);
template std::unique_ptr<nufft::detail::PlanImpl<double>> make_cpu_plan<double>(core::PlanSetup);

}  // namespace fieldft::cpu
