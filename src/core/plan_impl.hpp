// The interface every backend implements behind fieldft::nufft::Plan.
#pragma once

#include <chrono>
#include <complex>
#include <cstdint>
#include <string>
#include <vector>

#include "core/plan_setup.hpp"
#include "fieldft/nufft.hpp"

namespace fieldft::nufft::detail {

template <class T>
class PlanImpl {
 public:
  explicit PlanImpl(core::PlanSetup setup) : setup_(std::move(setup)), requested_(setup_.options) {}
  virtual ~PlanImpl() = default;
  // Validates the points (present, finite: kNonFinite naming the first bad index) and sorts them.
  virtual void set_points(std::int64_t m, const T* x, const T* y, const T* z) = 0;
  // Type 3: m sources x[0..dim) and nk targets s[0..dim) (core/type3.hpp validates them).
  virtual void set_points_type3(std::int64_t m, const T* const* x, std::int64_t nk, const T* const* s) = 0;
  // adjoint = false: the plan's own type; true: its adjoint (types 1/2: the other type with
  // -isign; type 3: the conjugate transpose).
  virtual void execute(const std::complex<T>* in, std::complex<T>* out, bool adjoint) = 0;
  // Planning kMeasure's clock (types 1 and 2, after set_points): seconds of `reps` pairs of
  // execute and execute_adjoint on zero data held where the plan computes (the host here, device
  // memory on CUDA, whose override waits for its stream), after one untimed pair.
  virtual double time_transforms(int reps) {
    const PlanInfo& i = setup_.info;
    std::vector<std::complex<T>> pts(i.num_points * i.ntransf), modes(i.num_modes() * i.ntransf);
    const auto pair = [&] {
      execute(i.type == 1 ? pts.data() : modes.data(), i.type == 1 ? modes.data() : pts.data(), false);
      execute(i.type == 1 ? modes.data() : pts.data(), i.type == 1 ? pts.data() : modes.data(), true);
    };
    pair();
    const auto t0 = std::chrono::steady_clock::now();
    for (int r = 0; r < reps; ++r) pair();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  const PlanInfo& info() const { return setup_.info; }
  const core::PlanSetup& setup() const { return setup_; }
  // The options the user asked for: planning kMeasure replaces this backend by one planned with
  // measured options, which keeps the user's for its next set_points.
  const Options& requested_options() const { return requested_; }
  void set_requested_options(const Options& o) { requested_ = o; }
  // Planning kMeasure: where the configuration came from (PlanInfo::configured_by, measured),
  // prepended to the planner's reasons.
  void set_planning_note(std::string configured_by, std::vector<PlanInfo::MeasuredCandidate> measured) {
    setup_.info.plan_reason = "planning: " + configured_by + "\n" + setup_.info.plan_reason;
    setup_.info.configured_by = std::move(configured_by);
    setup_.info.measured = std::move(measured);
  }
  bool has_points() const { return has_points_; }

 protected:
  core::PlanSetup setup_;
  Options requested_;
  bool has_points_ = false;
};

}  // namespace fieldft::nufft::detail
