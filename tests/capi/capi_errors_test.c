/* fieldft.h's error contract from C: every bad input gets its documented status and a message,
 * outputs stay untouched, and no exception escapes (it would abort this C program). */
#include <math.h>
#include <threads.h>

#include "check.h"
#include "fieldft/fieldft.h"

/* status == expected, and a non-empty message naming `word` */
#define EXPECT_STATUS(call, expected, word)                                                        \
  do {                                                                                             \
    const int rc_ = (call);                                                                        \
    CHECK(rc_ == (expected), "%s returned %d (%s), expected %d; message: %s", #call, rc_,          \
          fieldft_strerror(rc_), (int)(expected), fieldft_last_error());                           \
    CHECK(strstr(fieldft_last_error(), (word)) != NULL, "message of %s lacks \"%s\": %s", #call, \
          (word), fieldft_last_error());                                                           \
  } while (0)

/* A failing call on another thread: its message stays on that thread. */
static int fail_on_thread(void* message_out) {
  fieldft_nufft_plan plan = NULL;
  const int64_t n = 8;
  fieldft_nufft_make_plan(1, 9, &n, 1, 1, 1e-6, NULL, &plan); /* dim 9 */
  strncpy((char*)message_out, fieldft_last_error(), 255);
  return 0;
}

int main(void) {
  const int64_t modes[3] = {16, 16, 16};
  fieldft_nufft_opts opts;
  fieldft_nufft_default_opts(&opts);
  opts.place.backend = FIELDFT_BACKEND_CPU;
  fieldft_nufft_plan plan = (fieldft_nufft_plan)0x1; /* must be reset to NULL on failure */

  /* codes and names */
  CHECK(strcmp(fieldft_strerror(FIELDFT_OK), "ok") == 0, "%s", fieldft_strerror(FIELDFT_OK));
  CHECK(strcmp(fieldft_strerror(FIELDFT_ERR_INVALID_ARGUMENT), "invalid argument") == 0, "name");
  CHECK(strcmp(fieldft_strerror(999), "unknown status") == 0, "unknown");
  CHECK(strcmp(fieldft_strerror(-1), "unknown status") == 0, "negative");
  CHECK(strlen(fieldft_version()) > 0, "version");

  /* make_plan */
  EXPECT_STATUS(fieldft_nufft_make_plan(4, 1, modes, 1, 1, 1e-6, &opts, &plan), FIELDFT_ERR_INVALID_ARGUMENT,
                "type");
  CHECK(plan == NULL, "plan not reset on failure");
  EXPECT_STATUS(fieldft_nufft_make_plan(1, 0, modes, 1, 1, 1e-6, &opts, &plan), FIELDFT_ERR_INVALID_ARGUMENT, "dim");
  EXPECT_STATUS(fieldft_nufft_make_plan(1, 4, modes, 1, 1, 1e-6, &opts, &plan), FIELDFT_ERR_INVALID_ARGUMENT, "dim");
  EXPECT_STATUS(fieldft_nufft_make_plan(1, 1, NULL, 1, 1, 1e-6, &opts, &plan), FIELDFT_ERR_INVALID_ARGUMENT,
                "modes");
  EXPECT_STATUS(fieldft_nufft_make_plan(1, 1, modes, 1, 1, 1e-6, &opts, NULL), FIELDFT_ERR_INVALID_ARGUMENT, "plan");
  const int64_t zero[2] = {16, 0};
  {
    const int rc = fieldft_nufft_make_plan(1, 2, zero, 1, 1, 1e-6, &opts, &plan);
    CHECK(rc == FIELDFT_ERR_INVALID_ARGUMENT, "modes 0: %d %s", rc, fieldft_last_error());
    CHECK(plan == NULL, "plan not NULL");
  }
  {
    const int rc = fieldft_nufft_make_plan(1, 1, modes, 1, 0, 1e-6, &opts, &plan);
    CHECK(rc == FIELDFT_ERR_INVALID_ARGUMENT, "ntransf 0: %d %s", rc, fieldft_last_error());
  }
  {
    const int rc = fieldft_nufft_make_plan(1, 1, modes, 2, 1, 1e-6, &opts, &plan);
    CHECK(rc == FIELDFT_ERR_INVALID_ARGUMENT, "isign 2: %d %s", rc, fieldft_last_error());
  }
  {
    const int rc = fieldft_nufft_make_plan(1, 1, modes, 1, 1, 1e-20, &opts, &plan);
    CHECK(rc == FIELDFT_ERR_EPS_TOO_SMALL, "eps 1e-20: %d %s", rc, fieldft_last_error());
    fieldft_nufft_planf planf = NULL;
    const int rcf = fieldft_nufft_make_planf(1, 1, modes, 1, 1, 1e-9, &opts, &planf);
    CHECK(rcf == FIELDFT_ERR_EPS_TOO_SMALL, "float eps 1e-9: %d %s", rcf, fieldft_last_error());
    CHECK(planf == NULL, "planf not NULL");
  }
  {
    const int rc = fieldft_nufft_make_plan(1, 1, modes, 1, 1, NAN, &opts, &plan);
    CHECK(rc == FIELDFT_ERR_INVALID_ARGUMENT, "eps NaN: %d %s", rc, fieldft_last_error());
  }
  {
    fieldft_nufft_opts bad = opts;
    bad.place.backend = 7;
    EXPECT_STATUS(fieldft_nufft_make_plan(1, 1, modes, 1, 1, 1e-6, &bad, &plan), FIELDFT_ERR_INVALID_ARGUMENT,
                  "backend");
    bad = opts;
    bad.method = 9;
    EXPECT_STATUS(fieldft_nufft_make_plan(1, 1, modes, 1, 1, 1e-6, &bad, &plan), FIELDFT_ERR_INVALID_ARGUMENT,
                  "method");
    bad = opts;
    bad.upsampfac = 1.1;
    {
      const int rc = fieldft_nufft_make_plan(1, 1, modes, 1, 1, 1e-6, &bad, &plan);
      CHECK(rc == FIELDFT_ERR_INVALID_ARGUMENT, "upsampfac 1.1: %d %s", rc, fieldft_last_error());
    }
    bad = opts;
    bad.place.nthreads = -2;
    {
      const int rc = fieldft_nufft_make_plan(1, 1, modes, 1, 1, 1e-6, &bad, &plan);
      CHECK(rc == FIELDFT_ERR_INVALID_ARGUMENT, "nthreads -2: %d %s", rc, fieldft_last_error());
    }
  }

  /* a valid plan, then bad points and bad execute calls */
  int rc = fieldft_nufft_make_plan(1, 2, modes, -1, 1, 1e-6, &opts, &plan);
  CHECK(rc == FIELDFT_OK && plan != NULL, "valid plan: %s", fieldft_last_error());
  double x[4] = {0.1, 0.2, 0.3, 0.4}, y[4] = {0.5, NAN, 0.1, 0.2};
  fieldft_complex c[4] = {{1, 0}, {0, 1}, {1, 1}, {0, 0}};
  fieldft_complex f[256];
  for (int i = 0; i < 256; ++i) f[i].re = f[i].im = 7.0;
  EXPECT_STATUS(fieldft_nufft_execute(plan, c, f), FIELDFT_ERR_INVALID_STATE, "set_points");
  CHECK(f[0].re == 7.0 && f[255].im == 7.0, "output written by a failing execute");
  EXPECT_STATUS(fieldft_nufft_set_points(plan, 4, x, NULL, NULL, 0, NULL, NULL, NULL), FIELDFT_ERR_INVALID_ARGUMENT,
                "y");
  EXPECT_STATUS(fieldft_nufft_set_points(plan, 4, x, y, NULL, 0, NULL, NULL, NULL), FIELDFT_ERR_NON_FINITE, "y");
  EXPECT_STATUS(fieldft_nufft_set_points(plan, -1, x, y, NULL, 0, NULL, NULL, NULL), FIELDFT_ERR_INVALID_ARGUMENT,
                "m");
  EXPECT_STATUS(fieldft_nufft_set_points(plan, 4, x, x, NULL, 3, x, x, NULL), FIELDFT_ERR_INVALID_ARGUMENT, "nk");
  rc = fieldft_nufft_set_points(plan, 4, x, x, NULL, 0, NULL, NULL, NULL);
  CHECK(rc == FIELDFT_OK, "set_points: %s", fieldft_last_error());
  EXPECT_STATUS(fieldft_nufft_execute(plan, NULL, f), FIELDFT_ERR_INVALID_ARGUMENT, "in");
  EXPECT_STATUS(fieldft_nufft_execute(plan, c, NULL), FIELDFT_ERR_INVALID_ARGUMENT, "out");
  CHECK(fieldft_nufft_execute(plan, c, f) == FIELDFT_OK, "execute: %s", fieldft_last_error());
  CHECK(fieldft_nufft_destroy(plan) == FIELDFT_OK, "destroy");

  /* null handles */
  EXPECT_STATUS(fieldft_nufft_execute(NULL, c, f), FIELDFT_ERR_INVALID_ARGUMENT, "plan");
  EXPECT_STATUS(fieldft_nufft_set_points(NULL, 4, x, x, NULL, 0, NULL, NULL, NULL), FIELDFT_ERR_INVALID_ARGUMENT,
                "plan");
  fieldft_nufft_info info;
  EXPECT_STATUS(fieldft_nufft_get_info(NULL, &info), FIELDFT_ERR_INVALID_ARGUMENT, "plan");
  CHECK(fieldft_nufft_destroy(NULL) == FIELDFT_OK, "destroy(NULL)");
  CHECK(fieldft_nufft_destroyf(NULL) == FIELDFT_OK, "destroyf(NULL)");
  CHECK(fieldft_dft_destroy(NULL) == FIELDFT_OK, "dft destroy(NULL)");
  CHECK(fieldft_operator_destroy(NULL) == FIELDFT_OK, "operator destroy(NULL)");
  CHECK(fieldft_operator_name(NULL) == NULL, "name(NULL)");

  /* MRI: bad geometry, maps, kinds */
  double kx[3] = {0.0, 1.0, -2.0}, ky[3] = {0.5, -1.5, 1.0}, field[16];
  for (int i = 0; i < 16; ++i) field[i] = 100.0 * i;
  fieldft_geometry g = {2, {4, 4, 1}, 3, kx, ky, NULL, NULL, NULL, NULL};
  fieldft_operator op = (fieldft_operator)0x1;
  fieldft_encoding_opts eo;
  fieldft_encoding_default_opts(&eo);
  eo.place.backend = FIELDFT_BACKEND_CPU;
  EXPECT_STATUS(fieldft_encoding_make(NULL, 1, &eo, &op), FIELDFT_ERR_INVALID_ARGUMENT, "geometry");
  CHECK(op == NULL, "op not reset on failure");
  g.dim = 1;
  EXPECT_STATUS(fieldft_encoding_make(&g, 1, &eo, &op), FIELDFT_ERR_INVALID_ARGUMENT, "dim");
  g.dim = 2;
  g.grid[1] = 0;
  EXPECT_STATUS(fieldft_encoding_make(&g, 1, &eo, &op), FIELDFT_ERR_INVALID_ARGUMENT, "grid");
  g.grid[1] = 4;
  g.ky = NULL;
  EXPECT_STATUS(fieldft_encoding_make(&g, 1, &eo, &op), FIELDFT_ERR_INVALID_ARGUMENT, "ky");
  g.ky = ky;
  kx[1] = 7.0; /* beyond N/2 = 2 cycles per field of view */
  EXPECT_STATUS(fieldft_encoding_make(&g, 1, &eo, &op), FIELDFT_ERR_INVALID_ARGUMENT, "kx");
  kx[1] = 1.0;
  EXPECT_STATUS(fieldft_encoding_make(&g, 0, &eo, &op), FIELDFT_ERR_INVALID_ARGUMENT, "batch");
  eo.kind = 9;
  EXPECT_STATUS(fieldft_encoding_make(&g, 1, &eo, &op), FIELDFT_ERR_INVALID_ARGUMENT, "kind");
  eo.kind = FIELDFT_ENCODING_NUFFT;
  g.field = field; /* the NUFFT cannot model a field map */
  EXPECT_STATUS(fieldft_encoding_make(&g, 1, &eo, &op), FIELDFT_ERR_INVALID_ARGUMENT, "field map");
  field[5] = INFINITY;
  eo.kind = FIELDFT_ENCODING_DFT;
  EXPECT_STATUS(fieldft_encoding_make(&g, 1, &eo, &op), FIELDFT_ERR_NON_FINITE, "field");
  field[5] = 0.0;
  fieldft_complex maps[32];
  for (int i = 0; i < 32; ++i) maps[i].re = 1.0, maps[i].im = 0.0;
  EXPECT_STATUS(fieldft_sense_make(&g, NULL, 2, &eo, &op), FIELDFT_ERR_INVALID_ARGUMENT, "maps");
  EXPECT_STATUS(fieldft_sense_make(&g, maps, 0, &eo, &op), FIELDFT_ERR_INVALID_ARGUMENT, "coils");
  maps[20].im = NAN;
  EXPECT_STATUS(fieldft_sense_make(&g, maps, 2, &eo, &op), FIELDFT_ERR_NON_FINITE, "coil");
  maps[20].im = 0.0;
  CHECK(fieldft_sense_make(&g, maps, 2, &eo, &op) == FIELDFT_OK, "sense: %s", fieldft_last_error());
  int64_t dom = 0, cod = 0;
  CHECK(fieldft_operator_sizes(op, &dom, &cod) == FIELDFT_OK && dom == 16 && cod == 6, "sizes %lld %lld",
        (long long)dom, (long long)cod);
  EXPECT_STATUS(fieldft_operator_apply(op, NULL, c), FIELDFT_ERR_INVALID_ARGUMENT, "in");
  CHECK(fieldft_operator_destroy(op) == FIELDFT_OK, "destroy");

  fieldft_recon_opts ro;
  fieldft_recon_default_opts(&ro);
  ro.encoding.place.backend = FIELDFT_BACKEND_CPU;
  ro.max_iterations = 0;
  fieldft_complex ksp[6] = {{1, 0}, {1, 0}, {1, 0}, {1, 0}, {1, 0}, {1, 0}}, img[16];
  EXPECT_STATUS(fieldft_sense_cg(&g, maps, 2, ksp, img, &ro, NULL), FIELDFT_ERR_INVALID_ARGUMENT, "iterations");
  ro.max_iterations = 3;
  ro.lambda = -1.0;
  EXPECT_STATUS(fieldft_sense_cg(&g, maps, 2, ksp, img, &ro, NULL), FIELDFT_ERR_INVALID_ARGUMENT, "lambda");
  ro.lambda = 0.0;
  EXPECT_STATUS(fieldft_sense_cg(&g, maps, 2, NULL, img, &ro, NULL), FIELDFT_ERR_INVALID_ARGUMENT, "kspace");

  /* the message is per thread and survives successful calls */
  EXPECT_STATUS(fieldft_nufft_make_plan(5, 1, modes, 1, 1, 1e-6, &opts, &plan), FIELDFT_ERR_INVALID_ARGUMENT, "type");
  fieldft_place_default(NULL);
  CHECK(strstr(fieldft_last_error(), "type") != NULL, "message lost: %s", fieldft_last_error());
  char other[256] = {0};
  thrd_t thread;
  CHECK(thrd_create(&thread, fail_on_thread, other) == thrd_success, "thrd_create");
  thrd_join(thread, NULL);
  CHECK(strstr(other, "dim") != NULL, "the other thread's message: %s", other);
  CHECK(strstr(fieldft_last_error(), "type") != NULL && strstr(fieldft_last_error(), "dim") == NULL,
        "this thread's message changed: %s", fieldft_last_error());
  return check_report("capi_errors_test");
}
