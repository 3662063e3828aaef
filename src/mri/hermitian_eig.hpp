// A dense Hermitian eigensolver for the MRI layer's small host problems (ESPIRiT's calibration
// kernels, a few hundred unknowns): no LAPACK dependency for one O(n³) routine.
//
// Method: Householder reduction to tridiagonal form H = Q T Qᴴ (Golub & Van Loan, "Matrix
// Computations", 4th ed., §8.3.1, with complex reflectors I − 2vvᴴ), a unitary diagonal
// scaling that makes T's off-diagonal real and >= 0, and the implicit QL iteration with
// Wilkinson shifts on the real symmetric tridiagonal matrix (§8.3.3–8.3.5), accumulating the
// rotations into the eigenvectors. Everything in double.
#pragma once

#include <complex>
#include <cstdint>
#include <vector>

namespace fieldft::mri::detail {

// a: n × n Hermitian matrix, column-major (a[i + n·j]; only its Hermitian part is meaningful);
// on return its columns are orthonormal eigenvectors, and values (n) the eigenvalues in
// ascending order, value j belonging to column j. Throws kInternal if the QL iteration does not
// converge (it always does for finite input), kNonFinite for NaN/Inf in a.
void hermitian_eig(std::int64_t n, std::vector<std::complex<double>>& a, std::vector<double>& values);

}  // namespace fieldft::mri::detail
