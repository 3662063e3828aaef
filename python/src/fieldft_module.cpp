// fieldft._core — the nanobind bridge between Python and the fieldft C++ library.
//
// Deliberately thin. The Python layer (fieldft/_arrays.py) inspects every array — framework
// (numpy, cupy, torch, any __cuda_array_interface__ producer), dtype, shape, contiguity,
// device — and passes raw data pointers here. Why pointers rather than nb::ndarray: one path
// serves every framework; no DLPack export happens per call (an export without a stream makes
// the producer order its current stream against the legacy default stream, a side effect we do
// not want on every execute); torch tensors that require grad are accepted; and "no copy" is
// true by construction, since nothing here can convert an array. The price is that a pointer
// here is trusted: only fieldft's own Python layer calls these functions.
//
// The GIL is released around every call into the library (transforms, point setup, DFTs), and
// each wrapped plan/operator holds a mutex, because a fieldft plan must not be used by two
// threads at once (include/fieldft/nufft.hpp) and releasing the GIL would otherwise allow it.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/array.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <array>
#include <complex>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <vector>

#include "fieldft/config.hpp"
#include "fieldft/error.hpp"
#include "fieldft/mri/dft.hpp"
#include "fieldft/nufft.hpp"
#include "fieldft/runtime.hpp"
#include "gil.hpp"

#if FIELDFT_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace nb = nanobind;
using namespace nb::literals;

namespace fieldft::python {
namespace {

// ---------------------------------------------------------------------------------------------
// Errors: one Python class per fieldft::ErrorCode, all subclasses of fieldft.Error and of the
// builtin exception a Python user expects for that kind of failure (ValueError for bad input,
// MemoryError, NotImplementedError, RuntimeError for the rest).

struct ErrorClass {
  ErrorCode code;
  const char* name;
  PyObject* builtin;  // filled at module init (the builtins are not constants in the C API)
  PyObject* type = nullptr;
};

std::vector<ErrorClass>& error_classes() {
  static std::vector<ErrorClass> classes = {
      {ErrorCode::kInvalidArgument, "InvalidArgumentError", nullptr},
      {ErrorCode::kNonFinite, "NonFiniteError", nullptr},
      {ErrorCode::kShapeMismatch, "ShapeMismatchError", nullptr},
      {ErrorCode::kEpsTooSmall, "EpsTooSmallError", nullptr},
      {ErrorCode::kTooLarge, "TooLargeError", nullptr},
      {ErrorCode::kOutOfMemory, "OutOfMemoryError", nullptr},
      {ErrorCode::kBackendUnavailable, "BackendUnavailableError", nullptr},
      {ErrorCode::kNotImplemented, "NotImplementedFeatureError", nullptr},
      {ErrorCode::kCuda, "CudaError", nullptr},
      {ErrorCode::kInvalidState, "InvalidStateError", nullptr},
      {ErrorCode::kInternal, "InternalError", nullptr},
      {ErrorCode::kContextMismatch, "ContextMismatchError", nullptr},
  };
  return classes;
}

PyObject* builtin_for(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument:
    case ErrorCode::kNonFinite:
    case ErrorCode::kShapeMismatch:
    case ErrorCode::kEpsTooSmall:
    case ErrorCode::kTooLarge:
    case ErrorCode::kContextMismatch: return PyExc_ValueError;
    case ErrorCode::kOutOfMemory: return PyExc_MemoryError;
    case ErrorCode::kNotImplemented: return PyExc_NotImplementedError;
    default: return PyExc_RuntimeError;
  }
}

PyObject* g_base_error = nullptr;

void register_errors(nb::module_& m) {
  g_base_error = PyErr_NewExceptionWithDoc(
      "fieldft.Error",
      "Base class of the errors raised by the fieldft library. `code` is the fieldft::ErrorCode "
      "value and `code_name` its short name; every subclass also derives from the builtin "
      "exception that fits (ValueError for invalid input, RuntimeError otherwise).",
      PyExc_Exception, nullptr);
  if (!g_base_error) throw nb::python_error();
  m.attr("Error") = nb::handle(g_base_error);
  for (ErrorClass& c : error_classes()) {
    c.builtin = builtin_for(c.code);
    nb::object bases = nb::make_tuple(nb::handle(g_base_error), nb::handle(c.builtin));
    nb::dict attrs;
    attrs["code"] = static_cast<int>(c.code);
    attrs["code_name"] = error_code_name(c.code);
    const std::string qualified = std::string("fieldft.") + c.name;
    c.type = PyErr_NewException(qualified.c_str(), bases.ptr(), attrs.ptr());
    if (!c.type) throw nb::python_error();
    m.attr(c.name) = nb::handle(c.type);
  }
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const Error& e) {
      for (const ErrorClass& c : error_classes()) {
        if (c.code == e.code()) {
          PyErr_SetString(c.type, e.what());
          return;
        }
      }
      PyErr_SetString(g_base_error, e.what());
    }
  });
}


// ---------------------------------------------------------------------------------------------
// CUDA helpers used by the Python layer to order fieldft's stream against a framework's stream.

#if FIELDFT_HAVE_CUDA
void cuda_check(cudaError_t status, const char* what) {
  if (status != cudaSuccess)
    throw Error(ErrorCode::kCuda, std::string(what) + " failed: " + cudaGetErrorString(status));
}

// Makes `device` current for the scope, restoring the caller's device afterwards.
class CurrentDevice {
 public:
  explicit CurrentDevice(int device) {
    cuda_check(cudaGetDevice(&previous_), "cudaGetDevice");
    if (previous_ != device) cuda_check(cudaSetDevice(device), "cudaSetDevice");
  }
  ~CurrentDevice() { cudaSetDevice(previous_); }
  CurrentDevice(const CurrentDevice&) = delete;
  CurrentDevice& operator=(const CurrentDevice&) = delete;

 private:
  int previous_ = 0;
};
#endif

// Work queued on `waiter` after this call starts only once the work queued on `producer` so far
// is done. Asynchronous: the host does not wait.
void stream_wait(int device, std::uintptr_t waiter, std::uintptr_t producer) {
#if FIELDFT_HAVE_CUDA
  if (waiter == producer) return;
  without_gil([&] {
    CurrentDevice guard(device);
    cudaEvent_t event = nullptr;
    cuda_check(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), "cudaEventCreateWithFlags");
    cudaError_t status = cudaEventRecord(event, reinterpret_cast<cudaStream_t>(producer));
    if (status == cudaSuccess) status = cudaStreamWaitEvent(reinterpret_cast<cudaStream_t>(waiter), event, 0);
    cudaEventDestroy(event);  // released by the runtime once the wait has been satisfied
    cuda_check(status, "ordering two CUDA streams (cudaEventRecord / cudaStreamWaitEvent)");
  });
#else
  (void)device, (void)waiter, (void)producer;
  throw Error(ErrorCode::kBackendUnavailable, "this fieldft was built without CUDA");
#endif
}

void stream_synchronize(int device, std::uintptr_t stream) {
#if FIELDFT_HAVE_CUDA
  without_gil([&] {
    CurrentDevice guard(device);
    cuda_check(cudaStreamSynchronize(reinterpret_cast<cudaStream_t>(stream)), "cudaStreamSynchronize");
  });
#else
  (void)device, (void)stream;
  throw Error(ErrorCode::kBackendUnavailable, "this fieldft was built without CUDA");
#endif
}

// The CUDA device that owns `ptr`, or -1 for host memory (or a build without CUDA).
int pointer_device(std::uintptr_t ptr) {
#if FIELDFT_HAVE_CUDA
  if (ptr == 0) return -1;
  cudaPointerAttributes a{};
  if (cudaPointerGetAttributes(&a, reinterpret_cast<const void*>(ptr)) != cudaSuccess) {
    cudaGetLastError();  // an unknown pointer is host memory; clear the sticky error
    return -1;
  }
  return (a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged) ? a.device : -1;
#else
  (void)ptr;
  return -1;
#endif
}

// ---------------------------------------------------------------------------------------------
// NUFFT plans.

// Type 3 (set_points with targets, PlanInfo::num_targets) is detected from the C++ API itself,
// so this file compiles against headers with or without it.
template <class T>
concept Type3PointsApi = requires(nufft::Plan<T>& p, std::int64_t n, const T* r) {
  p.set_points(n, r, r, r, n, r, r, r);
};
template <class I>
concept HasNumTargets = requires(const I& info) { info.num_targets; };
constexpr bool kHaveType3 = Type3PointsApi<float> && Type3PointsApi<double> &&
                            HasNumTargets<nufft::PlanInfo>;

template <class T>
const T* real_ptr(std::uintptr_t p) {
  return reinterpret_cast<const T*>(p);
}

template <class T>
class PyPlan {
 public:
  using Complex = std::complex<T>;

  PyPlan(int type, const std::vector<std::int64_t>& modes, int isign, std::int64_t ntransf, double eps,
         const nufft::Options& options)
      : type_(type) {
    // Planning may take a while (fft_planning = measure): without the GIL.
    without_gil([&] { plan_ = std::make_unique<nufft::Plan<T>>(type, modes, isign, ntransf, eps, options); });
  }

  // Coordinates in the C++ order (x fastest); zero pointers for unused ones.
  void set_points(std::int64_t m, std::uintptr_t x, std::uintptr_t y, std::uintptr_t z, std::int64_t nk,
                  std::uintptr_t s, std::uintptr_t t, std::uintptr_t u) {
    without_gil([&] {
      std::lock_guard lock(mutex_);
      if (type_ == 3) {
        if constexpr (Type3PointsApi<T>) {
          plan_->set_points(m, real_ptr<T>(x), real_ptr<T>(y), real_ptr<T>(z), nk, real_ptr<T>(s),
                            real_ptr<T>(t), real_ptr<T>(u));
        } else {
          (void)nk, (void)s, (void)t, (void)u;
          throw Error(ErrorCode::kNotImplemented, "this fieldft library has no type 3 NUFFT yet");
        }
      } else {
        plan_->set_points(m, real_ptr<T>(x), real_ptr<T>(y), real_ptr<T>(z));
      }
    });
  }

  void execute(std::uintptr_t in, std::uintptr_t out, bool adjoint) {
    const auto* pin = reinterpret_cast<const Complex*>(in);
    auto* pout = reinterpret_cast<Complex*>(out);
    without_gil([&] {
      std::lock_guard lock(mutex_);
      adjoint ? plan_->execute_adjoint(pin, pout) : plan_->execute(pin, pout);
    });
  }

  const nufft::PlanInfo& info() const { return plan_->info(); }

  std::int64_t num_targets() const {
    if constexpr (HasNumTargets<nufft::PlanInfo>)
      return plan_->info().num_targets;
    else
      return 0;
  }

 private:
  std::unique_ptr<nufft::Plan<T>> plan_;
  int type_;
  std::mutex mutex_;
};

template <class T>
void bind_plan(nb::module_& m, const char* name) {
  using P = PyPlan<T>;
  nb::class_<P>(m, name)
      .def(nb::init<int, const std::vector<std::int64_t>&, int, std::int64_t, double, const nufft::Options&>(),
           "type"_a, "modes"_a, "isign"_a, "ntransf"_a, "eps"_a, "options"_a)
      .def("set_points", &P::set_points, "m"_a, "x"_a, "y"_a, "z"_a, "nk"_a, "s"_a, "t"_a, "u"_a)
      .def("execute", &P::execute, "inp"_a, "out"_a, "adjoint"_a)
      .def_prop_ro("type", [](const P& p) { return p.info().type; })
      .def_prop_ro("dim", [](const P& p) { return p.info().dim; })
      .def_prop_ro("modes", [](const P& p) { return p.info().modes; })
      .def_prop_ro("fine_grid", [](const P& p) { return p.info().fine_grid; })
      .def_prop_ro("isign", [](const P& p) { return p.info().isign; })
      .def_prop_ro("ntransf", [](const P& p) { return p.info().ntransf; })
      .def_prop_ro("eps", [](const P& p) { return p.info().eps; })
      .def_prop_ro("upsampfac", [](const P& p) { return p.info().upsampfac; })
      .def_prop_ro("kernel_width", [](const P& p) { return p.info().kernel_width; })
      .def_prop_ro("kernel_beta", [](const P& p) { return p.info().kernel_beta; })
      .def_prop_ro("horner_degree", [](const P& p) { return p.info().horner_degree; })
      .def_prop_ro("max_batch", [](const P& p) { return p.info().max_batch; })
      .def_prop_ro("bin_size", [](const P& p) { return p.info().bin_size; })
      .def_prop_ro("spread_boxes", [](const P& p) { return p.info().spread_boxes; })
      .def_prop_ro("spread_tensor_cores", [](const P& p) { return p.info().spread_tensor_cores; })
      .def_prop_ro("type3_direct", [](const P& p) { return p.info().type3_direct; })
      .def_prop_ro("spread_interp_only", [](const P& p) { return p.info().spread_interp_only; })
      .def_prop_ro("nthreads", [](const P& p) { return p.info().nthreads; })
      .def_prop_ro("precomputed_bytes", [](const P& p) { return p.info().precomputed_bytes; })
      .def_prop_ro("backend", [](const P& p) { return std::string(backend_name(p.info().backend)); })
      .def_prop_ro("method", [](const P& p) { return std::string(nufft::method_name(p.info().method)); })
      .def_prop_ro("configured_by", [](const P& p) { return p.info().configured_by; })
      .def_prop_ro("modeord", [](const P& p) { return p.info().modeord; })
      .def_prop_ro("num_points", [](const P& p) { return p.info().num_points; })
      .def_prop_ro("num_targets", &P::num_targets);
}

void bind_options(nb::module_& m) {
  using nufft::Options;
  nb::class_<Options>(m, "Options")
      .def(nb::init<>())
      .def_prop_rw(
          "backend", [](const Options& o) { return std::string(backend_name(o.backend)); },
          [](Options& o, const std::string& s) { o.backend = parse_backend(s); })
      .def_prop_rw(
          "method", [](const Options& o) { return std::string(nufft::method_name(o.method)); },
          [](Options& o, const std::string& s) { o.method = nufft::parse_method(s); })
      .def_prop_rw(
          "fft_planning",
          [](const Options& o) {
            return std::string(o.fft_planning == nufft::FftPlanning::kMeasure ? "measure" : "estimate");
          },
          [](Options& o, const std::string& s) {
            require(s == "estimate" || s == "measure", ErrorCode::kInvalidArgument,
                    "fft_planning must be 'estimate' or 'measure', got '" + s + "'");
            o.fft_planning = s == "measure" ? nufft::FftPlanning::kMeasure : nufft::FftPlanning::kEstimate;
          })
      .def_prop_rw(
          "planning", [](const Options& o) { return std::string(nufft::planning_name(o.planning)); },
          [](Options& o, const std::string& s) { o.planning = nufft::parse_planning(s); })
      .def_rw("wisdom_path", &Options::wisdom_path)
      .def_rw("modeord", &Options::modeord)
      .def_rw("upsampfac", &Options::upsampfac)
      .def_rw("max_batch", &Options::max_batch)
      .def_rw("bin_size", &Options::bin_size)
      .def_rw("spread_boxes", &Options::spread_boxes)
      .def_rw("type3_direct", &Options::type3_direct)
      .def_rw("spread_interp_only", &Options::spread_interp_only)
      .def_rw("reuse", &Options::reuse)
      .def_rw("precompute_max_bytes", &Options::precompute_max_bytes)
      .def_rw("nthreads", &Options::nthreads)
      .def_rw("device", &Options::device)
      .def_prop_rw(
          "stream", [](const Options& o) { return reinterpret_cast<std::uintptr_t>(o.stream); },
          [](Options& o, std::uintptr_t s) { o.stream = reinterpret_cast<void*>(s); });
}

// ---------------------------------------------------------------------------------------------
// Field-corrected DFT operators. Construction data are host arrays (the C++ constructors copy
// them), so nb::ndarray is the right tool there; per-call vectors come as pointers as above.

template <class T>
using HostVector = nb::ndarray<const T, nb::ndim<1>, nb::c_contig, nb::device::cpu>;

template <class T>
std::span<const T> span_of(const HostVector<T>& a) {
  return {a.data(), static_cast<std::size_t>(a.shape(0))};
}

template <class T>
class PyDft {
 public:
  using Complex = std::complex<T>;

  PyDft(const std::vector<std::int64_t>& grid, const HostVector<T>& kx, const HostVector<T>& ky,
        const HostVector<T>& kz, const HostVector<T>& field, const HostVector<T>& times, bool r2,
        const HostVector<T>& gx, const HostVector<T>& gy, const HostVector<T>& gz, bool given_gradients,
        const mri::DftOptions& options) {
    without_gil([&] {
      if (!r2) {
        op_ = std::make_unique<mri::Dft<T>>(grid, span_of(kx), span_of(ky), span_of(kz), span_of(field),
                                            span_of(times), options);
      } else if (!given_gradients) {
        op_ = std::make_unique<mri::DftR2<T>>(grid, span_of(kx), span_of(ky), span_of(kz), span_of(field),
                                              span_of(times), options);
      } else {
        const mri::GradientMaps<T> g{span_of(gx), span_of(gy), span_of(gz)};
        op_ = std::make_unique<mri::DftR2<T>>(grid, span_of(kx), span_of(ky), span_of(kz), span_of(field),
                                              span_of(times), g, options);
      }
    });
  }

  // on_device: the Python layer saw device arrays (CUDA backend only).
  void forward(std::uintptr_t image, std::uintptr_t samples, bool on_device) {
    const auto* in = reinterpret_cast<const Complex*>(image);
    auto* out = reinterpret_cast<Complex*>(samples);
    without_gil([&] {
      std::lock_guard lock(mutex_);
      if (!on_device) return op_->forward(in, out);
      op_->forward_device(in, out);  // stream-ordered: Python expects the result on return
      op_->context().synchronize();
    });
  }

  void adjoint(std::uintptr_t samples, std::uintptr_t image, bool on_device) {
    const auto* in = reinterpret_cast<const Complex*>(samples);
    auto* out = reinterpret_cast<Complex*>(image);
    without_gil([&] {
      std::lock_guard lock(mutex_);
      if (!on_device) return op_->adjoint(in, out);
      op_->adjoint_device(in, out);  // stream-ordered: Python expects the result on return
      op_->context().synchronize();
    });
  }

  const mri::Dft<T>& op() const { return *op_; }

 private:
  std::unique_ptr<mri::Dft<T>> op_;
  std::mutex mutex_;
};

template <class T>
void bind_dft(nb::module_& m, const char* name) {
  using D = PyDft<T>;
  nb::class_<D>(m, name)
      .def(nb::init<const std::vector<std::int64_t>&, const HostVector<T>&, const HostVector<T>&,
                    const HostVector<T>&, const HostVector<T>&, const HostVector<T>&, bool,
                    const HostVector<T>&, const HostVector<T>&, const HostVector<T>&, bool,
                    const mri::DftOptions&>(),
           "grid"_a, "kx"_a, "ky"_a, "kz"_a, "field"_a, "times"_a, "r2"_a, "gx"_a, "gy"_a, "gz"_a,
           "given_gradients"_a, "options"_a)
      .def("forward", &D::forward, "image"_a, "samples"_a, "on_device"_a)
      .def("adjoint", &D::adjoint, "samples"_a, "image"_a, "on_device"_a)
      .def_prop_ro("dim", [](const D& d) { return d.op().dim(); })
      .def_prop_ro("grid", [](const D& d) { return d.op().grid(); })
      .def_prop_ro("num_voxels", [](const D& d) { return d.op().num_voxels(); })
      .def_prop_ro("num_samples", [](const D& d) { return d.op().num_samples(); })
      .def_prop_ro("images", [](const D& d) { return d.op().images(); })
      .def_prop_ro("r2", [](const D& d) { return d.op().r2(); })
      .def_prop_ro("backend", [](const D& d) { return std::string(backend_name(d.op().backend())); });
}

void bind_dft_options(nb::module_& m) {
  using mri::DftOptions;
  nb::class_<DftOptions>(m, "DftOptions")
      .def(nb::init<>())
      .def_prop_rw(
          "backend", [](const DftOptions& o) { return std::string(backend_name(o.backend)); },
          [](DftOptions& o, const std::string& s) { o.backend = parse_backend(s); })
      .def_rw("images", &DftOptions::images)
      .def_rw("nthreads", &DftOptions::nthreads)
      .def_rw("device", &DftOptions::device)
      .def_prop_rw(
          "stream", [](const DftOptions& o) { return reinterpret_cast<std::uintptr_t>(o.stream); },
          [](DftOptions& o, std::uintptr_t s) { o.stream = reinterpret_cast<void*>(s); });
}

// ---------------------------------------------------------------------------------------------

nb::dict build_info_dict() {
  const BuildInfo b = build_info();
  nb::dict d;
  d["version"] = b.version;
  d["cuda"] = b.cuda;
  d["cuda_architectures"] = b.cuda_architectures;
  d["build_type"] = b.build_type;
  d["compiler"] = b.compiler;
  d["fftw_version"] = b.fftw_version;
  d["cpu_threads"] = b.cpu_threads;
  d["type3"] = kHaveType3;
  return d;
}

nb::list cuda_devices_list() {
  nb::list out;
  for (const DeviceInfo& dev : cuda_devices()) {
    nb::dict d;
    d["id"] = dev.id;
    d["name"] = dev.name;
    d["compute_capability"] = nb::make_tuple(dev.cc_major, dev.cc_minor);
    d["total_memory"] = dev.total_memory;
    d["free_memory"] = dev.free_memory;
    d["multiprocessors"] = dev.multiprocessors;
    out.append(d);
  }
  return out;
}

}  // namespace
}  // namespace fieldft::python

namespace fieldft::python {
void bind_operators(nb::module_& m);  // python/src/op_bindings.cpp
void bind_solvers(nb::module_& m);    // python/src/solve_bindings.cpp
void bind_simulate(nb::module_& m);   // python/src/simulate_bindings.cpp
void bind_io(nb::module_& m);         // python/src/io_bindings.cpp
void bind_dist(nb::module_& m);       // python/src/dist_bindings.cpp
}  // namespace fieldft::python

NB_MODULE(_core, m) {
  using namespace fieldft::python;
  m.doc() = "fieldft's compiled core (internal: use the fieldft package)";
  register_errors(m);
  bind_options(m);
  bind_plan<float>(m, "PlanF");
  bind_plan<double>(m, "PlanD");
  bind_dft_options(m);
  bind_dft<float>(m, "DftF");
  bind_dft<double>(m, "DftD");
  bind_operators(m);
  bind_solvers(m);
  bind_simulate(m);
  bind_io(m);
  bind_dist(m);
  m.def("build_info", &build_info_dict);
  m.def("cuda_devices", &cuda_devices_list);
  m.def("min_eps_float", [] { return fieldft::nufft::min_eps<float>(); });
  m.def("min_eps_double", [] { return fieldft::nufft::min_eps<double>(); });
  m.def("max_cpu_threads", &fieldft::max_cpu_threads);
  m.def("cpu_threads_for", &fieldft::cpu_threads_for, "requested"_a);
  m.def("stream_wait", &stream_wait, "device"_a, "waiter"_a, "producer"_a);
  m.def("stream_synchronize", &stream_synchronize, "device"_a, "stream"_a);
  m.def("pointer_device", &pointer_device, "ptr"_a);
  m.attr("have_type3") = kHaveType3;
}
