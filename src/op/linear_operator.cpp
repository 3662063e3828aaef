// op::LinearOperator: shapes, scratch memory at the operator's context, the default normal.
#include "fieldft/op/linear_operator.hpp"

#include <cstdlib>
#include <sstream>

#include "fieldft/config.hpp"  // first: FIELDFT_HAVE_CUDA selects the includes below
#if FIELDFT_HAVE_CUDA
#include "cuda/stream.hpp"
#endif

namespace fieldft::op {

std::int64_t shape_size(const Shape& shape) {
  std::int64_t n = 1;
  for (auto s : shape) {
    require(s >= 0, ErrorCode::kInvalidArgument, "shape " + shape_string(shape) + " has a negative extent");
    require(!__builtin_mul_overflow(n, s, &n), ErrorCode::kTooLarge,
            "shape " + shape_string(shape) + " has more than 2^63 - 1 elements");
  }
  return n;
}

std::string shape_string(const Shape& shape) {
  if (shape.empty()) return "(scalar)";
  std::ostringstream os;
  for (std::size_t i = 0; i < shape.size(); ++i) os << (i ? "x" : "") << shape[i];
  return os.str();
}

Workspace::~Workspace() { release(); }

void Workspace::release() noexcept {
  if (!ptr_) return;
  if (context_.is_host()) {
    std::free(ptr_);
  } else {
#if FIELDFT_HAVE_CUDA
    // Ordered after every use already enqueued on the stream; the pool reuses the block.
    cuda::free_async(ptr_, context_.device(), context_.stream());
#endif
  }
  ptr_ = nullptr;
  bytes_ = 0;
}

void* Workspace::get(std::size_t bytes) {
  if (ptr_ && bytes <= bytes_) return ptr_;
  if (bytes == 0) bytes = 1;  // a valid, distinct pointer even for empty operators
  release();
  if (context_.is_host()) {
    ptr_ = std::malloc(bytes);
    require(ptr_ != nullptr, ErrorCode::kOutOfMemory,
            "cannot allocate " + std::to_string(bytes) + " bytes of host operator workspace");
  } else {
#if FIELDFT_HAVE_CUDA
    ptr_ = cuda::malloc_async(bytes, context_.device(), context_.stream());
#else
    throw Error(ErrorCode::kBackendUnavailable, "device workspace requested, but this fieldft was built without CUDA");
#endif
  }
  bytes_ = bytes;
  return ptr_;
}

template <class T>
LinearOperator<T>::LinearOperator(Shape domain, Shape codomain, Context context)
    : domain_(std::move(domain)), codomain_(std::move(codomain)), context_(std::move(context)) {
  domain_size_ = shape_size(domain_);
  codomain_size_ = shape_size(codomain_);
}

template <class T>
LinearOperator<T>::~LinearOperator() = default;

template <class T>
typename LinearOperator<T>::Complex* LinearOperator<T>::scratch(int slot, std::int64_t n) {
  require(slot >= 0 && slot < 4, ErrorCode::kInternal,
          "operator scratch slot " + std::to_string(slot) + " out of range [0, 4)");
  require(n >= 0, ErrorCode::kInternal, "negative operator scratch size");
  auto& ws = scratch_[slot];
  if (!ws) ws = std::make_unique<Workspace>(context_);
  return ws->template get_as<Complex>(n);
}

template <class T>
void LinearOperator<T>::apply_normal(const Complex* x, Complex* z) {
  Complex* tmp = scratch(0, codomain_size());
  apply(x, tmp);
  apply_adjoint(tmp, z);
}

template <class T>
typename LinearOperator<T>::Ptr LinearOperator<T>::batched(std::int64_t) const {
  return nullptr;
}

template class LinearOperator<float>;
template class LinearOperator<double>;

}  // namespace fieldft::op
