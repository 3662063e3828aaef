// Time segmentation: histogram, distinct times, interpolators, worst-case error and the choice
// of L (time_segmentation.hpp states the math).
#include "core/time_segmentation.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <numbers>
#include <sstream>
#include <tuple>
#include <utility>

#include "core/threads.hpp"
#include "fieldft/error.hpp"

namespace fieldft::core {

namespace {

using C = std::complex<double>;

// exp(−iθ).
C expmi(double theta) { return {std::cos(theta), -std::sin(theta)}; }

// a·b and conj(a)·b by their formulas: std::complex's operator* checks for NaN and infinities
// (Annex G) and is several times slower in these loops.
C mul(C a, C b) { return {a.real() * b.real() - a.imag() * b.imag(), a.real() * b.imag() + a.imag() * b.real()}; }
C conj_mul(C a, C b) { return {a.real() * b.real() + a.imag() * b.imag(), a.real() * b.imag() - a.imag() * b.real()}; }

// out[q] = exp(−i(ω_min + q·width/2)·t) for q = 0 … 2·bins: one complex product per half bin, with
// a fresh exponential every kAnchor steps so that rounding cannot accumulate (< 1e-13).
constexpr int kAnchor = 256;
void half_bin_row(const FieldHistogram& h, double t, std::vector<C>& out) {
  const std::size_t n = static_cast<std::size_t>(2 * h.bins + 1);
  out.resize(n);
  const C step = expmi(0.5 * h.width * t);
  for (std::size_t q = 0; q < n; ++q)
    out[q] = q % kAnchor == 0 ? expmi((h.omega_min + 0.5 * h.width * static_cast<double>(q)) * t) : mul(out[q - 1], step);
}

std::string number(double v) {
  std::ostringstream os;
  os.precision(3);
  os << v;
  return os.str();
}

// In place, the Cholesky factor L (lower, A = L Lᴴ) of a Hermitian positive definite n × n matrix
// (row-major, l fastest); false when a pivot is not positive.
bool cholesky(std::vector<C>& a, int n) {
  for (int j = 0; j < n; ++j) {
    double d = a[j * n + j].real();
    for (int k = 0; k < j; ++k) d -= std::norm(a[j * n + k]);
    if (!(d > 0)) return false;
    const double ljj = std::sqrt(d);
    a[j * n + j] = ljj;
    for (int i = j + 1; i < n; ++i) {
      C s = a[i * n + j];
      for (int k = 0; k < j; ++k) s -= a[i * n + k] * std::conj(a[j * n + k]);
      a[i * n + j] = s / ljj;
    }
  }
  return true;
}

// Solves L Lᴴ x = b in place (b becomes x).
void cholesky_solve(const std::vector<C>& l, int n, C* b) {
  for (int i = 0; i < n; ++i) {
    C s = b[i];
    for (int k = 0; k < i; ++k) s -= l[i * n + k] * b[k];
    b[i] = s / l[i * n + i].real();
  }
  for (int i = n - 1; i >= 0; --i) {
    C s = b[i];
    for (int k = i + 1; k < n; ++k) s -= std::conj(l[k * n + i]) * b[k];
    b[i] = s / l[i * n + i].real();
  }
}

// Hanning weights (Noll et al. 1991) for time t: the pair (l, l+1) and their weights.
void hanning_row(std::span<const double> tau, double t, C* h, std::int32_t* first, std::int32_t* last) {
  const int n = static_cast<int>(tau.size());
  if (n == 1) {
    h[0] = 1;
    *first = 0;
    *last = 1;
    return;
  }
  const double dt = (tau[n - 1] - tau[0]) / (n - 1);
  const double a = (t - tau[0]) / dt;
  const int l = std::clamp(static_cast<int>(std::floor(a)), 0, n - 2);
  const double f = std::clamp(a - l, 0.0, 1.0);
  const double c = std::cos(0.5 * std::numbers::pi * f);
  h[l] = c * c;
  h[l + 1] = 1 - c * c;
  *first = l;
  *last = l + 2;
}

// The row-independent parts of an interpolator: basis values at the evaluation points (the
// least-squares fit's points too), and (least squares) the Cholesky factor of G + λI.
struct Basis {
  int segments = 0;
  std::vector<C> points;   // P × L: exp(−iω_p τ_l) at the evaluation (and fit) points
  std::vector<C> factor;   // L × L
};

Basis make_basis(SegmentInterpolator kind, const FieldHistogram& hist, std::span<const double> tau, double ridge) {
  Basis b;
  const int n = static_cast<int>(tau.size());
  b.segments = n;
  const std::size_t p = hist.point_steps.size();
  b.points.resize(p * n);
  std::vector<C> row;
  for (int l = 0; l < n; ++l) {
    half_bin_row(hist, tau[l], row);
    for (std::size_t i = 0; i < p; ++i) b.points[i * n + l] = row[hist.point_steps[i]];
  }
  if (kind != SegmentInterpolator::kLeastSquares) return b;
  // G_{ll'} = Σ_p w_p conj(E_pl) E_pl' (Hermitian; cholesky reads the lower triangle).
  b.factor.assign(static_cast<std::size_t>(n) * n, C(0));
  for (std::size_t i = 0; i < p; ++i) {
    const C* e = &b.points[i * n];
    const double w = hist.point_weights[i];
    for (int l = 0; l < n; ++l)
      for (int m = 0; m <= l; ++m) b.factor[l * n + m] += w * conj_mul(e[l], e[m]);
  }
  for (int l = 0; l < n; ++l) b.factor[l * n + l] += ridge;
  if (!cholesky(b.factor, n))
    throw Error(ErrorCode::kInternal, "time segmentation: the least-squares Gram matrix (L = " + std::to_string(n) +
                                          ") is not positive definite despite the ridge " + number(ridge));
  return b;
}

// Row for time t: coefficients, their range, the worst-case error at the evaluation points and Σ|h|.
struct RowResult {
  double error = 0, amplification = 0;
};

// `row`: scratch for half_bin_row.
RowResult interpolate_row(SegmentInterpolator kind, const FieldHistogram& hist, const Basis& basis,
                          std::span<const double> tau, double t, C* h, std::int32_t* first, std::int32_t* last,
                          std::vector<C>& row) {
  const int n = basis.segments;
  std::fill(h, h + n, C(0));
  half_bin_row(hist, t, row);
  if (kind == SegmentInterpolator::kHanning) {
    hanning_row(tau, t, h, first, last);
  } else {
    // r_l = Σ_p w_p conj(E_pl) exp(−iω_p t), then (G + λI) h = r.
    for (std::size_t i = 0; i < hist.point_steps.size(); ++i) {
      const C target = hist.point_weights[i] * row[hist.point_steps[i]];
      const C* e = &basis.points[i * n];
      for (int l = 0; l < n; ++l) h[l] += conj_mul(e[l], target);
    }
    cholesky_solve(basis.factor, n, h);
    *first = 0;
    *last = n;
  }
  RowResult r;
  for (int l = *first; l < *last; ++l) r.amplification += std::abs(h[l]);
  double worst2 = 0;
  for (std::size_t i = 0; i < hist.point_steps.size(); ++i) {
    C s = row[hist.point_steps[i]];
    const C* e = &basis.points[i * n];
    for (int l = *first; l < *last; ++l) s -= mul(h[l], e[l]);
    worst2 = std::max(worst2, std::norm(s));
  }
  r.error = std::sqrt(worst2);
  return r;
}

SegmentInterpolation interpolate_with(SegmentInterpolator kind, const FieldHistogram& hist, const Basis& basis,
                                      std::span<const double> tau, std::span<const double> times, int nthreads) {
  const int n = static_cast<int>(tau.size());
  const std::int64_t d = static_cast<std::int64_t>(times.size());
  SegmentInterpolation out;
  out.coefficients.resize(static_cast<std::size_t>(d) * n);
  out.first.resize(static_cast<std::size_t>(d));
  out.last.resize(static_cast<std::size_t>(d));
  double worst = 0, amp = 0;
  // Work per row ~ 2·P·L complex operations; parallel only when it pays.
  const double work = static_cast<double>(d) * (2.0 * static_cast<double>(hist.points.size()) * n + 2.0 * hist.bins);
  const int nt = work > 1e6 ? nthreads : 1;
#pragma omp parallel num_threads(nt) reduction(max : worst, amp)
  {
    std::vector<C> row;
#pragma omp for schedule(static)
    for (std::int64_t i = 0; i < d; ++i) {
      const RowResult r = interpolate_row(kind, hist, basis, tau, times[i], &out.coefficients[i * n], &out.first[i],
                                          &out.last[i], row);
      worst = std::max(worst, r.error);
      amp = std::max(amp, r.amplification);
    }
  }
  out.worst_error = worst;
  out.amplification = amp;
  return out;
}

// Distinct times nearest to about 8 targets per segment gap over [t_min, t_max], at most
// kScreenTargets + 1 (sorted, unique).
constexpr int kScreenTargets = 128;
std::vector<double> screen_times(const std::vector<double>& sorted, int segments) {
  if (sorted.size() <= 2) return sorted;
  const int per_gap = 8 * std::max(segments - 1, 2);
  const int targets = std::min(per_gap, kScreenTargets);
  const double t0 = sorted.front(), span = sorted.back() - t0;
  std::vector<double> out;
  out.reserve(static_cast<std::size_t>(targets) + 1);
  for (int k = 0; k <= targets; ++k) {
    // Uniform while that gives 8 per gap; else the golden-ratio sequence, whose offsets within
    // the gaps stay spread for every L (uniform targets would hit the same offsets whenever
    // their count is a multiple of the gaps').
    const double u = per_gap <= kScreenTargets || k == 0 || k == targets
                         ? static_cast<double>(k) / targets
                         : std::fmod(k * 0.6180339887498949, 1.0);
    const double t = t0 + span * u;
    auto it = std::lower_bound(sorted.begin(), sorted.end(), t);
    if (it == sorted.end()) it = std::prev(it);
    if (it != sorted.begin() && t - *std::prev(it) < *it - t) it = std::prev(it);
    out.push_back(*it);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

template <class V>
void require_finite(std::span<const V> v, const char* what, const char* unit) {
  for (std::size_t i = 0; i < v.size(); ++i)
    if (!std::isfinite(v[i])) {
      std::ostringstream os;
      os << "time segmentation: " << what << "[" << i << "] is " << v[i] << ", expected a finite value in " << unit;
      throw Error(ErrorCode::kNonFinite, os.str());
    }
}

// The passes over a field map's N values (or M readout times) below run in nt chunks, chunk t
// the values [N·t/nt, N·(t+1)/nt): the same in every pass, so that a later pass can place what
// an earlier one counted. A pass costs about kPassNsPerValue a value (threads_for_work's
// estimate; a count into a table in cache, a comparison).
constexpr double kPassNsPerValue = 1.0;

int pass_threads(std::int64_t n, int nthreads) {
  return static_cast<int>(std::clamp<std::int64_t>(threads_for_work(kPassNsPerValue * static_cast<double>(n), nthreads),
                                                   1, std::max<std::int64_t>(n, 1)));
}

std::int64_t chunk_begin(std::int64_t n, int nt, int t) { return n / nt * t + n % nt * t / nt; }

// The smallest and largest value (v not empty).
template <class V>
std::pair<double, double> minmax_of(std::span<const V> v, int nt) {
  std::vector<double> lo(static_cast<std::size_t>(nt)), hi(static_cast<std::size_t>(nt));
  const auto n = static_cast<std::int64_t>(v.size());
#pragma omp parallel for num_threads(nt) schedule(static, 1)
  for (int t = 0; t < nt; ++t) {
    const auto [a, b] = std::minmax_element(v.begin() + chunk_begin(n, nt, t), v.begin() + chunk_begin(n, nt, t + 1));
    lo[static_cast<std::size_t>(t)] = static_cast<double>(*a);
    hi[static_cast<std::size_t>(t)] = static_cast<double>(*b);
  }
  return {*std::min_element(lo.begin(), lo.end()), *std::max_element(hi.begin(), hi.end())};
}

// The values of each chunk counted per bin: nt rows of `bins` counts (bin(x) in [0, bins)).
template <class V, class Bin>
std::vector<std::int64_t> chunk_counts(std::span<const V> v, int nt, std::int64_t bins, const Bin& bin) {
  std::vector<std::int64_t> counts(static_cast<std::size_t>(nt * bins), 0);
  const auto n = static_cast<std::int64_t>(v.size());
#pragma omp parallel for num_threads(nt) schedule(static, 1)
  for (int t = 0; t < nt; ++t) {
    std::int64_t* c = counts.data() + t * bins;
    for (std::int64_t j = chunk_begin(n, nt, t), end = chunk_begin(n, nt, t + 1); j < end; ++j)
      ++c[bin(v[static_cast<std::size_t>(j)])];
  }
  return counts;
}

}  // namespace

const char* segment_interpolator_name(SegmentInterpolator i) noexcept {
  switch (i) {
    case SegmentInterpolator::kLeastSquares:
      return "least-squares";
    case SegmentInterpolator::kHanning:
      return "Hanning";
  }
  return "unknown";
}

std::vector<double> segment_times(int segments, double t_min, double t_max) {
  require(segments >= 1, ErrorCode::kInvalidArgument,
          "time segmentation: " + std::to_string(segments) + " segments, expected >= 1");
  if (segments == 1) return {0.5 * (t_min + t_max)};
  std::vector<double> tau(static_cast<std::size_t>(segments));
  for (int l = 0; l < segments; ++l) tau[l] = t_min + (t_max - t_min) * l / (segments - 1);
  tau.back() = t_max;
  return tau;
}

namespace {

template <class V>
FieldHistogram histogram_of(std::span<const V> field, double span, int nthreads) {
  FieldHistogram h;
  if (field.empty()) {
    h.centres = {0.0};
    h.weights = {1.0};
    h.points = {0.0};
    h.centre_steps = h.point_steps = {1};
    h.point_weights = {1.0};
    h.bins = 1;
    return h;
  }
  const int nt = pass_threads(static_cast<std::int64_t>(field.size()), nthreads);
  std::tie(h.omega_min, h.omega_max) = minmax_of(field, nt);
  const double range = h.omega_max - h.omega_min;
  const double phase = range * std::max(span, 0.0);
  h.bins = phase > 0 ? std::clamp<std::int64_t>(static_cast<std::int64_t>(std::ceil(phase / kBinPhase)), kMinBins, kMaxBins)
                     : 1;
  h.width = range / static_cast<double>(h.bins);
  const std::vector<std::int64_t> counts = chunk_counts(field, nt, h.bins, [&h](V x) {
    const std::int64_t b =
        h.width > 0 ? static_cast<std::int64_t>((static_cast<double>(x) - h.omega_min) / h.width) : 0;
    return std::clamp<std::int64_t>(b, 0, h.bins - 1);
  });
  std::vector<std::int64_t> count(counts.begin(), counts.begin() + h.bins);
  for (int t = 1; t < nt; ++t)
    for (std::int64_t b = 0; b < h.bins; ++b)
      count[static_cast<std::size_t>(b)] += counts[static_cast<std::size_t>(t * h.bins + b)];
  const double total = static_cast<double>(field.size());
  const double occupied = static_cast<double>(std::count_if(count.begin(), count.end(), [](auto c) { return c > 0; }));
  auto add_point = [&h](std::int32_t q, double w) {
    if (!h.point_steps.empty() && h.point_steps.back() == q) {  // an edge shared with the bin before
      h.point_weights.back() += w;
      return;
    }
    h.point_steps.push_back(q);
    h.points.push_back(h.omega_min + 0.5 * h.width * q);
    h.point_weights.push_back(w);
  };
  for (std::int64_t b = 0; b < h.bins; ++b) {
    if (count[b] == 0) continue;
    const auto q = static_cast<std::int32_t>(2 * b + 1);
    // Half the histogram's share, half a uniform share of the occupied bins: the fit follows where
    // the voxels are, yet no occupied bin weighs less than 0.5/occupied. With the counts alone a
    // rare extreme (the tails of a field DIFFERENCE's histogram: one pair of 65,536 at its ends)
    // weighed ~1e-5, under the ridge, and the worst-case error stalled there whatever L (R3's
    // difference design, ±195 Hz over 4.1 ms: 0.0146 at L = 128; session 17).
    const double w = 0.5 * static_cast<double>(count[b]) / total + 0.5 / occupied;
    h.centre_steps.push_back(q);
    h.centres.push_back(h.omega_min + 0.5 * h.width * q);
    h.weights.push_back(w);
    if (h.width == 0) {
      add_point(q, w);
      continue;
    }
    add_point(q - 1, 0.25 * w);
    add_point(q, 0.5 * w);
    add_point(q + 1, 0.25 * w);
  }
  return h;
}

}  // namespace

FieldHistogram field_histogram(RealSpan field, double span, int nthreads) {
  const int nt = resolve_cpu_threads(nthreads, "time segmentation: nthreads");
  return field.visit([&](auto v) { return histogram_of(v, span, nt); });
}

namespace {

// The position of t in the sorted table `v` (t is in it), trying hint and hint + 1 first: a
// readout's times come in increasing runs, so the next sample's time is usually the next entry.
std::int32_t find_time(const std::vector<double>& v, double t, std::int32_t hint) {
  const auto n = static_cast<std::int32_t>(v.size());
  if (hint >= 0 && hint < n && v[hint] == t) return hint;
  if (hint + 1 >= 0 && hint + 1 < n && v[hint + 1] == t) return hint + 1;
  return static_cast<std::int32_t>(std::lower_bound(v.begin(), v.end(), t) - v.begin());
}

// Distinct values kept in a sorted table grown by insertion up to this many; past it, the sort of
// all M (an insertion moves up to D values: D² / 2 moves in all).
constexpr std::size_t kMaxInsertedTimes = 8192;

// The distinct values of times[begin, end) in sorted order: a table grown by lookup-or-insert, M
// lookups that mostly hit the hint (a few ns each) instead of sorting all M samples (a readout's
// times repeat over its shots: D, the samples of one shot, is far below M). False, with the
// table part-built, once it would exceed kMaxInsertedTimes.
template <class V>
bool insert_times(std::span<const V> times, std::int64_t begin, std::int64_t end, std::vector<double>& v) {
  std::int32_t hint = -1;
  for (std::int64_t j = begin; j < end; ++j) {
    const auto t = static_cast<double>(times[static_cast<std::size_t>(j)]);
    const std::int32_t i = find_time(v, t, hint);
    if (i < static_cast<std::int32_t>(v.size()) && v[static_cast<std::size_t>(i)] == t) {
      hint = i;
      continue;
    }
    if (v.size() >= kMaxInsertedTimes) return false;
    v.insert(v.begin() + i, t);
    hint = i;
  }
  return true;
}

template <class V>
DistinctTimes distinct_times_of(std::span<const V> times, std::int64_t samples, int nthreads) {
  DistinctTimes d;
  if (times.empty()) {
    d.values = {0.0};
    d.index.assign(static_cast<std::size_t>(samples), 0);
    return d;
  }
  const auto m = static_cast<std::int64_t>(times.size());
  // ~5 ns a sample when the hints hit; threads only where that pays (core/threads.hpp).
  const int nt = static_cast<int>(std::min<std::int64_t>(m, threads_for_work(5.0 * static_cast<double>(m), nthreads)));
  // Each chunk's table (chunk t: the samples [M·t/nt, M·(t+1)/nt)), then their union; the sort of
  // all M when a table outgrows kMaxInsertedTimes.
  std::vector<std::vector<double>> tables(static_cast<std::size_t>(nt));
  std::vector<char> fits(static_cast<std::size_t>(nt), 0);
#pragma omp parallel for num_threads(nt) schedule(static, 1)
  for (int t = 0; t < nt; ++t)
    fits[static_cast<std::size_t>(t)] =
        insert_times(times, chunk_begin(m, nt, t), chunk_begin(m, nt, t + 1), tables[static_cast<std::size_t>(t)]);
  std::vector<double>& v = d.values;
  if (std::all_of(fits.begin(), fits.end(), [](char f) { return f != 0; })) {
    for (const auto& table : tables) v.insert(v.end(), table.begin(), table.end());
  } else {
    v.assign(times.begin(), times.end());
  }
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  require(v.size() <= static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max()), ErrorCode::kTooLarge,
          "time segmentation: " + std::to_string(v.size()) + " distinct readout times, expected < 2^31");
  d.index.resize(times.size());
#pragma omp parallel num_threads(nt)
  {
    std::int32_t h = -1;
#pragma omp for schedule(static)
    for (std::int64_t j = 0; j < m; ++j)
      d.index[static_cast<std::size_t>(j)] = h =
          find_time(v, static_cast<double>(times[static_cast<std::size_t>(j)]), h);
  }
  return d;
}

}  // namespace

DistinctTimes distinct_times(RealSpan times, std::int64_t samples, int nthreads) {
  const int nt = resolve_cpu_threads(nthreads, "time segmentation: nthreads");
  return times.visit([&](auto v) { return distinct_times_of(v, samples, nt); });
}

namespace {

// The order statistics of `values` at the ranks pos (non-decreasing, < N), exactly as a sort
// would give them, in three passes over the data instead of a sort's log2(N): the values counted
// into kSelectBins bins of equal width over [min, max] (the bin index is monotone in the value,
// so bins hold consecutive ranks), then only the bins holding a wanted rank gathered and each
// selected within. A bin of more than kRebinValues holding several wanted ranks is binned again
// over its own range (the same three passes), since selecting them one by one costs a pass over
// the bin each: a 256³ field map has 17 % of its voxels in one of the 65,536 bins and ~43 of 256
// quantiles there.
constexpr std::int64_t kSelectBins = 1 << 16;
constexpr std::size_t kRebinValues = 1 << 15;
constexpr int kMaxRebinDepth = 4;  // bins within bins at most (each level narrows the range 65,536-fold)

// out[i] = the value of rank r[i] of h (r non-decreasing): nth_element from the previous rank on,
// since the values before it are no larger than any after it.
template <class V>
void select_ascending(std::span<V> h, std::span<const std::int64_t> r, double* out) {
  auto from = h.begin();
  for (std::size_t i = 0; i < r.size(); ++i) {
    const auto at = h.begin() + r[i];
    std::nth_element(from, at, h.end());
    out[i] = static_cast<double>(*at);
    from = at;
  }
}

template <class V>
void order_statistics(std::span<const V> values, std::span<const std::int64_t> pos, double* out, int nthreads,
                      int depth) {
  const auto n = static_cast<std::int64_t>(values.size());
  const int nt = pass_threads(n, nthreads);
  const auto [lo, hi] = minmax_of(values, nt);
  const double scale = static_cast<double>(kSelectBins) / (hi - lo);
  if (!(hi > lo)) {  // every value the same
    std::fill(out, out + pos.size(), lo);
    return;
  }
  if (!std::isfinite(scale)) {  // a range of subnormal width, which the bins cannot split
    std::vector<V> h(values.begin(), values.end());
    select_ascending(std::span<V>(h), pos, out);
    return;
  }
  const auto bin = [lo, scale](V x) {
    return std::min<std::int64_t>(kSelectBins - 1, static_cast<std::int64_t>((static_cast<double>(x) - lo) * scale));
  };
  const std::vector<std::int64_t> counts = chunk_counts(values, nt, kSelectBins, bin);
  std::vector<std::int64_t> start(static_cast<std::size_t>(kSelectBins) + 1, 0);  // each bin's first rank
  for (int t = 0; t < nt; ++t)
    for (std::int64_t k = 0; k < kSelectBins; ++k)
      start[static_cast<std::size_t>(k) + 1] += counts[static_cast<std::size_t>(t * kSelectBins + k)];
  for (std::int64_t k = 0; k < kSelectBins; ++k) start[static_cast<std::size_t>(k) + 1] += start[static_cast<std::size_t>(k)];
  // The wanted ranks of one bin are a run of pos (both are monotone); each such bin gets a slot
  // and its place in `held`.
  struct Run {
    std::int64_t bin = 0, held = 0;
    std::size_t first = 0, last = 0;  // pos[first, last)
  };
  std::vector<std::int32_t> slot(static_cast<std::size_t>(kSelectBins), -1);
  std::vector<Run> runs;
  std::int64_t total = 0;
  for (std::size_t i = 0; i < pos.size(); ++i) {
    const auto k = static_cast<std::int64_t>(std::upper_bound(start.begin(), start.end(), pos[i]) - start.begin() - 1);
    if (!runs.empty() && runs.back().bin == k) {
      runs.back().last = i + 1;
      continue;
    }
    slot[static_cast<std::size_t>(k)] = static_cast<std::int32_t>(runs.size());
    runs.push_back({k, total, i, i + 1});
    total += start[static_cast<std::size_t>(k) + 1] - start[static_cast<std::size_t>(k)];
  }
  // Chunk t writes its values of run s from cursor[t·R + s] on (the chunks' counts in order).
  const auto nruns = static_cast<std::int64_t>(runs.size());
  std::vector<std::int64_t> cursor(static_cast<std::size_t>(nt * nruns));
  for (std::int64_t s = 0; s < nruns; ++s) {
    std::int64_t at = runs[static_cast<std::size_t>(s)].held;
    for (int t = 0; t < nt; ++t) {
      cursor[static_cast<std::size_t>(t * nruns + s)] = at;
      at += counts[static_cast<std::size_t>(t * kSelectBins + runs[static_cast<std::size_t>(s)].bin)];
    }
  }
  std::vector<V> held(static_cast<std::size_t>(total));
#pragma omp parallel for num_threads(nt) schedule(static, 1)
  for (int t = 0; t < nt; ++t) {
    std::int64_t* c = cursor.data() + t * nruns;
    for (std::int64_t j = chunk_begin(n, nt, t), end = chunk_begin(n, nt, t + 1); j < end; ++j) {
      const V x = values[static_cast<std::size_t>(j)];
      if (const std::int32_t s = slot[static_cast<std::size_t>(bin(x))]; s >= 0)
        held[static_cast<std::size_t>(c[s]++)] = x;
    }
  }
  std::vector<std::int64_t> rank;
  for (const Run& run : runs) {
    const std::int64_t first_rank = start[static_cast<std::size_t>(run.bin)];
    const std::span<V> h(held.data() + run.held,
                         static_cast<std::size_t>(start[static_cast<std::size_t>(run.bin) + 1] - first_rank));
    rank.clear();
    for (std::size_t i = run.first; i < run.last; ++i) rank.push_back(pos[i] - first_rank);
    if (rank.size() > 1 && h.size() > kRebinValues && depth < kMaxRebinDepth)
      order_statistics(std::span<const V>(h), std::span<const std::int64_t>(rank), out + run.first, nthreads,
                       depth + 1);
    else
      select_ascending(h, std::span<const std::int64_t>(rank), out + run.first);
  }
}

}  // namespace

std::vector<double> field_difference_sample(RealSpan field, int quantiles, int nthreads) {
  require(quantiles >= 1, ErrorCode::kInvalidArgument,
          "time segmentation: " + std::to_string(quantiles) + " quantiles, expected >= 1");
  const int nt = resolve_cpu_threads(nthreads, "time segmentation: nthreads");
  if (field.empty()) return {};
  const std::size_t n = field.size(), q = std::min<std::size_t>(n, static_cast<std::size_t>(quantiles));
  std::vector<std::int64_t> pos(q);
  for (std::size_t i = 0; i < q; ++i) pos[i] = static_cast<std::int64_t>(q == 1 ? 0 : i * (n - 1) / (q - 1));
  std::vector<double> at(q);  // the sorted field's values there
  field.visit([&](auto v) {
    order_statistics(v, std::span<const std::int64_t>(pos), at.data(), nt, 0);
    return 0;
  });
  std::vector<double> d;
  d.reserve(q * q);
  for (double a : at)
    for (double b : at) d.push_back(a - b);
  return d;
}

double least_squares_ridge(double accuracy) {
  return std::max(kMinRidge, (kRidgeFraction * accuracy) * (kRidgeFraction * accuracy));
}

SegmentInterpolation interpolate_segments(SegmentInterpolator kind, const FieldHistogram& hist,
                                          std::span<const double> segment_times, std::span<const double> times,
                                          double ridge) {
  const Basis basis = make_basis(kind, hist, segment_times, ridge);
  return interpolate_with(kind, hist, basis, segment_times, times, resolve_cpu_threads(0, "time segmentation"));
}

TimeSegmentationDesign design_time_segmentation(const TimeSegmentationRequest& r) {
  const auto start = std::chrono::steady_clock::now();
  const std::string who = "time segmentation: ";
  require(std::isfinite(r.accuracy) && r.accuracy > 0, ErrorCode::kInvalidArgument,
          who + "accuracy is " + number(r.accuracy) + ", expected a finite value > 0 (e.g. 1e-3)");
  require(r.max_segments >= 1 && r.max_segments <= kMaxSegmentsLimit, ErrorCode::kInvalidArgument,
          who + "max_segments is " + std::to_string(r.max_segments) + ", expected 1 … " +
              std::to_string(kMaxSegmentsLimit));
  require(r.segments >= 0 && r.segments <= kMaxSegmentsLimit, ErrorCode::kInvalidArgument,
          who + "segments is " + std::to_string(r.segments) + ", expected 0 (choose from the accuracy) or 1 … " +
              std::to_string(kMaxSegmentsLimit));
  require(r.interpolator == SegmentInterpolator::kLeastSquares || r.interpolator == SegmentInterpolator::kHanning,
          ErrorCode::kInvalidArgument,
          who + "interpolator is " + std::to_string(static_cast<int>(r.interpolator)) +
              ", expected kLeastSquares or kHanning");
  require(r.times.empty() || static_cast<std::int64_t>(r.times.size()) == r.samples, ErrorCode::kShapeMismatch,
          who + "times has " + std::to_string(r.times.size()) + " values, expected " + std::to_string(r.samples) +
              " (one per sample) or none");
  r.field.visit([](auto v) {
    require_finite(v, "field", "rad/s");
    return 0;
  });
  r.times.visit([](auto v) {
    require_finite(v, "times", "seconds");
    return 0;
  });
  const int nthreads = resolve_cpu_threads(r.nthreads, "time segmentation: nthreads");

  TimeSegmentationDesign d;
  d.interpolator = r.interpolator;
  d.accuracy = r.accuracy;
  d.times = distinct_times(r.times, r.samples, nthreads);
  const double t_min = d.times.values.front(), t_max = d.times.values.back();
  const FieldHistogram hist = field_histogram(r.field, t_max - t_min, nthreads);
  d.field_bins = static_cast<std::int64_t>(hist.centres.size());
  const std::string kind = segment_interpolator_name(r.interpolator);
  const std::string problem = "field " + number(hist.omega_min / (2 * std::numbers::pi)) + " … " +
                              number(hist.omega_max / (2 * std::numbers::pi)) + " Hz, readout " +
                              number((t_max - t_min) * 1e3) + " ms";

  const double ridge = least_squares_ridge(r.accuracy);
  auto design_at = [&](int l) {
    d.segments = l;
    d.segment_times = segment_times(l, t_min, t_max);
    const Basis basis = make_basis(r.interpolator, hist, d.segment_times, ridge);
    d.interpolation = interpolate_with(r.interpolator, hist, basis, d.segment_times, d.times.values, nthreads);
  };
  if ((hist.width == 0 || t_max == t_min) && r.segments <= 1) {
    // One field value ω (or none): exp(−iωt) = exp(−iω(t − τ_0))·exp(−iωτ_0) exactly, with L = 1;
    // one readout time: t = τ_0 and h = 1.
    d.segments = 1;
    d.segment_times = segment_times(1, t_min, t_max);
    const double w = hist.centres.front(), tau = d.segment_times.front();
    const std::size_t n = d.times.values.size();
    auto& in = d.interpolation;
    in.coefficients.resize(n);
    in.first.assign(n, 0);
    in.last.assign(n, 1);
    for (std::size_t i = 0; i < n; ++i) in.coefficients[i] = expmi(w * (d.times.values[i] - tau));
    in.worst_error = 0;
    in.amplification = 1;
    d.forced = r.segments == 1;
    d.reason = std::string("L = 1: ") +
               (t_max == t_min ? "a single readout time" : r.field.empty() ? "no field map" : "a constant field map") +
               ", the phase factor is exact with one segment";
  } else if (r.segments > 0) {
    design_at(r.segments);
    d.forced = true;
    d.reason = "L = " + std::to_string(r.segments) + " given; " + kind + " worst-case phase error " +
               number(d.interpolation.worst_error) + " (" + problem + ")";
  } else {
    double best = std::numeric_limits<double>::infinity();
    int best_l = 1;
    bool found = false;
    for (int l = 1; l <= r.max_segments && !found; ++l) {
      const auto tau = segment_times(l, t_min, t_max);
      const Basis basis = make_basis(r.interpolator, hist, tau, ridge);
      const auto probes = screen_times(d.times.values, l);
      const double screened = interpolate_with(r.interpolator, hist, basis, tau, probes, nthreads).worst_error;
      if (screened < best) {
        best = screened;
        best_l = l;
      }
      if (screened > r.accuracy) continue;
      d.segments = l;
      d.segment_times = tau;
      d.interpolation = interpolate_with(r.interpolator, hist, basis, tau, d.times.values, nthreads);
      found = d.interpolation.worst_error <= r.accuracy;
    }
    if (!found) {
      // The full error at the L whose screen came closest (the screen is a lower bound).
      design_at(best_l);
      throw Error(ErrorCode::kInvalidArgument,
                  who + "no L in 1 … " + std::to_string(r.max_segments) + " reaches the requested accuracy " +
                      number(r.accuracy) + " (worst-case relative phase error of the " + kind +
                      " interpolator over the field map's histogram and the readout times; " + problem +
                      "): the best reached is " + number(d.interpolation.worst_error) + " at L = " +
                      std::to_string(best_l) + ". Expected a looser accuracy, a larger max_segments (up to " +
                      std::to_string(kMaxSegmentsLimit) + ")" +
                      (r.interpolator == SegmentInterpolator::kHanning ? ", the least-squares interpolator" : "") +
                      " or the exact DftEncoding");
    }
    d.reason = "L = " + std::to_string(d.segments) + ", the smallest of 1 … " + std::to_string(r.max_segments) +
               " whose " + kind + " worst-case phase error " + number(d.interpolation.worst_error) +
               " <= accuracy " + number(r.accuracy) + " (" + problem + ", " + std::to_string(d.field_bins) +
               " histogram bins, " + std::to_string(d.times.values.size()) + " distinct times)";
  }
  d.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return d;
}

}  // namespace fieldft::core
