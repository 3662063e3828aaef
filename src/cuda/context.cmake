# Execution contexts and operator workspaces (src/context.cpp, src/op/linear_operator.cpp): CUDA
# streams and stream-ordered memory. Included by src/cuda/CMakeLists.txt.
target_sources(fieldft_cuda PRIVATE ${CMAKE_CURRENT_LIST_DIR}/stream.cu)
