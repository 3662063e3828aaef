# The Toeplitz normal operator's CUDA engine (src/mri/toeplitz.cpp picks it). Included by
# src/cuda/CMakeLists.txt.
target_sources(fieldft_cuda PRIVATE ${CMAKE_CURRENT_LIST_DIR}/toeplitz.cu)
