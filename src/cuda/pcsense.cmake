# Phase-corrected SENSE's kernels on CUDA devices (src/mri/pcsense.cpp dispatches here). Included
# by src/cuda/CMakeLists.txt.
target_sources(fieldft_cuda PRIVATE ${CMAKE_CURRENT_LIST_DIR}/pcsense.cu)
