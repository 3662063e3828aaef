/* libfieldft_cufinufft from C, written against cuFINUFFT's documented C interface only
 * (cufinufft.h, and the CUDA runtime for device memory): types 1, 2, 3 in 1D, 2D, 3D, double and
 * float, ntr = 2, on a stream of the caller's, checked against the exact sums; and cuFINUFFT's
 * return codes for bad input. Skipped (77) without a CUDA device. */
#include <cuda_runtime_api.h>
#include <cufinufft.h>

#include "check.h"
#include "oracle.h"

enum { kNtr = 2, kM = 37, kNk = 29 };
static const int64_t kModes[3] = {10, 7, 6};
static const double kPi = 3.14159265358979323846;

static void* device_copy(const void* host, size_t bytes) {
  if (!host) return NULL;
  void* d = NULL;
  if (cudaMalloc(&d, bytes) != cudaSuccess) exit(1);
  cudaMemcpy(d, host, bytes, cudaMemcpyHostToDevice);
  return d;
}

/* tol is a relative l2 target per transform: 10x for the kernel design's estimate. */
static void run_case(int type, int dim, int single, cudaStream_t stream) {
  const int isign = type == 1 ? -1 : 1;
  const double tol = single ? 1e-5 : 1e-10;
  double* x[3] = {NULL, NULL, NULL};
  double* s[3] = {NULL, NULL, NULL};
  void* dx[3] = {NULL, NULL, NULL};
  void* ds[3] = {NULL, NULL, NULL};
  const size_t real = single ? sizeof(float) : sizeof(double);
  for (int d = 0; d < dim; ++d) {
    x[d] = random_array(kM, type == 3 ? -2.0 : -kPi, type == 3 ? 2.0 : kPi);
    if (type == 3) s[d] = random_array(kNk, -8.0, 8.0);
    if (single) {
      float* xf = to_float(x[d], kM);
      for (int j = 0; j < kM; ++j) x[d][j] = xf[j];
      dx[d] = device_copy(xf, kM * real);
      free(xf);
      if (s[d]) {
        float* sf = to_float(s[d], kNk);
        for (int j = 0; j < kNk; ++j) s[d][j] = sf[j];
        ds[d] = device_copy(sf, kNk * real);
        free(sf);
      }
    } else {
      dx[d] = device_copy(x[d], kM * real);
      ds[d] = device_copy(s[d], kNk * real);
    }
  }
  int64_t nf = 1;
  for (int d = 0; d < dim; ++d) nf *= kModes[d];
  if (type == 3) nf = kNk;
  const int64_t n_in = type == 2 ? nf : kM, n_out = type == 2 ? kM : nf;
  double* in = random_array(2 * kNtr * n_in, -1, 1);
  void* h_in = single ? (void*)to_float(in, 2 * kNtr * n_in) : (void*)in;
  if (single)
    for (int64_t i = 0; i < 2 * kNtr * n_in; ++i) in[i] = ((float*)h_in)[i];
  void* d_in = device_copy(h_in, 2 * kNtr * n_in * real);
  void* d_out = NULL;
  cudaMalloc(&d_out, 2 * kNtr * n_out * real);
  void* d_c = type == 2 ? d_out : d_in; /* execute(plan, c, f): c the points' values */
  void* d_f = type == 2 ? d_in : d_out;

  cufinufft_opts opts;
  cufinufft_default_opts(&opts);
  opts.gpu_stream = stream;
  int ier;
  if (single) {
    cufinufftf_plan plan;
    ier = cufinufftf_makeplan(type, dim, kModes, isign, kNtr, (float)tol, &plan, &opts);
    CHECK(ier == 0, "cufinufftf_makeplan: %d", ier);
    ier = cufinufftf_setpts(plan, kM, dx[0], dx[1], dx[2], type == 3 ? kNk : 0, ds[0], ds[1], ds[2]);
    CHECK(ier == 0, "cufinufftf_setpts: %d", ier);
    ier = cufinufftf_execute(plan, (cuFloatComplex*)d_c, (cuFloatComplex*)d_f);
    CHECK(ier == 0, "cufinufftf_execute: %d", ier);
    CHECK(cufinufftf_destroy(plan) == 0, "cufinufftf_destroy");
  } else {
    cufinufft_plan plan;
    ier = cufinufft_makeplan(type, dim, kModes, isign, kNtr, tol, &plan, &opts);
    CHECK(ier == 0, "cufinufft_makeplan: %d", ier);
    ier = cufinufft_setpts(plan, kM, dx[0], dx[1], dx[2], type == 3 ? kNk : 0, ds[0], ds[1], ds[2]);
    CHECK(ier == 0, "cufinufft_setpts: %d", ier);
    ier = cufinufft_execute(plan, (cuDoubleComplex*)d_c, (cuDoubleComplex*)d_f);
    CHECK(ier == 0, "cufinufft_execute: %d", ier);
    CHECK(cufinufft_destroy(plan) == 0, "cufinufft_destroy");
  }
  cudaStreamSynchronize(stream);
  double* out = (double*)malloc(2 * kNtr * n_out * sizeof(double));
  if (single) {
    float* f = (float*)malloc(2 * kNtr * n_out * sizeof(float));
    cudaMemcpy(f, d_out, 2 * kNtr * n_out * sizeof(float), cudaMemcpyDeviceToHost);
    for (int64_t i = 0; i < 2 * kNtr * n_out; ++i) out[i] = f[i];
    free(f);
  } else {
    cudaMemcpy(out, d_out, 2 * kNtr * n_out * sizeof(double), cudaMemcpyDeviceToHost);
  }
  double* exact = (double*)malloc(2 * n_out * sizeof(double));
  for (int t = 0; t < kNtr; ++t) {
    oracle_nufft(type, dim, kModes, isign, 0, kM, x[0], x[1], x[2], type == 3 ? kNk : 0, s[0], s[1], s[2],
                 in + 2 * t * n_in, exact);
    const double e = oracle_rel_error(n_out, out + 2 * t * n_out, exact);
    CHECK(e <= 10 * tol, "cufinufft%s type %d %dD transform %d: error %.3g > %.3g", single ? "f" : "", type, dim, t,
          e, 10 * tol);
  }
  free(exact), free(out), free(in);
  if (single) free(h_in);
  cudaFree(d_in), cudaFree(d_out);
  for (int d = 0; d < 3; ++d) free(x[d]), free(s[d]), cudaFree(dx[d]), cudaFree(ds[d]);
}

static void test_codes(void) {
  cufinufft_opts opts;
  cufinufft_default_opts(&opts);
  cufinufft_plan plan;
  const int64_t n[3] = {16, 16, 16}, zero[2] = {16, 0};
  CHECK(cufinufft_makeplan(4, 1, n, 1, 1, 1e-6, &plan, &opts) == FINUFFT_ERR_TYPE_NOTVALID, "type 4");
  CHECK(cufinufft_makeplan(1, 0, n, 1, 1, 1e-6, &plan, &opts) == FINUFFT_ERR_DIM_NOTVALID, "dim 0");
  CHECK(cufinufft_makeplan(1, 1, n, 1, 0, 1e-6, &plan, &opts) == FINUFFT_ERR_NTRANS_NOTVALID, "ntr 0");
  CHECK(cufinufft_makeplan(1, 2, zero, 1, 1, 1e-6, &plan, &opts) == FINUFFT_ERR_NDATA_NOTVALID, "modes 0");
  cufinufft_opts bad = opts;
  bad.gpu_method = 7;
  CHECK(cufinufft_makeplan(1, 1, n, 1, 1, 1e-6, &plan, &bad) == FINUFFT_ERR_METHOD_NOTVALID, "method 7");
  bad = opts;
  bad.upsampfac = 1.1;
  CHECK(cufinufft_makeplan(1, 1, n, 1, 1, 1e-6, &plan, &bad) == FINUFFT_ERR_UPSAMPFAC_TOO_SMALL, "upsampfac 1.1");
  bad = opts;
  bad.gpu_device_id = 4096;
  CHECK(cufinufft_makeplan(1, 1, n, 1, 1, 1e-6, &plan, &bad) == FINUFFT_ERR_CUDA_FAILURE, "device 4096");
  cufinufftf_plan planf;
  int ier = cufinufftf_makeplan(1, 1, n, 1, 1, 1e-9f, &planf, &opts);
  CHECK(ier == FINUFFT_WARN_EPS_TOO_SMALL, "float tol 1e-9: %d", ier);
  CHECK(cufinufftf_destroy(planf) == 0, "destroy");
  CHECK(cufinufft_execute(NULL, NULL, NULL) == FINUFFT_ERR_PLAN_NOTVALID, "null plan");
  CHECK(cufinufft_makeplan(1, 1, n, 1, 1, 1e-6, &plan, NULL) == 0, "makeplan with NULL opts");
  CHECK(cufinufft_setpts(plan, -1, NULL, NULL, NULL, 0, NULL, NULL, NULL) == FINUFFT_ERR_NUM_NU_PTS_INVALID, "M -1");
  CHECK(cufinufft_destroy(plan) == 0, "destroy");
}

int main(void) {
  if (skip_without_device()) return CAPI_TEST_SKIP;
  cudaStream_t stream;
  cudaStreamCreate(&stream);
  for (int type = 1; type <= 3; ++type)
    for (int dim = 1; dim <= 3; ++dim)
      for (int single = 0; single <= 1; ++single) run_case(type, dim, single, stream);
  cudaStreamDestroy(stream);
  test_codes();
  return check_report("dropin_cufinufft_test");
}
