// CUDA side of fieldft::op::VectorOps (include/fieldft/op/vector_ops.hpp), declared in plain C++
// so that src/op/vector_ops.cpp, compiled by the host compiler, can call it without
// cuda_runtime.h. Defined in src/cuda/vector_ops.cu. Include only under FIELDFT_HAVE_CUDA.
//
// Every function makes place.device current for its duration (restoring the caller's device),
// enqueues on place.stream and returns; only dot() and norm2() synchronise that stream. Callers
// have validated the arguments (n > 0 unless stated, non-null pointers to device-accessible
// memory); errors of the CUDA runtime throw fieldft::Error(kCuda).
#pragma once

#include <complex>
#include <cstdint>

namespace fieldft::cuda::vec {

// Where the work runs: a CUDA device and a cudaStream_t of that device (nullptr = legacy default).
struct Place {
  int device = 0;
  void* stream = nullptr;
};

// Device memory for the reductions' partial sums (and a device scalar for dot()/norm2()),
// allocated once, stream-ordered (cudaMallocAsync), at the first reduction; a pinned host scalar
// allocated at the first dot()/norm2(). Both are released with the object, the device part
// stream-ordered on the same stream, which must still exist then.
class Workspace {
 public:
  explicit Workspace(Place place) noexcept : place_(place) {}
  ~Workspace();
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;

  // Used by src/cuda/vector_ops.cu only, with place.device current.
  void* device_memory();  // kDeviceBytes, allocated on first use
  void* pinned_scalar();  // 16 bytes of pinned host memory, allocated on first use

 private:
  Place place_;
  void* device_ = nullptr;
  void* pinned_ = nullptr;
};

template <class T>
void copy(Place place, std::int64_t n, const std::complex<T>* x, std::complex<T>* y);
template <class T>
void fill(Place place, std::int64_t n, std::complex<T> value, std::complex<T>* x);
template <class T>
void scale(Place place, std::int64_t n, std::complex<T> a, std::complex<T>* x);
template <class T>
void axpby(Place place, std::int64_t n, std::complex<T> a, const std::complex<T>* x,
           std::complex<T> b, std::complex<T>* y);
template <class T>
void axpby(Place place, std::int64_t n, const std::complex<T>* a, const std::complex<T>* x,
           const std::complex<T>* b, std::complex<T>* y);
template <class T>
void axpy(Place place, std::int64_t n, const std::complex<T>* a, const std::complex<T>* x,
          std::complex<T>* y, bool negate);
template <class T>
void xpay(Place place, std::int64_t n, const std::complex<T>* x, const std::complex<T>* a,
          std::complex<T>* y);
template <class T>
void ratio(Place place, const std::complex<T>* num, const std::complex<T>* den,
           std::complex<T>* out);
template <class T>
void mul(Place place, std::int64_t n, const std::complex<T>* a, const std::complex<T>* b,
         std::complex<T>* out, bool conj_a);
template <class T>
void mul_stacked(Place place, std::int64_t n, std::int64_t k, const std::complex<T>* d,
                 const std::complex<T>* x, std::complex<T>* out, bool conj_d);
template <class T>
void sum_stacked(Place place, std::int64_t n, std::int64_t k, const std::complex<T>* x,
                 std::complex<T>* out);
template <class T>
void expand_mul(Place place, std::int64_t n, std::int64_t k, const std::complex<T>* d,
                const std::complex<T>* x, std::complex<T>* out);
template <class T>
void conj_mul_sum(Place place, std::int64_t n, std::int64_t k, const std::complex<T>* d,
                  const std::complex<T>* y, std::complex<T>* out);
template <class T>
void abs2(Place place, std::int64_t n, const std::complex<T>* x, T* out);

template <class T>
void mul_real(Place place, std::int64_t n, const T* w, const std::complex<T>* x,
              std::complex<T>* out);
template <class T>
void fill_random(Place place, std::int64_t n, std::uint64_t seed, std::complex<T>* x);
// Waits for the stream: host receives n values (pageable or pinned host memory).
template <class T>
void to_host(Place place, std::int64_t n, const std::complex<T>* x, std::complex<T>* host);
template <class T>
void soft_threshold_stacked(Place place, std::int64_t n, std::int64_t k, T tau,
                            const std::complex<T>* x, std::complex<T>* out);
// kappa = 1/δ² (0 for the quadratic).
template <class T>
void hyperbolic_weights(Place place, std::int64_t n, T kappa, const std::complex<T>* x, T* w);
// One thread each; scalars in device memory.
template <class T>
void newton_step(Place place, const std::complex<T>* data, const std::complex<T>* penalty, T beta,
                 std::complex<T>* alpha);
template <class T>
void polak_ribiere(Place place, const std::complex<T>* now, const std::complex<T>* cross,
                   const std::complex<T>* before, std::complex<T>* gamma);

// Reductions; n == 0 is allowed (the result is 0). *_to write one value to device memory.
// normalize writes ‖x‖ to norm and scales x (n == 0 allowed).
template <class T>
void normalize(Place place, Workspace& ws, std::int64_t n, std::complex<T>* x, T* norm);
template <class T>
void norm1_to(Place place, Workspace& ws, std::int64_t n, std::int64_t k, const std::complex<T>* x,
              T* result);
template <class T>
void hyperbolic_sum_to(Place place, Workspace& ws, std::int64_t n, double kappa,
                       const std::complex<T>* x, T* result);
template <class T>
void hyperbolic_line_to(Place place, Workspace& ws, std::int64_t n, double kappa,
                        const std::complex<T>* u, const std::complex<T>* v,
                        const std::complex<T>* alpha, std::complex<T>* result);
template <class T>
void dot_to(Place place, Workspace& ws, std::int64_t n, const std::complex<T>* x,
            const std::complex<T>* y, std::complex<T>* result);
template <class T>
void norm2_to(Place place, Workspace& ws, std::int64_t n, const std::complex<T>* x, T* result);
template <class T>
std::complex<T> dot(Place place, Workspace& ws, std::int64_t n, const std::complex<T>* x,
                    const std::complex<T>* y);
template <class T>
T norm2(Place place, Workspace& ws, std::int64_t n, const std::complex<T>* x);

}  // namespace fieldft::cuda::vec
