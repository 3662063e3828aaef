// CUDA side of fieldft::op::VectorOps: element-wise kernels and deterministic two-pass
// reductions (declarations and contract in src/cuda/vector_ops.hpp).
//
// Element-wise kernels: grid-stride loops, 64-bit indices, one complex element per iteration,
// loaded as float2/double2 when every pointer is aligned to sizeof(std::complex<T>) (what every
// allocator gives) and as two scalars otherwise (std::complex<T> only promises alignof(T)).
//
// Reductions accumulate in double for both precisions: float products are exact in double, so
// the float result is the correctly rounded value of a sum whose own error is that of double
// summation, and the cost is nothing for a kernel limited by memory bandwidth (16 bytes read per
// four multiply-adds). Pass 1: a grid whose size depends only on n (at most kMaxPartials
// blocks) writes one partial sum per block (each thread sums its grid-stride elements in
// increasing order, then a fixed shuffle tree); pass 2: one block sums the partials in a fixed
// order and writes the result. No atomics, so the result depends only on n and the data.
#include <cuda_runtime.h>

#include <complex>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <type_traits>

#include "cuda/cuda_check.cuh"
#include "cuda/device_utils.cuh"
#include "cuda/vector_ops.hpp"
#include "fieldft/detail/complex.hpp"
#include "fieldft/detail/prox.hpp"
#include "fieldft/error.hpp"

namespace fieldft::cuda::vec {

namespace {

constexpr int kThreads = 256;              // element-wise block size
constexpr std::int64_t kMaxGrid = 4096;    // element-wise grid cap (a few waves on an H100)
constexpr int kReduceThreads = 256;        // both reduction passes
constexpr std::int64_t kReduceItems = 8;   // elements per thread before another block is added
constexpr int kMaxPartials = 1024;         // pass-1 blocks at most
constexpr std::size_t kPartialBytes = kMaxPartials * sizeof(double2);
constexpr std::size_t kScalarBytes = 2 * sizeof(double);  // one std::complex<T> result

cudaStream_t stream_of(Place p) { return static_cast<cudaStream_t>(p.stream); }

unsigned grid_for(std::int64_t n) {
  const std::int64_t blocks = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(blocks < kMaxGrid ? blocks : kMaxGrid);
}

unsigned reduce_grid_for(std::int64_t n) {
  const std::int64_t per_block = kReduceThreads * kReduceItems;
  const std::int64_t blocks = (n + per_block - 1) / per_block;
  return static_cast<unsigned>(blocks < kMaxPartials ? blocks : kMaxPartials);
}

template <class T>
bool all_aligned(std::initializer_list<const void*> ptrs) {
  for (const void* p : ptrs)
    if (reinterpret_cast<std::uintptr_t>(p) % (2 * sizeof(T)) != 0) return false;
  return true;
}

// Calls f(std::true_type) when aligned, else f(std::false_type): the kernels' kAligned argument.
template <class F>
void with_alignment(bool aligned, F&& f) {
  if (aligned)
    f(std::true_type{});
  else
    f(std::false_type{});
}

// ---- device helpers ---------------------------------------------------------------------------

template <class T>
struct V {
  T x, y;
};

template <class T>
struct Vec2;
template <>
struct Vec2<float> {
  using type = float2;
};
template <>
struct Vec2<double> {
  using type = double2;
};

template <class T, bool kAligned>
__device__ __forceinline__ V<T> load(const T* p, std::int64_t i) {
  if constexpr (kAligned) {
    const auto c = reinterpret_cast<const typename Vec2<T>::type*>(p)[i];
    return {c.x, c.y};
  } else {
    return {p[2 * i], p[2 * i + 1]};
  }
}

template <class T, bool kAligned>
__device__ __forceinline__ void store(T* p, std::int64_t i, V<T> v) {
  if constexpr (kAligned) {
    using C = typename Vec2<T>::type;
    C c;
    c.x = v.x;
    c.y = v.y;
    reinterpret_cast<C*>(p)[i] = c;
  } else {
    p[2 * i] = v.x;
    p[2 * i + 1] = v.y;
  }
}

template <class T>
__device__ __forceinline__ V<T> cmul(V<T> a, V<T> b) {
  return {a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x};
}
template <class T>
__device__ __forceinline__ V<T> cconj_mul(V<T> a, V<T> b) {  // conj(a) b
  return {a.x * b.x + a.y * b.y, a.x * b.y - a.y * b.x};
}

__device__ __forceinline__ std::int64_t first_index() {
  return static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ std::int64_t grid_stride() {
  return static_cast<std::int64_t>(gridDim.x) * blockDim.x;
}

// Sums (re, im) over the block in a fixed shuffle tree; the result is valid in thread 0.
// blockDim.x must be a multiple of 32 and at most 1024.
__device__ __forceinline__ void block_sum2(double& re, double& im) {
  __shared__ double s_re[32], s_im[32];
  for (int o = 16; o > 0; o >>= 1) {
    re += __shfl_down_sync(0xffffffffu, re, o);
    im += __shfl_down_sync(0xffffffffu, im, o);
  }
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) {
    s_re[warp] = re;
    s_im[warp] = im;
  }
  __syncthreads();
  if (warp == 0) {
    const int nwarps = blockDim.x >> 5;
    re = lane < nwarps ? s_re[lane] : 0.0;
    im = lane < nwarps ? s_im[lane] : 0.0;
    for (int o = 16; o > 0; o >>= 1) {
      re += __shfl_down_sync(0xffffffffu, re, o);
      im += __shfl_down_sync(0xffffffffu, im, o);
    }
  }
}

// ---- element-wise kernels ---------------------------------------------------------------------

template <class T, bool kAligned>
__global__ void fill_kernel(std::int64_t n, V<T> v, T* x) {
  for (std::int64_t i = first_index(); i < n; i += grid_stride()) store<T, kAligned>(x, i, v);
}

template <class T, bool kAligned>
__global__ void scale_kernel(std::int64_t n, V<T> a, T* x) {
  for (std::int64_t i = first_index(); i < n; i += grid_stride())
    store<T, kAligned>(x, i, cmul(a, load<T, kAligned>(x, i)));
}

// y = a x + b y; b == 0 (a uniform branch) never reads y, so garbage there cannot propagate.
template <class T, bool kAligned>
__device__ __forceinline__ void axpby_body(std::int64_t n, V<T> a, const T* x, V<T> b, T* y) {
  if (b.x == T(0) && b.y == T(0)) {
    for (std::int64_t i = first_index(); i < n; i += grid_stride())
      store<T, kAligned>(y, i, cmul(a, load<T, kAligned>(x, i)));
  } else {
    for (std::int64_t i = first_index(); i < n; i += grid_stride()) {
      const V<T> ax = cmul(a, load<T, kAligned>(x, i));
      const V<T> by = cmul(b, load<T, kAligned>(y, i));
      store<T, kAligned>(y, i, V<T>{ax.x + by.x, ax.y + by.y});
    }
  }
}

template <class T, bool kAligned>
__global__ void axpby_kernel(std::int64_t n, V<T> a, const T* x, V<T> b, T* y) {
  axpby_body<T, kAligned>(n, a, x, b, y);
}

// a and b live in device memory (say, written by dot_to earlier on the stream).
template <class T, bool kAligned>
__global__ void axpby_ptr_kernel(std::int64_t n, const T* a, const T* x, const T* b, T* y) {
  axpby_body<T, kAligned>(n, V<T>{a[0], a[1]}, x, V<T>{b[0], b[1]}, y);
}

// y = y ± a x and y = x + a y with a in device memory (a solver's step sizes).
template <class T, bool kAligned>
__global__ void axpy_ptr_kernel(std::int64_t n, const T* a, const T* x, T* y, T sign) {
  const V<T> s{sign * a[0], sign * a[1]};
  for (std::int64_t i = first_index(); i < n; i += grid_stride()) {
    const V<T> ax = cmul(s, load<T, kAligned>(x, i)), yi = load<T, kAligned>(y, i);
    store<T, kAligned>(y, i, V<T>{yi.x + ax.x, yi.y + ax.y});
  }
}

template <class T, bool kAligned>
__global__ void xpay_ptr_kernel(std::int64_t n, const T* x, const T* a, T* y) {
  const V<T> s{a[0], a[1]};
  for (std::int64_t i = first_index(); i < n; i += grid_stride()) {
    const V<T> ay = cmul(s, load<T, kAligned>(y, i)), xi = load<T, kAligned>(x, i);
    store<T, kAligned>(y, i, V<T>{xi.x + ay.x, xi.y + ay.y});
  }
}

// out = num / den (0 when den == 0), one thread.
template <class T>
__global__ void ratio_kernel(const T* num, const T* den, T* out) {
  const fieldft::detail::Cplx<double> q = fieldft::detail::safe_ratio({double(num[0]), double(num[1])},
                                                                      {double(den[0]), double(den[1])});
  out[0] = static_cast<T>(q.re);
  out[1] = static_cast<T>(q.im);
}

template <class T, bool kAligned, bool kConj>
__global__ void mul_kernel(std::int64_t n, const T* a, const T* b, T* out) {
  for (std::int64_t i = first_index(); i < n; i += grid_stride()) {
    const V<T> va = load<T, kAligned>(a, i), vb = load<T, kAligned>(b, i);
    store<T, kAligned>(out, i, kConj ? cconj_mul(va, vb) : cmul(va, vb));
  }
}

// The stacked kernels give one thread each i and loop over the k blocks (coalesced across
// threads; the broadcast operand is read once).
template <class T, bool kAligned, bool kConj>
__global__ void mul_stacked_kernel(std::int64_t n, std::int64_t k, const T* d, const T* x,
                                   T* out) {
  for (std::int64_t i = first_index(); i < n; i += grid_stride()) {
    const V<T> vd = load<T, kAligned>(d, i);
    for (std::int64_t j = 0; j < k; ++j) {
      const std::int64_t e = i + n * j;
      const V<T> vx = load<T, kAligned>(x, e);
      store<T, kAligned>(out, e, kConj ? cconj_mul(vd, vx) : cmul(vd, vx));
    }
  }
}

template <class T, bool kAligned>
__global__ void expand_mul_kernel(std::int64_t n, std::int64_t k, const T* d, const T* x,
                                  T* out) {
  for (std::int64_t i = first_index(); i < n; i += grid_stride()) {
    const V<T> vx = load<T, kAligned>(x, i);
    for (std::int64_t j = 0; j < k; ++j) {
      const std::int64_t e = i + n * j;
      store<T, kAligned>(out, e, cmul(load<T, kAligned>(d, e), vx));
    }
  }
}

// out[i] = Σ_j conj(d[i + n j]) y[i + n j] (kWithD) or Σ_j y[i + n j], j ascending, in T.
template <class T, bool kAligned, bool kWithD>
__global__ void stacked_sum_kernel(std::int64_t n, std::int64_t k, const T* d, const T* y,
                                   T* out) {
  for (std::int64_t i = first_index(); i < n; i += grid_stride()) {
    V<T> s{T(0), T(0)};
    for (std::int64_t j = 0; j < k; ++j) {
      const std::int64_t e = i + n * j;
      const V<T> vy = load<T, kAligned>(y, e);
      const V<T> t = kWithD ? cconj_mul(load<T, kAligned>(d, e), vy) : vy;
      s.x += t.x;
      s.y += t.y;
    }
    store<T, kAligned>(out, i, s);
  }
}

template <class T, bool kAligned>
__global__ void abs2_kernel(std::int64_t n, const T* x, T* out) {
  for (std::int64_t i = first_index(); i < n; i += grid_stride()) {
    const V<T> v = load<T, kAligned>(x, i);
    out[i] = v.x * v.x + v.y * v.y;
  }
}

template <class T, bool kAligned>
__global__ void mul_real_kernel(std::int64_t n, const T* w, const T* x, T* out) {
  for (std::int64_t i = first_index(); i < n; i += grid_stride()) {
    const V<T> v = load<T, kAligned>(x, i);
    const T wi = w[i];
    store<T, kAligned>(out, i, V<T>{wi * v.x, wi * v.y});
  }
}

template <class T, bool kAligned>
__global__ void fill_random_kernel(std::int64_t n, std::uint64_t seed, T* x) {
  for (std::int64_t i = first_index(); i < n; i += grid_stride()) {
    const auto k = static_cast<std::uint64_t>(i);
    store<T, kAligned>(x, i, V<T>{static_cast<T>(detail::uniform_pm1(seed, 2 * k)),
                                  static_cast<T>(detail::uniform_pm1(seed, 2 * k + 1))});
  }
}

// One thread per group i: its magnitude over the k stacked components, then the shrunk values.
template <class T, bool kAligned>
__global__ void soft_threshold_kernel(std::int64_t n, std::int64_t k, T tau, const T* x, T* out) {
  for (std::int64_t i = first_index(); i < n; i += grid_stride()) {
    T g2 = 0;
    for (std::int64_t j = 0; j < k; ++j) {
      const V<T> v = load<T, kAligned>(x, i + n * j);
      g2 += v.x * v.x + v.y * v.y;
    }
    const T f = detail::shrink(detail::hd_sqrt(g2), tau);
    for (std::int64_t j = 0; j < k; ++j) {
      const V<T> v = load<T, kAligned>(x, i + n * j);
      store<T, kAligned>(out, i + n * j, V<T>{f * v.x, f * v.y});
    }
  }
}

template <class T, bool kAligned>
__global__ void hyperbolic_weights_kernel(std::int64_t n, T kappa, const T* x, T* w) {
  for (std::int64_t i = first_index(); i < n; i += grid_stride()) {
    const V<T> v = load<T, kAligned>(x, i);
    w[i] = detail::hyperbolic_weight(v.x * v.x + v.y * v.y, kappa);
  }
}

// x = x / √s with s = ‖x‖² (device memory, written by the reduction before); the first thread
// also writes ‖x‖. Launched with at least one block.
template <class T, bool kAligned>
__global__ void normalize_kernel(std::int64_t n, const T* s, T* x, T* norm) {
  const T nrm = detail::hd_sqrt(s[0]);
  if (first_index() == 0) norm[0] = nrm;
  if (!(nrm > T(0))) return;
  const T inv = T(1) / nrm;
  for (std::int64_t i = first_index(); i < n; i += grid_stride()) {
    const V<T> v = load<T, kAligned>(x, i);
    store<T, kAligned>(x, i, V<T>{v.x * inv, v.y * inv});
  }
}

template <class T>
__global__ void newton_step_kernel(const T* data, const T* penalty, T beta, T* alpha) {
  alpha[0] = detail::newton_update(alpha[0], data[0], data[2], penalty[0], penalty[1], beta);
  alpha[1] = T(0);
}

template <class T>
__global__ void polak_ribiere_kernel(const T* now, const T* cross, const T* before, T* gamma) {
  gamma[0] = detail::polak_ribiere_plus(now[0], cross[0], before[0]);
  gamma[1] = T(0);
}

// ---- reductions -------------------------------------------------------------------------------

// Pass 1 of dot (kNorm false: Σ conj(x) y) or norm2 (kNorm true: Σ |x|², y unused): one
// (re, im) partial per block.
template <class T, bool kAligned, bool kNorm>
__global__ void __launch_bounds__(kReduceThreads)
    partials_kernel(std::int64_t n, const T* x, const T* y, double2* partials) {
  double re = 0.0, im = 0.0;
  for (std::int64_t i = first_index(); i < n; i += grid_stride()) {
    const V<T> a = load<T, kAligned>(x, i);
    const double ar = a.x, ai = a.y;
    if constexpr (kNorm) {
      re += ar * ar + ai * ai;
    } else {
      const V<T> b = load<T, kAligned>(y, i);
      const double br = b.x, bi = b.y;
      re += ar * br + ai * bi;
      im += ar * bi - ai * br;
    }
  }
  block_sum2(re, im);
  if (threadIdx.x == 0) partials[blockIdx.x] = make_double2(re, im);
}

// Pass 2: one block sums nparts partials (0 allowed) and writes the result as T: two values
// (complex) or, with kNorm, one.
template <class T, bool kNorm>
__global__ void __launch_bounds__(kReduceThreads)
    finish_kernel(int nparts, const double2* partials, T* result) {
  double re = 0.0, im = 0.0;
  for (int p = threadIdx.x; p < nparts; p += blockDim.x) {
    re += partials[p].x;
    im += partials[p].y;
  }
  block_sum2(re, im);
  if (threadIdx.x == 0) {
    result[0] = static_cast<T>(re);
    if constexpr (!kNorm) result[1] = static_cast<T>(im);
  }
}

template <class T, bool kNorm>
void reduce_to(Place place, Workspace& ws, std::int64_t n, const std::complex<T>* x,
               const std::complex<T>* y, T* result) {
  auto* partials = static_cast<double2*>(ws.device_memory());
  const cudaStream_t s = stream_of(place);
  const unsigned blocks = n > 0 ? reduce_grid_for(n) : 0u;
  if (blocks > 0) {
    const T* xs = reinterpret_cast<const T*>(x);
    const T* ys = reinterpret_cast<const T*>(y);
    with_alignment(all_aligned<T>({x, kNorm ? x : y}), [&](auto aligned) {
      partials_kernel<T, decltype(aligned)::value, kNorm>
          <<<blocks, kReduceThreads, 0, s>>>(n, xs, ys, partials);
    });
    FIELDFT_CUDA_CHECK_LAUNCH();
  }
  finish_kernel<T, kNorm><<<1, kReduceThreads, 0, s>>>(static_cast<int>(blocks), partials, result);
  FIELDFT_CUDA_CHECK_LAUNCH();
}

// Pass 1 of a reduction of the terms f(i) = (re, im), i < n: one partial per block, summed as
// in partials_kernel. Pass 2 is finish_kernel.
template <class F>
__global__ void __launch_bounds__(kReduceThreads)
    map_partials_kernel(std::int64_t n, F f, double2* partials) {
  double re = 0.0, im = 0.0;
  for (std::int64_t i = first_index(); i < n; i += grid_stride()) {
    const double2 t = f(i);
    re += t.x;
    im += t.y;
  }
  block_sum2(re, im);
  if (threadIdx.x == 0) partials[blockIdx.x] = make_double2(re, im);
}

// Σ_i f(i) into result: one T (kReal) or one complex. make(aligned) builds the functor for the
// alignment of the operands.
template <class T, bool kReal, class Make>
void map_reduce_to(Place place, Workspace& ws, std::int64_t n, bool aligned, Make&& make,
                   T* result) {
  auto* partials = static_cast<double2*>(ws.device_memory());
  const cudaStream_t s = stream_of(place);
  const unsigned blocks = n > 0 ? reduce_grid_for(n) : 0u;
  if (blocks > 0) {
    with_alignment(aligned, [&](auto a) {
      map_partials_kernel<<<blocks, kReduceThreads, 0, s>>>(n, make(a), partials);
    });
    FIELDFT_CUDA_CHECK_LAUNCH();
  }
  finish_kernel<T, kReal><<<1, kReduceThreads, 0, s>>>(static_cast<int>(blocks), partials, result);
  FIELDFT_CUDA_CHECK_LAUNCH();
}

// The terms of norm1_to: the magnitude of group i.
template <class T, bool kAligned>
struct GroupNormTerm {
  std::int64_t n, k;
  const T* x;
  __device__ double2 operator()(std::int64_t i) const {
    double g2 = 0.0;
    for (std::int64_t j = 0; j < k; ++j) {
      const V<T> v = load<T, kAligned>(x, i + n * j);
      g2 += static_cast<double>(v.x) * v.x + static_cast<double>(v.y) * v.y;
    }
    return make_double2(::sqrt(g2), 0.0);
  }
};

// The terms of hyperbolic_sum_to: ψ(|x_i|).
template <class T, bool kAligned>
struct HyperbolicTerm {
  double kappa;
  const T* x;
  __device__ double2 operator()(std::int64_t i) const {
    const V<T> v = load<T, kAligned>(x, i);
    const double re = v.x, im = v.y;
    return make_double2(detail::hyperbolic_value(re * re + im * im, kappa), 0.0);
  }
};

// The terms of hyperbolic_line_to at t = u + α v: (w Re(conj(v) t), w |v|²).
template <class T, bool kAligned>
struct HyperbolicLineTerm {
  double kappa;
  const T* u;
  const T* v;
  const T* alpha;
  __device__ double2 operator()(std::int64_t i) const {
    const double a = alpha[0];
    const V<T> uu = load<T, kAligned>(u, i), vv = load<T, kAligned>(v, i);
    const double vr = vv.x, vi = vv.y, tr = uu.x + a * vr, ti = uu.y + a * vi;
    const double w = detail::hyperbolic_weight(tr * tr + ti * ti, kappa);
    return make_double2(w * (vr * tr + vi * ti), w * (vr * vr + vi * vi));
  }
};

template <class T>
T* device_scalar(Workspace& ws) {
  return reinterpret_cast<T*>(static_cast<char*>(ws.device_memory()) + kPartialBytes);
}

}  // namespace

// ---- workspace --------------------------------------------------------------------------------

Workspace::~Workspace() {
  if (!device_ && !pinned_) return;
  // No checks: a destructor must not throw. The caller's device is restored.
  int previous = -1;
  const bool switched = cudaGetDevice(&previous) == cudaSuccess && previous != place_.device &&
                        cudaSetDevice(place_.device) == cudaSuccess;
  if (device_) cudaFreeAsync(device_, stream_of(place_));
  if (pinned_) cudaFreeHost(pinned_);
  if (switched) cudaSetDevice(previous);
}

void* Workspace::device_memory() {
  if (!device_) {
    const cudaError_t e = cudaMallocAsync(&device_, kPartialBytes + kScalarBytes, stream_of(place_));
    if (e == cudaErrorMemoryAllocation) {
      cudaGetLastError();
      device_ = nullptr;
      throw Error(ErrorCode::kOutOfMemory,
                  "VectorOps: could not allocate the 16 KiB reduction workspace on CUDA device " +
                      std::to_string(place_.device));
    }
    FIELDFT_CUDA_CHECK(e);
  }
  return device_;
}

void* Workspace::pinned_scalar() {
  if (!pinned_) FIELDFT_CUDA_CHECK(cudaMallocHost(&pinned_, kScalarBytes));
  return pinned_;
}

// ---- operations -------------------------------------------------------------------------------

template <class T>
void copy(Place place, std::int64_t n, const std::complex<T>* x, std::complex<T>* y) {
  if (x == y) return;
  DeviceGuard guard(place.device);
  FIELDFT_CUDA_CHECK(cudaMemcpyAsync(y, x, static_cast<std::size_t>(n) * sizeof(std::complex<T>),
                                     cudaMemcpyDefault, stream_of(place)));
}

template <class T>
void fill(Place place, std::int64_t n, std::complex<T> value, std::complex<T>* x) {
  DeviceGuard guard(place.device);
  T* xs = reinterpret_cast<T*>(x);
  with_alignment(all_aligned<T>({x}), [&](auto aligned) {
    fill_kernel<T, decltype(aligned)::value><<<grid_for(n), kThreads, 0, stream_of(place)>>>(
        n, V<T>{value.real(), value.imag()}, xs);
  });
  FIELDFT_CUDA_CHECK_LAUNCH();
}

template <class T>
void scale(Place place, std::int64_t n, std::complex<T> a, std::complex<T>* x) {
  DeviceGuard guard(place.device);
  T* xs = reinterpret_cast<T*>(x);
  with_alignment(all_aligned<T>({x}), [&](auto aligned) {
    scale_kernel<T, decltype(aligned)::value><<<grid_for(n), kThreads, 0, stream_of(place)>>>(
        n, V<T>{a.real(), a.imag()}, xs);
  });
  FIELDFT_CUDA_CHECK_LAUNCH();
}

template <class T>
void axpby(Place place, std::int64_t n, std::complex<T> a, const std::complex<T>* x,
           std::complex<T> b, std::complex<T>* y) {
  DeviceGuard guard(place.device);
  const T* xs = reinterpret_cast<const T*>(x);
  T* ys = reinterpret_cast<T*>(y);
  with_alignment(all_aligned<T>({x, y}), [&](auto aligned) {
    axpby_kernel<T, decltype(aligned)::value><<<grid_for(n), kThreads, 0, stream_of(place)>>>(
        n, V<T>{a.real(), a.imag()}, xs, V<T>{b.real(), b.imag()}, ys);
  });
  FIELDFT_CUDA_CHECK_LAUNCH();
}

template <class T>
void axpby(Place place, std::int64_t n, const std::complex<T>* a, const std::complex<T>* x,
           const std::complex<T>* b, std::complex<T>* y) {
  DeviceGuard guard(place.device);
  const T* as = reinterpret_cast<const T*>(a);
  const T* bs = reinterpret_cast<const T*>(b);
  const T* xs = reinterpret_cast<const T*>(x);
  T* ys = reinterpret_cast<T*>(y);
  with_alignment(all_aligned<T>({x, y}), [&](auto aligned) {
    axpby_ptr_kernel<T, decltype(aligned)::value>
        <<<grid_for(n), kThreads, 0, stream_of(place)>>>(n, as, xs, bs, ys);
  });
  FIELDFT_CUDA_CHECK_LAUNCH();
}

template <class T>
void axpy(Place place, std::int64_t n, const std::complex<T>* a, const std::complex<T>* x,
          std::complex<T>* y, bool negate) {
  DeviceGuard guard(place.device);
  const T* as = reinterpret_cast<const T*>(a);
  const T* xs = reinterpret_cast<const T*>(x);
  T* ys = reinterpret_cast<T*>(y);
  with_alignment(all_aligned<T>({x, y}), [&](auto aligned) {
    axpy_ptr_kernel<T, decltype(aligned)::value>
        <<<grid_for(n), kThreads, 0, stream_of(place)>>>(n, as, xs, ys, negate ? T(-1) : T(1));
  });
  FIELDFT_CUDA_CHECK_LAUNCH();
}

template <class T>
void xpay(Place place, std::int64_t n, const std::complex<T>* x, const std::complex<T>* a,
          std::complex<T>* y) {
  DeviceGuard guard(place.device);
  const T* as = reinterpret_cast<const T*>(a);
  const T* xs = reinterpret_cast<const T*>(x);
  T* ys = reinterpret_cast<T*>(y);
  with_alignment(all_aligned<T>({x, y}), [&](auto aligned) {
    xpay_ptr_kernel<T, decltype(aligned)::value>
        <<<grid_for(n), kThreads, 0, stream_of(place)>>>(n, xs, as, ys);
  });
  FIELDFT_CUDA_CHECK_LAUNCH();
}

template <class T>
void ratio(Place place, const std::complex<T>* num, const std::complex<T>* den,
           std::complex<T>* out) {
  DeviceGuard guard(place.device);
  ratio_kernel<T><<<1, 1, 0, stream_of(place)>>>(reinterpret_cast<const T*>(num),
                                                  reinterpret_cast<const T*>(den),
                                                  reinterpret_cast<T*>(out));
  FIELDFT_CUDA_CHECK_LAUNCH();
}

template <class T>
void mul(Place place, std::int64_t n, const std::complex<T>* a, const std::complex<T>* b,
         std::complex<T>* out, bool conj_a) {
  DeviceGuard guard(place.device);
  const T* as = reinterpret_cast<const T*>(a);
  const T* bs = reinterpret_cast<const T*>(b);
  T* os = reinterpret_cast<T*>(out);
  with_alignment(all_aligned<T>({a, b, out}), [&](auto aligned) {
    constexpr bool kA = decltype(aligned)::value;
    if (conj_a)
      mul_kernel<T, kA, true><<<grid_for(n), kThreads, 0, stream_of(place)>>>(n, as, bs, os);
    else
      mul_kernel<T, kA, false><<<grid_for(n), kThreads, 0, stream_of(place)>>>(n, as, bs, os);
  });
  FIELDFT_CUDA_CHECK_LAUNCH();
}

template <class T>
void mul_stacked(Place place, std::int64_t n, std::int64_t k, const std::complex<T>* d,
                 const std::complex<T>* x, std::complex<T>* out, bool conj_d) {
  DeviceGuard guard(place.device);
  const T* ds = reinterpret_cast<const T*>(d);
  const T* xs = reinterpret_cast<const T*>(x);
  T* os = reinterpret_cast<T*>(out);
  with_alignment(all_aligned<T>({d, x, out}), [&](auto aligned) {
    constexpr bool kA = decltype(aligned)::value;
    if (conj_d)
      mul_stacked_kernel<T, kA, true>
          <<<grid_for(n), kThreads, 0, stream_of(place)>>>(n, k, ds, xs, os);
    else
      mul_stacked_kernel<T, kA, false>
          <<<grid_for(n), kThreads, 0, stream_of(place)>>>(n, k, ds, xs, os);
  });
  FIELDFT_CUDA_CHECK_LAUNCH();
}

template <class T>
void sum_stacked(Place place, std::int64_t n, std::int64_t k, const std::complex<T>* x,
                 std::complex<T>* out) {
  DeviceGuard guard(place.device);
  const T* xs = reinterpret_cast<const T*>(x);
  T* os = reinterpret_cast<T*>(out);
  with_alignment(all_aligned<T>({x, out}), [&](auto aligned) {
    stacked_sum_kernel<T, decltype(aligned)::value, false>
        <<<grid_for(n), kThreads, 0, stream_of(place)>>>(n, k, nullptr, xs, os);
  });
  FIELDFT_CUDA_CHECK_LAUNCH();
}

template <class T>
void expand_mul(Place place, std::int64_t n, std::int64_t k, const std::complex<T>* d,
                const std::complex<T>* x, std::complex<T>* out) {
  DeviceGuard guard(place.device);
  const T* ds = reinterpret_cast<const T*>(d);
  const T* xs = reinterpret_cast<const T*>(x);
  T* os = reinterpret_cast<T*>(out);
  with_alignment(all_aligned<T>({d, x, out}), [&](auto aligned) {
    expand_mul_kernel<T, decltype(aligned)::value>
        <<<grid_for(n), kThreads, 0, stream_of(place)>>>(n, k, ds, xs, os);
  });
  FIELDFT_CUDA_CHECK_LAUNCH();
}

template <class T>
void conj_mul_sum(Place place, std::int64_t n, std::int64_t k, const std::complex<T>* d,
                  const std::complex<T>* y, std::complex<T>* out) {
  DeviceGuard guard(place.device);
  const T* ds = reinterpret_cast<const T*>(d);
  const T* ys = reinterpret_cast<const T*>(y);
  T* os = reinterpret_cast<T*>(out);
  with_alignment(all_aligned<T>({d, y, out}), [&](auto aligned) {
    stacked_sum_kernel<T, decltype(aligned)::value, true>
        <<<grid_for(n), kThreads, 0, stream_of(place)>>>(n, k, ds, ys, os);
  });
  FIELDFT_CUDA_CHECK_LAUNCH();
}

template <class T>
void abs2(Place place, std::int64_t n, const std::complex<T>* x, T* out) {
  DeviceGuard guard(place.device);
  const T* xs = reinterpret_cast<const T*>(x);
  with_alignment(all_aligned<T>({x}), [&](auto aligned) {
    abs2_kernel<T, decltype(aligned)::value><<<grid_for(n), kThreads, 0, stream_of(place)>>>(
        n, xs, out);
  });
  FIELDFT_CUDA_CHECK_LAUNCH();
}

template <class T>
void mul_real(Place place, std::int64_t n, const T* w, const std::complex<T>* x,
              std::complex<T>* out) {
  DeviceGuard guard(place.device);
  const T* xs = reinterpret_cast<const T*>(x);
  T* os = reinterpret_cast<T*>(out);
  with_alignment(all_aligned<T>({x, out}), [&](auto aligned) {
    mul_real_kernel<T, decltype(aligned)::value><<<grid_for(n), kThreads, 0, stream_of(place)>>>(
        n, w, xs, os);
  });
  FIELDFT_CUDA_CHECK_LAUNCH();
}

template <class T>
void fill_random(Place place, std::int64_t n, std::uint64_t seed, std::complex<T>* x) {
  DeviceGuard guard(place.device);
  T* xs = reinterpret_cast<T*>(x);
  with_alignment(all_aligned<T>({x}), [&](auto aligned) {
    fill_random_kernel<T, decltype(aligned)::value>
        <<<grid_for(n), kThreads, 0, stream_of(place)>>>(n, seed, xs);
  });
  FIELDFT_CUDA_CHECK_LAUNCH();
}

template <class T>
void to_host(Place place, std::int64_t n, const std::complex<T>* x, std::complex<T>* host) {
  DeviceGuard guard(place.device);
  FIELDFT_CUDA_CHECK(cudaMemcpyAsync(host, x, static_cast<std::size_t>(n) * sizeof(std::complex<T>),
                                     cudaMemcpyDeviceToHost, stream_of(place)));
  FIELDFT_CUDA_CHECK(cudaStreamSynchronize(stream_of(place)));
}

template <class T>
void soft_threshold_stacked(Place place, std::int64_t n, std::int64_t k, T tau,
                            const std::complex<T>* x, std::complex<T>* out) {
  DeviceGuard guard(place.device);
  const T* xs = reinterpret_cast<const T*>(x);
  T* os = reinterpret_cast<T*>(out);
  with_alignment(all_aligned<T>({x, out}), [&](auto aligned) {
    soft_threshold_kernel<T, decltype(aligned)::value>
        <<<grid_for(n), kThreads, 0, stream_of(place)>>>(n, k, tau, xs, os);
  });
  FIELDFT_CUDA_CHECK_LAUNCH();
}

template <class T>
void hyperbolic_weights(Place place, std::int64_t n, T kappa, const std::complex<T>* x, T* w) {
  DeviceGuard guard(place.device);
  const T* xs = reinterpret_cast<const T*>(x);
  with_alignment(all_aligned<T>({x}), [&](auto aligned) {
    hyperbolic_weights_kernel<T, decltype(aligned)::value>
        <<<grid_for(n), kThreads, 0, stream_of(place)>>>(n, kappa, xs, w);
  });
  FIELDFT_CUDA_CHECK_LAUNCH();
}

template <class T>
void newton_step(Place place, const std::complex<T>* data, const std::complex<T>* penalty, T beta,
                 std::complex<T>* alpha) {
  DeviceGuard guard(place.device);
  newton_step_kernel<T><<<1, 1, 0, stream_of(place)>>>(reinterpret_cast<const T*>(data),
                                                        reinterpret_cast<const T*>(penalty), beta,
                                                        reinterpret_cast<T*>(alpha));
  FIELDFT_CUDA_CHECK_LAUNCH();
}

template <class T>
void polak_ribiere(Place place, const std::complex<T>* now, const std::complex<T>* cross,
                   const std::complex<T>* before, std::complex<T>* gamma) {
  DeviceGuard guard(place.device);
  polak_ribiere_kernel<T><<<1, 1, 0, stream_of(place)>>>(
      reinterpret_cast<const T*>(now), reinterpret_cast<const T*>(cross),
      reinterpret_cast<const T*>(before), reinterpret_cast<T*>(gamma));
  FIELDFT_CUDA_CHECK_LAUNCH();
}

template <class T>
void normalize(Place place, Workspace& ws, std::int64_t n, std::complex<T>* x, T* norm) {
  DeviceGuard guard(place.device);
  T* s = device_scalar<T>(ws);
  reduce_to<T, true>(place, ws, n, x, x, s);
  T* xs = reinterpret_cast<T*>(x);
  const unsigned blocks = n > 0 ? grid_for(n) : 1u;
  with_alignment(all_aligned<T>({x}), [&](auto aligned) {
    normalize_kernel<T, decltype(aligned)::value>
        <<<blocks, kThreads, 0, stream_of(place)>>>(n, s, xs, norm);
  });
  FIELDFT_CUDA_CHECK_LAUNCH();
}

template <class T>
void norm1_to(Place place, Workspace& ws, std::int64_t n, std::int64_t k, const std::complex<T>* x,
              T* result) {
  DeviceGuard guard(place.device);
  const T* xs = reinterpret_cast<const T*>(x);
  map_reduce_to<T, true>(place, ws, n, all_aligned<T>({x}), [&](auto a) {
    return GroupNormTerm<T, decltype(a)::value>{n, k, xs};
  }, result);
}

template <class T>
void hyperbolic_sum_to(Place place, Workspace& ws, std::int64_t n, double kappa,
                       const std::complex<T>* x, T* result) {
  DeviceGuard guard(place.device);
  const T* xs = reinterpret_cast<const T*>(x);
  map_reduce_to<T, true>(place, ws, n, all_aligned<T>({x}), [&](auto a) {
    return HyperbolicTerm<T, decltype(a)::value>{kappa, xs};
  }, result);
}

template <class T>
void hyperbolic_line_to(Place place, Workspace& ws, std::int64_t n, double kappa,
                        const std::complex<T>* u, const std::complex<T>* v,
                        const std::complex<T>* alpha, std::complex<T>* result) {
  DeviceGuard guard(place.device);
  const T* us = reinterpret_cast<const T*>(u);
  const T* vs = reinterpret_cast<const T*>(v);
  const T* as = reinterpret_cast<const T*>(alpha);
  map_reduce_to<T, false>(place, ws, n, all_aligned<T>({u, v}), [&](auto a) {
    return HyperbolicLineTerm<T, decltype(a)::value>{kappa, us, vs, as};
  }, reinterpret_cast<T*>(result));
}

template <class T>
void dot_to(Place place, Workspace& ws, std::int64_t n, const std::complex<T>* x,
            const std::complex<T>* y, std::complex<T>* result) {
  DeviceGuard guard(place.device);
  reduce_to<T, false>(place, ws, n, x, y, reinterpret_cast<T*>(result));
}

template <class T>
void norm2_to(Place place, Workspace& ws, std::int64_t n, const std::complex<T>* x, T* result) {
  DeviceGuard guard(place.device);
  reduce_to<T, true>(place, ws, n, x, x, result);
}

template <class T>
std::complex<T> dot(Place place, Workspace& ws, std::int64_t n, const std::complex<T>* x,
                    const std::complex<T>* y) {
  DeviceGuard guard(place.device);
  T* d = device_scalar<T>(ws);
  reduce_to<T, false>(place, ws, n, x, y, d);
  T* h = static_cast<T*>(ws.pinned_scalar());
  FIELDFT_CUDA_CHECK(cudaMemcpyAsync(h, d, 2 * sizeof(T), cudaMemcpyDeviceToHost, stream_of(place)));
  FIELDFT_CUDA_CHECK(cudaStreamSynchronize(stream_of(place)));
  return {h[0], h[1]};
}

template <class T>
T norm2(Place place, Workspace& ws, std::int64_t n, const std::complex<T>* x) {
  DeviceGuard guard(place.device);
  T* d = device_scalar<T>(ws);
  reduce_to<T, true>(place, ws, n, x, x, d);
  T* h = static_cast<T*>(ws.pinned_scalar());
  FIELDFT_CUDA_CHECK(cudaMemcpyAsync(h, d, sizeof(T), cudaMemcpyDeviceToHost, stream_of(place)));
  FIELDFT_CUDA_CHECK(cudaStreamSynchronize(stream_of(place)));
  return h[0];
}

// ---- instantiations ---------------------------------------------------------------------------

#define FIELDFT_VECTOR_OPS_INSTANTIATE(T)                                                        \
  template void copy<T>(Place, std::int64_t, const std::complex<T>*, std::complex<T>*);         \
  template void fill<T>(Place, std::int64_t, std::complex<T>, std::complex<T>*);                \
  template void scale<T>(Place, std::int64_t, std::complex<T>, std::complex<T>*);               \
  template void axpby<T>(Place, std::int64_t, std::complex<T>, const std::complex<T>*,          \
                         std::complex<T>, std::complex<T>*);                                    \
  template void axpby<T>(Place, std::int64_t, const std::complex<T>*, const std::complex<T>*,   \
                         const std::complex<T>*, std::complex<T>*);                             \
  template void axpy<T>(Place, std::int64_t, const std::complex<T>*, const std::complex<T>*,    \
                        std::complex<T>*, bool);                                                \
  template void xpay<T>(Place, std::int64_t, const std::complex<T>*, const std::complex<T>*,    \
                        std::complex<T>*);                                                      \
  template void ratio<T>(Place, const std::complex<T>*, const std::complex<T>*,                 \
                         std::complex<T>*);                                                     \
  template void mul<T>(Place, std::int64_t, const std::complex<T>*, const std::complex<T>*,     \
                       std::complex<T>*, bool);                                                 \
  template void mul_stacked<T>(Place, std::int64_t, std::int64_t, const std::complex<T>*,       \
                               const std::complex<T>*, std::complex<T>*, bool);                 \
  template void sum_stacked<T>(Place, std::int64_t, std::int64_t, const std::complex<T>*,       \
                               std::complex<T>*);                                               \
  template void expand_mul<T>(Place, std::int64_t, std::int64_t, const std::complex<T>*,        \
                              const std::complex<T>*, std::complex<T>*);                        \
  template void conj_mul_sum<T>(Place, std::int64_t, std::int64_t, const std::complex<T>*,      \
                                const std::complex<T>*, std::complex<T>*);                      \
  template void abs2<T>(Place, std::int64_t, const std::complex<T>*, T*);                       \
  template void dot_to<T>(Place, Workspace&, std::int64_t, const std::complex<T>*,              \
                          const std::complex<T>*, std::complex<T>*);                            \
  template void norm2_to<T>(Place, Workspace&, std::int64_t, const std::complex<T>*, T*);       \
  template std::complex<T> dot<T>(Place, Workspace&, std::int64_t, const std::complex<T>*,      \
                                  const std::complex<T>*);                                      \
  template T norm2<T>(Place, Workspace&, std::int64_t, const std::complex<T>*);                   \
  template void mul_real<T>(Place, std::int64_t, const T*, const std::complex<T>*,              \
                            std::complex<T>*);                                                  \
  template void fill_random<T>(Place, std::int64_t, std::uint64_t, std::complex<T>*);          \
  template void to_host<T>(Place, std::int64_t, const std::complex<T>*, std::complex<T>*);      \
  template void soft_threshold_stacked<T>(Place, std::int64_t, std::int64_t, T,                 \
                                          const std::complex<T>*, std::complex<T>*);            \
  template void hyperbolic_weights<T>(Place, std::int64_t, T, const std::complex<T>*, T*);      \
  template void newton_step<T>(Place, const std::complex<T>*, const std::complex<T>*, T,        \
                               std::complex<T>*);                                               \
  template void polak_ribiere<T>(Place, const std::complex<T>*, const std::complex<T>*,         \
                                 const std::complex<T>*, std::complex<T>*);                     \
  template void normalize<T>(Place, Workspace&, std::int64_t, std::complex<T>*, T*);            \
  template void norm1_to<T>(Place, Workspace&, std::int64_t, std::int64_t,                      \
                            const std::complex<T>*, T*);                                        \
  template void hyperbolic_sum_to<T>(Place, Workspace&, std::int64_t, double,                   \
                                     const std::complex<T>*, T*);                               \
  template void hyperbolic_line_to<T>(Place, Workspace&, std::int64_t, double,                  \
                                      const std::complex<T>*, const std::complex<T>*,           \
                                      const std::complex<T>*, std::complex<T>*);

FIELDFT_VECTOR_OPS_INSTANTIATE(float)
FIELDFT_VECTOR_OPS_INSTANTIATE(double)

#undef FIELDFT_VECTOR_OPS_INSTANTIATE

}  // namespace fieldft::cuda::vec
