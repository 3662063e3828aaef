// The SENSE normal operator AᴴA through the operator layer, against the same built by hand
// (docs/benchmarks.md, "Operator layer"). Not a test.
//
// Problem (BENCHMARKS.md, R1 without Toeplitz): a 2D N² image (default 256²), C coils (32),
// a spiral of 64 arms × 1024 samples (65,536 per coil) out to |k| = N/2 cycles/FOV, smooth
// synthetic coil maps, float, eps 1e-3. A = F_C ∘ S with S = diag_expand(coil maps) and F_C one
// NufftEncoding with batch C (one type 2 / type 1 transform over all coils), built by mri::sense.
//   operator  A->apply_normal(x, z)
//   by hand   two nufft::Plan (type 2 isign -1, type 1 isign +1, ntransf C) + VectorOps
//             expand_mul / conj_mul_sum: z = Sᴴ F1 F2 S x
// Times: CUDA events around `reps` applications after a warm-up, median and min (ms). The
// relative difference of the two results is printed too (they must agree to float rounding).
// Host synchronisations per CG iteration: the stream is held by a host function that waits for
// a flag; one CG iteration (normal operator, two dots left on the device, device-side step
// sizes, three axpby) is enqueued; the enqueue must finish while the stream is still held
// (else something inside synchronised: the bench reports it and exits non-zero).
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <numbers>
#include <string>
#include <thread>
#include <vector>

#include "fieldft/context.hpp"
#include "fieldft/mri/encoding.hpp"
#include "fieldft/mri/sense.hpp"
#include "fieldft/mri/simulate.hpp"
#include "fieldft/nufft.hpp"
#include "fieldft/op/combinators.hpp"
#include "fieldft/op/vector_ops.hpp"

namespace {

using namespace fieldft;
using cfloat = std::complex<float>;

#define CHECK_CUDA(call)                                                                  \
  do {                                                                                    \
    cudaError_t e_ = (call);                                                              \
    if (e_ != cudaSuccess) {                                                              \
      std::fprintf(stderr, "%s failed: %s\n", #call, cudaGetErrorString(e_));             \
      std::exit(2);                                                                       \
    }                                                                                     \
  } while (0)

// Archimedean spiral, `arms` interleaves of `per_arm` samples from the centre to |k| = n/2, arms
// at the Nyquist spacing (mri::spiral_trajectory), in float.
void spiral(std::int64_t n, int arms, std::int64_t per_arm, std::vector<float>& kx,
            std::vector<float>& ky) {
  const std::int64_t grid[] = {n, n};
  const mri::Trajectory t = mri::spiral_trajectory(grid, {.interleaves = arms, .samples = per_arm});
  kx.assign(t.kx.begin(), t.kx.end());
  ky.assign(t.ky.begin(), t.ky.end());
}

// Smooth coil maps (mri::coil_maps): coil c centred on a circle of radius 0.6 (half-FOV units)
// inside the image, Gaussian magnitude, phase sloping towards the coil; in float.
std::vector<cfloat> coil_maps(std::int64_t n, std::int64_t coils) {
  const std::int64_t grid[] = {n, n};
  const auto maps = mri::coil_maps(grid, coils, {.radius = 0.6, .width = 1.0, .phase = 0.5});
  return std::vector<cfloat>(maps.begin(), maps.end());
}

struct Stats {
  double median = 0, min = 0;
};

template <class F>
Stats time_it(cudaStream_t stream, int reps, F&& f) {
  cudaEvent_t a, b;
  CHECK_CUDA(cudaEventCreate(&a));
  CHECK_CUDA(cudaEventCreate(&b));
  for (int i = 0; i < 3; ++i) f();
  CHECK_CUDA(cudaStreamSynchronize(stream));
  std::vector<double> ms;
  for (int r = 0; r < reps; ++r) {
    CHECK_CUDA(cudaEventRecord(a, stream));
    f();
    CHECK_CUDA(cudaEventRecord(b, stream));
    CHECK_CUDA(cudaEventSynchronize(b));
    float t = 0;
    CHECK_CUDA(cudaEventElapsedTime(&t, a, b));
    ms.push_back(t);
  }
  CHECK_CUDA(cudaEventDestroy(a));
  CHECK_CUDA(cudaEventDestroy(b));
  std::sort(ms.begin(), ms.end());
  return {ms[ms.size() / 2], ms.front()};
}

void CUDART_CB wait_for_flag(void* p) {
  auto* flag = static_cast<std::atomic<bool>*>(p);
  while (!flag->load()) std::this_thread::sleep_for(std::chrono::microseconds(50));
}

}  // namespace

int main(int argc, char** argv) {
  std::int64_t n = 256, coils = 32;
  int arms = 64, per_arm = 1024, reps = 50, device = 0;
  double eps = 1e-3;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    const double v = std::atof(argv[i + 1]);
    if (k == "--n") n = static_cast<std::int64_t>(v);
    else if (k == "--coils") coils = static_cast<std::int64_t>(v);
    else if (k == "--arms") arms = static_cast<int>(v);
    else if (k == "--per-arm") per_arm = static_cast<int>(v);
    else if (k == "--reps") reps = static_cast<int>(v);
    else if (k == "--eps") eps = v;
    else if (k == "--device") device = static_cast<int>(v);
    else {
      std::fprintf(stderr, "unknown option %s (--n --coils --arms --per-arm --reps --eps --device)\n",
                   k.c_str());
      return 2;
    }
  }
  try {
    const Context ctx = Context::cuda(device);
    auto stream = static_cast<cudaStream_t>(ctx.stream());
    CHECK_CUDA(cudaSetDevice(device));
    std::vector<float> kx, ky;
    spiral(n, arms, per_arm, kx, ky);
    const std::int64_t m = static_cast<std::int64_t>(kx.size()), voxels = n * n;
    const std::int64_t grid[] = {n, n};
    const auto maps = coil_maps(n, coils);

    // --- operator version ---
    auto t0 = std::chrono::steady_clock::now();
    auto enc = std::make_shared<mri::Encoding<float>>(grid, kx, ky);
    // mri::sense: compose(NufftEncoding with batch C, diag_expand(maps)), with the NUFFT pair as
    // its normal (Toeplitz off), as the version by hand (R1 without Toeplitz).
    auto a = mri::sense<float>(enc, maps, {n, n, coils}, ctx, {.eps = eps, .toeplitz = mri::Toeplitz::kOff});
    CHECK_CUDA(cudaStreamSynchronize(stream));
    const double setup_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();

    cfloat *x, *z_op, *z_hand, *sx, *fx, *d_maps, *scal;
    CHECK_CUDA(cudaMalloc(&x, voxels * sizeof(cfloat)));
    CHECK_CUDA(cudaMalloc(&z_op, voxels * sizeof(cfloat)));
    CHECK_CUDA(cudaMalloc(&z_hand, voxels * sizeof(cfloat)));
    CHECK_CUDA(cudaMalloc(&sx, voxels * coils * sizeof(cfloat)));
    CHECK_CUDA(cudaMalloc(&fx, m * coils * sizeof(cfloat)));
    CHECK_CUDA(cudaMalloc(&d_maps, voxels * coils * sizeof(cfloat)));
    CHECK_CUDA(cudaMalloc(&scal, 8 * sizeof(cfloat)));
    std::vector<cfloat> hx(static_cast<std::size_t>(voxels));
    for (std::int64_t i = 0; i < voxels; ++i)
      hx[static_cast<std::size_t>(i)] = cfloat(std::sin(0.001f * i), std::cos(0.003f * i));
    CHECK_CUDA(cudaMemcpy(x, hx.data(), voxels * sizeof(cfloat), cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(d_maps, maps.data(), maps.size() * sizeof(cfloat), cudaMemcpyHostToDevice));

    const Stats st_op = time_it(stream, reps, [&] { a->apply_normal(x, z_op); });

    // --- by hand: two plans and the vector operations ---
    std::vector<float> px(kx.size()), py(ky.size());
    for (std::size_t j = 0; j < kx.size(); ++j) {
      px[j] = static_cast<float>(2 * std::numbers::pi * kx[j] / n);
      py[j] = static_cast<float>(2 * std::numbers::pi * ky[j] / n);
    }
    const std::int64_t modes[] = {n, n};
    nufft::Plan<float> t2(2, modes, -1, coils, eps, ctx);
    nufft::Plan<float> t1(1, modes, +1, coils, eps, ctx);
    float *dpx, *dpy;
    CHECK_CUDA(cudaMalloc(&dpx, m * sizeof(float)));
    CHECK_CUDA(cudaMalloc(&dpy, m * sizeof(float)));
    CHECK_CUDA(cudaMemcpy(dpx, px.data(), m * sizeof(float), cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(dpy, py.data(), m * sizeof(float), cudaMemcpyHostToDevice));
    t2.set_points(m, dpx, dpy);
    t1.set_points(m, dpx, dpy);
    op::VectorOps<float> vo(ctx);
    const Stats st_hand = time_it(stream, reps, [&] {
      vo.expand_mul(voxels, coils, d_maps, x, sx);
      t2.execute(sx, fx);
      t1.execute(fx, sx);
      vo.conj_mul_sum(voxels, coils, d_maps, sx, z_hand);
    });
    // --- the Toeplitz normal (R1): fused SENSE pass, and the coil images through the plain one ---
    auto a_t = mri::sense<float>(enc, maps, {n, n, coils}, ctx, {.eps = eps, .toeplitz = mri::Toeplitz::kOn});
    cfloat *z_fused, *z_steps, *coil_images;
    CHECK_CUDA(cudaMalloc(&z_fused, voxels * sizeof(cfloat)));
    CHECK_CUDA(cudaMalloc(&coil_images, voxels * coils * sizeof(cfloat)));
    CHECK_CUDA(cudaMalloc(&z_steps, voxels * sizeof(cfloat)));
    const Stats st_fused = time_it(stream, reps, [&] { a_t->apply_normal(x, z_fused); });
    mri::NufftEncodingOptions to;
    to.eps = eps;
    to.batch = coils;
    to.toeplitz = mri::Toeplitz::kOn;
    mri::NufftEncoding<float> e_t(enc, ctx, to);
    const Stats st_steps = time_it(stream, reps, [&] {
      vo.expand_mul(voxels, coils, d_maps, x, sx);
      e_t.apply_normal(sx, coil_images);
      vo.conj_mul_sum(voxels, coils, d_maps, coil_images, z_steps);
    });

    CHECK_CUDA(cudaStreamSynchronize(stream));
    std::vector<cfloat> h_op(static_cast<std::size_t>(voxels)), h_hand(static_cast<std::size_t>(voxels));
    CHECK_CUDA(cudaMemcpy(h_op.data(), z_op, voxels * sizeof(cfloat), cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaMemcpy(h_hand.data(), z_hand, voxels * sizeof(cfloat), cudaMemcpyDeviceToHost));
    double num = 0, den = 0;
    for (std::size_t i = 0; i < h_op.size(); ++i) {
      num += std::norm(std::complex<double>(h_op[i]) - std::complex<double>(h_hand[i]));
      den += std::norm(std::complex<double>(h_hand[i]));
    }
    const double rel = std::sqrt(num / den);
    auto rel_to_hand = [&](const cfloat* d) {
      std::vector<cfloat> h(static_cast<std::size_t>(voxels));
      CHECK_CUDA(cudaMemcpy(h.data(), d, voxels * sizeof(cfloat), cudaMemcpyDeviceToHost));
      double nn = 0;
      for (std::size_t i = 0; i < h.size(); ++i)
        nn += std::norm(std::complex<double>(h[i]) - std::complex<double>(h_hand[i]));
      return std::sqrt(nn / den);
    };
    const double rel_fused = rel_to_hand(z_fused), rel_steps = rel_to_hand(z_steps);

    // --- one CG iteration enqueued while the stream is held ---
    // r, p, Ap in sx's first voxels·3 elements (scratch is large enough: C >= 3 checked below).
    std::atomic<bool> release{false};
    cfloat* r = sx;
    cfloat* p = sx + voxels;
    cfloat* ap = sx + 2 * voxels;
    CHECK_CUDA(cudaMemcpyAsync(r, x, voxels * sizeof(cfloat), cudaMemcpyDeviceToDevice, stream));
    CHECK_CUDA(cudaMemcpyAsync(p, x, voxels * sizeof(cfloat), cudaMemcpyDeviceToDevice, stream));
    vo.dot_to(voxels, r, r, scal);  // rr
    CHECK_CUDA(cudaStreamSynchronize(stream));
    CHECK_CUDA(cudaLaunchHostFunc(stream, wait_for_flag, &release));
    const auto e0 = std::chrono::steady_clock::now();
    a->apply_normal(p, ap);                                   // Ap
    vo.dot_to(voxels, p, ap, scal + 1);                       // pᴴAp
    vo.ratio(scal, scal + 1, scal + 2);                       // α = rr / pᴴAp
    vo.axpy(voxels, scal + 2, p, z_op);                       // x += α p
    vo.axpy(voxels, scal + 2, ap, r, /*negate=*/true);        // r -= α Ap
    vo.dot_to(voxels, r, r, scal + 3);                        // rr'
    vo.ratio(scal + 3, scal, scal + 4);                       // β = rr' / rr
    vo.xpay(voxels, r, scal + 4, p);                          // p = r + β p
    const double enqueue_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - e0).count();
    const bool held = !release.load();
    cudaError_t q = cudaStreamQuery(stream);
    const bool still_pending = (q == cudaErrorNotReady);
    release.store(true);
    CHECK_CUDA(cudaStreamSynchronize(stream));
    const bool no_sync = held && still_pending && coils >= 3;

    std::printf("SENSE normal operator AᴴA: %lldx%lld image, %lld coils, %lld samples per coil, eps %g, float\n",
                static_cast<long long>(n), static_cast<long long>(n), static_cast<long long>(coils),
                static_cast<long long>(m), eps);
    std::printf("set-up (encoding, plans, points, coil maps): %.1f ms\n", setup_ms);
    std::printf("| version | median ms | min ms |\n|---|---|---|\n");
    std::printf("| operator (compose(NufftEncoding batch %lld, diag_expand)).apply_normal | %.3f | %.3f |\n",
                static_cast<long long>(coils), st_op.median, st_op.min);
    std::printf("| by hand (2 plans + VectorOps) | %.3f | %.3f |\n", st_hand.median, st_hand.min);
    std::printf("| Toeplitz: sense(kOn).apply_normal (one fused pass) | %.3f | %.3f |\n", st_fused.median,
                st_fused.min);
    std::printf("| Toeplitz: expand, NufftEncoding(kOn).apply_normal, combine | %.3f | %.3f |\n", st_steps.median,
                st_steps.min);
    std::printf("operator / by hand (median): %.3f; relative difference of the results: %.2e\n",
                st_op.median / st_hand.median, rel);
    std::printf("Toeplitz vs the NUFFT pair (relative difference, about eps): fused %.2e, in steps %.2e\n", rel_fused,
                rel_steps);
    std::printf("CG iteration enqueued in %.3f ms while the stream was held: %s\n", enqueue_ms,
                no_sync ? "0 host synchronisations" : "SYNCHRONISED (the enqueue waited for the stream)");
    for (auto* ptr : {x, z_op, z_hand, sx, fx, d_maps, scal, z_fused, z_steps, coil_images}) cudaFree(ptr);
    cudaFree(dpx);
    cudaFree(dpy);
    return no_sync && rel < 1e-4 && rel_fused < 20 * eps && rel_steps < 20 * eps ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
}
