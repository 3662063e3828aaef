// fieldft::op::LinearOperator — the one abstraction above the transforms (DESIGN.md §3).
//
// A linear map A from a domain (an image, C stacked images, …) to a codomain (k-space samples,
// …). Vectors are interleaved complex (std::complex<T> layout), column-major with the FIRST
// shape entry fastest: an image is {Nx, Ny[, Nz]}, and stacked copies (coils, shots, frames)
// add trailing, slowest entries, e.g. {Nx, Ny, C}. Vectors live where context() says:
//   host    host pointers;
//   cuda:d  device pointers on device d (never staged through the host).
//
//   apply(x, y):          y = A x          (x: domain_size(), y: codomain_size())
//   apply_adjoint(y, x):  x = Aᴴ y
//   apply_normal(x, z):   z = AᴴA x        (default: A then Aᴴ through scratch memory;
//                                           an operator with a cheaper form overrides it)
//   prepare_normal():     builds now whatever apply_normal needs and would otherwise build at
//                         its first call (a Toeplitz kernel, with its allocation and host
//                         synchronisation), so that no solver iteration pays it and its set-up
//                         can be timed apart. Idempotent; nothing by default. The solvers call
//                         it before their loop; combinators forward it to what they apply the
//                         normal of.
//   prepare_normal_shared(share), can_share_normal():
//                         the same set-up split over the ranks of a group whose members each
//                         hold an operator with the SAME normal structure (the coil shares of one
//                         field-corrected SENSE problem: the same encoding, hence the same
//                         Toeplitz kernels; dist::rank_sum passes its communicator's share). A
//                         part builds its share of the kernels and receives the others through
//                         share.broadcast. Collective when share.size > 1: every rank calls it
//                         once, and only when every rank's can_share_normal() said true (else
//                         prepare_normal() on every rank). Defaults: prepare_normal(), false.
//   weighted_normal(w):   an operator N with N.apply = AᴴWA, W = diag(w), where A has a form
//                         cheaper than A, ·w, Aᴴ (a Toeplitz normal with W in its kernel);
//                         nullptr otherwise (the default). w: codomain_size() values in context
//                         memory, real >= 0 in their real parts. Made once, before a solver's
//                         loop (it may read w back to the host and build kernels).
// Outputs are overwritten, never accumulated; inputs and outputs must not overlap.
//
// Stream order (fieldft/context.hpp): on a device, every call enqueues its work on the
// context's stream and returns without waiting for it; results are ready once the stream
// reaches them (context().synchronize()). Scratch memory is allocated once, stream-ordered, on
// the operator's device, and reused: repeated calls allocate nothing. The caller's current
// CUDA device is never changed. An operator is not safe to call from two threads at once.
#pragma once

#include <complex>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "fieldft/context.hpp"
#include "fieldft/error.hpp"

namespace fieldft::op {

using Shape = std::vector<std::int64_t>;

// Number of elements of a shape (1 for an empty shape). Throws kInvalidArgument for a negative
// extent and kTooLarge on int64 overflow.
std::int64_t shape_size(const Shape& shape);
// "64x64x32" (fastest first), "(scalar)" for an empty shape.
std::string shape_string(const Shape& shape);

// Scratch memory at a context, kept between calls and grown on demand: malloc on the host;
// cudaMallocAsync / cudaFreeAsync on the context's stream and device on CUDA (the pool keeps
// freed blocks, so growth costs no device synchronisation).
class Workspace {
 public:
  explicit Workspace(Context context) : context_(std::move(context)) {}
  ~Workspace();
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;

  // At least `bytes` bytes, valid until the next get() with a larger size or destruction.
  void* get(std::size_t bytes);
  template <class U>
  U* get_as(std::int64_t n) {
    return static_cast<U*>(get(static_cast<std::size_t>(n) * sizeof(U)));
  }
  const Context& context() const noexcept { return context_; }

 private:
  void release() noexcept;
  Context context_;
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

// The ranks that split prepare_normal's set-up (prepare_normal_shared above). The op layer knows
// nothing of communicators: the two collectives come as functions (dist::rank_sum binds them to
// its dist::Communicator). size 1: nothing is shared, and the functions are not called.
struct NormalShare {
  int rank = 0;  // 0 .. size-1
  int size = 1;  // >= 1
  // Collective: `bytes` bytes at `data` (the operator's context memory) on rank `root` copied to
  // `data` on every rank; on a device ordered on the operator's stream.
  std::function<void(void* data, std::size_t bytes, int root)> broadcast;
  // Collective, host, blocking: the maximum of `value` over the ranks.
  std::function<int(int value)> agree_max;
};

template <class T>
class LinearOperator {
 public:
  using Complex = std::complex<T>;
  using Ptr = std::shared_ptr<LinearOperator<T>>;

  virtual ~LinearOperator();
  LinearOperator(const LinearOperator&) = delete;
  LinearOperator& operator=(const LinearOperator&) = delete;

  const Shape& domain_shape() const noexcept { return domain_; }
  const Shape& codomain_shape() const noexcept { return codomain_; }
  std::int64_t domain_size() const noexcept { return domain_size_; }
  std::int64_t codomain_size() const noexcept { return codomain_size_; }
  const Context& context() const noexcept { return context_; }
  const Location& location() const noexcept { return context_.location(); }
  Backend backend() const noexcept { return context_.backend(); }

  // A short description for messages and printing, e.g. "NufftEncoding(256x256 -> 65536)".
  virtual std::string name() const = 0;

  virtual void apply(const Complex* x, Complex* y) = 0;
  virtual void apply_adjoint(const Complex* y, Complex* x) = 0;
  virtual void apply_normal(const Complex* x, Complex* z);
  virtual void prepare_normal() {}
  virtual bool can_share_normal() const { return false; }
  virtual void prepare_normal_shared(const NormalShare& /*share*/) { prepare_normal(); }

  // K stacked copies of this operator as ONE operator (domain shape + {K}, codomain shape +
  // {K}) that processes all K through one batched transform; nullptr when this operator has no
  // batched form (op::batch then applies it K times in turn). Transforms always have one.
  virtual Ptr batched(std::int64_t k) const;
  // AᴴWA as an operator of its own where there is a cheaper form (see the top of the file).
  virtual Ptr weighted_normal(const Complex* /*weights*/) { return nullptr; }

 protected:
  LinearOperator(Shape domain, Shape codomain, Context context);
  // n elements of scratch at context(); slot 0 is used by the default apply_normal, slots 1-3
  // are free for subclasses. Allocated on first use, reused afterwards.
  Complex* scratch(int slot, std::int64_t n);

 private:
  Shape domain_, codomain_;
  std::int64_t domain_size_ = 0, codomain_size_ = 0;
  Context context_;
  std::unique_ptr<Workspace> scratch_[4];
};

extern template class LinearOperator<float>;
extern template class LinearOperator<double>;

}  // namespace fieldft::op
