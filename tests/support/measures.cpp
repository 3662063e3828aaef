#include "support/measures.hpp"

#include <cmath>
#include <stdexcept>

namespace fieldft::test {

template <class A, class B>
cdouble inner(std::span<const std::complex<A>> u, std::span<const std::complex<B>> v) {
  if (u.size() != v.size()) throw std::invalid_argument("inner: arrays differ in length");
  long double re = 0, im = 0;
  for (std::size_t i = 0; i < u.size(); ++i) {
    const long double ur = u[i].real(), ui = u[i].imag(), vr = v[i].real(), vi = v[i].imag();
    re += ur * vr + ui * vi;  // u * conj(v)
    im += ui * vr - ur * vi;
  }
  return {static_cast<double>(re), static_cast<double>(im)};
}

template <class A>
double norm(std::span<const std::complex<A>> u) {
  long double s = 0;
  for (const auto& e : u) {
    const long double r = e.real(), i = e.imag();
    s += r * r + i * i;
  }
  return static_cast<double>(std::sqrt(s));
}

template <class A>
double adjointness_defect(std::span<const std::complex<A>> x, std::span<const std::complex<A>> ax,
                          std::span<const std::complex<A>> y, std::span<const std::complex<A>> ahy) {
  const cdouble lhs = inner(ax, y);
  const cdouble rhs = inner(x, ahy);
  const double scale = norm(ax) * norm(y);
  return scale == 0 ? std::abs(lhs - rhs) : std::abs(lhs - rhs) / scale;
}

std::int64_t num_modes(std::span<const std::int64_t> modes) {
  std::int64_t n = 1;
  for (auto m : modes) n *= m;
  return n;
}

std::array<std::int64_t, 3> mode_of_index(std::int64_t i, std::span<const std::int64_t> modes,
                                          int modeord) {
  std::array<std::int64_t, 3> k{0, 0, 0};
  for (std::size_t d = 0; d < modes.size(); ++d) {
    const std::int64_t n = modes[d];
    const std::int64_t p = i % n;
    i /= n;
    if (modeord == 0) {
      k[d] = p - n / 2;
    } else {
      // FFT order: the non-negative modes 0 .. (n-1)/2 come first (there are n - n/2 of them).
      k[d] = p < n - n / 2 ? p : p - n;
    }
  }
  return k;
}

std::int64_t index_of_mode(const std::array<std::int64_t, 3>& k,
                           std::span<const std::int64_t> modes, int modeord) {
  std::int64_t idx = 0, stride = 1;
  for (std::size_t d = 0; d < modes.size(); ++d) {
    const std::int64_t n = modes[d];
    if (k[d] < -(n / 2) || k[d] > (n - 1) / 2) throw std::out_of_range("index_of_mode: k outside");
    const std::int64_t p = modeord == 0 ? k[d] + n / 2 : (k[d] >= 0 ? k[d] : k[d] + n);
    idx += p * stride;
    stride *= n;
  }
  return idx;
}

std::vector<std::int64_t> modeord_permutation(std::span<const std::int64_t> modes) {
  const std::int64_t n = num_modes(modes);
  std::vector<std::int64_t> perm(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i)
    perm[static_cast<std::size_t>(i)] = index_of_mode(mode_of_index(i, modes, 0), modes, 1);
  return perm;
}

template cdouble inner<float, float>(std::span<const std::complex<float>>,
                                     std::span<const std::complex<float>>);
template cdouble inner<double, double>(std::span<const std::complex<double>>,
                                       std::span<const std::complex<double>>);
template double norm<float>(std::span<const std::complex<float>>);
template double norm<double>(std::span<const std::complex<double>>);
template double adjointness_defect<float>(std::span<const std::complex<float>>,
                                          std::span<const std::complex<float>>,
                                          std::span<const std::complex<float>>,
                                          std::span<const std::complex<float>>);
template double adjointness_defect<double>(std::span<const std::complex<double>>,
                                           std::span<const std::complex<double>>,
                                           std::span<const std::complex<double>>,
                                           std::span<const std::complex<double>>);

}  // namespace fieldft::test
