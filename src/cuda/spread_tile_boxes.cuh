// Warp tiles whose points are first accumulated in 2x2x2-cell register boxes (3D, W <= 7).
#pragma once

#include "cuda/spread_tile.cuh"

namespace fieldft::cuda {

// Register boxes (3D warp tiles on dense points, DevGrid::boxes). The points of a subproblem
// are sorted by the 2x2x2-cell box of their first footprint cell l (point_bin, sub-bins 2x2x2),
// so consecutive points mostly share a box; the union of the footprints of a box's points is
// (W + 1)^3 cells, 16 per lane at W = 7 (lane = x offset, 2 rows y, W + 1 planes z), held in
// registers. Each point adds its weights there (zero outside its own footprint) with no
// shared-memory traffic but its parameters; when the box changes, the registers are added to the
// shared tile once. spread_tile instead makes a load-add-store round trip to shared memory per
// cell and point, which bounds it (ncu on case B: shared-memory pipe ~70 %, 6 warps per SM).
// W <= 7 so that the union rows fit 8 x-lanes. They pay on dense points only: the planner takes
// them from ~1.2 points per cell (core::kBoxDensity; measurements in docs/tuning.md, row 13).
// Both kernels issue ~200 instructions per point and are latency bound at 6 warps per SM
// (the 30 KiB tile); see docs/benchmarks.md.
template <class T, int W, int BX = 0, int BY = 0>
__global__ void __launch_bounds__(32)
    spread_tile_boxes(DevPoints<T> p, DevGrid g, const T* __restrict__ horner, int degree,
                      const Cplx<T>* __restrict__ c, std::int64_t c_stride, Cplx<T>* __restrict__ grid, int nbatch,
                      Subproblems sp) {
  constexpr int U = W + 1;                 // union cells per dimension of a 2-cell box
  static_assert(U <= 8, "register boxes need W + 1 <= 8 x-lanes");
  constexpr int XL = 8, RG = 4;
  constexpr int kRowsY = (U + RG - 1) / RG;  // y rows per lane
  extern __shared__ __align__(16) unsigned char smem_raw[];
  Cplx<T>* tile = reinterpret_cast<Cplx<T>*>(smem_raw);
  __shared__ Cplx<T> scx[32][U];  // strength times x weight, union-aligned (zero outside the footprint)
  __shared__ T swy[32][U], swz[32][U];
  __shared__ int sbox[32];        // tile offset of the point's union origin (identifies its box)
  __shared__ alignas(16) T sh[horner_smem<T, W>()];
  const T* hz = stage_horner<T, W>(horner, degree, sh);

  const int lane = threadIdx.x;
  const int s = blockIdx.x;
  int len[3], origin[3];
  bin_tile<3, W>(g, sp.bin[s], len, origin);
  int sy, sz;
  tile_strides<T, W, BX, BY>(len, sy, sz);
  const int ncell = sz * len[2];
  const int ox = lane % XL, rg = lane / XL;
  const bool x_on = ox < U;
  const int lane_off = ox + rg * sy;
  Cplx<T> acc[kRowsY][U];

  // Adds the registers to the tile cells of the box with union origin o (skipping union cells
  // past the tile: with an odd bin, a box starting at l = bin - 1 reaches one cell beyond it,
  // with zero weight), then
  // clears them. Loads first, then stores (see spread_tile).
  auto flush = [&](int o) {
    const int oz = o / sz, rem = o - oz * sz, oy = rem / sy, oxx = rem - oy * sy;
    const bool xin = x_on && oxx + ox < len[0];
    Cplx<T>* base = tile + o + lane_off;
    Cplx<T> v[kRowsY][U];
#pragma unroll
    for (int r = 0; r < kRowsY; ++r)
#pragma unroll
      for (int z = 0; z < U; ++z)
        if (xin && rg + r * RG < U && oy + rg + r * RG < len[1] && oz + z < len[2]) v[r][z] = base[z * sz + r * RG * sy];
#pragma unroll
    for (int r = 0; r < kRowsY; ++r)
#pragma unroll
      for (int z = 0; z < U; ++z) {
        if (xin && rg + r * RG < U && oy + rg + r * RG < len[1] && oz + z < len[2])
          base[z * sz + r * RG * sy] = Cplx<T>{v[r][z].re + acc[r][z].re, v[r][z].im + acc[r][z].im};
        acc[r][z] = Cplx<T>{T(0), T(0)};
      }
    __syncwarp();  // the next box's cells may be read by other lanes
  };

  PointInputs<T, 3> in(p, c, c_stride, sp.begin[s], sp.end[s], nbatch, lane);
  for (int i = lane; i < ncell; i += 32) tile[i] = Cplx<T>{T(0), T(0)};
#pragma unroll
  for (int r = 0; r < kRowsY; ++r)
#pragma unroll
    for (int z = 0; z < U; ++z) acc[r][z] = Cplx<T>{T(0), T(0)};
  in.fetch(0);
  int cur = -1;  // union origin of the box in the registers; warp-uniform
  for (int step = 0; step < in.nsteps; ++step) {
    const int b = step / in.ngroups, group = step - b * in.ngroups;
    {
      const std::int64_t left = in.j1 - in.j0 - 32 * static_cast<std::int64_t>(group);
      const int n = static_cast<int>(left < 32 ? left : 32);
      __syncwarp();  // the previous group's parameters are no longer read; the zeroed tile is visible
      if (lane < n) {
        const Cplx<T> cv = in.cv;
        int o = 0;
#pragma unroll
        for (int d = 2; d >= 0; --d) {
          T k[W];
          horner_weights<T, W>(hz, degree, in.t[d], k);
          const int l = in.i0[d] - origin[d], dd = l & 1;
          o += (l - dd) * (d == 2 ? sz : d == 1 ? sy : 1);
#pragma unroll
          for (int u = 0; u < U; ++u) {
            const T v = dd ? (u >= 1 ? k[u >= 1 ? u - 1 : 0] : T(0)) : (u < W ? k[u < W ? u : 0] : T(0));
            if (d == 0) scx[lane][u] = Cplx<T>{cv.re * v, cv.im * v};
            else if (d == 1) swy[lane][u] = v;
            else swz[lane][u] = v;
          }
        }
        sbox[lane] = o;
      }
      in.fetch(step + 1);
      __syncwarp();
      for (int q = 0; q < n; ++q) {
        const int o = sbox[q];
        if (o != cur) {
          if (cur >= 0) flush(cur);
          cur = o;
        }
        const Cplx<T> cx = x_on ? scx[q][ox] : Cplx<T>{T(0), T(0)};
        T wz[U];
#pragma unroll
        for (int z = 0; z < U; ++z) wz[z] = swz[q][z];
#pragma unroll
        for (int r = 0; r < kRowsY; ++r) {
          const int uy = rg + r * RG;
          const T wy = uy < U ? swy[q][uy < U ? uy : 0] : T(0);
          const T are = cx.re * wy, aim = cx.im * wy;
#pragma unroll
          for (int z = 0; z < U; ++z) {
            acc[r][z].re += are * wz[z];
            acc[r][z].im += aim * wz[z];
          }
        }
      }
    }
    if (group == in.ngroups - 1) {
      if (cur >= 0) flush(cur);
      cur = -1;
      __syncwarp();
      add_tile_to_grid(tile, origin, len, sy, sz, g, reinterpret_cast<T*>(grid + b * g.size), lane, 32, b + 1 < nbatch);
    }
  }
}

}  // namespace fieldft::cuda
