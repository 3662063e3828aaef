/* The installed C interface (fieldft.h) from a C11 program: a 1D type 1 NUFFT on the CPU against
 * a direct sum. Exits 0 only when the installed header and library link and agree. */
#include <complex.h>
#include <math.h>
#include <stdio.h>

#include <fieldft/fieldft.h>

int main(void) {
  enum { kM = 50, kN = 21 };
  double x[kM];
  double complex c[kM], f[kN];
  for (int j = 0; j < kM; ++j) {
    x[j] = -3.0 + 6.0 * j / kM;
    c[j] = cos(0.3 * j) + I * sin(0.7 * j);
  }
  const int64_t n = kN;
  fieldft_nufft_opts opts;
  fieldft_nufft_default_opts(&opts);
  opts.place.backend = FIELDFT_BACKEND_CPU; /* the install check must not depend on a GPU */
  fieldft_nufft_plan plan = NULL;
  if (fieldft_nufft_make_plan(1, 1, &n, +1, 1, 1e-9, &opts, &plan) != FIELDFT_OK ||
      fieldft_nufft_set_points(plan, kM, x, NULL, NULL, 0, NULL, NULL, NULL) != FIELDFT_OK ||
      fieldft_nufft_execute(plan, (const fieldft_complex*)c, (fieldft_complex*)f) != FIELDFT_OK) {
    fprintf(stderr, "FAIL: %s\n", fieldft_last_error());
    return 1;
  }
  fieldft_nufft_destroy(plan);
  double err = 0, norm = 0;
  for (int k = -kN / 2; k <= (kN - 1) / 2; ++k) {
    double complex exact = 0;
    for (int j = 0; j < kM; ++j) exact += c[j] * cexp(I * k * x[j]);
    err += pow(cabs(f[k + kN / 2] - exact), 2);
    norm += pow(cabs(exact), 2);
  }
  err = sqrt(err / norm);
  printf("fieldft %s C interface: 1D type 1 rel l2 error %.3g\n", fieldft_version(), err);
  return err <= 1e-8 ? 0 : 1; /* 10 eps */
}
