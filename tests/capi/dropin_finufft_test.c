/* libfieldft_finufft from C, written against FINUFFT's documented C interface only (finufft.h):
 * the guru interface (types 1, 2, 3 in 1D, 2D, 3D, double and float, ntrans = 2, execute and
 * execute_adjoint), all simple interfaces, and FINUFFT's return codes for bad input, checked
 * against the exact sums. */
#include <complex.h>
#include <math.h>

#include <finufft.h>

#include "check.h"
#include "oracle.h"

enum { kNtr = 2, kM = 37, kNk = 29 };
static const double kPi = 3.14159265358979323846;
static const int64_t kModes[3] = {10, 7, 6};

/* FINUFFT's tol is a relative l2 target per transform; 10x leaves room for the kernel design's
 * error estimate, while a wrong sign, layout or mode order gives errors near 1. */
static double limit_for(double tol) { return 10 * tol; }

/* Interleaved doubles of n complex values of either precision. */
static double* as_doubles(const void* a, int single, int64_t n) {
  double* d = (double*)malloc((size_t)(2 * n > 0 ? 2 * n : 1) * sizeof(double));
  for (int64_t i = 0; i < 2 * n; ++i) d[i] = single ? ((const float*)a)[i] : ((const double*)a)[i];
  return d;
}

/* Random points (types 1, 2 in [-3pi, 3pi); type 3 sources in [-2, 2], targets in [-8, 8]),
 * rounded to float when single so that the oracle sees what the transform saw. */
typedef struct {
  double* x[3];
  double* s[3];
  float* xf[3];
  float* sf[3];
} Points;
static Points make_points(int type, int dim) {
  Points p;
  memset(&p, 0, sizeof p);
  for (int d = 0; d < dim; ++d) {
    p.x[d] = random_array(kM, type == 3 ? -2.0 : -3 * kPi, type == 3 ? 2.0 : 3 * kPi);
    p.xf[d] = to_float(p.x[d], kM);
    for (int j = 0; j < kM; ++j) p.x[d][j] = p.xf[d][j];
    if (type == 3) {
      p.s[d] = random_array(kNk, -8.0, 8.0);
      p.sf[d] = to_float(p.s[d], kNk);
      for (int j = 0; j < kNk; ++j) p.s[d][j] = p.sf[d][j];
    }
  }
  return p;
}
static void free_points(Points* p) {
  for (int d = 0; d < 3; ++d) free(p->x[d]), free(p->s[d]), free(p->xf[d]), free(p->sf[d]);
}

/* Checks c (nc values per transform) and f (nf per transform) of one forward or adjoint execute
 * against the oracle, for ntr transforms. `in_is_c`: c was the input. */
static void check_result(const char* what, int type, int dim, const int64_t* n, int isign, int modeord,
                         const Points* p, int ntr, const double* c, const double* f, int in_is_c, int adjoint,
                         double tol) {
  int64_t nf = 1;
  for (int d = 0; d < dim; ++d) nf *= n[d];
  if (type == 3) nf = kNk;
  const int64_t nin = in_is_c ? kM : nf, nout = in_is_c ? nf : kM;
  double* exact = (double*)malloc((size_t)(2 * (nout > 0 ? nout : 1)) * sizeof(double));
  for (int t = 0; t < ntr; ++t) {
    const double* in = (in_is_c ? c : f) + 2 * t * nin;
    const double* out = (in_is_c ? f : c) + 2 * t * nout;
    const int sign = adjoint ? -isign : isign;
    if (type == 3 && adjoint)
      oracle_nufft(3, dim, NULL, sign, 0, kNk, p->s[0], p->s[1], p->s[2], kM, p->x[0], p->x[1], p->x[2], in, exact);
    else if (type == 3)
      oracle_nufft(3, dim, NULL, sign, 0, kM, p->x[0], p->x[1], p->x[2], kNk, p->s[0], p->s[1], p->s[2], in, exact);
    else
      oracle_nufft(in_is_c ? 1 : 2, dim, n, sign, modeord, kM, p->x[0], p->x[1], p->x[2], 0, NULL, NULL, NULL, in,
                   exact);
    const double e = oracle_rel_error(nout, out, exact);
    CHECK(e <= limit_for(tol), "%s type %d %dD transform %d: error %.3g > %.3g", what, type, dim, t, e,
          limit_for(tol));
  }
  free(exact);
}

/* The guru interface for one (type, dim, precision): execute, then execute_adjoint. */
static void test_guru(int type, int dim, int single) {
  const int isign = type == 2 ? -1 : 1;
  const double tol = single ? 1e-5 : 1e-10;
  finufft_opts opts;
  finufft_default_opts(&opts);
  opts.modeord = dim == 2; /* FFT order in 2D */
  opts.nthreads = 2;
  Points p = make_points(type, dim);
  int64_t nf = 1;
  for (int d = 0; d < dim; ++d) nf *= kModes[d];
  if (type == 3) nf = kNk;
  const size_t cx = single ? sizeof(float complex) : sizeof(double complex);
  /* c and f hold ntr transforms; the inputs are random, the outputs filled by the library */
  double* cr = random_array(2 * kNtr * kM, -1, 1);
  double* fr = random_array(2 * kNtr * nf, -1, 1);
  void* c = malloc(kNtr * kM * cx);
  void* f = malloc(kNtr * nf * cx);
  for (int64_t i = 0; i < 2 * kNtr * kM; ++i) {
    if (single) ((float*)c)[i] = (float)cr[i];
    else ((double*)c)[i] = cr[i];
  }
  for (int64_t i = 0; i < 2 * kNtr * nf; ++i) {
    if (single) ((float*)f)[i] = (float)fr[i];
    else ((double*)f)[i] = fr[i];
  }
  int ier;
  const int c_in = type != 2; /* execute reads c for types 1 and 3 */
  for (int adjoint = 0; adjoint <= 1; ++adjoint) {
    if (single) {
      finufftf_plan plan;
      ier = finufftf_makeplan(type, dim, kModes, isign, kNtr, (float)tol, &plan, &opts);
      CHECK(ier == 0, "finufftf_makeplan: %d", ier);
      ier = finufftf_setpts(plan, kM, p.xf[0], p.xf[1], p.xf[2], kNk, p.sf[0], p.sf[1], p.sf[2]);
      CHECK(ier == 0, "finufftf_setpts: %d", ier);
      ier = adjoint ? finufftf_execute_adjoint(plan, (float complex*)c, (float complex*)f)
                    : finufftf_execute(plan, (float complex*)c, (float complex*)f);
      CHECK(ier == 0, "finufftf_execute: %d", ier);
      CHECK(finufftf_destroy(plan) == 0, "finufftf_destroy");
    } else {
      finufft_plan plan;
      ier = finufft_makeplan(type, dim, kModes, isign, kNtr, tol, &plan, &opts);
      CHECK(ier == 0, "finufft_makeplan: %d", ier);
      ier = finufft_setpts(plan, kM, p.x[0], p.x[1], p.x[2], kNk, p.s[0], p.s[1], p.s[2]);
      CHECK(ier == 0, "finufft_setpts: %d", ier);
      ier = adjoint ? finufft_execute_adjoint(plan, (double complex*)c, (double complex*)f)
                    : finufft_execute(plan, (double complex*)c, (double complex*)f);
      CHECK(ier == 0, "finufft_execute: %d", ier);
      CHECK(finufft_destroy(plan) == 0, "finufft_destroy");
    }
    double* cd = as_doubles(c, single, kNtr * kM);
    double* fd = as_doubles(f, single, kNtr * nf);
    check_result(adjoint ? (single ? "finufftf adjoint" : "finufft adjoint") : (single ? "finufftf" : "finufft"),
                 type, dim, kModes, isign, opts.modeord, &p, kNtr, cd, fd, adjoint ? !c_in : c_in, adjoint, tol);
    free(cd), free(fd);
  }
  free(c), free(f), free(cr), free(fr);
  free_points(&p);
}

/* Every simple interface (one transform and ntr = 2, both precisions) against the oracle. */
#define SIMPLE_CASE(single, call, type, dim, ntr)                                                          \
  do {                                                                                                     \
    const int ier_ = (call);                                                                               \
    CHECK(ier_ == 0, "%s returned %d", #call, ier_);                                                       \
    double* cd_ = as_doubles(c, single, (ntr) * kM);                                                       \
    double* fd_ = as_doubles(f, single, (ntr) * ((type) == 3 ? kNk : nf[dim - 1])); \
    check_result(#call, type, dim, kModes, isign, 0, &p[type - 1][dim - 1], ntr, cd_, fd_, (type) != 2, 0, \
                 single ? 1e-5 : 1e-10);                                                                   \
    free(cd_), free(fd_);                                                                                  \
  } while (0)

/* The points of every (type, dim), the sizes and the random inputs of the simple interfaces. */
typedef struct {
  Points p[3][3];
  int64_t nf[3];
  double* cr;
  double* fr;
} SimpleData;
enum { kBig = 420 }; /* the largest mode array, 10 x 7 x 6 */
#define D(t, d) p[t - 1][d - 1]
#define p (data->p)
#define nf (data->nf)

static void test_simple_double(const SimpleData* data) {
  const int isign = 1;
  const int64_t ms = kModes[0], mt = kModes[1], mu = kModes[2];
  const double tol = 1e-10;
  finufft_opts* o = NULL; /* NULL: FINUFFT's defaults */
  double complex* c = (double complex*)malloc(2 * kM * sizeof(double complex));
  double complex* f = (double complex*)malloc(2 * kBig * sizeof(double complex));
#define RESET() memcpy(c, data->cr, 2 * 2 * kM * sizeof(double)), memcpy(f, data->fr, 2 * 2 * kBig * sizeof(double))
  for (int ntr = 1; ntr <= 2; ++ntr) {
    const int sc = 0;
    RESET();
    SIMPLE_CASE(sc, ntr == 1 ? finufft1d1(kM, D(1, 1).x[0], c, isign, tol, ms, f, o) : finufft1d1many(2, kM, D(1, 1).x[0], c, isign, tol, ms, f, o), 1, 1, ntr);
    RESET();
    SIMPLE_CASE(sc, ntr == 1 ? finufft1d2(kM, D(2, 1).x[0], c, isign, tol, ms, f, o) : finufft1d2many(2, kM, D(2, 1).x[0], c, isign, tol, ms, f, o), 2, 1, ntr);
    RESET();
    SIMPLE_CASE(sc, ntr == 1 ? finufft1d3(kM, D(3, 1).x[0], c, isign, tol, kNk, D(3, 1).s[0], f, o) : finufft1d3many(2, kM, D(3, 1).x[0], c, isign, tol, kNk, D(3, 1).s[0], f, o), 3, 1, ntr);
    RESET();
    SIMPLE_CASE(sc, ntr == 1 ? finufft2d1(kM, D(1, 2).x[0], D(1, 2).x[1], c, isign, tol, ms, mt, f, o) : finufft2d1many(2, kM, D(1, 2).x[0], D(1, 2).x[1], c, isign, tol, ms, mt, f, o), 1, 2, ntr);
    RESET();
    SIMPLE_CASE(sc, ntr == 1 ? finufft2d2(kM, D(2, 2).x[0], D(2, 2).x[1], c, isign, tol, ms, mt, f, o) : finufft2d2many(2, kM, D(2, 2).x[0], D(2, 2).x[1], c, isign, tol, ms, mt, f, o), 2, 2, ntr);
    RESET();
    SIMPLE_CASE(sc, ntr == 1 ? finufft2d3(kM, D(3, 2).x[0], D(3, 2).x[1], c, isign, tol, kNk, D(3, 2).s[0], D(3, 2).s[1], f, o) : finufft2d3many(2, kM, D(3, 2).x[0], D(3, 2).x[1], c, isign, tol, kNk, D(3, 2).s[0], D(3, 2).s[1], f, o), 3, 2, ntr);
    RESET();
    SIMPLE_CASE(sc, ntr == 1 ? finufft3d1(kM, D(1, 3).x[0], D(1, 3).x[1], D(1, 3).x[2], c, isign, tol, ms, mt, mu, f, o) : finufft3d1many(2, kM, D(1, 3).x[0], D(1, 3).x[1], D(1, 3).x[2], c, isign, tol, ms, mt, mu, f, o), 1, 3, ntr);
    RESET();
    SIMPLE_CASE(sc, ntr == 1 ? finufft3d2(kM, D(2, 3).x[0], D(2, 3).x[1], D(2, 3).x[2], c, isign, tol, ms, mt, mu, f, o) : finufft3d2many(2, kM, D(2, 3).x[0], D(2, 3).x[1], D(2, 3).x[2], c, isign, tol, ms, mt, mu, f, o), 2, 3, ntr);
    RESET();
    SIMPLE_CASE(sc, ntr == 1 ? finufft3d3(kM, D(3, 3).x[0], D(3, 3).x[1], D(3, 3).x[2], c, isign, tol, kNk, D(3, 3).s[0], D(3, 3).s[1], D(3, 3).s[2], f, o) : finufft3d3many(2, kM, D(3, 3).x[0], D(3, 3).x[1], D(3, 3).x[2], c, isign, tol, kNk, D(3, 3).s[0], D(3, 3).s[1], D(3, 3).s[2], f, o), 3, 3, ntr);
  }
  free(c), free(f);
}

static void test_simple_float(const SimpleData* data) {
  const int isign = 1;
  const int64_t ms = kModes[0], mt = kModes[1], mu = kModes[2];
  const float tf = 1e-5f;
  finufft_opts opts;
  finufft_default_opts(&opts);
  finufft_opts* o = &opts;
  float complex* c = (float complex*)malloc(2 * kM * sizeof(float complex));
  float complex* f = (float complex*)malloc(2 * kBig * sizeof(float complex));
#define RESETF()                                                                      \
  do {                                                                                \
    for (int i_ = 0; i_ < 2 * 2 * kM; ++i_) ((float*)c)[i_] = (float)data->cr[i_];   \
    for (int i_ = 0; i_ < 2 * 2 * kBig; ++i_) ((float*)f)[i_] = (float)data->fr[i_]; \
  } while (0)
  for (int ntr = 1; ntr <= 2; ++ntr) {
    const int sc = 1;
    RESETF();
    SIMPLE_CASE(sc, ntr == 1 ? finufftf1d1(kM, D(1, 1).xf[0], c, isign, tf, ms, f, o) : finufftf1d1many(2, kM, D(1, 1).xf[0], c, isign, tf, ms, f, o), 1, 1, ntr);
    RESETF();
    SIMPLE_CASE(sc, ntr == 1 ? finufftf1d2(kM, D(2, 1).xf[0], c, isign, tf, ms, f, o) : finufftf1d2many(2, kM, D(2, 1).xf[0], c, isign, tf, ms, f, o), 2, 1, ntr);
    RESETF();
    SIMPLE_CASE(sc, ntr == 1 ? finufftf1d3(kM, D(3, 1).xf[0], c, isign, tf, kNk, D(3, 1).sf[0], f, o) : finufftf1d3many(2, kM, D(3, 1).xf[0], c, isign, tf, kNk, D(3, 1).sf[0], f, o), 3, 1, ntr);
    RESETF();
    SIMPLE_CASE(sc, ntr == 1 ? finufftf2d1(kM, D(1, 2).xf[0], D(1, 2).xf[1], c, isign, tf, ms, mt, f, o) : finufftf2d1many(2, kM, D(1, 2).xf[0], D(1, 2).xf[1], c, isign, tf, ms, mt, f, o), 1, 2, ntr);
    RESETF();
    SIMPLE_CASE(sc, ntr == 1 ? finufftf2d2(kM, D(2, 2).xf[0], D(2, 2).xf[1], c, isign, tf, ms, mt, f, o) : finufftf2d2many(2, kM, D(2, 2).xf[0], D(2, 2).xf[1], c, isign, tf, ms, mt, f, o), 2, 2, ntr);
    RESETF();
    SIMPLE_CASE(sc, ntr == 1 ? finufftf2d3(kM, D(3, 2).xf[0], D(3, 2).xf[1], c, isign, tf, kNk, D(3, 2).sf[0], D(3, 2).sf[1], f, o) : finufftf2d3many(2, kM, D(3, 2).xf[0], D(3, 2).xf[1], c, isign, tf, kNk, D(3, 2).sf[0], D(3, 2).sf[1], f, o), 3, 2, ntr);
    RESETF();
    SIMPLE_CASE(sc, ntr == 1 ? finufftf3d1(kM, D(1, 3).xf[0], D(1, 3).xf[1], D(1, 3).xf[2], c, isign, tf, ms, mt, mu, f, o) : finufftf3d1many(2, kM, D(1, 3).xf[0], D(1, 3).xf[1], D(1, 3).xf[2], c, isign, tf, ms, mt, mu, f, o), 1, 3, ntr);
    RESETF();
    SIMPLE_CASE(sc, ntr == 1 ? finufftf3d2(kM, D(2, 3).xf[0], D(2, 3).xf[1], D(2, 3).xf[2], c, isign, tf, ms, mt, mu, f, o) : finufftf3d2many(2, kM, D(2, 3).xf[0], D(2, 3).xf[1], D(2, 3).xf[2], c, isign, tf, ms, mt, mu, f, o), 2, 3, ntr);
    RESETF();
    SIMPLE_CASE(sc, ntr == 1 ? finufftf3d3(kM, D(3, 3).xf[0], D(3, 3).xf[1], D(3, 3).xf[2], c, isign, tf, kNk, D(3, 3).sf[0], D(3, 3).sf[1], D(3, 3).sf[2], f, o) : finufftf3d3many(2, kM, D(3, 3).xf[0], D(3, 3).xf[1], D(3, 3).xf[2], c, isign, tf, kNk, D(3, 3).sf[0], D(3, 3).sf[1], D(3, 3).sf[2], f, o), 3, 3, ntr);
    }
  free(c), free(f);
}
#undef p
#undef nf
#undef D

static void test_simple(void) {
  SimpleData data;
  for (int t = 1; t <= 3; ++t)
    for (int d = 1; d <= 3; ++d) data.p[t - 1][d - 1] = make_points(t, d);
  data.nf[0] = kModes[0], data.nf[1] = kModes[0] * kModes[1], data.nf[2] = kModes[0] * kModes[1] * kModes[2];
  data.cr = random_array(2 * 2 * kM, -1, 1);
  data.fr = random_array(2 * 2 * kBig, -1, 1);
  test_simple_double(&data);
  test_simple_float(&data);
  free(data.cr), free(data.fr);
  for (int t = 0; t < 3; ++t)
    for (int d = 0; d < 3; ++d) free_points(&data.p[t][d]);
}

/* FINUFFT's return codes for bad input, and its conventions for edge cases. */
static void test_codes(void) {
  finufft_opts opts;
  finufft_default_opts(&opts);
  finufft_plan plan;
  const int64_t n[3] = {16, 16, 16};
  CHECK(finufft_makeplan(4, 1, n, 1, 1, 1e-6, &plan, &opts) == FINUFFT_ERR_TYPE_NOTVALID, "type 4");
  CHECK(finufft_makeplan(1, 0, n, 1, 1, 1e-6, &plan, &opts) == FINUFFT_ERR_DIM_NOTVALID, "dim 0");
  CHECK(finufft_makeplan(1, 4, n, 1, 1, 1e-6, &plan, &opts) == FINUFFT_ERR_DIM_NOTVALID, "dim 4");
  CHECK(finufft_makeplan(1, 1, n, 1, 0, 1e-6, &plan, &opts) == FINUFFT_ERR_NTRANS_NOTVALID, "ntrans 0");
  const int64_t neg[1] = {-3};
  CHECK(finufft_makeplan(1, 1, neg, 1, 1, 1e-6, &plan, &opts) == FINUFFT_ERR_NDATA_NOTVALID, "modes -3");
  finufft_opts bad = opts;
  bad.upsampfac = 0.9;
  CHECK(finufft_makeplan(1, 1, n, 1, 1, 1e-6, &plan, &bad) == FINUFFT_ERR_UPSAMPFAC_TOO_SMALL, "upsampfac 0.9");
  bad = opts;
  bad.spread_kerformula = 1;
  CHECK(finufft_makeplan(1, 1, n, 1, 1, 1e-6, &plan, &bad) == FINUFFT_ERR_KERFORMULA_NOTVALID, "kerformula");
  bad = opts;
  bad.spread_thread = 5;
  CHECK(finufft_makeplan(1, 1, n, 1, 1, 1e-6, &plan, &bad) == FINUFFT_ERR_SPREAD_THREAD_NOTVALID, "spread_thread");
  bad = opts;
  bad.fftw_lock_fun = (void (*)(void*))free; /* any non-NULL function without its unlock */
  CHECK(finufft_makeplan(1, 1, n, 1, 1, 1e-6, &plan, &bad) == FINUFFT_ERR_LOCK_FUNS_INVALID, "lock funs");

  /* tol below what the precision delivers: the warning, and a working plan */
  int ier = finufft_makeplan(1, 1, n, 1, 1, 1e-20, &plan, &opts);
  CHECK(ier == FINUFFT_WARN_EPS_TOO_SMALL, "tol 1e-20: %d", ier);
  double x[3] = {0.1, -2.0, 3.0};
  double complex c[3] = {1, I, 1 + I};
  double complex f[16];
  CHECK(finufft_setpts(plan, -1, x, NULL, NULL, 0, NULL, NULL, NULL) == FINUFFT_ERR_NUM_NU_PTS_INVALID, "M -1");
  x[1] = NAN;
  CHECK(finufft_setpts(plan, 3, x, NULL, NULL, 0, NULL, NULL, NULL) == FINUFFT_ERR_SPREAD_PTS_OUT_RANGE, "NaN point");
  x[1] = -2.0;
  CHECK(finufft_setpts(plan, 3, x, NULL, NULL, 0, NULL, NULL, NULL) == 0, "setpts");
  CHECK(finufft_execute(plan, c, f) == 0, "execute after the warning");
  CHECK(finufft_destroy(plan) == 0, "destroy");
  /* any iflag sign: >= 0 is +1, < 0 is -1 */
  double complex f5[16], f1[16];
  CHECK(finufft1d1(3, x, c, 5, 1e-12, 16, f5, NULL) == 0, "iflag 5");
  CHECK(finufft1d1(3, x, c, 1, 1e-12, 16, f1, NULL) == 0, "iflag 1");
  CHECK(oracle_rel_error(16, (const double*)f5, (const double*)f1) == 0.0, "iflag 5 differs from iflag 1");
  /* a mode count of 0: type 1 writes nothing, type 2 writes zeros */
  double complex cz[3] = {9, 9, 9};
  CHECK(finufft1d2(3, x, cz, 1, 1e-6, 0, f, NULL) == 0, "type 2 with N = 0");
  CHECK(cz[0] == 0 && cz[1] == 0 && cz[2] == 0, "type 2 with N = 0 did not write zeros");
  CHECK(finufft1d1(3, x, c, 1, 1e-6, 0, f, NULL) == 0, "type 1 with N = 0");
  /* null plan and execute before setpts */
  CHECK(finufft_execute(NULL, c, f) == FINUFFT_ERR_PLAN_NOTVALID, "null plan");
  CHECK(finufft_makeplan(2, 1, n, 1, 1, 1e-6, &plan, NULL) == 0, "makeplan with NULL opts");
  CHECK(finufft_execute(plan, c, f) == FINUFFT_ERR_PLAN_NOTVALID, "execute before setpts");
  CHECK(finufft_destroy(plan) == 0, "destroy");
  CHECK(finufft_destroy(NULL) == 0, "destroy(NULL)");
}

int main(void) {
  for (int type = 1; type <= 3; ++type)
    for (int dim = 1; dim <= 3; ++dim)
      for (int single = 0; single <= 1; ++single) test_guru(type, dim, single);
  test_simple();
  test_codes();
  return check_report("dropin_finufft_test");
}
