// A batched in-place cuFFT plan in either precision, shared by the NUFFT plan (cuda_plan.cu) and
// the Toeplitz engine (toeplitz.cu). Every call is checked (FIELDFT_CUDA_CHECK); the plan is
// bound to one stream at creation, so exec is stream-ordered.
#pragma once

#include <cufft.h>

#include <cstddef>

#include "cuda/cuda_check.cuh"
#include "fieldft/detail/complex.hpp"

namespace fieldft::cuda {

using detail::Cplx;

template <class T>
struct CufftTraits;
template <>
struct CufftTraits<float> {
  static constexpr cufftType kType = CUFFT_C2C;
  static cufftResult exec(cufftHandle h, Cplx<float>* d, int dir) {
    auto* p = reinterpret_cast<cufftComplex*>(d);
    return cufftExecC2C(h, p, p, dir);
  }
};
template <>
struct CufftTraits<double> {
  static constexpr cufftType kType = CUFFT_Z2Z;
  static cufftResult exec(cufftHandle h, Cplx<double>* d, int dir) {
    auto* p = reinterpret_cast<cufftDoubleComplex*>(d);
    return cufftExecZ2Z(h, p, p, dir);
  }
};

// A batched in-place cuFFT plan of `rank` dimensions n (slowest first), 64-bit sizes: elements
// at stride `stride`, transforms `dist` apart.
template <class T>
class CufftPlan {
 public:
  CufftPlan(int rank, long long* n, long long stride, long long dist, long long batch, cudaStream_t stream) {
    FIELDFT_CUDA_CHECK(cufftCreate(&h_));
    std::size_t work = 0;
    try {
      FIELDFT_CUDA_CHECK(cufftMakePlanMany64(h_, rank, n, n, stride, dist, n, stride, dist, CufftTraits<T>::kType,
                                             batch, &work));
      FIELDFT_CUDA_CHECK(cufftSetStream(h_, stream));
    } catch (...) {
      cufftDestroy(h_);
      throw;
    }
  }
  ~CufftPlan() { cufftDestroy(h_); }
  CufftPlan(const CufftPlan&) = delete;
  CufftPlan& operator=(const CufftPlan&) = delete;
  void exec(Cplx<T>* data, int sign) const {
    FIELDFT_CUDA_CHECK(CufftTraits<T>::exec(h_, data, sign > 0 ? CUFFT_INVERSE : CUFFT_FORWARD));
  }

 private:
  cufftHandle h_{};
};

}  // namespace fieldft::cuda
