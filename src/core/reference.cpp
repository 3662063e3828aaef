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

// exp(sign·i·(2π k_j·r_v + Δω_v t_j)) with the spatial phase reduced in cycles.
cdouble field_term(const Points& ksp, const Points& pos, std::span<const double> field,
                   std::span<const double> times, std::int64_t j, std::int64_t v, double sign) {
  double cyc = ksp.x[j] * pos.x[v];
  if (ksp.dim >= 2) cyc += ksp.y[j] * pos.y[v];
  if (ksp.dim >= 3) cyc += ksp.z[j] * pos.z[v];
  cyc -= std::nearbyint(cyc);
  const double ph = kTwoPi * cyc + std::remainder(field[v] * times[j], kTwoPi);
  return expi(sign * ph);
}

void check_field_args(const Points& ksp, const Points& pos, std::span<const double> field,
                      std::span<const double> times) {
  require(ksp.dim == pos.dim && (ksp.dim == 2 || ksp.dim == 3), ErrorCode::kShapeMismatch,
          "reference: trajectory and positions must both be 2D or both 3D");
  require(static_cast<std::int64_t>(field.size()) == pos.size(), ErrorCode::kShapeMismatch,
          "reference: field map length differs from the number of voxels");
  require(static_cast<std::int64_t>(times.size()) == ksp.size(), ErrorCode::kShapeMismatch,
          "reference: readout times length differs from the number of samples");
}

}  // namespace

std::vector<cdouble> field_dft_forward(const Points& ksp, const Points& pos, std::span<const double> field,
                                       std::span<const double> times, std::span<const cdouble> image) {
  check_field_args(ksp, pos, field, times);
  require(static_cast<std::int64_t>(image.size()) == pos.size(), ErrorCode::kShapeMismatch,
          "reference: image length differs from the number of voxels");
  std::vector<cdouble> out(ksp.size());
#pragma omp parallel for schedule(dynamic, 64)
  for (std::int64_t j = 0; j < ksp.size(); ++j) {
    cdouble acc = 0;
    for (std::int64_t v = 0; v < pos.size(); ++v) acc += image[v] * field_term(ksp, pos, field, times, j, v, -1.0);
    out[j] = acc;
  }
  return out;
}

std::vector<cdouble> field_dft_adjoint(const Points& ksp, const Points& pos, std::span<const double> field,
                                       std::span<const double> times, std::span<const cdouble> samples) {
  check_field_args(ksp, pos, field, times);
  require(static_cast<std::int64_t>(samples.size()) == ksp.size(), ErrorCode::kShapeMismatch,
          "reference: sample vector length differs from the number of samples");
  std::vector<cdouble> out(pos.size());
#pragma omp parallel for schedule(dynamic, 64)
  for (std::int64_t v = 0; v < pos.size(); ++v) {
    cdouble acc = 0;
    for (std::int64_t j = 0; j < ksp.size(); ++j) acc += samples[j] * field_term(ksp, pos, field, times, j, v, 1.0);
    out[v] = acc;
  }
  return out;
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
