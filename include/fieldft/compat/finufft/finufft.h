/* finufft.h — libfieldft_finufft: FINUFFT's C interface, implemented by fieldft.
 *
 * Declares the functions documented for FINUFFT 2.5's C interface (guru and simple, double and
 * single precision with the `finufftf` prefix) with the same arguments, so that a program written
 * for FINUFFT compiles against this header and links with -lfieldft_finufft unchanged. The
 * transforms are fieldft's (CPU backend): same definitions, signs, layouts and mode orders as
 * FINUFFT; the remaining differences (options read or ignored, error codes) are listed in
 * docs/dropin-c.md.
 *
 * Complex arrays: C99 `double complex` / `float complex` in C, std::complex in C++.
 */
#ifndef FINUFFT_H
#define FINUFFT_H

#include <stdint.h>

#include "finufft_errors.h"
#include "finufft_opts.h"

#ifdef __cplusplus
#include <complex>
#define FIELDFT_FINUFFT_CPX(T) std::complex<T>
#else
#include <complex.h>
#define FIELDFT_FINUFFT_CPX(T) T _Complex
#endif

#if defined(__GNUC__) || defined(__clang__)
#define FIELDFT_FINUFFT_API __attribute__((visibility("default")))
#else
#define FIELDFT_FINUFFT_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef struct finufft_plan_s* finufft_plan;
typedef struct finufftf_plan_s* finufftf_plan;

/* Declares the guru and simple interfaces of one precision: P the prefix (finufft, finufftf),
 * F the real type, C the complex type, PLAN the plan handle. */
#define FIELDFT_FINUFFT_DECLARE(P, F, C, PLAN)                                                     \
  FIELDFT_FINUFFT_API void P##_default_opts(finufft_opts* o);                                      \
  FIELDFT_FINUFFT_API int P##_makeplan(int type, int dim, const int64_t* n_modes, int iflag,       \
                                       int ntrans, F tol, PLAN* plan, const finufft_opts* o);       \
  FIELDFT_FINUFFT_API int P##_setpts(PLAN plan, int64_t M, const F* xj, const F* yj, const F* zj, \
                                     int64_t N, const F* s, const F* t, const F* u);               \
  FIELDFT_FINUFFT_API int P##_execute(PLAN plan, C* weights, C* result);                           \
  FIELDFT_FINUFFT_API int P##_execute_adjoint(PLAN plan, C* weights, C* result);                   \
  FIELDFT_FINUFFT_API int P##_destroy(PLAN plan);                                                  \
  FIELDFT_FINUFFT_API int P##1d1(int64_t nj, const F* xj, const C* cj, int iflag, F eps,          \
                                 int64_t ms, C* fk, const finufft_opts* opts);                     \
  FIELDFT_FINUFFT_API int P##1d1many(int ntr, int64_t nj, const F* xj, const C* cj, int iflag,    \
                                     F eps, int64_t ms, C* fk, const finufft_opts* opts);          \
  FIELDFT_FINUFFT_API int P##1d2(int64_t nj, const F* xj, C* cj, int iflag, F eps, int64_t ms,    \
                                 const C* fk, const finufft_opts* opts);                           \
  FIELDFT_FINUFFT_API int P##1d2many(int ntr, int64_t nj, const F* xj, C* cj, int iflag, F eps,   \
                                     int64_t ms, const C* fk, const finufft_opts* opts);           \
  FIELDFT_FINUFFT_API int P##1d3(int64_t nj, const F* x, const C* c, int iflag, F eps,            \
                                 int64_t nk, const F* s, C* f, const finufft_opts* opts);          \
  FIELDFT_FINUFFT_API int P##1d3many(int ntr, int64_t nj, const F* x, const C* c, int iflag,      \
                                     F eps, int64_t nk, const F* s, C* f,                          \
                                     const finufft_opts* opts);                                    \
  FIELDFT_FINUFFT_API int P##2d1(int64_t nj, const F* xj, const F* yj, const C* cj, int iflag,    \
                                 F eps, int64_t ms, int64_t mt, C* fk, const finufft_opts* opts);  \
  FIELDFT_FINUFFT_API int P##2d1many(int ntr, int64_t nj, const F* xj, const F* yj, const C* c,   \
                                     int iflag, F eps, int64_t ms, int64_t mt, C* fk,              \
                                     const finufft_opts* opts);                                    \
  FIELDFT_FINUFFT_API int P##2d2(int64_t nj, const F* xj, const F* yj, C* cj, int iflag, F eps,   \
                                 int64_t ms, int64_t mt, const C* fk, const finufft_opts* opts);   \
  FIELDFT_FINUFFT_API int P##2d2many(int ntr, int64_t nj, const F* xj, const F* yj, C* c,         \
                                     int iflag, F eps, int64_t ms, int64_t mt, const C* fk,        \
                                     const finufft_opts* opts);                                    \
  FIELDFT_FINUFFT_API int P##2d3(int64_t nj, const F* x, const F* y, const C* cj, int iflag,      \
                                 F eps, int64_t nk, const F* s, const F* t, C* fk,                 \
                                 const finufft_opts* opts);                                        \
  FIELDFT_FINUFFT_API int P##2d3many(int ntr, int64_t nj, const F* x, const F* y, const C* cj,    \
                                     int iflag, F eps, int64_t nk, const F* s, const F* t, C* fk,  \
                                     const finufft_opts* opts);                                    \
  FIELDFT_FINUFFT_API int P##3d1(int64_t nj, const F* xj, const F* yj, const F* zj, const C* cj,  \
                                 int iflag, F eps, int64_t ms, int64_t mt, int64_t mu, C* fk,      \
                                 const finufft_opts* opts);                                        \
  FIELDFT_FINUFFT_API int P##3d1many(int ntr, int64_t nj, const F* xj, const F* yj, const F* zj,  \
                                     const C* cj, int iflag, F eps, int64_t ms, int64_t mt,        \
                                     int64_t mu, C* fk, const finufft_opts* opts);                 \
  FIELDFT_FINUFFT_API int P##3d2(int64_t nj, const F* xj, const F* yj, const F* zj, C* cj,        \
                                 int iflag, F eps, int64_t ms, int64_t mt, int64_t mu,             \
                                 const C* fk, const finufft_opts* opts);                           \
  FIELDFT_FINUFFT_API int P##3d2many(int ntr, int64_t nj, const F* xj, const F* yj, const F* zj,  \
                                     C* cj, int iflag, F eps, int64_t ms, int64_t mt, int64_t mu,  \
                                     const C* fk, const finufft_opts* opts);                       \
  FIELDFT_FINUFFT_API int P##3d3(int64_t nj, const F* x, const F* y, const F* z, const C* cj,     \
                                 int iflag, F eps, int64_t nk, const F* s, const F* t,             \
                                 const F* u, C* fk, const finufft_opts* opts);                     \
  FIELDFT_FINUFFT_API int P##3d3many(int ntr, int64_t nj, const F* x, const F* y, const F* z,     \
                                     const C* cj, int iflag, F eps, int64_t nk, const F* s,        \
                                     const F* t, const F* u, C* fk, const finufft_opts* opts);

FIELDFT_FINUFFT_DECLARE(finufft, double, FIELDFT_FINUFFT_CPX(double), finufft_plan)
FIELDFT_FINUFFT_DECLARE(finufftf, float, FIELDFT_FINUFFT_CPX(float), finufftf_plan)

#undef FIELDFT_FINUFFT_DECLARE

#ifdef __cplusplus
}
#endif

#undef FIELDFT_FINUFFT_CPX

#endif /* FINUFFT_H */
