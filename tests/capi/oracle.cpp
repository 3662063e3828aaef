// C side of tests/capi/oracle.h: fieldft::reference's exact sums for the C tests.
#include "oracle.h"

#include <complex>
#include <cstdint>
#include <span>
#include <vector>

#include "fieldft/reference.hpp"

namespace {

using fieldft::reference::cdouble;
using fieldft::reference::Points;

Points points(int dim, std::int64_t n, const double* x, const double* y, const double* z) {
  Points p;
  p.dim = dim;
  const auto un = static_cast<std::size_t>(n);
  p.x.assign(x, x + un);
  if (dim >= 2) p.y.assign(y, y + un);
  if (dim >= 3) p.z.assign(z, z + un);
  return p;
}

std::span<const cdouble> complex_span(const double* a, std::int64_t n) {
  return {reinterpret_cast<const cdouble*>(a), static_cast<std::size_t>(n)};
}

void store(const std::vector<cdouble>& v, double* out) {
  for (std::size_t i = 0; i < v.size(); ++i) {
    out[2 * i] = v[i].real();
    out[2 * i + 1] = v[i].imag();
  }
}

}  // namespace

extern "C" {

void oracle_nufft(int type, int dim, const int64_t* modes, int isign, int modeord, int64_t m, const double* x,
                  const double* y, const double* z, int64_t nk, const double* s, const double* t, const double* u,
                  const double* in, double* out) {
  const Points p = points(dim, m, x, y, z);
  if (type == 3) {
    store(fieldft::reference::nufft_type3(p, complex_span(in, m), points(dim, nk, s, t, u), isign), out);
    return;
  }
  std::span<const std::int64_t> n(modes, static_cast<std::size_t>(dim));
  std::int64_t num_modes = 1;
  for (int d = 0; d < dim; ++d) num_modes *= modes[d];
  if (type == 1) store(fieldft::reference::nufft_type1(p, complex_span(in, m), n, isign, modeord), out);
  if (type == 2) store(fieldft::reference::nufft_type2(p, complex_span(in, num_modes), n, isign, modeord), out);
}

void oracle_field_dft(int adjoint, int dim, const int64_t* grid, int64_t m, const double* kx, const double* ky,
                      const double* kz, const double* field, const double* times, const double* in, double* out) {
  const Points k = points(dim, m, kx, ky, kz);
  const std::int64_t nz = dim == 3 ? grid[2] : 1, voxels = grid[0] * grid[1] * nz;
  Points r;
  r.dim = dim;
  for (std::int64_t iz = 0; iz < nz; ++iz)
    for (std::int64_t iy = 0; iy < grid[1]; ++iy)
      for (std::int64_t ix = 0; ix < grid[0]; ++ix) {
        r.x.push_back(static_cast<double>(ix - grid[0] / 2) / static_cast<double>(grid[0]));
        r.y.push_back(static_cast<double>(iy - grid[1] / 2) / static_cast<double>(grid[1]));
        if (dim == 3) r.z.push_back(static_cast<double>(iz - nz / 2) / static_cast<double>(nz));
      }
  std::vector<double> f(static_cast<std::size_t>(voxels), 0.0), ts(static_cast<std::size_t>(m), 0.0);
  if (field) f.assign(field, field + voxels);
  if (times) ts.assign(times, times + m);
  if (adjoint)
    store(fieldft::reference::field_dft_adjoint(k, r, f, ts, complex_span(in, m)), out);
  else
    store(fieldft::reference::field_dft_forward(k, r, f, ts, complex_span(in, voxels)), out);
}

double oracle_rel_error(int64_t n, const double* a, const double* b) {
  return fieldft::reference::rel_l2_error<cdouble>(complex_span(a, n), complex_span(b, n));
}

}  // extern "C"
