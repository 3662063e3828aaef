// The Toeplitz normal operator behind fieldft::mri::ToeplitzNormal, below the backends: its
// geometry, the interface each backend implements (src/cpu/toeplitz_cpu.hpp,
// src/cuda/toeplitz.hpp) and the cost model of mri::Toeplitz::kAuto. src/mri/toeplitz.cpp
// validates the input, computes the point-spread function with one type 1 NUFFT into the
// engine's buffer and picks an engine; the math is in include/fieldft/mri/toeplitz.hpp.
#pragma once

#include <array>
#include <complex>
#include <cstdint>
#include <string>

namespace fieldft::core {

// An image grid of N_d voxels per axis (1 for unused axes), B stacked images, and the grid of
// the circulant embedding: L_d = 2 N_d per used axis, or N_d on a PERIODIC axis, 1 beyond dim.
// An axis is periodic when every sample's k_d is an integer (in cycles per field of view: the
// stack's k_z): then exp(2πi k_d (n_d − m_d)/N_d) is N_d-periodic in the offset, the normal is
// ALREADY a circulant convolution of length N_d along that axis (no embedding needed), and the
// point-spread function has N_d distinct values there (mri::detail::periodic_axes decides;
// include/fieldft/mri/toeplitz.hpp). Pad and crop are the identity along a periodic axis.
//
// A STACKED last axis (stacked = true; dim >= 2 and the last used axis periodic): the samples are
// the same in-plane pattern, with the same strengths, on each of the N_last planes of the last
// axis, whose k are the N_last distinct integers mod N_last (a full stack of spirals or radial
// stars). Then p vanishes at every nonzero offset of that axis (Σ over the planes of exp(2πi
// k_p d/N) = 0 for d ≠ 0), the normal is the identity along it times one in-plane kernel, and
// the kernel's FFT along it is constant: the engines keep one plane of the kernel
// (kernel_cells()) and transform only the other axes, plane by plane (no FFT along the last
// axis; mri::detail::stacked_last_axis decides).
struct ToeplitzGeometry {
  int dim = 0;
  std::array<std::int64_t, 3> n{1, 1, 1};
  std::array<bool, 3> periodic{false, false, false};  // L_d = N_d (above)
  bool stacked = false;                               // the last axis is a stack (above)
  std::int64_t batch = 1;
  double chunk_bytes = 0;  // the CUDA cuFFT path's chunk budget (toeplitz_chunk); 0: kToeplitzChunkBytes

  std::array<std::int64_t, 3> padded() const {
    std::array<std::int64_t, 3> l{1, 1, 1};
    for (int d = 0; d < dim; ++d) l[d] = periodic[d] ? n[d] : 2 * n[d];
    return l;
  }
  bool any_periodic() const {
    for (int d = 0; d < dim; ++d)
      if (periodic[d]) return true;
    return false;
  }
  std::int64_t voxels() const { return n[0] * n[1] * n[2]; }
  std::int64_t padded_cells() const {
    const auto l = padded();
    return l[0] * l[1] * l[2];
  }
  // The cells of one kernel: padded_cells(), or one plane of it (the axes before the last) on a
  // stacked geometry.
  std::int64_t kernel_cells() const { return stacked ? padded_cells() / padded()[dim - 1] : padded_cells(); }
};

// "256x256x128 (z periodic)": the embedding grid L, x first, and its periodic axes; for reports.
std::string toeplitz_grid_string(const ToeplitzGeometry& g);

// The CUDA engine's fused path (src/cuda/toeplitz.cu) takes 2D grids whose 2N_d are powers of
// two in [16, 2048] (its line FFTs) and no periodic axis (its kernels zero-pad each line to 2N_d
// and crop it), and 3D grids of that kind in x and y with a stacked z axis (no pass along z: each
// plane is such a 2D problem); other geometries take its cuFFT path.
inline bool fused_toeplitz_geometry(const ToeplitzGeometry& g) {
  const bool planes = g.dim == 2 || (g.dim == 3 && g.stacked);
  if (!planes || g.periodic[0] || g.periodic[1]) return false;
  for (int d = 0; d < 2; ++d) {
    const std::int64_t l = 2 * g.n[d];
    if (l < 16 || l > 2048 || (l & (l - 1)) != 0) return false;
  }
  return true;
}

// The CUDA engine's cuFFT path transforms its B images in chunks: one chunk's 2N grids are its
// buffer, and its cuFFT plans run over one chunk, so its memory is bounded whatever B is (the
// field-corrected normal's B = C·K images, coils times segments, reach 64–80 grids of 134 MB in
// 3D at 128³ in float, ~10 GB at once). kToeplitzChunkBytes bounds a chunk's grids: 4 float grids
// of 256³ (2 in double). cuFFT's throughput saturates once one pass holds a few million cells
// (one 256³ grid already has 16.8 million), so a larger chunk would save only the launches of a
// pass (eight per chunk) and cost memory; small grids still take all B images in one chunk.
inline constexpr double kToeplitzChunkBytes = 512.0 * (1 << 20);

// Images per chunk for B images of padded_cells() complex values of complex_bytes each: the most
// whose grids fit g.chunk_bytes (kToeplitzChunkBytes when 0; at least 1), then balanced, B split
// into ⌈B / most⌉ chunks of ⌈B / chunks⌉ images (the last may hold fewer), so it wastes little.
std::int64_t toeplitz_chunk(const ToeplitzGeometry& g, std::size_t complex_bytes);
// Throws kInvalidArgument, naming `who`, unless chunk_bytes is finite and >= 0.
void check_chunk_bytes(double chunk_bytes, const std::string& who);

// One backend's Toeplitz apply. Pointers live in the engine's memory (host, or its device); a
// device engine enqueues on its stream and returns (make_kernel excepted, see there).
template <class T>
class ToeplitzEngine {
 public:
  using Complex = std::complex<T>;
  virtual ~ToeplitzEngine() = default;

  // padded_cells() complex values for the set-up: the caller writes the point-spread function
  // p there, x fastest, each axis in FFT (circulant) order, index i ↔ offset i for i < N_d and
  // i − 2N_d above (what a type 1 NUFFT with modeord 1 and 2N_d modes writes); on a periodic
  // axis L_d = N_d values, index i ↔ offset i ≡ i − N_d (p is N_d-periodic there: a type 1 NUFFT
  // with N_d modes). apply overwrites it (it is the engine's grid). Below, "2N", pad_2N and
  // crop_N read L_d and the identity along a periodic axis.
  // On a stacked geometry it holds one plane (kernel_cells() values): p at offset 0 along the
  // stack, the only nonzero one (mri::detail::PsfTransform).
  virtual Complex* psf_buffer() = 0;
  // kernel[i] = Re(FFT(p))[i] / ∏ L_d for the kernel_cells() cells (x fastest; on a stacked
  // geometry the plane of frequency 0 along the last axis, which every plane equals): the real part is
  // the FFT of p's Hermitian part, which the exact p equals (p(−d) = conj p(d) for real weights),
  // so it removes the anti-Hermitian part of the NUFFT's error and makes the operator Hermitian
  // to rounding. Consumes psf_buffer(). A device engine synchronises its stream before returning.
  virtual void make_kernel(T* kernel) = 0;
  // For each of the B images: z = crop_N(IFFT(kernel ∘ FFT(pad_2N(x)))), transforms unnormalised
  // (the 1/∏ L_d is in the kernel). x and z: B images of N voxels each, stacked, not overlapping.
  virtual void apply(const T* kernel, const Complex* x, Complex* z) = 0;
  // The SENSE normal in one go, when the engine has a fused form for its geometry: with the B
  // images the B coils of ONE image x (N voxels) and maps their sensitivities (B·N values),
  //   z = Σ_b conj(maps_b) ∘ crop_N(IFFT(kernel ∘ FFT(pad_2N(maps_b ∘ x)))).
  // Returns false, having done nothing, where there is no fused form (the caller then expands,
  // applies and combines); the CUDA engine has one for every geometry (its fused path,
  // fused_toeplitz_geometry; its cuFFT path with the products in its pad and crop).
  virtual bool apply_sense(const T* /*kernel*/, const Complex* /*maps*/, const Complex* /*x*/, Complex* /*z*/) {
    return false;
  }
  // The field-corrected normal's kernels: kernel[i] = FFT(p)[i] / ∏ L_d for the kernel_cells() cells, complex (p from
  // complex weights has no Hermitian symmetry to project onto). Consumes psf_buffer(); a device engine synchronises its
  // stream before returning.
  virtual void make_complex_kernel(Complex* kernel) = 0;
  // The field-corrected (SENSE) normal of ONE image x with segment kernels (mri/field_toeplitz.hpp):
  // the B = C·K images are c + C·l for coil c < C and segment l < K,
  //   z = Σ_{c,l} conj(S_c ∘ b_l) ∘ crop_N(IFFT(kernel_l ∘ FFT(pad_2N(S_c ∘ b_l ∘ x)))),
  // kernel_l at kernels + l·kernel_cells() (complex), maps S: C·N values (null: C = 1, S = 1),
  // phases b: K·N values. Returns false, having done nothing, where the engine has no such form
  // (both engines have it, for every geometry).
  virtual bool has_field_sense() const { return false; }
  virtual bool apply_field_sense(const Complex* /*kernels*/, std::int64_t /*k*/, const Complex* /*maps*/,
                                 const Complex* /*phases*/, const Complex* /*x*/, Complex* /*z*/) {
    return false;
  }
};

// The FFT work of the pruned transforms on the L grid (2N, N_d on periodic axes), in units of
// one complex element passing
// one butterfly stage (L·log2 L per 1D transform of length L): the pass along axis a covers the
// full extent of the axes before it and only the N_b kept (or nonzero) indices of the axes after
// it, forward and inverse alike. Per image; 2D saves 1/4 of a full 2N FFT, 3D 5/12. A periodic
// axis has L_d = N_d: half the cells and nothing pruned along it. A stacked last axis has no pass.
double toeplitz_fft_units(const ToeplitzGeometry& g);

// Toeplitz::kAuto (include/fieldft/mri/encoding.hpp): per image, in the units above,
//   Toeplitz  2 · toeplitz_fft_units + 3 · ∏ L_d        two pruned FFTs; the pad, multiply and
//                                                       crop passes over the L grid
//   NUFFT     Σ over its type 2 and type 1 plan of      the fine grid's FFT, its zeroing or
//             Σ_a (∏ nf) log2 nf_a + ∏ nf               copy with deconvolution, and spreading
//             + kSpreadUnitsPerCell · M · w^d           or interpolation (w^d cells per sample)
// and Toeplitz is taken when it costs less and its grid of ∏L_d·B complex values stays within
// kToeplitzAutoMaxBytes (kOn takes it regardless). At upsampling factor 2 both FFTs are on the
// same 2N grid and the pruned ones are cheaper, so Toeplitz wins at any M; below 2 (a smaller
// fine grid) the NUFFT pair wins for few samples. The set-up (one type 1 transform of one image
// onto the 2N grid and one FFT) is not counted: it is paid once, and a solver applies the normal
// tens of times. kSpreadUnitsPerCell: one spread or interpolation cell (kernel weight, complex
// multiply-add, scattered memory access) costs about one FFT unit on the CPU
// (docs/benchmarks.md, "Toeplitz normal operator").
inline constexpr double kSpreadUnitsPerCell = 1.0;
inline constexpr double kToeplitzAutoMaxBytes = 4.0 * (1ull << 30);

// One NUFFT plan of the pair: its fine grid nf_d (1 beyond dim) and kernel width w.
struct NufftShape {
  std::array<std::int64_t, 3> fine_grid{1, 1, 1};
  int kernel_width = 0;
};

struct ToeplitzChoice {
  bool toeplitz = false;
  double toeplitz_units = 0, nufft_units = 0;  // per image
  std::string reason;  // e.g. "Toeplitz: 1.9e+07 < NUFFT 3.1e+07 work units per image"
};

// samples: M; complex_bytes: sizeof(std::complex<T>).
ToeplitzChoice choose_toeplitz(const ToeplitzGeometry& g, const NufftShape& forward, const NufftShape& adjoint,
                               std::int64_t samples, std::size_t complex_bytes);

}  // namespace fieldft::core
