// fieldft::dist over MPI ranks: run under `mpirun -n K` (tests/dist/CMakeLists.txt registers
// K = 1, 2, 3, label mpi; main() is mpi_main.cpp). Every rank runs every test, in the same order,
// so that the collectives inside them match; each test ends with every rank agreeing on its
// outcome. Host memory, one OpenMP thread per rank (Context::host(1)), so that every host
// reduction has one order.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstdlib>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "dist/mpi_support.hpp"
#include "dist/split_sense.hpp"
#include "fieldft/dist.hpp"
#include "fieldft/mri/field_toeplitz.hpp"
#include "fieldft/solve/cg.hpp"
#include "support/gtest_helpers.hpp"
#include "support/measures.hpp"
#include "support/random_data.hpp"

namespace fieldft::test {
namespace {

const Context kHost = Context::host(1);

TEST(MpiWorld, DescribesTheLaunch) {
  auto w = world();
  EXPECT_EQ(w, dist::mpi_world());
  EXPECT_EQ(w->engine(), dist::Engine::kMpi);
  EXPECT_EQ(w->describe(), "mpi: rank " + std::to_string(w->rank()) + " of " + std::to_string(w->size()));
  if (const char* s = std::getenv("OMPI_COMM_WORLD_SIZE")) {
    EXPECT_EQ(w->size(), std::atoi(s));
  }
  EXPECT_EQ(dist::launched_by_mpi(), w->size() > 1);
  // One node in these tests: every rank is local, and the local ranks number 0 .. size - 1.
  if (std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE")) {
    EXPECT_EQ(dist::launcher_local_size(), w->size());
    EXPECT_EQ(dist::launcher_local_rank(), w->rank());
  }
  EXPECT_TRUE(w->sums_in(kHost));
  EXPECT_EQ(w->agree_max(w->rank()), w->size() - 1);
  std::string message = w->rank() == w->size() - 1 ? "from the last rank" : std::string(18, '?');
  w->broadcast_bytes(message.data(), message.size(), w->size() - 1);
  EXPECT_EQ(message, "from the last rank");
  std::vector<std::complex<float>> v(3);
  EXPECT_TRUE(throws_error([&] { w->allreduce_sum(v.data(), -1, kHost); }, ErrorCode::kInvalidArgument));
  EXPECT_TRUE(throws_error([&] { w->broadcast_bytes(v.data(), 4, w->size()); }, ErrorCode::kInvalidArgument));
}

// gather_pieces: rank r gives r pieces (rank 0 none), piece i being i + 1 copies of the letter
// 'a' + r, to the last rank, which receives them into the ranges it names, here backwards through
// one string; the other ranks' `into` is never touched. MPI's own gather and the generic one
// (broadcast_bytes, what NCCL uses) alike. A range of the wrong size on root: every rank throws,
// naming it, and none waits.
TEST(MpiGather, EveryRanksPiecesWhereRootSays) {
  auto w = world();
  const int k = w->size(), root = k - 1;
  const auto piece = [](int r, int i) {
    return std::string(static_cast<std::size_t>(i + 1), static_cast<char>('a' + r));
  };
  std::vector<std::string> own;
  for (int i = 0; i < w->rank(); ++i) own.push_back(piece(w->rank(), i));
  std::vector<std::span<const std::byte>> mine;
  for (const auto& p : own) mine.push_back(std::as_bytes(std::span<const char>(p)));
  // Root's ranges: every rank's pieces in rank order, laid out from the END of `out` backwards.
  std::size_t total = 0;
  for (int r = 0; r < k; ++r)
    for (int i = 0; i < r; ++i) total += piece(r, i).size();
  for (const bool generic : {false, true}) {
    std::string out(total, '.'), want(total, '.');
    std::vector<std::span<std::byte>> into;
    std::size_t end = total;
    for (int r = 0; r < k; ++r)
      for (int i = 0; i < r; ++i) {
        const std::string p = piece(r, i);
        end -= p.size();
        want.replace(end, p.size(), p);
        into.push_back(std::as_writable_bytes(std::span<char>(out).subspan(end, p.size())));
      }
    if (generic) {
      w->dist::Communicator::gather_pieces(mine, into, root);
    } else {
      w->gather_pieces(mine, into, root);
    }
    EXPECT_EQ(out, w->rank() == root ? want : std::string(total, '.')) << (generic ? "generic" : "MPI");
    if (k > 1) {  // the last rank's last piece (k bytes) given a range one byte short
      into.back() = into.back().first(into.back().size() - 1);
      EXPECT_TRUE(throws_error(
          [&] {
            if (generic) {
              w->dist::Communicator::gather_pieces(mine, into, root);
            } else {
              w->gather_pieces(mine, into, root);
            }
          },
          ErrorCode::kInvalidArgument, {"rank " + std::to_string(root) + "'s piece " + std::to_string(root - 1)}))
          << (generic ? "generic" : "MPI");
    }
  }
  EXPECT_TRUE(throws_error([&] { w->gather_pieces(mine, {}, k); }, ErrorCode::kInvalidArgument));
}

// The sum over ranks of rank r's random vector (seed 100 + r): within rounding of the exact sum,
// and bit-identical on every rank. Sizes cross Open MPI's switches between algorithms.
template <class T>
void check_allreduce() {
  auto w = world();
  for (std::int64_t n : {1, 1000, 300001}) {
    auto v = random_complex<T>(n, 100 + static_cast<std::uint64_t>(w->rank()));
    w->allreduce_sum(v.data(), n, kHost);
    std::vector<cdouble> exact(static_cast<std::size_t>(n));
    for (int r = 0; r < w->size(); ++r) {
      const auto u = random_complex<T>(n, 100 + static_cast<std::uint64_t>(r));
      for (std::int64_t i = 0; i < n; ++i) exact[static_cast<std::size_t>(i)] += cdouble(u[static_cast<std::size_t>(i)]);
    }
    // K − 1 additions of T: a few units of T's rounding.
    EXPECT_LE(rel_error(v, exact), sizeof(T) == 4 ? 1e-6 : 1e-15) << "n = " << n;
    EXPECT_TRUE(same_on_every_rank(v)) << "n = " << n;
  }
}
TEST(MpiAllreduce, BitIdenticalOnEveryRankFloat) { check_allreduce<float>(); }
TEST(MpiAllreduce, BitIdenticalOnEveryRankDouble) { check_allreduce<double>(); }

// This rank's view of the coil-split problem: its coil share, the whole SENSE operator (which
// every rank builds) and rank_sum of the share's operator.
template <class T>
struct RankProblem {
  dist::CommPtr w = world();
  SplitSense<T> p;
  dist::Share share = dist::split(SplitSense<T>::kCoils, w->size(), w->rank());
  op::OperatorPtr<T> whole = p.whole(kHost);
  op::OperatorPtr<T> a = dist::rank_sum<T>(p.part(kHost, share), w);
};

// rank_sum of this rank's coil share against the whole SENSE operator.
template <class T>
void check_rank_sum_sense() {
  using C = std::complex<T>;
  const RankProblem<T> q;
  const auto& [w, p, share, whole, a] = q;
  ASSERT_EQ(a->domain_shape(), whole->domain_shape());
  ASSERT_EQ(a->codomain_size(), share.size() * p.samples());
  const auto x = random_complex<T>(a->domain_size(), 7);          // the same on every rank
  const auto y_whole = random_complex<T>(whole->codomain_size(), 8);
  const auto y = p.rows(y_whole, share);

  // Forward: this rank's rows of the whole operator's output (the same per-coil arithmetic).
  std::vector<C> ax(static_cast<std::size_t>(a->codomain_size())), ax_whole(static_cast<std::size_t>(whole->codomain_size()));
  a->apply(x.data(), ax.data());
  whole->apply(x.data(), ax_whole.data());
  const double tol = sizeof(T) == 4 ? 1e-5 : 1e-12;  // rounding of T: summation orders differ
  EXPECT_LE(rel_error(ax, widen(p.rows(ax_whole, share))), tol);

  // Adjoint and normal: the whole operator's, on every rank, bit-identical across ranks.
  std::vector<C> aty(x.size()), aty_whole(x.size()), n(x.size()), n_whole(x.size());
  a->apply_adjoint(y.data(), aty.data());
  whole->apply_adjoint(y_whole.data(), aty_whole.data());
  EXPECT_LE(rel_error(aty, widen(aty_whole)), tol);
  EXPECT_TRUE(same_on_every_rank(aty));
  a->apply_normal(x.data(), n.data());
  whole->apply_normal(x.data(), n_whole.data());
  EXPECT_LE(rel_error(n, widen(n_whole)), tol);
  EXPECT_TRUE(same_on_every_rank(n));

  // Adjointness of the stacked operator: Σ_r <A_r x, y_r> = <x, Aᴴ y>; the NUFFT's forward and
  // adjoint are transposes up to its eps (4·eps as in the battery).
  std::vector<std::complex<double>> local{inner<T, T>(std::span<const C>(ax), std::span<const C>(y))};
  w->allreduce_sum(local.data(), 1, kHost);
  const cdouble right = inner<T, T>(std::span<const C>(x), std::span<const C>(aty));
  EXPECT_LE(std::abs(local[0] - right) / (norm<T>(std::span<const C>(x)) * norm<T>(std::span<const C>(aty))),
            4 * SplitSense<T>::eps());
  FIELDFT_EXPECT_ALL_RANKS_OK();
}
TEST(MpiRankSum, CoilSplitSenseIsTheWholeFloat) { check_rank_sum_sense<float>(); }
TEST(MpiRankSum, CoilSplitSenseIsTheWholeDouble) { check_rank_sum_sense<double>(); }

// CG on the coil-split problem (each rank its coils' data and maps) against CG on the whole.
template <class T>
void check_cg() {
  using C = std::complex<T>;
  const RankProblem<T> q;
  const auto& [w, p, share, whole, a] = q;
  const auto y_whole = p.data();
  const auto y = p.rows(y_whole, share);
  const solve::CgOptions o = cg_options(15, p.lambda());
  std::vector<C> x(static_cast<std::size_t>(a->domain_size())), x_whole(x.size());
  solve::cg<T>(*a, y.data(), x.data(), nullptr, o);
  solve::cg<T>(*whole, y_whole.data(), x_whole.data(), nullptr, o);
  // Every rank holds the same iterate, bit for bit (its vectors come from the same sums).
  EXPECT_TRUE(same_on_every_rank(x));
  // Against the whole: the coil sums are added in another order (partial sums per rank, then
  // across ranks), and the Toeplitz normal's FFTW plans are chosen by timing (FFTW_MEASURE) in
  // each process: a relative change of a few units of T's rounding per normal application,
  // which CG on this system (condition number <= 11, SplitSense::lambda) carries forward
  // with modest growth: measured <= 5e-7 (float) and <= 1.3e-12 (double) with 2 and 3 ranks;
  // bounds 1e-5 and 1e-11.
  EXPECT_LE(rel_error(x, widen(x_whole)), sizeof(T) == 4 ? 1e-5 : 1e-11);

  // With weights (W = diag(w), the same rows of one whole-problem weight vector per rank).
  std::vector<C> wt(static_cast<std::size_t>(whole->codomain_size()));
  for (std::size_t j = 0; j < wt.size(); ++j) wt[j] = static_cast<T>(0.5 + (j % 5) * 0.25);
  const auto wt_share = p.rows(wt, share);
  std::fill(x.begin(), x.end(), C(0));
  std::fill(x_whole.begin(), x_whole.end(), C(0));
  solve::cg<T>(*a, y.data(), x.data(), wt_share.data(), o);
  solve::cg<T>(*whole, y_whole.data(), x_whole.data(), wt.data(), o);
  EXPECT_TRUE(same_on_every_rank(x));
  EXPECT_LE(rel_error(x, widen(x_whole)), sizeof(T) == 4 ? 1e-5 : 1e-11);
  FIELDFT_EXPECT_ALL_RANKS_OK();
}
TEST(MpiRankSum, CgOnTheSplitProblemEqualsTheWholeFloat) { check_cg<float>(); }
TEST(MpiRankSum, CgOnTheSplitProblemEqualsTheWholeDouble) { check_cg<double>(); }

// Mode (a): problem i (data scaled by i + 1) on rank i mod K, written into a zeroed volume of
// every problem's image; one allreduce_sum gives every rank all images, EXACTLY those their
// ranks computed (the other ranks add zeros): a rank's own slots are bit-identical to what it
// wrote and every slot is the same on every rank. Against all problems solved by one rank the
// images agree within rounding, not exactly: the CPU Toeplitz normal plans its FFTs by timing
// (FFTW_MEASURE), so two processes may use two FFT algorithms.
TEST(MpiModeA, ProblemsOverRanksEqualOneRank) {
  using C = std::complex<float>;
  auto w = world();
  const SplitSense<float> p;
  const auto y = p.data();
  auto a = p.whole(kHost);
  const std::int64_t voxels = a->domain_size();
  constexpr std::int64_t kProblems = 5;
  const solve::CgOptions o = cg_options(8, p.lambda());
  const auto solve_one = [&](std::int64_t i, C* x) {
    std::vector<C> yi(y);
    for (auto& v : yi) v *= static_cast<float>(i + 1);
    std::fill(x, x + voxels, C(0));
    solve::cg<float>(*a, yi.data(), x, nullptr, o);
  };
  std::vector<C> volume(static_cast<std::size_t>(voxels * kProblems));
  for (std::int64_t i = w->rank(); i < kProblems; i += w->size()) solve_one(i, volume.data() + i * voxels);
  const std::vector<C> mine(volume);
  w->allreduce_sum(volume.data(), static_cast<std::int64_t>(volume.size()), kHost);
  std::int64_t differ = 0;
  for (std::int64_t i = w->rank(); i < kProblems; i += w->size())
    differ += std::memcmp(volume.data() + i * voxels, mine.data() + i * voxels, voxels * sizeof(C)) != 0;
  EXPECT_EQ(differ, 0) << "problems of this rank changed by the assembly";
  EXPECT_TRUE(same_on_every_rank(volume));
  std::vector<C> alone(volume.size());
  for (std::int64_t i = 0; i < kProblems; ++i) solve_one(i, alone.data() + i * voxels);
  EXPECT_LE(rel_error(volume, widen(alone)), 1e-5);  // float rounding, as in check_cg (measured <= 4.3e-7)
  FIELDFT_EXPECT_ALL_RANKS_OK();
}

// One rank's bad input (rank 1, or rank 0 alone: maps of the wrong shape) stops every rank at
// set-up with that rank's error, instead of leaving the others in a collective (the test has a
// timeout in CTest).
TEST(MpiErrors, BadInputOnOneRankStopsEveryRank) {
  auto w = world();
  const int bad = w->size() > 1 ? 1 : 0;
  const SplitSense<float> p;
  const dist::Share share = dist::split(SplitSense<float>::kCoils, w->size(), w->rank());
  try {
    dist::agree_on_errors(w, [&] {
      if (w->rank() == bad) {
        auto enc = std::make_shared<const mri::Encoding<float>>(std::vector<std::int64_t>{16, 12},
                                                                std::vector<float>{0.f}, std::vector<float>{0.f});
        std::vector<std::complex<float>> maps(10);
        mri::sense<float>(enc, maps, {16, 12, 1}, kHost, {});  // 10 values for a 16x12x1 shape
      }
      dist::rank_sum<float>(p.part(kHost, share), w);
    });
    ADD_FAILURE() << "no error on rank " << w->rank();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kShapeMismatch) << e.what();
    EXPECT_NE(std::string(e.what()).find("rank " + std::to_string(bad) + " of " + std::to_string(w->size())),
              std::string::npos)
        << e.what();
  }
  FIELDFT_EXPECT_ALL_RANKS_OK();
}

// The field-corrected Toeplitz kernels split over the ranks (op::NormalShare; kernel l on rank
// l mod K, broadcast from there) against the same operator built alone on each rank. The kernels
// a rank receives were computed in another process, whose FFTW_MEASURE plans may differ from
// this one's (plans chosen by timing): the same values up to a few units of T's rounding in the
// kernels, hence in the normal; bounds 1e-5 (float) and 1e-12 (double) relative.
template <class T>
double shared_normal_tolerance() {
  return sizeof(T) == 4 ? 1e-5 : 1e-12;
}

template <class T>
op::NormalShare world_share(const Context& ctx) {
  auto w = world();
  op::NormalShare s;
  s.rank = w->rank();
  s.size = w->size();
  s.broadcast = [w, ctx](void* data, std::size_t bytes, int root) { w->broadcast(data, bytes, root, ctx); };
  s.agree_max = [w](int v) { return w->agree_max(v); };
  return s;
}

// The kernels this rank builds with a share of K ranks: those l < L' with l mod K = rank.
int own_kernels(int segments, int rank, int size) {
  int k = 0;
  for (int l = 0; l < segments; ++l) k += l % size == rank;
  return k;
}

template <class T>
void check_shared_field_normal() {
  using C = std::complex<T>;
  auto w = world();
  const FieldSplitSense<T> p;
  const dist::Share share = dist::split(FieldSplitSense<T>::kCoils, w->size(), w->rank());
  const auto maps = p.maps(share);
  mri::FieldToeplitzOptions o;
  o.eps = FieldSplitSense<T>::options(1).eps;
  mri::FieldToeplitzNormal<T> alone(p.encoding(), kHost, maps, share.size(), {}, o);
  o.share = world_share<T>(kHost);
  mri::FieldToeplitzNormal<T> shared(p.encoding(), kHost, maps, share.size(), {}, o);
  ASSERT_EQ(shared.segments(), alone.segments());
  EXPECT_GE(alone.segments(), 2);  // several kernels to split
  EXPECT_EQ(alone.kernels_built(), alone.segments());
  EXPECT_EQ(shared.kernels_built(), own_kernels(shared.segments(), w->rank(), w->size()));
  const auto x = random_complex<T>(alone.domain_size(), 11);
  std::vector<C> za(x.size()), zs(x.size());
  alone.apply(x.data(), za.data());
  shared.apply(x.data(), zs.data());
  EXPECT_LE(rel_error(zs, widen(za)), shared_normal_tolerance<T>());
  FIELDFT_EXPECT_ALL_RANKS_OK();
}
TEST(MpiSharedNormal, KernelsSplitOverRanksGiveTheUnsharedNormalFloat) { check_shared_field_normal<float>(); }
TEST(MpiSharedNormal, KernelsSplitOverRanksGiveTheUnsharedNormalDouble) { check_shared_field_normal<double>(); }

// rank_sum's prepare_normal shares by itself: the coil-split field-corrected SENSE normal, against
// the same parts prepared alone before rank_sum wraps them (nothing left to share then).
template <class T>
void check_rank_sum_shares() {
  using C = std::complex<T>;
  auto w = world();
  const FieldSplitSense<T> p;
  const dist::Share share = dist::split(FieldSplitSense<T>::kCoils, w->size(), w->rank());
  auto part = p.part(kHost, share);
  EXPECT_TRUE(part->can_share_normal());
  auto shared = dist::rank_sum<T>(part, w);
  shared->prepare_normal();
  EXPECT_FALSE(part->can_share_normal());  // built
  auto alone_part = p.part(kHost, share);
  alone_part->prepare_normal();
  auto alone = dist::rank_sum<T>(alone_part, w);
  const auto x = random_complex<T>(shared->domain_size(), 12);
  std::vector<C> zs(x.size()), za(x.size());
  shared->apply_normal(x.data(), zs.data());
  alone->apply_normal(x.data(), za.data());
  EXPECT_LE(rel_error(zs, widen(za)), shared_normal_tolerance<T>());
  EXPECT_TRUE(same_on_every_rank(zs));  // one allreduce: every rank ends with the same image
  FIELDFT_EXPECT_ALL_RANKS_OK();
}
TEST(MpiSharedNormal, RankSumSharesTheCoilSplitKernelsFloat) { check_rank_sum_shares<float>(); }
TEST(MpiSharedNormal, RankSumSharesTheCoilSplitKernelsDouble) { check_rank_sum_shares<double>(); }

// Parts of different problems (another trajectory per rank): the fingerprints differ, so every
// rank builds all its kernels and nothing wrong is shared.
TEST(MpiSharedNormal, DifferentProblemsBuildTheirOwnKernels) {
  auto w = world();
  const FieldSplitSense<double> p(1.0 - 0.05 * w->rank());
  const dist::Share share = dist::split(FieldSplitSense<double>::kCoils, w->size(), w->rank());
  mri::FieldToeplitzOptions o;
  o.eps = 1e-9;
  o.share = world_share<double>(kHost);
  const auto maps = p.maps(share);
  mri::FieldToeplitzNormal<double> n(p.encoding(), kHost, maps, share.size(), {}, o);
  EXPECT_EQ(n.kernels_built(), n.segments());
  FIELDFT_EXPECT_ALL_RANKS_OK();
}

// A share that disagrees with the ranks taking part (its size one more than the communicator's):
// kShapeMismatch on every rank, naming the sizes, and no rank left waiting.
TEST(MpiSharedNormal, ShareOfTheWrongSizeFailsOnEveryRank) {
  auto w = world();
  const FieldSplitSense<float> p;
  const dist::Share share = dist::split(FieldSplitSense<float>::kCoils, w->size(), w->rank());
  mri::FieldToeplitzOptions o;
  o.share = world_share<float>(kHost);
  o.share.size = w->size() + 1;
  const auto maps = p.maps(share);
  try {
    mri::FieldToeplitzNormal<float> n(p.encoding(), kHost, maps, share.size(), {}, o);
    ADD_FAILURE() << "no error on rank " << w->rank();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kShapeMismatch) << e.what();
    EXPECT_NE(std::string(e.what()).find("of " + std::to_string(w->size() + 1)), std::string::npos) << e.what();
  }
  // A share that is wrong in itself (size 0) is kInvalidArgument before any collective, here the
  // same on every rank.
  o.share.size = 0;
  EXPECT_TRUE(throws_error([&] { mri::FieldToeplitzNormal<float>(p.encoding(), kHost, maps, share.size(), {}, o); },
                           ErrorCode::kInvalidArgument));
  FIELDFT_EXPECT_ALL_RANKS_OK();
}

}  // namespace
}  // namespace fieldft::test
