// Direct sums in double precision. Each term's phase is reduced before the exponential:
// periodic coordinates are folded into [-π, π) and DFT phases are reduced in cycles, so the
// argument of sin/cos stays small and the sums are exact to ~1e-13 relative.
#include "fieldft/reference.hpp"

#include <cmath>
#include <numbers>
#include <string>

#include "fieldft/error.hpp"

namespace fieldft::reference {

namespace {

constexpr double kTwoPi = 2.0 * std::numbers::pi;

double fold(double x) { return x - kTwoPi * std::floor(x / kTwoPi + 0.5); }

// Mode (k1, k2, k3) of output position `idx` of a column-major mode array.
std::array<double, 3> mode_of(std::int64_t idx, std::span<const std::int64_t> modes, int modeord) {
  std::array<double, 3> k{0, 0, 0};
  for (std::size_t d = 0; d < modes.size(); ++d) {
    const std::int64_t n = modes[d], p = idx % n;
    idx /= n;
    k[d] = static_cast<double>(modeord == 0 ? p - n / 2 : (p < (n + 1) / 2 ? p : p - n));
  }
  return k;
}

std::int64_t num_modes(std::span<const std::int64_t> modes, int dim) {
  require(static_cast<int>(modes.size()) == dim, ErrorCode::kShapeMismatch,
          "reference: " + std::to_string(modes.size()) + " mode counts for points of dimension " + std::to_string(dim));
  std::int64_t n = 1;
  for (auto m : modes) n *= m;
  return n;
}

// Folded coordinates, so that k·x stays within N·π.
std::array<std::vector<double>, 3> folded(const Points& p) {
  std::array<std::vector<double>, 3> f;
  const std::vector<double>* src[3] = {&p.x, &p.y, &p.z};
  for (int d = 0; d < 3; ++d) {
    f[d].assign(p.x.size(), 0.0);
    if (d < p.dim) {
      require(src[d]->size() == p.x.size(), ErrorCode::kShapeMismatch, "reference: coordinate arrays differ in length");
      for (std::size_t j = 0; j < p.x.size(); ++j) f[d][j] = fold((*src[d])[j]);
    }
  }
  return f;
}

std::vector<std::int64_t> all_indices(std::int64_t n) {
  std::vector<std::int64_t> w(n);
  for (std::int64_t i = 0; i < n; ++i) w[i] = i;
  return w;
}

cdouble expi(double phase) { return {std::cos(phase), std::sin(phase)}; }

// Index checks happen before the parallel loops: an exception must not leave an OpenMP region.
void check_indices(std::span<const std::int64_t> which, std::int64_t n, const char* what) {
  for (auto i : which)
    require(i >= 0 && i < n, ErrorCode::kInvalidArgument,
            std::string("reference: ") + what + " index " + std::to_string(i) + " out of range [0, " + std::to_string(n) + ")");
}

}  // namespace

std::vector<cdouble> nufft_type1_at(const Points& pts, std::span<const cdouble> c,
                                    std::span<const std::int64_t> modes, int isign, int modeord,
                                    std::span<const std::int64_t> which) {
  const std::int64_t n = num_modes(modes, pts.dim), m = pts.size();
  require(static_cast<std::int64_t>(c.size()) == m, ErrorCode::kShapeMismatch, "reference: strengths and points differ in length");
  const auto x = folded(pts);
  const double s = isign >= 0 ? 1.0 : -1.0;
  check_indices(which, n, "mode");
  std::vector<cdouble> out(which.size());
#pragma omp parallel for schedule(dynamic, 16)
  for (std::int64_t o = 0; o < static_cast<std::int64_t>(which.size()); ++o) {
    const auto k = mode_of(which[o], modes, modeord);
    cdouble acc = 0;
    for (std::int64_t j = 0; j < m; ++j) acc += c[j] * expi(s * (k[0] * x[0][j] + k[1] * x[1][j] + k[2] * x[2][j]));
    out[o] = acc;
  }
  return out;
}

std::vector<cdouble> nufft_type1(const Points& pts, std::span<const cdouble> c,
                                 std::span<const std::int64_t> modes, int isign, int modeord) {
  const auto which = all_indices(num_modes(modes, pts.dim));
  return nufft_type1_at(pts, c, modes, isign, modeord, which);
}

std::vector<cdouble> nufft_type2_at(const Points& pts, std::span<const cdouble> f,
                                    std::span<const std::int64_t> modes, int isign, int modeord,
                                    std::span<const std::int64_t> which) {
  const std::int64_t n = num_modes(modes, pts.dim), m = pts.size();
  require(static_cast<std::int64_t>(f.size()) == n, ErrorCode::kShapeMismatch, "reference: mode array has the wrong size");
  const auto x = folded(pts);
  const double s = isign >= 0 ? 1.0 : -1.0;
  std::vector<std::array<double, 3>> ks(n);
  for (std::int64_t i = 0; i < n; ++i) ks[i] = mode_of(i, modes, modeord);
  check_indices(which, m, "point");
  std::vector<cdouble> out(which.size());
#pragma omp parallel for schedule(dynamic, 16)
  for (std::int64_t o = 0; o < static_cast<std::int64_t>(which.size()); ++o) {
    const std::int64_t j = which[o];
    cdouble acc = 0;
    for (std::int64_t i = 0; i < n; ++i)
      acc += f[i] * expi(s * (ks[i][0] * x[0][j] + ks[i][1] * x[1][j] + ks[i][2] * x[2][j]));
    out[o] = acc;
  }
  return out;
}

std::vector<cdouble> nufft_type2(const Points& pts, std::span<const cdouble> f,
                                 std::span<const std::int64_t> modes, int isign, int modeord) {
  const auto which = all_indices(pts.size());
  return nufft_type2_at(pts, f, modes, isign, modeord, which);
}

std::vector<cdouble> nufft_type3(const Points& pts, std::span<const cdouble> c, const Points& targets, int isign) {
  require(pts.dim == targets.dim, ErrorCode::kShapeMismatch, "reference: sources and targets differ in dimension");
  require(static_cast<std::int64_t>(c.size()) == pts.size(), ErrorCode::kShapeMismatch, "reference: strengths and points differ in length");
  const double s = isign >= 0 ? 1.0 : -1.0;
  const std::int64_t m = pts.size(), nk = targets.size();
  auto coord = [](const Points& p, int d, std::int64_t i) {
    return d == 0 ? p.x[i] : (d == 1 ? p.y[i] : p.z[i]);
  };
  std::vector<cdouble> out(nk);
#pragma omp parallel for schedule(dynamic, 16)
  for (std::int64_t k = 0; k < nk; ++k) {
    cdouble acc = 0;
    for (std::int64_t j = 0; j < m; ++j) {
      double ph = 0;
      for (int d = 0; d < pts.dim; ++d) ph += coord(targets, d, k) * coord(pts, d, j);
      acc += c[j] * expi(s * std::remainder(ph, kTwoPi));
    }
    out[k] = acc;
  }
  return out;
}

namespace {

// The R2* factor's inputs; null for the plain field-corrected DFT.
struct R2Factor {
  std::span<const std::int64_t> grid;
  const std::array<std::vector<double>, 3>* gradients;
};

// exp(sign·i·(2π k_j·r_v + Δω_v t_j)) with the spatial phase reduced in cycles, times the R2*
// factor Π_d sinc(k_dj/N_d + G_dv t_j) when r2 is given.
cdouble field_term(const Points& ksp, const Points& pos, std::span<const double> field,
                   std::span<const double> times, const R2Factor* r2, std::int64_t j, std::int64_t v,
                   double sign) {
  double cyc = ksp.x[j] * pos.x[v];
  if (ksp.dim >= 2) cyc += ksp.y[j] * pos.y[v];
  if (ksp.dim >= 3) cyc += ksp.z[j] * pos.z[v];
  cyc -= std::nearbyint(cyc);
  const double ph = kTwoPi * cyc + std::remainder(field[v] * times[j], kTwoPi);
  const cdouble e = expi(sign * ph);
  if (!r2) return e;
  const std::vector<double>* k[3] = {&ksp.x, &ksp.y, &ksp.z};
  double b = 1;
  for (int d = 0; d < ksp.dim; ++d) {
    const double a = (*k[d])[j] / static_cast<double>(r2->grid[d]) + (*r2->gradients)[d][v] * times[j];
    b *= a == 0 ? 1.0 : std::sin(std::numbers::pi * a) / (std::numbers::pi * a);
  }
  return b * e;
}

// All argument checks of the field-corrected sums; `in` has one entry per voxel (forward) or
// per sample (adjoint), `which` indexes outputs. Run before the parallel loop.
void check_field_args(const Points& ksp, const Points& pos, std::span<const double> field,
                      std::span<const double> times, const R2Factor* r2, std::size_t in_size,
                      std::span<const std::int64_t> which, bool adjoint) {
  require(ksp.dim == pos.dim && (ksp.dim == 2 || ksp.dim == 3), ErrorCode::kShapeMismatch,
          "reference: trajectory and positions must both be 2D or both 3D");
  const std::vector<double>* kc[3] = {&ksp.x, &ksp.y, &ksp.z};
  const std::vector<double>* pc[3] = {&pos.x, &pos.y, &pos.z};
  for (int d = 1; d < ksp.dim; ++d) {
    require(kc[d]->size() == ksp.x.size(), ErrorCode::kShapeMismatch, "reference: trajectory coordinate arrays differ in length");
    require(pc[d]->size() == pos.x.size(), ErrorCode::kShapeMismatch, "reference: position coordinate arrays differ in length");
  }
  require(static_cast<std::int64_t>(field.size()) == pos.size(), ErrorCode::kShapeMismatch,
          "reference: field map length differs from the number of voxels");
  require(static_cast<std::int64_t>(times.size()) == ksp.size(), ErrorCode::kShapeMismatch,
          "reference: readout times length differs from the number of samples");
  if (adjoint)
    require(static_cast<std::int64_t>(in_size) == ksp.size(), ErrorCode::kShapeMismatch,
            "reference: sample vector length differs from the number of samples");
  else
    require(static_cast<std::int64_t>(in_size) == pos.size(), ErrorCode::kShapeMismatch,
            "reference: image length differs from the number of voxels");
  if (r2) {
    require(static_cast<int>(r2->grid.size()) == pos.dim, ErrorCode::kShapeMismatch,
            "reference: R2* grid has " + std::to_string(r2->grid.size()) + " sizes for dimension " + std::to_string(pos.dim));
    for (int d = 0; d < pos.dim; ++d) {
      require(r2->grid[d] > 0, ErrorCode::kInvalidArgument, "reference: R2* grid sizes must be positive");
      require(static_cast<std::int64_t>((*r2->gradients)[d].size()) == pos.size(), ErrorCode::kShapeMismatch,
              "reference: gradient map " + std::to_string(d) + " length differs from the number of voxels");
    }
  }
  check_indices(which, adjoint ? pos.size() : ksp.size(), adjoint ? "voxel" : "sample");
}

// Forward (outputs: samples `which`, sum over voxels, sign −) or adjoint (outputs: voxels
// `which`, sum over samples, sign +).
std::vector<cdouble> field_sum_at(const Points& ksp, const Points& pos, std::span<const double> field,
                                  std::span<const double> times, const R2Factor* r2, std::span<const cdouble> in,
                                  std::span<const std::int64_t> which, bool adjoint) {
  check_field_args(ksp, pos, field, times, r2, in.size(), which, adjoint);
  const std::int64_t nin = static_cast<std::int64_t>(in.size());
  const double sign = adjoint ? 1.0 : -1.0;
  std::vector<cdouble> out(which.size());
#pragma omp parallel for schedule(dynamic, 64)
  for (std::int64_t o = 0; o < static_cast<std::int64_t>(which.size()); ++o) {
    cdouble acc = 0;
    for (std::int64_t i = 0; i < nin; ++i) {
      const std::int64_t j = adjoint ? i : which[o], v = adjoint ? which[o] : i;
      acc += in[i] * field_term(ksp, pos, field, times, r2, j, v, sign);
    }
    out[o] = acc;
  }
  return out;
}

}  // namespace

std::vector<cdouble> field_dft_forward_at(const Points& ksp, const Points& pos, std::span<const double> field,
                                          std::span<const double> times, std::span<const cdouble> image,
                                          std::span<const std::int64_t> which) {
  return field_sum_at(ksp, pos, field, times, nullptr, image, which, false);
}

std::vector<cdouble> field_dft_adjoint_at(const Points& ksp, const Points& pos, std::span<const double> field,
                                          std::span<const double> times, std::span<const cdouble> samples,
                                          std::span<const std::int64_t> which) {
  return field_sum_at(ksp, pos, field, times, nullptr, samples, which, true);
}

std::vector<cdouble> field_dft_forward(const Points& ksp, const Points& pos, std::span<const double> field,
                                       std::span<const double> times, std::span<const cdouble> image) {
  return field_dft_forward_at(ksp, pos, field, times, image, all_indices(ksp.size()));
}

std::vector<cdouble> field_dft_adjoint(const Points& ksp, const Points& pos, std::span<const double> field,
                                       std::span<const double> times, std::span<const cdouble> samples) {
  return field_dft_adjoint_at(ksp, pos, field, times, samples, all_indices(pos.size()));
}

std::vector<cdouble> field_dft_r2_forward_at(const Points& ksp, const Points& pos, std::span<const double> field,
                                             std::span<const double> times, std::span<const std::int64_t> grid,
                                             const std::array<std::vector<double>, 3>& gradients,
                                             std::span<const cdouble> image, std::span<const std::int64_t> which) {
  const R2Factor r2{grid, &gradients};
  return field_sum_at(ksp, pos, field, times, &r2, image, which, false);
}

std::vector<cdouble> field_dft_r2_adjoint_at(const Points& ksp, const Points& pos, std::span<const double> field,
                                             std::span<const double> times, std::span<const std::int64_t> grid,
                                             const std::array<std::vector<double>, 3>& gradients,
                                             std::span<const cdouble> samples, std::span<const std::int64_t> which) {
  const R2Factor r2{grid, &gradients};
  return field_sum_at(ksp, pos, field, times, &r2, samples, which, true);
}

std::vector<cdouble> field_dft_r2_forward(const Points& ksp, const Points& pos, std::span<const double> field,
                                          std::span<const double> times, std::span<const std::int64_t> grid,
                                          const std::array<std::vector<double>, 3>& gradients,
                                          std::span<const cdouble> image) {
  return field_dft_r2_forward_at(ksp, pos, field, times, grid, gradients, image, all_indices(ksp.size()));
}

std::vector<cdouble> field_dft_r2_adjoint(const Points& ksp, const Points& pos, std::span<const double> field,
                                          std::span<const double> times, std::span<const std::int64_t> grid,
                                          const std::array<std::vector<double>, 3>& gradients,
                                          std::span<const cdouble> samples) {
  return field_dft_r2_adjoint_at(ksp, pos, field, times, grid, gradients, samples, all_indices(pos.size()));
}

template <class A>
double rel_l2_error(std::span<const A> a, std::span<const cdouble> b) {
  require(a.size() == b.size(), ErrorCode::kShapeMismatch, "rel_l2_error: arrays differ in length");
  double num = 0, den = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const cdouble ai(a[i].real(), a[i].imag());
    num += std::norm(ai - b[i]);
    den += std::norm(b[i]);
  }
  if (den == 0) return num == 0 ? 0.0 : INFINITY;
  return std::sqrt(num / den);
}

template double rel_l2_error(std::span<const std::complex<float>>, std::span<const cdouble>);
template double rel_l2_error(std::span<const std::complex<double>>, std::span<const cdouble>);

}  // namespace fieldft::reference
