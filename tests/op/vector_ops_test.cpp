// fieldft::op::VectorOps on the backend under test (FIELDFT_TEST_BACKEND): every operation
// against a plain double-precision loop on random data, the documented aliasing cases, n = 0,
// argument errors, deterministic reductions, results left in context memory, scalar-pointer
// axpby and, on a GPU, stream order (operations enqueue behind a blocked stream and return).
#include "fieldft/op/vector_ops.hpp"

#include <atomic>
#include <chrono>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>

#include "fieldft/config.hpp"
#include "support/battery.hpp"

#if FIELDFT_TEST_BACKEND == 2
#include <cuda_runtime.h>
#endif

namespace fieldft::test {
namespace {

using op::VectorOps;

constexpr std::int64_t kSizes[] = {0, 1, 1000, 100003};  // 100003: no multiple of any block size

Context make_context(int nthreads = 0) {
  if constexpr (kBackend == Backend::kCuda) {
    return Context::cuda(0);
  } else {
    return Context::host(nthreads);
  }
}

#if FIELDFT_TEST_BACKEND == 2
void cuda_ok(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}
#endif

// n values of U in the memory of the backend under test. read() waits for all device work.
template <class U>
class Buf {
 public:
  explicit Buf(const std::vector<U>& v) : n_(v.size()) {
#if FIELDFT_TEST_BACKEND == 2
    if (n_ > 0) {
      cuda_ok(cudaMalloc(&dev_, bytes()), "cudaMalloc");
      write(v);
    }
#else
    host_ = v;
#endif
  }
  explicit Buf(std::size_t n) : Buf(std::vector<U>(n)) {}
  ~Buf() {
#if FIELDFT_TEST_BACKEND == 2
    if (dev_) cudaFree(dev_);
#endif
  }
  Buf(const Buf&) = delete;
  Buf& operator=(const Buf&) = delete;

  U* get() {
#if FIELDFT_TEST_BACKEND == 2
    return dev_;
#else
    return n_ > 0 ? host_.data() : nullptr;
#endif
  }
  std::size_t size() const { return n_; }

  void write(const std::vector<U>& v) {
    ASSERT_EQ(v.size(), n_);
#if FIELDFT_TEST_BACKEND == 2
    cuda_ok(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    if (n_ > 0) cuda_ok(cudaMemcpy(dev_, v.data(), bytes(), cudaMemcpyHostToDevice), "cudaMemcpy");
    cuda_ok(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
#else
    host_ = v;
#endif
  }

  std::vector<U> read() const {
#if FIELDFT_TEST_BACKEND == 2
    std::vector<U> v(n_);
    cuda_ok(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    if (n_ > 0) cuda_ok(cudaMemcpy(v.data(), dev_, bytes(), cudaMemcpyDeviceToHost), "cudaMemcpy");
    return v;
#else
    return host_;
#endif
  }

 private:
  std::size_t bytes() const { return n_ * sizeof(U); }
  std::size_t n_ = 0;
#if FIELDFT_TEST_BACKEND == 2
  U* dev_ = nullptr;
#else
  std::vector<U> host_;
#endif
};

// Element-wise results: a few roundings of O(1) values, k terms for the stacked sums.
template <class T>
double elementwise_tol(std::int64_t k = 1) {
  return 32.0 * static_cast<double>(k + 1) * std::numeric_limits<T>::epsilon();
}

template <class T>
::testing::AssertionResult all_close(const std::vector<std::complex<T>>& got,
                                     const std::vector<cdouble>& ref, double tol) {
  if (got.size() != ref.size())
    return ::testing::AssertionFailure() << "size " << got.size() << ", expected " << ref.size();
  double worst = 0.0;
  std::size_t at = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double e = std::abs(cdouble(got[i]) - ref[i]);
    if (std::isnan(e)) return ::testing::AssertionFailure() << "NaN at " << i;
    if (e > worst) worst = e, at = i;
  }
  if (worst > tol)
    return ::testing::AssertionFailure() << "error " << worst << " at " << at << " (got "
                                         << got[at] << ", expected " << ref[at] << "), tolerance "
                                         << tol;
  return ::testing::AssertionSuccess();
}

cdouble cd(std::complex<float> v) { return {v.real(), v.imag()}; }
cdouble cd(std::complex<double> v) { return v; }

// Long-double oracles and the scale Σ|x_i||y_i| their tolerances refer to.
struct Exact {
  cdouble value;
  double scale;
};
Exact exact_dot(const std::vector<cdouble>& x, const std::vector<cdouble>& y) {
  long double re = 0, im = 0, s = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const long double xr = x[i].real(), xi = x[i].imag(), yr = y[i].real(), yi = y[i].imag();
    re += xr * yr + xi * yi;
    im += xr * yi - xi * yr;
    s += std::abs(x[i]) * std::abs(y[i]);
  }
  return {{static_cast<double>(re), static_cast<double>(im)}, static_cast<double>(s)};
}

// Rounding of the result plus a rigorous bound for double summation of n terms.
template <class T>
double reduction_tol(std::int64_t n, double scale) {
  return (4.0 * std::numeric_limits<T>::epsilon() +
          static_cast<double>(n + 4) * std::numeric_limits<double>::epsilon()) *
             scale +
         std::numeric_limits<T>::min();
}

template <class T>
class VectorOpsTest : public ::testing::Test {
 protected:
  void SetUp() override { FIELDFT_TEST_SKIP_UNLESS_AVAILABLE(kBackend); }
};
using Precisions = ::testing::Types<float, double>;
TYPED_TEST_SUITE(VectorOpsTest, Precisions);

// ---- element-wise operations ------------------------------------------------------------------

TYPED_TEST(VectorOpsTest, ElementwiseMatchHostLoops) {
  using T = TypeParam;
  using C = std::complex<T>;
  VectorOps<T> ops(make_context());
  const C a(T(0.75), T(-0.5)), b(T(-1.25), T(0.375)), v(T(0.5), T(2));
  for (const std::int64_t n : kSizes) {
    SCOPED_TRACE("n = " + std::to_string(n));
    const auto xh = random_complex<T>(n, 11 + n), yh = random_complex<T>(n, 12 + n);
    const auto xd = widen(xh), yd = widen(yh);
    const auto nn = static_cast<std::size_t>(n);
    Buf<C> x(xh), y(yh), out(nn);

    ops.copy(n, x.get(), out.get());
    EXPECT_TRUE(all_close(out.read(), xd, 0.0)) << "copy";

    ops.fill(n, v, out.get());
    EXPECT_TRUE(all_close(out.read(), std::vector<cdouble>(nn, cd(v)), 0.0)) << "fill";

    std::vector<cdouble> ref(nn);
    out.write(xh);
    ops.scale(n, a, out.get());
    for (std::size_t i = 0; i < nn; ++i) ref[i] = cd(a) * xd[i];
    EXPECT_TRUE(all_close(out.read(), ref, elementwise_tol<T>())) << "scale";

    out.write(yh);
    ops.axpby(n, a, x.get(), b, out.get());
    for (std::size_t i = 0; i < nn; ++i) ref[i] = cd(a) * xd[i] + cd(b) * yd[i];
    EXPECT_TRUE(all_close(out.read(), ref, elementwise_tol<T>())) << "axpby";

    ops.mul(n, x.get(), y.get(), out.get());
    for (std::size_t i = 0; i < nn; ++i) ref[i] = xd[i] * yd[i];
    EXPECT_TRUE(all_close(out.read(), ref, elementwise_tol<T>())) << "mul";

    ops.conj_mul(n, x.get(), y.get(), out.get());
    for (std::size_t i = 0; i < nn; ++i) ref[i] = std::conj(xd[i]) * yd[i];
    EXPECT_TRUE(all_close(out.read(), ref, elementwise_tol<T>())) << "conj_mul";

    Buf<T> re(nn);
    ops.abs2(n, x.get(), re.get());
    const auto got = re.read();
    double worst = 0.0;
    for (std::size_t i = 0; i < nn; ++i)
      worst = std::max(worst, std::abs(static_cast<double>(got[i]) - std::norm(xd[i])));
    EXPECT_LE(worst, elementwise_tol<T>()) << "abs2";
  }
}

TYPED_TEST(VectorOpsTest, AxpbyWithZeroBetaDoesNotReadY) {
  using T = TypeParam;
  using C = std::complex<T>;
  VectorOps<T> ops(make_context());
  const std::int64_t n = 100003;
  const auto xh = random_complex<T>(n, 5);
  const T nan = std::numeric_limits<T>::quiet_NaN();
  Buf<C> x(xh), y(std::vector<C>(n, C(nan, nan)));
  const C a(T(-0.5), T(1.5));
  ops.axpby(n, a, x.get(), C(0), y.get());
  std::vector<cdouble> ref(n);
  for (std::int64_t i = 0; i < n; ++i) ref[i] = cd(a) * cd(xh[i]);
  EXPECT_TRUE(all_close(y.read(), ref, elementwise_tol<T>()));
}

TYPED_TEST(VectorOpsTest, StackedMatchHostLoops) {
  using T = TypeParam;
  using C = std::complex<T>;
  VectorOps<T> ops(make_context());
  for (const std::int64_t n : kSizes) {
    for (const std::int64_t k : {1, 3}) {
      SCOPED_TRACE("n = " + std::to_string(n) + ", k = " + std::to_string(k));
      const auto nn = static_cast<std::size_t>(n), nk = static_cast<std::size_t>(n * k);
      const auto dh = random_complex<T>(n, 21 + n), dkh = random_complex<T>(n * k, 22 + n);
      const auto xh = random_complex<T>(n * k, 23 + n);
      const auto d = widen(dh), dk = widen(dkh), x = widen(xh);
      Buf<C> dbuf(dh), dkbuf(dkh), xbuf(xh), out(nk), small(nn);
      std::vector<cdouble> ref(nk), ref_small(nn);
      const double tol = elementwise_tol<T>(k);

      ops.mul_stacked(n, k, dbuf.get(), xbuf.get(), out.get());
      for (std::size_t j = 0; j < static_cast<std::size_t>(k); ++j)
        for (std::size_t i = 0; i < nn; ++i) ref[i + nn * j] = d[i] * x[i + nn * j];
      EXPECT_TRUE(all_close(out.read(), ref, tol)) << "mul_stacked";

      ops.conj_mul_stacked(n, k, dbuf.get(), xbuf.get(), out.get());
      for (std::size_t j = 0; j < static_cast<std::size_t>(k); ++j)
        for (std::size_t i = 0; i < nn; ++i) ref[i + nn * j] = std::conj(d[i]) * x[i + nn * j];
      EXPECT_TRUE(all_close(out.read(), ref, tol)) << "conj_mul_stacked";

      ops.sum_stacked(n, k, xbuf.get(), small.get());
      for (std::size_t i = 0; i < nn; ++i) {
        ref_small[i] = 0;
        for (std::size_t j = 0; j < static_cast<std::size_t>(k); ++j) ref_small[i] += x[i + nn * j];
      }
      EXPECT_TRUE(all_close(small.read(), ref_small, tol)) << "sum_stacked";

      // x ↦ coil images: the first n values of xbuf are the image.
      ops.expand_mul(n, k, dkbuf.get(), xbuf.get(), out.get());
      for (std::size_t j = 0; j < static_cast<std::size_t>(k); ++j)
        for (std::size_t i = 0; i < nn; ++i) ref[i + nn * j] = dk[i + nn * j] * x[i];
      EXPECT_TRUE(all_close(out.read(), ref, tol)) << "expand_mul";

      ops.conj_mul_sum(n, k, dkbuf.get(), xbuf.get(), small.get());
      for (std::size_t i = 0; i < nn; ++i) {
        ref_small[i] = 0;
        for (std::size_t j = 0; j < static_cast<std::size_t>(k); ++j)
          ref_small[i] += std::conj(dk[i + nn * j]) * x[i + nn * j];
      }
      EXPECT_TRUE(all_close(small.read(), ref_small, tol)) << "conj_mul_sum";
    }
  }
}

TYPED_TEST(VectorOpsTest, StackedSumsOverNoBlocksGiveZero) {
  using T = TypeParam;
  using C = std::complex<T>;
  VectorOps<T> ops(make_context());
  const std::int64_t n = 1000;
  Buf<C> d(random_complex<T>(n, 3)), out(random_complex<T>(n, 4));
  const std::vector<cdouble> zeros(n, cdouble(0));
  ops.sum_stacked(n, 0, nullptr, out.get());
  EXPECT_TRUE(all_close(out.read(), zeros, 0.0)) << "sum_stacked, k = 0";
  out.write(random_complex<T>(n, 5));
  ops.conj_mul_sum(n, 0, nullptr, nullptr, out.get());
  EXPECT_TRUE(all_close(out.read(), zeros, 0.0)) << "conj_mul_sum, k = 0";
  ops.mul_stacked(n, 0, d.get(), nullptr, nullptr);  // nothing to write
}

// ---- aliasing allowed by the header -----------------------------------------------------------

TYPED_TEST(VectorOpsTest, DocumentedAliasingWorks) {
  using T = TypeParam;
  using C = std::complex<T>;
  VectorOps<T> ops(make_context());
  const std::int64_t n = 100003, k = 3;
  const auto nn = static_cast<std::size_t>(n), kk = static_cast<std::size_t>(k);
  const auto ah = random_complex<T>(n, 31), bh = random_complex<T>(n, 32);
  const auto sh = random_complex<T>(n * k, 33), th = random_complex<T>(n * k, 34);
  const auto a = widen(ah), b = widen(bh), s = widen(sh), t = widen(th);
  const C alpha(T(0.25), T(-1)), beta(T(1.5), T(0.5));
  std::vector<cdouble> ref(nn), refk(nn * k);
  const double tol = elementwise_tol<T>(k);

  {  // copy onto itself, axpby with x == y
    Buf<C> x(ah);
    ops.copy(n, x.get(), x.get());
    EXPECT_TRUE(all_close(x.read(), a, 0.0)) << "copy, y == x";
    ops.axpby(n, alpha, x.get(), beta, x.get());
    for (std::size_t i = 0; i < nn; ++i) ref[i] = (cd(alpha) + cd(beta)) * a[i];
    EXPECT_TRUE(all_close(x.read(), ref, tol)) << "axpby, y == x";
  }
  for (const bool conj : {false, true}) {
    for (std::size_t i = 0; i < nn; ++i) ref[i] = (conj ? std::conj(a[i]) : a[i]) * b[i];
    Buf<C> x(ah), y(bh);
    conj ? ops.conj_mul(n, x.get(), y.get(), x.get()) : ops.mul(n, x.get(), y.get(), x.get());
    EXPECT_TRUE(all_close(x.read(), ref, tol)) << "conj " << conj << ", out == a";
    x.write(ah);
    conj ? ops.conj_mul(n, x.get(), y.get(), y.get()) : ops.mul(n, x.get(), y.get(), y.get());
    EXPECT_TRUE(all_close(y.read(), ref, tol)) << "conj " << conj << ", out == b";

    Buf<C> d(ah), stack(sh);
    for (std::size_t j = 0; j < kk; ++j)
      for (std::size_t i = 0; i < nn; ++i)
        refk[i + nn * j] = (conj ? std::conj(a[i]) : a[i]) * s[i + nn * j];
    conj ? ops.conj_mul_stacked(n, k, d.get(), stack.get(), stack.get())
         : ops.mul_stacked(n, k, d.get(), stack.get(), stack.get());
    EXPECT_TRUE(all_close(stack.read(), refk, tol)) << "conj " << conj << ", stacked out == x";
  }
  {  // sum_stacked into the first block of x
    Buf<C> stack(sh);
    ops.sum_stacked(n, k, stack.get(), stack.get());
    auto got = stack.read();
    got.resize(nn);
    for (std::size_t i = 0; i < nn; ++i) ref[i] = s[i] + s[i + nn] + s[i + 2 * nn];
    EXPECT_TRUE(all_close(got, ref, tol)) << "sum_stacked, out == x";
  }
  {  // expand_mul with out == d
    Buf<C> d(sh), x(ah);
    ops.expand_mul(n, k, d.get(), x.get(), d.get());
    for (std::size_t j = 0; j < kk; ++j)
      for (std::size_t i = 0; i < nn; ++i) refk[i + nn * j] = s[i + nn * j] * a[i];
    EXPECT_TRUE(all_close(d.read(), refk, tol)) << "expand_mul, out == d";
  }
  for (const bool onto_d : {true, false}) {  // conj_mul_sum with out == d or out == y
    Buf<C> d(sh), y(th);
    ops.conj_mul_sum(n, k, d.get(), y.get(), onto_d ? d.get() : y.get());
    auto got = (onto_d ? d : y).read();
    got.resize(nn);
    for (std::size_t i = 0; i < nn; ++i) {
      ref[i] = 0;
      for (std::size_t j = 0; j < kk; ++j) ref[i] += std::conj(s[i + nn * j]) * t[i + nn * j];
    }
    EXPECT_TRUE(all_close(got, ref, tol)) << "conj_mul_sum, out == " << (onto_d ? "d" : "y");
  }
}

// std::complex<T> promises only alignof(T): pointers that are not 2·sizeof(T)-aligned take the
// device's scalar-load path and must give the same results.
TYPED_TEST(VectorOpsTest, ComplexPointersAlignedOnlyToTheRealType) {
  using T = TypeParam;
  using C = std::complex<T>;
  VectorOps<T> ops(make_context());
  const std::int64_t n = 100003, k = 2;
  const auto nn = static_cast<std::size_t>(n);
  const auto ah = random_complex<T>(n * k, 91), bh = random_complex<T>(n * k, 92);
  const auto a = widen(ah), b = widen(bh);
  // The complex values start one real after the (aligned) start of the allocation.
  auto shifted = [](const std::vector<C>& v) {
    std::vector<T> r(2 * v.size() + 1, T(0));
    std::memcpy(r.data() + 1, v.data(), v.size() * sizeof(C));
    return r;
  };
  auto unshift = [](const std::vector<T>& r, std::size_t count) {
    std::vector<C> v(count);
    std::memcpy(static_cast<void*>(v.data()), r.data() + 1, count * sizeof(C));
    return v;
  };
  Buf<T> ra(shifted(ah)), rb(shifted(bh)), rout(2 * nn + 1);
  auto* pa = reinterpret_cast<C*>(ra.get() + 1);
  auto* pb = reinterpret_cast<C*>(rb.get() + 1);
  auto* pout = reinterpret_cast<C*>(rout.get() + 1);
  std::vector<cdouble> ref(nn);
  const double tol = elementwise_tol<T>(k);

  ops.mul(n, pa, pb, pout);
  for (std::size_t i = 0; i < nn; ++i) ref[i] = a[i] * b[i];
  EXPECT_TRUE(all_close(unshift(rout.read(), nn), ref, tol)) << "mul";

  ops.conj_mul_sum(n, k, pa, pb, pout);
  for (std::size_t i = 0; i < nn; ++i)
    ref[i] = std::conj(a[i]) * b[i] + std::conj(a[i + nn]) * b[i + nn];
  EXPECT_TRUE(all_close(unshift(rout.read(), nn), ref, tol)) << "conj_mul_sum";

  ops.axpby(n, C(T(2)), pa, C(T(-1)), pb);
  for (std::size_t i = 0; i < nn; ++i) ref[i] = 2.0 * a[i] - b[i];
  EXPECT_TRUE(all_close(unshift(rb.read(), nn), ref, tol)) << "axpby";

  const std::vector<cdouble> a1(a.begin(), a.begin() + n);
  const Exact nx = exact_dot(a1, a1);
  EXPECT_LE(std::abs(static_cast<double>(ops.norm2(n, pa)) - nx.value.real()),
            reduction_tol<T>(n, nx.scale));
  const C d = ops.dot(n, pa, pa);
  EXPECT_LE(std::abs(cd(d) - nx.value), reduction_tol<T>(n, nx.scale));
}

// ---- reductions -------------------------------------------------------------------------------

TYPED_TEST(VectorOpsTest, ReductionsMatchExactSums) {
  using T = TypeParam;
  using C = std::complex<T>;
  VectorOps<T> ops(make_context());
  for (const std::int64_t n : kSizes) {
    SCOPED_TRACE("n = " + std::to_string(n));
    const auto xh = random_complex<T>(n, 41 + n), yh = random_complex<T>(n, 42 + n);
    const auto xd = widen(xh), yd = widen(yh);
    Buf<C> x(xh), y(yh);
    const Exact d = exact_dot(xd, yd), nx = exact_dot(xd, xd);

    const C got = ops.dot(n, x.get(), y.get());
    EXPECT_LE(std::abs(cd(got) - d.value), reduction_tol<T>(n, d.scale)) << "dot " << got;
    const T got_norm = ops.norm2(n, x.get());
    EXPECT_LE(std::abs(static_cast<double>(got_norm) - nx.value.real()),
              reduction_tol<T>(n, nx.scale))
        << "norm2 " << got_norm;
    if (n == 0) {
      EXPECT_EQ(got, C(0));
      EXPECT_EQ(got_norm, T(0));
    }

    // The *_to variants leave the same bits in context memory.
    Buf<C> dres(std::vector<C>{C(T(7), T(7))});
    Buf<T> nres(std::vector<T>{T(7)});
    ops.dot_to(n, x.get(), y.get(), dres.get());
    ops.norm2_to(n, x.get(), nres.get());
    EXPECT_EQ(dres.read()[0], got) << "dot_to";
    EXPECT_EQ(nres.read()[0], got_norm) << "norm2_to";
  }
}

TYPED_TEST(VectorOpsTest, ReductionsAreDeterministic) {
  using T = TypeParam;
  using C = std::complex<T>;
  for (const std::int64_t n : {std::int64_t{100003}, std::int64_t{3000017}}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    Buf<C> x(random_complex<T>(n, 51)), y(random_complex<T>(n, 52));
    VectorOps<T> ops(make_context());
    const C d0 = ops.dot(n, x.get(), y.get());
    const T n0 = ops.norm2(n, x.get());
    for (int rep = 0; rep < 3; ++rep) {
      EXPECT_EQ(ops.dot(n, x.get(), y.get()), d0);
      EXPECT_EQ(ops.norm2(n, x.get()), n0);
    }
    if constexpr (kBackend == Backend::kCpu) {
      // Same bits whatever the thread count (the chunking depends only on n).
      for (const int threads : {1, 2, 3, 7, 0}) {
        VectorOps<T> other(Context::host(threads));
        EXPECT_EQ(other.dot(n, x.get(), y.get()), d0) << threads << " threads";
        EXPECT_EQ(other.norm2(n, x.get()), n0) << threads << " threads";
      }
    }
  }
}

TYPED_TEST(VectorOpsTest, PointerScalarsFeedAxpby) {
  using T = TypeParam;
  using C = std::complex<T>;
  VectorOps<T> ops(make_context());
  for (const std::int64_t n : kSizes) {
    SCOPED_TRACE("n = " + std::to_string(n));
    const auto nn = static_cast<std::size_t>(n);
    const auto xh = random_complex<T>(n, 61 + n), yh = random_complex<T>(n, 62 + n);
    const auto xd = widen(xh), yd = widen(yh);
    const C beta(T(-0.5), T(0.25));
    Buf<C> x(xh), y(yh), alpha(1), b(std::vector<C>{beta});

    // alpha = <x, y> in context memory, then y = alpha x + beta y without a host round trip.
    ops.dot_to(n, x.get(), y.get(), alpha.get());
    ops.axpby(n, alpha.get(), x.get(), b.get(), y.get());
    const C alpha_value = alpha.read()[0];
    std::vector<cdouble> ref(nn);
    for (std::size_t i = 0; i < nn; ++i) ref[i] = cd(alpha_value) * xd[i] + cd(beta) * yd[i];
    const double scale = std::max(1.0, std::abs(cd(alpha_value)));
    EXPECT_TRUE(all_close(y.read(), ref, elementwise_tol<T>() * scale));

    // *b == 0 does not read y.
    const T nan = std::numeric_limits<T>::quiet_NaN();
    Buf<C> garbage(std::vector<C>(nn, C(nan, nan))), zero(std::vector<C>{C(0)}),
        a(std::vector<C>{C(T(2), T(-1))});
    ops.axpby(n, a.get(), x.get(), zero.get(), garbage.get());
    for (std::size_t i = 0; i < nn; ++i) ref[i] = cdouble(2, -1) * xd[i];
    EXPECT_TRUE(all_close(garbage.read(), ref, elementwise_tol<T>())) << "*b == 0";
  }
}

// The solver steps with scalars in context memory: y ± a x, x + a y, num / den (0 for 0 / 0).
TYPED_TEST(VectorOpsTest, SolverStepsWithPointerScalars) {
  using T = TypeParam;
  using C = std::complex<T>;
  VectorOps<T> ops(make_context());
  for (const std::int64_t n : kSizes) {
    SCOPED_TRACE("n = " + std::to_string(n));
    const auto nn = static_cast<std::size_t>(n);
    const auto xh = random_complex<T>(n, 71 + n), yh = random_complex<T>(n, 72 + n);
    const auto xd = widen(xh), yd = widen(yh);
    const C av(T(0.75), T(-1.5));
    Buf<C> x(xh), y(yh), a(std::vector<C>{av});
    std::vector<cdouble> ref(nn);

    ops.axpy(n, a.get(), x.get(), y.get());
    for (std::size_t i = 0; i < nn; ++i) ref[i] = yd[i] + cd(av) * xd[i];
    EXPECT_TRUE(all_close(y.read(), ref, 2 * elementwise_tol<T>())) << "axpy";

    y.write(yh);
    ops.axpy(n, a.get(), x.get(), y.get(), /*negate=*/true);
    for (std::size_t i = 0; i < nn; ++i) ref[i] = yd[i] - cd(av) * xd[i];
    EXPECT_TRUE(all_close(y.read(), ref, 2 * elementwise_tol<T>())) << "axpy, negated";

    y.write(yh);
    ops.xpay(n, x.get(), a.get(), y.get());
    for (std::size_t i = 0; i < nn; ++i) ref[i] = xd[i] + cd(av) * yd[i];
    EXPECT_TRUE(all_close(y.read(), ref, 2 * elementwise_tol<T>())) << "xpay";
  }
  const C num(T(3), T(4)), den(T(1), T(-2));
  Buf<C> pn(std::vector<C>{num}), pd(std::vector<C>{den}), out(1), zero(std::vector<C>{C(0)});
  ops.ratio(pn.get(), pd.get(), out.get());
  EXPECT_TRUE(all_close(out.read(), {cd(num) / cd(den)}, elementwise_tol<T>())) << "ratio";
  ops.ratio(zero.get(), zero.get(), out.get());
  EXPECT_EQ(out.read()[0], C(0)) << "0 / 0 must give a zero step";
  ops.ratio(pn.get(), zero.get(), out.get());
  EXPECT_EQ(out.read()[0], C(0)) << "x / 0 must give a zero step";
  // Scalars of large and small problems: |den|² is beyond float's range (1e60, 1e-60) but the
  // ratio is not (a float CG on a 256², 32-coil spiral has pᴴq ~ 1e25 and gave NaN steps).
  for (const T scale : {T(1e30), T(1e-30)}) {
    Buf<C> bn(std::vector<C>{num * scale}), bd(std::vector<C>{den * scale});
    ops.ratio(bn.get(), bd.get(), out.get());
    EXPECT_TRUE(all_close(out.read(), {cd(num) / cd(den)}, elementwise_tol<T>())) << "ratio at scale " << scale;
  }
}

// ---- n = 0, errors, moves ---------------------------------------------------------------------

TYPED_TEST(VectorOpsTest, EmptyVectorsAreValid) {
  using T = TypeParam;
  using C = std::complex<T>;
  VectorOps<T> ops(make_context());
  ops.copy(0, nullptr, nullptr);
  ops.fill(0, C(1), nullptr);
  ops.scale(0, C(2), nullptr);
  ops.axpby(0, C(1), nullptr, C(1), nullptr);
  ops.axpby(0, nullptr, nullptr, nullptr, nullptr);
  ops.mul(0, nullptr, nullptr, nullptr);
  ops.conj_mul(0, nullptr, nullptr, nullptr);
  ops.mul_stacked(0, 4, nullptr, nullptr, nullptr);
  ops.conj_mul_stacked(0, 4, nullptr, nullptr, nullptr);
  ops.sum_stacked(0, 4, nullptr, nullptr);
  ops.expand_mul(0, 4, nullptr, nullptr, nullptr);
  ops.conj_mul_sum(0, 4, nullptr, nullptr, nullptr);
  ops.abs2(0, nullptr, nullptr);
  EXPECT_EQ(ops.dot(0, nullptr, nullptr), C(0));
  EXPECT_EQ(ops.norm2(0, nullptr), T(0));
}

TYPED_TEST(VectorOpsTest, BadArgumentsThrow) {
  using T = TypeParam;
  using C = std::complex<T>;
  VectorOps<T> ops(make_context());
  Buf<C> x(random_complex<T>(8, 1)), y(random_complex<T>(8, 2)), r(1);
  const auto bad = ErrorCode::kInvalidArgument;
  EXPECT_TRUE(throws_error([&] { ops.copy(-1, x.get(), y.get()); }, bad, {"copy", "negative"}));
  EXPECT_TRUE(throws_error([&] { ops.fill(-5, C(0), x.get()); }, bad, {"fill", "n = -5"}));
  EXPECT_TRUE(throws_error([&] { ops.axpby(8, C(1), nullptr, C(1), y.get()); }, bad,
                           {"axpby", "x", "null"}));
  EXPECT_TRUE(throws_error([&] { ops.axpby(8, r.get(), x.get(), nullptr, y.get()); }, bad,
                           {"axpby", "b", "null"}));
  EXPECT_TRUE(throws_error([&] { ops.mul(8, x.get(), y.get(), nullptr); }, bad, {"out", "null"}));
  EXPECT_TRUE(throws_error([&] { ops.sum_stacked(8, -1, x.get(), y.get()); }, bad,
                           {"sum_stacked", "k = -1"}));
  EXPECT_TRUE(throws_error([&] { ops.expand_mul(4, 2, x.get(), nullptr, y.get()); }, bad,
                           {"expand_mul", "x"}));
  EXPECT_TRUE(throws_error([&] { ops.dot(-2, x.get(), y.get()); }, bad, {"dot"}));
  EXPECT_TRUE(throws_error([&] { ops.norm2(8, nullptr); }, bad, {"norm2", "null"}));
  EXPECT_TRUE(throws_error([&] { ops.dot_to(8, x.get(), y.get(), nullptr); }, bad,
                           {"dot_to", "result"}));
  EXPECT_TRUE(throws_error([&] { ops.norm2_to(0, nullptr, nullptr); }, bad,
                           {"norm2_to", "result"}));
  EXPECT_TRUE(throws_error([&] { ops.abs2(8, x.get(), nullptr); }, bad, {"abs2"}));
  const std::int64_t huge = std::int64_t{1} << 40;
  EXPECT_TRUE(throws_error([&] { ops.mul_stacked(huge, huge, x.get(), y.get(), y.get()); },
                           ErrorCode::kTooLarge, {"mul_stacked", "overflow"}));
}

TYPED_TEST(VectorOpsTest, MovedObjectKeepsWorking) {
  using T = TypeParam;
  using C = std::complex<T>;
  const std::int64_t n = 1000;
  const auto xh = random_complex<T>(n, 71);
  Buf<C> x(xh);
  VectorOps<T> first(make_context());
  const T expected = first.norm2(n, x.get());
  VectorOps<T> second(std::move(first));
  EXPECT_EQ(second.norm2(n, x.get()), expected);
  EXPECT_TRUE(throws_error([&] { (void)first.norm2(n, x.get()); },  // NOLINT(bugprone-use-after-move)
                           ErrorCode::kInvalidState, {"moved"}));
  VectorOps<T> third(make_context());
  third = std::move(second);
  EXPECT_EQ(third.norm2(n, x.get()), expected);
}

// ---- stream order (GPU) -----------------------------------------------------------------------

#if FIELDFT_TEST_BACKEND == 2
// A host function enqueued on the stream that holds it until the test opens the gate (or a
// deadline passes, so that an implementation that wrongly synchronises fails instead of hanging).
struct Gate {
  std::atomic<bool> open{false};
  std::atomic<bool> timed_out{false};
  static void CUDART_CB hold(void* p) {
    auto* g = static_cast<Gate*>(p);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!g->open.load()) {
      if (std::chrono::steady_clock::now() > deadline) {
        g->timed_out = true;
        return;
      }
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
  }
};

struct Opener {
  Gate& gate;
  ~Opener() { gate.open = true; }
};

// Enqueues, behind a closed gate on ctx's stream, an upload of x and dot_to → norm2_to → axpby
// with the scalars read from device memory; checks that every call returned while the stream is
// still held, then that the results used the x written by the host AFTER those calls returned.
template <class T>
void check_stream_order(const Context& ctx) {
  using C = std::complex<T>;
  const std::int64_t n = 1 << 20;
  const auto nn = static_cast<std::size_t>(n);
  const auto x_old = random_complex<T>(n, 81), x_new = random_complex<T>(n, 82);
  const auto yh = random_complex<T>(n, 83);
  const C beta(T(0.5), T(-0.25));
  Buf<C> x(x_old), y(yh), alpha(1), b(std::vector<C>{beta});
  Buf<T> nrm(1);
  C* staging = nullptr;
  cuda_ok(cudaMallocHost(&staging, nn * sizeof(C)), "cudaMallocHost");
  std::memcpy(staging, x_old.data(), nn * sizeof(C));
  const auto stream = static_cast<cudaStream_t>(ctx.stream());

  int devices = 0, before = 0, after = -1;
  cuda_ok(cudaGetDeviceCount(&devices), "cudaGetDeviceCount");
  if (devices > 1) cuda_ok(cudaSetDevice(devices - 1), "cudaSetDevice");  // ops must restore it
  cuda_ok(cudaGetDevice(&before), "cudaGetDevice");

  VectorOps<T> ops(ctx);
  // One pass first: CUDA loads modules lazily (the default since 12.2) and the first launch of a
  // kernel may wait for the whole context, a once-per-process cost of the runtime; the reduction
  // workspace is allocated here too. Stream order is a property of the steady state.
  ops.dot_to(n, x.get(), y.get(), alpha.get());
  ops.norm2_to(n, x.get(), nrm.get());
  ops.axpby(n, alpha.get(), x.get(), b.get(), y.get());
  ops.mul(n, x.get(), x.get(), x.get());
  y.write(yh);  // synchronises; x is uploaded again below the gate
  Gate gate;
  {
    Opener opener{gate};
    cuda_ok(cudaLaunchHostFunc(stream, &Gate::hold, &gate), "cudaLaunchHostFunc");
    cuda_ok(cudaMemcpyAsync(x.get(), staging, nn * sizeof(C), cudaMemcpyHostToDevice, stream),
            "cudaMemcpyAsync");
    ops.dot_to(n, x.get(), y.get(), alpha.get());
    ops.norm2_to(n, x.get(), nrm.get());
    ops.axpby(n, alpha.get(), x.get(), b.get(), y.get());
    ops.mul(n, x.get(), x.get(), x.get());  // x ← x²  (after the reductions read it)

    cuda_ok(cudaGetDevice(&after), "cudaGetDevice");
    EXPECT_EQ(after, before) << "the caller's device was not restored";
    EXPECT_FALSE(gate.timed_out) << "an operation waited for the stream";
    EXPECT_EQ(cudaStreamQuery(stream), cudaErrorNotReady) << "the stream ran ahead of the gate";
    // The upload enqueued behind the gate must see what the host writes now.
    std::memcpy(staging, x_new.data(), nn * sizeof(C));
  }  // the gate opens here
  cuda_ok(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  EXPECT_FALSE(gate.timed_out);

  const auto xd = widen(x_new), yd = widen(yh);
  const Exact d = exact_dot(xd, yd), nx = exact_dot(xd, xd);
  const C a = alpha.read()[0];
  EXPECT_LE(std::abs(cd(a) - d.value), reduction_tol<T>(n, d.scale)) << "dot_to " << a;
  EXPECT_LE(std::abs(static_cast<double>(nrm.read()[0]) - nx.value.real()),
            reduction_tol<T>(n, nx.scale));
  std::vector<cdouble> ref(nn), sq(nn);
  for (std::size_t i = 0; i < nn; ++i) {
    ref[i] = cd(a) * xd[i] + cd(beta) * yd[i];
    sq[i] = xd[i] * xd[i];
  }
  EXPECT_TRUE(all_close(y.read(), ref, elementwise_tol<T>() * std::max(1.0, std::abs(cd(a)))));
  EXPECT_TRUE(all_close(x.read(), sq, elementwise_tol<T>()));
  cudaFreeHost(staging);
  if (devices > 1) cudaSetDevice(0);
}
#endif

TYPED_TEST(VectorOpsTest, DeviceWorkIsStreamOrdered) {
#if FIELDFT_TEST_BACKEND == 2
  using T = TypeParam;
  SCOPED_TRACE("owned stream");
  check_stream_order<T>(Context::cuda(0));
  cudaStream_t mine = nullptr;
  cuda_ok(cudaStreamCreateWithFlags(&mine, cudaStreamNonBlocking), "cudaStreamCreate");
  {
    SCOPED_TRACE("borrowed stream");
    check_stream_order<T>(Context::cuda(0, mine));
  }
  cuda_ok(cudaStreamDestroy(mine), "cudaStreamDestroy");
#else
  GTEST_SKIP() << "stream order is a property of the CUDA backend";
#endif
}

}  // namespace
}  // namespace fieldft::test
