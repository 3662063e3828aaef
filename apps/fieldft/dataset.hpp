// Datasets of `fieldft simulate` and `fieldft recon` on disk: an ISMRMRD file (.h5, with the maps
// and the truth as NDArrays, io/ismrmrd.hpp) or a set of BART .cfl/.hdr files sharing a prefix P:
//   P_ksp    [1, S, R, C]     k-space, S samples per readout, R readouts, C coils (required)
//   P_traj   [3, S, R]        k in cycles/FOV, BART's layout (required)
//   P_times  [1, S, R]        readout times in seconds (real parts; optional)
//   P_shots  [1, S, R]        shot label of every sample (real parts, integers; optional)
//   P_maps   [Nx, Ny, Nz, C]  coil sensitivities (optional)
//   P_field  [Nx, Ny, Nz]     field map in rad/s (real parts; optional)
//   P_phase  [Nx, Ny, Nz, S]  per-shot phase maps in radians (real parts; optional)
//   P_truth  [Nx, Ny, Nz]     the true image (optional)
// Both read into io::RawData, the one in-memory form.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "io/ismrmrd.hpp"

namespace fieldft::cli {

// Whether s ends with tail (file extensions).
bool ends_with(const std::string& s, const std::string& tail);

// Whether `path` names an ISMRMRD file (by its extension .h5 / .hdf5 / .mrd).
bool is_ismrmrd_path(const std::string& path);

// The prefix P of a .cfl set from "P", "P_ksp", "P_ksp.cfl" or "P_ksp.hdr".
std::string cfl_prefix(const std::string& path);

// Writes every part of `d` that is present, each file atomically (io/cfl.hpp), the k-space last.
// Readouts must all have the same length.
void write_cfl_dataset(const std::string& prefix, const io::RawData& d);

// Reads a .cfl set. The grid comes from the maps, field, phase or truth when one is present, else
// from `matrix` (non-zero entries), else from the trajectory's extent (2·⌈max |k_d|⌉ per axis).
// `traj` (a .cfl base) replaces P_traj when not empty.
io::RawData read_cfl_dataset(const std::string& prefix, std::array<std::int64_t, 3> matrix = {0, 0, 0},
                             const std::string& traj = {});

// ISMRMRD or .cfl by the path (see above); a clear fieldft::Error for a missing file. With `traj`
// given, a .cfl `path` may also be any BART k-space file (e.g. `ksp` from `bart`), with the
// trajectory in `traj` and no companions: the usual BART naming.
io::RawData read_dataset(const std::string& path, std::array<std::int64_t, 3> matrix = {0, 0, 0},
                         const std::string& traj = {});

// "128x128" or "64x64x32".
std::string grid_text(const io::RawData& d);

}  // namespace fieldft::cli
