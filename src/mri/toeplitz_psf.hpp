// The point-spread function of the NUFFT encoding model on the embedding grid, shared by the
// Toeplitz normals (toeplitz.cpp, field_toeplitz.cpp): f[q] = Σ_j c_j exp(+i q·x_j) with L_d
// modes per axis (2N_d, or N_d on a periodic axis) in FFT order (modeord 1) at the encoding's
// own points x_{j,d} = 2π k_{j,d} / N_d, i.e. p(d) = Σ_j c_j exp(+2πi k_j·d/N) at offset d
// (index d mod L_d): ONE type 1 plan, its points set once, executed for each set of strengths c.
// Also the detection of periodic axes and the geometry both normals (and NufftEncoding's cost
// model) build from it. Internal.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <complex>
#include <cstdint>
#include <numbers>
#include <span>
#include <vector>

#include "core/toeplitz.hpp"
#include "fieldft/context.hpp"
#include "fieldft/mri/encoding.hpp"
#include "fieldft/nufft.hpp"
#include "op/host_loops.hpp"

namespace fieldft::mri::detail {

// An axis is periodic (core::ToeplitzGeometry) when every k_{j,d} lies within
// periodic_tolerance(eps) of an integer, eps the kernel's type 1 tolerance. Why that bound: the
// periodic kernel uses p(d − N_d) = p(d) for the offsets d in [N_d/2, N_d) (or the other half),
// where the exact value differs by the factor exp(−2πi k_{j,d}) per sample, |1 − exp(−2πiδ_j)|
// ≤ 2π|δ_j| with δ_j = k_{j,d} − round(k_{j,d}); so the kernel's extra error is at most
// 2π·max|δ|·Σ_j|c_j| = eps/10 relative to Σ_j|c_j| (= p(0) for weights >= 0): an order below the
// type 1 transform's own eps, which the kernel keeps. In practice stacks store k_z as exact
// integers (mri::spiral_trajectory and radial stacks: k_z = p − P/2), which pass at any eps;
// near-integers from physical
// units rounded in float (|δ| ~ 1e-7·|k|) fail at the default eps 1e-5 and keep the 2N axis.
inline double periodic_tolerance(double eps) { return eps / (20 * std::numbers::pi); }

// Whether every sample of [from, to) passes, ok(begin, end) checking a range: the first
// kSerialSamples in order (a non-Cartesian axis fails at its first samples), the rest in chunks
// over the context's threads (op::host; serial for a null context), each chunk stopping at its
// first failure. The scans below read every sample of a stack (16.7 M at 256³) at set-up.
inline constexpr std::int64_t kSerialSamples = 4096;
template <class F>
bool all_samples(const Context* context, std::int64_t from, std::int64_t to, const F& ok) {
  const std::int64_t head = std::min(to, from + kSerialSamples), rest = to - head;
  if (!ok(from, head)) return false;
  const int nt = context && rest > 0 ? op::host::team_size(*context, rest) : 1;
  if (nt <= 1) return ok(head, to);
  std::vector<char> good(static_cast<std::size_t>(nt), 1);
  op::host::for_each_index(*context, nt, rest, [&](std::int64_t t) {
    good[static_cast<std::size_t>(t)] = ok(head + rest * t / nt, head + rest * (t + 1) / nt);
  });
  return std::all_of(good.begin(), good.end(), [](char g) { return g != 0; });
}

// Which axes of e are periodic at the kernel's eps; enabled = false (ToeplitzOptions::periodic_axes):
// none. O(M) per axis, stopping at the first off-grid sample (at once for a non-Cartesian axis);
// context: whose threads scan (null: this one).
template <class T>
std::array<bool, 3> periodic_axes(const Encoding<T>& e, double eps, bool enabled, const Context* context = nullptr) {
  std::array<bool, 3> p{false, false, false};
  if (!enabled) return p;
  const double tol = periodic_tolerance(eps);
  for (int d = 0; d < e.dim(); ++d) {
    const auto k = e.k(d);
    p[d] = all_samples(context, 0, static_cast<std::int64_t>(k.size()), [&](std::int64_t begin, std::int64_t end) {
      for (std::int64_t j = begin; j < end; ++j) {
        const double v = static_cast<double>(k[static_cast<std::size_t>(j)]);
        if (!(std::abs(v - std::nearbyint(v)) <= tol)) return false;  // NaN fails too
      }
      return true;
    });
  }
  return p;
}

// Whether the last axis of e is a stack (core::ToeplitzGeometry::stacked) for point-spread
// functions whose strengths depend on a sample only through its weight (weights, empty: all 1)
// and, with use_times, its readout time. Checked on the sample order of a stack whose planes are
// the slowest (mri::spiral_trajectory's and radial_trajectory's layout, and ISMRMRD's partitions
// outermost): the M samples are N_last blocks of M/N_last; each block has one k on the last axis,
// the N_last of them distinct integers mod N_last, and every block repeats the first one's other
// coordinates, weights and times exactly. Any other order, or any difference, keeps the last
// axis transformed (the same operator, slower). enabled = false
// (ToeplitzOptions::stacked_axis): never. O(M·dim), stopping at the first difference (per
// chunk of the context's threads, as periodic_axes).
template <class T>
bool stacked_last_axis(const Encoding<T>& e, const std::array<bool, 3>& periodic, std::span<const T> weights,
                       bool use_times, bool enabled, const Context* context = nullptr) {
  const int last = e.dim() - 1;
  if (!enabled || e.dim() < 2 || !periodic[static_cast<std::size_t>(last)]) return false;
  const std::int64_t planes = e.grid()[static_cast<std::size_t>(last)], m = e.num_samples();
  if (planes < 2 || m == 0 || m % planes != 0) return false;
  const std::int64_t s = m / planes;
  const auto kl = e.k(last);
  std::vector<char> seen(static_cast<std::size_t>(planes), 0);
  for (std::int64_t p = 0; p < planes; ++p) {
    const T k0 = kl[static_cast<std::size_t>(p * s)];
    const auto r = static_cast<std::int64_t>(std::nearbyint(static_cast<double>(k0)));
    char& hit = seen[static_cast<std::size_t>(((r % planes) + planes) % planes)];
    if (hit) return false;
    hit = 1;
  }
  // Sample j against the first of its block (one k on the last axis), or against sample j mod s
  // of the first block (the other coordinates, weights and times), block by block.
  const auto all_equal = [&](std::span<const T> v, bool within_block) {
    return all_samples(context, within_block ? 0 : s, m, [&](std::int64_t begin, std::int64_t end) {
      for (std::int64_t j = begin; j < end;) {
        const std::int64_t block = j - j % s, stop = std::min(end, block + s);
        const T* x = v.data();
        if (within_block) {
          const T first = x[block];
          for (; j < stop; ++j)
            if (!(x[j] == first)) return false;
        } else {
          for (; j < stop; ++j)
            if (!(x[j] == x[j - block])) return false;
        }
      }
      return true;
    });
  };
  if (!all_equal(kl, true)) return false;
  const auto same_blocks = [&](std::span<const T> v) { return all_equal(v, false); };
  for (int d = 0; d < last; ++d)
    if (!same_blocks(e.k(d))) return false;
  if (!weights.empty() && !same_blocks(weights)) return false;
  if (use_times && !e.times().empty() && !same_blocks(e.times())) return false;
  return true;
}

// The engine's geometry for e with B images, the given periodic axes, and whether its last axis
// is a stack.
template <class T>
core::ToeplitzGeometry toeplitz_geometry(const Encoding<T>& e, std::int64_t batch, std::array<bool, 3> periodic,
                                         bool stacked = false) {
  core::ToeplitzGeometry g;
  g.dim = e.dim();
  g.n = e.grid();
  g.periodic = periodic;
  g.stacked = stacked;
  g.batch = batch;
  return g;
}

// On a stacked geometry (core::ToeplitzGeometry::stacked) the transform is one dimension lower:
// the first plane's M/N_last samples (the others repeat them) onto the plane's L_d modes, with
// strengths N_last·c_j: p at offset 0 along the stack is N_last times the plane's, and zero
// elsewhere, so the engine needs only that plane (its psf_buffer holds kernel_cells() values).
template <class T>
class PsfTransform {
 public:
  // g: the engine's geometry (its padded() grid are the modes).
  PsfTransform(const Encoding<T>& e, const core::ToeplitzGeometry& g, const Context& context, double eps,
               nufft::Options options)
      : dims_(g.stacked ? g.dim - 1 : g.dim),
        planes_(g.stacked ? g.n[static_cast<std::size_t>(g.dim - 1)] : 1),
        plan_(1, modes(g, dims_), +1, 1, eps, context, with_modeord(options)) {
    const std::int64_t m = e.num_samples() / planes_;  // the first plane's samples on a stack
    const T* p[3] = {nullptr, nullptr, nullptr};
    for (int d = 0; d < dims_; ++d) {  // in double, as NufftEncoding computes its points
      const auto k = e.k(d);
      const double scale = 2 * std::numbers::pi / static_cast<double>(e.grid()[d]);
      x_[d].resize(static_cast<std::size_t>(m));
      T* x = x_[d].data();
      op::host::for_each_index(context, m, m, [&](std::int64_t j) { x[j] = static_cast<T>(scale * static_cast<double>(k[j])); });
      p[d] = x_[d].data();
    }
    plan_.set_points(m, p[0], p[1], p[2]);
  }
  // out (context memory, the engine's psf_buffer: ∏ L_d values, a plane's on a stack) = f for the
  // M strengths c (host memory; a device plan stages them and waits for the result). On a stack
  // only the first plane's strengths are read.
  void execute(const std::complex<T>* c, std::complex<T>* out) {
    if (planes_ == 1) {
      plan_.execute(c, out);
      return;
    }
    const std::size_t m = x_[0].size();
    scaled_.resize(m);
    const T f = static_cast<T>(planes_);
    for (std::size_t j = 0; j < m; ++j) scaled_[j] = c[j] * f;
    plan_.execute(scaled_.data(), out);
  }

 private:
  static std::vector<std::int64_t> modes(const core::ToeplitzGeometry& g, int dims) {
    const auto l = g.padded();
    return std::vector<std::int64_t>(l.begin(), l.begin() + dims);
  }
  static nufft::Options with_modeord(nufft::Options o) {
    o.modeord = 1;
    return o;
  }
  int dims_;
  std::int64_t planes_;  // N_last on a stack, else 1
  std::vector<T> x_[3];
  std::vector<std::complex<T>> scaled_;  // a stack's first-plane strengths times N_last
  nufft::Plan<T> plan_;
};

}  // namespace fieldft::mri::detail
