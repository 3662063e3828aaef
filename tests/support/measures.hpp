// Error measures shared by the tests: inner products, norms, relative errors, the adjointness
// defect, and the mode-ordering permutation, all computed in double (or wider) whatever the
// precision of the data, so that the measure never limits what a test can see.
#pragma once

#include <array>
#include <complex>
#include <cstdint>
#include <span>
#include <vector>

#include "fieldft/reference.hpp"

namespace fieldft::test {

using cdouble = std::complex<double>;

// <u, v> = sum_i u_i conj(v_i), accumulated in long double.
template <class A, class B>
cdouble inner(std::span<const std::complex<A>> u, std::span<const std::complex<B>> v);

// ||u||_2, accumulated in long double.
template <class A>
double norm(std::span<const std::complex<A>> u);

// ||got - want|| / ||want|| through the oracle library's definition (reference::rel_l2_error).
template <class A>
double rel_error(const std::vector<std::complex<A>>& got, const std::vector<cdouble>& want) {
  return reference::rel_l2_error<std::complex<A>>(std::span<const std::complex<A>>(got), want);
}

// |<Ax, y> - <x, A^H y>| / (||Ax|| ||y||): zero for an exact adjoint pair, and invariant to the
// scale of x and y. Arguments: x, Ax (the forward result), y, Ahy (the adjoint result).
template <class A>
double adjointness_defect(std::span<const std::complex<A>> x, std::span<const std::complex<A>> ax,
                          std::span<const std::complex<A>> y, std::span<const std::complex<A>> ahy);

// Mode vector of index i of a mode array with sizes modes (dim entries) in the given modeord:
// modeord 0 puts k_d = -N_d/2 .. (N_d-1)/2 in increasing order, modeord 1 in FFT order
// (0, 1, ..., (N_d-1)/2, -N_d/2, ..., -1); x fastest. Unused dimensions get k = 0.
std::array<std::int64_t, 3> mode_of_index(std::int64_t i, std::span<const std::int64_t> modes,
                                          int modeord);
// Index of mode vector k in the given modeord (the inverse of mode_of_index).
std::int64_t index_of_mode(const std::array<std::int64_t, 3>& k,
                           std::span<const std::int64_t> modes, int modeord);
// perm[i] = index in modeord 1 of the mode stored at index i in modeord 0.
std::vector<std::int64_t> modeord_permutation(std::span<const std::int64_t> modes);

std::int64_t num_modes(std::span<const std::int64_t> modes);

}  // namespace fieldft::test
