// Shared-memory layout of the CUDA spreading and interpolation tiles: the cells a bin's tile
// holds, the row and plane strides of the warp tiles, the bulk-row alignment, and the bytes
// each tile takes. One source for the kernels (src/cuda/spread_*.cuh, interp.cuh), which index
// the tiles with these strides, and for the planner (src/core/nufft_planner.cpp), which sizes
// bins so that the tiles fit a shared-memory budget. Host and device, std only.
#pragma once

#include <cstddef>

#include "fieldft/detail/complex.hpp"
#include "fieldft/detail/hd.hpp"

namespace fieldft::detail {

// Cells per dimension of the tile of a bin of `bin` cells (a footprint of W cells starting
// anywhere in the bin; see binned_start in src/cuda/sort.cuh).
FIELDFT_HD constexpr int tile_len(int bin, int w) { return bin + w - 1; }

// Warps sharing a 3D warp tile (spread_tile's K): each reloads a point's parameters for its
// planes, so more warps cost more than they hide (docs/tuning.md).
constexpr int kTileWarps = 2;

// The bin sizes with fixed-stride instantiations of the warp-tile kernels (3D, W <= 8).
constexpr int kTileBins[3] = {16, 8, 4};
// The bins of the tensor-core tiles (spread_tc.cuh): 8 wide, so that a footprint's x cells fit
// 16 columns of the products.
constexpr int kTcBins[3] = {8, 8, 4};
// Tile rows y (one m-tile) and cells x (four n-tiles of 4 cells) of a tensor-core tile.
constexpr int kTcRows = 16;

// Whether spread_tc covers width W at bins kTcBins: a footprint starting anywhere in the bin
// (one cell lower with bulk rows) stays within kTcRows cells in x and y.
template <int W>
constexpr bool tc_width_fits() {
  return tile_len(kTcBins[0], W) + 1 <= kTcRows && tile_len(kTcBins[1], W) <= kTcRows;
}

// x-lanes of a warp-tile row group: 8 up to W = 8, else 16.
template <int W>
constexpr int tile_x_lanes() {
  return W <= 8 ? 8 : 16;
}

// Row stride (cells) of a warp tile whose rows hold len0 cells. float, 8 x-lanes: the two row
// groups of a half-warp must fall in different banks (64-bit accesses are served per
// half-warp), i.e. 2·stride mod 32 words in [14, 18] for up to 7..8 cells a row.
template <class T, int W>
FIELDFT_HD constexpr int tile_row_stride(int len0, int align = 1) {
  if (sizeof(T) != 4 || tile_x_lanes<W>() != 8) return len0;
  int s = len0;
  while (s % 16 < 7 || s % 16 > 9 || s % align != 0) ++s;
  return s;
}

// Warp tiles with packed rows (spread_tile): a lane covers x offset ox < W of a footprint row,
// and the 32/W row groups of a warp run over the footprint rows (y, z) of the warp's planes
// one after another, across planes, instead of over rows y of one plane. With 8 x-lanes by 4
// row groups, W = 6 takes 12 accesses per point with 56 % of the lanes useful; packed, 8 with
// 84 % (W = 4: 2 accesses instead of 4). 3D tiles of two warps and even W up to 6, where the
// strides below make every access free of bank conflicts.
template <int D, int W, int K>
constexpr bool packed_rows() {
  return D == 3 && K == 2 && W % 2 == 0 && W <= 6;
}

struct TileStrides {
  int sy, sz;  // cells between rows, between planes
};

// Bulk rows: at a tile flush, each row of the tile is added to the grid by one bulk asynchronous
// reduction (sm_90, cp.reduce.async.bulk .add: the copy engine reads the row from shared memory
// and adds it in L2), two where it wraps around the grid in x, instead of a load, a zero test
// and a vector atomic per cell from the threads. Rows must start and end on 16-byte units in
// both memories: float tiles start on an even grid cell (origin moved down by one where
// bin start − W/2 is odd) and hold an even number of cells a row. Cells per 16 bytes:
template <class T>
constexpr int bulk_cells() {
  return sizeof(Cplx<T>) >= 16 ? 1 : static_cast<int>(16 / sizeof(Cplx<T>));
}

// Row and plane strides (cells) of a warp tile whose rows hold len0 cells and planes len1 rows.
// Packed rows (K = 2 warps): a wavefront of 128 bytes spans C = 128 / sizeof(Cplx<T>) cells, and
// an access is conflict-free when consecutive lanes fall on consecutive cells modulo C. Lanes of
// consecutive rows of a plane are sy apart, and across the planes of a warp (K planes apart)
// K·sz − (W − 1)·sy: both must be W modulo C, so sy ≡ W and K·sz ≡ W² (mod C), which the
// padding of rows and planes gives (even W). Else the rows of tile_row_stride, planes unpadded.
// Bulk rows (Bulk): rows also start on whole 16-byte units; the packed strides of even W
// already do (sy ≡ W and sz ≡ W²/2 mod C/2 cells are even), the plain rows are made to.
template <class T, int W, bool Packed, bool Bulk = false>
FIELDFT_HD constexpr TileStrides warp_tile_strides(int len0, int len1) {
  if constexpr (Packed) {
    constexpr int C = static_cast<int>(128 / sizeof(Cplx<T>)), K = 2;
    int sy = len0, sz = 0;
    while (sy % C != W % C) ++sy;
    sz = sy * len1;
    while ((K * sz - W * W) % C != 0) ++sz;
    return {sy, sz};
  } else {
    const int sy = tile_row_stride<T, W>(len0, Bulk ? bulk_cells<T>() : 1);
    return {sy, sy * len1};
  }
}

// Cells a row of a bulk tile holds: the footprints' tile_len(bin0, W) from bin start − W/2,
// the origin moved down to a multiple A of cells (by (W/2) mod A where A divides the bins, by up
// to A − 1 otherwise) and the length rounded up to a multiple of A.
template <class T, int W>
FIELDFT_HD constexpr int bulk_tile_len0(int bin0) {
  constexpr int A = bulk_cells<T>();
  const int shift = bin0 % A == 0 ? (A - (W / 2) % A) % A : A - 1;
  return (tile_len(bin0, W) + shift + A - 1) / A * A;
}

// Whether tiles of bins bin0 cells wide can be flushed by bulk rows on a grid of nf0 cells per
// row: the grid's rows hold whole 16-byte units and a tile row wraps around the grid at most once.
template <class T, int W>
constexpr bool bulk_rows_fit(long long nf0, int bin0) {
  return nf0 % bulk_cells<T>() == 0 && bulk_tile_len0<T, W>(bin0) <= nf0;
}

// Shared memory (bytes) of the tile of a warp-tile block (spread_tile, spread_tile_boxes).
template <class T, int W, bool Packed, bool Bulk = false>
constexpr std::size_t spread_tile_bytes(int dim, const int* bin) {
  const TileStrides st = warp_tile_strides<T, W, Packed, Bulk>(Bulk ? bulk_tile_len0<T, W>(bin[0]) : tile_len(bin[0], W),
                                                               dim > 1 ? tile_len(bin[1], W) : 1);
  return static_cast<std::size_t>(st.sz) * (dim > 2 ? tile_len(bin[2], W) : 1) * sizeof(Cplx<T>);
}

// Shared memory of one subproblem tile (bytes).
template <class T>
constexpr std::size_t subproblem_tile_bytes(int dim, const int* bin, int width) {
  std::size_t n = 1;
  for (int d = 0; d < dim; ++d) n *= static_cast<std::size_t>(tile_len(bin[d], width));
  return n * 2 * sizeof(T);
}

// Shared memory of one interp_tile tile (bytes): rows one cell longer, planes one row more.
template <class T>
constexpr std::size_t interp_tile_bytes(int dim, const int* bin, int width) {
  std::size_t n = 1;
  for (int d = 0; d < dim; ++d) n *= static_cast<std::size_t>(tile_len(bin[d], width) + (d < 2 ? 1 : 0));
  return n * 2 * sizeof(T);
}

}  // namespace fieldft::detail
