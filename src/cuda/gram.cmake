# Dense Gram-matrix normals on CUDA devices (src/mri/pcsense_dft.cpp's Gram normal): the identity
# columns that build H and the product H·U. Included by src/cuda/CMakeLists.txt.
target_sources(fieldft_cuda PRIVATE ${CMAKE_CURRENT_LIST_DIR}/gram.cu)
