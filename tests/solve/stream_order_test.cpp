// On a device, pwls_pcg, fista (with L given) and admm without reports only enqueue their work:
// with the stream held, each call returns before the hold is released (support/stream_order.hpp),
// and the result, once the stream has run, equals that of an unheld call (the solvers are
// deterministic). The operators are device-resident (op::diag, op::identity): nothing in them
// synchronises. Nothing to test on the host.
#include "support/battery.hpp"

#if FIELDFT_TEST_BACKEND == 2

#include <complex>
#include <functional>
#include <vector>

#include "fieldft/op/combinators.hpp"
#include "fieldft/solve/admm.hpp"
#include "fieldft/solve/fista.hpp"
#include "fieldft/solve/pwls_pcg.hpp"
#include "support/context_vector.hpp"
#include "support/stream_order.hpp"

namespace fieldft::test {
namespace {

template <class T>
class SolverStreamOrder : public ::testing::Test {
 protected:
  void SetUp() override { FIELDFT_TEST_SKIP_UNLESS_AVAILABLE(kBackend); }
};
using Precisions = ::testing::Types<float, double>;
TYPED_TEST_SUITE(SolverStreamOrder, Precisions);

TYPED_TEST(SolverStreamOrder, CallsReturnBeforeTheWork) {
  using T = TypeParam;
  using C = std::complex<T>;
  const Context c = test_context();
  const std::int64_t n = 1 << 12;
  std::vector<C> d(static_cast<std::size_t>(n));
  const auto ph = random_complex<T>(n, 501);
  for (std::size_t k = 0; k < d.size(); ++k) d[k] = std::polar(static_cast<T>(1 + 0.5 * (k % 3)), static_cast<T>(3 * ph[k].real()));
  auto a = op::diag<T>(d, {n}, c);
  auto r = op::identity<T>({n}, c);
  ContextVector<T> y(c, n), x(c, n);
  y.upload(random_complex<T>(n, 502));

  solve::PwlsOptions po;
  po.beta = 0.5;
  po.potential = solve::Potential::kHyperbolic;
  po.delta = 0.1;
  po.max_iterations = 10;
  solve::FistaOptions fo;
  fo.lambda = 0.2;
  fo.lipschitz = 4;  // max |d|² = 2² (a power iteration would synchronise once)
  fo.max_iterations = 10;
  solve::AdmmOptions ao;
  ao.lambda = 0.2;
  ao.max_iterations = 10;
  const std::vector<std::pair<const char*, std::function<void()>>> calls = {
      {"pwls_pcg", [&] { solve::pwls_pcg<T>(*a, y.get(), x.get(), nullptr, *r, nullptr, po); }},
      {"fista", [&] { solve::fista<T>(*a, y.get(), x.get(), nullptr, nullptr, fo); }},
      {"admm", [&] { solve::admm<T>(*a, y.get(), x.get(), nullptr, *r, ao); }},
  };
  for (const auto& [name, call] : calls) {
    SCOPED_TRACE(name);
    // Unheld first (also loads the kernels, whose first launch may wait for the context).
    x.upload(std::vector<C>(static_cast<std::size_t>(n)));
    call();
    const auto want = x.download();
    x.upload(std::vector<C>(static_cast<std::size_t>(n)));
    EXPECT_TRUE(returns_before_the_work(c, call)) << name << " waited for the stream";
    EXPECT_EQ(x.download(), want);
  }
}

}  // namespace
}  // namespace fieldft::test

#endif  // FIELDFT_TEST_BACKEND == 2
