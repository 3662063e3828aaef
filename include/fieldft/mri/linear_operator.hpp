// fieldft::mri::LinearOperator — the one abstraction of the MRI layer (DESIGN.md §3).
//
// A linear map A from a domain (e.g. an image, or C stacked images) to a codomain (e.g. k-space
// samples). Vectors are interleaved complex (std::complex<T> layout), column-major with the
// first shape entry fastest, and live in the operator's memory():
//   Memory::kHost   host pointers (CPU backend),
//   Memory::kDevice CUDA device pointers on the operator's device (CUDA backend).
// Data stays where it is: a device operator never copies its vectors through the host. Calls
// return when the result is complete (device operators synchronise their own stream), so
// operators on different streams can be chained safely.
//
//   apply(x, y):          y = A x          (x: domain_size(), y: codomain_size())
//   apply_adjoint(y, x):  x = Aᴴ y
//   apply_normal(x, z):   z = AᴴA x        (default: through a temporary; operators with a
//                                           faster normal operator, e.g. Toeplitz, override it)
// Outputs are overwritten, never accumulated; input and output must not overlap.
// An operator is not safe to use from two threads at once (it owns workspace).
//
// Combinators (math order): compose(A, B) = A∘B, scale(α, A) = αA. Both operands must share
// memory(); the results keep shared ownership of their operands.
#pragma once

#include <complex>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "fieldft/error.hpp"
#include "fieldft/nufft.hpp"  // fieldft::Backend

namespace fieldft::mri {

using Shape = std::vector<std::int64_t>;

enum class Memory : int { kHost = 0, kDevice = 1 };

// Number of elements of a shape (1 for an empty shape). Throws kTooLarge on int64 overflow.
std::int64_t shape_size(const Shape& shape);
// "64x64x32"
std::string shape_string(const Shape& shape);

namespace detail {
// Scratch vector in host or device memory, grown on demand and kept between calls.
class ScratchBuffer {
 public:
  ScratchBuffer() = default;
  ~ScratchBuffer();
  ScratchBuffer(const ScratchBuffer&) = delete;
  ScratchBuffer& operator=(const ScratchBuffer&) = delete;
  // At least `bytes` bytes in `memory` (device: the current CUDA device).
  void* get(Memory memory, std::size_t bytes);

 private:
  void release() noexcept;
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
  Memory memory_ = Memory::kHost;
};
}  // namespace detail

template <class T>
class LinearOperator {
 public:
  using Complex = std::complex<T>;

  virtual ~LinearOperator() = default;
  LinearOperator(const LinearOperator&) = delete;
  LinearOperator& operator=(const LinearOperator&) = delete;

  const Shape& domain_shape() const noexcept { return domain_; }
  const Shape& codomain_shape() const noexcept { return codomain_; }
  std::int64_t domain_size() const noexcept { return domain_size_; }
  std::int64_t codomain_size() const noexcept { return codomain_size_; }

  virtual Backend backend() const noexcept = 0;
  Memory memory() const noexcept {
    return backend() == Backend::kCuda ? Memory::kDevice : Memory::kHost;
  }

  virtual void apply(const Complex* x, Complex* y) = 0;
  virtual void apply_adjoint(const Complex* y, Complex* x) = 0;
  virtual void apply_normal(const Complex* x, Complex* z);

 protected:
  LinearOperator(Shape domain, Shape codomain);
  // n elements of scratch in memory(), reserved for apply_normal's intermediate.
  Complex* normal_scratch(std::int64_t n);

 private:
  Shape domain_, codomain_;
  std::int64_t domain_size_ = 0, codomain_size_ = 0;
  detail::ScratchBuffer normal_scratch_;
};

// A∘B: x ↦ A(B x). Requires A.domain_size() == B.codomain_size() and equal memory().
template <class T>
std::shared_ptr<LinearOperator<T>> compose(std::shared_ptr<LinearOperator<T>> a,
                                           std::shared_ptr<LinearOperator<T>> b);
// αA (α complex; the adjoint uses conj(α)).
template <class T>
std::shared_ptr<LinearOperator<T>> scale(std::complex<T> alpha,
                                         std::shared_ptr<LinearOperator<T>> a);

extern template class LinearOperator<float>;
extern template class LinearOperator<double>;

}  // namespace fieldft::mri
