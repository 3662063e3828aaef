// Common pieces of the NUFFT battery, compiled once per backend (support/battery.hpp:
// fieldft_test_nufft_cpu runs kCpu, fieldft_test_nufft_gpu kCuda).
#pragma once

#include <limits>

#include "accuracy_sweep.hpp"
#include "fieldft/nufft.hpp"
#include "support/battery.hpp"

namespace fieldft::test {

// The methods a test loops over: the CPU backend has one strategy; CUDA has three, and the
// battery must hold for each of them.
inline std::vector<nufft::Method> methods_under_test() {
  if (kBackend == Backend::kCuda)
    return {nufft::Method::kNuptsDriven, nufft::Method::kSubproblem, nufft::Method::kOutputDriven};
  return {nufft::Method::kAuto};
}

// The methods of tests of types 1 and 2 only: both backends add kPrecomputed (kernel weights
// computed at set_points), which type 3 refuses.
inline std::vector<nufft::Method> point_methods_under_test() {
  std::vector<nufft::Method> v = methods_under_test();
  v.push_back(nufft::Method::kPrecomputed);
  return v;
}

// Runs body(m) and turns a fieldft::Error into a failure that names the method, so that one
// method's refusal (say, a width its shared-memory tiles cannot hold) does not hide the results
// of the others in the same test.
template <class F>
void guarded(nufft::Method m, F&& body) {
  try {
    body();
  } catch (const Error& e) {
    ADD_FAILURE() << "method " << nufft::method_name(m) << " threw " << error_code_name(e.code())
                  << ": " << e.what();
  }
}

inline nufft::Options options_for(nufft::Method method = nufft::Method::kAuto,
                                  double upsampfac = 0.0, int modeord = 0) {
  nufft::Options o;
  o.backend = kBackend;
  o.method = method;
  o.upsampfac = upsampfac;
  o.modeord = modeord;
  // CUDA output-driven: register boxes wherever they apply (3D, w <= 7), so that the battery
  // holds for them; plain warp tiles are what auto picks for the battery's sparse points, and
  // GpuRuntime.RegisterBoxesMatchPlainWarpTiles compares the two.
  if (kBackend == Backend::kCuda && method == nufft::Method::kOutputDriven) o.spread_boxes = 1;
  return o;
}

template <class T>
constexpr Precision precision_of() {
  return sizeof(T) == sizeof(float) ? Precision::kFloat : Precision::kDouble;
}

// An eps that is well above the precision floor of T for the battery's sizes and cheap to
// reach: used where a test checks a property other than the accuracy sweep.
template <class T>
constexpr double working_eps() {
  return sizeof(T) == sizeof(float) ? 1e-4 : 1e-9;
}

// Bound for tests of a property (signs, mode order, folding, batching, re-set points, ...)
// against the oracle: 5·max(eps, F). A broken property gives an O(1) error (folding in single
// precision instead of double: >= 10·eps, see FoldsPointsFarOutsideThePeriod), so 5·max(eps, F)
// separates right from wrong; the accuracy criterion itself, 2·max(eps, F), is asserted once, by
// the sweep, so that an accuracy shortfall fails the sweep and not every property test with it.
inline constexpr double kPropertySlack = 5.0;
template <class T>
double property_bound(const nufft::Plan<T>& plan) {
  return kPropertySlack * std::max(plan.info().eps, precision_floor(precision_of<T>(), plan.info()));
}

// Tolerance for comparing two evaluations of the same linear map (batched vs single, linearity,
// mode orders): they differ by rounding only, which the precision floor F bounds.
template <class T>
double rounding_tolerance(const nufft::Plan<T>& plan) {
  return precision_floor(precision_of<T>(), plan.info());
}

// Skips on an unavailable backend; every test of the battery derives from it.
class NufftTest : public ::testing::Test {
 protected:
  void SetUp() override { FIELDFT_TEST_SKIP_UNLESS_AVAILABLE(kBackend); }
};

template <class T>
class NufftTypedTest : public NufftTest {};
// Default (index) type names on purpose: CMake's gtest_discover_tests turns them into
// "Suite.Test<float>"; custom names confuse its parser.
using Precisions = ::testing::Types<float, double>;

// Number of values execute (adjoint = false) or execute_adjoint (true) reads and writes.
// Type 3 reads sources and writes targets (adjoint: the reverse).
inline std::int64_t input_size(const nufft::PlanInfo& info, bool adjoint) {
  if (info.type == 3) return info.ntransf * (adjoint ? info.num_targets : info.num_points);
  const bool reads_points = (info.type == 1) != adjoint;
  return info.ntransf * (reads_points ? info.num_points : info.num_modes());
}
inline std::int64_t output_size(const nufft::PlanInfo& info, bool adjoint) {
  if (info.type == 3) return info.ntransf * (adjoint ? info.num_points : info.num_targets);
  const bool writes_modes = (info.type == 1) != adjoint;
  return info.ntransf * (writes_modes ? info.num_modes() : info.num_points);
}

// Runs execute or execute_adjoint on `in`; the output starts as NaN so that any entry the plan
// leaves unwritten is visible.
template <class T>
std::vector<std::complex<T>> apply(nufft::Plan<T>& plan, const std::vector<std::complex<T>>& in,
                                   bool adjoint = false) {
  const auto& info = plan.info();
  EXPECT_EQ(static_cast<std::int64_t>(in.size()), input_size(info, adjoint));
  const T nan = std::numeric_limits<T>::quiet_NaN();
  std::vector<std::complex<T>> out(static_cast<std::size_t>(output_size(info, adjoint)), {nan, nan});
  if (adjoint)
    plan.execute_adjoint(in.data(), out.data());
  else
    plan.execute(in.data(), out.data());
  return out;
}

template <class T>
void set_points(nufft::Plan<T>& plan, const PointSet<T>& pts) {
  plan.set_points(pts.size(), pts.x_ptr(), pts.y_ptr(), pts.z_ptr());
}

// Type 3: sources and targets.
template <class T>
void set_points(nufft::Plan<T>& plan, const PointSet<T>& src, const PointSet<T>& tgt) {
  plan.set_points(src.size(), src.x_ptr(), src.y_ptr(), src.z_ptr(), tgt.size(), tgt.x_ptr(), tgt.y_ptr(),
                  tgt.z_ptr());
}

// The oracle of transform `type` (1 or 2) on double data.
inline std::vector<cdouble> oracle(int type, const reference::Points& pts,
                                   const std::vector<cdouble>& in,
                                   std::span<const std::int64_t> modes, int isign, int modeord) {
  return type == 1 ? reference::nufft_type1(pts, in, modes, isign, modeord)
                   : reference::nufft_type2(pts, in, modes, isign, modeord);
}

// Modest sizes per dimension for the property tests (odd and even counts on purpose).
inline std::vector<std::int64_t> test_modes(int dim) {
  switch (dim) {
    case 1: return {64};
    case 2: return {24, 19};
    default: return {12, 9, 10};
  }
}

}  // namespace fieldft::test
