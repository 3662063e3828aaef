// fieldft._core's operator layer: op::LinearOperator, its combinators and the MRI encodings,
// for the Python modules fieldft.op and fieldft.mri (python/fieldft/op.py, mri.py).
//
// Same rules as fieldft_module.cpp: the Python layer inspects every array (framework, dtype,
// shape, contiguity, device) and passes raw data pointers, so nothing here can copy or convert
// an array; only fieldft's own Python layer calls these functions. Shapes cross this boundary
// in the C++ order (x fastest, stacked copies last); op.py reverses them into Python order.
//
// Contexts: an operator is made at a place given as (device, stream, nthreads): device -1 is
// the host with `nthreads` OpenMP threads, device d >= 0 is CUDA device d ordering its work on
// the BORROWED stream `stream` (0 = the legacy default stream). `owner` is the Python object
// that owns that stream (a cupy or torch stream, or None): every Python operator made on the
// C++ operator, composites included, holds it and releases it only after the C++ operator, so
// a borrowed stream outlives its users. op.py orders each call against the caller's current
// stream (fieldft._arrays.StreamOrder).
//
// Threads: an operator must not run two calls at once, and composite operators share their
// operands (and their scratch memory), so one process-wide mutex serialises every operator
// call; the GIL is released while the library works. On CUDA a call only enqueues work, so
// the lock is held for microseconds.
#include <nanobind/nanobind.h>
#include <nanobind/stl/array.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <complex>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "fieldft/context.hpp"
#include "fieldft/error.hpp"
#include "fieldft/mri/density.hpp"
#include "fieldft/mri/encoding.hpp"
#include "fieldft/nufft.hpp"
#include "fieldft/op/combinators.hpp"
#include "fieldft/op/linear_operator.hpp"
#include "gil.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace fieldft::python {
namespace {


std::mutex& call_mutex() {
  static std::mutex m;
  return m;
}

Context make_context(int device, std::uintptr_t stream, int nthreads) {
  if (device < 0) return Context::host(nthreads);
  return Context::cuda(device, reinterpret_cast<void*>(stream));
}

op::Shape to_shape(const std::vector<std::int64_t>& v) { return op::Shape(v.begin(), v.end()); }

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

 private:
  static const Complex* in(std::uintptr_t p) { return reinterpret_cast<const Complex*>(p); }
  static Complex* out(std::uintptr_t p) { return reinterpret_cast<Complex*>(p); }
  template <class F>
  void run(F&& f) {
    without_gil([&] {
      std::lock_guard lock(call_mutex());
      f();
    });
  }
  // Declared before op_, so destroyed after it: the stream owners outlive the C++ operator.
  std::vector<nb::object> owners_;
  Ptr op_;
};

template <class T>
using Op = PyOperator<T>;

template <class T>
std::vector<op::OperatorPtr<T>> ptrs(const std::vector<const Op<T>*>& ops) {
  std::vector<op::OperatorPtr<T>> v;
  v.reserve(ops.size());
  for (const Op<T>* o : ops) {
    require(o != nullptr, ErrorCode::kInvalidArgument, "None is not an operator");
    v.push_back(o->ptr());
  }
  return v;
}

// Host values of a fixed array (diag, diag_expand): the caller's Python array, alive for the
// call; the C++ factories copy them to the operator's place.
template <class T>
std::span<const std::complex<T>> host_values(std::uintptr_t p, std::int64_t n) {
  require(n >= 0, ErrorCode::kInvalidArgument, "negative array length");
  return {reinterpret_cast<const std::complex<T>*>(p), static_cast<std::size_t>(n)};
}

// Builds an operator without the GIL (uploads and planning may take a while). `owners`: the
// Python owners of the streams it borrows (its operands' owners, or its stream's owner).
template <class T, class F>
Op<T> make(std::vector<nb::object> owners, F&& f) {
  op::OperatorPtr<T> result;
  without_gil([&] {
    std::lock_guard lock(call_mutex());  // combinators read their operands' state
    result = f();
  });
  return Op<T>(std::move(result), std::move(owners));
}

template <class T>
std::vector<nb::object> owners_of(const std::vector<const Op<T>*>& ops) {
  std::vector<nb::object> v;
  for (const Op<T>* o : ops)
    if (o) v.insert(v.end(), o->owners().begin(), o->owners().end());
  return v;
}

std::vector<nb::object> owner_list(const nb::object& owner) {
  if (!owner.is_valid() || owner.is_none()) return {};
  return {owner};
}

// The geometry of mri::Encoding, shared by the operators made on it.
template <class T>
struct PyEncoding {
  std::shared_ptr<const mri::Encoding<T>> e;
};

template <class T>
std::span<const T> real_span(std::uintptr_t p, std::int64_t n) {
  require(n >= 0, ErrorCode::kInvalidArgument, "negative array length");
  return {reinterpret_cast<const T*>(p), static_cast<std::size_t>(n)};
}

template <class T>
void bind_encoding(nb::module_& mod, const char* name) {
  using E = PyEncoding<T>;
  nb::class_<E>(mod, name)
      // grid: {Nx, Ny[, Nz]}; pointers to host arrays of m values (field: Nx·Ny·Nz; 0 = none).
      .def("__init__",
           [](E* self, const std::vector<std::int64_t>& grid, std::int64_t m, std::uintptr_t kx, std::uintptr_t ky,
              std::uintptr_t kz, std::uintptr_t times, std::int64_t ntimes, std::uintptr_t field,
              std::int64_t nfield, std::uintptr_t shots, std::int64_t nshots) {
             std::shared_ptr<const mri::Encoding<T>> e;
             without_gil([&] {
               const std::span<const std::int32_t> s{reinterpret_cast<const std::int32_t*>(shots),
                                                     static_cast<std::size_t>(nshots)};
               e = std::make_shared<const mri::Encoding<T>>(
                   std::span<const std::int64_t>(grid), real_span<T>(kx, m), real_span<T>(ky, m),
                   real_span<T>(kz, kz ? m : 0), real_span<T>(times, ntimes), real_span<T>(field, nfield), s);
             });
             new (self) E{std::move(e)};  // only once the encoding is valid
           },
           "grid"_a, "m"_a, "kx"_a, "ky"_a, "kz"_a, "times"_a, "ntimes"_a, "field"_a, "nfield"_a, "shots"_a,
           "nshots"_a)
      .def_prop_ro("dim", [](const E& e) { return e.e->dim(); })
      .def_prop_ro("grid", [](const E& e) { return e.e->grid(); })
      .def_prop_ro("num_samples", [](const E& e) { return e.e->num_samples(); })
      .def_prop_ro("num_shots", [](const E& e) { return e.e->num_shots(); })
      .def_prop_ro("has_field", [](const E& e) { return e.e->has_field(); })
      // mri::density_compensation (mri/density.hpp): the M weights, computed at the place
      // (device, stream, nthreads) as make_context reads it, into a host array of M values at `out`.
      .def("density_compensation",
           [](const E& e, std::uintptr_t out, int iterations, double oversampling, double eps,
              const nufft::Options& nufft_options, int device, std::uintptr_t stream, int nthreads) {
             without_gil([&] {
               mri::DensityOptions o;
               o.iterations = iterations;
               o.oversampling = oversampling;
               o.eps = eps;
               o.nufft = nufft_options;
               const std::vector<T> w = mri::density_compensation<T>(*e.e, make_context(device, stream, nthreads), o);
               std::copy(w.begin(), w.end(), reinterpret_cast<T*>(out));
             });
           },
           "out"_a, "iterations"_a, "oversampling"_a, "eps"_a, "options"_a, "device"_a, "stream"_a, "nthreads"_a);
}

template <class T>
void bind_operator(nb::module_& m, const char* name) {
  using O = Op<T>;
  using C = std::complex<T>;
  nb::class_<O> cls(m, name);
  cls.def("apply", &O::apply, "x"_a, "y"_a)
      .def("apply_adjoint", &O::apply_adjoint, "y"_a, "x"_a)
      .def("apply_normal", &O::apply_normal, "x"_a, "z"_a)
      .def("synchronize", &O::synchronize)
      .def_prop_ro("domain_shape", &O::domain_shape)
      .def_prop_ro("codomain_shape", &O::codomain_shape)
      .def_prop_ro("domain_size", &O::domain_size)
      .def_prop_ro("codomain_size", &O::codomain_size)
      .def_prop_ro("name", &O::name)
      .def_prop_ro("device", &O::device)
      .def_prop_ro("stream", &O::stream)
      .def_prop_ro("nthreads", &O::nthreads)
      .def_prop_ro("context", &O::context)
      // Combinators (op/combinators.hpp): shapes and places are checked there.
      .def_static("compose",
                  [](const O& a, const O& b) {
                    return make<T>(owners_of<T>({&a, &b}), [&] { return op::compose<T>(a.ptr(), b.ptr()); });
                  })
      .def_static("sum",
                  [](const std::vector<const O*>& ops) {
                    return make<T>(owners_of<T>(ops), [&] { return op::sum<T>(ptrs<T>(ops)); });
                  })
      .def_static("vstack",
                  [](const std::vector<const O*>& ops) {
                    return make<T>(owners_of<T>(ops), [&] { return op::vstack<T>(ptrs<T>(ops)); });
                  })
      .def_static("hstack",
                  [](const std::vector<const O*>& ops) {
                    return make<T>(owners_of<T>(ops), [&] { return op::hstack<T>(ptrs<T>(ops)); });
                  })
      .def_static("scale",
                  [](double re, double im, const O& a) {
                    return make<T>(a.owners(), [&] {
                      return op::scale<T>(C(static_cast<T>(re), static_cast<T>(im)), a.ptr());
                    });
                  })
      .def_static("adjoint",
                  [](const O& a) { return make<T>(a.owners(), [&] { return op::adjoint<T>(a.ptr()); }); })
      .def_static("batch",
                  [](const O& a, std::int64_t k) {
                    return make<T>(a.owners(), [&] { return op::batch<T>(a.ptr(), k); });
                  })
      // Operators made at a place: (device, stream, nthreads) as make_context reads them, and the
      // stream's Python owner.
      .def_static("identity",
                  [](const std::vector<std::int64_t>& shape, int device, std::uintptr_t stream, int nthreads,
                     nb::object owner) {
                    return make<T>(owner_list(owner), [&] {
                      return op::identity<T>(to_shape(shape), make_context(device, stream, nthreads));
                    });
                  },
                  "shape"_a, "device"_a, "stream"_a, "nthreads"_a, "owner"_a.none())
      .def_static("diag",
                  [](std::uintptr_t d, std::int64_t n, const std::vector<std::int64_t>& shape, int device,
                     std::uintptr_t stream, int nthreads, nb::object owner) {
                    return make<T>(owner_list(owner), [&] {
                      return op::diag<T>(host_values<T>(d, n), to_shape(shape), make_context(device, stream, nthreads));
                    });
                  },
                  "d"_a, "n"_a, "shape"_a, "device"_a, "stream"_a, "nthreads"_a, "owner"_a.none())
      .def_static("diag_expand",
                  [](std::uintptr_t d, std::int64_t n, const std::vector<std::int64_t>& shape, std::int64_t k,
                     int device, std::uintptr_t stream, int nthreads, nb::object owner) {
                    return make<T>(owner_list(owner), [&] {
                      return op::diag_expand<T>(host_values<T>(d, n), to_shape(shape), k,
                                                make_context(device, stream, nthreads));
                    });
                  },
                  "d"_a, "n"_a, "shape"_a, "k"_a, "device"_a, "stream"_a, "nthreads"_a, "owner"_a.none());
  // The MRI encodings (mri/encoding.hpp) on a PyEncoding.
  using E = PyEncoding<T>;
  cls.def_static("nufft_encoding",
                 [](const E& e, double eps, std::int64_t batch, const nufft::Options& nufft_options, int device,
                    std::uintptr_t stream, int nthreads, nb::object owner) {
                   return make<T>(owner_list(owner), [&]() -> op::OperatorPtr<T> {
                     mri::NufftEncodingOptions o;
                     o.eps = eps;
                     o.batch = batch;
                     o.nufft = nufft_options;
                     return std::make_shared<mri::NufftEncoding<T>>(e.e, make_context(device, stream, nthreads), o);
                   });
                 },
                 "encoding"_a, "eps"_a, "batch"_a, "options"_a, "device"_a, "stream"_a, "nthreads"_a,
                 "owner"_a.none())
      .def_static("dft_encoding",
                  [](const E& e, std::int64_t batch, bool r2, int device, std::uintptr_t stream, int nthreads,
                     nb::object owner) {
                    return make<T>(owner_list(owner), [&]() -> op::OperatorPtr<T> {
                      mri::DftEncodingOptions o;
                      o.batch = batch;
                      const Context c = make_context(device, stream, nthreads);
                      if (r2) return std::make_shared<mri::DftR2Encoding<T>>(e.e, c, o);
                      return std::make_shared<mri::DftEncoding<T>>(e.e, c, o);
                    });
                  },
                  "encoding"_a, "batch"_a, "r2"_a, "device"_a, "stream"_a, "nthreads"_a, "owner"_a.none());
}

}  // namespace

void bind_operators(nb::module_& m) {
  bind_operator<float>(m, "OperatorF");
  bind_operator<double>(m, "OperatorD");
  bind_encoding<float>(m, "EncodingF");
  bind_encoding<double>(m, "EncodingD");
}

}  // namespace fieldft::python
