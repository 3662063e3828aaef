// fieldft::reference — exact direct sums in double precision: the oracles every test uses.
//
// They compute the defining sums term by term (O(M·N) work), parallel over outputs with OpenMP,
// with the phase reduced modulo 2π in double before the exponential. Use them on problems of up
// to ~1e9 terms, or on a subset of outputs (the `which` arguments) for larger problems.
//
// Conventions are those of fieldft/nufft.hpp and DESIGN.md §3:
//   type 1: f[k] = Σ_j c_j exp(isign·i·k·x_j), k_d ∈ [-N_d/2, (N_d-1)/2], column-major, x fastest,
//           modeord 0 (increasing) or 1 (FFT order);
//   type 2: c_j  = Σ_k f[k] exp(isign·i·k·x_j);
//   type 3: f_k  = Σ_j c_j exp(isign·i·s_k·x_j), arbitrary real s_k (dimension d vectors);
//   field-corrected DFT: s_j = Σ_k m_k exp(-i(2π k_j·r_k + Δω_k t_j)), k_j in cycles/FOV,
//           r_k in FOV units, Δω in rad/s, t in s; adjoint m_k = Σ_j s_j exp(+i(...));
//           R2* variant (DftR2): each term times Π_d sinc(k_dj/N_d + G_dk t_j), see below.
#pragma once

#include <array>
#include <complex>
#include <cstdint>
#include <span>
#include <vector>

namespace fieldft::reference {

using cdouble = std::complex<double>;

// Coordinates of dimension dim (1..3) stored as separate arrays; unused ones may be empty.
struct Points {
  int dim = 1;
  std::vector<double> x, y, z;
  std::int64_t size() const { return static_cast<std::int64_t>(x.size()); }
};

// Type 1 at all modes. modes has dim entries. Output: num_modes values in the given modeord.
std::vector<cdouble> nufft_type1(const Points& pts, std::span<const cdouble> c,
                                 std::span<const std::int64_t> modes, int isign, int modeord = 0);
// Type 1 at a subset of output indices (indices into the modeord-ordered mode array).
std::vector<cdouble> nufft_type1_at(const Points& pts, std::span<const cdouble> c,
                                    std::span<const std::int64_t> modes, int isign, int modeord,
                                    std::span<const std::int64_t> which);
// Type 2 at all points, or at a subset of point indices.
std::vector<cdouble> nufft_type2(const Points& pts, std::span<const cdouble> f,
                                 std::span<const std::int64_t> modes, int isign, int modeord = 0);
std::vector<cdouble> nufft_type2_at(const Points& pts, std::span<const cdouble> f,
                                    std::span<const std::int64_t> modes, int isign, int modeord,
                                    std::span<const std::int64_t> which);
// Type 3: sources pts with strengths c, targets s (same dim).
std::vector<cdouble> nufft_type3(const Points& pts, std::span<const cdouble> c,
                                 const Points& targets, int isign);

// Field-corrected DFT. ksp: trajectory in cycles/FOV (dim 2 or 3, one entry per sample);
// pos: voxel positions in FOV units (one entry per voxel); field: Δω per voxel (rad/s);
// times: t per sample (s).
std::vector<cdouble> field_dft_forward(const Points& ksp, const Points& pos,
                                       std::span<const double> field, std::span<const double> times,
                                       std::span<const cdouble> image);
std::vector<cdouble> field_dft_adjoint(const Points& ksp, const Points& pos,
                                       std::span<const double> field, std::span<const double> times,
                                       std::span<const cdouble> samples);
// The same at a subset of outputs: the forward at sample indices `which` (all voxels), the
// adjoint at voxel indices `which` (all samples).
std::vector<cdouble> field_dft_forward_at(const Points& ksp, const Points& pos,
                                          std::span<const double> field, std::span<const double> times,
                                          std::span<const cdouble> image, std::span<const std::int64_t> which);
std::vector<cdouble> field_dft_adjoint_at(const Points& ksp, const Points& pos,
                                          std::span<const double> field, std::span<const double> times,
                                          std::span<const cdouble> samples, std::span<const std::int64_t> which);

// Field-corrected DFT with the R2* factor (fieldft::mri::DftR2): every term of the sums above
// is multiplied by
//   B_jv = Π_d sinc(k_dj / N_d + G_dv t_j),   sinc(x) = sin(πx)/(πx), sinc(0) = 1,
// grid: N_d per dimension (pos.dim entries); gradients: G_d per voxel in cycles/s (Hz per voxel
// step along d), gradients[d] for d < pos.dim with one entry per voxel (further entries unused).
// pos must be the voxel grid's positions for B to mean what DftR2 means, but the sum does not
// depend on that.
std::vector<cdouble> field_dft_r2_forward(const Points& ksp, const Points& pos, std::span<const double> field,
                                          std::span<const double> times, std::span<const std::int64_t> grid,
                                          const std::array<std::vector<double>, 3>& gradients,
                                          std::span<const cdouble> image);
std::vector<cdouble> field_dft_r2_adjoint(const Points& ksp, const Points& pos, std::span<const double> field,
                                          std::span<const double> times, std::span<const std::int64_t> grid,
                                          const std::array<std::vector<double>, 3>& gradients,
                                          std::span<const cdouble> samples);
std::vector<cdouble> field_dft_r2_forward_at(const Points& ksp, const Points& pos, std::span<const double> field,
                                             std::span<const double> times, std::span<const std::int64_t> grid,
                                             const std::array<std::vector<double>, 3>& gradients,
                                             std::span<const cdouble> image, std::span<const std::int64_t> which);
std::vector<cdouble> field_dft_r2_adjoint_at(const Points& ksp, const Points& pos, std::span<const double> field,
                                             std::span<const double> times, std::span<const std::int64_t> grid,
                                             const std::array<std::vector<double>, 3>& gradients,
                                             std::span<const cdouble> samples, std::span<const std::int64_t> which);

// Relative l2 error ||a - b|| / ||b|| (b is the reference); 0 when both are zero.
template <class A>
double rel_l2_error(std::span<const A> a, std::span<const cdouble> b);

}  // namespace fieldft::reference
