// CUDA side of normals stored as a dense Gram matrix H = AᴴA (the exact-DFT pcSENSE's Gram
// normal, src/mri/pcsense_dft.cpp), declared in plain C++ so that host-compiled code can call it.
// Defined in src/cuda/gram.cu. Include only under FIELDFT_HAVE_CUDA.
//
// Every call makes `device` current for its duration (restoring the caller's device), enqueues
// its work on `stream` (a cudaStream_t of that device; nullptr = legacy default) and returns:
// no allocation after construction, no synchronisation. Pointers are device memory.
#pragma once

#include <complex>
#include <cstdint>

namespace fieldft::cuda::gram {

// out (n × k, column-major, column c at out + n·c) = columns v0 … v0+k−1 of the n×n identity;
// a column past the last (v0 + c ≥ n) is zero.
template <class T>
void identity_columns(int device, void* stream, std::int64_t n, std::int64_t v0, std::int64_t k,
                      std::complex<T>* out);

// Y = H·U for a Hermitian n×n H stored whole and column-major, U and Y n × k column-major
// (k images). Runs as Y = Hᴴ·U (cuBLAS gemm with H conjugate-transposed): each output is the
// dot product of a contiguous column of H with a column of U, so H is read once, in order —
// the product is bound by reading H (8n² bytes in float).
template <class T>
class HermitianProduct {
 public:
  HermitianProduct(int device, void* stream);
  ~HermitianProduct();
  HermitianProduct(const HermitianProduct&) = delete;
  HermitianProduct& operator=(const HermitianProduct&) = delete;
  void apply(const std::complex<T>* h, std::int64_t n, const std::complex<T>* u, std::int64_t k,
             std::complex<T>* y) const;

 private:
  int device_;
  void* handle_ = nullptr;  // cublasHandle_t, bound to the stream
};

}  // namespace fieldft::cuda::gram
