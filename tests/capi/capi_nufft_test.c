/* fieldft.h's NUFFT plans from C, against the exact sums: types 1, 2, 3 in 1D, 2D, 3D, double and
 * float, ntransf = 2, both mode orders, execute and execute_adjoint, and the plan's info.
 * Compiled with CAPI_TEST_GPU (the gpu variant): CUDA plans with device pointers, skipped without
 * a device. */
#include <math.h>

#include "check.h"
#include "fieldft/fieldft.h"
#include "oracle.h"

#ifdef CAPI_TEST_GPU
#define BACKEND FIELDFT_BACKEND_CUDA
#else
#define BACKEND FIELDFT_BACKEND_CPU
#endif

enum { kNtransf = 2 };

/* eps is each transform's relative l2 target; 10x leaves room for the kernel design's error
 * estimate being approximate, while a wrong sign, layout or mode order gives errors near 1. */
static double limit_for(double eps) { return 10 * eps; }

/* One plan of (type, dim, precision, modeord): forward and adjoint of kNtransf stacked transforms
 * against the oracle. */
static void run_case(int type, int dim, int single, int modeord) {
  const int64_t all_modes[3] = {12, 9, 6}; /* odd and even sizes */
  int64_t modes[3] = {1, 1, 1}, n = 1;
  for (int d = 0; d < dim; ++d) {
    modes[d] = all_modes[d];
    n *= modes[d];
  }
  const int64_t m = 41, nk = type == 3 ? 33 : 0;
  const int isign = (type + dim) % 2 ? -1 : 1;
  const double eps = single ? 1e-5 : 1e-10;
  /* types 1, 2: points beyond [-pi, pi) are folded; type 3: a box of sources and frequencies */
  const double xr = type == 3 ? 2.0 : 4.5;
  double* pts[3];
  double* tgt[3] = {NULL, NULL, NULL};
  for (int d = 0; d < 3; ++d) pts[d] = d < dim ? random_array(m, -xr, xr) : NULL;
  for (int d = 0; d < dim && type == 3; ++d) tgt[d] = random_array(nk, -9.0, 9.0);
  const int64_t n_out = type == 1 ? n : type == 2 ? m : nk, n_in = type == 2 ? n : m;
  double* in = random_array(2 * kNtransf * n_in, -1.0, 1.0);
  double* adj_in = random_array(2 * kNtransf * n_out, -1.0, 1.0);
  double* out = (double*)calloc((size_t)(2 * kNtransf * n_out), sizeof(double));
  double* adj_out = (double*)calloc((size_t)(2 * kNtransf * n_in), sizeof(double));

  fieldft_nufft_opts opts;
  fieldft_nufft_default_opts(&opts);
  opts.place.backend = BACKEND;
  opts.modeord = modeord;
  int rc;
  const size_t real = single ? sizeof(float) : sizeof(double);
  void* p_pts[3] = {NULL, NULL, NULL};
  void* p_tgt[3] = {NULL, NULL, NULL};
  for (int d = 0; d < 3; ++d) {
    void* hp = pts[d] ? (single ? (void*)to_float(pts[d], m) : (void*)pts[d]) : NULL;
    void* ht = tgt[d] ? (single ? (void*)to_float(tgt[d], nk) : (void*)tgt[d]) : NULL;
    p_pts[d] = place_copy(hp, (size_t)m * real);
    p_tgt[d] = place_copy(ht, (size_t)nk * real);
    if (single) {
      free(hp);
      free(ht);
    }
  }
  void* h_in = single ? (void*)to_float(in, 2 * kNtransf * n_in) : (void*)in;
  void* h_adj_in = single ? (void*)to_float(adj_in, 2 * kNtransf * n_out) : (void*)adj_in;
  void* p_in = place_copy(h_in, (size_t)(2 * kNtransf * n_in) * real);
  void* p_adj_in = place_copy(h_adj_in, (size_t)(2 * kNtransf * n_out) * real);
  void* p_out = place_alloc((size_t)(2 * kNtransf * n_out) * real);
  void* p_adj_out = place_alloc((size_t)(2 * kNtransf * n_in) * real);
  fieldft_nufft_info info;
  memset(&info, 0, sizeof info);

  if (single) {
    fieldft_nufft_planf plan = NULL;
    rc = fieldft_nufft_make_planf(type, dim, modes, isign, kNtransf, eps, &opts, &plan);
    CHECK(rc == FIELDFT_OK, "make_planf: %s", fieldft_last_error());
    rc = fieldft_nufft_set_pointsf(plan, m, p_pts[0], p_pts[1], p_pts[2], nk, p_tgt[0], p_tgt[1], p_tgt[2]);
    CHECK(rc == FIELDFT_OK, "set_pointsf: %s", fieldft_last_error());
    rc = fieldft_nufft_executef(plan, p_in, p_out);
    CHECK(rc == FIELDFT_OK, "executef: %s", fieldft_last_error());
    rc = fieldft_nufft_execute_adjointf(plan, p_adj_in, p_adj_out);
    CHECK(rc == FIELDFT_OK, "execute_adjointf: %s", fieldft_last_error());
    CHECK(fieldft_nufft_synchronizef(plan) == FIELDFT_OK, "synchronizef");
    CHECK(fieldft_nufft_get_infof(plan, &info) == FIELDFT_OK, "get_infof");
    CHECK(fieldft_nufft_destroyf(plan) == FIELDFT_OK, "destroyf");
    float* f_out = (float*)malloc((size_t)(2 * kNtransf * n_out) * sizeof(float));
    float* f_adj = (float*)malloc((size_t)(2 * kNtransf * n_in) * sizeof(float));
    place_fetch(f_out, p_out, (size_t)(2 * kNtransf * n_out) * sizeof(float));
    place_fetch(f_adj, p_adj_out, (size_t)(2 * kNtransf * n_in) * sizeof(float));
    double* d_out = to_double(f_out, 2 * kNtransf * n_out);
    double* d_adj = to_double(f_adj, 2 * kNtransf * n_in);
    memcpy(out, d_out, (size_t)(2 * kNtransf * n_out) * sizeof(double));
    memcpy(adj_out, d_adj, (size_t)(2 * kNtransf * n_in) * sizeof(double));
    free(f_out), free(f_adj), free(d_out), free(d_adj);
    /* the oracle sees the values the transform saw */
    double* in_seen = to_double((float*)h_in, 2 * kNtransf * n_in);
    double* adj_seen = to_double((float*)h_adj_in, 2 * kNtransf * n_out);
    memcpy(in, in_seen, (size_t)(2 * kNtransf * n_in) * sizeof(double));
    memcpy(adj_in, adj_seen, (size_t)(2 * kNtransf * n_out) * sizeof(double));
    free(in_seen), free(adj_seen), free(h_in), free(h_adj_in);
    for (int d = 0; d < 3; ++d) { /* and the points rounded to float */
      if (pts[d])
        for (int64_t j = 0; j < m; ++j) pts[d][j] = (double)(float)pts[d][j];
      if (tgt[d])
        for (int64_t j = 0; j < nk; ++j) tgt[d][j] = (double)(float)tgt[d][j];
    }
  } else {
    fieldft_nufft_plan plan = NULL;
    rc = fieldft_nufft_make_plan(type, dim, modes, isign, kNtransf, eps, &opts, &plan);
    CHECK(rc == FIELDFT_OK, "make_plan: %s", fieldft_last_error());
    rc = fieldft_nufft_set_points(plan, m, p_pts[0], p_pts[1], p_pts[2], nk, p_tgt[0], p_tgt[1], p_tgt[2]);
    CHECK(rc == FIELDFT_OK, "set_points: %s", fieldft_last_error());
    rc = fieldft_nufft_execute(plan, p_in, p_out);
    CHECK(rc == FIELDFT_OK, "execute: %s", fieldft_last_error());
    rc = fieldft_nufft_execute_adjoint(plan, p_adj_in, p_adj_out);
    CHECK(rc == FIELDFT_OK, "execute_adjoint: %s", fieldft_last_error());
    CHECK(fieldft_nufft_synchronize(plan) == FIELDFT_OK, "synchronize");
    CHECK(fieldft_nufft_get_info(plan, &info) == FIELDFT_OK, "get_info");
    CHECK(fieldft_nufft_destroy(plan) == FIELDFT_OK, "destroy");
    place_fetch(out, p_out, (size_t)(2 * kNtransf * n_out) * sizeof(double));
    place_fetch(adj_out, p_adj_out, (size_t)(2 * kNtransf * n_in) * sizeof(double));
  }

  CHECK(info.type == type && info.dim == dim && info.ntransf == kNtransf && info.isign == isign &&
            info.modeord == modeord && info.num_points == m && info.backend == BACKEND,
        "info: type %d dim %d ntransf %lld isign %d modeord %d M %lld backend %d", info.type, info.dim,
        (long long)info.ntransf, info.isign, info.modeord, (long long)info.num_points, info.backend);
  if (type != 3)
    for (int d = 0; d < 3; ++d) CHECK(info.modes[d] == modes[d], "info.modes[%d] = %lld", d, (long long)info.modes[d]);

  double* exact = (double*)malloc((size_t)(2 * (n_out > n_in ? n_out : n_in)) * sizeof(double));
  for (int t = 0; t < kNtransf; ++t) {
    /* forward */
    oracle_nufft(type, dim, modes, isign, modeord, m, pts[0], pts[1], pts[2], nk, tgt[0], tgt[1], tgt[2],
                 in + 2 * t * n_in, exact);
    double err = oracle_rel_error(n_out, out + 2 * t * n_out, exact);
    CHECK(err <= limit_for(eps), "type %d %dD %s modeord %d transform %d: forward error %.3g > %.3g", type, dim,
          single ? "float" : "double", modeord, t, err, limit_for(eps));
    /* adjoint: type 1 <-> type 2 with -isign; type 3 with sources and targets exchanged */
    if (type == 3)
      oracle_nufft(3, dim, NULL, -isign, 0, nk, tgt[0], tgt[1], tgt[2], m, pts[0], pts[1], pts[2],
                   adj_in + 2 * t * n_out, exact);
    else
      oracle_nufft(3 - type, dim, modes, -isign, modeord, m, pts[0], pts[1], pts[2], 0, NULL, NULL, NULL,
                   adj_in + 2 * t * n_out, exact);
    err = oracle_rel_error(n_in, adj_out + 2 * t * n_in, exact);
    CHECK(err <= limit_for(eps), "type %d %dD %s modeord %d transform %d: adjoint error %.3g > %.3g", type, dim,
          single ? "float" : "double", modeord, t, err, limit_for(eps));
  }
  free(exact);
  for (int d = 0; d < 3; ++d) {
    free(pts[d]);
    free(tgt[d]);
    place_free(p_pts[d]);
    place_free(p_tgt[d]);
  }
  place_free(p_in), place_free(p_adj_in), place_free(p_out), place_free(p_adj_out);
  free(in), free(adj_in), free(out), free(adj_out);
}

#ifdef CAPI_TEST_GPU
/* A CUDA plan on a stream of the caller's, given HOST arrays (staged through device memory by the
 * plan; the calls return when the result is on the host): 2D type 2 in double. */
static void test_host_pointers_on_device(void) {
  const int64_t modes[2] = {16, 11}, m = 57;
  double* x = random_array(m, -3.0, 3.0);
  double* y = random_array(m, -3.0, 3.0);
  double* f = random_array(2 * modes[0] * modes[1], -1.0, 1.0);
  double* c = (double*)calloc(2 * m, sizeof(double));
  double* exact = (double*)malloc(2 * m * sizeof(double));
  cudaStream_t stream;
  cudaStreamCreate(&stream);
  fieldft_nufft_opts opts;
  fieldft_nufft_default_opts(&opts);
  opts.place.backend = FIELDFT_BACKEND_CUDA;
  opts.place.stream = stream;
  fieldft_nufft_plan plan = NULL;
  CHECK(fieldft_nufft_make_plan(2, 2, modes, 1, 1, 1e-10, &opts, &plan) == FIELDFT_OK, "make_plan: %s",
        fieldft_last_error());
  CHECK(fieldft_nufft_set_points(plan, m, x, y, NULL, 0, NULL, NULL, NULL) == FIELDFT_OK, "set_points: %s",
        fieldft_last_error());
  CHECK(fieldft_nufft_execute(plan, (const fieldft_complex*)f, (fieldft_complex*)c) == FIELDFT_OK, "execute: %s",
        fieldft_last_error());
  fieldft_nufft_destroy(plan);
  cudaStreamDestroy(stream);
  oracle_nufft(2, 2, modes, 1, 0, m, x, y, NULL, 0, NULL, NULL, NULL, f, exact);
  const double e = oracle_rel_error(m, c, exact);
  CHECK(e <= limit_for(1e-10), "host pointers on a CUDA plan: error %.3g", e);
  free(x), free(y), free(f), free(c), free(exact);
}
#endif

int main(void) {
  if (skip_without_device()) return CAPI_TEST_SKIP;
  for (int type = 1; type <= 3; ++type)
    for (int dim = 1; dim <= 3; ++dim)
      for (int single = 0; single <= 1; ++single)
        for (int modeord = 0; modeord <= (type == 3 ? 0 : 1); ++modeord) run_case(type, dim, single, modeord);
#ifdef CAPI_TEST_GPU
  test_host_pointers_on_device();
#endif
  return check_report("capi_nufft_test");
}
