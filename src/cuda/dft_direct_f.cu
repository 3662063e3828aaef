// CUDA-core field-corrected DFT kernels, float.
#include "cuda/dft_direct_launch.cuh"

namespace fieldft::cuda::dft {

template void launch_forward_direct<float>(const Params<float>&, const DirectArgs&, const Cplx<float>*,
                                         Cplx<float>*, std::int64_t);
template void launch_adjoint_direct<float>(const Params<float>&, const DirectArgs&, const Cplx<float>*,
                                         Cplx<float>*, std::int64_t);
template int direct_occupancy<float>(bool, const Params<float>&, const DirectArgs&);
template int direct_forward_block_samples<float>(const Params<float>&, const DirectArgs&);

}  // namespace fieldft::cuda::dft

namespace fieldft::cuda::dft {

int direct_adjoint_block_tiles() { return kAdjointTilesPerBlock; }
int direct_adjoint_stage() { return kDirectBlock; }

}  // namespace fieldft::cuda::dft
