// fieldft._core's solvers (include/fieldft/solve/*.hpp) on the operators of op_bindings.cpp, for
// python/fieldft/solve.py. Same rules as op_bindings.cpp: solve.py inspects every array and
// passes raw pointers at the operator's place; a solve runs without the GIL under the
// process-wide operator lock (py_operator.hpp).
//
// Callbacks: a Python callable called once per iteration with (iteration, residual, seconds),
// with the GIL held; it returns False to stop (None or True go on). It must not call fieldft
// operators (the operator lock is held). An exception it raises stops the solver and is raised
// from the solve call.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <complex>
#include <cstdint>

#include "fieldft/solve/cg.hpp"
#include "py_operator.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace fieldft::python {
namespace {

// A C++ per-iteration callback that calls `callback` with the GIL held. A Python exception is
// parked in the interpreter's error indicator and stops the solver; raise_pending() raises it
// once the solve has returned (and the GIL is held again).
class PyCallback {
 public:
  explicit PyCallback(nb::object callback) : callback_(std::move(callback)) {}
  bool active() const { return callback_.is_valid() && !callback_.is_none(); }

  bool operator()(int iteration, double residual, double seconds) {
    nb::gil_scoped_acquire gil;
    try {
      nb::object r = callback_(iteration, residual, seconds);
      return r.is_none() || nb::cast<bool>(r);
    } catch (nb::python_error& e) {
      e.restore();
      failed_ = true;
      return false;
    } catch (const nb::cast_error&) {
      PyErr_SetString(PyExc_TypeError, "the solver's callback must return None, True or False");
      failed_ = true;
      return false;
    }
  }
  void raise_pending() const {
    if (failed_) throw nb::python_error();
  }

 private:
  nb::object callback_;
  bool failed_ = false;
};

template <class T>
nb::dict cg(PyOperator<T>& a, std::uintptr_t y, std::uintptr_t x, std::uintptr_t weights, int max_iterations,
            double tolerance, double lambda, nb::object callback) {
  using C = std::complex<T>;
  solve::CgOptions o;
  o.max_iterations = max_iterations;
  o.tolerance = tolerance;
  o.lambda = lambda;
  PyCallback cb(std::move(callback));
  if (cb.active())
    o.callback = [&cb](const solve::CgReport& r) { return cb(r.iteration, r.residual, r.seconds); };
  solve::CgResult result;
  a.run([&] {
    result = solve::cg<T>(*a.ptr(), reinterpret_cast<const C*>(y), reinterpret_cast<C*>(x),
                          reinterpret_cast<const C*>(weights), o);
  });
  cb.raise_pending();
  nb::dict d;
  d["iterations"] = result.iterations;
  d["residual"] = result.residual;
  d["converged"] = result.converged;
  d["stopped"] = result.stopped;
  d["seconds"] = result.seconds;
  return d;
}

}  // namespace

void bind_solvers(nb::module_& m) {
  // y, x, weights: pointers at the operator's place (weights 0: W = I).
  m.def("cg_f", &cg<float>, "a"_a, "y"_a, "x"_a, "weights"_a, "max_iterations"_a, "tolerance"_a, "lam"_a,
        "callback"_a.none());
  m.def("cg_d", &cg<double>, "a"_a, "y"_a, "x"_a, "weights"_a, "max_iterations"_a, "tolerance"_a, "lam"_a,
        "callback"_a.none());
}

}  // namespace fieldft::python
