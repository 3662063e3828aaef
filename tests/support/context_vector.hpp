// Test helpers for vectors in context memory, shared by every test folder that runs operators
// on both backends (compiled per backend: FIELDFT_TEST_BACKEND, support/battery.hpp).
#pragma once

#include <algorithm>
#include <complex>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <vector>

#include "fieldft/context.hpp"
#include "support/battery.hpp"

#if FIELDFT_TEST_BACKEND == 2
#include <cuda_runtime.h>
#endif

namespace fieldft::test {

#if FIELDFT_TEST_BACKEND == 2
// Makes `device` current for the CUDA calls of a scope and restores the caller's afterwards: a
// context's memory and stream belong to its device, and a thread's current device is 0 until it
// sets one (e.g. a test's thread per device in tests/dist).
class TestDeviceScope {
 public:
  explicit TestDeviceScope(int device) {
    if (cudaGetDevice(&previous_) != cudaSuccess) previous_ = -1;
    if (device >= 0 && device != previous_) cudaSetDevice(device);
  }
  ~TestDeviceScope() {
    if (previous_ >= 0) cudaSetDevice(previous_);
  }
  TestDeviceScope(const TestDeviceScope&) = delete;
  TestDeviceScope& operator=(const TestDeviceScope&) = delete;

 private:
  int previous_ = -1;
};
#endif

// One context for a whole test run, for tests that combine operators (which must share a
// stream): the host, or one owned stream on device 0. Leaked on purpose, so that the stream is
// not destroyed after the CUDA runtime has shut down at exit.
inline Context test_context() {
  if (kBackend != Backend::kCuda) return Context::host();
  static const Context* device = new Context(Context::cuda(0));
  return *device;
}

// A vector of n complex values in context memory: a std::vector on the host, cudaMalloc'd
// memory on a device. Starts filled with NaN. upload / download are synchronous for the test
// (they synchronise the context): never call them while the context's stream is held.
template <class T>
class ContextVector {
 public:
  using Complex = std::complex<T>;

  ContextVector(Context c, std::int64_t n) : c_(std::move(c)), n_(n) {
    const std::size_t count = static_cast<std::size_t>(std::max<std::int64_t>(n, 1));
    if (c_.is_host()) {
      const T nan = std::numeric_limits<T>::quiet_NaN();
      host_.assign(count, Complex(nan, nan));
      return;
    }
#if FIELDFT_TEST_BACKEND == 2
    TestDeviceScope scope(c_.device());
    void* p = nullptr;
    if (cudaMalloc(&p, count * sizeof(Complex)) != cudaSuccess)
      throw std::runtime_error("ContextVector: cudaMalloc failed");
    dev_ = static_cast<Complex*>(p);
    // All-ones bits are a NaN in both precisions. On the context's stream: a plain cudaMemset
    // runs on the legacy stream, which does not order against the non-blocking streams of
    // Context::cuda and could land after the operator has written the vector.
    if (cudaMemsetAsync(dev_, 0xFF, count * sizeof(Complex), static_cast<cudaStream_t>(c_.stream())) != cudaSuccess)
      throw std::runtime_error("ContextVector: cudaMemsetAsync failed");
#else
    throw std::runtime_error("ContextVector: device vectors need the GPU test executable");
#endif
  }
  ~ContextVector() {
#if FIELDFT_TEST_BACKEND == 2
    TestDeviceScope scope(c_.device());
    if (dev_) cudaFree(dev_);
#endif
  }
  ContextVector(const ContextVector&) = delete;
  ContextVector& operator=(const ContextVector&) = delete;

  Complex* get() { return c_.is_host() ? host_.data() : dev_; }
  const Complex* get() const { return c_.is_host() ? host_.data() : dev_; }
  std::int64_t size() const { return n_; }
  const Context& context() const { return c_; }

  void upload(const std::vector<Complex>& v) {
    if (static_cast<std::int64_t>(v.size()) != n_) throw std::invalid_argument("ContextVector::upload: wrong length");
    write_to(c_, v, get());
    c_.synchronize();
  }

  std::vector<Complex> download() const { return read_from(c_, get(), n_); }

  // v.size() values from the host to p in context c, ordered on c's stream (a pageable source is
  // staged before the call returns, so v may go at once) / n values at p in context c to the
  // host (synchronises c). For test operators that handle raw pointers.
  static void write_to(const Context& c, const std::vector<Complex>& v, Complex* p) {
    if (c.is_host()) {
      std::copy(v.begin(), v.end(), p);
      return;
    }
#if FIELDFT_TEST_BACKEND == 2
    TestDeviceScope scope(c.device());
    if (!v.empty() && cudaMemcpyAsync(p, v.data(), v.size() * sizeof(Complex), cudaMemcpyHostToDevice,
                                      static_cast<cudaStream_t>(c.stream())) != cudaSuccess)
      throw std::runtime_error("ContextVector::write_to: cudaMemcpyAsync failed");
#endif
  }
  static std::vector<Complex> read_from(const Context& c, const Complex* p, std::int64_t n) {
    std::vector<Complex> v(static_cast<std::size_t>(n));
    if (c.is_host()) {
      std::copy(p, p + n, v.begin());
      return v;
    }
#if FIELDFT_TEST_BACKEND == 2
    TestDeviceScope scope(c.device());
    if (n > 0 && cudaMemcpyAsync(v.data(), p, v.size() * sizeof(Complex), cudaMemcpyDeviceToHost,
                                 static_cast<cudaStream_t>(c.stream())) != cudaSuccess)
      throw std::runtime_error("ContextVector::read_from: cudaMemcpyAsync failed");
    c.synchronize();
#endif
    return v;
  }

 private:
  Context c_;
  std::int64_t n_;
  std::vector<Complex> host_;
  Complex* dev_ = nullptr;
};

}  // namespace fieldft::test
