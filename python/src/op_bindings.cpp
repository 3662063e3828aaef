// fieldft._core's operator layer: op::LinearOperator, its combinators, the MRI encodings and
// SENSE, for the Python modules fieldft.op and fieldft.mri (python/fieldft/op.py, mri.py).
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
#include "fieldft/mri/coil_maps.hpp"
#include "fieldft/mri/density.hpp"
#include "fieldft/mri/encoding.hpp"
#include "fieldft/mri/field_model.hpp"
#include "fieldft/mri/pcsense.hpp"
#include "fieldft/mri/sense.hpp"
#include "fieldft/mri/time_segmentation.hpp"
#include "fieldft/nufft.hpp"
#include "fieldft/op/combinators.hpp"
#include "fieldft/op/linear_operator.hpp"
#include "fieldft/op/sparsify.hpp"
#include "gil.hpp"
#include "py_operator.hpp"

namespace nb = nanobind;
using namespace nb::literals;

namespace fieldft::python {
namespace {

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

// TimeSegmentationOptions from the Python layer's values (interpolator: the enum's value).
mri::TimeSegmentationOptions tseg_options(double accuracy, int interpolator, int max_segments, int segments) {
  mri::TimeSegmentationOptions o;
  o.accuracy = accuracy;
  o.interpolator = static_cast<mri::SegmentInterpolator>(interpolator);
  o.max_segments = max_segments;
  o.segments = segments;
  return o;
}

// The fields SenseOptions and PcSenseOptions share, from the Python layer's values (kind:
// EncodingKind's value, toeplitz: Toeplitz's).
template <class Options>
Options kind_options(int kind, double eps, const nufft::Options& nufft_options, int toeplitz, double accuracy,
                     int interpolator, int max_segments, int segments) {
  Options o;
  o.encoding = static_cast<mri::EncodingKind>(kind);
  o.eps = eps;
  o.nufft = nufft_options;
  o.toeplitz = static_cast<mri::Toeplitz>(toeplitz);
  o.time_segmentation = tseg_options(accuracy, interpolator, max_segments, segments);
  // One toeplitz for both normals: the NUFFT's (kNufft) and time segmentation's field-corrected one.
  o.time_segmentation.toeplitz = o.toeplitz;
  return o;
}

nb::dict report_dict(const mri::TimeSegmentationReport& r) {
  nb::dict d;
  d["L"] = r.segments;
  d["interpolator"] = r.interpolator == mri::SegmentInterpolator::kHanning ? "hanning" : "least-squares";
  d["error"] = r.worst_error;
  d["accuracy"] = r.accuracy;
  d["forced"] = r.forced;
  d["amplification"] = r.amplification;
  d["distinct_times"] = r.distinct_times;
  d["field_bins"] = r.field_bins;
  d["design_seconds"] = r.design_seconds;
  d["reason"] = r.reason;
  return d;
}

nb::dict candidate_dict(const mri::FieldModelCandidate& c) {
  nb::dict d;
  d["feasible"] = c.feasible;
  d["setup_seconds"] = c.setup_seconds;
  d["iteration_seconds"] = c.iteration_seconds;
  d["total_seconds"] = c.total_seconds;
  d["note"] = c.note;
  return d;
}

nb::dict choice_dict(const mri::FieldModelChoice& c) {
  nb::dict d;
  d["encoding"] = c.encoding == mri::EncodingKind::kDft             ? "dft"
                  : c.encoding == mri::EncodingKind::kTimeSegmented ? "tseg"
                                                                    : "nufft";
  d["toeplitz"] = c.toeplitz;
  d["L"] = c.segments;
  d["L_toeplitz"] = c.toeplitz_segments;
  d["error"] = c.worst_error;
  d["dft"] = candidate_dict(c.dft);
  d["tseg"] = candidate_dict(c.segmented);
  d["tseg_toeplitz"] = candidate_dict(c.segmented_toeplitz);
  d["planning_seconds"] = c.planning_seconds;
  d["reason"] = c.reason;
  return d;
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
      // mri::plan_time_segmentation: the design and the choice of L alone (no plans), as a dict.
      .def("plan_time_segmentation",
           [](const E& e, double accuracy, int interpolator, int max_segments, int segments) {
             mri::TimeSegmentationReport r;
             without_gil([&] {
               r = mri::plan_time_segmentation<T>(*e.e, tseg_options(accuracy, interpolator, max_segments, segments));
             });
             return report_dict(r);
           },
           "accuracy"_a, "interpolator"_a, "max_segments"_a, "segments"_a)
      // mri::choose_field_model (field_model.hpp): the exact DFT or time segmentation by
      // predicted cost, as a dict (device < 0: the CPU's constants, else the GPU's).
      .def("choose_field_model",
           [](const E& e, std::int64_t coils, bool per_shot, double accuracy, double eps, int max_segments,
              int interpolator, int iterations, int device, int nthreads, bool double_precision) {
             mri::FieldModelOptions o;
             o.accuracy = accuracy;
             o.eps = eps;
             o.max_segments = max_segments;
             o.interpolator = static_cast<mri::SegmentInterpolator>(interpolator);
             o.iterations = iterations;
             o.backend = device < 0 ? Backend::kCpu : Backend::kCuda;
             o.threads = nthreads;
             o.double_precision = double_precision;
             mri::FieldModelChoice c;
             without_gil([&] { c = mri::choose_field_model<T>(*e.e, coils, per_shot, o); });
             return choice_dict(c);
           },
           "coils"_a, "per_shot"_a, "accuracy"_a, "eps"_a, "max_segments"_a, "interpolator"_a, "iterations"_a,
           "device"_a, "nthreads"_a, "double_precision"_a)
      // mri::estimate_coil_maps (coil_maps.hpp): data (C·M) and maps (N·C) at the place
      // (device, stream, nthreads); density: host pointer to ndensity doubles (0: cell counting).
      .def("estimate_coil_maps",
           [](const E& e, std::uintptr_t data, std::int64_t coils, std::uintptr_t maps, int method,
              double radius, int window, std::uintptr_t density, std::int64_t ndensity, double threshold,
              int reference_coil, int kernel_size, double kernel_threshold, double eigen_threshold, double eps,
              int device, std::uintptr_t stream, int nthreads) {
             using C = std::complex<T>;
             mri::CoilMapOptions o;
             o.method = static_cast<mri::CoilMapMethod>(method);
             o.calibration_radius = radius;
             o.window = static_cast<mri::CalibrationWindow>(window);
             o.density = {reinterpret_cast<const double*>(density), static_cast<std::size_t>(ndensity)};
             o.threshold = threshold;
             o.reference_coil = reference_coil;
             o.kernel_size = kernel_size;
             o.kernel_threshold = kernel_threshold;
             o.eigen_threshold = eigen_threshold;
             o.eps = eps;
             const auto m = static_cast<std::size_t>(e.e->num_samples());
             const auto n = static_cast<std::size_t>(e.e->num_voxels());
             const auto c = static_cast<std::size_t>(coils < 0 ? 0 : coils);
             mri::CoilMapInfo info;
             without_gil([&] {
               info = mri::estimate_coil_maps<T>(*e.e, make_context(device, stream, nthreads),
                                                 {reinterpret_cast<const C*>(data), c * m}, coils, o,
                                                 {reinterpret_cast<C*>(maps), n * c});
             });
             nb::dict d;
             d["calibration_samples"] = info.calibration_samples;
             d["kernel_rank"] = info.kernel_rank;
             d["kernel_size"] = info.kernel_size;
             d["calibration_size"] = info.calibration_size;
             return d;
           },
           "data"_a, "coils"_a, "maps"_a, "method"_a, "radius"_a, "window"_a, "density"_a, "ndensity"_a,
           "threshold"_a, "reference_coil"_a, "kernel_size"_a, "kernel_threshold"_a, "eigen_threshold"_a, "eps"_a,
           "device"_a, "stream"_a, "nthreads"_a)
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
      .def("prepare_normal", &O::prepare_normal)
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
      // LinearOperator::weighted_normal: AᴴWA with W inside the operator's fast normal form (a
      // Toeplitz kernel), or None where it has none. w: codomain_size() weights at the
      // operator's place, read during this call (the result keeps its own copy).
      .def_static("weighted_normal",
                  [](const O& a, std::uintptr_t w) -> nb::object {
                    op::OperatorPtr<T> n;
                    without_gil([&] {
                      std::lock_guard lock(call_mutex());
                      n = a.ptr()->weighted_normal(reinterpret_cast<const C*>(w));
                    });
                    if (!n) return nb::none();
                    return nb::cast(O(std::move(n), a.owners()), nb::rv_policy::move);
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
                  "d"_a, "n"_a, "shape"_a, "k"_a, "device"_a, "stream"_a, "nthreads"_a, "owner"_a.none())
      // The sparsifying operators (op/sparsify.hpp); axes in C++ order, boundary and kind as the
      // enums' values (op.py maps the names).
      .def_static("finite_difference",
                  [](const std::vector<std::int64_t>& shape, const std::vector<int>& axes, int boundary, int device,
                     std::uintptr_t stream, int nthreads, nb::object owner) {
                    return make<T>(owner_list(owner), [&] {
                      return op::finite_difference<T>(to_shape(shape), axes, make_context(device, stream, nthreads),
                                                      static_cast<op::Boundary>(boundary));
                    });
                  },
                  "shape"_a, "axes"_a, "boundary"_a, "device"_a, "stream"_a, "nthreads"_a, "owner"_a.none())
      .def_static("wavelet",
                  [](const std::vector<std::int64_t>& shape, int levels, int kind, int device, std::uintptr_t stream,
                     int nthreads, nb::object owner) {
                    return make<T>(owner_list(owner), [&] {
                      return op::wavelet<T>(to_shape(shape), levels, make_context(device, stream, nthreads),
                                            static_cast<op::Wavelet>(kind));
                    });
                  },
                  "shape"_a, "levels"_a, "kind"_a, "device"_a, "stream"_a, "nthreads"_a, "owner"_a.none());
  // The MRI encodings (mri/encoding.hpp) on a PyEncoding.
  using E = PyEncoding<T>;
  cls.def_static(
         "nufft_encoding",
         [](const E& e, double eps, std::int64_t batch, const nufft::Options& nufft_options, int toeplitz, int device,
            std::uintptr_t stream, int nthreads, nb::object owner) {
           return make<T>(owner_list(owner), [&]() -> op::OperatorPtr<T> {
             mri::NufftEncodingOptions o;
             o.eps = eps;
             o.batch = batch;
             o.nufft = nufft_options;
             o.toeplitz = static_cast<mri::Toeplitz>(toeplitz);
             return std::make_shared<mri::NufftEncoding<T>>(e.e, make_context(device, stream, nthreads), o);
           });
         },
         "encoding"_a, "eps"_a, "batch"_a, "options"_a, "toeplitz"_a, "device"_a, "stream"_a, "nthreads"_a,
         "owner"_a.none())
      // The Toeplitz normal of a NufftEncoding (None for any other operator): whether it is used,
      // why, and its kernel's set-up time (NaN until built; prepare=True builds it now).
      .def_static(
          "toeplitz_info",
          [](const O& a, bool prepare) -> nb::object {
            auto* f = dynamic_cast<mri::NufftEncoding<T>*>(a.ptr().get());
            if (f == nullptr) return nb::none();
            if (prepare)
              without_gil([&] {
                std::lock_guard lock(call_mutex());
                f->prepare_normal();
              });
            nb::dict d;
            d["used"] = f->uses_toeplitz();
            d["reason"] = f->toeplitz_reason();
            d["setup_seconds"] = f->toeplitz_setup_seconds();
            return d;
          },
          "op"_a, "prepare"_a)
      .def_static(
          "dft_encoding",
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
          "encoding"_a, "batch"_a, "r2"_a, "device"_a, "stream"_a, "nthreads"_a, "owner"_a.none())
      // mri::TimeSegmentedEncoding (mri/time_segmentation.hpp); interpolator 0 = least squares,
      // 1 = Hanning; segments 0 = choose L from the accuracy.
      .def_static(
          "tseg_encoding",
          [](const E& e, double accuracy, int interpolator, int max_segments, int segments, double eps,
             std::int64_t batch, const nufft::Options& nufft_options, int device, std::uintptr_t stream, int nthreads,
             nb::object owner) {
            return make<T>(owner_list(owner), [&]() -> op::OperatorPtr<T> {
              mri::TimeSegmentationOptions o = tseg_options(accuracy, interpolator, max_segments, segments);
              o.eps = eps;
              o.batch = batch;
              o.nufft = nufft_options;
              const Context c = make_context(device, stream, nthreads);
              return std::make_shared<mri::TimeSegmentedEncoding<T>>(e.e, c, o);
            });
          },
          "encoding"_a, "accuracy"_a, "interpolator"_a, "max_segments"_a, "segments"_a, "eps"_a, "batch"_a, "options"_a,
          "device"_a, "stream"_a, "nthreads"_a, "owner"_a.none())
      // The report of a TimeSegmentedEncoding (None for any other operator).
      .def_static(
          "tseg_report",
          [](const O& a) -> nb::object {
            auto* t = dynamic_cast<mri::TimeSegmentedEncoding<T>*>(a.ptr().get());
            if (t == nullptr) return nb::none();
            return report_dict(t->report());
          },
          "op"_a)
      // SENSE (mri/sense.hpp): maps: n host values of shape maps_shape (C++ order, coils last);
      // kind 0 = NUFFT (eps, options), 1 = the exact DFT, 2 = time segmentation (accuracy,
      // interpolator, max_segments, segments; eps and options for its NUFFT).
      .def_static(
          "sense",
          [](const E& e, std::uintptr_t maps, std::int64_t n, const std::vector<std::int64_t>& maps_shape, int kind,
             double eps, const nufft::Options& nufft_options, int toeplitz, double accuracy, int interpolator,
             int max_segments, int segments, int device, std::uintptr_t stream, int nthreads, nb::object owner) {
            return make<T>(owner_list(owner), [&] {
              const auto o = kind_options<mri::SenseOptions>(kind, eps, nufft_options, toeplitz, accuracy, interpolator,
                                                             max_segments, segments);
              return mri::sense<T>(e.e, host_values<T>(maps, n), to_shape(maps_shape),
                                   make_context(device, stream, nthreads), o);
            });
          },
          "encoding"_a, "maps"_a, "n"_a, "maps_shape"_a, "kind"_a, "eps"_a, "options"_a, "toeplitz"_a, "accuracy"_a,
          "interpolator"_a, "max_segments"_a, "segments"_a, "device"_a, "stream"_a, "nthreads"_a, "owner"_a.none())
      // pcSENSE (mri/pcsense.hpp): maps as for sense; phase: nphase host reals of shape
      // phase_shape (C++ order, shots last); kind and its options as for sense; gram:
      // PcSenseOptions::gram.
      .def_static(
          "pcsense",
          [](const E& e, std::uintptr_t maps, std::int64_t n, const std::vector<std::int64_t>& maps_shape,
             std::uintptr_t phase, std::int64_t nphase, const std::vector<std::int64_t>& phase_shape, int kind,
             double eps, const nufft::Options& nufft_options, int toeplitz, double accuracy, int interpolator,
             int max_segments, int segments, bool gram, int device, std::uintptr_t stream, int nthreads,
             nb::object owner) {
            return make<T>(owner_list(owner), [&] {
              auto o = kind_options<mri::PcSenseOptions<T>>(kind, eps, nufft_options, toeplitz, accuracy, interpolator,
                                                            max_segments, segments);
              o.gram = gram;
              return mri::pcsense<T>(e.e, host_values<T>(maps, n), to_shape(maps_shape), real_span<T>(phase, nphase),
                                     to_shape(phase_shape), make_context(device, stream, nthreads), o);
            });
          },
          "encoding"_a, "maps"_a, "n"_a, "maps_shape"_a, "phase"_a, "nphase"_a, "phase_shape"_a, "kind"_a, "eps"_a,
          "options"_a, "toeplitz"_a, "accuracy"_a, "interpolator"_a, "max_segments"_a, "segments"_a, "gram"_a,
          "device"_a, "stream"_a, "nthreads"_a, "owner"_a.none())
      // SENSE on a ready batched encoding operator (its place; its owners kept).
      .def_static(
          "sense_on",
          [](const O& a, std::uintptr_t maps, std::int64_t n, const std::vector<std::int64_t>& maps_shape) {
            return make<T>(a.owners(),
                           [&] { return mri::sense<T>(a.ptr(), host_values<T>(maps, n), to_shape(maps_shape)); });
          },
          "encoding"_a, "maps"_a, "n"_a, "maps_shape"_a);
}

}  // namespace

void bind_operators(nb::module_& m) {
  bind_operator<float>(m, "OperatorF");
  bind_operator<double>(m, "OperatorD");
  bind_encoding<float>(m, "EncodingF");
  bind_encoding<double>(m, "EncodingD");
  m.def("wavelet_max_levels",
        [](const std::vector<std::int64_t>& shape) { return op::wavelet_max_levels(to_shape(shape)); }, "shape"_a);
}

}  // namespace fieldft::python
