// FIELDFT_HD marks per-point math that is compiled for both the host and the device.
#pragma once

#if defined(__CUDACC__)
#define FIELDFT_HD __host__ __device__ __forceinline__
#else
#define FIELDFT_HD inline
#endif
