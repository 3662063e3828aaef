/* fieldft.h — fieldft's C interface (C11; usable from C++ too).
 *
 * A thin face over the C++ library (fieldft/nufft.hpp, fieldft/mri/dft.hpp, fieldft/mri/sense.hpp,
 * fieldft/solve/cg.hpp): the same transforms, conventions and errors, through opaque handles.
 * docs/c-api.md has a complete example.
 *
 * Precision. Every function exists for double and, with the suffix `f`, for float
 * (fieldft_nufft_execute / fieldft_nufft_executef). Handles of the two precisions are distinct
 * types. Tolerances and physical parameters are double in both.
 *
 * Complex arrays are interleaved (real, imaginary) pairs: fieldft_complex / fieldft_complexf, the
 * layout of C's `double _Complex`, C++'s std::complex<double> and CUDA's cuDoubleComplex (pass
 * such arrays with a cast).
 *
 * Errors. Every function that can fail returns an int status: FIELDFT_OK (0) or one of the codes
 * of fieldft_status (the same numbers as the C++ fieldft::ErrorCode, never renumbered). On
 * failure, fieldft_last_error() returns what was wrong and what was expected (thread-local, kept
 * until the next failing call on the same thread), and outputs are untouched except as stated.
 * No C++ exception ever crosses this interface. A null handle is FIELDFT_ERR_INVALID_ARGUMENT for
 * every function except the destroy functions, which accept it.
 *
 * Where work runs (fieldft_place). backend AUTO is CUDA device `device` when the library has the
 * CUDA backend and a device is visible, else the host. On the host, nthreads OpenMP threads (0:
 * all). On CUDA, work is ordered on `stream` (a cudaStream_t of that device; NULL is the legacy
 * default stream, which orders it with the caller's other default-stream work).
 *
 * Pointers. NUFFT plans on CUDA accept host or device pointers for points and data (host data are
 * staged through device memory and the call returns when the result is on the host; device-pointer
 * calls are stream-ordered: they enqueue and return — synchronize the stream, or call
 * fieldft_nufft_synchronize, before reading the result). The field-corrected DFT, the encoding
 * operators and the reconstruction take their vectors in the place's memory: host pointers on the
 * host, device pointers on CUDA (stream-ordered likewise); their geometry arrays and coil maps are
 * host memory, copied at creation.
 *
 * Thread safety: a handle must not be used from two threads at once; different handles are
 * independent.
 */
#ifndef FIELDFT_FIELDFT_H
#define FIELDFT_FIELDFT_H

#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__) || defined(__clang__)
#define FIELDFT_API __attribute__((visibility("default")))
#else
#define FIELDFT_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- status codes, messages, build ----------------------------------------------------------- */

typedef enum fieldft_status {
  FIELDFT_OK = 0,
  FIELDFT_ERR_INVALID_ARGUMENT = 1,     /* an option or argument outside its documented range */
  FIELDFT_ERR_NON_FINITE = 2,           /* NaN or Inf in coordinates, times, field or coil maps */
  FIELDFT_ERR_SHAPE_MISMATCH = 3,       /* sizes that must agree do not */
  FIELDFT_ERR_EPS_TOO_SMALL = 4,        /* tolerance below what the precision delivers */
  FIELDFT_ERR_TOO_LARGE = 5,            /* sizes overflow 64 bits or exceed the memory */
  FIELDFT_ERR_OUT_OF_MEMORY = 6,        /* an allocation failed */
  FIELDFT_ERR_BACKEND_UNAVAILABLE = 7,  /* CUDA not compiled in, or no such device */
  FIELDFT_ERR_NOT_IMPLEMENTED = 8,      /* a combination this version does not provide */
  FIELDFT_ERR_CUDA = 9,                 /* a CUDA runtime or cuFFT call failed */
  FIELDFT_ERR_INVALID_STATE = 10,       /* e.g. execute before set_points */
  FIELDFT_ERR_INTERNAL = 11,            /* a bug in fieldft (or an unexpected exception) */
  FIELDFT_ERR_CONTEXT_MISMATCH = 12     /* operands in different places */
} fieldft_status;

/* The short name of a status ("invalid argument"); "unknown status" for other values. Static. */
FIELDFT_API const char* fieldft_strerror(int status);
/* The message of the last failed call on this thread ("" if none). Valid until the next failing
 * call on this thread. */
FIELDFT_API const char* fieldft_last_error(void);
/* The library version, "0.1.0". Static. */
FIELDFT_API const char* fieldft_version(void);
/* CUDA devices visible to this process (0 without the CUDA backend or without a device). */
FIELDFT_API int fieldft_cuda_device_count(void);

/* ---- common types ---------------------------------------------------------------------------- */

typedef struct fieldft_complex {
  double re, im;
} fieldft_complex;
typedef struct fieldft_complexf {
  float re, im;
} fieldft_complexf;

typedef enum fieldft_backend {
  FIELDFT_BACKEND_AUTO = 0,
  FIELDFT_BACKEND_CPU = 1,
  FIELDFT_BACKEND_CUDA = 2
} fieldft_backend;

typedef struct fieldft_place {
  int backend;   /* fieldft_backend */
  int device;    /* CUDA device ordinal (>= 0) */
  void* stream;  /* cudaStream_t on `device`; NULL: the legacy default stream */
  int nthreads;  /* host: OpenMP threads, 0 = all (capped at 4x the processors) */
} fieldft_place;

/* AUTO, device 0, NULL stream, all threads. */
FIELDFT_API void fieldft_place_default(fieldft_place* place);

/* ---- NUFFT plans (fieldft/nufft.hpp) ---------------------------------------------------------
 * Definitions as FINUFFT's:
 *   type 1: f[k] = sum_j c[j] exp(isign i k.x_j),   k_d in [-N_d/2, (N_d-1)/2]
 *   type 2: c[j] = sum_k f[k] exp(isign i k.x_j)
 *   type 3: f[k] = sum_j c[j] exp(isign i s_k.x_j)  (nk arbitrary targets s_k)
 * Points of types 1 and 2 in radians, 2pi-periodic. Modes column-major, x fastest:
 * f[k1 + N1 (k2 + N2 k3)]; modeord 0 increasing, 1 FFT order. ntransf transforms are stacked
 * (transform t at t*N1*N2*N3 or t*M). execute applies the plan's type; execute_adjoint its adjoint
 * (a type 1 plan's adjoint maps f to c with -isign, and so on; points are shared).
 * eps: relative l2 error target in [1e-14, 1] (double) or [1e-7, 1] (float); below:
 * FIELDFT_ERR_EPS_TOO_SMALL. isign: +1 or -1, anything else FIELDFT_ERR_INVALID_ARGUMENT. */

typedef enum fieldft_nufft_method {
  FIELDFT_METHOD_AUTO = 0,
  FIELDFT_METHOD_NUPTS = 1,       /* one thread per sorted point (CUDA) */
  FIELDFT_METHOD_SUBPROBLEM = 2,  /* shared-memory subproblems (CUDA) */
  FIELDFT_METHOD_OUTPUT = 3,      /* output-driven tiles (CUDA) */
  FIELDFT_METHOD_PRECOMPUTED = 4  /* kernel weights computed at set_points (CPU, types 1 and 2) */
} fieldft_nufft_method;

typedef struct fieldft_nufft_opts {
  fieldft_place place;
  int modeord;             /* 0 increasing, 1 FFT order */
  double upsampfac;        /* sigma in [1.25, 2.25]; 0 = automatic */
  int method;              /* fieldft_nufft_method; the CPU accepts AUTO and NUPTS */
  int max_batch;           /* transforms processed together; 0 = automatic */
  int bin_size[3];         /* fine-grid cells per bin (x, y, z); 0 = automatic */
  int fft_measure;         /* CPU: 1 = FFTW_MEASURE planning, 0 = FFTW_ESTIMATE */
  int spread_boxes;        /* CUDA 3D: -1 automatic, 0 never, 1 always */
  int type3_direct;        /* type 3: -1 automatic, 0 grid, 1 direct sums */
  int spread_interp_only;  /* types 1 and 2: 1 = spread / interpolate only (no FFT) */
} fieldft_nufft_opts;

/* The defaults of fieldft::nufft::Options, place as fieldft_place_default. */
FIELDFT_API void fieldft_nufft_default_opts(fieldft_nufft_opts* opts);

/* What a plan chose (fieldft::nufft::PlanInfo). */
typedef struct fieldft_nufft_info {
  int type, dim;
  int64_t modes[3];      /* N1, N2, N3 (1 for unused dimensions; {1,1,1} for type 3) */
  int64_t fine_grid[3];  /* nf1, nf2, nf3 (type 3: after set_points) */
  int isign;
  int64_t ntransf;
  double eps, upsampfac;
  int kernel_width;
  double kernel_beta;
  int horner_degree;
  int max_batch;
  int bin_size[3];
  int backend;           /* fieldft_backend: CPU or CUDA */
  int method;            /* fieldft_nufft_method */
  int modeord;
  int64_t num_points;    /* M, after set_points */
  int64_t num_targets;   /* type 3: nk, after set_points */
  int spread_boxes, spread_tensor_cores, type3_direct, spread_interp_only;
  int nthreads;          /* CPU: OpenMP threads used; 0 on CUDA */
} fieldft_nufft_info;

typedef struct fieldft_nufft_plan_s* fieldft_nufft_plan;
typedef struct fieldft_nufft_planf_s* fieldft_nufft_planf;

/* type 1, 2 or 3; dim 1..3; modes: dim entries (ignored for type 3, may then be NULL);
 * ntransf >= 1; opts NULL: defaults. *plan is NULL on failure. */
FIELDFT_API int fieldft_nufft_make_plan(int type, int dim, const int64_t* modes, int isign,
                                        int64_t ntransf, double eps, const fieldft_nufft_opts* opts,
                                        fieldft_nufft_plan* plan);
FIELDFT_API int fieldft_nufft_make_planf(int type, int dim, const int64_t* modes, int isign,
                                         int64_t ntransf, double eps,
                                         const fieldft_nufft_opts* opts, fieldft_nufft_planf* plan);

/* m points x (and y for dim >= 2, z for dim 3); types 1 and 2: nk = 0 and s, t, u NULL; type 3:
 * nk targets s (t, u). The arrays are read during the call only. NaN/Inf:
 * FIELDFT_ERR_NON_FINITE; a needed array NULL with m > 0 (or nk > 0):
 * FIELDFT_ERR_INVALID_ARGUMENT. */
FIELDFT_API int fieldft_nufft_set_points(fieldft_nufft_plan plan, int64_t m, const double* x,
                                         const double* y, const double* z, int64_t nk,
                                         const double* s, const double* t, const double* u);
FIELDFT_API int fieldft_nufft_set_pointsf(fieldft_nufft_planf plan, int64_t m, const float* x,
                                          const float* y, const float* z, int64_t nk,
                                          const float* s, const float* t, const float* u);

/* type 1: in = c (ntransf x M), out = f (ntransf x N); type 2: in = f, out = c;
 * type 3: in = c (ntransf x M), out = f (ntransf x nk). Before set_points:
 * FIELDFT_ERR_INVALID_STATE. */
FIELDFT_API int fieldft_nufft_execute(fieldft_nufft_plan plan, const fieldft_complex* in,
                                      fieldft_complex* out);
FIELDFT_API int fieldft_nufft_executef(fieldft_nufft_planf plan, const fieldft_complexf* in,
                                       fieldft_complexf* out);
/* The adjoint: type 1 plan: in = f, out = c; type 2: in = c, out = f; type 3: in = f, out = c. */
FIELDFT_API int fieldft_nufft_execute_adjoint(fieldft_nufft_plan plan, const fieldft_complex* in,
                                              fieldft_complex* out);
FIELDFT_API int fieldft_nufft_execute_adjointf(fieldft_nufft_planf plan,
                                               const fieldft_complexf* in, fieldft_complexf* out);
/* Waits until the plan's enqueued device work is done (nothing on the host). */
FIELDFT_API int fieldft_nufft_synchronize(fieldft_nufft_plan plan);
FIELDFT_API int fieldft_nufft_synchronizef(fieldft_nufft_planf plan);
FIELDFT_API int fieldft_nufft_get_info(fieldft_nufft_plan plan, fieldft_nufft_info* info);
FIELDFT_API int fieldft_nufft_get_infof(fieldft_nufft_planf plan, fieldft_nufft_info* info);
/* NULL is accepted (FIELDFT_OK). */
FIELDFT_API int fieldft_nufft_destroy(fieldft_nufft_plan plan);
FIELDFT_API int fieldft_nufft_destroyf(fieldft_nufft_planf plan);

/* ---- MRI geometry (fieldft/mri/encoding.hpp) --------------------------------------------------
 * grid {Nx, Ny[, Nz]} (dim 2 or 3, x fastest); M samples at k (cycles per field of view, within
 * [-N_d/2, N_d/2]); voxel v at r_d = (i_d - floor(N_d/2)) / N_d; readout times t_j in s (NULL:
 * all 0); field map dw_v in rad/s per voxel (NULL: none); shot labels (NULL: one shot).
 * Forward model: s_j = sum_v m_v exp(-i (2 pi k_j.r_v + dw_v t_j)); adjoint: the conjugate phase.
 * All arrays are host memory, copied at creation. */
typedef struct fieldft_geometry {
  int dim;
  int64_t grid[3];        /* grid[2] unused in 2D */
  int64_t num_samples;    /* M */
  const double* kx;
  const double* ky;
  const double* kz;       /* NULL in 2D */
  const double* times;    /* M values or NULL */
  const double* field;    /* Nx*Ny[*Nz] values or NULL */
  const int32_t* shots;   /* M values or NULL */
} fieldft_geometry;
typedef struct fieldft_geometryf {
  int dim;
  int64_t grid[3];
  int64_t num_samples;
  const float* kx;
  const float* ky;
  const float* kz;
  const float* times;
  const float* field;
  const int32_t* shots;
} fieldft_geometryf;

/* ---- the field-corrected DFT (fieldft/mri/dft.hpp) --------------------------------------------
 * The exact sums of the forward model above (with r2 != 0: each term times the R2* factor
 * prod_d sinc(k_dj/N_d + G_dv t_j), G from central differences of the field map). images = C >= 1
 * stacked images per call (image c at c*voxels, samples c at c*M). Shot labels are ignored. */
typedef struct fieldft_dft_s* fieldft_dft;
typedef struct fieldft_dftf_s* fieldft_dftf;

FIELDFT_API int fieldft_dft_make(const fieldft_geometry* geometry, int64_t images, int r2,
                                 const fieldft_place* place, fieldft_dft* dft);
FIELDFT_API int fieldft_dft_makef(const fieldft_geometryf* geometry, int64_t images, int r2,
                                  const fieldft_place* place, fieldft_dftf* dft);
/* image (C x voxels) -> samples (C x M), and back; place memory (see the top). */
FIELDFT_API int fieldft_dft_forward(fieldft_dft dft, const fieldft_complex* image,
                                    fieldft_complex* samples);
FIELDFT_API int fieldft_dft_forwardf(fieldft_dftf dft, const fieldft_complexf* image,
                                     fieldft_complexf* samples);
FIELDFT_API int fieldft_dft_adjoint(fieldft_dft dft, const fieldft_complex* samples,
                                    fieldft_complex* image);
FIELDFT_API int fieldft_dft_adjointf(fieldft_dftf dft, const fieldft_complexf* samples,
                                     fieldft_complexf* image);
FIELDFT_API int fieldft_dft_synchronize(fieldft_dft dft);
FIELDFT_API int fieldft_dft_synchronizef(fieldft_dftf dft);
FIELDFT_API int fieldft_dft_destroy(fieldft_dft dft);
FIELDFT_API int fieldft_dft_destroyf(fieldft_dftf dft);

/* ---- encoding models and SENSE (fieldft/mri/encoding.hpp, sense.hpp) -------------------------- */

typedef enum fieldft_encoding_kind {
  FIELDFT_ENCODING_NUFFT = 0,           /* type 2 / type 1 NUFFT; no field map */
  FIELDFT_ENCODING_DFT = 1,             /* the exact field-corrected DFT */
  FIELDFT_ENCODING_TIME_SEGMENTED = 2,  /* field map through time segmentation on the NUFFT */
  FIELDFT_ENCODING_AUTO = 3             /* NUFFT without a field map, else DFT or time
                                           segmentation by predicted cost */
} fieldft_encoding_kind;

typedef struct fieldft_encoding_opts {
  fieldft_place place;
  int kind;          /* fieldft_encoding_kind */
  double eps;        /* NUFFT tolerance (relative l2), default 1e-5 */
  double accuracy;   /* time segmentation: worst-case phase error, default 1e-3 */
  int toeplitz;      /* normal operator through Toeplitz: 0 off, 1 on, 2 automatic (default) */
  int iterations;    /* AUTO: the normal applications the choice plans for, default 30 */
} fieldft_encoding_opts;

FIELDFT_API void fieldft_encoding_default_opts(fieldft_encoding_opts* opts);

/* A linear operator A: domain_size complex values -> codomain_size values (x fastest, stacked
 * images / coils slowest), vectors in the place's memory. apply: y = A x; apply_adjoint:
 * x = A^H y; apply_normal: z = A^H A x. Outputs are overwritten. */
typedef struct fieldft_operator_s* fieldft_operator;
typedef struct fieldft_operatorf_s* fieldft_operatorf;

/* The encoding model E of the geometry, `batch` >= 1 stacked images per call through one batched
 * transform: domain voxels*batch, codomain M*batch. opts NULL: defaults. */
FIELDFT_API int fieldft_encoding_make(const fieldft_geometry* geometry, int64_t batch,
                                      const fieldft_encoding_opts* opts, fieldft_operator* op);
FIELDFT_API int fieldft_encoding_makef(const fieldft_geometryf* geometry, int64_t batch,
                                       const fieldft_encoding_opts* opts, fieldft_operatorf* op);
/* SENSE: y_c = E (S_c o x), c < coils; maps: host memory, voxels*coils values (coil c at
 * c*voxels). Domain voxels, codomain M*coils (coil c's samples at c*M). One batched transform
 * over the coils per call. */
FIELDFT_API int fieldft_sense_make(const fieldft_geometry* geometry, const fieldft_complex* maps,
                                   int64_t coils, const fieldft_encoding_opts* opts,
                                   fieldft_operator* op);
FIELDFT_API int fieldft_sense_makef(const fieldft_geometryf* geometry,
                                    const fieldft_complexf* maps, int64_t coils,
                                    const fieldft_encoding_opts* opts, fieldft_operatorf* op);

FIELDFT_API int fieldft_operator_apply(fieldft_operator op, const fieldft_complex* x,
                                       fieldft_complex* y);
FIELDFT_API int fieldft_operator_applyf(fieldft_operatorf op, const fieldft_complexf* x,
                                        fieldft_complexf* y);
FIELDFT_API int fieldft_operator_apply_adjoint(fieldft_operator op, const fieldft_complex* y,
                                               fieldft_complex* x);
FIELDFT_API int fieldft_operator_apply_adjointf(fieldft_operatorf op, const fieldft_complexf* y,
                                                fieldft_complexf* x);
FIELDFT_API int fieldft_operator_apply_normal(fieldft_operator op, const fieldft_complex* x,
                                              fieldft_complex* z);
FIELDFT_API int fieldft_operator_apply_normalf(fieldft_operatorf op, const fieldft_complexf* x,
                                               fieldft_complexf* z);
FIELDFT_API int fieldft_operator_sizes(fieldft_operator op, int64_t* domain_size,
                                       int64_t* codomain_size);
FIELDFT_API int fieldft_operator_sizesf(fieldft_operatorf op, int64_t* domain_size,
                                        int64_t* codomain_size);
/* A description, e.g. "NufftEncoding(64x64 -> 4096, 8 images)"; owned by op. NULL for NULL. */
FIELDFT_API const char* fieldft_operator_name(fieldft_operator op);
FIELDFT_API const char* fieldft_operator_namef(fieldft_operatorf op);
FIELDFT_API int fieldft_operator_synchronize(fieldft_operator op);
FIELDFT_API int fieldft_operator_synchronizef(fieldft_operatorf op);
FIELDFT_API int fieldft_operator_destroy(fieldft_operator op);
FIELDFT_API int fieldft_operator_destroyf(fieldft_operatorf op);

/* ---- reconstruction (fieldft/solve/cg.hpp) -----------------------------------------------------
 * fieldft_sense_cg: SENSE reconstruction with an optional field map. Builds A = SENSE(geometry,
 * maps) exactly as fieldft_sense_make does (opts->encoding.kind AUTO by default: the NUFFT without
 * a field map, else the exact DFT or time segmentation, whichever is predicted faster for
 * max_iterations normal applications), then runs conjugate gradients from x = 0 on
 *     (A^H A + lambda I) x = A^H y,
 * i.e. minimises ||A x - y||^2 + lambda ||x||^2 (no density weights: the least-squares solution).
 * kspace: M*coils values (coil c at c*M), image: voxels values, both in the place's memory; maps
 * host memory. The data should be scaled so that |S| ~ 1 and rms(y) ~ 1 in float (CG's scalars
 * are in the working precision). On CUDA with tolerance 0 the call returns once the iterations
 * are enqueued (report->residual NaN); synchronize the stream before reading the image. */
typedef struct fieldft_recon_opts {
  fieldft_encoding_opts encoding;
  int max_iterations;  /* >= 1, default 30 */
  double tolerance;    /* stop at ||r||/||r0|| <= tolerance; 0 (default): run all iterations */
  double lambda;       /* Tikhonov weight >= 0, default 0 */
} fieldft_recon_opts;

typedef struct fieldft_recon_report {
  int iterations;      /* updates of x done */
  double residual;     /* final ||r||/||r0|| of the normal equations; NaN when not computed */
  int converged;       /* residual <= tolerance */
  int encoding;        /* fieldft_encoding_kind used (never AUTO) */
  int toeplitz;        /* time segmentation: the field-corrected Toeplitz normal was chosen */
  int segments;        /* time segmentation: L chosen by AUTO (0 otherwise) */
  char reason[512];    /* AUTO: why that encoding (truncated), else "" */
} fieldft_recon_report;

FIELDFT_API void fieldft_recon_default_opts(fieldft_recon_opts* opts);
FIELDFT_API int fieldft_sense_cg(const fieldft_geometry* geometry, const fieldft_complex* maps,
                                 int64_t coils, const fieldft_complex* kspace,
                                 fieldft_complex* image, const fieldft_recon_opts* opts,
                                 fieldft_recon_report* report);
FIELDFT_API int fieldft_sense_cgf(const fieldft_geometryf* geometry, const fieldft_complexf* maps,
                                  int64_t coils, const fieldft_complexf* kspace,
                                  fieldft_complexf* image, const fieldft_recon_opts* opts,
                                  fieldft_recon_report* report);

#ifdef __cplusplus
}
#endif

#endif /* FIELDFT_FIELDFT_H */
