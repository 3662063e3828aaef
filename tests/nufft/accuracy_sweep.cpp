#include "accuracy_sweep.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numbers>
#include <utility>

#include "fieldft/reference.hpp"
#include "support/measures.hpp"
#include "support/random_data.hpp"

namespace fieldft::test {

const char* precision_name(Precision p) { return p == Precision::kFloat ? "float" : "double"; }

SweepProblem sweep_problem(int type, int dim) {
  // Mixed parities and non-powers of two so that the k range [-N/2, (N-1)/2] and the fine-grid
  // sizes are exercised off the easy path; sizes keep the direct sums under ~1e7 terms.
  SweepProblem p;
  switch (dim) {
    case 1: p.modes = {101}; p.num_points = 2000; break;
    case 2: p.modes = {48, 37}; p.num_points = 3000; break;
    default: p.modes = {16, 13, 12}; p.num_points = 3000; break;
  }
  p.isign = type == 1 ? 1 : -1;  // the usual pairing: forward type 1 with +i, type 2 with -i
  if (type == 3) {
    // Boxes off-centre (so that the centring phases matter), with space-bandwidth products
    // X·S = 125, 27, 12 that give type 3 grids of ~170, ~50, ~30 points per dimension: fine grids
    // comparable to the type 1/2 problems, direct sums of <= 1e7 terms.
    p.isign = 1;
    switch (dim) {
      case 1: p.num_points = 2000; p.num_targets = 2000; p.x_lo = -4; p.x_hi = 6; p.s_lo = -20; p.s_hi = 30; break;
      case 2: p.num_points = 3000; p.num_targets = 3000; p.x_lo = -2; p.x_hi = 4; p.s_lo = -12; p.s_hi = 6; break;
      default: p.num_points = 3000; p.num_targets = 3000; p.x_lo = -1.5; p.x_hi = 2.5; p.s_lo = -5; p.s_hi = 7; break;
    }
    p.modes.assign(static_cast<std::size_t>(dim), 1);
  }
  return p;
}

std::vector<double> sweep_eps(Precision p) {
  const int last = p == Precision::kFloat ? 6 : 12;
  std::vector<double> e;
  for (int k = 1; k <= last; ++k) e.push_back(std::pow(10.0, -k));
  return e;
}

double min_reachable_eps(Precision p, double upsampfac) {
  const double lib_min = p == Precision::kFloat ? nufft::min_eps<float>() : nufft::min_eps<double>();
  return upsampfac < 2.0 ? std::max(lib_min, 1e-9) : lib_min;
}

namespace {

// ψ̂(k) = ∫ φ(2x/w) cos(2π k x / nf) dx over x ∈ [-w/2, w/2] (x in fine-grid cells), for the ES
// kernel φ(z) = exp(β(sqrt(1 - z²) - 1)) of fieldft/detail/kernel.hpp, by composite Simpson on
// 4096 intervals: the integrand is smooth inside and e^-β small at the ends, so the ratios below
// are accurate to far better than the factor-of-two scale of the floor model.
std::vector<double> kernel_fourier(double beta, int w, std::int64_t nf, std::int64_t kmax) {
  constexpr int kIntervals = 4096;
  const double h = static_cast<double>(w) / kIntervals;
  std::vector<double> phi(kIntervals + 1), x(kIntervals + 1);
  for (int i = 0; i <= kIntervals; ++i) {
    x[i] = -0.5 * w + i * h;
    const double z = 2 * x[i] / w;
    phi[i] = z * z < 1 ? std::exp(beta * (std::sqrt(1 - z * z) - 1)) : 0.0;
    phi[i] *= (i == 0 || i == kIntervals) ? 1.0 : (i % 2 ? 4.0 : 2.0);
  }
  std::vector<double> out(static_cast<std::size_t>(kmax + 1));
  for (std::int64_t k = 0; k <= kmax; ++k) {
    double s = 0;
    const double f = 2 * std::numbers::pi * static_cast<double>(k) / static_cast<double>(nf);
    for (int i = 0; i <= kIntervals; ++i) s += phi[i] * std::cos(f * x[i]);
    out[static_cast<std::size_t>(k)] = s * h / 3;
  }
  return out;
}

// Smallest even n' >= n whose prime factors are 2, 3 and 5 (the grid sizes the library uses).
std::int64_t smooth_at_least(std::int64_t n) {
  if (n <= 2) return 2;
  for (n += n % 2;; n += 2) {
    std::int64_t r = n;
    for (int p : {2, 3, 5})
      while (r % p == 0) r /= p;
    if (r == 1) return n;
  }
}

// rms over k in [klo, khi] of ψ̂(0)/ψ̂(k) on a grid of nf cells; infinity where ψ̂(k) <= 0.
double rms_gain(const nufft::PlanInfo& info, std::int64_t nf, std::int64_t klo, std::int64_t khi) {
  const std::int64_t kmax = std::max(-klo, khi);
  const auto ph = kernel_fourier(info.kernel_beta, info.kernel_width, nf, kmax);
  double sum = 0;
  for (std::int64_t k = klo; k <= khi; ++k) {
    const double v = ph[static_cast<std::size_t>(k < 0 ? -k : k)];
    if (!(v > 0)) return std::numeric_limits<double>::infinity();
    sum += (ph[0] / v) * (ph[0] / v);
  }
  return std::sqrt(sum / static_cast<double>(khi - klo + 1));
}

}  // namespace

std::int64_t type3_grid_size(double sigma, int w, double half_x, double half_s) {
  const double want = std::max(2 * sigma * half_x * half_s / std::numbers::pi + w + 1, 2.0 * w);
  return smooth_at_least(static_cast<std::int64_t>(std::ceil(want)));
}

double deconvolution_gain(const nufft::PlanInfo& info) {
  if (info.type == 3) {
    double inner = 1, outer = 1;
    for (int d = 0; d < info.dim; ++d) {
      const std::int64_t nf = info.fine_grid[d];
      const auto band = static_cast<std::int64_t>(std::floor(nf / (2 * info.upsampfac)));
      const std::int64_t inner_grid = smooth_at_least(static_cast<std::int64_t>(
          std::ceil(std::max(info.upsampfac * static_cast<double>(nf), 2.0 * info.kernel_width))));
      outer *= rms_gain(info, nf, -band, band);
      inner *= rms_gain(info, inner_grid, -(nf / 2), (nf - 1) / 2);
    }
    return std::max(inner, outer);
  }
  double gain = 1;
  for (int d = 0; d < info.dim; ++d) {
    const std::int64_t n = info.modes[d];
    gain *= rms_gain(info, info.fine_grid[d], -(n / 2), (n - 1) / 2);
  }
  return gain;
}

double precision_floor(Precision p, const nufft::PlanInfo& info) {
  const double u = p == Precision::kFloat ? 0x1.0p-24 : 0x1.0p-53;
  return kFloorFactor * u * deconvolution_gain(info);
}

double accuracy_bound(Precision p, double eps, const nufft::PlanInfo& info) {
  return 2.0 * std::max(eps, precision_floor(p, info));
}

namespace {

struct SweepData {
  PointSet<float> points;      // float-rounded coordinates (exact copy in points.exact)
  PointSet<float> targets;     // type 3: float-rounded targets
  std::vector<cdouble> input;  // float-rounded input values, widened
  std::vector<cdouble> want;   // the oracle's output
};

const SweepData& sweep_data(int type, int dim) {
  static std::map<std::pair<int, int>, SweepData> cache;
  const auto key = std::make_pair(type, dim);
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  const SweepProblem prob = sweep_problem(type, dim);
  SweepData d;
  const std::uint64_t seed = 1000 + 10 * static_cast<std::uint64_t>(type) + dim;
  if (type == 3) {
    d.points = random_points<float>(dim, prob.num_points, seed, prob.x_lo, prob.x_hi);
    d.targets = random_points<float>(dim, prob.num_targets, seed + 250, prob.s_lo, prob.s_hi);
    d.input = widen(random_complex<float>(prob.num_points, seed + 500));
    d.want = reference::nufft_type3(d.points.exact, d.input, d.targets.exact, prob.isign);
    return cache.emplace(key, std::move(d)).first->second;
  }
  d.points = random_points<float>(dim, prob.num_points, seed);
  const std::int64_t n_in = type == 1 ? prob.num_points : num_modes(prob.modes);
  d.input = widen(random_complex<float>(n_in, seed + 500));
  d.want = type == 1 ? reference::nufft_type1(d.points.exact, d.input, prob.modes, prob.isign, 0)
                     : reference::nufft_type2(d.points.exact, d.input, prob.modes, prob.isign, 0);
  return cache.emplace(key, std::move(d)).first->second;
}

// The sweep problem's points (and type 3 targets) in precision T, handed to the plan.
template <class T>
void set_sweep_points(nufft::Plan<T>& plan, int type, const SweepData& data) {
  const PointSet<T> pts = convert_points<T>(data.points);
  if (type != 3) {
    plan.set_points(pts.size(), pts.x_ptr(), pts.y_ptr(), pts.z_ptr());
    return;
  }
  const PointSet<T> tgt = convert_points<T>(data.targets);
  plan.set_points(pts.size(), pts.x_ptr(), pts.y_ptr(), pts.z_ptr(), tgt.size(), tgt.x_ptr(), tgt.y_ptr(),
                  tgt.z_ptr());
}

}  // namespace

bool refusal_is_justified(Precision p, int type, int dim, double upsampfac, double eps) {
  if (eps < min_reachable_eps(p, upsampfac)) return true;
  nufft::Options opt;
  opt.backend = Backend::kCpu;
  opt.upsampfac = upsampfac;
  const nufft::Plan<double> pd(type, sweep_problem(type, dim).modes, 1, 1, eps, opt);
  const double u = p == Precision::kFloat ? 0x1.0p-24 : 0x1.0p-53;
  nufft::PlanInfo info = pd.info();
  if (type == 3) {
    // The grid from the points by the documented rule; deconvolution_gain then takes the larger
    // of the two type 3 gains, which is what the library checks.
    const SweepData& data = sweep_data(type, dim);
    const std::vector<double>* src[3] = {&data.points.exact.x, &data.points.exact.y, &data.points.exact.z};
    const std::vector<double>* tgt[3] = {&data.targets.exact.x, &data.targets.exact.y, &data.targets.exact.z};
    for (int d = 0; d < dim; ++d) {
      const auto [xlo, xhi] = std::minmax_element(src[d]->begin(), src[d]->end());
      const auto [slo, shi] = std::minmax_element(tgt[d]->begin(), tgt[d]->end());
      info.fine_grid[d] = type3_grid_size(upsampfac, info.kernel_width, (*xhi - *xlo) / 2, (*shi - *slo) / 2);
    }
  }
  return u * deconvolution_gain(info) > 0.99 * eps;  // 1%: two quadratures of the same G
}

namespace {

template <class T>
SweepResult run_case(Backend backend, nufft::Method method, int type, int dim, double upsampfac,
                     double eps, Precision precision) {
  const SweepProblem prob = sweep_problem(type, dim);
  const SweepData& data = sweep_data(type, dim);
  SweepResult r;
  nufft::Options opt;
  opt.backend = backend;
  opt.method = method;
  opt.upsampfac = upsampfac;
  std::optional<nufft::Plan<T>> plan;
  try {
    plan.emplace(type, prob.modes, prob.isign, 1, eps, opt);
    set_sweep_points(*plan, type, data);  // type 3 designs its grid, and may refuse, here
  } catch (const Error& e) {
    if (e.code() != ErrorCode::kEpsTooSmall) throw;
    r.refused = true;
    r.refusal = e.what();
    return r;
  }
  const auto in = convert_complex<T, double>(data.input);
  // NaN in every slot: an output the plan fails to write shows up as a NaN error.
  std::vector<std::complex<T>> out(data.want.size(), {std::nan(""), std::nan("")});
  plan->execute(in.data(), out.data());
  r.error = rel_error(out, data.want);
  r.info = plan->info();
  r.gain = deconvolution_gain(r.info);
  r.floor = precision_floor(precision, r.info);
  r.bound = accuracy_bound(precision, eps, r.info);
  return r;
}

}  // namespace

SweepResult run_sweep_case(Backend backend, nufft::Method method, int type, int dim,
                           Precision precision, double upsampfac, double eps) {
  return precision == Precision::kFloat
             ? run_case<float>(backend, method, type, dim, upsampfac, eps, precision)
             : run_case<double>(backend, method, type, dim, upsampfac, eps, precision);
}

RoundingResult measure_float_rounding(Backend backend, nufft::Method method, int type, int dim,
                                      double upsampfac, double eps) {
  const SweepProblem prob = sweep_problem(type, dim);
  const SweepData& data = sweep_data(type, dim);
  nufft::Options opt;
  opt.backend = backend;
  opt.method = method;
  opt.upsampfac = upsampfac;
  nufft::Plan<float> pf(type, prob.modes, prob.isign, 1, eps, opt);
  nufft::Plan<double> pd(type, prob.modes, prob.isign, 1, eps, opt);
  set_sweep_points(pf, type, data);
  set_sweep_points(pd, type, data);
  const auto in_f = convert_complex<float, double>(data.input);
  std::vector<std::complex<float>> out_f(data.want.size());
  std::vector<std::complex<double>> out_d(data.want.size());
  pf.execute(in_f.data(), out_f.data());
  pd.execute(data.input.data(), out_d.data());
  RoundingResult r;
  r.difference = rel_error(out_f, out_d);
  r.info = pf.info();
  r.gain = deconvolution_gain(r.info);
  return r;
}

}  // namespace fieldft::test
