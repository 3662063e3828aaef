// pcSENSE with the exact field-corrected DFT in ONE pass over all shots (used by mri::pcsense,
// src/mri/pcsense.cpp). Internal; not installed. Defined in src/mri/pcsense_dft.cpp.
#pragma once

#include <complex>
#include <cstdint>
#include <span>
#include <vector>

#include "fieldft/context.hpp"
#include "fieldft/mri/encoding.hpp"
#include "fieldft/op/combinators.hpp"  // op::OperatorPtr

namespace fieldft::mri::detail {

// y_{s,c} = E_s(S_c ∘ e^{iφ_s} ∘ x) written as y_{j,c} = Σ_v E_jv e^{iφ_{s(j)}(v)} (S_c ∘ x)(v):
// the shot's phase joins the exponential, so the C coil images S_c ∘ x feed every shot and ONE
// grouped DFT of C images covers all samples (core::DftSetup's groups = the shots). Returns
// nullptr where that form does not run: a host context, or an engine without grouped samples
// (cuda::dft_groups_supported: float on the tensor cores). shot_samples: each shot's original
// sample positions; maps: voxels·C; phase_maps: voxels·S radians; all validated by the caller.
// gram: the normal through the stored Gram matrix (PcSenseOptions::gram; pcsense_dft.cpp).
template <class T>
op::OperatorPtr<T> one_pass_dft_pcsense(const Encoding<T>& encoding,
                                        const std::vector<std::vector<std::int64_t>>& shot_samples,
                                        std::span<const std::complex<T>> maps, std::span<const T> phase_maps,
                                        std::int64_t coils, bool gram, const Context& context);

}  // namespace fieldft::mri::detail
