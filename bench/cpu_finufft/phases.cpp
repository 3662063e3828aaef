#include "phases.hpp"

#include <fftw3.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <numeric>
#include <stdexcept>

#include "fieldft/detail/fold.hpp"

namespace fieldft::bench {

namespace {

// Minimum wall time of f() over `repeats` calls, in ms, after one untimed call.
template <class F>
double min_ms(int repeats, F&& f) {
  f();
  double best = std::numeric_limits<double>::infinity();
  for (int r = 0; r < repeats; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    best = std::min(best, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

// The few FFTW calls used here, per precision.
template <class T>
struct Fft;
template <>
struct Fft<double> {
  using Plan = fftw_plan;
  static void init_threads(int n) {
    fftw_init_threads();
    fftw_plan_with_nthreads(n);
  }
  static Plan plan(int rank, const int* n, std::complex<double>* d, int sign) {
    auto* p = reinterpret_cast<fftw_complex*>(d);
    return fftw_plan_dft(rank, n, p, p, sign, FFTW_ESTIMATE);
  }
  static void execute(Plan p) { fftw_execute(p); }
  static void destroy(Plan p) { fftw_destroy_plan(p); }
};
template <>
struct Fft<float> {
  using Plan = fftwf_plan;
  static void init_threads(int n) {
    fftwf_init_threads();
    fftwf_plan_with_nthreads(n);
  }
  static Plan plan(int rank, const int* n, std::complex<float>* d, int sign) {
    auto* p = reinterpret_cast<fftwf_complex*>(d);
    return fftwf_plan_dft(rank, n, p, p, sign, FFTW_ESTIMATE);
  }
  static void execute(Plan p) { fftwf_execute(p); }
  static void destroy(Plan p) { fftwf_destroy_plan(p); }
};

}  // namespace

template <class T>
nlohmann::json time_fft_and_copy(const nufft::PlanInfo& info, int nthreads, int repeats) {
  using Complex = std::complex<T>;
  const std::int64_t nft = info.fine_grid[0] * info.fine_grid[1] * info.fine_grid[2];
  std::vector<Complex> grid(static_cast<std::size_t>(nft), Complex(0));
  int n[3];
  for (int d = 0; d < info.dim; ++d) n[d] = static_cast<int>(info.fine_grid[info.dim - 1 - d]);  // slowest first
  Fft<T>::init_threads(nthreads);
  const auto plan = Fft<T>::plan(info.dim, n, grid.data(), info.isign > 0 ? FFTW_BACKWARD : FFTW_FORWARD);
  if (!plan) throw std::runtime_error("FFTW could not plan the fine-grid FFT");
  nlohmann::json out;
  out["fft_ms"] = min_ms(repeats, [&] { Fft<T>::execute(plan); });
  Fft<T>::destroy(plan);

  // Centred modes sit at the corners of the fine grid; the copy below touches the same cells.
  const std::int64_t n1 = info.modes[0], n2 = info.modes[1], n3 = info.modes[2];
  const std::int64_t nf1 = info.fine_grid[0], nf2 = info.fine_grid[1], nf3 = info.fine_grid[2];
  std::vector<Complex> modes(static_cast<std::size_t>(n1 * n2 * n3), Complex(1));
  std::vector<T> factor(static_cast<std::size_t>(std::max({n1, n2, n3})), T(1.0001));
  auto fine_index = [](std::int64_t p, std::int64_t nm, std::int64_t nf) {
    const std::int64_t k = p - nm / 2;
    return k >= 0 ? k : k + nf;
  };
  const bool to_modes = info.type == 1;
  out["copy_ms"] = min_ms(repeats, [&] {
#pragma omp parallel for collapse(2) num_threads(nthreads) schedule(static)
    for (std::int64_t p3 = 0; p3 < n3; ++p3)
      for (std::int64_t p2 = 0; p2 < n2; ++p2) {
        const T f23 = factor[p2] * factor[p3];
        Complex* frow = modes.data() + (p3 * n2 + p2) * n1;
        Complex* grow = grid.data() + (fine_index(p3, n3, nf3) * nf2 + fine_index(p2, n2, nf2)) * nf1;
        for (std::int64_t p1 = 0; p1 < n1; ++p1) {
          Complex& g = grow[fine_index(p1, n1, nf1)];
          if (to_modes)
            frow[p1] = g * (factor[p1] * f23);
          else
            g = frow[p1] * (factor[p1] * f23);
        }
      }
  });
  if (info.type == 2)
    out["zero_ms"] = min_ms(repeats, [&] { std::fill(grid.begin(), grid.end(), Complex(0)); });
  return out;
}

template <class T>
std::vector<std::int64_t> presort(const nufft::PlanInfo& info, std::int64_t m, std::vector<T>& coords,
                                  std::vector<std::complex<T>>* c) {
  const int dim = info.dim;
  std::vector<std::int64_t> key(static_cast<std::size_t>(m));
#pragma omp parallel for schedule(static)
  for (std::int64_t j = 0; j < m; ++j) {
    std::int64_t k = 0;
    for (int d = dim - 1; d >= 0; --d) {
      const double u = detail::fold_rescale(static_cast<double>(coords[d * m + j]), info.fine_grid[d]);
      const std::int64_t nb = (info.fine_grid[d] + info.bin_size[d] - 1) / info.bin_size[d];
      k = k * nb + static_cast<std::int64_t>(u) / info.bin_size[d];
    }
    key[j] = k;
  }
  std::vector<std::int64_t> order(static_cast<std::size_t>(m));
  std::iota(order.begin(), order.end(), std::int64_t(0));
  std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) { return key[a] < key[b]; });
  std::vector<T> sorted(coords.size());
  for (int d = 0; d < dim; ++d)
    for (std::int64_t j = 0; j < m; ++j) sorted[d * m + j] = coords[d * m + order[j]];
  coords.swap(sorted);
  if (c) {
    std::vector<std::complex<T>> cs(c->size());
    for (std::int64_t j = 0; j < m; ++j) cs[j] = (*c)[order[j]];
    c->swap(cs);
  }
  return order;
}

template nlohmann::json time_fft_and_copy<float>(const nufft::PlanInfo&, int, int);
template nlohmann::json time_fft_and_copy<double>(const nufft::PlanInfo&, int, int);
template std::vector<std::int64_t> presort<float>(const nufft::PlanInfo&, std::int64_t, std::vector<float>&,
                                                  std::vector<std::complex<float>>*);
template std::vector<std::int64_t> presort<double>(const nufft::PlanInfo&, std::int64_t, std::vector<double>&,
                                                   std::vector<std::complex<double>>*);

}  // namespace fieldft::bench
