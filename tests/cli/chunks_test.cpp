// The k_z transform of a stack (apps/fieldft/recon_chunks.hpp) against its definition, a direct
// sum in double: the FFT path (integer κ, distinct modulo Nz, planes in any order, some missing)
// and the matrix product (any other κ), both directions (kz_to_slices and the model's
// slices_to_kz), and slices_to_kz undoing kz_to_slices.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <numbers>
#include <numeric>
#include <random>
#include <vector>

#include "recon_chunks.hpp"

namespace fieldft::cli {
namespace {

using C = std::complex<double>;

// A stack of `kz.size()` planes of `per` samples each, the dataset's samples shuffled.
Stack make_stack(const std::vector<double>& kz, std::int64_t per, std::mt19937& rng) {
  Stack s;
  s.planes = static_cast<std::int64_t>(kz.size());
  s.plane_samples = per;
  s.kz = kz;
  s.index.resize(static_cast<std::size_t>(s.planes * per));
  std::iota(s.index.begin(), s.index.end(), 0);
  std::shuffle(s.index.begin(), s.index.end(), rng);
  return s;
}

// ŷ_c(z, j) = Σ_p y_c(p, j) e^{+i2π κ_p (z - ⌊Nz/2⌋)/Nz} / Nz, at z·per·C + j + per·c.
std::vector<C> direct(const Stack& s, std::int64_t nz, std::int64_t coils, const std::vector<C>& y) {
  const std::int64_t per = s.plane_samples, m = per * s.planes;
  std::vector<C> out(static_cast<std::size_t>(nz * per * coils));
  for (std::int64_t z = 0; z < nz; ++z)
    for (std::int64_t c = 0; c < coils; ++c)
      for (std::int64_t j = 0; j < per; ++j) {
        C sum = 0;
        for (std::int64_t p = 0; p < s.planes; ++p)
          sum += y[static_cast<std::size_t>(s.index[static_cast<std::size_t>(p * per + j)] + m * c)] *
                 std::polar(1.0, 2 * std::numbers::pi * s.kz[static_cast<std::size_t>(p)] *
                                     static_cast<double>(z - nz / 2) / static_cast<double>(nz));
        out[static_cast<std::size_t>(z * per * coils + j + per * c)] = sum / static_cast<double>(nz);
      }
  return out;
}

// y_c(p, j) = Σ_z ŷ_c(z, j) e^{-i2π κ_p (z - ⌊Nz/2⌋)/Nz}, in the dataset's order (slices_to_kz).
std::vector<C> direct_back(const Stack& s, std::int64_t nz, std::int64_t coils, const std::vector<std::vector<C>>& sl) {
  const std::int64_t per = s.plane_samples, m = per * s.planes;
  std::vector<C> y(static_cast<std::size_t>(m * coils));
  for (std::int64_t p = 0; p < s.planes; ++p)
    for (std::int64_t c = 0; c < coils; ++c)
      for (std::int64_t j = 0; j < per; ++j) {
        C sum = 0;
        for (std::int64_t z = 0; z < nz; ++z)
          sum += sl[static_cast<std::size_t>(z)][static_cast<std::size_t>(j + per * c)] *
                 std::polar(1.0, -2 * std::numbers::pi * s.kz[static_cast<std::size_t>(p)] *
                                     static_cast<double>(z - nz / 2) / static_cast<double>(nz));
        y[static_cast<std::size_t>(s.index[static_cast<std::size_t>(p * per + j)] + m * c)] = sum;
      }
  return y;
}

double rel_error(const std::vector<C>& a, const std::vector<C>& b) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    num += std::norm(a[i] - b[i]);
    den += std::norm(b[i]);
  }
  return std::sqrt(num / den);
}

std::vector<C> random_data(std::size_t n, std::mt19937& rng) {
  std::normal_distribution<double> g;
  std::vector<C> y(n);
  for (auto& v : y) v = C(g(rng), g(rng));
  return y;
}

TEST(KzTransform, MatchesItsDefinitionOnEveryPath) {
  std::mt19937 rng(5);
  struct Case {
    const char* what;
    std::int64_t nz;
    std::vector<double> kz;
  };
  std::vector<double> full(16), shifted(12), sparse, odd(9);
  std::iota(full.begin(), full.end(), -8.0);
  std::shuffle(full.begin(), full.end(), rng);          // planes in any order
  std::iota(shifted.begin(), shifted.end(), 3.0);       // 3 .. 14: bins wrap modulo 12
  for (int k = -8; k < 8; k += 3) sparse.push_back(k);  // some planes missing
  std::iota(odd.begin(), odd.end(), -4.0);
  const std::vector<Case> cases = {
      {"all 16 planes, shuffled (FFT)", 16, full},
      {"12 planes at 3..14 (FFT, wrapped bins)", 12, shifted},
      {"every third plane of 16 (FFT, zeros between)", 16, sparse},
      {"odd Nz = 9 (FFT)", 9, odd},
      {"half-integer kz (product)", 8, {-3.5, -1.5, 0.5, 2.5}},
      {"two planes equal modulo Nz (product)", 8, {-4, 0, 4}},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(k.what);
    const std::int64_t per = 37, coils = 3;  // 111 columns: not a whole block
    const Stack s = make_stack(k.kz, per, rng);
    const auto y = random_data(static_cast<std::size_t>(s.planes * per * coils), rng);
    const auto got = kz_to_slices<double>(s, k.nz, coils, y);
    EXPECT_LT(rel_error(got, direct(s, k.nz, coils, y)), 1e-13);
    // In single precision, to its rounding.
    const std::vector<std::complex<float>> yf(y.begin(), y.end());
    const auto gotf = kz_to_slices<float>(s, k.nz, coils, yf);
    EXPECT_LT(rel_error(std::vector<C>(gotf.begin(), gotf.end()),
                        direct(s, k.nz, coils, std::vector<C>(yf.begin(), yf.end()))),
              1e-6);
    // The model's direction, slices_to_kz, from random slices.
    std::vector<std::vector<C>> slices(static_cast<std::size_t>(k.nz));
    for (auto& sl : slices) sl = random_data(static_cast<std::size_t>(per * coils), rng);
    std::vector<C> back;
    slices_to_kz<double>(s, k.nz, coils, slices, back);
    EXPECT_LT(rel_error(back, direct_back(s, k.nz, coils, slices)), 1e-13) << "slices_to_kz";
  }
}

TEST(KzTransform, ManyColumnsOverSeveralBlocksAndThreads) {
  std::mt19937 rng(7);
  std::vector<double> kz(32);
  std::iota(kz.begin(), kz.end(), -16.0);
  const std::int64_t per = 700, coils = 2;  // 1400 columns: blocks of 256 and a partial one
  const Stack s = make_stack(kz, per, rng);
  const auto y = random_data(static_cast<std::size_t>(32 * per * coils), rng);
  EXPECT_LT(rel_error(kz_to_slices<double>(s, 32, coils, y), direct(s, 32, coils, y)), 1e-13);
}

TEST(KzTransform, SlicesToKzUndoesIt) {
  std::mt19937 rng(9);
  std::vector<double> kz(16);
  std::iota(kz.begin(), kz.end(), -8.0);
  std::shuffle(kz.begin(), kz.end(), rng);
  const std::int64_t per = 50, coils = 2, nz = 16;
  const Stack s = make_stack(kz, per, rng);
  const auto y = random_data(static_cast<std::size_t>(nz * per * coils), rng);
  const auto flat = kz_to_slices<double>(s, nz, coils, y);
  std::vector<std::vector<C>> slices(static_cast<std::size_t>(nz));
  for (std::int64_t z = 0; z < nz; ++z)
    slices[static_cast<std::size_t>(z)].assign(flat.begin() + z * per * coils, flat.begin() + (z + 1) * per * coils);
  std::vector<C> back;
  slices_to_kz<double>(s, nz, coils, slices, back);
  EXPECT_LT(rel_error(back, y), 1e-13);
}

}  // namespace
}  // namespace fieldft::cli
