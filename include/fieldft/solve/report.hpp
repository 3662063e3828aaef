// The progress report and result shared by every solver of the solve layer (cg, pwls_pcg, fista,
// admm; DESIGN.md §1).
//
// A solver calls its callback once per iteration, after that iteration's update of x, with a
// Report; returning false stops it (Result::stopped). What `residual` measures depends on the
// solver and is stated in its header:
//   cg, cg_normal          ‖r‖/‖r0‖, r = b − (N + λI)x, the residual of the normal equations;
//   pwls_pcg, fista, admm  the relative change ‖x_k − x_{k−1}‖ / ‖x_k‖ (1 when x_k = 0 ≠ x_{k−1},
//                          0 when both are 0; fista measures its proximal point, see fista.hpp).
// `objective` is the solver's cost function at x_k (NaN where the solver does not evaluate one:
// cg). A number in a report has come back from the context's memory: on a device, asking for
// reports (a callback or a tolerance) costs one host synchronisation per iteration, and nothing
// else does.
#pragma once

#include <functional>
#include <limits>

namespace fieldft::solve {

struct Report {
  int iteration = 0;     // 1, 2, … (the number of updates of x so far)
  double residual = 0;   // see above
  double seconds = 0;    // host wall time since the solver was called (includes the sync)
  double objective = std::numeric_limits<double>::quiet_NaN();  // cost at x_k; NaN: not evaluated
};

// Called after every iteration; return false to stop.
using Callback = std::function<bool(const Report&)>;

struct Result {
  int iterations = 0;     // updates of x done
  double residual = 0;    // the last report's residual; NaN when none was computed
  bool converged = false; // residual <= tolerance (false when not computed)
  bool stopped = false;   // the callback returned false
  double seconds = 0;     // host wall time of the call (on a device without reports: enqueueing)
  double objective = std::numeric_limits<double>::quiet_NaN();  // the last report's objective
};

}  // namespace fieldft::solve
