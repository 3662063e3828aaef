// dist::rank_sum: the rows of an operator stacked over the ranks of a communicator
// (include/fieldft/dist.hpp). Every sum over ranks is of a domain-sized (image) vector; nothing
// here reduces a codomain (k-space) vector, which each rank holds only its rows of.
#include <string>
#include <utility>

#include "fieldft/dist.hpp"

namespace fieldft::dist {

namespace {

template <class T>
void require_summable(const op::OperatorPtr<T>& part, const CommPtr& comm, const char* what) {
  require(part != nullptr, ErrorCode::kInvalidArgument, std::string("dist::") + what + ": the operator is null");
  require(comm != nullptr, ErrorCode::kInvalidArgument, std::string("dist::") + what + ": the communicator is null");
  require(comm->sums_in(part->context()), ErrorCode::kContextMismatch,
          std::string("dist::") + what + ": " + part->name() + " runs in " + part->context().describe() +
              ", where " + comm->describe() + " cannot sum (MPI sums host memory, NCCL its device's)");
}

// Two sums over ranks in one class:
//   rows (square = false): A = [A_0; …; A_{K-1}] seen from rank r (part = A_r): apply is local,
//     the adjoint and normal end with one allreduce_sum of the (replicated) image;
//   square (square = true): Σ_r N_r for square parts whose domain and codomain are replicated
//     on every rank (the parts' weighted normals): apply and adjoint both end with one.
template <class T>
class RankSum final : public op::LinearOperator<T> {
 public:
  using Complex = std::complex<T>;
  using Ptr = typename op::LinearOperator<T>::Ptr;
  RankSum(op::OperatorPtr<T> part, CommPtr comm, bool square)
      : op::LinearOperator<T>(part->domain_shape(), part->codomain_shape(), part->context()),
        part_(std::move(part)),
        comm_(std::move(comm)),
        square_(square) {}

  std::string name() const override {
    return std::string(square_ ? "rank_sum_square(" : "rank_sum(") + part_->name() + ", " + comm_->describe() + ")";
  }
  void apply(const Complex* x, Complex* y) override {
    part_->apply(x, y);
    if (square_) comm_->allreduce_sum(y, this->codomain_size(), this->context());
  }
  void apply_adjoint(const Complex* y, Complex* x) override {
    part_->apply_adjoint(y, x);
    comm_->allreduce_sum(x, this->domain_size(), this->context());
  }
  void apply_normal(const Complex* x, Complex* z) override {
    if (square_) {  // (Σ N_r)ᴴ(Σ N_r): apply, then the adjoint, through scratch
      op::LinearOperator<T>::apply_normal(x, z);
      return;
    }
    part_->apply_normal(x, z);
    comm_->allreduce_sum(z, this->domain_size(), this->context());
  }
  // Shared over the ranks when there are several and every rank's part can share (one agree_max,
  // so that every rank then makes the same collectives); include/fieldft/dist.hpp says when
  // sharing is right and how the builder checks it.
  void prepare_normal() override {
    if (square_) return;
    const int k = comm_->size();
    const bool share = k > 1 && comm_->agree_max(part_->can_share_normal() ? 0 : 1) == 0;
    if (!share) {
      part_->prepare_normal();
      return;
    }
    op::NormalShare s;
    s.rank = comm_->rank();
    s.size = k;
    const Context ctx = this->context();
    s.broadcast = [comm = comm_, ctx](void* data, std::size_t bytes, int root) {
      comm->broadcast(data, bytes, root, ctx);
    };
    s.agree_max = [comm = comm_](int value) { return comm->agree_max(value); };
    part_->prepare_normal_shared(s);
  }
  Ptr batched(std::int64_t /*k*/) const override { return nullptr; }
  // Σ_r A_rᴴ W_r A_r from the part's weighted normal. Without one, nullptr: the solver's fallback
  // (apply, w ∘ ·, apply_adjoint) is then the whole AᴴWA, since apply_adjoint sums over ranks.
  // Either way one image-sized allreduce per application, so ranks whose parts answer
  // differently still meet in the same collectives.
  Ptr weighted_normal(const Complex* weights) override {
    if (square_) return nullptr;
    auto n = part_->weighted_normal(weights);
    if (!n) return nullptr;
    return std::make_shared<RankSum<T>>(std::move(n), comm_, true);
  }

 private:
  op::OperatorPtr<T> part_;
  CommPtr comm_;
  bool square_ = false;
};

}  // namespace

template <class T>
op::OperatorPtr<T> rank_sum(op::OperatorPtr<T> part, CommPtr comm) {
  require_summable(part, comm, "rank_sum");
  return std::make_shared<RankSum<T>>(std::move(part), std::move(comm), false);
}

template op::OperatorPtr<float> rank_sum<float>(op::OperatorPtr<float>, CommPtr);
template op::OperatorPtr<double> rank_sum<double>(op::OperatorPtr<double>, CommPtr);

}  // namespace fieldft::dist
