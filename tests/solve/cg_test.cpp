// solve::cg and solve::cg_normal (fieldft/solve/cg.hpp) on the backend under test
// (FIELDFT_TEST_BACKEND): the least-squares, Tikhonov and weighted solutions of small dense
// problems against direct solves in double; the objective non-increasing over iterations; the
// callback and tolerance; a small radial MRI reconstruction with a known truth (data from the
// exact DFT, reconstruction with the NUFFT and with the DFT); bad input; and, on a device, that a
// cg() call without residuals only enqueues (stream order).
#include "fieldft/solve/cg.hpp"

#include <cstdio>
#include <cmath>
#include <limits>
#include <memory>
#include <numbers>
#include <string>
#include <type_traits>
#include <vector>

#include "fieldft/context.hpp"
#include "fieldft/mri/encoding.hpp"
#include "fieldft/op/combinators.hpp"
#include "support/battery.hpp"
#include "support/context_vector.hpp"
#include "support/dense_operator.hpp"
#include "support/stream_order.hpp"

#if FIELDFT_TEST_BACKEND == 2
#include <cuda_runtime.h>
#endif

namespace fieldft::test {
namespace {

using op::Shape;

// The small least-squares problem of tests 1-4: A 20x8 (full column rank), y inconsistent.
struct Problem {
  Mat a = random_mat(20, 8, 101);
  std::vector<cdouble> y = random_complex<double>(20, 102);
  std::vector<double> w = [] {
    std::vector<double> w(20);
    const auto r = random_complex<double>(20, 103);
    for (std::size_t i = 0; i < w.size(); ++i) w[i] = 1.05 + r[i].real();  // in [0.05, 2.05)
    return w;
  }();
};

// The direct solution of (AᴴWA + λI) x = AᴴWy, and the condition number of that matrix.
std::vector<cdouble> direct(const Problem& p, const std::vector<double>* w, double lambda, double* kappa) {
  const Mat ah = herm(p.a);
  const std::vector<double> ones(p.y.size(), 1.0);
  const auto& wt = w ? *w : ones;
  const Mat n = add_identity(ah * scale_rows(wt, p.a), lambda);
  std::vector<cdouble> wy(p.y.size());
  for (std::size_t i = 0; i < wy.size(); ++i) wy[i] = wt[i] * p.y[i];
  if (kappa) *kappa = condition(n);
  return direct_solve(n, mul(ah, wy));
}

// Runs cg on the problem in the test context from x0 = 0; returns x on the host.
template <class T>
std::vector<std::complex<T>> run_cg(const Problem& p, const std::vector<double>* w, const solve::CgOptions& o,
                                    solve::CgResult* result = nullptr) {
  const Context c = test_context();
  Dense<T> a(p.a, c);
  ContextVector<T> y(c, 20), x(c, 8), wv(c, 20);
  y.upload(narrow<T>(p.y));
  x.upload(std::vector<std::complex<T>>(8));
  if (w) {
    std::vector<std::complex<T>> wc(w->size());
    for (std::size_t i = 0; i < wc.size(); ++i) wc[i] = std::complex<T>(static_cast<T>((*w)[i]));
    wv.upload(wc);
  }
  const auto r = solve::cg<T>(a, y.get(), x.get(), w ? wv.get() : nullptr, o);
  if (result) *result = r;
  return x.download();
}

// The tolerance of a converged CG solution against the exact one: the forward error of a
// backward-stable solve of the normal equations, κ(M)·u, with a factor 100 for the accumulation
// over n = 8 dimensions and the iterations.
template <class T>
double converged_tolerance(double kappa) {
  return 100 * kappa * unit_roundoff<T>();
}

template <class T>
class Cg : public ::testing::Test {
 protected:
  void SetUp() override { FIELDFT_TEST_SKIP_UNLESS_AVAILABLE(kBackend); }
};
using Precisions = ::testing::Types<float, double>;
TYPED_TEST_SUITE(Cg, Precisions);

// (1) The least-squares solution (AᴴA)⁻¹Aᴴy. 30 iterations on 8 unknowns: converged.
TYPED_TEST(Cg, LeastSquares) {
  using T = TypeParam;
  Problem p;
  double kappa = 0;
  const auto want = direct(p, nullptr, 0, &kappa);
  ASSERT_LT(kappa, 1e3);  // a well-posed test problem
  solve::CgOptions o;
  o.max_iterations = 30;
  const auto got = run_cg<T>(p, nullptr, o);
  EXPECT_LE(rel_diff(got, want), converged_tolerance<T>(kappa)) << "kappa = " << kappa;
}

// (2) Tikhonov: (AᴴA + λI)⁻¹Aᴴy, and cg_normal on N = AᴴA gives the same.
TYPED_TEST(Cg, Tikhonov) {
  using T = TypeParam;
  Problem p;
  const double lambda = 2.5;
  double kappa = 0;
  const auto want = direct(p, nullptr, lambda, &kappa);
  solve::CgOptions o;
  o.lambda = lambda;
  const auto got = run_cg<T>(p, nullptr, o);
  EXPECT_LE(rel_diff(got, want), converged_tolerance<T>(kappa));
  // And it differs from the unregularised solution (the test would not see a λ ignored).
  EXPECT_GT(rel_diff(got, direct(p, nullptr, 0, nullptr)), 1e-3);

  const Context c = test_context();
  const Mat ah = herm(p.a);
  Dense<T> n(ah * p.a, c);
  ContextVector<T> b(c, 8), x(c, 8);
  b.upload(narrow<T>(mul(ah, p.y)));
  x.upload(std::vector<std::complex<T>>(8));
  solve::cg_normal<T>(n, b.get(), x.get(), o);
  EXPECT_LE(rel_diff(x.download(), want), converged_tolerance<T>(kappa));
}

// (3) Weights: (AᴴWA + λI)⁻¹AᴴWy, with and without λ; W = 1 gives the unweighted solution.
TYPED_TEST(Cg, Weighted) {
  using T = TypeParam;
  Problem p;
  for (double lambda : {0.0, 0.7}) {
    SCOPED_TRACE(lambda);
    double kappa = 0;
    const auto want = direct(p, &p.w, lambda, &kappa);
    solve::CgOptions o;
    o.lambda = lambda;
    const auto got = run_cg<T>(p, &p.w, o);
    EXPECT_LE(rel_diff(got, want), converged_tolerance<T>(kappa));
    EXPECT_GT(rel_diff(got, direct(p, nullptr, lambda, nullptr)), 1e-3);  // the weights matter
  }
  const std::vector<double> ones(20, 1.0);
  double kappa = 0;
  const auto want = direct(p, nullptr, 0, &kappa);
  EXPECT_LE(rel_diff(run_cg<T>(p, &ones, {}), want), converged_tolerance<T>(kappa));
}

// (4) The objective ‖W^½(Ax − y)‖² + λ‖x‖² never increases from one iterate to the next (CG
// minimises it over growing Krylov spaces). The iterates are those of runs with max_iterations =
// 1, 2, …: CG is deterministic, so run k ends at the k-th iterate of a longer run. Rounding may
// raise a converged objective by a few ulps of its value.
TYPED_TEST(Cg, ObjectiveNonIncreasing) {
  using T = TypeParam;
  Problem p;
  const double lambda = 0.3;
  const auto objective = [&](const std::vector<std::complex<T>>& x) {
    std::vector<cdouble> xd(x.begin(), x.end());
    const auto r = mul(p.a, xd);
    double f = 0;
    for (std::size_t i = 0; i < r.size(); ++i) f += p.w[i] * std::norm(r[i] - p.y[i]);
    return f + lambda * std::pow(vnorm(xd), 2);
  };
  double previous = objective(std::vector<std::complex<T>>(8));
  for (int k = 1; k <= 12; ++k) {
    solve::CgOptions o;
    o.max_iterations = k;
    o.lambda = lambda;
    const double f = objective(run_cg<T>(p, &p.w, o));
    EXPECT_LE(f, previous * (1 + 100 * unit_roundoff<T>())) << "iteration " << k;
    previous = f;
  }
}

// The callback sees every iteration with residuals that reach the tolerance; returning false
// stops; a tolerance stops early and reports convergence; no residual without either.
TYPED_TEST(Cg, CallbackAndTolerance) {
  using T = TypeParam;
  Problem p;
  std::vector<solve::CgReport> reports;
  solve::CgOptions o;
  o.max_iterations = 8;
  o.callback = [&](const solve::CgReport& r) {
    reports.push_back(r);
    return true;
  };
  solve::CgResult res;
  run_cg<T>(p, nullptr, o, &res);
  ASSERT_EQ(reports.size(), 8u);
  for (int k = 0; k < 8; ++k) {
    EXPECT_EQ(reports[static_cast<std::size_t>(k)].iteration, k + 1);
    EXPECT_GE(reports[static_cast<std::size_t>(k)].seconds, 0);
  }
  double kappa = 0;
  direct(p, nullptr, 0, &kappa);
  EXPECT_LT(reports.back().residual, converged_tolerance<T>(kappa));  // n = 8 steps: converged
  EXPECT_EQ(res.iterations, 8);
  EXPECT_EQ(res.residual, reports.back().residual);

  reports.clear();
  o.max_iterations = 30;
  o.callback = [&](const solve::CgReport& r) {
    reports.push_back(r);
    return r.iteration < 3;
  };
  run_cg<T>(p, nullptr, o, &res);
  EXPECT_EQ(reports.size(), 3u);
  EXPECT_EQ(res.iterations, 3);
  EXPECT_TRUE(res.stopped);

  solve::CgOptions t;
  t.max_iterations = 30;
  t.tolerance = std::is_same_v<T, float> ? 1e-4 : 1e-10;
  run_cg<T>(p, nullptr, t, &res);
  EXPECT_TRUE(res.converged);
  EXPECT_LE(res.residual, t.tolerance);
  EXPECT_LT(res.iterations, 30);

  run_cg<T>(p, nullptr, solve::CgOptions{}, &res);
  EXPECT_EQ(res.iterations, 30);
  EXPECT_TRUE(std::isnan(res.residual));
  EXPECT_FALSE(res.converged);
}

// check_every = B: the residuals come back B at a time, yet the same reports arrive in order and
// x is the same to the bit (the iterations do the same arithmetic); the tolerance and a callback's
// stop act at the end of their batch, and iterations / residual describe the x returned. B = 1,
// 3 (batches of 3, 3, 2 over 8 iterations) and 8 (one batch).
TYPED_TEST(Cg, ResidualsInBatches) {
  using T = TypeParam;
  Problem p;
  const auto solve_with = [&](int every, double tolerance, int stop_after, std::vector<solve::CgReport>* reports,
                              solve::CgResult* res) {
    solve::CgOptions o;
    o.max_iterations = 8;
    o.check_every = every;
    o.tolerance = tolerance;
    o.lambda = 0.1;
    o.callback = [=](const solve::CgReport& r) {
      reports->push_back(r);
      return stop_after == 0 || r.iteration < stop_after;
    };
    return run_cg<T>(p, &p.w, o, res);
  };
  std::vector<solve::CgReport> one, batched;
  solve::CgResult res1, res;
  const auto x1 = solve_with(1, 0, 0, &one, &res1);
  ASSERT_EQ(one.size(), 8u);
  for (const int every : {3, 8}) {
    batched.clear();
    const auto x = solve_with(every, 0, 0, &batched, &res);
    EXPECT_EQ(x, x1) << "check_every " << every;
    ASSERT_EQ(batched.size(), one.size()) << "check_every " << every;
    for (std::size_t i = 0; i < one.size(); ++i) {
      EXPECT_EQ(batched[i].iteration, one[i].iteration);
      EXPECT_EQ(batched[i].residual, one[i].residual);
    }
    EXPECT_EQ(res.iterations, 8);
    EXPECT_EQ(res.residual, one.back().residual);
  }

  // The tolerance between iterations 4 and 5's residuals: batches of 3 stop after iteration 6
  // (reporting 5 and 6 too), batches of 1 after 5.
  ASSERT_GT(one[3].residual, one[4].residual);
  const double tol = std::sqrt(one[3].residual * one[4].residual);
  batched.clear();
  solve_with(1, tol, 0, &batched, &res);
  EXPECT_EQ(res.iterations, 5);
  EXPECT_TRUE(res.converged);
  EXPECT_EQ(batched.size(), 5u);
  batched.clear();
  solve_with(3, tol, 0, &batched, &res);
  EXPECT_EQ(res.iterations, 6);
  EXPECT_TRUE(res.converged);
  EXPECT_EQ(batched.size(), 6u);
  EXPECT_EQ(res.residual, one[5].residual);

  // A callback stopping at iteration 4: no later report, x stops at its batch's end (6).
  batched.clear();
  solve_with(3, 0, 4, &batched, &res);
  EXPECT_TRUE(res.stopped);
  EXPECT_EQ(batched.size(), 4u);
  EXPECT_EQ(res.iterations, 6);
  EXPECT_EQ(res.residual, one[5].residual);

  // Without a tolerance or a callback, check_every changes nothing (no residual at all).
  solve::CgOptions quiet;
  quiet.max_iterations = 8;
  quiet.lambda = 0.1;
  quiet.check_every = 5;
  EXPECT_EQ(run_cg<T>(p, &p.w, quiet, &res), x1);
  EXPECT_TRUE(std::isnan(res.residual));
}

// (5) A small MRI reconstruction with a known truth. Image 32x32: ellipses of different complex
// values on a smooth phase. Trajectory: 96 radial spokes of 64 samples, each spoke running to
// the edge of the k-space SQUARE [-16, 16]² (not the inscribed disc), so every Cartesian frequency
// of the image is covered: sample spacing along a spoke <= 2·16√2/64 = 0.71 and between spokes at
// the corners <= 16√2·π/96 = 0.74, both below the Nyquist spacing 1 of a unit field of view; the
// model is then well posed. Data: the exact DftEncoding (not the NUFFT: no inverse crime), noiseless.
// Reconstruction: CG, 30 iterations, λ = 1e-4·M (AᴴA has mean eigenvalue M, the sample count, so
// the Tikhonov bias λ/(σ² + λ) is ~1e-4 on components of average sampling). The NRMSE bound 2e-3
// (far below the brief's 0.05) leaves a factor 20 for the components sampled less than average
// (the radial density falls towards the edge of k-space) and for those that unpreconditioned CG
// has not converged in 30 iterations; the NUFFT model error (eps) is far below it. NUFFT- and DFT-based CG solve the same problem, so they agree to a small multiple
// of the NUFFT eps amplified by the iteration (bound: 1e-3 in float, 1e-5 in double).
TYPED_TEST(Cg, RadialMriReconstruction) {
  using T = TypeParam;
  const Context c = test_context();
  const std::int64_t nx = 32;
  const int spokes = 96, readout = 64;
  std::vector<T> kx, ky;
  for (int s = 0; s < spokes; ++s) {
    const double th = std::numbers::pi * s / spokes;
    const double reach = (nx / 2.0) / std::max(std::abs(std::cos(th)), std::abs(std::sin(th)));
    for (int j = 0; j < readout; ++j) {
      const double t = (j - readout / 2) / (readout / 2.0);  // [-1, 1)
      kx.push_back(static_cast<T>(t * reach * std::cos(th)));
      ky.push_back(static_cast<T>(t * reach * std::sin(th)));
    }
  }
  const std::vector<std::int64_t> grid{nx, nx};
  auto enc = std::make_shared<const mri::Encoding<T>>(std::span<const std::int64_t>(grid), kx, ky);
  const std::int64_t m = enc->num_samples(), nvox = enc->num_voxels();

  std::vector<cdouble> truth(static_cast<std::size_t>(nvox));
  for (std::int64_t iy = 0; iy < nx; ++iy)
    for (std::int64_t ix = 0; ix < nx; ++ix) {
      const double x = (ix - nx / 2) / double(nx), y = (iy - nx / 2) / double(nx);
      const auto in = [&](double cx, double cy, double ax, double ay) {
        return std::pow((x - cx) / ax, 2) + std::pow((y - cy) / ay, 2) <= 1;
      };
      double mag = 0;
      if (in(0, 0, 0.42, 0.35)) mag = 1;
      if (in(-0.12, 0.05, 0.12, 0.18)) mag = 0.4;
      if (in(0.15, -0.08, 0.08, 0.08)) mag = 1.6;
      truth[static_cast<std::size_t>(ix + nx * iy)] = mag * std::polar(1.0, 0.8 * x - 0.5 * y);
    }

  mri::DftEncoding<T> dft(enc, c);
  mri::NufftEncodingOptions no;
  no.eps = std::is_same_v<T, float> ? 1e-5 : 1e-9;
  mri::NufftEncoding<T> nufft(enc, c, no);
  ContextVector<T> image(c, nvox), y(c, m), x(c, nvox);
  image.upload(narrow<T>(truth));
  dft.apply(image.get(), y.get());

  solve::CgOptions o;
  o.max_iterations = 30;
  o.lambda = 1e-4 * static_cast<double>(m);
  const auto recon = [&](op::LinearOperator<T>& a) {
    x.upload(std::vector<std::complex<T>>(static_cast<std::size_t>(nvox)));
    solve::cg<T>(a, y.get(), x.get(), nullptr, o);
    return x.download();
  };
  const auto with_nufft = recon(nufft);
  const auto with_dft = recon(dft);
  const double nrmse_nufft = rel_diff(with_nufft, truth), nrmse_dft = rel_diff(with_dft, truth);
  EXPECT_LT(nrmse_nufft, 2e-3);
  EXPECT_LT(nrmse_dft, 2e-3);
  const std::vector<cdouble> dft_d(with_dft.begin(), with_dft.end());
  const double agree = rel_diff(with_nufft, dft_d);
  EXPECT_LT(agree, (std::is_same_v<T, float> ? 1e-3 : 1e-5));
  std::printf("NRMSE nufft %.3g dft %.3g, nufft vs dft %.3g\n", nrmse_nufft, nrmse_dft, agree);
}

// (6) Bad input: clear errors naming what was expected.
TYPED_TEST(Cg, BadInput) {
  using T = TypeParam;
  using C = std::complex<T>;
  Problem p;
  const Context c = test_context();
  Dense<T> a(p.a, c);
  ContextVector<T> y(c, 20), x(c, 8), w(c, 20);
  y.upload(narrow<T>(p.y));
  x.upload(std::vector<C>(8));
  w.upload(std::vector<C>(20, C(1)));
  const auto call = [&](solve::CgOptions o, const C* yy, C* xx, const C* ww) {
    return [&a, o, yy, xx, ww] { (void)solve::cg<T>(a, yy, xx, ww, o); };
  };
  solve::CgOptions o;
  o.max_iterations = 0;
  EXPECT_TRUE(throws_error(call(o, y.get(), x.get(), nullptr), ErrorCode::kInvalidArgument, {"max_iterations", ">= 1"}));
  o = {};
  o.lambda = -1;
  EXPECT_TRUE(throws_error(call(o, y.get(), x.get(), nullptr), ErrorCode::kInvalidArgument, {"lambda", ">= 0"}));
  o.lambda = std::numeric_limits<double>::quiet_NaN();
  EXPECT_TRUE(throws_error(call(o, y.get(), x.get(), nullptr), ErrorCode::kInvalidArgument, {"lambda"}));
  o = {};
  o.check_every = 0;
  EXPECT_TRUE(throws_error(call(o, y.get(), x.get(), nullptr), ErrorCode::kInvalidArgument, {"check_every", ">= 1"}));
  o = {};
  o.tolerance = std::numeric_limits<double>::quiet_NaN();
  EXPECT_TRUE(throws_error(call(o, y.get(), x.get(), nullptr), ErrorCode::kInvalidArgument, {"tolerance"}));
  o = {};
  EXPECT_TRUE(throws_error(call(o, nullptr, x.get(), nullptr), ErrorCode::kInvalidArgument, {"y", "null"}));
  EXPECT_TRUE(throws_error(call(o, y.get(), nullptr, nullptr), ErrorCode::kInvalidArgument, {"x", "null"}));
  EXPECT_TRUE(throws_error([&] { (void)solve::cg_normal<T>(a, y.get(), x.get(), o); }, ErrorCode::kShapeMismatch,
                           {"square"}));

  // Non-finite data and bad weights. On the host they are checked up front; on a device only
  // through the residual, which needs a tolerance or a callback.
  auto bad_y = narrow<T>(p.y);
  bad_y[5] = C(std::numeric_limits<T>::quiet_NaN());
  ContextVector<T> yn(c, 20);
  yn.upload(bad_y);
  o.tolerance = 1e-6;
  EXPECT_TRUE(throws_error(call(o, yn.get(), x.get(), nullptr), ErrorCode::kNonFinite, {"finite"}));
  std::vector<C> nan_w(20, C(1));
  nan_w[3] = C(std::numeric_limits<T>::infinity());
  w.upload(nan_w);
  EXPECT_TRUE(throws_error(call(o, y.get(), x.get(), w.get()),
                           c.is_host() ? ErrorCode::kInvalidArgument : ErrorCode::kNonFinite, {"finite"}));
  if (c.is_host()) {
    std::vector<C> neg_w(20, C(1));
    neg_w[7] = C(-0.5);
    w.upload(neg_w);
    EXPECT_TRUE(throws_error(call({}, y.get(), x.get(), w.get()), ErrorCode::kInvalidArgument, {"weights[7]", ">= 0"}));
    neg_w[7] = C(1, 1);
    w.upload(neg_w);
    EXPECT_TRUE(throws_error(call({}, y.get(), x.get(), w.get()), ErrorCode::kInvalidArgument, {"weights[7]", "imaginary"}));
    x.upload(std::vector<C>(8, C(std::numeric_limits<T>::quiet_NaN())));
    EXPECT_TRUE(throws_error(call({}, y.get(), x.get(), nullptr), ErrorCode::kNonFinite, {"initial guess"}));
  }
}

#if FIELDFT_TEST_BACKEND == 2

// (7) On a device, cg() with tolerance 0 and no callback only enqueues: with the stream held by a
// host function waiting for a flag, it returns before the flag is released. A watchdog releases
// the flag after 20 s so that a call that synchronises fails the test instead of hanging it. The
// operator is a diagonal d with |d| in {1, 1.5, 2} and weights in {1, 2}: (W|d|² + λ) has at most
// 6 distinct eigenvalues, so 30 CG steps reach the exact solution x = conj(d) w y / (w|d|² + λ).
TYPED_TEST(Cg, DeviceCallReturnsBeforeTheWork) {
  using T = TypeParam;
  using C = std::complex<T>;
  const Context c = test_context();
  const std::int64_t n = 1 << 12;
  const double lambda = 0.25;
  std::vector<C> d(n), wv(n);
  const auto ph = random_complex<T>(n, 301);
  for (std::int64_t i = 0; i < n; ++i) {
    const auto k = static_cast<std::size_t>(i);
    d[k] = std::polar(static_cast<T>(1 + 0.5 * (i % 3)), static_cast<T>(3 * ph[k].real()));
    wv[k] = C(static_cast<T>(1 + (i / 3) % 2));
  }
  auto a = op::diag<T>(d, {n}, c);
  const auto yh = random_complex<T>(n, 302);
  ContextVector<T> y(c, n), x(c, n), w(c, n);
  y.upload(yh);
  w.upload(wv);
  solve::CgOptions o;
  o.lambda = lambda;
  const auto both = [&] {
    ContextVector<T>::write_to(c, std::vector<C>(static_cast<std::size_t>(n)), x.get());
    solve::cg<T>(*a, y.get(), x.get(), nullptr, o);
    solve::cg<T>(*a, y.get(), x.get(), w.get(), o);  // warm start from the unweighted solution
  };
  // A warm-up first: CUDA loads modules lazily, and a kernel's first launch may wait for the
  // context -- the runtime's once-per-process cost, not a synchronisation of cg().
  both();
  c.synchronize();
  // Stage x = 0 before holding the stream (upload synchronises).
  x.upload(std::vector<C>(static_cast<std::size_t>(n)));

  const bool returned_first = returns_before_the_work(c, [&] {
    solve::cg<T>(*a, y.get(), x.get(), nullptr, o);
    solve::cg<T>(*a, y.get(), x.get(), w.get(), o);
  });
  EXPECT_TRUE(returned_first) << "cg() waited for the stream";
  const auto xs = x.download();
  std::vector<cdouble> want(static_cast<std::size_t>(n));
  for (std::size_t k = 0; k < want.size(); ++k) {
    const double wk = wv[k].real();
    want[k] = std::conj(cdouble(d[k])) * wk * cdouble(yh[k]) / (wk * std::norm(cdouble(d[k])) + lambda);
  }
  EXPECT_LE(rel_diff(xs, want), (std::is_same_v<T, float> ? 1e-4 : 1e-10));
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

#endif  // FIELDFT_TEST_BACKEND == 2

}  // namespace
}  // namespace fieldft::test
