// A batched in-place cuFFT plan in either precision, shared by the NUFFT plan (cuda_plan.cu) and
// the Toeplitz engine (toeplitz.cu). Every call is checked (FIELDFT_CUDA_CHECK); the plan is
// bound to one stream at creation, so exec is stream-ordered.
#pragma once

#include <cufft.h>

#include <cstddef>
#include <string>

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
// at stride `stride`, transforms `dist` apart. With own_work_area false the plan allocates no
// work area: the owner gives it one of work_size() bytes (set_work_area) before exec, e.g. one
// area shared by plans that run one after the other on the same stream. A work area cuFFT cannot
// allocate is kOutOfMemory.
template <class T>
class CufftPlan {
 public:
  CufftPlan(int rank, long long* n, long long stride, long long dist, long long batch, cudaStream_t stream,
            bool own_work_area = true) {
    FIELDFT_CUDA_CHECK(cufftCreate(&h_));
    try {
      if (!own_work_area) FIELDFT_CUDA_CHECK(cufftSetAutoAllocation(h_, 0));
      const cufftResult r = cufftMakePlanMany64(h_, rank, n, n, stride, dist, n, stride, dist,
                                                CufftTraits<T>::kType, batch, &work_);
      if (r == CUFFT_ALLOC_FAILED)
        throw Error(ErrorCode::kOutOfMemory, "cuFFT could not allocate the work area of a plan of " +
                                                 std::to_string(batch) + " transforms; reduce the problem size or batch");
      FIELDFT_CUDA_CHECK(r);
      FIELDFT_CUDA_CHECK(cufftSetStream(h_, stream));
    } catch (...) {
      cufftDestroy(h_);
      throw;
    }
  }
  std::size_t work_size() const noexcept { return work_; }
  void set_work_area(void* area) const { FIELDFT_CUDA_CHECK(cufftSetWorkArea(h_, area)); }
  ~CufftPlan() { cufftDestroy(h_); }
  CufftPlan(const CufftPlan&) = delete;
  CufftPlan& operator=(const CufftPlan&) = delete;
  void exec(Cplx<T>* data, int sign) const {
    FIELDFT_CUDA_CHECK(CufftTraits<T>::exec(h_, data, sign > 0 ? CUFFT_INVERSE : CUFFT_FORWARD));
  }

 private:
  cufftHandle h_{};
  std::size_t work_ = 0;
};

}  // namespace fieldft::cuda
