// The power method for the largest eigenvalue (include/fieldft/solve/max_eigenvalue.hpp); the
// loop itself is detail::power_iteration, shared with fista.
#include "fieldft/solve/max_eigenvalue.hpp"

#include <complex>

#include "fieldft/error.hpp"
#include "fieldft/op/vector_ops.hpp"
#include "solve/common.hpp"

namespace fieldft::solve {

template <class T>
double max_eigenvalue(op::LinearOperator<T>& nop, int iterations) {
  using C = std::complex<T>;
  detail::check_iterations("max_eigenvalue", "iterations", iterations);
  require(nop.domain_shape() == nop.codomain_shape(), ErrorCode::kShapeMismatch,
          "solve::max_eigenvalue: " + nop.name() + " maps " +
              op::shape_string(nop.domain_shape()) + " to " +
              op::shape_string(nop.codomain_shape()) +
              "; expected a square (Hermitian positive semi-definite) operator");
  const std::int64_t n = nop.domain_size();
  op::VectorOps<T> v(nop.context());
  op::Workspace work(nop.context());
  C* ws = work.get_as<C>(2 * n + 1);
  return detail::power_iteration<T>(
      v, n, [&](const C* in, C* out) { nop.apply(in, out); }, iterations, ws,
      reinterpret_cast<T*>(ws + 2 * n));
}

template double max_eigenvalue<float>(op::LinearOperator<float>&, int);
template double max_eigenvalue<double>(op::LinearOperator<double>&, int);

}  // namespace fieldft::solve
