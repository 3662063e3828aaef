// FIELDFT_HD marks per-point math that is compiled for both the host and the device.
#pragma once

#if defined(__CUDACC__)
#define FIELDFT_HD __host__ __device__ __forceinline__
#else
#define FIELDFT_HD inline
#endif

// Asks the host compiler to vectorise the next loop (OpenMP SIMD); nothing on the device.
#if defined(_OPENMP) && !defined(__CUDACC__)
#define FIELDFT_SIMD _Pragma("omp simd")
#else
#define FIELDFT_SIMD
#endif
