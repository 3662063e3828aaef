// fieldft.h: NUFFT plans, a face over fieldft::nufft::Plan<T>.
#include <array>
#include <complex>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "capi/capi_common.hpp"
#include "fieldft/nufft.hpp"

struct fieldft_nufft_plan_s {
  fieldft::nufft::Plan<double> plan;
};
struct fieldft_nufft_planf_s {
  fieldft::nufft::Plan<float> plan;
};

namespace fieldft::capi {
namespace {

nufft::Options options_of(const fieldft_nufft_opts& o) {
  nufft::Options n;
  n.modeord = o.modeord;
  n.upsampfac = o.upsampfac;
  require(o.method >= FIELDFT_METHOD_AUTO && o.method <= FIELDFT_METHOD_PRECOMPUTED, ErrorCode::kInvalidArgument,
          "opts.method is " + std::to_string(o.method) + ", expected 0 (auto) to 4 (precomputed)");
  n.method = static_cast<nufft::Method>(o.method);
  n.max_batch = o.max_batch;
  n.bin_size = {o.bin_size[0], o.bin_size[1], o.bin_size[2]};
  require(o.fft_measure == 0 || o.fft_measure == 1, ErrorCode::kInvalidArgument,
          "opts.fft_measure is " + std::to_string(o.fft_measure) + ", expected 0 or 1");
  n.fft_planning = o.fft_measure ? nufft::FftPlanning::kMeasure : nufft::FftPlanning::kEstimate;
  n.spread_boxes = o.spread_boxes;
  n.type3_direct = o.type3_direct;
  n.spread_interp_only = o.spread_interp_only != 0;
  return n;
}

template <class Handle, class T>
int make_plan(const char* who, int type, int dim, const int64_t* modes, int isign, int64_t ntransf, double eps,
              const fieldft_nufft_opts* opts, Handle** out) {
  if (out) *out = nullptr;
  return guard(who, [&] {
    require_pointer(out, "plan (the output)");
    require(dim >= 1 && dim <= 3, ErrorCode::kInvalidArgument,
            "dim is " + std::to_string(dim) + ", expected 1, 2 or 3");
    std::array<std::int64_t, 3> n{1, 1, 1};
    if (type != 3) {
      require_pointer(modes, "modes");
      for (int d = 0; d < dim; ++d) n[d] = modes[d];
    }
    fieldft_nufft_opts o;
    fieldft_nufft_default_opts(&o);
    if (opts) o = *opts;
    const Context context = context_of(&o.place);
    auto h = std::unique_ptr<Handle>(new Handle{nufft::Plan<T>(
        type, std::span<const std::int64_t>(n.data(), static_cast<std::size_t>(dim)), isign, ntransf, eps,
        context, options_of(o))});
    *out = h.release();
  });
}

template <class Handle, class T>
int set_points(const char* who, Handle* h, int64_t m, const T* x, const T* y, const T* z, int64_t nk, const T* s,
               const T* t, const T* u) {
  return guard(who, [&] {
    require_pointer(h, "plan");
    const nufft::PlanInfo& info = h->plan.info();
    require(m >= 0 && nk >= 0, ErrorCode::kInvalidArgument,
            "m = " + std::to_string(m) + " and nk = " + std::to_string(nk) + ", expected both >= 0");
    if (m > 0) {
      require_pointer(x, "x");
      if (info.dim >= 2) require_pointer(y, "y");
      if (info.dim >= 3) require_pointer(z, "z");
    }
    if (info.type == 3) {
      if (nk > 0) {
        require_pointer(s, "s");
        if (info.dim >= 2) require_pointer(t, "t");
        if (info.dim >= 3) require_pointer(u, "u");
      }
      h->plan.set_points(m, x, y, z, nk, s, t, u);
    } else {
      require(nk == 0, ErrorCode::kInvalidArgument,
              "nk is " + std::to_string(nk) + " on a type " + std::to_string(info.type) +
                  " plan, expected 0 (targets belong to type 3)");
      h->plan.set_points(m, x, y, z);
    }
  });
}

template <class Handle, class C>
int execute(const char* who, Handle* h, const C* in, C* out, bool adjoint) {
  return guard(who, [&] {
    require_pointer(h, "plan");
    using Complex = typename decltype(h->plan)::Complex;
    static_assert(sizeof(C) == sizeof(Complex));
    const auto* i = reinterpret_cast<const Complex*>(in);
    auto* o = reinterpret_cast<Complex*>(out);
    const nufft::PlanInfo& info = h->plan.info();
    // An empty side (M = 0, nk = 0) needs no array; any other does.
    const std::int64_t points = info.num_points, targets = info.type == 3 ? info.num_targets : info.num_modes();
    const bool in_is_points = (info.type == 2) == adjoint;
    if ((in_is_points ? points : targets) > 0) require_pointer(in, "in");
    if ((in_is_points ? targets : points) > 0) require_pointer(out, "out");
    if (adjoint)
      h->plan.execute_adjoint(i, o);
    else
      h->plan.execute(i, o);
  });
}

void fill_info(const nufft::PlanInfo& p, fieldft_nufft_info* info) {
  info->type = p.type;
  info->dim = p.dim;
  for (int d = 0; d < 3; ++d) {
    info->modes[d] = p.modes[d];
    info->fine_grid[d] = p.fine_grid[d];
    info->bin_size[d] = p.bin_size[d];
  }
  info->isign = p.isign;
  info->ntransf = p.ntransf;
  info->eps = p.eps;
  info->upsampfac = p.upsampfac;
  info->kernel_width = p.kernel_width;
  info->kernel_beta = p.kernel_beta;
  info->horner_degree = p.horner_degree;
  info->max_batch = p.max_batch;
  info->backend = static_cast<int>(p.backend);
  info->method = static_cast<int>(p.method);
  info->modeord = p.modeord;
  info->num_points = p.num_points;
  info->num_targets = p.num_targets;
  info->spread_boxes = p.spread_boxes;
  info->spread_tensor_cores = p.spread_tensor_cores;
  info->type3_direct = p.type3_direct;
  info->spread_interp_only = p.spread_interp_only;
  info->nthreads = p.nthreads;
}

template <class Handle>
int get_info(const char* who, Handle* h, fieldft_nufft_info* info) {
  return guard(who, [&] {
    require_pointer(h, "plan");
    require_pointer(info, "info");
    fill_info(h->plan.info(), info);
  });
}

template <class Handle>
int synchronize(const char* who, Handle* h) {
  return guard(who, [&] {
    require_pointer(h, "plan");
    h->plan.context().synchronize();
  });
}

}  // namespace
}  // namespace fieldft::capi

using namespace fieldft::capi;

extern "C" {

void fieldft_nufft_default_opts(fieldft_nufft_opts* opts) {
  if (!opts) return;
  const fieldft::nufft::Options n;
  fieldft_place_default(&opts->place);
  opts->modeord = n.modeord;
  opts->upsampfac = n.upsampfac;
  opts->method = static_cast<int>(n.method);
  opts->max_batch = n.max_batch;
  for (int d = 0; d < 3; ++d) opts->bin_size[d] = n.bin_size[d];
  opts->fft_measure = n.fft_planning == fieldft::nufft::FftPlanning::kMeasure;
  opts->spread_boxes = n.spread_boxes;
  opts->type3_direct = n.type3_direct;
  opts->spread_interp_only = n.spread_interp_only;
}

int fieldft_nufft_make_plan(int type, int dim, const int64_t* modes, int isign, int64_t ntransf, double eps,
                            const fieldft_nufft_opts* opts, fieldft_nufft_plan* plan) {
  return make_plan<fieldft_nufft_plan_s, double>("fieldft_nufft_make_plan", type, dim, modes, isign, ntransf, eps,
                                                 opts, plan);
}
int fieldft_nufft_make_planf(int type, int dim, const int64_t* modes, int isign, int64_t ntransf, double eps,
                             const fieldft_nufft_opts* opts, fieldft_nufft_planf* plan) {
  return make_plan<fieldft_nufft_planf_s, float>("fieldft_nufft_make_planf", type, dim, modes, isign, ntransf, eps,
                                                 opts, plan);
}

int fieldft_nufft_set_points(fieldft_nufft_plan plan, int64_t m, const double* x, const double* y, const double* z,
                             int64_t nk, const double* s, const double* t, const double* u) {
  return set_points("fieldft_nufft_set_points", plan, m, x, y, z, nk, s, t, u);
}
int fieldft_nufft_set_pointsf(fieldft_nufft_planf plan, int64_t m, const float* x, const float* y, const float* z,
                              int64_t nk, const float* s, const float* t, const float* u) {
  return set_points("fieldft_nufft_set_pointsf", plan, m, x, y, z, nk, s, t, u);
}

int fieldft_nufft_execute(fieldft_nufft_plan plan, const fieldft_complex* in, fieldft_complex* out) {
  return execute("fieldft_nufft_execute", plan, in, out, false);
}
int fieldft_nufft_executef(fieldft_nufft_planf plan, const fieldft_complexf* in, fieldft_complexf* out) {
  return execute("fieldft_nufft_executef", plan, in, out, false);
}
int fieldft_nufft_execute_adjoint(fieldft_nufft_plan plan, const fieldft_complex* in, fieldft_complex* out) {
  return execute("fieldft_nufft_execute_adjoint", plan, in, out, true);
}
int fieldft_nufft_execute_adjointf(fieldft_nufft_planf plan, const fieldft_complexf* in, fieldft_complexf* out) {
  return execute("fieldft_nufft_execute_adjointf", plan, in, out, true);
}

int fieldft_nufft_synchronize(fieldft_nufft_plan plan) { return synchronize("fieldft_nufft_synchronize", plan); }
int fieldft_nufft_synchronizef(fieldft_nufft_planf plan) { return synchronize("fieldft_nufft_synchronizef", plan); }

int fieldft_nufft_get_info(fieldft_nufft_plan plan, fieldft_nufft_info* info) {
  return get_info("fieldft_nufft_get_info", plan, info);
}
int fieldft_nufft_get_infof(fieldft_nufft_planf plan, fieldft_nufft_info* info) {
  return get_info("fieldft_nufft_get_infof", plan, info);
}

int fieldft_nufft_destroy(fieldft_nufft_plan plan) {
  return guard("fieldft_nufft_destroy", [&] { delete plan; });
}
int fieldft_nufft_destroyf(fieldft_nufft_planf plan) {
  return guard("fieldft_nufft_destroyf", [&] { delete plan; });
}

}  // extern "C"
