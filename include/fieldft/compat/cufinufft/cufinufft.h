/* cufinufft.h — libfieldft_cufinufft: cuFINUFFT's C interface, implemented by fieldft.
 *
 * Declares the functions documented for cuFINUFFT 2.5 (double, and float with the `cufinufftf`
 * prefix) with the same arguments, so that a program written for cuFINUFFT compiles against this
 * header and links with -lfieldft_cufinufft unchanged. Points and data are device pointers of
 * opts.gpu_device_id; the transforms are fieldft's CUDA NUFFT, ordered on opts.gpu_stream. The
 * remaining differences are listed in docs/dropin-c.md.
 */
#ifndef CUFINUFFT_H
#define CUFINUFFT_H

#include <cufft.h> /* cuFloatComplex, cuDoubleComplex (cuFINUFFT's header includes it too) */
#include <stdint.h>

#include "cufinufft_opts.h"
#include "finufft_errors.h"

#if defined(__GNUC__) || defined(__clang__)
#define FIELDFT_CUFINUFFT_API __attribute__((visibility("default")))
#else
#define FIELDFT_CUFINUFFT_API
#endif

typedef struct cufinufft_plan_s* cufinufft_plan;
typedef struct cufinufft_fplan_s* cufinufftf_plan;

#ifdef __cplusplus
extern "C" {
#endif

FIELDFT_CUFINUFFT_API void cufinufft_default_opts(cufinufft_opts* opts);

FIELDFT_CUFINUFFT_API int cufinufft_makeplan(int type, int dim, const int64_t* n_modes, int iflag,
                                             int ntr, double eps, cufinufft_plan* d_plan_ptr,
                                             cufinufft_opts* opts);
FIELDFT_CUFINUFFT_API int cufinufftf_makeplan(int type, int dim, const int64_t* n_modes, int iflag,
                                              int ntr, float eps, cufinufftf_plan* d_plan_ptr,
                                              cufinufft_opts* opts);

FIELDFT_CUFINUFFT_API int cufinufft_setpts(cufinufft_plan d_plan, int64_t M, double* d_x,
                                           double* d_y, double* d_z, int N, double* d_s,
                                           double* d_t, double* d_u);
FIELDFT_CUFINUFFT_API int cufinufftf_setpts(cufinufftf_plan d_plan, int64_t M, float* d_x,
                                            float* d_y, float* d_z, int N, float* d_s, float* d_t,
                                            float* d_u);

FIELDFT_CUFINUFFT_API int cufinufft_execute(cufinufft_plan d_plan, cuDoubleComplex* d_c,
                                            cuDoubleComplex* d_fk);
FIELDFT_CUFINUFFT_API int cufinufftf_execute(cufinufftf_plan d_plan, cuFloatComplex* d_c,
                                             cuFloatComplex* d_fk);

FIELDFT_CUFINUFFT_API int cufinufft_destroy(cufinufft_plan d_plan);
FIELDFT_CUFINUFFT_API int cufinufftf_destroy(cufinufftf_plan d_plan);

#ifdef __cplusplus
}
#endif

#endif /* CUFINUFFT_H */
