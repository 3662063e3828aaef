# The device steps of mri::density_compensation (src/mri/density.cpp calls them). Included by
# src/cuda/CMakeLists.txt.
target_sources(fieldft_cuda PRIVATE ${CMAKE_CURRENT_LIST_DIR}/density.cu)
