# The sparsifying operators on CUDA devices (src/op/sparsify.cpp dispatches here). Included by
# src/cuda/CMakeLists.txt.
target_sources(fieldft_cuda PRIVATE ${CMAKE_CURRENT_LIST_DIR}/sparsify.cu)
