// fieldft.h: the field-corrected DFT, the encoding models, SENSE and the SENSE-CG reconstruction,
// a face over fieldft::mri and fieldft::solve::cg.
#include <algorithm>
#include <complex>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "capi/capi_common.hpp"
#include "fieldft/mri/dft.hpp"
#include "fieldft/mri/encoding.hpp"
#include "fieldft/mri/field_model.hpp"
#include "fieldft/mri/sense.hpp"
#include "fieldft/op/linear_operator.hpp"
#include "fieldft/op/vector_ops.hpp"
#include "fieldft/solve/cg.hpp"
#include "mri/sense_checks.hpp"  // mri::detail::batched_encoding: the encoding of a kind, as sense builds it

struct fieldft_dft_s {
  std::unique_ptr<fieldft::mri::Dft<double>> dft;
};
struct fieldft_dftf_s {
  std::unique_ptr<fieldft::mri::Dft<float>> dft;
};
struct fieldft_operator_s {
  fieldft::op::OperatorPtr<double> op;
  std::string name;
};
struct fieldft_operatorf_s {
  fieldft::op::OperatorPtr<float> op;
  std::string name;
};

namespace fieldft::capi {
namespace {

// The arrays of a fieldft_geometry[f] as spans of their documented lengths.
template <class T>
struct GeometryView {
  std::vector<std::int64_t> grid;
  std::int64_t voxels = 0, samples = 0;
  std::span<const T> kx, ky, kz, times, field;
  std::span<const std::int32_t> shots;
};

template <class T, class G>
GeometryView<T> view_of(const G* g) {
  require_pointer(g, "geometry");
  require(g->dim == 2 || g->dim == 3, ErrorCode::kInvalidArgument,
          "geometry.dim is " + std::to_string(g->dim) + ", expected 2 or 3");
  GeometryView<T> v;
  v.grid.assign(g->grid, g->grid + g->dim);
  for (std::int64_t n : v.grid)
    require(n >= 1, ErrorCode::kInvalidArgument,
            "geometry.grid has an extent " + std::to_string(n) + ", expected every extent >= 1");
  v.voxels = op::shape_size(v.grid);
  v.samples = g->num_samples;
  require(v.samples >= 1, ErrorCode::kInvalidArgument,
          "geometry.num_samples is " + std::to_string(v.samples) + ", expected >= 1");
  const auto m = static_cast<std::size_t>(v.samples);
  require_pointer(g->kx, "geometry.kx");
  require_pointer(g->ky, "geometry.ky");
  v.kx = {g->kx, m};
  v.ky = {g->ky, m};
  if (g->dim == 3) {
    require_pointer(g->kz, "geometry.kz");
    v.kz = {g->kz, m};
  }
  if (g->times) v.times = {g->times, m};
  if (g->field) v.field = {g->field, static_cast<std::size_t>(v.voxels)};
  if (g->shots) v.shots = {g->shots, m};
  return v;
}

template <class T>
std::shared_ptr<const mri::Encoding<T>> encoding_of(const GeometryView<T>& v) {
  return std::make_shared<const mri::Encoding<T>>(v.grid, v.kx, v.ky, v.kz, v.times, v.field, v.shots);
}

mri::SenseOptions sense_options_of(const fieldft_encoding_opts& o) {
  require(o.kind >= FIELDFT_ENCODING_NUFFT && o.kind <= FIELDFT_ENCODING_AUTO, ErrorCode::kInvalidArgument,
          "opts.kind is " + std::to_string(o.kind) +
              ", expected FIELDFT_ENCODING_NUFFT (0), _DFT (1), _TIME_SEGMENTED (2) or _AUTO (3)");
  require(o.toeplitz >= 0 && o.toeplitz <= 2, ErrorCode::kInvalidArgument,
          "opts.toeplitz is " + std::to_string(o.toeplitz) + ", expected 0 (off), 1 (on) or 2 (automatic)");
  require(o.iterations >= 1, ErrorCode::kInvalidArgument,
          "opts.iterations is " + std::to_string(o.iterations) + ", expected >= 1");
  mri::SenseOptions s;
  s.encoding = static_cast<mri::EncodingKind>(o.kind);
  s.eps = o.eps;
  s.toeplitz = static_cast<mri::Toeplitz>(o.toeplitz);
  s.time_segmentation.accuracy = o.accuracy;
  s.time_segmentation.toeplitz = s.toeplitz;
  s.iterations = o.iterations;
  return s;
}

fieldft_encoding_opts encoding_opts_or_default(const fieldft_encoding_opts* opts) {
  fieldft_encoding_opts o;
  fieldft_encoding_default_opts(&o);
  if (opts) o = *opts;
  return o;
}

// ---- DFT

template <class T, class Handle, class G>
int dft_make(const char* who, const G* geometry, int64_t images, int r2, const fieldft_place* place, Handle** out) {
  if (out) *out = nullptr;
  return guard(who, [&] {
    require_pointer(out, "dft (the output)");
    const GeometryView<T> v = view_of<T>(geometry);
    const Context context = context_of(place);
    auto h = std::make_unique<Handle>();
    if (r2)
      h->dft = std::make_unique<mri::DftR2<T>>(v.grid, v.kx, v.ky, v.kz, v.field, v.times, context, images);
    else
      h->dft = std::make_unique<mri::Dft<T>>(v.grid, v.kx, v.ky, v.kz, v.field, v.times, context, images);
    *out = h.release();
  });
}

template <class Handle, class C>
int dft_apply(const char* who, Handle* h, const C* in, C* out, bool adjoint) {
  return guard(who, [&] {
    require_pointer(h, "dft");
    require_pointer(in, "in");
    require_pointer(out, "out");
    using Complex = typename std::remove_reference_t<decltype(*h->dft)>::Complex;
    static_assert(sizeof(C) == sizeof(Complex));
    const auto* i = reinterpret_cast<const Complex*>(in);
    auto* o = reinterpret_cast<Complex*>(out);
    if (adjoint)
      h->dft->apply_adjoint(i, o);
    else
      h->dft->apply(i, o);
  });
}

// ---- operators

template <class T, class Handle>
Handle* wrap(op::OperatorPtr<T> a) {
  auto h = std::make_unique<Handle>();
  h->name = a->name();
  h->op = std::move(a);
  return h.release();
}

template <class T, class Handle, class G>
int encoding_make(const char* who, const G* geometry, int64_t batch, const fieldft_encoding_opts* opts,
                  Handle** out) {
  if (out) *out = nullptr;
  return guard(who, [&] {
    require_pointer(out, "op (the output)");
    require(batch >= 1, ErrorCode::kInvalidArgument, "batch is " + std::to_string(batch) + ", expected >= 1");
    const GeometryView<T> v = view_of<T>(geometry);
    const fieldft_encoding_opts o = encoding_opts_or_default(opts);
    const mri::SenseOptions s = sense_options_of(o);
    *out = wrap<T, Handle>(mri::detail::batched_encoding<T>(encoding_of(v), s, batch, context_of(&o.place), who));
  });
}

template <class T, class C>
op::OperatorPtr<T> sense_of(const GeometryView<T>& v, const C* maps, int64_t coils, const mri::SenseOptions& s,
                            const Context& context) {
  require_pointer(maps, "maps");
  require(coils >= 1, ErrorCode::kInvalidArgument, "coils is " + std::to_string(coils) + ", expected >= 1");
  op::Shape maps_shape = v.grid;
  maps_shape.push_back(coils);
  const std::int64_t n = op::shape_size(maps_shape);
  static_assert(sizeof(C) == sizeof(std::complex<T>));
  const std::span<const std::complex<T>> m(reinterpret_cast<const std::complex<T>*>(maps),
                                           static_cast<std::size_t>(n));
  return mri::sense<T>(encoding_of(v), m, maps_shape, context, s);
}

template <class T, class Handle, class G, class C>
int sense_make(const char* who, const G* geometry, const C* maps, int64_t coils, const fieldft_encoding_opts* opts,
               Handle** out) {
  if (out) *out = nullptr;
  return guard(who, [&] {
    require_pointer(out, "op (the output)");
    const GeometryView<T> v = view_of<T>(geometry);
    const fieldft_encoding_opts o = encoding_opts_or_default(opts);
    *out = wrap<T, Handle>(sense_of(v, maps, coils, sense_options_of(o), context_of(&o.place)));
  });
}

enum class Direction { kForward, kAdjoint, kNormal };

template <class Handle, class C>
int operator_apply(const char* who, Handle* h, const C* in, C* out, Direction d) {
  return guard(who, [&] {
    require_pointer(h, "op");
    require_pointer(in, "in");
    require_pointer(out, "out");
    using Complex = typename std::remove_reference_t<decltype(*h->op)>::Complex;
    static_assert(sizeof(C) == sizeof(Complex));
    const auto* i = reinterpret_cast<const Complex*>(in);
    auto* o = reinterpret_cast<Complex*>(out);
    switch (d) {
      case Direction::kForward: h->op->apply(i, o); break;
      case Direction::kAdjoint: h->op->apply_adjoint(i, o); break;
      case Direction::kNormal: h->op->apply_normal(i, o); break;
    }
  });
}

template <class Handle>
int operator_sizes(const char* who, Handle* h, int64_t* domain, int64_t* codomain) {
  return guard(who, [&] {
    require_pointer(h, "op");
    if (domain) *domain = h->op->domain_size();
    if (codomain) *codomain = h->op->codomain_size();
  });
}

// ---- SENSE-CG

template <class T, class G, class C>
int sense_cg(const char* who, const G* geometry, const C* maps, int64_t coils, const C* kspace, C* image,
             const fieldft_recon_opts* opts, fieldft_recon_report* report) {
  return guard(who, [&] {
    require_pointer(kspace, "kspace");
    require_pointer(image, "image");
    fieldft_recon_opts o;
    fieldft_recon_default_opts(&o);
    if (opts) o = *opts;
    const GeometryView<T> v = view_of<T>(geometry);
    mri::SenseOptions s = sense_options_of(o.encoding);
    mri::FieldModelChoice choice;
    s.choice = &choice;
    s.iterations = o.max_iterations >= 1 ? o.max_iterations : s.iterations;  // cg refuses < 1 below
    const Context context = context_of(&o.encoding.place);
    op::OperatorPtr<T> a = sense_of(v, maps, coils, s, context);
    // x0 = 0 (in the operator's context: on a device, one stream-ordered fill)
    auto* x = reinterpret_cast<std::complex<T>*>(image);
    op::VectorOps<T>(a->context()).fill(a->domain_size(), std::complex<T>(0), x);
    solve::CgOptions c;
    c.max_iterations = o.max_iterations;
    c.tolerance = o.tolerance;
    c.lambda = o.lambda;
    const solve::CgResult r =
        solve::cg<T>(*a, reinterpret_cast<const std::complex<T>*>(kspace), x, nullptr, c);
    if (report) {
      report->iterations = r.iterations;
      report->residual = r.residual;
      report->converged = r.converged;
      const bool automatic = o.encoding.kind == FIELDFT_ENCODING_AUTO;
      report->encoding = automatic ? static_cast<int>(choice.encoding) : o.encoding.kind;
      report->toeplitz = automatic && choice.toeplitz;
      report->segments = automatic ? choice.segments : 0;
      const std::string& why = automatic ? choice.reason : std::string();
      const std::size_t n = std::min(why.size(), sizeof(report->reason) - 1);
      std::memcpy(report->reason, why.data(), n);
      report->reason[n] = '\0';
    }
  });
}

}  // namespace
}  // namespace fieldft::capi

using namespace fieldft::capi;

extern "C" {

int fieldft_dft_make(const fieldft_geometry* geometry, int64_t images, int r2, const fieldft_place* place,
                     fieldft_dft* dft) {
  return dft_make<double, fieldft_dft_s>("fieldft_dft_make", geometry, images, r2, place, dft);
}
int fieldft_dft_makef(const fieldft_geometryf* geometry, int64_t images, int r2, const fieldft_place* place,
                      fieldft_dftf* dft) {
  return dft_make<float, fieldft_dftf_s>("fieldft_dft_makef", geometry, images, r2, place, dft);
}
int fieldft_dft_forward(fieldft_dft dft, const fieldft_complex* image, fieldft_complex* samples) {
  return dft_apply("fieldft_dft_forward", dft, image, samples, false);
}
int fieldft_dft_forwardf(fieldft_dftf dft, const fieldft_complexf* image, fieldft_complexf* samples) {
  return dft_apply("fieldft_dft_forwardf", dft, image, samples, false);
}
int fieldft_dft_adjoint(fieldft_dft dft, const fieldft_complex* samples, fieldft_complex* image) {
  return dft_apply("fieldft_dft_adjoint", dft, samples, image, true);
}
int fieldft_dft_adjointf(fieldft_dftf dft, const fieldft_complexf* samples, fieldft_complexf* image) {
  return dft_apply("fieldft_dft_adjointf", dft, samples, image, true);
}
int fieldft_dft_synchronize(fieldft_dft dft) {
  return guard("fieldft_dft_synchronize", [&] {
    require_pointer(dft, "dft");
    dft->dft->context().synchronize();
  });
}
int fieldft_dft_synchronizef(fieldft_dftf dft) {
  return guard("fieldft_dft_synchronizef", [&] {
    require_pointer(dft, "dft");
    dft->dft->context().synchronize();
  });
}
int fieldft_dft_destroy(fieldft_dft dft) {
  return guard("fieldft_dft_destroy", [&] { delete dft; });
}
int fieldft_dft_destroyf(fieldft_dftf dft) {
  return guard("fieldft_dft_destroyf", [&] { delete dft; });
}

void fieldft_encoding_default_opts(fieldft_encoding_opts* opts) {
  if (!opts) return;
  const fieldft::mri::SenseOptions s;
  fieldft_place_default(&opts->place);
  opts->kind = static_cast<int>(s.encoding);
  opts->eps = s.eps;
  opts->accuracy = s.time_segmentation.accuracy;
  opts->toeplitz = static_cast<int>(s.toeplitz);
  opts->iterations = s.iterations;
}

int fieldft_encoding_make(const fieldft_geometry* geometry, int64_t batch, const fieldft_encoding_opts* opts,
                          fieldft_operator* op) {
  return encoding_make<double, fieldft_operator_s>("fieldft_encoding_make", geometry, batch, opts, op);
}
int fieldft_encoding_makef(const fieldft_geometryf* geometry, int64_t batch, const fieldft_encoding_opts* opts,
                           fieldft_operatorf* op) {
  return encoding_make<float, fieldft_operatorf_s>("fieldft_encoding_makef", geometry, batch, opts, op);
}
int fieldft_sense_make(const fieldft_geometry* geometry, const fieldft_complex* maps, int64_t coils,
                       const fieldft_encoding_opts* opts, fieldft_operator* op) {
  return sense_make<double, fieldft_operator_s>("fieldft_sense_make", geometry, maps, coils, opts, op);
}
int fieldft_sense_makef(const fieldft_geometryf* geometry, const fieldft_complexf* maps, int64_t coils,
                        const fieldft_encoding_opts* opts, fieldft_operatorf* op) {
  return sense_make<float, fieldft_operatorf_s>("fieldft_sense_makef", geometry, maps, coils, opts, op);
}

int fieldft_operator_apply(fieldft_operator op, const fieldft_complex* x, fieldft_complex* y) {
  return operator_apply("fieldft_operator_apply", op, x, y, Direction::kForward);
}
int fieldft_operator_applyf(fieldft_operatorf op, const fieldft_complexf* x, fieldft_complexf* y) {
  return operator_apply("fieldft_operator_applyf", op, x, y, Direction::kForward);
}
int fieldft_operator_apply_adjoint(fieldft_operator op, const fieldft_complex* y, fieldft_complex* x) {
  return operator_apply("fieldft_operator_apply_adjoint", op, y, x, Direction::kAdjoint);
}
int fieldft_operator_apply_adjointf(fieldft_operatorf op, const fieldft_complexf* y, fieldft_complexf* x) {
  return operator_apply("fieldft_operator_apply_adjointf", op, y, x, Direction::kAdjoint);
}
int fieldft_operator_apply_normal(fieldft_operator op, const fieldft_complex* x, fieldft_complex* z) {
  return operator_apply("fieldft_operator_apply_normal", op, x, z, Direction::kNormal);
}
int fieldft_operator_apply_normalf(fieldft_operatorf op, const fieldft_complexf* x, fieldft_complexf* z) {
  return operator_apply("fieldft_operator_apply_normalf", op, x, z, Direction::kNormal);
}
int fieldft_operator_sizes(fieldft_operator op, int64_t* domain_size, int64_t* codomain_size) {
  return operator_sizes("fieldft_operator_sizes", op, domain_size, codomain_size);
}
int fieldft_operator_sizesf(fieldft_operatorf op, int64_t* domain_size, int64_t* codomain_size) {
  return operator_sizes("fieldft_operator_sizesf", op, domain_size, codomain_size);
}
const char* fieldft_operator_name(fieldft_operator op) { return op ? op->name.c_str() : nullptr; }
const char* fieldft_operator_namef(fieldft_operatorf op) { return op ? op->name.c_str() : nullptr; }
int fieldft_operator_synchronize(fieldft_operator op) {
  return guard("fieldft_operator_synchronize", [&] {
    require_pointer(op, "op");
    op->op->context().synchronize();
  });
}
int fieldft_operator_synchronizef(fieldft_operatorf op) {
  return guard("fieldft_operator_synchronizef", [&] {
    require_pointer(op, "op");
    op->op->context().synchronize();
  });
}
int fieldft_operator_destroy(fieldft_operator op) {
  return guard("fieldft_operator_destroy", [&] { delete op; });
}
int fieldft_operator_destroyf(fieldft_operatorf op) {
  return guard("fieldft_operator_destroyf", [&] { delete op; });
}

void fieldft_recon_default_opts(fieldft_recon_opts* opts) {
  if (!opts) return;
  const fieldft::solve::CgOptions c;
  fieldft_encoding_default_opts(&opts->encoding);
  opts->max_iterations = c.max_iterations;
  opts->tolerance = c.tolerance;
  opts->lambda = c.lambda;
}

int fieldft_sense_cg(const fieldft_geometry* geometry, const fieldft_complex* maps, int64_t coils,
                     const fieldft_complex* kspace, fieldft_complex* image, const fieldft_recon_opts* opts,
                     fieldft_recon_report* report) {
  return sense_cg<double>("fieldft_sense_cg", geometry, maps, coils, kspace, image, opts, report);
}
int fieldft_sense_cgf(const fieldft_geometryf* geometry, const fieldft_complexf* maps, int64_t coils,
                      const fieldft_complexf* kspace, fieldft_complexf* image, const fieldft_recon_opts* opts,
                      fieldft_recon_report* report) {
  return sense_cg<float>("fieldft_sense_cgf", geometry, maps, coils, kspace, image, opts, report);
}

}  // extern "C"
