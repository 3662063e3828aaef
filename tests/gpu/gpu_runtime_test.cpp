// The CUDA backend as a citizen of a GPU program: plans on separate streams, failure without
// leaks when a problem does not fit, no leak over many plan lifetimes, and agreement with the
// CPU backend on the same points.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <complex>
#include <cstdlib>
#include <vector>

#include "support/backends.hpp"
#include "fieldft/fieldft.hpp"
#include "support/random_data.hpp"

using namespace fieldft;
using fieldft::test::random_complex;
using fieldft::test::random_points;

namespace {

#define SKIP_WITHOUT_GPU()                                                          \
  do {                                                                              \
    const std::string why = fieldft::test::backend_unavailable_reason(Backend::kCuda); \
    if (!why.empty()) GTEST_SKIP() << why;                                          \
  } while (0)

void ok(cudaError_t e) { ASSERT_EQ(e, cudaSuccess) << cudaGetErrorString(e); }

std::size_t free_device_memory() {
  std::size_t f = 0, t = 0;
  cudaDeviceSynchronize();
  cudaMemGetInfo(&f, &t);
  return f;
}

template <class T>
struct DeviceArray {
  T* p = nullptr;
  std::size_t n = 0;
  explicit DeviceArray(const std::vector<T>& h) : n(h.size()) {
    cudaMalloc(&p, n * sizeof(T));
    cudaMemcpy(p, h.data(), n * sizeof(T), cudaMemcpyHostToDevice);
  }
  explicit DeviceArray(std::size_t m) : n(m) { cudaMalloc(&p, n * sizeof(T)); }
  ~DeviceArray() { cudaFree(p); }
  std::vector<T> host() const {
    std::vector<T> h(n);
    cudaMemcpy(h.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost);
    return h;
  }
};

template <class T>
double rel_diff(const std::vector<std::complex<T>>& a, const std::vector<std::complex<T>>& b) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    num += std::norm(std::complex<double>(a[i]) - std::complex<double>(b[i]));
    den += std::norm(std::complex<double>(b[i]));
  }
  return std::sqrt(num / den);
}

nufft::Options cuda_options(nufft::Method m = nufft::Method::kAuto, void* stream = nullptr) {
  nufft::Options o;
  o.backend = Backend::kCuda;
  o.method = m;
  o.stream = stream;
  return o;
}

}  // namespace

// Two plans queued on two streams at once give what they give one after the other on the
// default stream. Spreading adds with atomics, whose order varies between runs, so results agree
// to rounding (1e-5 float, 1e-12 double), not bit for bit.
TEST(GpuRuntime, TwoPlansOnTwoStreamsMatchSequentialRuns) {
  SKIP_WITHOUT_GPU();
  cudaStream_t s1, s2;
  ok(cudaStreamCreate(&s1));
  ok(cudaStreamCreate(&s2));
  const std::vector<std::int64_t> modes_a{96, 80}, modes_b{24, 20, 16};
  const auto pa = random_points<float>(2, 40000, 1);
  const auto pb = random_points<double>(3, 30000, 2);
  const auto ca = random_complex<float>(pa.size(), 3);
  const auto fb = random_complex<double>(24 * 20 * 16, 4);
  DeviceArray<float> xa(pa.x), ya(pa.y);
  DeviceArray<double> xb(pb.x), yb(pb.y), zb(pb.z);
  DeviceArray<std::complex<float>> dca(ca), outa(96 * 80);
  DeviceArray<std::complex<double>> dfb(fb), outb(pb.size());

  auto run_pair = [&](void* sa, void* sb) {
    nufft::Plan<float> a(1, modes_a, 1, 1, 1e-5, cuda_options(nufft::Method::kAuto, sa));
    nufft::Plan<double> b(2, modes_b, -1, 1, 1e-10, cuda_options(nufft::Method::kAuto, sb));
    a.set_points(pa.size(), xa.p, ya.p);
    b.set_points(pb.size(), xb.p, yb.p, zb.p);
    a.execute(dca.p, outa.p);  // device pointers: queued, not waited for
    b.execute(dfb.p, outb.p);
    cudaDeviceSynchronize();
    return std::make_pair(outa.host(), outb.host());
  };
  const auto together = run_pair(s1, s2);
  const auto alone = run_pair(nullptr, nullptr);
  EXPECT_LE(rel_diff(together.first, alone.first), 1e-5);
  EXPECT_LE(rel_diff(together.second, alone.second), 1e-12);
  cudaStreamDestroy(s1);
  cudaStreamDestroy(s2);
}

// A fine grid larger than the free device memory: kTooLarge at construction, with the sizes in
// the message, and device memory exactly as before.
TEST(GpuRuntime, ProblemLargerThanDeviceMemoryFailsCleanly) {
  SKIP_WITHOUT_GPU();
  { nufft::Plan<float> warm(1, std::vector<std::int64_t>{16}, 1, 1, 1e-3, cuda_options()); }  // context, cuFFT
  const std::size_t before = free_device_memory();
  nufft::Options o = cuda_options();
  o.max_batch = 32;  // 32 fine grids of 1024^3 cells: 275 GB
  try {
    nufft::Plan<float> plan(1, std::vector<std::int64_t>{512, 512, 512}, 1, 32, 1e-3, o);
    FAIL() << "a 275 GB fine grid was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kTooLarge) << e.what();
    EXPECT_NE(std::string(e.what()).find("free"), std::string::npos) << e.what();
  }
  EXPECT_EQ(free_device_memory(), before);
}

// An automatic upsampling factor is chosen at the first set_points: the plan allocates its
// fine grid then, at the chosen size, not at sigma = 2 when it is created (sparse 3D type 1 at
// 128^3 modes: 216^3 cells at sigma 1.6, 80 MB, instead of 256^3, 134 MB, first). A factor
// given explicitly allocates at creation.
TEST(GpuRuntime, AutomaticUpsampfacAllocatesTheGridOnceChosen) {
  SKIP_WITHOUT_GPU();
  { nufft::Plan<float> warm(1, std::vector<std::int64_t>{16}, 1, 1, 1e-3, cuda_options()); }  // context, cuFFT
  const std::vector<std::int64_t> modes{128, 128, 128};
  const auto pts = random_points<float>(3, 200000, 17);
  const double sigma2_grid = 256.0 * 256 * 256 * sizeof(std::complex<float>);
  const std::size_t start = free_device_memory();
  nufft::Plan<float> plan(1, modes, 1, 1, 1e-5, cuda_options(nufft::Method::kOutputDriven));
  const std::size_t created = free_device_memory();
  EXPECT_LT(static_cast<double>(start) - static_cast<double>(created), 0.5 * sigma2_grid)
      << "the sigma = 2 grid was allocated before the factor was chosen";
  plan.set_points(pts.size(), pts.x.data(), pts.y.data(), pts.z.data());
  EXPECT_LT(plan.info().upsampfac, 2.0);
  const double grid = static_cast<double>(plan.info().fine_grid[0]) * plan.info().fine_grid[1] *
                      plan.info().fine_grid[2] * sizeof(std::complex<float>);
  EXPECT_GE(static_cast<double>(created) - static_cast<double>(free_device_memory()), grid);
  nufft::Options o = cuda_options(nufft::Method::kOutputDriven);
  o.upsampfac = 2.0;
  const std::size_t before = free_device_memory();
  nufft::Plan<float> fixed(1, modes, 1, 1, 1e-5, o);
  EXPECT_GE(static_cast<double>(before) - static_cast<double>(free_device_memory()), sigma2_grid);
}

// Device memory after 1000 create / set_points / execute / destroy cycles is where it started
// (after one warm-up cycle, which creates the CUDA context and cuFFT's own state).
TEST(GpuRuntime, ThousandPlanLifetimesDoNotLeak) {
  SKIP_WITHOUT_GPU();
  const auto pts = random_points<float>(2, 2000, 7);
  const auto c = random_complex<float>(pts.size(), 8);
  std::vector<std::complex<float>> f(32 * 24);
  auto cycle = [&](nufft::Method m) {
    nufft::Plan<float> plan(1, std::vector<std::int64_t>{32, 24}, 1, 1, 1e-4, cuda_options(m));
    plan.set_points(pts.size(), pts.x.data(), pts.y.data());
    plan.execute(c.data(), f.data());
  };
  const nufft::Method methods[] = {nufft::Method::kNuptsDriven, nufft::Method::kSubproblem,
                                   nufft::Method::kOutputDriven, nufft::Method::kPrecomputed};
  for (auto m : methods) cycle(m);
  const std::size_t before = free_device_memory();
  for (int i = 0; i < 1000; ++i) cycle(methods[i % 4]);
  EXPECT_EQ(free_device_memory(), before);
}

// 3D output-driven spreading with and without register boxes (Options::spread_boxes) gives the
// same grid up to rounding, for every width the boxes take (2 to 7), float and double, dense and
// sparse points, several transforms, and bins that are odd or do not divide the fine grid (box
// unions then reach past the tile and must be clipped). The battery runs output-driven plans
// with boxes against the exact sums; this test ties them to the plain warp tiles. Also: the
// plan reports what it chose, auto takes boxes on dense points only, and other methods ignore
// the option.
TEST(GpuRuntime, RegisterBoxesMatchPlainWarpTiles) {
  SKIP_WITHOUT_GPU();
  const std::vector<std::int64_t> modes{20, 17, 13};
  const auto run = [&]<class T>(T, double eps, std::int64_t m, int boxes, std::array<int, 3> bins, bool& used) {
    const auto pts = random_points<T>(3, m, 31);
    const auto c = random_complex<T>(2 * pts.size(), 32);
    std::vector<std::complex<T>> f(2 * 20 * 17 * 13);
    nufft::Options o = cuda_options(nufft::Method::kOutputDriven);
    o.spread_boxes = boxes;
    o.bin_size = bins;
    nufft::Plan<T> plan(1, modes, 1, 2, eps, o);
    plan.set_points(pts.size(), pts.x.data(), pts.y.data(), pts.z.data());
    plan.execute(c.data(), f.data());
    used = plan.info().spread_boxes;
    EXPECT_LE(plan.info().kernel_width, 7);
    return f;
  };
  const auto compare = [&]<class T>(T zero, double eps, double tol) {
    for (std::int64_t m : {std::int64_t{60}, std::int64_t{80000}})
      for (auto bins : {std::array<int, 3>{0, 0, 0}, std::array<int, 3>{5, 3, 3}, std::array<int, 3>{16, 6, 4}}) {
        bool on = false, off = true, automatic = false;
        const auto a = run(zero, eps, m, 1, bins, on);
        const auto b = run(zero, eps, m, 0, bins, off);
        run(zero, eps, m, -1, bins, automatic);
        EXPECT_TRUE(on);
        EXPECT_FALSE(off);
        EXPECT_EQ(automatic, m > 10000) << "auto: " << m << " points, 1.5-2.3 per fine-grid cell";
        EXPECT_LE(rel_diff(a, b), tol) << "eps " << eps << ", " << m << " points, bins " << bins[0] << "," << bins[1]
                                       << "," << bins[2];
      }
  };
  for (double eps : {0.3, 1e-1, 1e-2, 1e-3, 1e-4, 1e-5}) compare(0.0f, eps, 1e-5);  // w = 2 ... 7
  for (double eps : {1e-2, 1e-4, 1e-5}) compare(0.0, eps, 1e-12);
  // Methods other than output-driven, and 2D, ignore the option.
  const auto pts = random_points<float>(3, 1000, 33);
  nufft::Options o = cuda_options(nufft::Method::kSubproblem);
  o.spread_boxes = 1;
  nufft::Plan<float> sub(1, modes, 1, 1, 1e-4, o);
  sub.set_points(pts.size(), pts.x.data(), pts.y.data(), pts.z.data());
  EXPECT_FALSE(sub.info().spread_boxes);
  o.method = nufft::Method::kOutputDriven;
  nufft::Plan<float> flat(1, std::vector<std::int64_t>{40, 30}, 1, 1, 1e-4, o);
  flat.set_points(pts.size(), pts.x.data(), pts.y.data());
  EXPECT_FALSE(flat.info().spread_boxes);
}

// Bulk tile rows (sm_90: each tile row added to the grid by one bulk reduction, DevGrid::bulk)
// give the grid the threads' flush gives, up to rounding: every width with fixed-stride tiles
// (2 to 8), float and double, sparse and dense points, three transforms (the tile is zeroed
// between them), x extents of the fine grid that rows wrap around, and planes and rows that
// wrap too. Options::tuning.bulk_rows forces them on (1) and off (0); on devices before sm_90
// both runs take the threads' flush.
TEST(GpuRuntime, BulkTileRowsMatchThreadFlush) {
  SKIP_WITHOUT_GPU();
  const auto run = [&]<class T>(T, const std::vector<std::int64_t>& modes, double eps, std::int64_t m, int knob) {
    const auto pts = random_points<T>(3, m, 51);
    const auto c = random_complex<T>(3 * pts.size(), 52);
    std::vector<std::complex<T>> f(3 * modes[0] * modes[1] * modes[2]);
    nufft::Options o = cuda_options(nufft::Method::kOutputDriven);
    o.spread_boxes = 0;
    o.upsampfac = 2.0;
    o.tuning.bulk_rows = knob;
    nufft::Plan<T> plan(1, modes, 1, 3, eps, o);
    plan.set_points(pts.size(), pts.x.data(), pts.y.data(), pts.z.data());
    plan.execute(c.data(), f.data());
    return f;
  };
  const auto compare = [&]<class T>(T zero, double eps, double tol) {
    for (const auto& modes : {std::vector<std::int64_t>{20, 17, 13}, std::vector<std::int64_t>{13, 9, 6}})
      for (std::int64_t m : {std::int64_t{300}, std::int64_t{30000}}) {
        const auto bulk = run(zero, modes, eps, m, 1);
        const auto threads = run(zero, modes, eps, m, 0);
        EXPECT_LE(rel_diff(bulk, threads), tol) << "eps " << eps << ", modes " << modes[0] << "x" << modes[1] << "x"
                                                << modes[2] << ", " << m << " points";
      }
  };
  for (double eps : {0.3, 1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6}) compare(0.0f, eps, 1e-5);  // w = 2 ... 8
  for (double eps : {1e-2, 1e-5}) compare(0.0, eps, 1e-12);
}

// PlanInfo carries the planner's configuration and its reasons: a 3D float type 1 plan on
// sparse points takes warp tiles (tensor-core tiles on sm_80 and later), tile interpolation, the
// fused last axis on its 108^3 grid; a bad knob is refused.
TEST(GpuRuntime, PlanInfoReportsThePlannersConfiguration) {
  SKIP_WITHOUT_GPU();
  const std::vector<std::int64_t> modes{64, 64, 64};
  const auto pts = random_points<float>(3, 20000, 81);
  nufft::Plan<float> plan(1, modes, 1, 1, 1e-5, cuda_options());
  EXPECT_EQ(plan.info().spread_kernel, nufft::SpreadKernel::kNone);  // before the points
  plan.set_points(pts.size(), pts.x.data(), pts.y.data(), pts.z.data());
  const nufft::PlanInfo& info = plan.info();
  EXPECT_EQ(info.method, nufft::Method::kOutputDriven);
  EXPECT_NE(info.spread_kernel, nufft::SpreadKernel::kNone);
  EXPECT_EQ(info.interp_kernel, nufft::InterpKernel::kTile);
  EXPECT_TRUE(info.mode_fft);
  EXPECT_NE(info.plan_reason.find("upsampfac"), std::string::npos) << info.plan_reason;
  EXPECT_NE(info.plan_reason.find("spread"), std::string::npos) << info.plan_reason;
  nufft::Options bad = cuda_options();
  bad.tuning.tensor_cores = 3;
  EXPECT_THROW(nufft::Plan<float>(1, modes, 1, 1, 1e-5, bad), Error);
}

// Type 1's fused last FFT axis (ModeFft: cuFFT over the faster axes, then the last axis of the
// kept columns only, deconvolved into the modes) against cuFFT over every axis and copy_modes:
// 2D and 3D, both signs, three transforms in a batch, last axes of radices 2, 3, 4, 5, 8, 9, 12.
TEST(GpuRuntime, FusedLastFftAxisMatchesCufftAndCopy) {
  SKIP_WITHOUT_GPU();
  const auto run = [&]<class T>(T, const std::vector<std::int64_t>& modes, int isign, double sigma, int knob) {
    const int dim = static_cast<int>(modes.size());
    const auto pts = random_points<T>(dim, 2000, 61);
    const auto c = random_complex<T>(3 * pts.size(), 62);
    std::int64_t n = 1;
    for (auto k : modes) n *= k;
    std::vector<std::complex<T>> f(3 * n);
    nufft::Options o = cuda_options();
    o.upsampfac = sigma;
    o.tuning.mode_fft = knob;
    nufft::Plan<T> plan(1, modes, isign, 3, 1e-5, o);
    if (knob == 0) EXPECT_FALSE(plan.info().mode_fft);
    plan.set_points(pts.size(), pts.x.data(), pts.y.data(), dim == 3 ? pts.z.data() : nullptr);
    plan.execute(c.data(), f.data());
    return f;
  };
  const auto compare = [&]<class T>(T zero, double tol) {
    for (const auto& modes : {std::vector<std::int64_t>{64, 64, 64}, std::vector<std::int64_t>{20, 17, 13},
                              std::vector<std::int64_t>{9, 1, 25}, std::vector<std::int64_t>{1, 1, 4},
                              std::vector<std::int64_t>{48, 40}, std::vector<std::int64_t>{7, 1}})
      for (int isign : {1, -1})
        for (double sigma : {1.6, 2.0, 2.25}) {
          const auto fused = run(zero, modes, isign, sigma, 1);
          const auto whole = run(zero, modes, isign, sigma, 0);
          EXPECT_LE(rel_diff(fused, whole), tol) << ::testing::PrintToString(modes) << ", isign " << isign
                                                 << ", sigma " << sigma;
        }
  };
  compare(0.0f, 1e-5);
  compare(0.0, 1e-12);
}

// Float 3D type 1 warp tiles built by tensor-core products (spread_tc, tuning.tensor_cores = 1)
// against the plain warp tiles (0): widths 2 to 8, tiles flushed by bulk rows (even nf[0]) and
// by atomics (odd), sparse points (one group per subproblem) and dense ones (subproblems of
// several groups), three transforms in a batch, both signs, a grid thinner than a tile. Also:
// the plan reports the tensor-core tiles and their bins, and auto takes them on sparse points
// only.
TEST(GpuRuntime, TensorCoreTilesMatchWarpTiles) {
  SKIP_WITHOUT_GPU();
  const auto run = [&](const std::vector<std::int64_t>& modes, double sigma, double eps, std::int64_t m, int isign,
                       int knob, std::array<int, 3>& bins) {
    const auto pts = random_points<float>(3, m, 71);
    const auto c = random_complex<float>(3 * pts.size(), 72);
    std::vector<std::complex<float>> f(3 * modes[0] * modes[1] * modes[2]);
    nufft::Options o = cuda_options(nufft::Method::kOutputDriven);
    o.upsampfac = sigma;
    o.spread_boxes = 0;
    o.tuning.tensor_cores = knob;
    nufft::Plan<float> plan(1, modes, isign, 3, eps, o);
    plan.set_points(pts.size(), pts.x.data(), pts.y.data(), pts.z.data());
    plan.execute(c.data(), f.data());
    bins = plan.info().bin_size;
    EXPECT_EQ(plan.info().spread_tensor_cores, (bins == std::array<int, 3>{8, 8, 4}));
    EXPECT_EQ(plan.info().spread_tensor_cores, plan.info().spread_kernel == nufft::SpreadKernel::kTensorCore ||
                                                   plan.info().spread_kernel == nufft::SpreadKernel::kTensorCoreBulk);
    return f;
  };
  const std::array<int, 3> tc_bins{8, 8, 4};
  for (const auto& modes : {std::vector<std::int64_t>{24, 24, 24}, std::vector<std::int64_t>{20, 17, 13},
                            std::vector<std::int64_t>{9, 1, 25}})
    for (double sigma : {2.0, 2.25})
      for (double eps : {0.3, 1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6})
        for (std::int64_t m : {std::int64_t{3000}, std::int64_t{300000}}) {
          const int isign = m > 10000 ? -1 : 1;
          std::array<int, 3> on{}, off{}, automatic{};
          const auto a = run(modes, sigma, eps, m, isign, 1, on);
          const auto b = run(modes, sigma, eps, m, isign, 0, off);
          EXPECT_EQ(on, tc_bins);
          EXPECT_NE(off, tc_bins);
          EXPECT_LE(rel_diff(a, b), 2e-5) << ::testing::PrintToString(modes) << ", sigma " << sigma << ", eps "
                                          << eps << ", " << m << " points";
          if (eps == 1e-5 && modes[1] > 1) {  // 0.03-0.1 points per cell against 3-10
            run(modes, sigma, eps, m, isign, -1, automatic);
            EXPECT_EQ(automatic == tc_bins, m == 3000) << "auto: tensor-core tiles on sparse points only";
          }
        }
}

// Method auto with a kernel too wide for a 48 KiB warp tile (3D double, eps 1e-9 at sigma 2:
// w = 11, a 123 KB tile of 16x8x4 bins) still picks warp tiles, in the device's opt-in shared memory,
// rather than global atomics (8x slower on case B's problem), and stays within eps of the CPU.
TEST(GpuRuntime, AutoKeepsWarpTilesForWideKernels) {
  SKIP_WITHOUT_GPU();
  const std::vector<std::int64_t> modes{24, 24, 24};
  const auto pts = random_points<double>(3, 20000, 41);
  const auto in = random_complex<double>(pts.size(), 42);
  const double eps = 1e-9;
  nufft::Options og = cuda_options();
  og.upsampfac = 2.0;
  nufft::Plan<double> pg(1, modes, 1, 1, eps, og);
  pg.set_points(pts.size(), pts.x.data(), pts.y.data(), pts.z.data());
  EXPECT_GE(pg.info().kernel_width, 10);
  EXPECT_EQ(pg.info().method, nufft::Method::kOutputDriven);
  nufft::Options oc;
  oc.backend = Backend::kCpu;
  oc.upsampfac = 2.0;
  nufft::Plan<double> pc(1, modes, 1, 1, eps, oc);
  pc.set_points(pts.size(), pts.x.data(), pts.y.data(), pts.z.data());
  std::vector<std::complex<double>> gpu_out(24 * 24 * 24), cpu_out(gpu_out.size());
  pg.execute(in.data(), gpu_out.data());
  pc.execute(in.data(), cpu_out.data());
  EXPECT_LE(rel_diff(gpu_out, cpu_out), 2 * eps);
}

// The same points and options on the CPU and the GPU agree within the accuracy both promise:
// each is within eps of the exact sum, so they are within 2·eps of each other.
TEST(GpuRuntime, CpuAndGpuAgreeOnTheSamePoints) {
  SKIP_WITHOUT_GPU();
  for (int dim : {1, 2, 3})
    for (int type : {1, 2})
      for (auto m : {nufft::Method::kNuptsDriven, nufft::Method::kSubproblem, nufft::Method::kOutputDriven,
                     nufft::Method::kPrecomputed}) {
        const std::vector<std::int64_t> modes(dim, dim == 1 ? 200 : (dim == 2 ? 40 : 14));
        std::int64_t n = 1;
        for (auto v : modes) n *= v;
        const auto pts = random_points<double>(dim, 5000, 10 + dim);
        const auto in = random_complex<double>(type == 1 ? pts.size() : n, 20 + type);
        std::vector<std::complex<double>> cpu_out(type == 1 ? n : pts.size()), gpu_out(cpu_out.size());
        const double eps = 1e-9;
        nufft::Options oc;
        oc.backend = Backend::kCpu;
        nufft::Plan<double> pc(type, modes, 1, 1, eps, oc);
        nufft::Plan<double> pg(type, modes, 1, 1, eps, cuda_options(m));
        pc.set_points(pts.size(), pts.x.data(), dim > 1 ? pts.y.data() : nullptr, dim > 2 ? pts.z.data() : nullptr);
        pg.set_points(pts.size(), pts.x.data(), dim > 1 ? pts.y.data() : nullptr, dim > 2 ? pts.z.data() : nullptr);
        pc.execute(in.data(), cpu_out.data());
        pg.execute(in.data(), gpu_out.data());
        EXPECT_LE(rel_diff(gpu_out, cpu_out), 2 * eps)
            << "dim " << dim << " type " << type << " method " << nufft::method_name(m);
      }
}

// Upsampfac 0 on the GPU: the first set_points with points chooses 2.25 when the points are
// dense (at least 0.3 per cell of the sigma = 2 grid, 0.1 for 3D type 2) and the kernel is one
// cell narrower there; 1.6 for sparse 3D type 1 (below 0.3 per cell) where the kernel keeps its
// width; else 2; later set_points keep the choice. Each plan computes what a plan asked for its
// factor computes on the CPU (the same kernel and grid: they differ by rounding only).
TEST(GpuRuntime, AutomaticUpsampfacFollowsPointDensity) {
  SKIP_WITHOUT_GPU();
  for (int dim : {2, 3})
    for (int type : {1, 2}) {
      const std::vector<std::int64_t> modes(dim, dim == 2 ? 96 : 24);
      std::int64_t n = 1, cells = 1;
      for (auto v : modes) {
        n *= v;
        cells *= 2 * v;
      }
      const double eps = 1e-5;
      const auto dense = random_points<float>(dim, cells, 30 + dim);        // 1 point per cell
      const auto sparse = random_points<float>(dim, cells / 20, 40 + dim);  // 0.05
      auto set = [&](nufft::Plan<float>& p, const auto& pts) {
        p.set_points(pts.size(), pts.x.data(), dim > 1 ? pts.y.data() : nullptr, dim > 2 ? pts.z.data() : nullptr);
      };
      SCOPED_TRACE(::testing::Message() << "dim " << dim << " type " << type);

      // The plan at the chosen factor computes what a CPU plan asked for that factor computes.
      auto agrees_with_cpu = [&](nufft::Plan<float>& gpu, double sigma, const auto& pts) {
        nufft::Options oc;
        oc.backend = Backend::kCpu;
        oc.upsampfac = sigma;
        nufft::Plan<float> cpu(type, modes, 1, 1, eps, oc);
        set(cpu, pts);
        EXPECT_EQ(gpu.info().fine_grid, cpu.info().fine_grid);
        const auto in = random_complex<float>(type == 1 ? pts.size() : n, 50 + type);
        std::vector<std::complex<float>> got(type == 1 ? n : pts.size()), want(got.size());
        gpu.execute(in.data(), got.data());
        cpu.execute(in.data(), want.data());
        EXPECT_LE(rel_diff(got, want), 1e-5);
      };

      // Sparse: 3D type 1 takes the narrow factor (the same width on a smaller grid), the rest 2.
      const double thin_sigma = type == 1 && dim == 3 ? 1.6 : 2.0;
      nufft::Plan<float> thin(type, modes, 1, 1, eps, cuda_options());
      set(thin, sparse);
      EXPECT_EQ(thin.info().upsampfac, thin_sigma);
      EXPECT_EQ(thin.info().kernel_width, 7);
      agrees_with_cpu(thin, thin_sigma, sparse);

      nufft::Plan<float> wide(type, modes, 1, 1, eps, cuda_options());
      EXPECT_EQ(wide.info().upsampfac, 2.0);  // not chosen before the points are known
      set(wide, dense);
      EXPECT_EQ(wide.info().upsampfac, 2.25);
      EXPECT_EQ(wide.info().kernel_width, 6);
      EXPECT_EQ(wide.info().fine_grid[0], 2 * (dim == 2 ? 108 : 27));
      agrees_with_cpu(wide, 2.25, dense);

      set(wide, sparse);  // the choice stays
      EXPECT_EQ(wide.info().upsampfac, 2.25);
      EXPECT_EQ(wide.info().kernel_width, 6);
    }
}

// Fine grids of 2^21 cells and more are transformed pruned along their slowest axis (GridFft in
// cuda_plan.cu); the battery's problems are mostly smaller. Large 2D and 3D grids, odd and even mode
// counts on that axis, two transforms per call, both types and precisions, checked against the
// direct sum on a subset of the outputs.
TEST(GpuRuntime, PrunedFftOfLargeGridsMatchesTheDirectSum) {
  SKIP_WITHOUT_GPU();
  auto run = [&]<class T>(T, int dim, int type, const std::vector<std::int64_t>& modes, double eps) {
    SCOPED_TRACE(::testing::Message() << "dim " << dim << " type " << type << " " << sizeof(T) * 8 << "-bit");
    std::int64_t n = 1;
    for (auto v : modes) n *= v;
    const int ntransf = 2;
    const auto pts = random_points<T>(dim, 20000, 60 + dim + type);
    const std::int64_t m = pts.size(), n_in = type == 1 ? m : n, n_out = type == 1 ? n : m;
    const auto in = random_complex<T>(n_in * ntransf, 70 + type);
    nufft::Plan<T> plan(type, modes, 1, ntransf, eps, cuda_options());
    plan.set_points(m, pts.x.data(), dim > 1 ? pts.y.data() : nullptr, dim > 2 ? pts.z.data() : nullptr);
    const auto& nf = plan.info().fine_grid;
    ASSERT_GE(nf[0] * nf[1] * nf[2], std::int64_t(1) << 21) << "the grid must be large enough to be pruned";
    std::vector<std::complex<T>> out(n_out * ntransf);
    plan.execute(in.data(), out.data());
    std::vector<std::int64_t> which;
    for (std::int64_t i = 0; i < 60; ++i) which.push_back((i * 7919 + 13) % n_out);
    which.push_back(0);
    which.push_back(n_out - 1);
    for (int t = 0; t < ntransf; ++t) {
      std::vector<std::complex<double>> c(in.begin() + t * n_in, in.begin() + (t + 1) * n_in);
      const auto want = type == 1 ? reference::nufft_type1_at(pts.exact, c, modes, 1, 0, which)
                                  : reference::nufft_type2_at(pts.exact, c, modes, 1, 0, which);
      std::vector<std::complex<double>> got;
      for (auto i : which) got.push_back(std::complex<double>(out[t * n_out + i]));
      EXPECT_LE(rel_diff(got, want), 2 * eps) << "transform " << t;
    }
  };
  for (int type : {1, 2}) {
    run(float{}, 2, type, {1030, 1025}, 1e-5);
    run(float{}, 3, type, {66, 64, 129}, 1e-5);
    run(double{}, 3, type, {65, 64, 128}, 1e-9);
  }
}
