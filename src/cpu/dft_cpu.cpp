// CPU backend of the field-corrected DFT: arrays in the layout of the loops
// (src/cpu/dft_cpu_kernels.cpp) and the OpenMP work distribution. Forward: threads own blocks of
// kLanes samples; adjoint: threads own voxel tiles. Each output is written by one thread, so
// results do not depend on the thread count.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "cpu/dft_cpu.hpp"
#include "cpu/dft_cpu_kernels.hpp"
#include "fieldft/error.hpp"

namespace fieldft::cpu {

namespace {

using core::DftEngine;
using core::DftSetup;
using namespace dft;

template <class T>
class CpuDft final : public DftEngine<T> {
 public:
  using Complex = std::complex<T>;

  CpuDft(std::shared_ptr<const DftSetup> setup, int nthreads)
      : s_(std::move(setup)), nthreads_(nthreads > 0 ? nthreads : 1) {
    const DftSetup& s = *s_;
    const std::int64_t m = s.num_samples;
    const std::int64_t mpad = (m + kLanes - 1) / kLanes * kLanes;
    for (int d = 0; d < 3; ++d) {
      u_[d].assign(static_cast<std::size_t>(mpad), T(0));
      ud_[d].assign(static_cast<std::size_t>(mpad), 0.0);
      for (std::int64_t j = 0; j < m; ++j) {
        ud_[d][j] = s.u[d][j];
        u_[d][j] = static_cast<T>(s.u[d][j]);
      }
    }
    t_.assign(static_cast<std::size_t>(mpad), T(0));
    td_.assign(static_cast<std::size_t>(mpad), 0.0);
    for (std::int64_t j = 0; j < m; ++j) {
      td_[j] = s.t[j];
      t_[j] = static_cast<T>(s.t[j]);
    }

    const std::int64_t nt = s.num_tiles;
    for (auto* a : {&csx_, &csy_, &csz_}) a->resize(static_cast<std::size_t>(nt));
    const std::size_t slots = static_cast<std::size_t>(nt * kTileVoxels);
    vidx_.assign(slots, -1);
    for (auto* a : {&dx_, &dy_, &dz_, &fp_}) a->assign(slots, T(0));
    if (s.r2)
      for (auto* a : {&gx_, &gy_, &gz_}) a->assign(slots, T(0));
    const int tx = s.tile.x, ty = s.tile.y, tz = s.tile.z;
    static_assert(kTileVoxels == 256, "tiles of dft_math.hpp hold 256 voxels");
    for (std::int64_t b = 0; b < nt; ++b) {
      const auto cs = s.tile_centre_offset(b);
      csx_[b] = cs[0];
      csy_[b] = cs[1];
      csz_[b] = cs[2];
      const auto o = s.tile_origin(b);
      for (int z = 0; z < tz; ++z)
        for (int y = 0; y < ty; ++y)
          for (int x = 0; x < tx; ++x) {
            const std::size_t slot =
                static_cast<std::size_t>(b * kTileVoxels + x + tx * (y + ty * z));
            // Offsets from the tile centre (integers, exact in T), also for slots past the edge.
            dx_[slot] = static_cast<T>(x - tx / 2);
            dy_[slot] = static_cast<T>(y - ty / 2);
            dz_[slot] = static_cast<T>(z - tz / 2);
            const std::int64_t gxi = o[0] + x, gyi = o[1] + y, gzi = o[2] + z;
            if (gxi >= s.n[0] || gyi >= s.n[1] || gzi >= s.n[2]) continue;
            const std::int64_t v = gxi + s.n[0] * (gyi + s.n[1] * gzi);
            vidx_[slot] = v;
            fp_[slot] = static_cast<T>(s.fprime[v]);
            if (s.r2) {
              gx_[slot] = static_cast<T>(s.g[0][v]);
              gy_[slot] = static_cast<T>(s.g[1][v]);
              gz_[slot] = static_cast<T>(s.g[2][v]);
            }
          }
    }
    view_.dim = s.dim;
    view_.r2 = s.r2;
    view_.num_voxels = s.num_voxels;
    view_.num_samples = m;
    view_.num_tiles = nt;
    view_.images = s.images;
    view_.ux = u_[0].data();
    view_.uy = u_[1].data();
    view_.uz = u_[2].data();
    view_.t = t_.data();
    view_.uxd = ud_[0].data();
    view_.uyd = ud_[1].data();
    view_.uzd = ud_[2].data();
    view_.td = td_.data();
    view_.csx = csx_.data();
    view_.csy = csy_.data();
    view_.csz = csz_.data();
    view_.fref = s.fref.data();
    view_.vidx = vidx_.data();
    view_.dx = dx_.data();
    view_.dy = dy_.data();
    view_.dz = dz_.data();
    view_.fp = fp_.data();
    view_.gx = s.r2 ? gx_.data() : nullptr;
    view_.gy = s.r2 ? gy_.data() : nullptr;
    view_.gz = s.r2 ? gz_.data() : nullptr;
  }

  void forward(const Complex* image, Complex* samples, bool device_pointers) override {
    require(!device_pointers, ErrorCode::kInvalidArgument,
            "Dft (CPU backend): device pointers given to a CPU operator");
    const DftSetup& s = *s_;
    const std::int64_t m = s.num_samples, c = s.images;
    if (m == 0) return;
    const T* amp = nullptr;
    const T* arg = nullptr;
    if (c == 1) {
      to_polar(image, s.num_voxels);
      amp = amp_.data();
      arg = arg_.data();
    }
    const std::int64_t blocks = (m + kLanes - 1) / kLanes;
#pragma omp parallel num_threads(nthreads_)
    {
      std::vector<T> work(static_cast<std::size_t>((2 * c + 3) * kLanes));
      std::vector<double> dwork(static_cast<std::size_t>(2 * c * kLanes));
#pragma omp for schedule(dynamic, 1)
      for (std::int64_t blk = 0; blk < blocks; ++blk)
        dft_cpu_forward_lanes(view_, amp, arg, image, samples, blk * kLanes, work.data(),
                              dwork.data());
    }
  }

  void adjoint(const Complex* samples, Complex* image, bool device_pointers) override {
    require(!device_pointers, ErrorCode::kInvalidArgument,
            "Dft (CPU backend): device pointers given to a CPU operator");
    const DftSetup& s = *s_;
    const std::int64_t c = s.images;
    const T* amp = nullptr;
    const T* arg = nullptr;
    if (c == 1) {
      to_polar(samples, s.num_samples);
      amp = amp_.data();
      arg = arg_.data();
    }
#pragma omp parallel num_threads(nthreads_)
    {
      std::vector<T> work(static_cast<std::size_t>((2 * c + 2) * kTileVoxels));
      std::vector<double> dwork(static_cast<std::size_t>(2 * c * kTileVoxels));
#pragma omp for schedule(dynamic, 1)
      for (std::int64_t b = 0; b < s.num_tiles; ++b)
        dft_cpu_adjoint_tile(view_, amp, arg, samples, image, b, work.data(), dwork.data());
    }
  }

 private:
  // |z| and arg z / 2π (cycles) of one vector, for the single-image loops.
  void to_polar(const Complex* z, std::int64_t n) {
    amp_.resize(static_cast<std::size_t>(n));
    arg_.resize(static_cast<std::size_t>(n));
    constexpr double kInvTwoPi = 1.0 / fieldft::detail::dft::kTwoPi;
#pragma omp parallel for num_threads(nthreads_) schedule(static) if (n > (1 << 14))
    for (std::int64_t i = 0; i < n; ++i) {
      const T re = z[i].real(), im = z[i].imag();
      amp_[i] = std::hypot(re, im);
      arg_[i] = static_cast<T>(std::atan2(re == T(0) && im == T(0) ? T(0) : im, re) * kInvTwoPi);
    }
  }

  std::shared_ptr<const DftSetup> s_;
  int nthreads_;
  std::vector<T> u_[3], t_;
  std::vector<double> ud_[3], td_;
  std::vector<double> csx_, csy_, csz_;
  std::vector<std::int64_t> vidx_;
  std::vector<T> dx_, dy_, dz_, fp_, gx_, gy_, gz_;
  std::vector<T> amp_, arg_;
  CpuView<T> view_{};
};

}  // namespace

template <class T>
std::unique_ptr<DftEngine<T>> make_dft_engine(std::shared_ptr<const DftSetup> setup, int nthreads) {
  require(!setup->grouped(), ErrorCode::kInvalidArgument,
          "Dft (CPU backend): grouped samples run on the CUDA tensor-core path only");
  return std::make_unique<CpuDft<T>>(std::move(setup), nthreads);
}

template std::unique_ptr<DftEngine<float>> make_dft_engine(std::shared_ptr<const DftSetup>, int);
template std::unique_ptr<DftEngine<double>> make_dft_engine(std::shared_ptr<const DftSetup>, int);

}  // namespace fieldft::cpu
