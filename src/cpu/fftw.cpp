#include "cpu/fftw.hpp"

#include <string>

#include "fieldft/error.hpp"

namespace fieldft::cpu {

std::mutex& fftw_planner_mutex() {
  static std::mutex m;
  return m;
}

// FFTW_MEASURE runs candidate plans and times them: a few hundred ms for a 512² grid on an idle
// machine, but minutes where many processes share the cores (a GPU test suite running its CPU
// references in parallel timed out at 200 s). Each measured plan gets at most this long; FFTW
// then keeps the best plan it has timed (and the plan is still correct, only maybe slower).
constexpr double kMeasureSeconds = 0.5;

void fftw_init_threads_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    fftw_init_threads();
    fftwf_init_threads();
  });
}

template <class T>
FftwBuffer<T>::FftwBuffer(std::size_t n) {
  auto* p = static_cast<std::complex<T>*>(Fftw<T>::malloc(n * sizeof(std::complex<T>)));
  if (!p && n)
    throw Error(ErrorCode::kOutOfMemory, "cannot allocate " + std::to_string(n * sizeof(std::complex<T>) >> 20) +
                                             " MiB for the fine grid");
  ptr_.reset(p);
  size_ = n;
}

template <class T>
FftwPlan<T>::FftwPlan(int dim, const std::int64_t* nf, std::int64_t howmany, std::complex<T>* data, int sign,
                      bool measure, int nthreads) {
  fftw_iodim64 dims[3];
  std::int64_t stride = 1;
  for (int d = 0; d < dim; ++d) {  // FFTW lists the slowest dimension first
    dims[dim - 1 - d] = {static_cast<ptrdiff_t>(nf[d]), static_cast<ptrdiff_t>(stride), static_cast<ptrdiff_t>(stride)};
    stride *= nf[d];
  }
  const fftw_iodim64 batch = {static_cast<ptrdiff_t>(howmany), static_cast<ptrdiff_t>(stride),
                              static_cast<ptrdiff_t>(stride)};
  fftw_init_threads_once();
  std::lock_guard<std::mutex> lock(fftw_planner_mutex());
  Fftw<T>::plan_with_nthreads(nthreads);
  Fftw<T>::set_timelimit(measure ? kMeasureSeconds : FFTW_NO_TIMELIMIT);
  plan_ = Fftw<T>::plan(dim, dims, 1, &batch, data, sign, measure ? FFTW_MEASURE : FFTW_ESTIMATE);
  if (!plan_) throw Error(ErrorCode::kInternal, "FFTW could not create a plan for the fine grid");
}

template <class T>
FftwPlan<T>::FftwPlan(int rank, const fftw_iodim64* dims, int howmany_rank, const fftw_iodim64* howmany,
                      std::complex<T>* data, int sign, bool measure, int nthreads) {
  fftw_init_threads_once();
  std::lock_guard<std::mutex> lock(fftw_planner_mutex());
  Fftw<T>::plan_with_nthreads(nthreads);
  Fftw<T>::set_timelimit(measure ? kMeasureSeconds : FFTW_NO_TIMELIMIT);
  plan_ = Fftw<T>::plan(rank, dims, howmany_rank, howmany, data, sign, measure ? FFTW_MEASURE : FFTW_ESTIMATE);
  if (!plan_) throw Error(ErrorCode::kInternal, "FFTW could not create a plan for a strided (pruned) transform");
}

template <class T>
FftwPlan<T>::~FftwPlan() {
  std::lock_guard<std::mutex> lock(fftw_planner_mutex());
  Fftw<T>::destroy(plan_);
}

template class FftwBuffer<float>;
template class FftwBuffer<double>;
template class FftwPlan<float>;
template class FftwPlan<double>;

}  // namespace fieldft::cpu
