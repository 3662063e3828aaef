// LinearOperator: shapes, the default normal operator, scratch memory and the combinators.
#include "fieldft/mri/linear_operator.hpp"

#include <cstdlib>
#include <sstream>

#include "fieldft/config.hpp"
#include "mri/vector_ops.hpp"

#if FIELDFT_HAVE_CUDA
#include "cuda/device_buffer.cuh"
#endif

namespace fieldft::mri {

std::int64_t shape_size(const Shape& shape) {
  std::int64_t n = 1;
  for (auto s : shape) {
    require(s >= 0, ErrorCode::kInvalidArgument,
            "shape " + shape_string(shape) + " has a negative extent");
    require(!__builtin_mul_overflow(n, s, &n), ErrorCode::kTooLarge,
            "shape " + shape_string(shape) + " has more than 2^63 elements");
  }
  return n;
}

std::string shape_string(const Shape& shape) {
  std::ostringstream os;
  for (std::size_t i = 0; i < shape.size(); ++i) os << (i ? "x" : "") << shape[i];
  return shape.empty() ? "(scalar)" : os.str();
}

namespace detail {

ScratchBuffer::~ScratchBuffer() { release(); }

void ScratchBuffer::release() noexcept {
  if (!ptr_) return;
  if (memory_ == Memory::kHost) {
    std::free(ptr_);
  } else {
#if FIELDFT_HAVE_CUDA
    cudaFree(ptr_);  // a destructor cannot report errors
#endif
  }
  ptr_ = nullptr;
  bytes_ = 0;
}

void* ScratchBuffer::get(Memory memory, std::size_t bytes) {
  if (ptr_ && memory == memory_ && bytes <= bytes_) return ptr_;
  release();
  if (bytes == 0) bytes = 1;
  if (memory == Memory::kHost) {
    ptr_ = std::malloc(bytes);
    require(ptr_ != nullptr, ErrorCode::kOutOfMemory,
            "cannot allocate " + std::to_string(bytes) + " bytes of host scratch memory");
  } else {
#if FIELDFT_HAVE_CUDA
    ptr_ = fieldft::cuda::device_alloc(bytes, "operator scratch vector");
#else
    throw Error(ErrorCode::kBackendUnavailable,
                "device scratch memory requested, but fieldft was built without CUDA");
#endif
  }
  memory_ = memory;
  bytes_ = bytes;
  return ptr_;
}

}  // namespace detail

template <class T>
LinearOperator<T>::LinearOperator(Shape domain, Shape codomain)
    : domain_(std::move(domain)), codomain_(std::move(codomain)) {
  domain_size_ = shape_size(domain_);
  codomain_size_ = shape_size(codomain_);
}

template <class T>
typename LinearOperator<T>::Complex* LinearOperator<T>::normal_scratch(std::int64_t n) {
  return static_cast<Complex*>(
      normal_scratch_.get(memory(), static_cast<std::size_t>(n) * sizeof(Complex)));
}

template <class T>
void LinearOperator<T>::apply_normal(const Complex* x, Complex* z) {
  Complex* tmp = normal_scratch(codomain_size());
  apply(x, tmp);
  apply_adjoint(tmp, z);
}

namespace {

template <class T>
class Composed final : public LinearOperator<T> {
 public:
  using Complex = std::complex<T>;
  Composed(std::shared_ptr<LinearOperator<T>> a, std::shared_ptr<LinearOperator<T>> b)
      : LinearOperator<T>(b->domain_shape(), a->codomain_shape()), a_(std::move(a)), b_(std::move(b)) {}
  Backend backend() const noexcept override { return a_->backend(); }
  void apply(const Complex* x, Complex* y) override {
    Complex* tmp = scratch();
    b_->apply(x, tmp);
    a_->apply(tmp, y);
  }
  void apply_adjoint(const Complex* y, Complex* x) override {
    Complex* tmp = scratch();
    a_->apply_adjoint(y, tmp);
    b_->apply_adjoint(tmp, x);
  }

 private:
  Complex* scratch() {
    return static_cast<Complex*>(scratch_.get(
        this->memory(), static_cast<std::size_t>(b_->codomain_size()) * sizeof(Complex)));
  }
  std::shared_ptr<LinearOperator<T>> a_, b_;
  detail::ScratchBuffer scratch_;
};

template <class T>
class Scaled final : public LinearOperator<T> {
 public:
  using Complex = std::complex<T>;
  Scaled(std::complex<T> alpha, std::shared_ptr<LinearOperator<T>> a)
      : LinearOperator<T>(a->domain_shape(), a->codomain_shape()), alpha_(alpha), a_(std::move(a)) {}
  Backend backend() const noexcept override { return a_->backend(); }
  void apply(const Complex* x, Complex* y) override {
    a_->apply(x, y);
    detail::scale_vector(this->memory(), y, this->codomain_size(), alpha_);
  }
  void apply_adjoint(const Complex* y, Complex* x) override {
    a_->apply_adjoint(y, x);
    detail::scale_vector(this->memory(), x, this->domain_size(), std::conj(alpha_));
  }
  // (αA)ᴴ(αA) = |α|² AᴴA: keeps a faster normal operator of A.
  void apply_normal(const Complex* x, Complex* z) override {
    a_->apply_normal(x, z);
    detail::scale_vector(this->memory(), z, this->domain_size(), Complex(std::norm(alpha_)));
  }

 private:
  std::complex<T> alpha_;
  std::shared_ptr<LinearOperator<T>> a_;
};

}  // namespace

template <class T>
std::shared_ptr<LinearOperator<T>> compose(std::shared_ptr<LinearOperator<T>> a,
                                           std::shared_ptr<LinearOperator<T>> b) {
  require(a && b, ErrorCode::kInvalidArgument, "compose(A, B): an operand is null");
  require(a->domain_size() == b->codomain_size(), ErrorCode::kShapeMismatch,
          "compose(A, B): A's domain " + shape_string(a->domain_shape()) +
              " does not match B's codomain " + shape_string(b->codomain_shape()));
  require(a->memory() == b->memory(), ErrorCode::kInvalidArgument,
          "compose(A, B): A and B must both work on host vectors or both on device vectors");
  return std::make_shared<Composed<T>>(std::move(a), std::move(b));
}

template <class T>
std::shared_ptr<LinearOperator<T>> scale(std::complex<T> alpha, std::shared_ptr<LinearOperator<T>> a) {
  require(a != nullptr, ErrorCode::kInvalidArgument, "scale(alpha, A): A is null");
  return std::make_shared<Scaled<T>>(alpha, std::move(a));
}

template class LinearOperator<float>;
template class LinearOperator<double>;
template std::shared_ptr<LinearOperator<float>> compose(std::shared_ptr<LinearOperator<float>>,
                                                        std::shared_ptr<LinearOperator<float>>);
template std::shared_ptr<LinearOperator<double>> compose(std::shared_ptr<LinearOperator<double>>,
                                                         std::shared_ptr<LinearOperator<double>>);
template std::shared_ptr<LinearOperator<float>> scale(std::complex<float>,
                                                      std::shared_ptr<LinearOperator<float>>);
template std::shared_ptr<LinearOperator<double>> scale(std::complex<double>,
                                                       std::shared_ptr<LinearOperator<double>>);

}  // namespace fieldft::mri
