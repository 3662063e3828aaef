// The field-corrected DFT's validated set-up (src/core/dft_setup.hpp) as mri::Dft builds it, for
// the mri operators that drive a DFT engine themselves (src/mri/pcsense_dft.cpp). Internal; not
// installed. Defined in src/mri/dft.cpp.
#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include "core/dft_setup.hpp"

namespace fieldft::mri::detail {

// The checks and precomputation of Dft(grid, kx, ky, kz, field, times, context, images), without
// R2*; the same errors.
template <class T>
std::shared_ptr<core::DftSetup> build_dft_setup(std::span<const std::int64_t> grid, std::span<const T> kx,
                                                std::span<const T> ky, std::span<const T> kz,
                                                std::span<const T> field, std::span<const T> times,
                                                std::int64_t images);

}  // namespace fieldft::mri::detail
