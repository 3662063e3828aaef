// libfieldft_cufinufft: cuFINUFFT's C interface (include/fieldft/compat/cufinufft/cufinufft.h)
// over fieldft's CUDA NUFFT. The option map and every difference from cuFINUFFT:
// docs/dropin-c.md.
#include <complex>
#include <cstdint>
#include <memory>
#include <string>

#include "capi/compat_common.hpp"
#include "fieldft/compat/cufinufft/cufinufft.h"

struct cufinufft_plan_s {
  fieldft::compat::Plan<double> p;
};
struct cufinufft_fplan_s {
  fieldft::compat::Plan<float> p;
};

namespace fieldft::compat {
namespace {

// fieldft's options and context for cuFINUFFT's, refusing what fieldft cannot honour.
nufft::Options options_of(const cufinufft_opts& o) {
  check(o.upsampfac == 0.0 || o.upsampfac >= 1.25, FINUFFT_ERR_UPSAMPFAC_TOO_SMALL,
        "upsampfac is " + std::to_string(o.upsampfac) + ", expected 0 (automatic) or in [1.25, 2.25]");
  check(o.upsampfac <= 2.25, FINUFFT_ERR_INVALID_ARGUMENT,
        "upsampfac is " + std::to_string(o.upsampfac) + ", expected 0 (automatic) or in [1.25, 2.25]");
  check(o.gpu_method >= 0 && o.gpu_method <= 3, FINUFFT_ERR_METHOD_NOTVALID,
        "gpu_method is " + std::to_string(o.gpu_method) + ", expected 0 (auto), 1, 2 or 3");
  check(o.gpu_device_id >= 0, FINUFFT_ERR_INVALID_ARGUMENT,
        "gpu_device_id is " + std::to_string(o.gpu_device_id) + ", expected >= 0");
  nufft::Options n;
  n.backend = Backend::kCuda;
  n.method = static_cast<nufft::Method>(o.gpu_method);
  n.upsampfac = o.upsampfac;
  n.bin_size = {std::max(o.gpu_binsizex, 0), std::max(o.gpu_binsizey, 0), std::max(o.gpu_binsizez, 0)};
  n.spread_interp_only = o.gpu_spreadinterponly != 0;
  n.max_batch = o.gpu_maxbatchsize > 0 ? o.gpu_maxbatchsize : 0;
  n.modeord = o.modeord ? 1 : 0;
  n.device = o.gpu_device_id;
  n.stream = o.gpu_stream;
  return n;
}

template <class Handle>
int makeplan_from(const char* who, int type, int dim, const int64_t* n_modes, int iflag, int ntr, double eps,
             Handle** out, const cufinufft_opts* opts) {
  return compat::makeplan(who, type, dim, n_modes, iflag, ntr, eps, out, /*allow_zero_modes=*/false, [&] {
    cufinufft_opts o;
    cufinufft_default_opts(&o);
    if (opts) o = *opts;
    const nufft::Options n = options_of(o);
    return std::pair{Context::cuda(n.device, n.stream), n};
  });
}

template <class Handle>
int destroy(const char* who, Handle* h) {
  return guard(who, [&] {
    check(h != nullptr, FINUFFT_ERR_PLAN_NOTVALID, "the plan is NULL");
    delete h;
    return 0;
  });
}

}  // namespace
}  // namespace fieldft::compat

using namespace fieldft::compat;

extern "C" {

void cufinufft_default_opts(cufinufft_opts* o) {
  if (!o) return;
  o->upsampfac = 0.0;
  o->gpu_method = 0;
  o->gpu_sort = 1;
  o->gpu_binsizex = 0;
  o->gpu_binsizey = 0;
  o->gpu_binsizez = 0;
  o->gpu_obinsizex = 0;
  o->gpu_obinsizey = 0;
  o->gpu_obinsizez = 0;
  o->gpu_maxsubprobsize = 1024;
  o->gpu_kerevalmeth = 1;
  o->gpu_spreadinterponly = 0;
  o->gpu_maxbatchsize = 0;
  o->gpu_device_id = 0;
  o->gpu_stream = nullptr;
  o->modeord = 0;
  o->gpu_np = 0;
  o->debug = 0;
}

int cufinufft_makeplan(int type, int dim, const int64_t* n_modes, int iflag, int ntr, double eps,
                       cufinufft_plan* d_plan_ptr, cufinufft_opts* opts) {
  return makeplan_from("cufinufft_makeplan", type, dim, n_modes, iflag, ntr, eps, d_plan_ptr, opts);
}
int cufinufftf_makeplan(int type, int dim, const int64_t* n_modes, int iflag, int ntr, float eps,
                        cufinufftf_plan* d_plan_ptr, cufinufft_opts* opts) {
  return makeplan_from("cufinufftf_makeplan", type, dim, n_modes, iflag, ntr, eps, d_plan_ptr, opts);
}
int cufinufft_setpts(cufinufft_plan d_plan, int64_t M, double* d_x, double* d_y, double* d_z, int N, double* d_s,
                     double* d_t, double* d_u) {
  return setpts("cufinufft_setpts", d_plan, M, d_x, d_y, d_z, N, d_s, d_t, d_u);
}
int cufinufftf_setpts(cufinufftf_plan d_plan, int64_t M, float* d_x, float* d_y, float* d_z, int N, float* d_s,
                      float* d_t, float* d_u) {
  return setpts("cufinufftf_setpts", d_plan, M, d_x, d_y, d_z, N, d_s, d_t, d_u);
}
int cufinufft_execute(cufinufft_plan d_plan, cuDoubleComplex* d_c, cuDoubleComplex* d_fk) {
  return execute("cufinufft_execute", d_plan, d_c, d_fk, false);
}
int cufinufftf_execute(cufinufftf_plan d_plan, cuFloatComplex* d_c, cuFloatComplex* d_fk) {
  return execute("cufinufftf_execute", d_plan, d_c, d_fk, false);
}
int cufinufft_destroy(cufinufft_plan d_plan) { return destroy("cufinufft_destroy", d_plan); }
int cufinufftf_destroy(cufinufftf_plan d_plan) { return destroy("cufinufftf_destroy", d_plan); }

}  // extern "C"
