/* fieldft.h's MRI face from C: the field-corrected DFT, the encoding models, SENSE and the SENSE-CG
 * reconstruction, against the exact sums of the forward model s_j = sum_v m_v exp(-i(2pi k_j.r_v +
 * dw_v t_j)). Compiled with CAPI_TEST_GPU (the gpu variant): vectors in device memory, skipped
 * without a device. */
#include <math.h>

#include "check.h"
#include "fieldft/fieldft.h"
#include "oracle.h"

#ifdef CAPI_TEST_GPU
#define BACKEND FIELDFT_BACKEND_CUDA
#else
#define BACKEND FIELDFT_BACKEND_CPU
#endif

enum { kNx = 10, kNy = 8, kVoxels = kNx * kNy, kM = 150, kCoils = 3 };

static double kx[kM], ky[kM], times[kM], field[kVoxels];
static const int64_t grid[2] = {kNx, kNy};

/* Relative error of a placed result of n complex values (precision `single`) against `exact`. */
static double placed_error(const void* placed, int single, int64_t n, const double* exact) {
  double* got = (double*)malloc((size_t)(2 * n) * sizeof(double));
  if (single) {
    float* f = (float*)malloc((size_t)(2 * n) * sizeof(float));
    place_fetch(f, placed, (size_t)(2 * n) * sizeof(float));
    for (int64_t i = 0; i < 2 * n; ++i) got[i] = f[i];
    free(f);
  } else {
    place_fetch(got, placed, (size_t)(2 * n) * sizeof(double));
  }
  const double e = oracle_rel_error(n, got, exact);
  free(got);
  return e;
}
/* n complex values (in double, rounded to float when single) where the transform runs */
static void* placed_values(const double* values, int single, int64_t n) {
  if (!single) return place_copy(values, (size_t)(2 * n) * sizeof(double));
  float* f = to_float(values, 2 * n);
  void* p = place_copy(f, (size_t)(2 * n) * sizeof(float));
  free(f);
  return p;
}
static void round_to_float(double* a, int64_t n) {
  for (int64_t i = 0; i < n; ++i) a[i] = (double)(float)a[i];
}

/* The geometry in the precision of the test (the float arrays are kept in `keep`). */
static fieldft_geometry geometry_d(int with_field) {
  fieldft_geometry g = {2, {kNx, kNy, 1}, kM, kx, ky, NULL, times, with_field ? field : NULL, NULL};
  return g;
}
static float* keep[4];
static fieldft_geometryf geometry_f(int with_field) {
  keep[0] = to_float(kx, kM), keep[1] = to_float(ky, kM), keep[2] = to_float(times, kM);
  keep[3] = to_float(field, kVoxels);
  fieldft_geometryf g = {2, {kNx, kNy, 1}, kM, keep[0], keep[1], NULL, keep[2], with_field ? keep[3] : NULL, NULL};
  return g;
}
static void release_keep(void) {
  for (int i = 0; i < 4; ++i) free(keep[i]), keep[i] = NULL;
}

/* Limits (relative l2). The exact DFT: double ~1e-14 and float ~2e-6 measured (dft.hpp), the
 * float GPU path with several images ~1e-6 of the largest magnitude: 1e-10 / 1e-4 leave margin
 * and still catch any sign, unit or layout error (errors ~1). The NUFFT at eps 1e-5: 10 eps. Time
 * segmentation at phase accuracy 1e-3 (worst case over the readout): 1e-2. */
static double dft_limit(int single) { return single ? 1e-4 : 1e-10; }

static void test_dft(int single) {
  enum { kImages = 2 };
  fieldft_place place;
  fieldft_place_default(&place);
  place.backend = BACKEND;
  double* image = random_array(2 * kImages * kVoxels, -1, 1);
  double* samples = random_array(2 * kImages * kM, -1, 1);
  if (single) round_to_float(image, 2 * kImages * kVoxels), round_to_float(samples, 2 * kImages * kM);
  const size_t cs = single ? 2 * sizeof(float) : 2 * sizeof(double);
  void* p_image = placed_values(image, single, kImages * kVoxels);
  void* p_samples = placed_values(samples, single, kImages * kM);
  void* p_fwd = place_alloc(kImages * kM * cs);
  void* p_adj = place_alloc(kImages * kVoxels * cs);
  int rc;
  if (single) {
    fieldft_geometryf g = geometry_f(1);
    fieldft_dftf dft = NULL;
    rc = fieldft_dft_makef(&g, kImages, 0, &place, &dft);
    CHECK(rc == FIELDFT_OK, "dft_makef: %s", fieldft_last_error());
    CHECK(fieldft_dft_forwardf(dft, p_image, p_fwd) == FIELDFT_OK, "forwardf: %s", fieldft_last_error());
    CHECK(fieldft_dft_adjointf(dft, p_samples, p_adj) == FIELDFT_OK, "adjointf: %s", fieldft_last_error());
    CHECK(fieldft_dft_synchronizef(dft) == FIELDFT_OK, "synchronizef");
    fieldft_dft_destroyf(dft);
    release_keep();
    /* the oracle sees the float geometry */
    round_to_float(kx, kM), round_to_float(ky, kM), round_to_float(times, kM), round_to_float(field, kVoxels);
  } else {
    fieldft_geometry g = geometry_d(1);
    fieldft_dft dft = NULL;
    rc = fieldft_dft_make(&g, kImages, 0, &place, &dft);
    CHECK(rc == FIELDFT_OK, "dft_make: %s", fieldft_last_error());
    CHECK(fieldft_dft_forward(dft, p_image, p_fwd) == FIELDFT_OK, "forward: %s", fieldft_last_error());
    CHECK(fieldft_dft_adjoint(dft, p_samples, p_adj) == FIELDFT_OK, "adjoint: %s", fieldft_last_error());
    CHECK(fieldft_dft_synchronize(dft) == FIELDFT_OK, "synchronize");
    fieldft_dft_destroy(dft);
  }
  double* fwd_exact = (double*)malloc(2 * kImages * kM * sizeof(double));
  double* adj_exact = (double*)malloc(2 * kImages * kVoxels * sizeof(double));
  for (int c = 0; c < kImages; ++c) {
    oracle_field_dft(0, 2, grid, kM, kx, ky, NULL, field, times, image + 2 * c * kVoxels, fwd_exact + 2 * c * kM);
    oracle_field_dft(1, 2, grid, kM, kx, ky, NULL, field, times, samples + 2 * c * kM, adj_exact + 2 * c * kVoxels);
  }
  double e = placed_error(p_fwd, single, kImages * kM, fwd_exact);
  CHECK(e <= dft_limit(single), "DFT %s forward error %.3g", single ? "float" : "double", e);
  e = placed_error(p_adj, single, kImages * kVoxels, adj_exact);
  CHECK(e <= dft_limit(single), "DFT %s adjoint error %.3g", single ? "float" : "double", e);
  free(fwd_exact), free(adj_exact), free(image), free(samples);
  place_free(p_image), place_free(p_samples), place_free(p_fwd), place_free(p_adj);
}

/* SENSE with maps of `kCoils` coils and an encoding of `kind`: forward and adjoint against
 * sum_c S_c applied around the exact sums, normal against adjoint(forward). */
static void test_sense(int single, int kind, int with_field, double limit) {
  fieldft_encoding_opts opts;
  fieldft_encoding_default_opts(&opts);
  opts.place.backend = BACKEND;
  opts.kind = kind;
  double* maps = random_array(2 * kCoils * kVoxels, -1, 1);
  double* x = random_array(2 * kVoxels, -1, 1);
  double* y = random_array(2 * kCoils * kM, -1, 1);
  if (single) round_to_float(maps, 2 * kCoils * kVoxels), round_to_float(x, 2 * kVoxels), round_to_float(y, 2 * kCoils * kM);
  const size_t cs = single ? 2 * sizeof(float) : 2 * sizeof(double);
  void* p_x = placed_values(x, single, kVoxels);
  void* p_y = placed_values(y, single, kCoils * kM);
  void* p_fwd = place_alloc(kCoils * kM * cs);
  void* p_adj = place_alloc(kVoxels * cs);
  void* p_normal = place_alloc(kVoxels * cs);
  void* p_check = place_alloc(kVoxels * cs);
  int64_t dom = 0, cod = 0;
  if (single) {
    fieldft_geometryf g = geometry_f(with_field);
    float* fm = to_float(maps, 2 * kCoils * kVoxels);
    fieldft_operatorf op = NULL;
    CHECK(fieldft_sense_makef(&g, (const fieldft_complexf*)fm, kCoils, &opts, &op) == FIELDFT_OK, "sense_makef: %s",
          fieldft_last_error());
    free(fm);
    release_keep();
    fieldft_operator_sizesf(op, &dom, &cod);
    CHECK(fieldft_operator_applyf(op, p_x, p_fwd) == FIELDFT_OK, "applyf: %s", fieldft_last_error());
    CHECK(fieldft_operator_apply_adjointf(op, p_y, p_adj) == FIELDFT_OK, "adjointf: %s", fieldft_last_error());
    CHECK(fieldft_operator_apply_normalf(op, p_x, p_normal) == FIELDFT_OK, "normalf: %s", fieldft_last_error());
    CHECK(fieldft_operator_apply_adjointf(op, p_fwd, p_check) == FIELDFT_OK, "adjointf: %s", fieldft_last_error());
    CHECK(fieldft_operator_synchronizef(op) == FIELDFT_OK, "synchronizef");
    printf("float %s\n", fieldft_operator_namef(op));
    fieldft_operator_destroyf(op);
    round_to_float(kx, kM), round_to_float(ky, kM), round_to_float(times, kM), round_to_float(field, kVoxels);
  } else {
    fieldft_geometry g = geometry_d(with_field);
    fieldft_operator op = NULL;
    CHECK(fieldft_sense_make(&g, (const fieldft_complex*)maps, kCoils, &opts, &op) == FIELDFT_OK, "sense_make: %s",
          fieldft_last_error());
    fieldft_operator_sizes(op, &dom, &cod);
    CHECK(fieldft_operator_apply(op, p_x, p_fwd) == FIELDFT_OK, "apply: %s", fieldft_last_error());
    CHECK(fieldft_operator_apply_adjoint(op, p_y, p_adj) == FIELDFT_OK, "adjoint: %s", fieldft_last_error());
    CHECK(fieldft_operator_apply_normal(op, p_x, p_normal) == FIELDFT_OK, "normal: %s", fieldft_last_error());
    CHECK(fieldft_operator_apply_adjoint(op, p_fwd, p_check) == FIELDFT_OK, "adjoint: %s", fieldft_last_error());
    CHECK(fieldft_operator_synchronize(op) == FIELDFT_OK, "synchronize");
    printf("double %s\n", fieldft_operator_name(op));
    fieldft_operator_destroy(op);
  }
  CHECK(dom == kVoxels && cod == kCoils * kM, "sizes %lld %lld", (long long)dom, (long long)cod);
  const double* fld = with_field ? field : NULL;
  double* sx = (double*)malloc(2 * kVoxels * sizeof(double));
  double* fwd = (double*)malloc(2 * kCoils * kM * sizeof(double));
  double* adj = (double*)calloc(2 * kVoxels, sizeof(double));
  double* part = (double*)malloc(2 * kVoxels * sizeof(double));
  for (int c = 0; c < kCoils; ++c) {
    const double* s = maps + 2 * c * kVoxels;
    for (int v = 0; v < kVoxels; ++v) { /* S_c x */
      sx[2 * v] = s[2 * v] * x[2 * v] - s[2 * v + 1] * x[2 * v + 1];
      sx[2 * v + 1] = s[2 * v] * x[2 * v + 1] + s[2 * v + 1] * x[2 * v];
    }
    oracle_field_dft(0, 2, grid, kM, kx, ky, NULL, fld, times, sx, fwd + 2 * c * kM);
    oracle_field_dft(1, 2, grid, kM, kx, ky, NULL, fld, times, y + 2 * c * kM, part);
    for (int v = 0; v < kVoxels; ++v) { /* += conj(S_c) E^H y_c */
      adj[2 * v] += s[2 * v] * part[2 * v] + s[2 * v + 1] * part[2 * v + 1];
      adj[2 * v + 1] += s[2 * v] * part[2 * v + 1] - s[2 * v + 1] * part[2 * v];
    }
  }
  double e = placed_error(p_fwd, single, kCoils * kM, fwd);
  CHECK(e <= limit, "SENSE kind %d %s forward error %.3g > %.3g", kind, single ? "float" : "double", e, limit);
  e = placed_error(p_adj, single, kVoxels, adj);
  CHECK(e <= limit, "SENSE kind %d %s adjoint error %.3g > %.3g", kind, single ? "float" : "double", e, limit);
  /* the normal against A^H (A x) computed by the same operator (Toeplitz or not: within eps) */
  double* check = (double*)malloc(2 * kVoxels * sizeof(double));
  if (single) {
    float* f = (float*)malloc(2 * kVoxels * sizeof(float));
    place_fetch(f, p_check, 2 * kVoxels * sizeof(float));
    for (int i = 0; i < 2 * kVoxels; ++i) check[i] = f[i];
    free(f);
  } else {
    place_fetch(check, p_check, 2 * kVoxels * sizeof(double));
  }
  e = placed_error(p_normal, single, kVoxels, check);
  CHECK(e <= limit, "SENSE kind %d %s normal vs adjoint(forward) %.3g > %.3g", kind, single ? "float" : "double", e,
        limit);
  free(check), free(sx), free(fwd), free(adj), free(part), free(maps), free(x), free(y);
  place_free(p_x), place_free(p_y), place_free(p_fwd), place_free(p_adj), place_free(p_normal), place_free(p_check);
}

/* The encoding operator alone (no coils), batch 2, the NUFFT without a field map. */
static void test_encoding(void) {
  fieldft_encoding_opts opts;
  fieldft_encoding_default_opts(&opts);
  opts.place.backend = BACKEND;
  opts.kind = FIELDFT_ENCODING_NUFFT;
  opts.eps = 1e-9;
  fieldft_geometry g = geometry_d(0);
  fieldft_operator op = NULL;
  CHECK(fieldft_encoding_make(&g, 2, &opts, &op) == FIELDFT_OK, "encoding_make: %s", fieldft_last_error());
  int64_t dom = 0, cod = 0;
  fieldft_operator_sizes(op, &dom, &cod);
  CHECK(dom == 2 * kVoxels && cod == 2 * kM, "sizes %lld %lld", (long long)dom, (long long)cod);
  double* x = random_array(2 * 2 * kVoxels, -1, 1);
  void* p_x = place_copy(x, 2 * 2 * kVoxels * sizeof(double));
  void* p_y = place_alloc(2 * 2 * kM * sizeof(double));
  CHECK(fieldft_operator_apply(op, p_x, p_y) == FIELDFT_OK, "apply: %s", fieldft_last_error());
  fieldft_operator_synchronize(op);
  double* exact = (double*)malloc(2 * 2 * kM * sizeof(double));
  for (int b = 0; b < 2; ++b)
    oracle_field_dft(0, 2, grid, kM, kx, ky, NULL, NULL, times, x + 2 * b * kVoxels, exact + 2 * b * kM);
  const double e = placed_error(p_y, 0, 2 * kM, exact);
  CHECK(e <= 1e-8, "NUFFT encoding error %.3g (eps 1e-9)", e);
  fieldft_operator_destroy(op);
  free(x), free(exact);
  place_free(p_x), place_free(p_y);
}

/* SENSE-CG on noise-free data simulated by the exact sums from a known image: 3 coils and 150
 * samples give 450 equations for 80 unknowns, so the least-squares solution is the truth, and CG
 * must approach it. */
static void test_recon(int single) {
  double* truth = random_array(2 * kVoxels, -1, 1);
  double* maps = random_array(2 * kCoils * kVoxels, -1, 1);
  for (int i = 0; i < 2 * kCoils * kVoxels; i += 2) maps[i] += 1.5; /* well conditioned coil combination */
  if (single) round_to_float(truth, 2 * kVoxels), round_to_float(maps, 2 * kCoils * kVoxels);
  double* y = (double*)malloc(2 * kCoils * kM * sizeof(double));
  double* sx = (double*)malloc(2 * kVoxels * sizeof(double));
  for (int c = 0; c < kCoils; ++c) {
    const double* s = maps + 2 * c * kVoxels;
    for (int v = 0; v < kVoxels; ++v) {
      sx[2 * v] = s[2 * v] * truth[2 * v] - s[2 * v + 1] * truth[2 * v + 1];
      sx[2 * v + 1] = s[2 * v] * truth[2 * v + 1] + s[2 * v + 1] * truth[2 * v];
    }
    oracle_field_dft(0, 2, grid, kM, kx, ky, NULL, field, times, sx, y + 2 * c * kM);
  }
  /* rms(y) ~ 1, as the header asks of float data */
  double ss = 0;
  for (int i = 0; i < 2 * kCoils * kM; ++i) ss += y[i] * y[i];
  const double scale = 1.0 / sqrt(ss / (kCoils * kM));
  for (int i = 0; i < 2 * kCoils * kM; ++i) y[i] *= scale;
  for (int i = 0; i < 2 * kVoxels; ++i) truth[i] *= scale;
  fieldft_recon_opts opts;
  fieldft_recon_default_opts(&opts);
  opts.encoding.place.backend = BACKEND;
  opts.max_iterations = 60;
  opts.tolerance = single ? 1e-5 : 1e-9;
  fieldft_recon_report report;
  memset(&report, 0, sizeof report);
  const size_t cs = single ? 2 * sizeof(float) : 2 * sizeof(double);
  void* p_y = placed_values(y, single, kCoils * kM);
  void* p_x = place_alloc(kVoxels * cs);
  int rc;
  if (single) {
    fieldft_geometryf g = geometry_f(1);
    float* fm = to_float(maps, 2 * kCoils * kVoxels);
    rc = fieldft_sense_cgf(&g, (const fieldft_complexf*)fm, kCoils, p_y, p_x, &opts, &report);
    free(fm);
    release_keep();
  } else {
    fieldft_geometry g = geometry_d(1);
    rc = fieldft_sense_cg(&g, (const fieldft_complex*)maps, kCoils, p_y, p_x, &opts, &report);
  }
  CHECK(rc == FIELDFT_OK, "sense_cg: %s", fieldft_last_error());
  const double e = placed_error(p_x, single, kVoxels, truth);
  printf("SENSE-CG %s: %d iterations, residual %.3g, error %.3g, encoding %d (%s)\n", single ? "float" : "double",
         report.iterations, report.residual, e, report.encoding, report.reason);
  /* Limits: the float DFT's ~2e-6 and the solve's rounding; time segmentation (which AUTO may pick)
   * at its 1e-3 phase accuracy bounds the model error. */
  const double limit = report.encoding == FIELDFT_ENCODING_TIME_SEGMENTED ? 1e-2 : single ? 1e-3 : 1e-6;
  CHECK(e <= limit, "SENSE-CG %s error %.3g > %.3g", single ? "float" : "double", e, limit);
  CHECK(report.iterations >= 1 && report.encoding != FIELDFT_ENCODING_AUTO && strlen(report.reason) > 0,
        "report: %d iterations, encoding %d, reason \"%s\"", report.iterations, report.encoding, report.reason);
  free(truth), free(maps), free(y), free(sx);
  place_free(p_y), place_free(p_x);
}

static void make_geometry(void) {
  for (int j = 0; j < kM; ++j) {
    kx[j] = uniform(-kNx / 2.0, kNx / 2.0);
    ky[j] = uniform(-kNy / 2.0, kNy / 2.0);
    times[j] = 4e-3 * j / kM; /* a 4 ms readout */
  }
  for (int v = 0; v < kVoxels; ++v) field[v] = uniform(-300.0, 300.0); /* rad/s: ~0.2 cycles over the readout */
}

int main(void) {
  if (skip_without_device()) return CAPI_TEST_SKIP;
  for (int single = 0; single <= 1; ++single) { /* the geometry is remade: float tests round it */
    make_geometry();
    test_dft(single);
    make_geometry();
    test_sense(single, FIELDFT_ENCODING_DFT, 1, dft_limit(single));
    make_geometry();
    test_sense(single, FIELDFT_ENCODING_NUFFT, 0, 1e-4);
    make_geometry();
    test_sense(single, FIELDFT_ENCODING_TIME_SEGMENTED, 1, 1e-2);
    make_geometry();
    test_recon(single);
  }
  make_geometry();
  test_encoding();
  return check_report("capi_mri_test");
}
