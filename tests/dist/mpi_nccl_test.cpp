// NCCL between MPI processes (dist::nccl_over), one GPU per rank (rank r on device r): run under
// `mpirun -n K` (tests/dist/CMakeLists.txt: K = 1, 2, labels gpu and mpi; main() is
// mpi_main.cpp). Skips, on every rank alike, without NCCL or with fewer devices than ranks.
#include <gtest/gtest.h>

#include <complex>
#include <cstring>
#include <vector>

#include "fieldft/dist.hpp"
#include "fieldft/runtime.hpp"
#include "fieldft/solve/cg.hpp"
#include "support/battery.hpp"
#include "support/context_vector.hpp"
#include "dist/mpi_support.hpp"
#include "dist/split_sense.hpp"

namespace fieldft::test {
namespace {

// The same answer on every rank (the device count is the node's; ranks on several nodes with
// fewer GPUs than ranks each would still agree through the skip below).
#define FIELDFT_SKIP_UNLESS_GPU_PER_RANK()                                                           \
  do {                                                                                               \
    if (!dist::have_nccl()) GTEST_SKIP() << "built without NCCL";                                    \
    const bool enough = static_cast<int>(cuda_devices().size()) > world()->rank();                   \
    if (world()->agree_max(enough ? 0 : 1) != 0) GTEST_SKIP() << "needs one CUDA device per rank";   \
  } while (0)

TEST(NcclOverMpi, AllreduceBitIdenticalOnEveryRank) {
  FIELDFT_SKIP_UNLESS_GPU_PER_RANK();
  auto w = world();
  auto comm = dist::nccl_over(w, w->rank());
  EXPECT_EQ(comm->rank(), w->rank());
  EXPECT_EQ(comm->size(), w->size());
  EXPECT_EQ(comm->agree_max(w->rank()), w->size() - 1);
  const Context ctx = Context::cuda(w->rank());
  constexpr std::int64_t kN = 300001;
  ContextVector<float> d(ctx, kN);
  d.upload(random_complex<float>(kN, 100 + static_cast<std::uint64_t>(w->rank())));
  comm->allreduce_sum(d.get(), kN, ctx);
  const auto v = d.download();
  EXPECT_TRUE(same_on_every_rank(v));
  std::vector<cdouble> exact(kN);
  for (int r = 0; r < w->size(); ++r) {
    const auto u = random_complex<float>(kN, 100 + static_cast<std::uint64_t>(r));
    for (std::int64_t i = 0; i < kN; ++i) exact[static_cast<std::size_t>(i)] += cdouble(u[static_cast<std::size_t>(i)]);
  }
  EXPECT_LE(rel_error(v, exact), 1e-6);  // K − 1 additions in float
  FIELDFT_EXPECT_ALL_RANKS_OK();
}

// Coil-split CG, rank r on device r with its share, against the whole problem on each rank's own
// device: the bound of nccl_test.cpp (reduction order and the GPU spreader's atomics).
TEST(NcclOverMpi, CoilSplitCgEqualsTheWhole) {
  FIELDFT_SKIP_UNLESS_GPU_PER_RANK();
  using C = std::complex<float>;
  auto w = world();
  const Context ctx = Context::cuda(w->rank());
  auto comm = dist::nccl_over(w, w->rank());
  const SplitSense<float> p;
  const dist::Share share = dist::split(SplitSense<float>::kCoils, w->size(), w->rank());
  const auto y_whole = p.data();
  const solve::CgOptions o = cg_options(15, p.lambda());
  const auto run = [&](op::LinearOperator<float>& a, const std::vector<C>& y) {
    ContextVector<float> yv(ctx, a.codomain_size()), xv(ctx, a.domain_size());
    yv.upload(y);
    xv.upload(std::vector<C>(static_cast<std::size_t>(a.domain_size())));
    solve::cg<float>(a, yv.get(), xv.get(), nullptr, o);
    return xv.download();
  };
  auto a = dist::rank_sum<float>(p.part(ctx, share), comm);
  const auto x = run(*a, p.rows(y_whole, share));
  const auto want = run(*p.whole(ctx), y_whole);
  EXPECT_TRUE(same_on_every_rank(x));
  EXPECT_LE(rel_error(x, widen(want)), 1e-4);
  FIELDFT_EXPECT_ALL_RANKS_OK();
}

}  // namespace
}  // namespace fieldft::test
