# fieldft::mri::estimate_coil_maps on CUDA devices (src/mri/coil_maps.cpp dispatches here).
# Included by src/cuda/CMakeLists.txt.
target_sources(fieldft_cuda PRIVATE ${CMAKE_CURRENT_LIST_DIR}/coil_maps.cu)
