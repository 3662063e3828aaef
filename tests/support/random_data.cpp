#include "support/random_data.hpp"

#include <stdexcept>

namespace fieldft::test {

std::uint64_t Rng::next_u64() {
  // SplitMix64 (Steele, Lea, Flood 2014): a full-period 64-bit generator, good enough for test
  // data and trivially reproducible.
  std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

double Rng::uniform() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }

double Rng::uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }

std::int64_t Rng::integer(std::int64_t lo, std::int64_t hi) {
  if (hi < lo) throw std::invalid_argument("Rng::integer: empty range");
  const auto span = static_cast<std::uint64_t>(hi - lo) + 1;
  // The modulo bias is below 2^-40 for the ranges tests use.
  return lo + static_cast<std::int64_t>(span == 0 ? next_u64() : next_u64() % span);
}

template <class T>
PointSet<T> random_points(int dim, std::int64_t m, std::uint64_t seed, double lo, double hi) {
  Rng rng(seed);
  std::vector<double> c[3];
  for (int d = 0; d < dim; ++d) {
    c[d].resize(static_cast<std::size_t>(m));
    for (auto& v : c[d]) v = rng.uniform(lo, hi);
  }
  return make_points<T>(dim, c[0], c[1], c[2]);
}

template <class T>
PointSet<T> make_points(int dim, std::span<const double> x, std::span<const double> y,
                        std::span<const double> z) {
  if (dim < 1 || dim > 3) throw std::invalid_argument("make_points: dim must be 1, 2 or 3");
  if ((dim >= 2 && y.size() != x.size()) || (dim >= 3 && z.size() != x.size()))
    throw std::invalid_argument("make_points: coordinate arrays differ in length");
  PointSet<T> p;
  p.dim = dim;
  p.exact.dim = dim;
  std::span<const double> src[3] = {x, y, z};
  std::vector<T>* dst[3] = {&p.x, &p.y, &p.z};
  std::vector<double>* ex[3] = {&p.exact.x, &p.exact.y, &p.exact.z};
  for (int d = 0; d < dim; ++d) {
    dst[d]->reserve(src[d].size());
    ex[d]->reserve(src[d].size());
    for (double v : src[d]) {
      const T r = static_cast<T>(v);
      dst[d]->push_back(r);
      ex[d]->push_back(static_cast<double>(r));
    }
  }
  return p;
}

template <class U, class T>
PointSet<U> convert_points(const PointSet<T>& pts) {
  return make_points<U>(pts.dim, pts.exact.x, pts.exact.y, pts.exact.z);
}

template <class T>
std::vector<std::complex<T>> random_complex(std::int64_t n, std::uint64_t seed) {
  Rng rng(seed);
  std::vector<std::complex<T>> v(static_cast<std::size_t>(n));
  for (auto& e : v) {
    const double re = rng.uniform(-1.0, 1.0);
    const double im = rng.uniform(-1.0, 1.0);
    e = {static_cast<T>(re), static_cast<T>(im)};
  }
  return v;
}

template <class U, class T>
std::vector<std::complex<U>> convert_complex(std::span<const std::complex<T>> v) {
  std::vector<std::complex<U>> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i)
    out[i] = {static_cast<U>(v[i].real()), static_cast<U>(v[i].imag())};
  return out;
}

template struct PointSet<float>;
template struct PointSet<double>;
reference::Points voxel_positions(std::span<const std::int64_t> grid) {
  reference::Points p;
  p.dim = static_cast<int>(grid.size());
  std::vector<double>* pd[3] = {&p.x, &p.y, &p.z};
  const std::int64_t ny = p.dim >= 2 ? grid[1] : 1, nz = p.dim == 3 ? grid[2] : 1;
  for (std::int64_t z = 0; z < nz; ++z)
    for (std::int64_t y = 0; y < ny; ++y)
      for (std::int64_t x = 0; x < grid[0]; ++x) {
        const std::int64_t i[3] = {x, y, z};
        for (int d = 0; d < p.dim; ++d)
          pd[d]->push_back(static_cast<double>(i[d] - grid[static_cast<std::size_t>(d)] / 2) /
                           static_cast<double>(grid[static_cast<std::size_t>(d)]));
      }
  return p;
}

template PointSet<float> random_points<float>(int, std::int64_t, std::uint64_t, double, double);
template PointSet<double> random_points<double>(int, std::int64_t, std::uint64_t, double, double);
template PointSet<float> make_points<float>(int, std::span<const double>, std::span<const double>,
                                            std::span<const double>);
template PointSet<double> make_points<double>(int, std::span<const double>,
                                              std::span<const double>, std::span<const double>);
template PointSet<float> convert_points<float, float>(const PointSet<float>&);
template PointSet<float> convert_points<float, double>(const PointSet<double>&);
template PointSet<double> convert_points<double, float>(const PointSet<float>&);
template PointSet<double> convert_points<double, double>(const PointSet<double>&);
template std::vector<std::complex<float>> random_complex<float>(std::int64_t, std::uint64_t);
template std::vector<std::complex<double>> random_complex<double>(std::int64_t, std::uint64_t);
template std::vector<std::complex<float>> convert_complex<float, float>(
    std::span<const std::complex<float>>);
template std::vector<std::complex<float>> convert_complex<float, double>(
    std::span<const std::complex<double>>);
template std::vector<std::complex<double>> convert_complex<double, float>(
    std::span<const std::complex<float>>);
template std::vector<std::complex<double>> convert_complex<double, double>(
    std::span<const std::complex<double>>);

}  // namespace fieldft::test
