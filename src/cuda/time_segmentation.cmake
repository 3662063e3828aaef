# The time-segmented encoding's passes on CUDA devices (src/mri/time_segmented_encoding.cpp
# dispatches here). Included by src/cuda/CMakeLists.txt.
target_sources(fieldft_cuda PRIVATE ${CMAKE_CURRENT_LIST_DIR}/time_segmentation.cu)
