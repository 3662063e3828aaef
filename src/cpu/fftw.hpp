// FFTW in float and double behind one template, with RAII plans and buffers. FFTW's planner is
// not thread-safe, so every plan creation and destruction takes one process-wide lock.
#pragma once

#include <fftw3.h>

#include <complex>
#include <cstdint>
#include <memory>
#include <mutex>

namespace fieldft::cpu {

std::mutex& fftw_planner_mutex();
void fftw_init_threads_once();

template <class T>
struct Fftw;

template <>
struct Fftw<double> {
  using plan_t = fftw_plan;
  using complex_t = fftw_complex;
  static void* malloc(std::size_t b) { return fftw_malloc(b); }
  static void free(void* p) { fftw_free(p); }
  static void plan_with_nthreads(int n) { fftw_plan_with_nthreads(n); }
  static void set_timelimit(double seconds) { fftw_set_timelimit(seconds); }
  // In-place transforms over the loops `howmany` (howmany_rank of them), 64-bit sizes (guru64).
  static plan_t plan(int rank, const fftw_iodim64* dims, int howmany_rank, const fftw_iodim64* howmany,
                     std::complex<double>* data, int sign, unsigned flags) {
    auto* d = reinterpret_cast<complex_t*>(data);
    return fftw_plan_guru64_dft(rank, dims, howmany_rank, howmany, d, d, sign, flags);
  }
  static void execute(plan_t p) { fftw_execute(p); }
  // The plan on another array of the same layout and alignment (FFTW's new-array execute).
  static void execute(plan_t p, std::complex<double>* data) {
    auto* d = reinterpret_cast<complex_t*>(data);
    fftw_execute_dft(p, d, d);
  }
  static void destroy(plan_t p) { fftw_destroy_plan(p); }
};

template <>
struct Fftw<float> {
  using plan_t = fftwf_plan;
  using complex_t = fftwf_complex;
  static void* malloc(std::size_t b) { return fftwf_malloc(b); }
  static void free(void* p) { fftwf_free(p); }
  static void plan_with_nthreads(int n) { fftwf_plan_with_nthreads(n); }
  static void set_timelimit(double seconds) { fftwf_set_timelimit(seconds); }
  // In-place transforms over the loops `howmany` (howmany_rank of them), 64-bit sizes (guru64).
  static plan_t plan(int rank, const fftw_iodim64* dims, int howmany_rank, const fftw_iodim64* howmany,
                     std::complex<float>* data, int sign, unsigned flags) {
    auto* d = reinterpret_cast<complex_t*>(data);
    return fftwf_plan_guru64_dft(rank, dims, howmany_rank, howmany, d, d, sign, flags);
  }
  static void execute(plan_t p) { fftwf_execute(p); }
  // The plan on another array of the same layout and alignment (FFTW's new-array execute).
  static void execute(plan_t p, std::complex<float>* data) {
    auto* d = reinterpret_cast<complex_t*>(data);
    fftwf_execute_dft(p, d, d);
  }
  static void destroy(plan_t p) { fftwf_destroy_plan(p); }
};

// An aligned buffer of complex values from FFTW's allocator.
template <class T>
class FftwBuffer {
 public:
  FftwBuffer() = default;
  explicit FftwBuffer(std::size_t n);
  std::complex<T>* get() const { return ptr_.get(); }
  std::size_t size() const { return ptr_ ? size_ : 0; }

 private:
  struct Free {
    void operator()(std::complex<T>* p) const { Fftw<T>::free(p); }
  };
  std::unique_ptr<std::complex<T>, Free> ptr_;
  std::size_t size_ = 0;
};

// An in-place batched complex FFT over a column-major grid (x fastest), planned once.
template <class T>
class FftwPlan {
 public:
  FftwPlan(int dim, const std::int64_t* nf, std::int64_t howmany, std::complex<T>* data, int sign,
           bool measure, int nthreads);
  // Any in-place guru64 transform: `rank` dims (slowest first, as FFTW lists them) repeated over
  // `howmany_rank` loops, e.g. a 1D pass along one axis of a subset of a grid's rows (pruned FFTs).
  FftwPlan(int rank, const fftw_iodim64* dims, int howmany_rank, const fftw_iodim64* howmany,
           std::complex<T>* data, int sign, bool measure, int nthreads);
  ~FftwPlan();
  FftwPlan(const FftwPlan&) = delete;
  FftwPlan& operator=(const FftwPlan&) = delete;
  void execute() const { Fftw<T>::execute(plan_); }
  // On `data` instead: same layout, and the same fftw_alignment_of as the planned array.
  void execute(std::complex<T>* data) const { Fftw<T>::execute(plan_, data); }

 private:
  typename Fftw<T>::plan_t plan_;
};

}  // namespace fieldft::cpu
