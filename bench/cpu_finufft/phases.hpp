// Pieces for splitting one CPU execute into its stages from the outside, through the public API
// only (the backend's internals change; a benchmark that called them would break with them).
#pragma once

#include <complex>
#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "fieldft/nufft.hpp"

namespace fieldft::bench {

// Times, on a grid of the plan's fine-grid size, what execute does besides spreading or
// interpolating: the FFT (FFTW, FFTW_ESTIMATE, the plan's sign and thread count, in place) and a
// copy of the N modes between the mode array and the fine grid with one multiply per mode (the
// deconvolution's memory traffic), plus for type 2 zeroing the fine grid. Minimum over `repeats`
// after one untimed run, in ms: {"fft_ms", "copy_ms", "zero_ms" (type 2)}.
template <class T>
nlohmann::json time_fft_and_copy(const nufft::PlanInfo& info, int nthreads, int repeats);

// Reorders the points (coords: dim arrays of m values, stored one after another) and, when c is
// not null, the strengths with them, by fine-grid bin of info.bin_size, slowest dimension first —
// about the plan's own sort order, so that set_points' permutation becomes nearly the identity and
// the plan reads the caller's arrays almost sequentially. Returns the order used (new j -> old j).
template <class T>
std::vector<std::int64_t> presort(const nufft::PlanInfo& info, std::int64_t m, std::vector<T>& coords,
                                  std::vector<std::complex<T>>* c);

}  // namespace fieldft::bench
