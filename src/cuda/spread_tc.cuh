// Sparse 3D type-1 spreading on tensor cores (DevGrid::tc): float, W <= 8, bins kTcBins.
//
// A block owns the tile of one subproblem, as spread_tile does, but builds it as matrix
// products instead of a load-add-store per footprint cell. The tile of a bin's points k is
// T[z][y][x] = sum_k Z_k[z] Y_k[y] c_k X_k[x] (the kernel weights of each dimension, zero
// outside the point's footprint), so each tile plane z is a product of a matrix A_z (rows y,
// columns k: Y_k[y] Z_k[z]) and a matrix B (rows k, columns x as interleaved real and imaginary
// parts: c_k X_k[x]), summed over the points in chunks of 8 by mma.sync m16n8k8 (TF32 inputs,
// float accumulation). A fragment of the product holds, per lane, the complex value of one
// (y, x) cell in two consecutive columns. The products cover the whole tile (16 rows y, 16
// cells x, one plane per m-tile), about 11 times the footprints' cells at W = 7 on 8x8x4 bins,
// but the tensor cores run them faster than the shared-memory pipe runs the footprints (H100,
// case F: ~81 shared-memory wavefronts per point in spread_tile).
//
// TF32 keeps 10 mantissa bits; each operand is split into a high part (its own bits: the tensor
// cores read the upper 19 bits) and the remainder, and three products (hi·hi, hi·lo, lo·hi) give
// float accuracy ("3xTF32": Ootomo and Yokota, Recovering single precision accuracy from Tensor
// Cores while surpassing the FP32 theoretical peak performance, IJHPCA 2022).
//
// Points come in groups of kTcGroup: half the threads evaluate the x weights of a point and
// scale them by its strength (split into hi and lo), the other half the y and z weights, into
// shared-memory columns spanning the tile (zero outside the footprint). Each warp then owns
// planes z = warp, warp + kTcWarps, ... and accumulates them in registers over all the
// subproblem's points; at the end the planes go to a shared-memory tile that is added to the grid
// by bulk rows (bulk_add_tile_rows) or the threads' atomics (add_tile_to_grid).
#pragma once

#include "cuda/spread_tile.cuh"

namespace fieldft::cuda {

constexpr int kTcWarps = 4;   // warps per block
constexpr int kTcGroup = 64;  // points per set-up
// Blocks per SM the registers must allow: 96 a thread (W = 7: 12 bytes of spills), the fastest
// of 3 to 6 blocks on cases E and F (docs/tuning.md, kernel shapes).
constexpr int kTcMinBlocks = 5;

namespace tc {

// x = hi + lo: hi keeps x's bits (read as TF32, i.e. truncated to 10 mantissa bits), lo the
// truncated remainder, itself read as TF32 (the product's error ~2^-21 relative).
__device__ __forceinline__ void split(float x, unsigned& hi, unsigned& lo) {
  hi = __float_as_uint(x);
  lo = __float_as_uint(x - __uint_as_float(hi & 0xffffe000u));
}

// d += a·b, m16n8k8, TF32 inputs (row-major A, column-major B), float accumulators.
__device__ __forceinline__ void mma(float* d, const unsigned* a, const unsigned* b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#else
  __trap();  // the plan takes tensor-core tiles on sm_80 and later only
#endif
}

}  // namespace tc

template <int W, bool Bulk>
__global__ void __launch_bounds__(32 * kTcWarps, kTcMinBlocks)
    spread_tc(DevPoints<float> p, DevGrid g, const float* __restrict__ horner, int degree,
              const Cplx<float>* __restrict__ c, std::int64_t c_stride, Cplx<float>* __restrict__ grid, int nbatch,
              Subproblems sp) {
  static_assert(tc_width_fits<W>(), "footprints must fit the tile's rows");
  constexpr int NW = kTcWarps, G = kTcGroup, R = kTcRows, NT = R / 4;
  constexpr int LY = tile_len(kTcBins[1], W), LZ = tile_len(kTcBins[2], W);
  constexpr int PZ = (LZ + NW - 1) / NW;  // planes per warp (at most)
  // Columns k of G points, rows G + 4 values apart: a fragment's loads (8 rows by 4 columns)
  // fall in 32 distinct banks; the set-up's stores (lane = column) too.
  constexpr int S = G + 4;
  __shared__ float sy[R][S], sz[LZ][S], sxh[2 * R][S], sxl[2 * R][S];
  __shared__ alignas(16) Cplx<float> tile[LZ * LY * R];
  __shared__ alignas(16) float sh[horner_smem<float, W>()];
  const float* hz = stage_horner<float, W>(horner, degree, sh);

  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, gr = lane / 4, tq = lane % 4;
  const int s = blockIdx.x;
  int len[3], origin[3];
  bin_tile<3, W>(g, sp.bin[s], len, origin);
  if constexpr (Bulk) {  // rows on whole 16-byte units (see spread_tile)
    constexpr int A = bulk_cells<float>();
    origin[0] -= (origin[0] % A + A) % A;
    len[0] = bulk_tile_len0<float, W>(kTcBins[0]);
  }
  const std::int64_t j0 = sp.begin[s], j1 = sp.end[s];
  for (int b = 0; b < nbatch; ++b) {
    float acc[PZ][NT][4];
#pragma unroll
    for (int i = 0; i < PZ; ++i)
#pragma unroll
      for (int nt = 0; nt < NT; ++nt)
#pragma unroll
        for (int r = 0; r < 4; ++r) acc[i][nt][r] = 0.f;
    for (std::int64_t jg = j0; jg < j1; jg += G) {
      const int n = static_cast<int>(j1 - jg < G ? j1 - jg : G);
      __syncthreads();  // the previous group's columns are read
      for (int task = threadIdx.x; task < 2 * G; task += 32 * NW) {
        const int k = task % G;
        const bool on = k < n;
        const std::int64_t j = jg + k;
        float w[W];
        if (task < G) {  // x weights times the strength, hi and lo
#pragma unroll
          for (int x = 0; x < 2 * R; ++x) sxh[x][k] = sxl[x][k] = 0.f;
          if (on) {
            const Cplx<float> cv = c[b * c_stride + p.perm[j]];
            horner_weights<float, W>(hz, degree, p.t[0][j], w);
            const int l = p.i0[0][j] - origin[0];
#pragma unroll
            for (int q = 0; q < W; ++q) {
              unsigned hi, lo;
              tc::split(cv.re * w[q], hi, lo);
              sxh[2 * (l + q)][k] = __uint_as_float(hi);
              sxl[2 * (l + q)][k] = __uint_as_float(lo);
              tc::split(cv.im * w[q], hi, lo);
              sxh[2 * (l + q) + 1][k] = __uint_as_float(hi);
              sxl[2 * (l + q) + 1][k] = __uint_as_float(lo);
            }
          }
        } else {  // y and z weights
#pragma unroll
          for (int y = 0; y < R; ++y) sy[y][k] = 0.f;
#pragma unroll
          for (int z = 0; z < LZ; ++z) sz[z][k] = 0.f;
          if (on) {
            const int ly = p.i0[1][j] - origin[1], lz = p.i0[2][j] - origin[2];
            horner_weights<float, W>(hz, degree, p.t[1][j], w);
#pragma unroll
            for (int q = 0; q < W; ++q) sy[ly + q][k] = w[q];
            horner_weights<float, W>(hz, degree, p.t[2][j], w);
#pragma unroll
            for (int q = 0; q < W; ++q) sz[lz + q][k] = w[q];
          }
        }
      }
      __syncthreads();
      // Chunks of 8 points: A (16 x 8, rows y) and B (8 x 8, columns 2x + re/im) fragments; a
      // lane holds rows gr, gr + 8 and columns (points) tq, tq + 4 of A, rows tq, tq + 4 and
      // column gr of B. Columns past n are zero.
      for (int ch = 0; ch < (n + 7) / 8; ++ch) {
        const int k0 = 8 * ch + tq, k1 = k0 + 4;
        const float y00 = sy[gr][k0], y10 = sy[gr + 8][k0], y01 = sy[gr][k1], y11 = sy[gr + 8][k1];
        unsigned bh[NT][2], bl[NT][2];
#pragma unroll
        for (int nt = 0; nt < NT; ++nt) {
          bh[nt][0] = __float_as_uint(sxh[8 * nt + gr][k0]);
          bl[nt][0] = __float_as_uint(sxl[8 * nt + gr][k0]);
          bh[nt][1] = __float_as_uint(sxh[8 * nt + gr][k1]);
          bl[nt][1] = __float_as_uint(sxl[8 * nt + gr][k1]);
        }
#pragma unroll
        for (int i = 0; i < PZ; ++i) {
          const int z = warp + i * NW;
          if (z >= LZ) break;
          const float z0 = sz[z][k0], z1 = sz[z][k1];
          unsigned ah[4], al[4];
          tc::split(y00 * z0, ah[0], al[0]);
          tc::split(y10 * z0, ah[1], al[1]);
          tc::split(y01 * z1, ah[2], al[2]);
          tc::split(y11 * z1, ah[3], al[3]);
#pragma unroll
          for (int nt = 0; nt < NT; ++nt) {
            tc::mma(acc[i][nt], ah, bh[nt]);
            tc::mma(acc[i][nt], ah, bl[nt]);
            tc::mma(acc[i][nt], al, bh[nt]);
          }
        }
      }
    }
    // The planes into the tile (rows R cells apart, planes LY rows), then into the grid. A lane
    // holds cells (y, x) = (gr, 4 nt + tq) and (gr + 8, 4 nt + tq) of each of its planes.
#pragma unroll
    for (int i = 0; i < PZ; ++i) {
      const int z = warp + i * NW;
      if (z >= LZ) break;
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int y = gr + 8 * h;
        if (y >= LY) continue;
#pragma unroll
        for (int nt = 0; nt < NT; ++nt)
          tile[(z * LY + y) * R + 4 * nt + tq] = Cplx<float>{acc[i][nt][2 * h], acc[i][nt][2 * h + 1]};
      }
    }
    if constexpr (Bulk) {
      bulk_fence_shared();
      __syncthreads();
      bulk_add_tile_rows(tile, origin, len, R, LY * R, g, grid + b * g.size, threadIdx.x, 32 * NW);
    } else {
      __syncthreads();
      add_tile_to_grid(tile, origin, len, R, LY * R, g, reinterpret_cast<float*>(grid + b * g.size), threadIdx.x,
                       32 * NW, false);
    }
    __syncthreads();  // the tile is read before the next transform's planes overwrite it
  }
}

}  // namespace fieldft::cuda
