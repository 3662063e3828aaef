// The interface every backend implements behind fieldft::nufft::Plan.
#pragma once

#include <complex>
#include <cstdint>

#include "core/plan_setup.hpp"
#include "fieldft/nufft.hpp"

namespace fieldft::nufft::detail {

template <class T>
class PlanImpl {
 public:
  explicit PlanImpl(core::PlanSetup setup) : setup_(std::move(setup)) {}
  virtual ~PlanImpl() = default;
  // Validates the points (present, finite: kNonFinite naming the first bad index) and sorts them.
  virtual void set_points(std::int64_t m, const T* x, const T* y, const T* z) = 0;
  // Type 3: m sources x[0..dim) and nk targets s[0..dim) (core/type3.hpp validates them).
  virtual void set_points_type3(std::int64_t m, const T* const* x, std::int64_t nk, const T* const* s) = 0;
  // adjoint = false: the plan's own type; true: its adjoint (types 1/2: the other type with
  // -isign; type 3: the conjugate transpose).
  virtual void execute(const std::complex<T>* in, std::complex<T>* out, bool adjoint) = 0;
  const PlanInfo& info() const { return setup_.info; }
  bool has_points() const { return has_points_; }

 protected:
  core::PlanSetup setup_;
  bool has_points_ = false;
};

}  // namespace fieldft::nufft::detail
