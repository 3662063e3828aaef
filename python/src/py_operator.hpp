// The Python handle of an op::LinearOperator, shared by the binding files of the operator layer
// (op_bindings.cpp) and the solvers (solve_bindings.cpp). The rules are op_bindings.cpp's: one
// process-wide mutex serialises every operator call (composite operators share operands and
// scratch memory), the GIL is released while the library works, and the Python owners of
// borrowed streams outlive the C++ operator.
#pragma once

#include <nanobind/nanobind.h>

#include <complex>
#include <cstdint>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "fieldft/context.hpp"
#include "fieldft/error.hpp"
#include "fieldft/op/combinators.hpp"
#include "fieldft/op/linear_operator.hpp"
#include "gil.hpp"

namespace fieldft::python {

namespace nb = nanobind;

inline std::mutex& call_mutex() {
  static std::mutex m;
  return m;
}

inline Context make_context(int device, std::uintptr_t stream, int nthreads) {
  if (device < 0) return Context::host(nthreads);
  return Context::cuda(device, reinterpret_cast<void*>(stream));
}

inline op::Shape to_shape(const std::vector<std::int64_t>& v) { return op::Shape(v.begin(), v.end()); }

template <class T>
class PyOperator {
 public:
  using Complex = std::complex<T>;
  using Ptr = op::OperatorPtr<T>;

  PyOperator(Ptr op, std::vector<nb::object> owners) : owners_(std::move(owners)), op_(std::move(op)) {
    require(op_ != nullptr, ErrorCode::kInternal, "null operator reached the Python layer");
  }

  const Ptr& ptr() const { return op_; }
  const std::vector<nb::object>& owners() const { return owners_; }

  // x, y: pointers to domain_size() / codomain_size() elements at the operator's place.
  void apply(std::uintptr_t x, std::uintptr_t y) {
    run([&] { op_->apply(in(x), out(y)); });
  }
  void apply_adjoint(std::uintptr_t y, std::uintptr_t x) {
    run([&] { op_->apply_adjoint(in(y), out(x)); });
  }
  void apply_normal(std::uintptr_t x, std::uintptr_t z) {
    run([&] { op_->apply_normal(in(x), out(z)); });
  }
  // Builds what apply_normal needs now (LinearOperator::prepare_normal).
  void prepare_normal() {
    run([&] { op_->prepare_normal(); });
  }
  void synchronize() const {
    without_gil([&] { op_->context().synchronize(); });
  }

  std::vector<std::int64_t> domain_shape() const { return {op_->domain_shape().begin(), op_->domain_shape().end()}; }
  std::vector<std::int64_t> codomain_shape() const {
    return {op_->codomain_shape().begin(), op_->codomain_shape().end()};
  }
  std::int64_t domain_size() const { return op_->domain_size(); }
  std::int64_t codomain_size() const { return op_->codomain_size(); }
  std::string name() const { return op_->name(); }
  int device() const { return op_->context().is_cuda() ? op_->context().device() : -1; }
  std::uintptr_t stream() const { return reinterpret_cast<std::uintptr_t>(op_->context().stream()); }
  int nthreads() const { return op_->context().nthreads(); }
  std::string context() const { return op_->context().describe(); }

 // Runs f (a library call on ptr()) without the GIL and under the process-wide call lock. The
  // solver bindings run whole solves this way; a Python callback they call back into takes the
  // GIL again and must not call fieldft operators (the lock is not recursive).
  template <class F>
  void run(F&& f) {
    without_gil([&] {
      std::lock_guard lock(call_mutex());
      f();
    });
  }

 private:
  static const Complex* in(std::uintptr_t p) { return reinterpret_cast<const Complex*>(p); }
  static Complex* out(std::uintptr_t p) { return reinterpret_cast<Complex*>(p); }
  // Declared before op_, so destroyed after it: the stream owners outlive the C++ operator.
  std::vector<nb::object> owners_;
  Ptr op_;
};

}  // namespace fieldft::python
