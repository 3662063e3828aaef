// Spreading into warp-owned shared-memory tiles (Method::kOutputDriven): spread_tile, its
// fixed-stride and bulk-row flavours, and the helpers spread_tile_boxes and spread_tc share.
#pragma once

#include "cuda/nufft_device.cuh"

namespace fieldft::cuda {

// Warp-owned tiles, no shared-memory atomics (Method::kOutputDriven). A block is one warp and
// owns the padded tile of one subproblem (tile_len cells per dimension, as spread_subproblem) in
// shared memory. Points come in groups of 32: each lane evaluates one point's kernel weights
// into shared memory; then the warp applies the group's points one after another, its lanes
// covering one point's W^D footprint together: lane = (x offset, row group), XL x offsets by
// 32/XL row groups. The lanes of one point write distinct cells and the points of a warp are
// applied in order (__syncwarp between them), so plain loads and stores suffice where
// spread_subproblem needs a compare-and-swap loop per float (shared memory has no native float
// add). Parallelising over the footprint rather than over points is the output-driven scheme
// of cuFINUFFT 2.4 and NonuniformFFTs.jl (J. I. Polanco); the warp-owned tile is ours.
// In 3D a tile is shared by K warps, warp k owning the tile planes z with z % K == k: each warp
// applies every point of the group to its own planes only, so no cell is written by two warps
// and still no atomics are needed; a block barrier separates groups. One warp per tile left 6-7
// warps per SM (the tile takes 26-30 KiB of shared memory), too few to hide the latency of
// each point's shared-memory round trips (ncu on case B: one instruction per 3.8 cycles per
// warp, 1.7 warps per scheduler).
// The PTX of the bulk rows (sm_90). fence.proxy.async makes a thread's shared-memory stores
// visible to the copy engine; the reductions of a thread form a bulk group, and
// wait_group.read returns once the engine has read their sources.
template <class T>
__device__ inline void bulk_add_row(Cplx<T>* dst, const Cplx<T>* src, int cells) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(src));
  const unsigned bytes = static_cast<unsigned>(cells * sizeof(Cplx<T>));
  if constexpr (sizeof(T) == 4)
    asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%0], [%1], %2;" ::"l"(dst), "r"(s),
                 "r"(bytes)
                 : "memory");
  else
    asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f64 [%0], [%1], %2;" ::"l"(dst), "r"(s),
                 "r"(bytes)
                 : "memory");
#else
  __trap();  // the launcher takes bulk rows on sm_90 and later only
#endif
}

__device__ inline void bulk_fence_shared() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
#endif
}

__device__ inline void bulk_commit_and_wait_read() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("cp.async.bulk.commit_group;" ::: "memory");
  asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
#endif
}

// Adds the rows of a bulk tile (origin[0] and len[0] on whole 16-byte units, bulk_rows_fit) to
// the grid gb: rows first, first + step, ... of the len[1]·len[2] rows, sy cells apart in a
// plane and planes sz apart. Returns once the engine has read them; the caller's stores to the
// tile must have been fenced (bulk_fence_shared) and the block synchronised before.
template <class T>
__device__ inline void bulk_add_tile_rows(const Cplx<T>* tile, const int* origin, const int* len, int sy, int sz,
                                          const DevGrid& g, Cplx<T>* gb, int first, int step) {
  const int nfx = static_cast<int>(g.nf[0]), nfy = static_cast<int>(g.nf[1]), nfz = static_cast<int>(g.nf[2]);
  const int x0 = origin[0] < 0 ? origin[0] + nfx : origin[0];
  const int n1 = len[0] < nfx - x0 ? len[0] : nfx - x0;  // cells before the row wraps
  for (int r = first; r < len[1] * len[2]; r += step) {
    const int lz = r / len[1], ly = r - lz * len[1];
    const int iy = ((origin[1] + ly) % nfy + nfy) % nfy, iz = ((origin[2] + lz) % nfz + nfz) % nfz;
    const Cplx<T>* src = tile + lz * sz + ly * sy;
    Cplx<T>* dst = gb + (static_cast<std::int64_t>(iz) * nfy + iy) * nfx;
    bulk_add_row(dst + x0, src, n1);
    if (n1 < len[0]) bulk_add_row(dst, src + n1, len[0] - n1);
  }
  bulk_commit_and_wait_read();
}

// Strides of a warp tile. A kernel instantiated for fixed bin sizes (BX > 0: the planner's 3D
// default, tile_bins) gets them as constants, so that every cell address of a footprint is a
// base register plus an immediate: with runtime strides each cell costs an IADD3 and a LEA (SASS
// of case B: 45 of 171 instructions per point).
template <class T, int W, int BX, int BY, bool Packed = false, bool Bulk = false>
__device__ inline void tile_strides(const int* len, int& sy, int& sz) {
  if constexpr (BX > 0) {
    constexpr int kLen0 = Bulk ? bulk_tile_len0<T, W>(BX) : tile_len(BX, W);
    constexpr TileStrides kS = warp_tile_strides<T, W, Packed, Bulk>(kLen0, tile_len(BY, W));
    sy = kS.sy;
    sz = kS.sz;
  } else {
    const TileStrides st = warp_tile_strides<T, W, Packed, Bulk>(len[0], len[1]);
    sy = st.sy;
    sz = st.sz;
  }
}

// The global inputs of a warp-tile kernel's points (one per lane, in groups of 32), loaded a
// group ahead of their use: the Horner variables, first cells and strength of step k + 1 while
// step k is spread, and the sorted index perm of step k + 2 (the strength's address depends on
// it). Steps k = b·ngroups + group run over the transforms b and the subproblem's groups. Loaded
// when its group began, the warp waited for global memory twice per group: ncu on case B put a
// third of spread_tile's stall samples in the group set-up, ~20 % at the first uses of t, perm
// and c.
template <class T, int D>
struct PointInputs {
  const DevPoints<T>& p;
  const Cplx<T>* c;
  std::int64_t c_stride, j0, j1;
  int lane, ngroups, nsteps;
  unsigned t_mask;  // dimensions whose Horner variables this warp loads
  bool i0_on;       // whether it loads the first cells
  bool c_on;        // whether it loads perm and the strengths
  T t[D];           // step k's Horner variables,
  int i0[D];        // first footprint cells
  Cplx<T> cv;       // and strength, k the step last fetched
  std::int64_t pn;  // perm of the step after it

  __device__ PointInputs(const DevPoints<T>& pts, const Cplx<T>* strengths, std::int64_t stride, std::int64_t begin,
                         std::int64_t end, int nbatch, int l, unsigned tm = (1u << D) - 1, bool first_cells = true,
                         bool strengths_on = true)
      : p(pts), c(strengths), c_stride(stride), j0(begin), j1(end), lane(l),
        ngroups(static_cast<int>((end - begin + 31) / 32)), nsteps(ngroups * nbatch), t_mask(tm),
        i0_on(first_cells), c_on(strengths_on), pn(0) {
    fetch_perm(0);
  }
  // This lane's point of step k, or -1 (past the subproblem or the last step).
  __device__ std::int64_t point(int k) const {
    if (k >= nsteps) return -1;
    const std::int64_t j = j0 + static_cast<std::int64_t>(k % ngroups) * 32 + lane;
    return j < j1 ? j : -1;
  }
  __device__ void fetch_perm(int k) {
    const std::int64_t j = c_on ? point(k) : -1;
    if (j >= 0) pn = p.perm[j];
  }
  // Step k's inputs (pn holds its perm), then the perm of step k + 1.
  __device__ void fetch(int k) {
    const std::int64_t j = point(k);
    if (j >= 0) {
#pragma unroll
      for (int d = 0; d < D; ++d) {
        if (t_mask >> d & 1u) t[d] = p.t[d][j];
        if (i0_on) i0[d] = p.i0[d][j];
      }
      if (c_on) cv = c[(k / ngroups) * c_stride + pn];
    }
    fetch_perm(k + 1);
  }
};

// Barrier of the K warps of a warp-tile block.
template <int K>
__device__ inline void tile_sync() {
  if constexpr (K == 1) __syncwarp();
  else __syncthreads();
}

// Alignment (bytes) for a vector load of n values of T: the largest power of two up to 16
// dividing their size.
template <class T>
constexpr std::size_t vec_align(int n) {
  std::size_t a = 16;
  while (a > alignof(T) && (sizeof(T) * static_cast<std::size_t>(n)) % a != 0) a /= 2;
  return a;
}

template <class T, int D, int W, int BX = 0, int BY = 0, int K = 1, bool Bulk = false>
__global__ void __launch_bounds__(32 * K)
    spread_tile(DevPoints<T> p, DevGrid g, const T* __restrict__ horner, int degree, const Cplx<T>* __restrict__ c,
                std::int64_t c_stride, Cplx<T>* __restrict__ grid, int nbatch, Subproblems sp) {
  static_assert(K == 1 || D == 3, "several warps per tile own planes: 3D only");
  constexpr bool kPacked = packed_rows<D, W, K>();
  constexpr int XL = kPacked ? W : tile_x_lanes<W>();
  constexpr int RG = 32 / XL;                                           // row groups
  constexpr int kRowsY = D > 1 && !kPacked ? (W + RG - 1) / RG : 1;     // y rows per lane
  constexpr int kRowsZ = D > 2 ? (W + K - 1) / K : 1;                   // footprint planes per warp (at most)
  constexpr int kAccess = kPacked ? (kRowsZ * W + RG - 1) / RG : 1;     // packed: accesses per point
  static_assert(!kPacked || W % K == 0, "packed rows: every warp has the same planes");
  // Planes per load-then-store chunk: at most 16 cells (32 values of T) in flight per lane.
  constexpr int kChunkZ = (16 / kRowsY < 1 ? 1 : (16 / kRowsY > kRowsZ ? kRowsZ : 16 / kRowsY));
  // What a lane reads of one point of the group, three loads (float, 3D, K = 2, W = 6: an
  // LDS.128 broadcast of the head, an LDS.64 each of the strength times x weight and of the y
  // weights). Shared memory bounds the kernel (ncu on case B: 94 % of its pipe, 56 wavefronts
  // per point), and these loads were a quarter of its wavefronts when the strength, offset,
  // last-plane flag and z weights took two 128-bit loads and the z weights of W = 6 three scalar
  // ones (an LDS.128 costs two wavefronts even as a broadcast, a scalar or 64-bit load one).
  // With K warps, warp k applies the footprint planes oz0, oz0 + K, ... (oz0 = (k - l2) mod K)
  // that fall on its tile planes (z % K == k); the last may lie past the footprint, unless K
  // divides W.
  // The head holds the z weights of the warp's planes (0 past the footprint) and, where both
  // fit one 16-byte load, the offset; else the offset is a separate 32-bit load (the head
  // padded to 32 bytes would cost E and F a block per SM).
  // Offset: of the warp's first footprint cell in the tile; where kLastVaries, times 2 plus
  // whether the warp's last plane slot is in the footprint.
  constexpr bool kLastVaries = K > 1 && W % K != 0;
  constexpr bool kOffInHead = (kRowsZ + 1) * sizeof(T) <= 16;
  struct alignas(16) HeadWithOffset {
    T kz[kRowsZ];
    int off;
  };
  struct alignas(vec_align<T>(kRowsZ)) HeadWeights {
    T kz[kRowsZ];
  };
  using Head = std::conditional_t<kOffInHead, HeadWithOffset, HeadWeights>;
  struct alignas(vec_align<T>(kRowsY)) RowWeights {
    T v[kRowsY];  // y weights of rows rg, rg + RG, ... (0 past the footprint)
  };
  // Packed rows: a point's weights of the footprint rows rg, rg + RG, ... of one warp's planes
  // (y weight times z weight; 0 past them), one vector load per lane and point.
  struct alignas(vec_align<T>(kAccess)) PackedWeights {
    T v[kAccess];
  };
  extern __shared__ __align__(16) unsigned char smem_raw[];
  Cplx<T>* tile = reinterpret_cast<Cplx<T>*>(smem_raw);
  // Rows padded by one element: the set-up's stores (lane = point) hit distinct banks. Not in
  // bulk tiles, whose rows of 24 cells at W = 7 leave no room for the padding if a seventh block
  // is to fit an SM (bank conflicts in the set-up's stores instead).
  constexpr int kPad = Bulk ? 0 : 1;
  __shared__ Cplx<T> scx[32][XL + kPad];  // strength times x weight (0 past W)
  __shared__ RowWeights sky[kPacked ? 1 : 32][RG + kPad];
  __shared__ Head shd[K][32];
  __shared__ int soff[kOffInHead ? 1 : K][32];
  // Packed: the y weights of the group's points (rows padded by one value: distinct banks for
  // the set-up's accesses, lane = point), and each warp's row weights built from them.
  __shared__ T syw[kPacked ? 32 : 1][W + 1];
  __shared__ PackedWeights spw[kPacked ? K : 1][kPacked ? 32 : 1][RG];
  // Bulk tiles read the Horner table from global memory (through L1) instead of a staged copy:
  // the 576 bytes it takes at W = 7 in float are what a seventh block per SM lacks on E and F
  // once the tile rows are 24 cells.
  constexpr bool kStageHorner = !Bulk;
  __shared__ alignas(16) T sh[kStageHorner ? horner_smem<T, W>() : 1];
  const T* hz = kStageHorner ? stage_horner<T, W>(horner, degree, sh)
                             : static_cast<const T*>(__builtin_assume_aligned(horner, 16));

  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int s = blockIdx.x;
  int len[3], origin[3];
  bin_tile<D, W>(g, sp.bin[s], len, origin);
  if constexpr (Bulk) {  // rows on whole 16-byte units
    constexpr int A = bulk_cells<T>();
    origin[0] -= (origin[0] % A + A) % A;
    len[0] = bulk_tile_len0<T, W>(g.bin[0]);
  }
  int sy, sz;  // cells between rows, between planes
  tile_strides<T, W, BX, BY, kPacked, Bulk>(len, sy, sz);
  const int ncell = sz * len[2];
  const int ox = lane % XL, rg = lane / XL;
  const bool x_on = ox < W && rg < RG;  // packed: lanes past RG·XL idle
  const int lane_off = ox + rg * sy;
  bool row_on[kRowsY];  // this lane's rows (rg, rg + RG, ...) that fall inside the footprint
#pragma unroll
  for (int r = 0; r < kRowsY; ++r) row_on[r] = x_on && (D > 1 ? rg + r * RG < W : rg == 0);  // 1D: one row
  // Packed: in access a, row group rg covers the warp's footprint row a·RG + rg (y fastest,
  // then the warp's plane slots, K tile planes apart), where acc_on[a]; this lane's cell is
  // acc_cell[a] + the point's offset.
  const int rg_lane = rg < RG ? rg : 0;
  Cplx<T>* acc_cell[kAccess];
  bool acc_on[kAccess];
#pragma unroll
  for (int a = 0; a < kAccess; ++a) {
    const int r = a * RG + rg_lane;
    acc_on[a] = x_on && r < kRowsZ * W;
    acc_cell[a] = tile + ox + (r % W) * sy + (r / W) * K * sz;
  }
  struct PointParams {
    Head h;
    int off;
    Cplx<T> cx;
    RowWeights ky;
    PackedWeights pw;
  };
  auto load_params = [&](int q, PointParams& pp) {
    if constexpr (kPacked) {
      if constexpr (kOffInHead) pp.off = shd[warp][q].off;
      else pp.off = soff[warp][q];
      pp.pw = spw[warp][q][rg_lane];
    } else {
      pp.h = shd[warp][q];
      if constexpr (kOffInHead) pp.off = pp.h.off;
      else pp.off = soff[warp][q];
      pp.ky = sky[q][rg];
    }
    pp.cx = scx[q][ox];
  };
  // The group's set-up is shared out: the Horner weights of dimension d by warp d·K/3. The
  // owner of dimension 0 loads perm and the strengths; the owner of dimension D − 1, kRest, the
  // first cells, and writes the heads.
  constexpr int kRest = D == 3 ? 2 * K / 3 : 0;
  auto owns_dim = [&](int d) { return D < 3 ? warp == 0 : d * K / 3 == warp; };
  unsigned t_mask = 0;
  for (int d = 0; d < D; ++d)
    if (owns_dim(d)) t_mask |= 1u << d;
  PointInputs<T, D> in(p, c, c_stride, sp.begin[s], sp.end[s], nbatch, lane, t_mask, warp == kRest, owns_dim(0));
  for (int i = threadIdx.x; i < ncell; i += 32 * K) tile[i] = Cplx<T>{T(0), T(0)};
  in.fetch(0);
  for (int step = 0; step < in.nsteps; ++step) {
    const int b = step / in.ngroups, group = step - b * in.ngroups;
    {
      const std::int64_t left = in.j1 - in.j0 - 32 * static_cast<std::int64_t>(group);
      const int n = static_cast<int>(left < 32 ? left : 32);
      tile_sync<K>();  // the previous group's weights are no longer read; the zeroed tile is visible
      if (lane < n) {
        const int l2 = D > 2 && warp == kRest ? in.i0[D > 2 ? 2 : 0] - origin[2] : 0;  // >= 0
#pragma unroll
        for (int d = 0; d < D; ++d) {
          if (!owns_dim(d)) continue;
          T k[W];
          horner_weights<T, W>(hz, degree, in.t[d], k);
          if (d == 0) {
#pragma unroll
            for (int x = 0; x < XL; ++x) {
              const T kx = x < W ? k[x < W ? x : 0] : T(0);
              scx[lane][x] = Cplx<T>{in.cv.re * kx, in.cv.im * kx};
            }
          } else if (d == 1 && kPacked) {
#pragma unroll
            for (int y = 0; y < W; ++y) syw[kPacked ? lane : 0][y] = k[y];
          } else if (d == 1) {
#pragma unroll
            for (int r0 = 0; r0 < RG; ++r0)
#pragma unroll
              for (int r = 0; r < kRowsY; ++r) {
                const int oy = r0 + r * RG;
                sky[lane][r0].v[r] = oy < W ? k[oy < W ? oy : 0] : T(0);
              }
          } else {
            // Footprint plane oz lies on tile plane l2 + oz: warp (l2 + oz) % K, slot oz / K.
#pragma unroll
            for (int w = 0; w < K; ++w) shd[w][lane].kz[kRowsZ - 1] = T(0);
#pragma unroll
            for (int oz = 0; oz < W; ++oz) shd[(l2 + oz) % K][lane].kz[oz / K] = k[oz];
          }
        }
        if (warp == kRest) {
          const int l0 = in.i0[0] - origin[0];
          const int l1 = D > 1 ? in.i0[D > 1 ? 1 : 0] - origin[1] : 0;
          const int off = l2 * sz + l1 * sy + l0;
#pragma unroll
          for (int w = 0; w < K; ++w) {
            const int oz0 = ((w - l2) % K + K) % K;
            const int o = kLastVaries ? 2 * (off + oz0 * sz) + (oz0 + K * (kRowsZ - 1) < W ? 1 : 0) : off + oz0 * sz;
            if constexpr (kOffInHead) shd[w][lane].off = o;
            else soff[w][lane] = o;
          }
          if constexpr (D < 3) shd[0][lane].kz[0] = T(1);
          if constexpr (D < 2)
#pragma unroll
            for (int r0 = 0; r0 < RG; ++r0) sky[lane][r0].v[0] = r0 == 0 ? T(1) : T(0);
        }
      }
      in.fetch(step + 1);
      tile_sync<K>();
      if constexpr (kPacked) {
        // This warp's row weights of each point: y weight times the z weight of the row's plane
        // slot (the head's). Built here rather than by evaluating the y and z kernels in every
        // warp (two Horner evaluations are several times these loads and products).
        if (lane < n) {
          const Head h = shd[warp][lane];
          T ky[W];
#pragma unroll
          for (int y = 0; y < W; ++y) ky[y] = syw[lane][y];
#pragma unroll
          for (int r0 = 0; r0 < RG; ++r0) {
            PackedWeights pw;
#pragma unroll
            for (int a = 0; a < kAccess; ++a) {
              const int r = a * RG + r0;
              pw.v[a] = r < kRowsZ * W ? ky[r % W] * h.kz[r < kRowsZ * W ? r / W : 0] : T(0);
            }
            spw[warp][lane][r0] = pw;
          }
        }
        __syncwarp();
      }
      // 3D: point q + 1's parameters are read while point q is applied, so that each point
      // starts with its loads from the tile rather than with loads of its parameters (the
      // group's arrays do not change until the next group). H100, B 5.98 -> 5.35 ms; in 2D (two
      // cells per lane and point) it was slower, A 1.10 -> 1.23 ms.
      constexpr bool kPrefetch = D == 3;
      // 3D: the loop unrolled by two, the parameters of one point loaded while the other is
      // applied, so that neither set is copied (packed rows first; plain rows since round 10).
      auto apply_packed = [&](const PointParams& pp) {
        Cplx<T>* cell[kAccess];
        Cplx<T> v[kAccess];
#pragma unroll
        for (int a = 0; a < kAccess; ++a) {
          cell[a] = acc_cell[a] + pp.off;
          if (acc_on[a]) v[a] = *cell[a];
        }
#pragma unroll
        for (int a = 0; a < kAccess; ++a) {
          v[a].re += pp.cx.re * pp.pw.v[a];
          v[a].im += pp.cx.im * pp.pw.v[a];
          if (acc_on[a]) *cell[a] = v[a];
        }
        __syncwarp();  // the next point may touch the cells just written by other lanes
      };
      // Plain rows: the lane's rows rg, rg + RG, ... of each of the warp's plane slots.
      auto apply_plain = [&](const PointParams& pp) {
        const T cre = pp.cx.re, cim = pp.cx.im;
        const bool last_on = !kLastVaries || (pp.off & 1) != 0;
        Cplx<T>* base = tile + (kLastVaries ? pp.off >> 1 : pp.off) + lane_off;
        // A chunk of this lane's cells (up to kChunkZ planes) is loaded before any is stored:
        // written as one load-add-store per cell, the compiler must assume that a store may
        // alias the next load and runs the round trips to shared memory one after another
        // (SASS of case B: 14 LDS → FFMA → STS chains per point, the kernel's main stall).
#pragma unroll
        for (int z0 = 0; z0 < kRowsZ; z0 += kChunkZ) {
          Cplx<T> v[kChunkZ][kRowsY];
#pragma unroll
          for (int oz = 0; oz < kChunkZ; ++oz)
#pragma unroll
            for (int r = 0; r < kRowsY; ++r)
              if (z0 + oz < kRowsZ && row_on[r] && (z0 + oz < kRowsZ - 1 || last_on))
                v[oz][r] = base[(z0 + oz) * K * sz + r * RG * sy];
#pragma unroll
          for (int oz = 0; oz < kChunkZ; ++oz) {
            if (z0 + oz >= kRowsZ) continue;
#pragma unroll
            for (int r = 0; r < kRowsY; ++r) {
              if (!row_on[r] || !(z0 + oz < kRowsZ - 1 || last_on)) continue;
              const T wgt = pp.ky.v[r] * pp.h.kz[z0 + oz < kRowsZ ? z0 + oz : 0];
              v[oz][r].re += cre * wgt;
              v[oz][r].im += cim * wgt;
              base[(z0 + oz) * K * sz + r * RG * sy] = v[oz][r];
            }
          }
        }
        __syncwarp();  // the next point may touch the cells just written by other lanes
      };
      auto apply = [&](const PointParams& pp) {
        if constexpr (kPacked) apply_packed(pp);
        else apply_plain(pp);
      };
      PointParams cur, next;
      if constexpr (kPrefetch) {
        load_params(0, cur);
        for (int q = 0; q < n; q += 2) {
          if (q + 1 < n) load_params(q + 1, next);
          apply(cur);
          if (q + 1 >= n) break;
          if (q + 2 < n) load_params(q + 2, cur);
          apply(next);
        }
      } else {
        for (int q = 0; q < n; ++q) {
          load_params(q, cur);
          apply(cur);
        }
      }
    }
    if (group == in.ngroups - 1) {
      if constexpr (Bulk) {
        bulk_fence_shared();
        tile_sync<K>();
        bulk_add_tile_rows(tile, origin, len, sy, sz, g, grid + b * g.size, threadIdx.x, 32 * K);
        if (b + 1 < nbatch) {
          tile_sync<K>();  // every row read: zero the tile for the next transform
          zero_tile(tile, ncell, threadIdx.x, 32 * K);
        }
      } else {
        tile_sync<K>();
        // Lanes over consecutive tile cells: a row-by-row loop, which wraps each row once but
        // leaves 9 of 32 lanes idle on 23-cell rows, measured 1.7x slower on case B.
        add_tile_to_grid<kPacked>(tile, origin, len, sy, sz, g, reinterpret_cast<T*>(grid + b * g.size), threadIdx.x,
                                  32 * K, b + 1 < nbatch);
      }
    }
  }
}

}  // namespace fieldft::cuda
