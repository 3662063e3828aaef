// Dense<T>: a LinearOperator y = M x for a dense Mat (support/dense_matrix.hpp), computed on the
// host in double (compiled per backend: FIELDFT_TEST_BACKEND). Device vectors are staged through
// the host, which synchronises: fine for correctness tests, never for stream-order tests.
#pragma once

#include <complex>
#include <string>
#include <utility>
#include <vector>

#include "fieldft/op/linear_operator.hpp"
#include "support/context_vector.hpp"
#include "support/dense_matrix.hpp"

namespace fieldft::test {

// A dense test operator y = M x computed on the host in double (device vectors are staged through
// the host, which synchronises: fine for a correctness test, never for the stream-order test).
template <class T>
class Dense final : public op::LinearOperator<T> {
 public:
  using Complex = std::complex<T>;
  Dense(Mat m, Context c)
      : op::LinearOperator<T>({m.cols}, {m.rows}, std::move(c)), m_(std::move(m)), mh_(herm(m_)) {}
  std::string name() const override { return "Dense(" + std::to_string(m_.rows) + "x" + std::to_string(m_.cols) + ")"; }
  void apply(const Complex* x, Complex* y) override { run(m_, x, y); }
  void apply_adjoint(const Complex* y, Complex* x) override { run(mh_, y, x); }

 private:
  void run(const Mat& m, const Complex* in, Complex* out) {
    const auto x = ContextVector<T>::read_from(this->context(), in, m.cols);
    std::vector<cdouble> xd(x.begin(), x.end());
    ContextVector<T>::write_to(this->context(), narrow<T>(mul(m, xd)), out);
  }
  Mat m_, mh_;
};

}  // namespace fieldft::test
