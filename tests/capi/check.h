/* Minimal checking helpers for the C tests of tests/capi (C11, no test framework): CHECK counts
 * failures, test_data fills reproducible values, and the buffer helpers put test data where the
 * transform runs. Compiled with CAPI_TEST_GPU the buffers are CUDA device memory (cudaMalloc);
 * otherwise plain host memory, so that one test source serves both. */
#ifndef FIELDFT_TESTS_CAPI_CHECK_H
#define FIELDFT_TESTS_CAPI_CHECK_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef CAPI_TEST_GPU
#include <cuda_runtime_api.h>
#endif

/* ctest's SKIP_RETURN_CODE for the GPU variants without a device */
#define CAPI_TEST_SKIP 77

static int check_failures = 0;

/* GPU variants: true (after saying so) when no CUDA device is visible; main then returns
 * CAPI_TEST_SKIP. */
static inline int skip_without_device(void) {
#ifdef CAPI_TEST_GPU
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    printf("no CUDA device: skipped\n");
    return 1;
  }
#endif
  return 0;
}

#define CHECK(cond, ...)                                                       \
  do {                                                                         \
    if (!(cond)) {                                                             \
      ++check_failures;                                                        \
      fprintf(stderr, "%s:%d: CHECK(%s) failed: ", __FILE__, __LINE__, #cond); \
      fprintf(stderr, __VA_ARGS__);                                            \
      fprintf(stderr, "\n");                                                   \
    }                                                                          \
  } while (0)

/* Uniform values in [lo, hi) from a fixed-seed generator (SplitMix64): the same on every run. */
static uint64_t check_rng_state = 0x9e3779b97f4a7c15ull;
static inline double uniform(double lo, double hi) {
  uint64_t z = (check_rng_state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return lo + (hi - lo) * (double)(z >> 11) * (1.0 / 9007199254740992.0);
}
static inline double* random_array(int64_t n, double lo, double hi) {
  double* a = (double*)malloc((size_t)(n > 0 ? n : 1) * sizeof(double));
  for (int64_t i = 0; i < n; ++i) a[i] = uniform(lo, hi);
  return a;
}
/* n doubles as floats (a new array) */
static inline float* to_float(const double* a, int64_t n) {
  float* f = (float*)malloc((size_t)(n > 0 ? n : 1) * sizeof(float));
  for (int64_t i = 0; i < n; ++i) f[i] = (float)a[i];
  return f;
}
static inline double* to_double(const float* a, int64_t n) {
  double* d = (double*)malloc((size_t)(n > 0 ? n : 1) * sizeof(double));
  for (int64_t i = 0; i < n; ++i) d[i] = (double)a[i];
  return d;
}

/* A copy of `bytes` host bytes where the transform runs (NULL for NULL). */
static inline void* place_copy(const void* host, size_t bytes) {
  if (!host) return NULL;
#ifdef CAPI_TEST_GPU
  void* d = NULL;
  if (cudaMalloc(&d, bytes ? bytes : 1) != cudaSuccess) {
    fprintf(stderr, "cudaMalloc failed\n");
    exit(1);
  }
  cudaMemcpy(d, host, bytes, cudaMemcpyHostToDevice);
  return d;
#else
  void* h = malloc(bytes ? bytes : 1);
  memcpy(h, host, bytes);
  return h;
#endif
}
/* Zeroed memory where the transform runs. */
static inline void* place_alloc(size_t bytes) {
#ifdef CAPI_TEST_GPU
  void* d = NULL;
  if (cudaMalloc(&d, bytes ? bytes : 1) != cudaSuccess) {
    fprintf(stderr, "cudaMalloc failed\n");
    exit(1);
  }
  cudaMemset(d, 0, bytes);
  return d;
#else
  return calloc(bytes ? bytes : 1, 1);
#endif
}
static inline void place_fetch(void* host, const void* placed, size_t bytes) {
#ifdef CAPI_TEST_GPU
  cudaDeviceSynchronize();
  cudaMemcpy(host, placed, bytes, cudaMemcpyDeviceToHost);
#else
  memcpy(host, placed, bytes);
#endif
}
static inline void place_free(void* p) {
#ifdef CAPI_TEST_GPU
  cudaFree(p);
#else
  free(p);
#endif
}

static inline int check_report(const char* name) {
  if (check_failures) {
    fprintf(stderr, "%s: %d check(s) failed\n", name, check_failures);
    return 1;
  }
  printf("%s: all checks passed\n", name);
  return 0;
}

#endif
