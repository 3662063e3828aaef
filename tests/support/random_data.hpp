// Reproducible random test data: points and complex values, identical on every platform.
//
// The standard <random> distributions are implementation-defined, so a fixed seed would give
// different data with another standard library; SplitMix64 with an explicit conversion to
// [0, 1) does not. Every value handed to a plan of precision T is first rounded to T, and the
// double copy given to the oracle holds exactly those rounded values: the comparison then
// measures the transform, not the rounding of its input.
#pragma once

#include <complex>
#include <cstdint>
#include <numbers>
#include <span>
#include <vector>

#include "fieldft/reference.hpp"

namespace fieldft::test {

using cdouble = std::complex<double>;

class Rng {
 public:
  explicit Rng(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next_u64();
  double uniform();                            // [0, 1)
  double uniform(double lo, double hi);        // [lo, hi)
  std::int64_t integer(std::int64_t lo, std::int64_t hi);  // [lo, hi]

 private:
  std::uint64_t state_;
};

// Points of dimension dim, stored both as T (what a plan reads) and as double (the same values,
// for the oracle).
template <class T>
struct PointSet {
  int dim = 1;
  std::vector<T> x, y, z;
  reference::Points exact;

  std::int64_t size() const { return static_cast<std::int64_t>(x.size()); }
  const T* x_ptr() const { return x.data(); }
  const T* y_ptr() const { return dim >= 2 ? y.data() : nullptr; }
  const T* z_ptr() const { return dim >= 3 ? z.data() : nullptr; }
};

// m points, each coordinate uniform in [lo, hi).
template <class T>
PointSet<T> random_points(int dim, std::int64_t m, std::uint64_t seed,
                          double lo = -std::numbers::pi, double hi = std::numbers::pi);

// Points from explicit coordinates (unused dimensions empty), rounded to T.
template <class T>
PointSet<T> make_points(int dim, std::span<const double> x, std::span<const double> y = {},
                        std::span<const double> z = {});

// The voxel positions of an image grid (1 to 3 entries) as the MRI oracles take them,
// r_d = (i_d − ⌊N_d/2⌋)/N_d in field-of-view units, x fastest (not random: shared test geometry).
reference::Points voxel_positions(std::span<const std::int64_t> grid);

// A copy of pts with coordinates of precision U (the values are those of pts, rounded to U).
template <class U, class T>
PointSet<U> convert_points(const PointSet<T>& pts);

// n complex values with real and imaginary parts uniform in [-1, 1), rounded to T.
template <class T>
std::vector<std::complex<T>> random_complex(std::int64_t n, std::uint64_t seed);

// Element-wise conversion between complex precisions.
template <class U, class T>
std::vector<std::complex<U>> convert_complex(std::span<const std::complex<T>> v);

template <class T>
std::vector<cdouble> widen(const std::vector<std::complex<T>>& v) {
  return convert_complex<double, T>(v);
}

}  // namespace fieldft::test
