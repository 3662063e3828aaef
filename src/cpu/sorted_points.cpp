#include "cpu/sorted_points.hpp"

#include <omp.h>

#include <algorithm>

#include "fieldft/detail/fold.hpp"
#include "fieldft/detail/kernel.hpp"

namespace fieldft::cpu {

template <class T, class C>
void sort_points(const Grid& g, std::array<int, 3> bins, std::int64_t m, const C* const* coords,
                 int nthreads, SortedPoints<T>& out) {
  const int dim = g.dim, slow = dim - 1;
  // Slabs: as many as fit with thickness >= bins[slow], boundaries spread evenly so that every
  // slab is at least that thick (a point then reaches at most its two neighbour slabs).
  const std::int64_t nfs = g.nf[slow];
  const std::int64_t nslab = std::max<std::int64_t>(1, nfs / std::max(bins[slow], 1));
  out.slab_lo.resize(nslab + 1);
  for (std::int64_t s = 0; s <= nslab; ++s) out.slab_lo[s] = s * nfs / nslab;
  std::array<std::int64_t, 3> nbins{1, 1, 1};
  for (int d = 0; d < slow; ++d) nbins[d] = (g.nf[d] + bins[d] - 1) / bins[d];
  nbins[slow] = nslab * 3;  // slab and edge class
  const std::int64_t nkeys = nbins[0] * nbins[1] * nbins[2];

  out.m = m;
  out.perm.resize(m);
  for (int d = 0; d < 3; ++d) {
    out.i0[d].resize(d < dim ? m : 0);  // every entry is written below
    out.t[d].resize(d < dim ? m : 0);
  }
  std::vector<std::int64_t> key(m);
  // Bin key per point, slowest dimension most significant (slab and class, y bin, x bin).
  const std::int64_t* lo = out.slab_lo.data();
  const int w = g.width;
#pragma omp parallel for num_threads(nthreads) schedule(static)
  for (std::int64_t j = 0; j < m; ++j) {
    std::int64_t k = 0;
    for (int d = dim - 1; d >= 0; --d) {
      const double u = detail::fold_rescale(static_cast<double>(coords[d][j]), g.nf[d]);
      const std::int64_t cell = static_cast<std::int64_t>(u);
      std::int64_t b;
      if (d == slow) {
        const std::int64_t s = ((cell + 1) * nslab - 1) / nfs;
        const std::int64_t i0 = detail::kernel_start(u, w).i0;
        const int cls = i0 < lo[s] ? SortedPoints<T>::kLowEdge
                                   : (i0 + w > lo[s + 1] ? SortedPoints<T>::kHighEdge : SortedPoints<T>::kInterior);
        b = 3 * s + cls;
      } else {
        b = cell / bins[d];
      }
      k = k * nbins[d] + b;
    }
    key[j] = k;
  }
  // Stable parallel counting sort: per-thread histograms over static chunks.
  const int nt = static_cast<int>(std::max<std::int64_t>(1, std::min<std::int64_t>(nthreads, m / 4096 + 1)));
  std::vector<std::int64_t> counts(static_cast<std::size_t>(nt) * nkeys, 0);
  auto chunk = [&](int t) { return std::pair<std::int64_t, std::int64_t>{m * t / nt, m * (t + 1) / nt}; };
#pragma omp parallel for num_threads(nt) schedule(static, 1)
  for (int t = 0; t < nt; ++t) {
    auto [a, b] = chunk(t);
    std::int64_t* c = counts.data() + static_cast<std::size_t>(t) * nkeys;
    for (std::int64_t j = a; j < b; ++j) ++c[key[j]];
  }
  std::vector<std::int64_t> key_begin(nkeys + 1, 0);
  std::int64_t run = 0;
  for (std::int64_t k = 0; k < nkeys; ++k) {
    key_begin[k] = run;
    for (int t = 0; t < nt; ++t) {
      std::int64_t& c = counts[static_cast<std::size_t>(t) * nkeys + k];
      const std::int64_t n = c;
      c = run;
      run += n;
    }
  }
  key_begin[nkeys] = run;
  // The scatter pass reads the caller's coordinates in their own order and writes each point's
  // first cell and Horner variable straight to its sorted position: no later gather through the
  // permutation, whose random reads cost more than the bin-ordered writes (docs/benchmarks.md).
  std::int64_t* perm = out.perm.data();
  std::int32_t* i0_out[3] = {out.i0[0].data(), out.i0[1].data(), out.i0[2].data()};
  T* t_out[3] = {out.t[0].data(), out.t[1].data(), out.t[2].data()};
  const std::int64_t* keys = key.data();
#pragma omp parallel for num_threads(nt) schedule(static, 1)
  for (int t = 0; t < nt; ++t) {
    auto [a, b] = chunk(t);
    std::int64_t* c = counts.data() + static_cast<std::size_t>(t) * nkeys;
    const std::int64_t nf[3] = {g.nf[0], g.nf[1], g.nf[2]};
    for (std::int64_t j = a; j < b; ++j) {
      const std::int64_t p = c[keys[j]]++;
      perm[p] = j;
      for (int d = 0; d < dim; ++d) {
        const double u = detail::fold_rescale(static_cast<double>(coords[d][j]), nf[d]);
        const detail::KernelStart ks = detail::kernel_start(u, w);
        i0_out[d][p] = static_cast<std::int32_t>(ks.i0);
        t_out[d][p] = static_cast<T>(detail::horner_arg(ks.offset, w));
      }
    }
  }
  const std::int64_t per_class = nkeys / (3 * nslab);
  out.class_begin.resize(3 * nslab + 1);
  for (std::int64_t c = 0; c <= 3 * nslab; ++c) out.class_begin[c] = key_begin[c * per_class];
  for (int d = 0; d < 2; ++d) {
    out.tile_size[d] = d < slow ? bins[d] : 1;
    out.tile_count[d] = d < slow ? nbins[d] : 1;
  }
  out.bin_begin = std::move(key_begin);
}

template void sort_points<float, float>(const Grid&, std::array<int, 3>, std::int64_t, const float* const*, int,
                                        SortedPoints<float>&);
template void sort_points<double, double>(const Grid&, std::array<int, 3>, std::int64_t, const double* const*, int,
                                          SortedPoints<double>&);
template void sort_points<float, double>(const Grid&, std::array<int, 3>, std::int64_t, const double* const*, int,
                                         SortedPoints<float>&);

}  // namespace fieldft::cpu
