// The point-spread function of the NUFFT encoding model on the 2N grid, shared by the Toeplitz
// normals (toeplitz.cpp, field_toeplitz.cpp): f[q] = Σ_j c_j exp(+i q·x_j) with 2N_d modes per
// axis in FFT order (modeord 1) at the encoding's own points x_{j,d} = 2π k_{j,d} / N_d, i.e.
// p(d) = Σ_j c_j exp(+2πi k_j·d/N) at offset d (index d mod 2N_d): ONE type 1 plan, its points
// set once, executed for each set of strengths c. Internal.
#pragma once

#include <complex>
#include <cstdint>
#include <numbers>
#include <span>
#include <vector>

#include "fieldft/context.hpp"
#include "fieldft/mri/encoding.hpp"
#include "fieldft/nufft.hpp"
#include "op/host_loops.hpp"

namespace fieldft::mri::detail {

template <class T>
class PsfTransform {
 public:
  PsfTransform(const Encoding<T>& e, const Context& context, double eps, nufft::Options options)
      : plan_(1, modes(e), +1, 1, eps, context, with_modeord(options)) {
    const std::int64_t m = e.num_samples();
    const T* p[3] = {nullptr, nullptr, nullptr};
    for (int d = 0; d < e.dim(); ++d) {  // in double, as NufftEncoding computes its points
      const auto k = e.k(d);
      const double scale = 2 * std::numbers::pi / static_cast<double>(e.grid()[d]);
      x_[d].resize(static_cast<std::size_t>(m));
      T* x = x_[d].data();
      op::host::for_each_index(context, m, m, [&](std::int64_t j) { x[j] = static_cast<T>(scale * static_cast<double>(k[j])); });
      p[d] = x_[d].data();
    }
    plan_.set_points(m, p[0], p[1], p[2]);
  }
  // out (context memory, ∏ 2N_d values) = f for the M strengths c (host memory; a device plan
  // stages them and waits for the result).
  void execute(const std::complex<T>* c, std::complex<T>* out) { plan_.execute(c, out); }

 private:
  static std::vector<std::int64_t> modes(const Encoding<T>& e) {
    std::vector<std::int64_t> m;
    for (int d = 0; d < e.dim(); ++d) m.push_back(2 * e.grid()[d]);
    return m;
  }
  static nufft::Options with_modeord(nufft::Options o) {
    o.modeord = 1;
    return o;
  }
  std::vector<T> x_[3];
  nufft::Plan<T> plan_;
};

}  // namespace fieldft::mri::detail
