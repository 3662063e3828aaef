/* The installed drop-in library (finufft.h, -lfieldft_finufft) from a C program written for
 * FINUFFT: finufft1d1 against a direct sum. */
#include <complex.h>
#include <math.h>
#include <stdio.h>

#include <finufft.h>

int main(void) {
  enum { kM = 50, kN = 21 };
  double x[kM];
  double complex c[kM], f[kN];
  for (int j = 0; j < kM; ++j) {
    x[j] = -3.0 + 6.0 * j / kM;
    c[j] = cos(0.3 * j) + I * sin(0.7 * j);
  }
  const int ier = finufft1d1(kM, x, c, -1, 1e-9, kN, f, NULL);
  if (ier != 0) {
    fprintf(stderr, "FAIL: finufft1d1 returned %d\n", ier);
    return 1;
  }
  double err = 0, norm = 0;
  for (int k = -kN / 2; k <= (kN - 1) / 2; ++k) {
    double complex exact = 0;
    for (int j = 0; j < kM; ++j) exact += c[j] * cexp(-I * k * x[j]);
    err += pow(cabs(f[k + kN / 2] - exact), 2);
    norm += pow(cabs(exact), 2);
  }
  err = sqrt(err / norm);
  printf("libfieldft_finufft: finufft1d1 rel l2 error %.3g\n", err);
  return err <= 1e-8 ? 0 : 1; /* 10 tol */
}
