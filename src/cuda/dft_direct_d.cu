// CUDA-core field-corrected DFT kernels, double.
#include "cuda/dft_direct_launch.cuh"

namespace fieldft::cuda::dft {

template void launch_forward_direct<double>(const Params<double>&, const DirectArgs&, const Cplx<double>*,
                                         Cplx<double>*, std::int64_t);
template void launch_adjoint_direct<double>(const Params<double>&, const DirectArgs&, const Cplx<double>*,
                                         Cplx<double>*, std::int64_t);
template int direct_occupancy<double>(bool, const Params<double>&, const DirectArgs&);
template int direct_forward_block_samples<double>(const Params<double>&, const DirectArgs&);

}  // namespace fieldft::cuda::dft
