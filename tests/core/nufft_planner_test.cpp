// The CUDA NUFFT planner (src/core/nufft_planner.hpp) on fake devices: the decisions it makes
// today for representative problems, pinned so that a change to any of them is deliberate
// (docs/tuning.md gives the reasons and measurements).
#include <gtest/gtest.h>

#include <string>

#include "core/nufft_planner.hpp"
#include "core/plan_setup.hpp"

using namespace fieldft;
using core::DeviceCaps;
using nufft::FftStrategy;
using nufft::InterpKernel;
using nufft::Method;
using nufft::SpreadKernel;

namespace {

// Shared memory per block with opt-in: the per-SM figure less the 1 KiB the driver reserves.
DeviceCaps h100() { return {132, 227 * 1024, 228 * 1024, 50u << 20, 9, 0, 80ull << 30}; }
DeviceCaps a100() { return {108, 163 * 1024, 164 * 1024, 40u << 20, 8, 0, 40ull << 30}; }
DeviceCaps small_gpu() { return {20, 99 * 1024, 100 * 1024, 4u << 20, 8, 6, 12ull << 30}; }

struct Problem {
  bool single;
  int type;
  std::vector<std::int64_t> modes;
  double eps;
  std::int64_t m;
  std::int64_t ntransf = 1;
  nufft::Options opt{};
};

core::PlanSetup setup_of(const Problem& p) {
  const double min_eps = p.single ? nufft::min_eps<float>() : nufft::min_eps<double>();
  const double u = p.single ? 0x1p-24 : 0x1p-53;
  return core::make_plan_setup(p.type, p.modes, 1, p.ntransf, p.eps, p.opt, min_eps, u);
}

// The planner as set_points runs it the first time (free memory: plenty).
core::NufftConfig plan(const Problem& p, const DeviceCaps& caps, core::PlanSetup* final_setup = nullptr) {
  const core::PlanSetup s = setup_of(p);
  core::PointStats st;
  st.m = p.m;
  st.grid = s.info.fine_grid;
  st.choose_upsampfac = s.options.upsampfac == 0.0 && p.type != 3 && !s.info.spread_interp_only;
  st.free_device_bytes = std::size_t(60) << 30;
  core::NufftConfig c = p.single ? core::plan_nufft<float>(s, caps, &st) : core::plan_nufft<double>(s, caps, &st);
  if (final_setup != nullptr) *final_setup = c.replanned ? *c.replanned : s;
  return c;
}

struct Expected {
  Method method;
  std::array<int, 3> grid_bins;
  int max_batch;
  double upsampfac;
  int width;
  std::array<int, 3> bins;  // after the points
  std::array<int, 3> sub_bins;
  std::int64_t subproblem_points;
  SpreadKernel spread;
  InterpKernel interp;
  FftStrategy fft;
  bool mode_fft;
};

void expect(const char* name, const Problem& p, const DeviceCaps& caps, const Expected& e) {
  SCOPED_TRACE(name);
  core::PlanSetup s;
  const core::NufftConfig c = plan(p, caps, &s);
  ASSERT_TRUE(c.points.has_value());
  const core::PointsConfig& q = *c.points;
  EXPECT_EQ(c.grid.method, e.method);
  EXPECT_EQ(c.grid.bins, e.grid_bins);
  EXPECT_EQ(c.grid.max_batch, e.max_batch);
  EXPECT_EQ(s.info.upsampfac, e.upsampfac);
  EXPECT_EQ(s.info.kernel_width, e.width);
  EXPECT_EQ(q.bins, e.bins);
  EXPECT_EQ(q.sub_bins, e.sub_bins);
  EXPECT_EQ(q.subproblem_points, e.subproblem_points);
  EXPECT_EQ(q.spread, e.spread) << nufft::spread_kernel_name(q.spread);
  EXPECT_EQ(q.interp, e.interp);
  EXPECT_EQ(c.grid.fft, e.fft);
  EXPECT_EQ(c.grid.mode_fft, e.mode_fft);
  EXPECT_FALSE(c.reason().empty());
}

}  // namespace

TEST(NufftPlanner, Pinned) {
  const Problem sparse3f{true, 1, {128, 128, 128}, 1e-5, 2'000'000};
  const Problem dense3f{true, 1, {128, 128, 128}, 1e-6, 50'000'000};
  const Problem type2_3f{true, 2, {128, 128, 128}, 1e-3, 1'000'000};
  const Problem dense2_3f{true, 2, {128, 128, 128}, 1e-6, 10'000'000};
  const Problem sparse3d{false, 1, {64, 64, 64}, 1e-9, 200'000};
  const Problem dense3d{false, 1, {64, 64, 64}, 1e-9, 5'000'000};
  const Problem type2_3d{false, 2, {64, 64, 64}, 1e-6, 2'000'000};
  const Problem dense2f{true, 1, {256, 256}, 1e-6, 1'000'000, 32};
  const Problem sparse2d{false, 2, {256, 256}, 1e-9, 65'536};
  const Problem low2f{true, 1, {256, 256}, 1e-3, 65'536};
  const Problem one_d{true, 1, {100'000}, 1e-6, 1'000'000};
  // Read off the planner, which is the CUDA backend's rules gathered unchanged (checked by hand
  // for H100 sparse3f: sigma 1.6 -> 216^3 cells, 0.2 points per cell -> tensor-core tiles on
  // 8x8x4 bins, bulk rows on sm_90, 2e6 / (16 * 132) = 946 points per subproblem).
  expect("H100 sparse3f", sparse3f, h100(),
         {Method::kOutputDriven, {16, 8, 4}, 1, 1.6, 7, {8, 8, 4}, {2, 2, 2}, 946, SpreadKernel::kTensorCoreBulk, InterpKernel::kTile, FftStrategy::kPruned, true});
  expect("H100 dense3f", dense3f, h100(),
         {Method::kOutputDriven, {16, 8, 4}, 1, 2.25, 7, {16, 8, 4}, {2, 2, 2}, 1024, SpreadKernel::kTileBoxesFixed, InterpKernel::kTile, FftStrategy::kPruned, true});
  expect("H100 type2_3f", type2_3f, h100(),
         {Method::kOutputDriven, {16, 8, 8}, 1, 2, 5, {16, 8, 8}, {2, 2, 2}, 473, SpreadKernel::kTileFixedBulk, InterpKernel::kTile, FftStrategy::kPruned, true});
  expect("H100 dense2_3f", dense2_3f, h100(),
         {Method::kOutputDriven, {16, 8, 8}, 1, 2.25, 7, {16, 8, 8}, {2, 2, 2}, 1024, SpreadKernel::kTileFixed, InterpKernel::kTile, FftStrategy::kPruned, true});
  expect("H100 sparse3d", sparse3d, h100(),
         {Method::kOutputDriven, {16, 8, 4}, 1, 2, 11, {16, 8, 4}, {2, 2, 2}, 94, SpreadKernel::kTile, InterpKernel::kNupts, FftStrategy::kPruned, true});
  expect("H100 dense3d", dense3d, h100(),
         {Method::kOutputDriven, {16, 8, 4}, 1, 2.25, 10, {16, 8, 4}, {2, 2, 2}, 1024, SpreadKernel::kTile, InterpKernel::kNupts, FftStrategy::kPruned, true});
  expect("H100 type2_3d", type2_3d, h100(),
         {Method::kOutputDriven, {16, 8, 2}, 1, 2.25, 7, {16, 8, 2}, {2, 2, 2}, 946, SpreadKernel::kTileFixed, InterpKernel::kTile, FftStrategy::kPruned, true});
  expect("H100 dense2f", dense2f, h100(),
         {Method::kOutputDriven, {32, 32, 1}, 8, 2.25, 7, {32, 32, 1}, {8, 4, 1}, 473, SpreadKernel::kTile, InterpKernel::kNupts, FftStrategy::kWhole, false});
  expect("H100 sparse2d", sparse2d, h100(),
         {Method::kOutputDriven, {32, 32, 1}, 1, 2, 11, {32, 32, 1}, {8, 4, 1}, 64, SpreadKernel::kTile, InterpKernel::kNupts, FftStrategy::kWhole, true});
  expect("H100 low2f", low2f, h100(),
         {Method::kOutputDriven, {32, 32, 1}, 1, 2, 5, {32, 32, 1}, {8, 4, 1}, 64, SpreadKernel::kTile, InterpKernel::kNupts, FftStrategy::kWhole, true});
  expect("H100 one_d", one_d, h100(),
         {Method::kOutputDriven, {1024, 1, 1}, 1, 2.25, 7, {1024, 1, 1}, {1024, 1, 1}, 473, SpreadKernel::kTile, InterpKernel::kNupts, FftStrategy::kWhole, false});
  expect("A100 sparse3f", sparse3f, a100(),
         {Method::kOutputDriven, {16, 8, 4}, 1, 1.6, 7, {8, 8, 4}, {2, 2, 2}, 1024, SpreadKernel::kTensorCore, InterpKernel::kTile, FftStrategy::kPruned, true});
  expect("A100 dense3f", dense3f, a100(),
         {Method::kOutputDriven, {16, 8, 4}, 1, 2.25, 7, {16, 8, 4}, {2, 2, 2}, 1024, SpreadKernel::kTileBoxesFixed, InterpKernel::kTile, FftStrategy::kPruned, true});
  expect("A100 type2_3f", type2_3f, a100(),
         {Method::kOutputDriven, {16, 8, 8}, 1, 2, 5, {16, 8, 8}, {2, 2, 2}, 578, SpreadKernel::kTileFixed, InterpKernel::kTile, FftStrategy::kPruned, true});
  expect("A100 dense2_3f", dense2_3f, a100(),
         {Method::kOutputDriven, {16, 8, 8}, 1, 2.25, 7, {16, 8, 8}, {2, 2, 2}, 1024, SpreadKernel::kTileFixed, InterpKernel::kTile, FftStrategy::kPruned, true});
  expect("A100 sparse3d", sparse3d, a100(),
         {Method::kOutputDriven, {16, 8, 4}, 1, 2, 11, {16, 8, 4}, {2, 2, 2}, 115, SpreadKernel::kTile, InterpKernel::kNupts, FftStrategy::kPruned, true});
  expect("A100 dense3d", dense3d, a100(),
         {Method::kOutputDriven, {16, 8, 4}, 1, 2.25, 10, {16, 8, 4}, {2, 2, 2}, 1024, SpreadKernel::kTile, InterpKernel::kNupts, FftStrategy::kPruned, true});
  expect("A100 type2_3d", type2_3d, a100(),
         {Method::kOutputDriven, {16, 8, 2}, 1, 2.25, 7, {16, 8, 2}, {2, 2, 2}, 1024, SpreadKernel::kTileFixed, InterpKernel::kTile, FftStrategy::kPruned, true});
  expect("A100 dense2f", dense2f, a100(),
         {Method::kOutputDriven, {32, 32, 1}, 8, 2.25, 7, {32, 32, 1}, {8, 4, 1}, 578, SpreadKernel::kTile, InterpKernel::kNupts, FftStrategy::kWhole, false});
  expect("A100 sparse2d", sparse2d, a100(),
         {Method::kOutputDriven, {32, 32, 1}, 1, 2, 11, {32, 32, 1}, {8, 4, 1}, 64, SpreadKernel::kTile, InterpKernel::kNupts, FftStrategy::kWhole, true});
  expect("A100 low2f", low2f, a100(),
         {Method::kOutputDriven, {32, 32, 1}, 1, 2, 5, {32, 32, 1}, {8, 4, 1}, 64, SpreadKernel::kTile, InterpKernel::kNupts, FftStrategy::kWhole, true});
  expect("A100 one_d", one_d, a100(),
         {Method::kOutputDriven, {1024, 1, 1}, 1, 2.25, 7, {1024, 1, 1}, {1024, 1, 1}, 578, SpreadKernel::kTile, InterpKernel::kNupts, FftStrategy::kWhole, false});
  expect("small sparse3f", sparse3f, small_gpu(),
         {Method::kOutputDriven, {16, 8, 4}, 1, 1.6, 7, {8, 8, 4}, {2, 2, 2}, 1024, SpreadKernel::kTensorCore, InterpKernel::kTile, FftStrategy::kPruned, true});
  expect("small dense3f", dense3f, small_gpu(),
         {Method::kOutputDriven, {16, 8, 4}, 1, 2.25, 7, {16, 8, 4}, {2, 2, 2}, 1024, SpreadKernel::kTileBoxesFixed, InterpKernel::kTile, FftStrategy::kPruned, true});
  expect("small type2_3f", type2_3f, small_gpu(),
         {Method::kOutputDriven, {16, 8, 8}, 1, 2, 5, {16, 8, 8}, {2, 2, 2}, 1024, SpreadKernel::kTileFixed, InterpKernel::kTile, FftStrategy::kPruned, true});
  expect("small dense2_3f", dense2_3f, small_gpu(),
         {Method::kOutputDriven, {16, 8, 8}, 1, 2.25, 7, {16, 8, 8}, {2, 2, 2}, 1024, SpreadKernel::kTileFixed, InterpKernel::kTile, FftStrategy::kPruned, true});
  expect("small sparse3d", sparse3d, small_gpu(),
         {Method::kNuptsDriven, {16, 8, 8}, 1, 2, 11, {16, 8, 8}, {16, 4, 2}, 1024, SpreadKernel::kNupts, InterpKernel::kNupts, FftStrategy::kPruned, true});
  expect("small dense3d", dense3d, small_gpu(),
         {Method::kOutputDriven, {16, 8, 2}, 1, 2.25, 10, {16, 8, 2}, {2, 2, 2}, 1024, SpreadKernel::kTile, InterpKernel::kNupts, FftStrategy::kPruned, true});
  expect("small type2_3d", type2_3d, small_gpu(),
         {Method::kOutputDriven, {16, 8, 2}, 1, 2.25, 7, {16, 8, 2}, {2, 2, 2}, 1024, SpreadKernel::kTileFixed, InterpKernel::kTile, FftStrategy::kPruned, true});
  expect("small dense2f", dense2f, small_gpu(),
         {Method::kOutputDriven, {32, 32, 1}, 8, 2.25, 7, {32, 32, 1}, {8, 4, 1}, 1024, SpreadKernel::kTile, InterpKernel::kNupts, FftStrategy::kWhole, false});
  expect("small sparse2d", sparse2d, small_gpu(),
         {Method::kOutputDriven, {32, 32, 1}, 1, 2, 11, {32, 32, 1}, {8, 4, 1}, 204, SpreadKernel::kTile, InterpKernel::kNupts, FftStrategy::kWhole, true});
  expect("small low2f", low2f, small_gpu(),
         {Method::kOutputDriven, {32, 32, 1}, 1, 2, 5, {32, 32, 1}, {8, 4, 1}, 204, SpreadKernel::kTile, InterpKernel::kNupts, FftStrategy::kWhole, true});
  expect("small one_d", one_d, small_gpu(),
         {Method::kOutputDriven, {1024, 1, 1}, 1, 2.25, 7, {1024, 1, 1}, {1024, 1, 1}, 1024, SpreadKernel::kTile, InterpKernel::kNupts, FftStrategy::kWhole, false});
}

TEST(NufftPlanner, TuningKnobs) {
  Problem p{true, 1, {128, 128, 128}, 1e-5, 2'000'000};
  p.opt.tuning.tensor_cores = 0;  // never: the fixed-stride warp tiles on the planner's bins, bulk rows (sparse)
  EXPECT_EQ(plan(p, h100()).points->spread, SpreadKernel::kTileFixedBulk);
  p.opt.tuning.bulk_rows = 0;
  EXPECT_EQ(plan(p, h100()).points->spread, SpreadKernel::kTileFixed);
  p.opt.tuning = {};
  p.opt.tuning.bulk_rows = 1;  // bulk rows on a device before sm_90: never
  EXPECT_EQ(plan(p, a100()).points->spread, SpreadKernel::kTensorCore);
  // 0.95 points per cell of the 128^3 grid: too dense for automatic tensor-core tiles and bulk rows.
  Problem dense{true, 1, {64, 64, 64}, 1e-5, 2'000'000};
  dense.opt.upsampfac = 2.0;
  EXPECT_EQ(plan(dense, h100()).points->spread, SpreadKernel::kTileFixed);
  dense.opt.tuning.tensor_cores = 1;  // always
  EXPECT_EQ(plan(dense, h100()).points->spread, SpreadKernel::kTensorCore);
  DeviceCaps old = a100();
  old.cc_major = 7;  // before sm_80: no tensor-core tiles whatever the knob
  EXPECT_EQ(plan(dense, old).points->spread, SpreadKernel::kTileFixed);
  Problem mf{true, 1, {64, 64, 64}, 1e-5, 100'000};
  EXPECT_TRUE(plan(mf, h100()).grid.mode_fft);
  mf.opt.tuning.mode_fft = 0;
  EXPECT_FALSE(plan(mf, h100()).grid.mode_fft);
  mf.opt.tuning.mode_fft = 2;
  try {
    setup_of(mf);
    FAIL() << "tuning.mode_fft 2 accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("tuning.mode_fft"), std::string::npos);
  }
}

TEST(NufftPlanner, RequestedMethodsAndBins) {
  Problem p{false, 1, {64, 64, 64}, 1e-9, 200'000};
  p.opt.method = Method::kSubproblem;
  const core::NufftConfig c = plan(p, h100());
  EXPECT_EQ(c.grid.method, Method::kSubproblem);
  EXPECT_EQ(c.points->spread, SpreadKernel::kSubproblem);
  EXPECT_EQ(c.points->subproblem_points, core::kMaxSubproblem);
  // A tile that fits no budget (w = 16 in double: 19x19x16 cells at the smallest bins, 4x4x1,
  // over the small GPU's 79 KiB): the request is refused, naming the method.
  Problem wide{false, 1, {64, 64, 64}, 1e-14, 200'000};
  wide.opt.method = Method::kSubproblem;
  try {
    plan(wide, small_gpu());
    FAIL() << "an impossible tile accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("method subproblem"), std::string::npos);
  }
  // The caller's bins are kept where they fit, and rule out tensor-core tiles.
  Problem q{true, 1, {128, 128, 128}, 1e-5, 2'000'000};
  q.opt.bin_size = {16, 8, 4};
  const core::NufftConfig d = plan(q, h100());
  EXPECT_EQ(d.points->bins, (std::array<int, 3>{16, 8, 4}));
  EXPECT_FALSE(d.points->tensor_cores);
  p.opt = {};
  p.opt.method = Method::kNuptsDriven;
  EXPECT_EQ(plan(p, h100()).points->spread, SpreadKernel::kNupts);
  EXPECT_EQ(plan(p, h100()).points->interp, InterpKernel::kNupts);
}

TEST(NufftPlanner, UpsampfacStaysWhereTheGridWouldNotFit) {
  const Problem p{true, 1, {128, 128, 128}, 1e-6, 50'000'000};
  const core::PlanSetup s = setup_of(p);
  core::PointStats st;
  st.m = p.m;
  st.grid = s.info.fine_grid;
  st.choose_upsampfac = true;
  // 2.25 grows the 256^3 grid (128 MiB) to 288^3 (+54 MiB), more than half of what the current
  // grid leaves of 160 MiB.
  st.free_device_bytes = std::size_t(160) << 20;
  const core::NufftConfig c = core::plan_nufft<float>(s, h100(), &st);
  EXPECT_FALSE(c.replanned.has_value());
  EXPECT_NE(c.reason().find("does not fit"), std::string::npos) << c.reason();
  st.free_device_bytes = std::size_t(60) << 30;
  const core::NufftConfig wide = core::plan_nufft<float>(s, h100(), &st);
  EXPECT_TRUE(wide.replanned.has_value());
  // The reason names core::auto_upsampfac's rule (widths and the model's margin below eps).
  EXPECT_NE(wide.reason().find("upsampfac 2.25"), std::string::npos) << wide.reason();
  EXPECT_NE(wide.reason().find("error model"), std::string::npos) << wide.reason();
  st.choose_upsampfac = false;  // a later set_points: never again
  EXPECT_FALSE(core::plan_nufft<float>(s, h100(), &st).replanned.has_value());
}

TEST(NufftPlanner, SpreadInterpOnlyAndType3HaveNoFft) {
  Problem p{true, 1, {256, 256}, 1e-6, 100'000};
  p.opt.spread_interp_only = true;
  const core::NufftConfig c = plan(p, h100());
  EXPECT_EQ(c.grid.fft, FftStrategy::kNone);
  EXPECT_FALSE(c.grid.auto_upsampfac);
  EXPECT_FALSE(c.replanned.has_value());
  const Problem t3{false, 3, {1, 1, 1}, 1e-6, 1000};
  const core::GridConfig g = core::plan_grid<double>(setup_of(t3), h100());
  EXPECT_EQ(g.fft, FftStrategy::kNone);
  EXPECT_FALSE(g.auto_upsampfac);
}

TEST(NufftPlanner, SubBinsAndRadices) {
  EXPECT_EQ(core::sort_sub_bins(3, Method::kOutputDriven, false, {16, 8, 4}), (std::array<int, 3>{2, 2, 2}));
  EXPECT_EQ(core::sort_sub_bins(3, Method::kNuptsDriven, false, {16, 8, 8}), (std::array<int, 3>{16, 4, 2}));
  EXPECT_EQ(core::sort_sub_bins(3, Method::kNuptsDriven, false, {12, 6, 3}), (std::array<int, 3>{12, 3, 1}));
  EXPECT_EQ(core::sort_sub_bins(2, Method::kOutputDriven, false, {32, 32, 1}), (std::array<int, 3>{8, 4, 1}));
  EXPECT_EQ(core::sort_sub_bins(1, Method::kOutputDriven, false, {1024, 1, 1}), (std::array<int, 3>{1024, 1, 1}));
  EXPECT_EQ(core::mode_fft_radices(108), (std::vector<int>{12, 9}));
  EXPECT_EQ(core::mode_fft_radices(128), (std::vector<int>{8, 8, 2}));
  EXPECT_TRUE(core::mode_fft_radices(14).empty());  // prime factor 7
}

// The CPU backend's choice of precomputed kernel weights (docs/tuning.md): kAuto from
// kPrecomputeMinReuse executes per set_points when the weights fit the limit (default a quarter
// of physical memory); an explicit kPrecomputed over the limit is kTooLarge.
TEST(NufftPlanner, CpuPrecomputeRule) {
  const double phys = 64.0 * (1 << 30), mib = 1 << 20;
  nufft::Options o;
  o.reuse = core::kPrecomputeMinReuse - 1;
  EXPECT_FALSE(core::plan_cpu_precompute(o, mib, phys).precompute);
  o.reuse = core::kPrecomputeMinReuse;
  const core::PrecomputeChoice c = core::plan_cpu_precompute(o, mib, phys);
  EXPECT_TRUE(c.precompute);
  EXPECT_DOUBLE_EQ(c.limit_bytes, core::kPrecomputeMemoryFraction * phys);
  EXPECT_FALSE(core::plan_cpu_precompute(o, 0.3 * phys, phys).precompute);  // over a quarter
  o.precompute_max_bytes = 0.5 * mib;
  EXPECT_FALSE(core::plan_cpu_precompute(o, mib, phys).precompute);
  o.method = Method::kNuptsDriven;
  EXPECT_FALSE(core::plan_cpu_precompute(o, 1.0, phys).precompute);
  o.method = Method::kPrecomputed;
  o.reuse = 0;
  EXPECT_TRUE(core::plan_cpu_precompute(o, 0.25 * mib, phys).precompute);
  try {
    (void)core::plan_cpu_precompute(o, mib, phys);
    ADD_FAILURE() << "no refusal over the limit";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kTooLarge);
    EXPECT_NE(std::string(e.what()).find("precompute_max_bytes"), std::string::npos) << e.what();
  }
}

// The CUDA backend's precomputed kernel weights (docs/tuning.md): an explicit kPrecomputed runs
// the one-thread-per-point kernels with dim·w weights of T per point, within a quarter of the
// free device memory (kTooLarge above it, naming both sizes); kAuto never takes it (not yet
// measured on a GPU), whatever Options::reuse; type 3 refuses it at construction.
TEST(NufftPlanner, CudaPrecomputeRule) {
  Problem p{true, 1, {128, 128, 128}, 1e-6, 2'000'000};
  p.opt.method = Method::kPrecomputed;
  p.opt.upsampfac = 2.0;
  const core::NufftConfig c = plan(p, h100());
  EXPECT_EQ(c.grid.method, Method::kPrecomputed);
  ASSERT_TRUE(c.points.has_value());
  EXPECT_TRUE(c.points->precompute);
  const core::PlanSetup s = setup_of(p);
  EXPECT_EQ(c.points->precomputed_bytes, p.m * 3 * s.info.kernel_width * std::int64_t(sizeof(float)));
  EXPECT_EQ(c.points->spread, SpreadKernel::kNupts);
  EXPECT_EQ(c.points->interp, InterpKernel::kNupts);
  EXPECT_EQ(c.points->sub_bins, core::sort_sub_bins(3, Method::kNuptsDriven, false, c.points->bins));
  EXPECT_NE(c.reason().find("method precomputed"), std::string::npos) << c.reason();

  // The default limit: a quarter of the free device memory.
  core::PointStats st;
  st.m = p.m;
  st.grid = s.info.fine_grid;
  st.free_device_bytes = static_cast<std::size_t>(3.9 * static_cast<double>(c.points->precomputed_bytes));
  try {
    (void)core::plan_nufft<float>(s, h100(), &st);
    ADD_FAILURE() << "no refusal above a quarter of the free memory";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kTooLarge);
    EXPECT_NE(std::string(e.what()).find("free device memory"), std::string::npos) << e.what();
  }
  st.free_device_bytes = static_cast<std::size_t>(4.1 * static_cast<double>(c.points->precomputed_bytes));
  EXPECT_TRUE(core::plan_nufft<float>(s, h100(), &st).points->precompute);

  nufft::Options o;
  o.reuse = 1'000'000;
  const double free = 80.0 * (1 << 30);
  const core::PrecomputeChoice a = core::plan_cuda_precompute(o, 1 << 20, free);
  EXPECT_FALSE(a.precompute);
  EXPECT_NE(a.reason.find("measured"), std::string::npos) << a.reason;
  p.opt.method = Method::kAuto;
  p.opt.reuse = 1'000'000;
  const core::NufftConfig automatic = plan(p, h100());
  EXPECT_FALSE(automatic.points->precompute);
  EXPECT_EQ(automatic.points->precomputed_bytes, 0);
  o.method = Method::kPrecomputed;
  o.precompute_max_bytes = 1000;
  try {
    (void)core::plan_cuda_precompute(o, 2000, free);
    ADD_FAILURE() << "no refusal over precompute_max_bytes";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kTooLarge);
    EXPECT_NE(std::string(e.what()).find("precompute_max_bytes"), std::string::npos) << e.what();
  }
  Problem t3{false, 3, {1, 1, 1}, 1e-6, 1000};
  t3.opt.method = Method::kPrecomputed;
  t3.opt.backend = Backend::kCuda;
  EXPECT_THROW((void)setup_of(t3), Error);
}
