#include "cpu/sorted_points.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "fieldft/detail/fold.hpp"
#include "fieldft/detail/hd.hpp"
#include "fieldft/detail/kernel.hpp"
#include "fieldft/error.hpp"

namespace fieldft::cpu {

namespace {

// ⌊a / b⌋ for integers 0 <= a < 2^52 held in doubles, without an integer division (tens of
// cycles, not pipelined): the quotient through the reciprocal is off by at most one, which one
// step corrects. All in double, so that the loops below vectorise.
struct Divider {
  double b, inv;
  explicit Divider(std::int64_t divisor) : b(static_cast<double>(divisor)), inv(1.0 / b) {}
  double operator()(double a) const {
    double q = std::floor(a * inv);
    q -= static_cast<double>(q * b > a);
    q += static_cast<double>((q + 1.0) * b <= a);
    return q;
  }
};

// A point's first cell and Horner variable in one dimension (detail::kernel_start and
// horner_arg, written so that loops over points vectorise).
template <class T, class C>
inline void start_and_arg(C x, std::int64_t nf, int w, std::int32_t& i0_out, T& t_out) {
  const double u = detail::fold_rescale(static_cast<double>(x), nf);
  const double i0 = std::ceil(u - 0.5 * w);
  i0_out = static_cast<std::int32_t>(i0);
  t_out = static_cast<T>(detail::horner_arg(i0 - u, w));
}

// The sort in three passes, each of which writes to few places at once (a counting sort straight
// by the full bin key scatters every point to one of ~10^4 bins in each of 2D + 1 arrays; those
// writes missed the caches nearly every time and took half of set_points):
//   1. each point's slab class (3 per slab) and per-thread histograms of it;
//   2. the caller's index and coordinates copied into slab-class order (~10^2 destinations);
//   3. per slab class, in parallel: a counting sort by tile within the class's own range, as a
//      local permutation (its ~10^2-10^3 destinations stay in cache); then the permutation and
//      the first cell and Horner variable of every dimension written in order, gathered from a
//      copy of the class's range (in cache too).
// Every pass is stable and the per-thread chunks of pass 1 and 2 are contiguous and in order, so
// the result is the stable sort by (slab class, tile) whatever the thread count.
template <int D, class T, class C>
void sort_points_d(const Grid& g, std::array<int, 3> bins, std::int64_t m, const C* const* coords, int nthreads,
                   SortedPoints<T>& out) {
  using SP = SortedPoints<T>;
  constexpr int slow = D - 1;
  const int w = g.width;
  // Slabs: as many as fit with thickness >= bins[slow], boundaries spread evenly so that every
  // slab is at least that thick (a point then reaches at most its two neighbour slabs).
  const std::int64_t nfs = g.nf[slow];
  const std::int64_t nslab = std::max<std::int64_t>(1, nfs / std::max(bins[slow], 1));
  out.slab_lo.resize(nslab + 1);
  for (std::int64_t s = 0; s <= nslab; ++s) out.slab_lo[s] = s * nfs / nslab;
  std::array<std::int64_t, 2> nbins{1, 1};
  for (int d = 0; d < slow; ++d) nbins[d] = (g.nf[d] + bins[d] - 1) / bins[d];
  // Slab classes and tiles are held in 32-bit integers: nclass < 1.5·2^30 always (nfs < 2^31,
  // slabs at least w >= 2 thick); ntiles is at most a plane of the fine grid.
  const std::int64_t nclass = 3 * nslab, ntiles = nbins[0] * nbins[1], nkeys = nclass * ntiles;
  require(ntiles < (std::int64_t(1) << 31), ErrorCode::kTooLarge,
          "set_points: " + std::to_string(ntiles) + " bins per plane of the fine grid exceed 2^31; use larger bin_size");
  for (int d = 0; d < 2; ++d) {
    out.tile_size[d] = d < slow ? bins[d] : 1;
    out.tile_count[d] = nbins[d];
  }

  // Resizing to the size of the last set_points neither allocates nor writes; BigVector leaves
  // new entries unwritten (every entry is written below).
  out.m = m;
  out.perm.resize(m);
  for (int d = 0; d < 3; ++d) {
    out.i0[d].resize(d < D ? m : 0);
    out.t[d].resize(d < D ? m : 0);
  }
  // Work arrays: the outputs' own storage where the types allow. The slab classes (pass 1, 2)
  // live in i0[0], the indices in class order in perm and the coordinates in class order in t
  // (pass 2, 3); pass 3 writes a class's outputs over the same range of these arrays, so it
  // copies that range aside first. Only coordinates of another type than T (type 3 of a float
  // plan) need an array of their own.
  auto coord_storage = [&](int d) -> C* {
    if constexpr (std::is_same_v<C, T>) {
      return out.t[d].data();
    } else {
      out.ws_coord_double[d].resize(d < D ? m : 0);
      return out.ws_coord_double[d].data();
    }
  };
  C* xc[3] = {coord_storage(0), coord_storage(1), coord_storage(2)};

  const int nt = static_cast<int>(std::max<std::int64_t>(1, std::min<std::int64_t>(nthreads, m / 4096 + 1)));
  auto chunk = [&](int t) { return std::pair<std::int64_t, std::int64_t>{m * t / nt, m * (t + 1) / nt}; };
  const Divider slab_of(nfs);
  std::uint32_t* cls_of = reinterpret_cast<std::uint32_t*>(out.i0[0].data());  // int32: may alias
  std::vector<std::int64_t> counts(static_cast<std::size_t>(nt) * nclass);

  // Pass 1: slab class = 3·slab + (low edge, interior, high edge). Slab s is the planes
  // [⌊s·nfs/nslab⌋, ⌊(s+1)·nfs/nslab⌋), so cell l is in slab ⌊((l+1)·nslab − 1)/nfs⌋.
  const double nslab_d = static_cast<double>(nslab), nfs_d = static_cast<double>(nfs);
  const Divider by_nslab(nslab);
#pragma omp parallel for num_threads(nt) schedule(static, 1)
  for (int t = 0; t < nt; ++t) {
    auto [a, b] = chunk(t);
    std::int64_t* c = counts.data() + static_cast<std::size_t>(t) * nclass;
    std::fill(c, c + nclass, 0);
    FIELDFT_SIMD
    for (std::int64_t j = a; j < b; ++j) {
      const double u = detail::fold_rescale(static_cast<double>(coords[slow][j]), nfs);
      const double s = slab_of((std::floor(u) + 1.0) * nslab_d - 1.0);
      const double lo_s = by_nslab(s * nfs_d), hi_s = by_nslab((s + 1.0) * nfs_d);
      const double i0 = std::ceil(u - 0.5 * w);  // detail::kernel_start
      // kLowEdge (0) where the footprint starts below the slab, else kInterior (1) or kHighEdge (2)
      static_assert(SP::kLowEdge == 0 && SP::kInterior == 1 && SP::kHighEdge == 2);
      const double edge = (1.0 + static_cast<double>(i0 + w > hi_s)) * static_cast<double>(i0 >= lo_s);
      cls_of[j] = static_cast<std::uint32_t>(static_cast<std::int32_t>(3.0 * s + edge));
    }
    for (std::int64_t j = a; j < b; ++j) ++c[cls_of[j]];
  }
  out.class_begin.resize(nclass + 1);
  std::int64_t* class_begin = out.class_begin.data();
  std::int64_t run = 0;
  for (std::int64_t k = 0; k < nclass; ++k) {
    class_begin[k] = run;
    for (int t = 0; t < nt; ++t) {
      std::int64_t& c = counts[static_cast<std::size_t>(t) * nclass + k];
      const std::int64_t n = c;
      c = run;
      run += n;
    }
  }
  class_begin[nclass] = run;

  // Pass 2: indices and coordinates into slab-class order.
  std::int64_t* idx = out.perm.data();
#pragma omp parallel for num_threads(nt) schedule(static, 1)
  for (int t = 0; t < nt; ++t) {
    auto [a, b] = chunk(t);
    std::int64_t* c = counts.data() + static_cast<std::size_t>(t) * nclass;
    for (std::int64_t j = a; j < b; ++j) {
      const std::int64_t p = c[cls_of[j]]++;
      idx[p] = j;
      for (int d = 0; d < D; ++d) xc[d][p] = coords[d][j];
    }
  }

  // Pass 3: per slab class, by tile (x bin fastest, then y bin).
  out.bin_begin.resize(nkeys + 1);
  std::int64_t* bin_begin = out.bin_begin.data();
  bin_begin[nkeys] = m;
  std::int64_t* perm = out.perm.data();
  std::int32_t* i0_out[3] = {out.i0[0].data(), out.i0[1].data(), out.i0[2].data()};
  T* t_out[3] = {out.t[0].data(), out.t[1].data(), out.t[2].data()};
  const Divider bin_of[2] = {Divider(bins[0]), Divider(D == 3 ? bins[1] : 1)};
  const double nbins_d[2] = {static_cast<double>(nbins[0]), static_cast<double>(nbins[1])};
  const std::int64_t nf[3] = {g.nf[0], g.nf[1], g.nf[2]};
#pragma omp parallel num_threads(nt)
  {
    std::vector<std::int64_t> pos(static_cast<std::size_t>(ntiles));
    std::vector<std::uint32_t> tile, local;  // per point of the class: its tile; by sorted position: its place in the class
    std::vector<std::int64_t> index_copy;
    std::vector<C> coord_copy;
#pragma omp for schedule(dynamic, 1)
    for (std::int64_t k = 0; k < nclass; ++k) {
      const std::int64_t a = class_begin[k], b = class_begin[k + 1];
      std::fill(pos.begin(), pos.end(), 0);
      if constexpr (D > 1) {
        tile.resize(static_cast<std::size_t>(b - a));
        std::uint32_t* tl = tile.data() - a;  // NOLINT: indexed by q in [a, b)
        FIELDFT_SIMD
        for (std::int64_t q = a; q < b; ++q) {
          double tk = 0;
          for (int d = slow - 1; d >= 0; --d)
            tk = tk * nbins_d[d] + bin_of[d](std::floor(detail::fold_rescale(static_cast<double>(xc[d][q]), nf[d])));
          tl[q] = static_cast<std::uint32_t>(static_cast<std::int32_t>(tk));
        }
        for (std::int64_t q = a; q < b; ++q) ++pos[tl[q]];
      } else {
        pos[0] = b - a;
      }
      std::int64_t r = a;
      for (std::int64_t i = 0; i < ntiles; ++i) {
        bin_begin[k * ntiles + i] = r;
        const std::int64_t n = pos[i];
        pos[i] = r;
        r += n;
      }
      // The class's points in tile order: positions within the class (a small array in cache),
      // then every output written in order, gathered from a copy of the class's range (also in
      // cache; the outputs overwrite that range). Scattering the outputs instead wrote 2D + 1
      // arrays at hundreds of places each, nearly every write a cache miss.
      if constexpr (D > 1) {
        const std::int64_t n = b - a;
        local.resize(static_cast<std::size_t>(n));
        std::uint32_t* lp = local.data();
        for (std::int64_t q = 0; q < n; ++q) lp[pos[tile[q]]++ - a] = static_cast<std::uint32_t>(q);
        index_copy.assign(idx + a, idx + b);
        const std::int64_t* ix = index_copy.data();
        FIELDFT_SIMD
        for (std::int64_t p = 0; p < n; ++p) perm[a + p] = ix[lp[p]];
        for (int d = 0; d < D; ++d) {
          coord_copy.assign(xc[d] + a, xc[d] + b);
          const C* x = coord_copy.data();
          std::int32_t* io = i0_out[d] + a;
          T* to = t_out[d] + a;
          FIELDFT_SIMD
          for (std::int64_t p = 0; p < n; ++p) start_and_arg(x[lp[p]], nf[d], w, io[p], to[p]);
        }
      } else {  // one tile: the class's range is in order already, and each output replaces its input
        for (std::int64_t p = a; p < b; ++p) start_and_arg(xc[0][p], nf[0], w, i0_out[0][p], t_out[0][p]);
      }
    }
  }
}

}  // namespace

template <class T, class C>
void sort_points(const Grid& g, std::array<int, 3> bins, std::int64_t m, const C* const* coords,
                 int nthreads, SortedPoints<T>& out) {
  switch (g.dim) {
    case 1: sort_points_d<1>(g, bins, m, coords, nthreads, out); break;
    case 2: sort_points_d<2>(g, bins, m, coords, nthreads, out); break;
    default: sort_points_d<3>(g, bins, m, coords, nthreads, out); break;
  }
}

template void sort_points<float, float>(const Grid&, std::array<int, 3>, std::int64_t, const float* const*, int,
                                        SortedPoints<float>&);
template void sort_points<double, double>(const Grid&, std::array<int, 3>, std::int64_t, const double* const*, int,
                                          SortedPoints<double>&);
template void sort_points<float, double>(const Grid&, std::array<int, 3>, std::int64_t, const double* const*, int,
                                         SortedPoints<float>&);

}  // namespace fieldft::cpu
