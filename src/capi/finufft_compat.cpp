// libfieldft_finufft: FINUFFT's C interface (include/fieldft/compat/finufft/finufft.h) over
// fieldft's CPU NUFFT. The option map and every difference from FINUFFT: docs/dropin-c.md.
#include <complex>
#include <cstdint>
#include <string>

#include "capi/compat_common.hpp"
#include "fieldft/compat/finufft/finufft.h"

struct finufft_plan_s {
  fieldft::compat::Plan<double> p;
};
struct finufftf_plan_s {
  fieldft::compat::Plan<float> p;
};

namespace fieldft::compat {
namespace {

constexpr int kFftwEstimate = 1 << 6;  // FFTW_ESTIMATE, FINUFFT's default planner flag

void default_opts(finufft_opts* o) {
  if (!o) return;
  o->modeord = 0;
  o->spreadinterponly = 0;
  o->debug = 0;
  o->spread_debug = 0;
  o->showwarn = 1;
  o->nthreads = 0;
  o->fftw = kFftwEstimate;
  o->spread_sort = 2;
  o->spread_kerevalmeth = 1;
  o->spread_kerpad = 1;
  o->upsampfac = 0.0;
  o->spread_thread = 0;
  o->maxbatchsize = 0;
  o->spread_nthr_atomic = -1;
  o->spread_max_sp_size = 0;
  o->spread_kerformula = 0;
  o->fftw_lock_fun = nullptr;
  o->fftw_unlock_fun = nullptr;
  o->fftw_lock_data = nullptr;
}

// fieldft's options for FINUFFT's, refusing what fieldft cannot honour with FINUFFT's codes.
nufft::Options options_of(const finufft_opts& o) {
  check(!o.fftw_lock_fun == !o.fftw_unlock_fun || o.spreadinterponly, FINUFFT_ERR_LOCK_FUNS_INVALID,
        "fftw_lock_fun and fftw_unlock_fun must be both NULL or both set");
  check(o.spread_thread >= 0 && o.spread_thread <= 2, FINUFFT_ERR_SPREAD_THREAD_NOTVALID,
        "spread_thread is " + std::to_string(o.spread_thread) + ", expected 0, 1 or 2");
  check(o.spread_kerformula == 0, FINUFFT_ERR_KERFORMULA_NOTVALID,
        "spread_kerformula is " + std::to_string(o.spread_kerformula) +
            ", expected 0 (fieldft has the exponential of semicircle kernel only)");
  check(o.upsampfac == 0.0 || o.upsampfac >= 1.25, FINUFFT_ERR_UPSAMPFAC_TOO_SMALL,
        "upsampfac is " + std::to_string(o.upsampfac) + ", expected 0 (automatic) or in [1.25, 2.25]");
  check(o.upsampfac <= 2.25, FINUFFT_ERR_INVALID_ARGUMENT,
        "upsampfac is " + std::to_string(o.upsampfac) + ", expected 0 (automatic) or in [1.25, 2.25]");
  nufft::Options n;
  n.backend = Backend::kCpu;
  n.modeord = o.modeord ? 1 : 0;
  n.spread_interp_only = o.spreadinterponly != 0;
  n.nthreads = o.nthreads > 0 ? o.nthreads : 0;
  n.fft_planning = (o.fftw & kFftwEstimate) ? nufft::FftPlanning::kEstimate : nufft::FftPlanning::kMeasure;
  n.upsampfac = o.upsampfac;
  n.max_batch = o.maxbatchsize > 0 ? o.maxbatchsize : 0;
  return n;
}

template <class Handle>
int makeplan_from(const char* who, int type, int dim, const int64_t* n_modes, int iflag, int ntrans, double tol,
             Handle** out, const finufft_opts* opts) {
  return compat::makeplan(who, type, dim, n_modes, iflag, ntrans, tol, out, /*allow_zero_modes=*/true, [&] {
    finufft_opts o;
    default_opts(&o);
    if (opts) o = *opts;
    const nufft::Options n = options_of(o);
    return std::pair{Context::host(n.nthreads), n};
  });
}

template <class Handle>
int destroy(const char* who, Handle* h) {
  return guard(who, [&] {
    delete h;
    return 0;
  });
}

// The simple interfaces: one plan, its points, one execute. c and f as in Plan::execute.
template <class Handle, class T, class C>
int simple(const char* who, int type, int dim, int ntrans, int64_t nj, const T* x, const T* y, const T* z, C* c,
           int iflag, T eps, const std::array<std::int64_t, 3>& modes, int64_t nk, const T* s, const T* t,
           const T* u, C* f, const finufft_opts* opts) {
  Handle* h = nullptr;
  const int made = makeplan_from(who, type, dim, modes.data(), iflag, ntrans, eps, &h, opts);
  if (made > 1) return made;
  int code = setpts(who, h, nj, x, y, z, nk, s, t, u);
  if (code == 0) code = execute(who, h, c, f, false);
  destroy(who, h);
  return code ? code : made;
}

}  // namespace
}  // namespace fieldft::compat

using fieldft::compat::simple;
using M3 = std::array<std::int64_t, 3>;
using cd = std::complex<double>;
using cf = std::complex<float>;

// The const inputs of the simple interfaces are only read: the execute of a type whose c (or f) is
// an input reads it and writes the other array.
#define FIELDFT_MUT(p) const_cast<std::remove_const_t<std::remove_pointer_t<decltype(p)>>*>(p)

#define FIELDFT_DEFINE_FINUFFT(P, F, C, H)                                                              \
  void P##_default_opts(finufft_opts* o) { fieldft::compat::default_opts(o); }                          \
  int P##_makeplan(int type, int dim, const int64_t* n_modes, int iflag, int ntrans, F tol, H* plan,   \
                   const finufft_opts* o) {                                                             \
    return fieldft::compat::makeplan_from(#P "_makeplan", type, dim, n_modes, iflag, ntrans, tol, plan, o); \
  }                                                                                                     \
  int P##_setpts(H plan, int64_t M, const F* xj, const F* yj, const F* zj, int64_t N, const F* s,     \
                 const F* t, const F* u) {                                                              \
    return fieldft::compat::setpts(#P "_setpts", plan, M, xj, yj, zj, N, s, t, u);                     \
  }                                                                                                     \
  int P##_execute(H plan, C* c, C* f) { return fieldft::compat::execute(#P "_execute", plan, c, f, false); } \
  int P##_execute_adjoint(H plan, C* c, C* f) {                                                         \
    return fieldft::compat::execute(#P "_execute_adjoint", plan, c, f, true);                          \
  }                                                                                                     \
  int P##_destroy(H plan) { return fieldft::compat::destroy(#P "_destroy", plan); }                     \
  int P##1d1(int64_t nj, const F* xj, const C* cj, int iflag, F eps, int64_t ms, C* fk,                \
             const finufft_opts* o) {                                                                   \
    return P##1d1many(1, nj, xj, cj, iflag, eps, ms, fk, o);                                            \
  }                                                                                                     \
  int P##1d1many(int ntr, int64_t nj, const F* xj, const C* cj, int iflag, F eps, int64_t ms, C* fk,  \
                 const finufft_opts* o) {                                                               \
    return simple<std::remove_pointer_t<H>, F>(#P "1d1many", 1, 1, ntr, nj, xj, nullptr, nullptr,         \
                                            FIELDFT_MUT(cj), iflag, eps, M3{ms, 1, 1}, 0, nullptr,     \
                                            nullptr, nullptr, fk, o);                                   \
  }                                                                                                     \
  int P##1d2(int64_t nj, const F* xj, C* cj, int iflag, F eps, int64_t ms, const C* fk,                \
             const finufft_opts* o) {                                                                   \
    return P##1d2many(1, nj, xj, cj, iflag, eps, ms, fk, o);                                            \
  }                                                                                                     \
  int P##1d2many(int ntr, int64_t nj, const F* xj, C* cj, int iflag, F eps, int64_t ms, const C* fk,  \
                 const finufft_opts* o) {                                                               \
    return simple<std::remove_pointer_t<H>, F>(#P "1d2many", 2, 1, ntr, nj, xj, nullptr, nullptr, cj,     \
                                            iflag, eps, M3{ms, 1, 1}, 0, nullptr, nullptr, nullptr,    \
                                            FIELDFT_MUT(fk), o);                                        \
  }                                                                                                     \
  int P##1d3(int64_t nj, const F* x, const C* c, int iflag, F eps, int64_t nk, const F* s, C* f,       \
             const finufft_opts* o) {                                                                   \
    return P##1d3many(1, nj, x, c, iflag, eps, nk, s, f, o);                                            \
  }                                                                                                     \
  int P##1d3many(int ntr, int64_t nj, const F* x, const C* c, int iflag, F eps, int64_t nk,           \
                 const F* s, C* f, const finufft_opts* o) {                                             \
    return simple<std::remove_pointer_t<H>, F>(#P "1d3many", 3, 1, ntr, nj, x, nullptr, nullptr,          \
                                            FIELDFT_MUT(c), iflag, eps, M3{1, 1, 1}, nk, s, nullptr,   \
                                            nullptr, f, o);                                             \
  }                                                                                                     \
  int P##2d1(int64_t nj, const F* xj, const F* yj, const C* cj, int iflag, F eps, int64_t ms,          \
             int64_t mt, C* fk, const finufft_opts* o) {                                                \
    return P##2d1many(1, nj, xj, yj, cj, iflag, eps, ms, mt, fk, o);                                    \
  }                                                                                                     \
  int P##2d1many(int ntr, int64_t nj, const F* xj, const F* yj, const C* c, int iflag, F eps,         \
                 int64_t ms, int64_t mt, C* fk, const finufft_opts* o) {                                \
    return simple<std::remove_pointer_t<H>, F>(#P "2d1many", 1, 2, ntr, nj, xj, yj, nullptr,              \
                                            FIELDFT_MUT(c), iflag, eps, M3{ms, mt, 1}, 0, nullptr,     \
                                            nullptr, nullptr, fk, o);                                   \
  }                                                                                                     \
  int P##2d2(int64_t nj, const F* xj, const F* yj, C* cj, int iflag, F eps, int64_t ms, int64_t mt,   \
             const C* fk, const finufft_opts* o) {                                                      \
    return P##2d2many(1, nj, xj, yj, cj, iflag, eps, ms, mt, fk, o);                                    \
  }                                                                                                     \
  int P##2d2many(int ntr, int64_t nj, const F* xj, const F* yj, C* c, int iflag, F eps, int64_t ms,   \
                 int64_t mt, const C* fk, const finufft_opts* o) {                                      \
    return simple<std::remove_pointer_t<H>, F>(#P "2d2many", 2, 2, ntr, nj, xj, yj, nullptr, c, iflag,    \
                                            eps, M3{ms, mt, 1}, 0, nullptr, nullptr, nullptr,          \
                                            FIELDFT_MUT(fk), o);                                        \
  }                                                                                                     \
  int P##2d3(int64_t nj, const F* x, const F* y, const C* cj, int iflag, F eps, int64_t nk,            \
             const F* s, const F* t, C* fk, const finufft_opts* o) {                                    \
    return P##2d3many(1, nj, x, y, cj, iflag, eps, nk, s, t, fk, o);                                    \
  }                                                                                                     \
  int P##2d3many(int ntr, int64_t nj, const F* x, const F* y, const C* cj, int iflag, F eps,          \
                 int64_t nk, const F* s, const F* t, C* fk, const finufft_opts* o) {                    \
    return simple<std::remove_pointer_t<H>, F>(#P "2d3many", 3, 2, ntr, nj, x, y, nullptr,                \
                                            FIELDFT_MUT(cj), iflag, eps, M3{1, 1, 1}, nk, s, t,        \
                                            nullptr, fk, o);                                            \
  }                                                                                                     \
  int P##3d1(int64_t nj, const F* xj, const F* yj, const F* zj, const C* cj, int iflag, F eps,         \
             int64_t ms, int64_t mt, int64_t mu, C* fk, const finufft_opts* o) {                        \
    return P##3d1many(1, nj, xj, yj, zj, cj, iflag, eps, ms, mt, mu, fk, o);                            \
  }                                                                                                     \
  int P##3d1many(int ntr, int64_t nj, const F* xj, const F* yj, const F* zj, const C* cj, int iflag,  \
                 F eps, int64_t ms, int64_t mt, int64_t mu, C* fk, const finufft_opts* o) {             \
    return simple<std::remove_pointer_t<H>, F>(#P "3d1many", 1, 3, ntr, nj, xj, yj, zj, FIELDFT_MUT(cj),  \
                                            iflag, eps, M3{ms, mt, mu}, 0, nullptr, nullptr, nullptr,  \
                                            fk, o);                                                     \
  }                                                                                                     \
  int P##3d2(int64_t nj, const F* xj, const F* yj, const F* zj, C* cj, int iflag, F eps, int64_t ms,   \
             int64_t mt, int64_t mu, const C* fk, const finufft_opts* o) {                              \
    return P##3d2many(1, nj, xj, yj, zj, cj, iflag, eps, ms, mt, mu, fk, o);                            \
  }                                                                                                     \
  int P##3d2many(int ntr, int64_t nj, const F* xj, const F* yj, const F* zj, C* cj, int iflag, F eps, \
                 int64_t ms, int64_t mt, int64_t mu, const C* fk, const finufft_opts* o) {              \
    return simple<std::remove_pointer_t<H>, F>(#P "3d2many", 2, 3, ntr, nj, xj, yj, zj, cj, iflag, eps,   \
                                            M3{ms, mt, mu}, 0, nullptr, nullptr, nullptr,              \
                                            FIELDFT_MUT(fk), o);                                        \
  }                                                                                                     \
  int P##3d3(int64_t nj, const F* x, const F* y, const F* z, const C* cj, int iflag, F eps,            \
             int64_t nk, const F* s, const F* t, const F* u, C* fk, const finufft_opts* o) {            \
    return P##3d3many(1, nj, x, y, z, cj, iflag, eps, nk, s, t, u, fk, o);                              \
  }                                                                                                     \
  int P##3d3many(int ntr, int64_t nj, const F* x, const F* y, const F* z, const C* cj, int iflag,     \
                 F eps, int64_t nk, const F* s, const F* t, const F* u, C* fk,                          \
                 const finufft_opts* o) {                                                               \
    return simple<std::remove_pointer_t<H>, F>(#P "3d3many", 3, 3, ntr, nj, x, y, z, FIELDFT_MUT(cj),     \
                                            iflag, eps, M3{1, 1, 1}, nk, s, t, u, fk, o);              \
  }

extern "C" {
FIELDFT_DEFINE_FINUFFT(finufft, double, cd, finufft_plan)
FIELDFT_DEFINE_FINUFFT(finufftf, float, cf, finufftf_plan)
}
