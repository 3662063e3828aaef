# Field-corrected DFT (src/mri/dft.cpp): CUDA kernels and the CUDA engine. Included by
# src/cuda/CMakeLists.txt. One translation unit per kernel family keeps builds parallel.
target_sources(fieldft_cuda PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/dft_direct_f.cu
  ${CMAKE_CURRENT_LIST_DIR}/dft_direct_d.cu
  ${CMAKE_CURRENT_LIST_DIR}/dft_tc.cu
  ${CMAKE_CURRENT_LIST_DIR}/dft_engine.cu)
