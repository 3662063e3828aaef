// fieldft._core's solvers (include/fieldft/solve/*.hpp) on the operators of op_bindings.cpp, for
// python/fieldft/solve.py. Same rules as op_bindings.cpp: solve.py inspects every array and
// passes raw pointers at the operator's place; a solve runs without the GIL under the
// process-wide operator lock (py_operator.hpp).
//
// Callbacks: a Python callable called once per iteration with (iteration, residual, seconds,
// objective), with the GIL held; it returns False to stop (None or True go on). It must not call fieldft
// operators (the operator lock is held). An exception it raises stops the solver and is raised
// from the solve call.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <atomic>
#include <barrier>
#include <complex>
#include <cstdint>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "fieldft/solve/admm.hpp"
#include "fieldft/solve/cg.hpp"
#include "fieldft/solve/fista.hpp"
#include "fieldft/solve/max_eigenvalue.hpp"
#include "fieldft/solve/pwls_pcg.hpp"
#include "py_comm.hpp"
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

  bool operator()(const solve::Report& rep) {
    nb::gil_scoped_acquire gil;
    try {
      nb::object r = callback_(rep.iteration, rep.residual, rep.seconds, rep.objective);
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
  // The C++ callback for a solver's options (empty without a Python callback).
  solve::Callback callback() {
    if (!active()) return {};
    return [this](const solve::Report& r) { return (*this)(r); };
  }

 private:
  nb::object callback_;
  bool failed_ = false;
};

nb::dict result_dict(const solve::Result& result) {
  nb::dict d;
  d["iterations"] = result.iterations;
  d["residual"] = result.residual;
  d["converged"] = result.converged;
  d["stopped"] = result.stopped;
  d["seconds"] = result.seconds;
  d["objective"] = result.objective;
  return d;
}

template <class T>
const std::complex<T>* cptr(std::uintptr_t p) {
  return reinterpret_cast<const std::complex<T>*>(p);
}

// Runs `solve` (a call on the operator a) under the operator lock without the GIL, then raises
// a pending callback exception.
template <class T, class F>
nb::dict run_solver(PyOperator<T>& a, PyCallback& cb, F&& solve) {
  solve::Result result;
  a.run([&] { result = solve(); });
  cb.raise_pending();
  return result_dict(result);
}

template <class T>
nb::dict cg(PyOperator<T>& a, std::uintptr_t y, std::uintptr_t x, std::uintptr_t weights, int max_iterations,
            double tolerance, double lambda, int check_every, nb::object callback) {
  PyCallback cb(std::move(callback));
  solve::CgOptions o;
  o.max_iterations = max_iterations;
  o.tolerance = tolerance;
  o.lambda = lambda;
  o.check_every = check_every;
  o.callback = cb.callback();
  return run_solver(a, cb, [&] {
    return solve::cg<T>(*a.ptr(), cptr<T>(y), reinterpret_cast<std::complex<T>*>(x), cptr<T>(weights), o);
  });
}

// r, preconditioner: the penalty's operator and a diagonal preconditioner (0: none).
template <class T>
nb::dict pwls_pcg(PyOperator<T>& a, std::uintptr_t y, std::uintptr_t x, std::uintptr_t weights, PyOperator<T>& r,
                  std::uintptr_t preconditioner, int max_iterations, double tolerance, double beta, int potential,
                  double delta, int line_search_iterations, nb::object callback) {
  PyCallback cb(std::move(callback));
  solve::PwlsOptions o;
  o.max_iterations = max_iterations;
  o.tolerance = tolerance;
  o.beta = beta;
  o.potential = static_cast<solve::Potential>(potential);
  o.delta = delta;
  o.line_search_iterations = line_search_iterations;
  o.callback = cb.callback();
  return run_solver(a, cb, [&] {
    return solve::pwls_pcg<T>(*a.ptr(), cptr<T>(y), reinterpret_cast<std::complex<T>*>(x), cptr<T>(weights),
                              *r.ptr(), cptr<T>(preconditioner), o);
  });
}

// psi: a unitary sparsifying operator, or None for the identity.
template <class T>
nb::dict fista(PyOperator<T>& a, std::uintptr_t y, std::uintptr_t x, std::uintptr_t weights, PyOperator<T>* psi,
               int max_iterations, double tolerance, double lambda, double lipschitz, int power_iterations,
               bool monotone, nb::object callback) {
  PyCallback cb(std::move(callback));
  solve::FistaOptions o;
  o.max_iterations = max_iterations;
  o.tolerance = tolerance;
  o.lambda = lambda;
  o.lipschitz = lipschitz;
  o.power_iterations = power_iterations;
  o.monotone = monotone;
  o.callback = cb.callback();
  return run_solver(a, cb, [&] {
    return solve::fista<T>(*a.ptr(), cptr<T>(y), reinterpret_cast<std::complex<T>*>(x), cptr<T>(weights),
                           psi ? psi->ptr().get() : nullptr, o);
  });
}

template <class T>
nb::dict admm(PyOperator<T>& a, std::uintptr_t y, std::uintptr_t x, std::uintptr_t weights, PyOperator<T>& r,
              int max_iterations, double tolerance, double lambda, double rho, int cg_iterations, bool isotropic,
              nb::object callback) {
  PyCallback cb(std::move(callback));
  solve::AdmmOptions o;
  o.max_iterations = max_iterations;
  o.tolerance = tolerance;
  o.lambda = lambda;
  o.rho = rho;
  o.cg_iterations = cg_iterations;
  o.isotropic = isotropic;
  o.callback = cb.callback();
  return run_solver(a, cb, [&] {
    return solve::admm<T>(*a.ptr(), cptr<T>(y), reinterpret_cast<std::complex<T>*>(x), cptr<T>(weights), *r.ptr(),
                          o);
  });
}

// The same CG on K ranks of this process at once, one host thread each (rank r: ops[r], a
// dist::rank_sum over comms[r]; y, x, weights at its place). Every rank's collectives must run
// concurrently (an NCCL group of one process waits for all its ranks), which one Python thread per
// rank cannot do under the process-wide operator lock; so the threads run here, under that lock,
// on behalf of the caller; rank 0 runs on the calling thread. The callback is rank 0's; with K > 1
// the ranks meet after each iteration to take its decision together (so that all stop at once).
// A rank that throws aborts its communicator (an NCCL group of this process: its peers'
// collectives then fail instead of waiting; MPI: the whole job stops) and the first error is
// raised. Returns rank 0's result.
template <class T>
nb::dict cg_ranks(const std::vector<PyOperator<T>*>& ops, const std::vector<const PyComm*>& comms,
                  const std::vector<std::uintptr_t>& ys, const std::vector<std::uintptr_t>& xs,
                  const std::vector<std::uintptr_t>& ws, int max_iterations, double tolerance, double lambda,
                  nb::object callback) {
  const std::size_t k = ops.size();
  require(k >= 1 && comms.size() == k && ys.size() == k && xs.size() == k && ws.size() == k,
          ErrorCode::kInvalidArgument, "cg_ranks: one operator, communicator, y, x and weights per rank");
  for (std::size_t r = 0; r < k; ++r)
    require(ops[r] != nullptr && comms[r] != nullptr, ErrorCode::kInvalidArgument, "cg_ranks: None given");
  PyCallback cb(std::move(callback));
  solve::Result result;
  std::exception_ptr failed;
  std::mutex failed_mutex;
  std::atomic<bool> go_on{true};
  std::barrier<> meet(static_cast<std::ptrdiff_t>(k));
  const auto run = [&](std::size_t r) {
    solve::CgOptions o;
    o.max_iterations = max_iterations;
    o.tolerance = tolerance;
    o.lambda = lambda;
    if (cb.active())
      o.callback = [&, r](const solve::Report& rep) {
        if (r == 0) go_on = cb(rep);  // takes the GIL
        if (k == 1) return go_on.load();
        meet.arrive_and_wait();  // rank 0's decision is in
        const bool g = go_on.load();
        meet.arrive_and_wait();  // every rank has read it before rank 0 writes the next
        return g;
      };
    try {
      const solve::Result res = solve::cg<T>(*ops[r]->ptr(), cptr<T>(ys[r]), reinterpret_cast<std::complex<T>*>(xs[r]),
                                             cptr<T>(ws[r]), o);
      if (r == 0) result = res;
    } catch (const std::exception& e) {
      {
        const std::lock_guard<std::mutex> lock(failed_mutex);
        if (!failed) failed = std::current_exception();
      }
      if (k > 1) meet.arrive_and_drop();  // the others no longer wait for this rank's decisions
      const dist::CommPtr& c = comms[r]->comm;
      if (c->size() > 1) c->abort("rank " + std::to_string(c->rank()) + " of " + std::to_string(c->size()) + ": " + e.what());
    }
  };
  without_gil([&] {
    std::lock_guard lock(call_mutex());
    // Rank 0 on this thread: its callback's Python error stays in this thread's state.
    std::vector<std::thread> threads;
    for (std::size_t r = 1; r < k; ++r) threads.emplace_back(run, r);
    run(0);
    for (auto& t : threads) t.join();
  });
  if (failed) std::rethrow_exception(failed);
  cb.raise_pending();
  return result_dict(result);
}

template <class T>
double max_eigenvalue(PyOperator<T>& n, int iterations) {
  double v = 0;
  n.run([&] { v = solve::max_eigenvalue<T>(*n.ptr(), iterations); });
  return v;
}

template <class T>
void bind_precision(nb::module_& m, const char* suffix) {
  const std::string s(suffix);
  // y, x, weights: pointers at the operator's place (weights 0: W = I).
  m.def(("cg" + s).c_str(), &cg<T>, "a"_a, "y"_a, "x"_a, "weights"_a, "max_iterations"_a, "tolerance"_a, "lam"_a,
        "check_every"_a, "callback"_a.none());
  m.def(("pwls_pcg" + s).c_str(), &pwls_pcg<T>, "a"_a, "y"_a, "x"_a, "weights"_a, "r"_a, "preconditioner"_a,
        "max_iterations"_a, "tolerance"_a, "beta"_a, "potential"_a, "delta"_a, "line_search_iterations"_a,
        "callback"_a.none());
  m.def(("fista" + s).c_str(), &fista<T>, "a"_a, "y"_a, "x"_a, "weights"_a, "psi"_a.none(), "max_iterations"_a,
        "tolerance"_a, "lam"_a, "lipschitz"_a, "power_iterations"_a, "monotone"_a, "callback"_a.none());
  m.def(("admm" + s).c_str(), &admm<T>, "a"_a, "y"_a, "x"_a, "weights"_a, "r"_a, "max_iterations"_a, "tolerance"_a,
        "lam"_a, "rho"_a, "cg_iterations"_a, "isotropic"_a, "callback"_a.none());
  m.def(("max_eigenvalue" + s).c_str(), &max_eigenvalue<T>, "n"_a, "iterations"_a);
  m.def(("cg_ranks" + s).c_str(), &cg_ranks<T>, "ops"_a, "comms"_a, "ys"_a, "xs"_a, "weights"_a, "max_iterations"_a,
        "tolerance"_a, "lam"_a, "callback"_a.none());
}

}  // namespace

void bind_solvers(nb::module_& m) {
  bind_precision<float>(m, "_f");
  bind_precision<double>(m, "_d");
}

}  // namespace fieldft::python
