# fieldft::op::VectorOps on CUDA devices (src/op/vector_ops.cpp dispatches here). Included by
# src/cuda/CMakeLists.txt.
target_sources(fieldft_cuda PRIVATE ${CMAKE_CURRENT_LIST_DIR}/vector_ops.cu)
