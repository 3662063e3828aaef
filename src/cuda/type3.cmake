# NUFFT type 3 (src/cuda/cuda_plan.cu): its per-point factors and diagonal scalings. Included by src/cuda/CMakeLists.txt.
target_sources(fieldft_cuda PRIVATE ${CMAKE_CURRENT_LIST_DIR}/type3_kernels.cu)
