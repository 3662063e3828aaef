// The CUDA backend of the field-corrected DFT (fieldft::mri::Dft / DftR2). A plain C++ header:
// src/mri/dft.cpp, compiled by the host compiler, calls it.
#pragma once

#include <memory>

#include "core/dft_setup.hpp"

namespace fieldft::cuda {

// An engine on CUDA device `device` that orders all its work on `stream` (a cudaStream_t of that
// device; nullptr = the legacy default stream), which must outlive the engine. The problem data
// are uploaded here (this call synchronises); device-pointer calls are stream-ordered and scratch
// memory is allocated stream-ordered on first use. The caller's current device is restored by
// every call, the destructor included.
template <class T>
std::unique_ptr<core::DftEngine<T>> make_dft_engine(std::shared_ptr<const core::DftSetup> setup, int device,
                                                    void* stream);

// Whether an engine of `images` images runs grouped setups (core::DftSetup::grouped): float on
// the tensor-core path (from tc_min_images images, DftSetup::tc_min_images) without R2*;
// make_dft_engine refuses a grouped setup otherwise.
template <class T>
bool dft_groups_supported(std::int64_t images, int tc_min_images = core::kDftDefaultTcMinImages);

}  // namespace fieldft::cuda
