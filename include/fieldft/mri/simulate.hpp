// fieldft::mri simulation: synthetic MRI data with a known truth, for tests, benchmarks, the
// demo and the Python package (DESIGN.md §1, mri layer). Host code; every value is computed in
// double, and every function is deterministic (seeds are explicit; the generator is SplitMix64
// with explicit conversions, so that a seed gives the same numbers on every platform, unlike the
// implementation-defined std:: distributions).
//
// Geometry: that of mri::Encoding (fieldft/mri/encoding.hpp). A grid is {Nx, Ny} or
// {Nx, Ny, Nz}, x fastest. Voxel i_d sits at r_d = (i_d − ⌊N_d/2⌋)/N_d field-of-view units;
// the phantom and the coil maps use u_d = 2 r_d, "units of half the field of view" (the image
// spans [-1, 1) per axis, y up), the unit of the Shepp–Logan tables. k-space positions are in
// cycles per field of view, within [-N_d/2, N_d/2] per axis.
//
// Phantoms
//   ellipse_phantom(grid, ellipses, K)   Σ_e value_e · 1[point inside ellipse e], each voxel the
//                                        average over K^dim sub-samples (partial volume at edges).
//                                        Inside: p² + q² (+ w² in 3D) <= 1 with
//                                        p = ((u − x0) cos φ + (v − y0) sin φ)/a,
//                                        q = (−(u − x0) sin φ + (v − y0) cos φ)/b, w = (z − z0)/c:
//                                        semi-axes a, b, c along the ellipse's own axes, rotated
//                                        counter-clockwise by φ = angle_deg about the z axis.
//   shepp_logan_ellipses(dim)            the modified Shepp–Logan head: the ellipses of Shepp &
//                                        Logan, "The Fourier reconstruction of a head section",
//                                        IEEE Trans. Nucl. Sci. 21(3):21–43, 1974, with the
//                                        higher-contrast intensities of P. Toft, "The Radon
//                                        Transform: Theory and Implementation", PhD thesis, DTU,
//                                        1996, pp. 199–200 (the table MATLAB's phantom() uses).
//                                        3D: the ellipsoids of the 3D head of Kak & Slaney,
//                                        "Principles of Computerized Tomographic Imaging", IEEE
//                                        Press 1988, §3.5, with Toft's intensities (the table of
//                                        M. Schabel's phantom3d), WITHOUT the 10° out-of-plane
//                                        tilt of the two ventricles (rotations here are about z
//                                        only). Values: 1 (skull), 0.2 (brain), 0 (ventricles),
//                                        0.3 (small features); the head fills 92% of y.
//   shepp_logan(grid, K)                 ellipse_phantom with that table.
//
// Trajectories (struct Trajectory: kx, ky[, kz] in cycles/FOV; sample j = s + S·(l + L·p): s the
// sample of interleave l of partition p, i.e. readouts contiguous, interleaves next, kz planes
// slowest). In 3D both are stacks: the 2D pattern (in kx, ky) repeated on the Nz Cartesian
// planes kz = p − ⌊Nz/2⌋, p = 0 … Nz−1.
//   spiral_trajectory   L Archimedean interleaves k(τ) = (R_x τ cos θ, R_y τ sin θ),
//                       θ = 2π(l/L + turns·τ), τ = s/S, s = 0 … S−1, R_d = reach·N_d/2. The
//                       spacing between arms at the edge is R/(turns·L) cycles/FOV; turns =
//                       oversampling·R/L makes it 1/oversampling (1: the Nyquist spacing of a unit
//                       field of view), with R = reach·max(Nx, Ny)/2. τ advances uniformly
//                       (constant angular velocity), so the arm is fastest at the edge,
//                       |dk/dτ| <= 2π·turns·R; the default S = ⌈2π·turns·R⌉ puts samples at most
//                       1 cycle/FOV apart there (twice as dense, on average, as the arc length
//                       π·turns·R needs). Reach 1 covers the disc |k| <= N/2; reach > 1 runs into the
//                       corners of the k-space square and beyond it, where Encoding refuses
//                       samples: keep only those inside (√2 reaches the corners).
//   radial_trajectory   L spokes of S samples. Centre-out (default): k = R τ (cos θ, sin θ),
//                       τ = s/S, θ = 2π l/L. Diameters: τ = 2s/S − 1, θ = π l/L. Defaults: the
//                       Nyquist spacing 1 between spokes at the edge (L = 2⌈πN/2⌉ centre-out,
//                       ⌈πN/2⌉ diameters) and twice the Nyquist rate along the spoke (S = N
//                       centre-out, 2N diameters), as MRI readouts are oversampled.
//   readout_times       t_j = start + s·dwell (seconds) for sample s of its readout.
//
// Coil sensitivities (coil_maps): C coils centred on a circle of radius `radius` (half-FOV units)
// around the z axis at angles a_c = 2πc/C (in 3D in the plane z = 0), magnitude
// exp(−d²/width²) with d the distance to the coil centre, phase a_c + phase·(u cos a_c + v sin a_c)
// radians: smooth, each coil seeing its side of the object best. With normalize, divided at every
// voxel by (Σ_c |S_c|²)^½, so that Σ_c |S_c|² = 1 everywhere (inside the object included). Layout:
// image + {C}: S_c(v) at index v + voxels·c.
//
// Field map (field_map): Σ_b A_b exp(−|u − c_b|²/w_b²) over `blobs` Gaussian blobs with seeded
// centres (|u_d| <= 0.5), widths (0.2 … 0.5) and signed amplitudes, scaled so that
// max_v |Δf_v| = max_hz exactly; returned as Δω = 2π·Δf in rad/s (Encoding's unit), image layout.
// Optionally a localised susceptibility-like offset is added AFTER that scaling (so the map's
// maximum may then exceed max_hz): susceptibility_hz · exp(−|u − c|²/w²) with centre c =
// susceptibility_center and width w = susceptibility_width (half-FOV units) — the sharp, strong
// off-resonance near air–tissue boundaries (sinuses, ear canals) that smooth maps lack.
//
// Multi-shot phase (shot_phase_maps): for each shot s a smooth phase map, the low-order
// polynomial φ_s(u) = a_s + Σ_d b_{s,d} u_d + Σ_{d<=e} q_{s,de} u_d u_e in the voxel positions u
// (half-FOV units) — constant, linear and quadratic terms, the shape of motion-induced phase in
// diffusion-weighted shots (rigid motion gives constant and linear terms, nonrigid pulsation
// smooth higher-order ones) — with coefficients uniform in [−1, 1] from the seed, then scaled so
// that max_v |φ_s(v)| = max_phase exactly (radians), for every shot. Layout image + {S}: φ_s(v)
// at index v + voxels·s, the phase maps of mri::pcsense.
// Shot labels (shot_labels): sample j of a trajectory belongs to interleave l = (j / S) mod L
// (sample j = s + S·(l + L·p), above), and gets the label l mod shots: arm l is acquired in shot
// l mod shots (interleaves of one shot spread evenly over k-space when shots divides L); in 3D,
// every kz plane's arm l in the same shot. 1 <= shots <= L, so that every shot has samples.
//
// Noise (add_noise): complex white Gaussian noise of standard deviation sigma per complex value
// (real and imaginary parts independent, each of variance sigma²/2), added in place; Box–Muller
// on SplitMix64, computed in double.
//
// Errors (fieldft::Error, kInvalidArgument unless said): a grid of the wrong rank or with a size
// < 1; subsamples outside [1, 16]; an ellipse with a non-finite entry or a semi-axis <= 0;
// interleaves, spokes, samples or coils < 1 (0 = the default where documented); reach,
// oversampling, width, radius, max_hz, max_phase, dwell, sigma not finite or out of range (each message says
// the range); sizes beyond 64 bits → kTooLarge.
#pragma once

#include <complex>
#include <cstdint>
#include <span>
#include <vector>

namespace fieldft::mri {

// ---------------------------------------------------------------------------------------------
// Phantoms.

struct Ellipse {
  double value = 0;                 // intensity added inside
  double center[3] = {0, 0, 0};     // x0, y0, z0 (half-FOV units; z0 unused in 2D)
  double semi_axes[3] = {1, 1, 1};  // a, b, c  (half-FOV units; c unused in 2D)
  double angle_deg = 0;             // counter-clockwise rotation about z, degrees
};

// The modified Shepp–Logan table for dim = 2 or 3 (see above; 10 entries each).
std::span<const Ellipse> shepp_logan_ellipses(int dim);

// The phantom on `grid` (2 or 3 sizes), real, image layout; subsamples K per axis (1 … 16).
std::vector<double> ellipse_phantom(std::span<const std::int64_t> grid, std::span<const Ellipse> ellipses,
                                    int subsamples = 4);
std::vector<double> shepp_logan(std::span<const std::int64_t> grid, int subsamples = 4);

// ---------------------------------------------------------------------------------------------
// Trajectories.

struct Trajectory {
  int dim = 2;
  std::int64_t interleaves = 0;    // L: spiral arms or radial spokes
  std::int64_t samples = 0;        // S: samples per interleave
  std::int64_t partitions = 1;     // kz planes (Nz in 3D, 1 in 2D)
  std::vector<double> kx, ky, kz;  // cycles/FOV; kz empty in 2D
  std::int64_t size() const noexcept { return static_cast<std::int64_t>(kx.size()); }
};

struct SpiralOptions {
  std::int64_t interleaves = 0;  // L >= 1; 0: max(1, max(Nx, Ny)/8)
  std::int64_t samples = 0;      // S per interleave >= 1; 0: ⌈2π·turns·R⌉ (Nyquist along the arm)
  double oversampling = 1;       // > 0: arms 1/oversampling cycles/FOV apart
  double reach = 1;              // (0, 2]: outer radius as a fraction of N_d/2
};

struct RadialOptions {
  std::int64_t spokes = 0;   // L >= 1; 0: Nyquist spacing at the edge (see above)
  std::int64_t samples = 0;  // S per spoke >= 1; 0: N centre-out, 2N diameters
  bool centre_out = true;    // spokes from k = 0 (angles 2πl/L), else diameters (angles πl/L)
};

Trajectory spiral_trajectory(std::span<const std::int64_t> grid, const SpiralOptions& options = {});
Trajectory radial_trajectory(std::span<const std::int64_t> grid, const RadialOptions& options = {});

// t_j = start_s + s·dwell_s for sample s of its readout (t.size() values, seconds);
// dwell_s >= 0 and start_s finite.
std::vector<double> readout_times(const Trajectory& t, double dwell_s, double start_s = 0);

// ---------------------------------------------------------------------------------------------
// Coil sensitivities and field maps.

struct CoilOptions {
  double radius = 1.2;     // > 0: coil centres' distance from the centre, half-FOV units
  double width = 1.0;      // > 0: Gaussian width of the magnitude, half-FOV units
  double phase = 1.0;      // finite: phase slope towards the coil, radians per half FOV
  bool normalize = false;  // Σ_c |S_c|² = 1 at every voxel
};

// coils >= 1 maps, layout image + {C}.
std::vector<std::complex<double>> coil_maps(std::span<const std::int64_t> grid, std::int64_t coils,
                                            const CoilOptions& options = {});

struct FieldMapOptions {
  double max_hz = 50;      // >= 0: max |Δf| in Hz
  int blobs = 3;           // >= 1
  std::uint64_t seed = 1;
  double susceptibility_hz = 0;                          // finite, |.| <= 1e9: offset's peak in Hz; 0: none
  double susceptibility_center[3] = {0.0, 0.45, 0.0};    // half-FOV units (z unused in 2D)
  double susceptibility_width = 0.12;                    // > 0, half-FOV units
};

// Δω in rad/s, image layout.
std::vector<double> field_map(std::span<const std::int64_t> grid, const FieldMapOptions& options = {});

// ---------------------------------------------------------------------------------------------
// Multi-shot phase.

struct ShotPhaseOptions {
  double max_phase = 3.0;  // [0, 1e6]: max_v |φ_s(v)| of every shot, radians
  std::uint64_t seed = 1;
};

// shots >= 1 phase maps in radians, layout image + {S}.
std::vector<double> shot_phase_maps(std::span<const std::int64_t> grid, std::int64_t shots,
                                    const ShotPhaseOptions& options = {});
// One label per sample of t: its interleave modulo `shots` (1 <= shots <= t.interleaves), for
// mri::Encoding's shots.
std::vector<std::int32_t> shot_labels(const Trajectory& t, std::int64_t shots);

// ---------------------------------------------------------------------------------------------
// Noise.

// data += complex Gaussian noise of standard deviation sigma (>= 0, finite) per value.
template <class T>
void add_noise(std::span<std::complex<T>> data, double sigma, std::uint64_t seed);

extern template void add_noise<float>(std::span<std::complex<float>>, double, std::uint64_t);
extern template void add_noise<double>(std::span<std::complex<double>>, double, std::uint64_t);

}  // namespace fieldft::mri
