// Dimension-independent launchers of the NUFFT kernels.
#include "cuda/nufft_launch_impl.cuh"

namespace fieldft::cuda {

template <class T>
void launch_find_non_finite(cudaStream_t s, std::int64_t m, const T* x, unsigned long long* bad) {
  if (m == 0) return;
  find_non_finite<T><<<grid_for(m), kThreads, 0, s>>>(m, x, bad);
  FIELDFT_CUDA_CHECK_LAUNCH();
}

template <class T>
void launch_copy_modes(cudaStream_t s, const ModeMap& mm, const T* const* deconv, const DevGrid& g, Cplx<T>* fine,
                       Cplx<T>* f, int nbatch, bool to_modes) {
  const std::int64_t warps = (mm.n[0] + kCopySegment - 1) / kCopySegment * mm.n[1] * mm.n[2] * nbatch;
  copy_modes<T><<<grid_for(32 * warps), kThreads, 0, s>>>(mm, deconv[0], deconv[1], deconv[2], g, fine, f, nbatch,
                                                          to_modes);
  FIELDFT_CUDA_CHECK_LAUNCH();
}

template <class T>
void launch_mode_fft_pass(cudaStream_t s, const ModeFftPass<T>& fp, int C, int threads, const std::int64_t* fine_index,
                          const T* deconv, const Cplx<T>* in, std::int64_t in_batch, Cplx<T>* out,
                          std::int64_t out_batch, int nb) {
  const std::int64_t blocks = (fp.ncol + C - 1) / C;
  if (blocks == 0 || nb == 0) return;
  auto kernel = C == 32 ? mode_fft_pass<T, 32> : C == 16 ? mode_fft_pass<T, 16> : mode_fft_pass<T, 8>;
  const std::size_t smem = mode_fft_smem<T>(fp.L, C);
  if (smem > 48 * 1024)
    FIELDFT_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
  kernel<<<dim3(static_cast<unsigned>(blocks), static_cast<unsigned>(nb)), threads, smem, s>>>(
      fp, fine_index, deconv, in, in_batch, out, out_batch);
  FIELDFT_CUDA_CHECK_LAUNCH();
}

template void launch_find_non_finite<float>(cudaStream_t, std::int64_t, const float*, unsigned long long*);
template void launch_find_non_finite<double>(cudaStream_t, std::int64_t, const double*, unsigned long long*);
template void launch_copy_modes<float>(cudaStream_t, const ModeMap&, const float* const*, const DevGrid&, Cplx<float>*,
                                       Cplx<float>*, int, bool);
template void launch_copy_modes<double>(cudaStream_t, const ModeMap&, const double* const*, const DevGrid&,
                                        Cplx<double>*, Cplx<double>*, int, bool);

template void launch_mode_fft_pass<float>(cudaStream_t, const ModeFftPass<float>&, int, int, const std::int64_t*,
                                          const float*, const Cplx<float>*, std::int64_t, Cplx<float>*, std::int64_t, int);
template void launch_mode_fft_pass<double>(cudaStream_t, const ModeFftPass<double>&, int, int, const std::int64_t*,
                                           const double*, const Cplx<double>*, std::int64_t, Cplx<double>*, std::int64_t, int);

}  // namespace fieldft::cuda
