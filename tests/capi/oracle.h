/* Exact sums for the C tests of tests/capi, computed by fieldft::reference (the oracles of every
 * test, include/fieldft/reference.hpp) in double. Complex arrays are interleaved (re, im) pairs.
 * This header is plain C; oracle.cpp is its C++ side. */
#ifndef FIELDFT_TESTS_CAPI_ORACLE_H
#define FIELDFT_TESTS_CAPI_ORACLE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One NUFFT of `type` (1, 2, 3) with FINUFFT's definitions: type 1 in = c (m), out = f (modes, in
 * modeord); type 2 in = f, out = c; type 3 in = c (m), out = f (nk targets s, t, u). Coordinates
 * y, z (t, u) are read for dim >= 2 (3). */
void oracle_nufft(int type, int dim, const int64_t* modes, int isign, int modeord, int64_t m,
                  const double* x, const double* y, const double* z, int64_t nk, const double* s,
                  const double* t, const double* u, const double* in, double* out);

/* The field-corrected DFT of fieldft.h's geometry: s_j = sum_v m_v exp(-i(2pi k_j.r_v + dw_v t_j))
 * (adjoint: the conjugate phase), r_d = (i_d - floor(N_d/2)) / N_d. field, times may be NULL. */
void oracle_field_dft(int adjoint, int dim, const int64_t* grid, int64_t m, const double* kx,
                      const double* ky, const double* kz, const double* field, const double* times,
                      const double* in, double* out);

/* ||a - b|| / ||b|| over n complex values (b the reference; 0 when both are 0). */
double oracle_rel_error(int64_t n, const double* a, const double* b);

#ifdef __cplusplus
}
#endif

#endif
