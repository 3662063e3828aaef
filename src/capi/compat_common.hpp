// What libfieldft_finufft and libfieldft_cufinufft share (docs/dropin-c.md): a FINUFFT-style plan
// over fieldft::nufft::Plan<T> with FINUFFT's conventions (any iflag sign, modes of size 0, the
// (c, f) argument order of execute and execute_adjoint), and the one map from fieldft's errors to
// FINUFFT's return codes. Header-only: each library compiles it into itself.
#pragma once

#include <algorithm>
#include <memory>
#include <type_traits>
#include <array>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <new>
#include <optional>
#include <string>
#include <utility>

#include "capi/capi_common.hpp"
#include "fieldft/compat/finufft/finufft_errors.h"
#include "fieldft/nufft.hpp"

namespace fieldft::compat {

// A FINUFFT return code with its message, thrown inside the compatibility layers.
struct CompatError {
  int code;
  std::string message;
};

inline void check(bool cond, int code, const std::string& message) {
  if (!cond) throw CompatError{code, message};
}

// FINUFFT's code for a fieldft error.
inline int finufft_code(ErrorCode code) noexcept {
  switch (code) {
    case ErrorCode::kOk: return 0;
    case ErrorCode::kNonFinite: return FINUFFT_ERR_SPREAD_PTS_OUT_RANGE;  // NaN/Inf points
    case ErrorCode::kShapeMismatch: return FINUFFT_ERR_NDATA_NOTVALID;
    case ErrorCode::kTooLarge: return FINUFFT_ERR_MAXNALLOC;
    case ErrorCode::kOutOfMemory: return FINUFFT_ERR_ALLOC;
    case ErrorCode::kBackendUnavailable:
    case ErrorCode::kCuda: return FINUFFT_ERR_CUDA_FAILURE;
    case ErrorCode::kInvalidState: return FINUFFT_ERR_PLAN_NOTVALID;
    case ErrorCode::kInternal: return FINUFFT_ERR_UNKNOWN_EXCEPTION;
    case ErrorCode::kInvalidArgument:
    case ErrorCode::kEpsTooSmall:
    case ErrorCode::kNotImplemented:
    case ErrorCode::kContextMismatch: return FINUFFT_ERR_INVALID_ARGUMENT;
  }
  return FINUFFT_ERR_UNKNOWN_EXCEPTION;
}

// Prints "[fieldft who] error code: what" to stderr, as FINUFFT prints its errors, keeps it as
// fieldft_last_error() (fieldft.h), and returns code. Never throws.
inline int report(const char* who, int code, const char* what) noexcept {
  capi::fail(code, who, what);
  std::fprintf(stderr, "[fieldft %s] error %d: %s\n", who, code, what);
  return code;
}

// Runs body() (which returns 0 or the warning FINUFFT_WARN_EPS_TOO_SMALL) and turns whatever it
// throws into FINUFFT's code.
template <class Body>
int guard(const char* who, Body&& body) noexcept {
  try {
    return body();
  } catch (const CompatError& e) {
    return report(who, e.code, e.message.c_str());
  } catch (const Error& e) {
    return report(who, finufft_code(e.code()), e.what());
  } catch (const std::bad_alloc&) {
    return report(who, FINUFFT_ERR_ALLOC, "out of memory");
  } catch (const std::exception& e) {
    return report(who, FINUFFT_ERR_UNKNOWN_EXCEPTION, e.what());
  } catch (...) {
    return report(who, FINUFFT_ERR_UNKNOWN_EXCEPTION, "unknown exception");
  }
}

// FINUFFT's plan semantics on a fieldft plan. `plan` is empty when a mode count is 0 (FINUFFT
// accepts it: type 1 then writes nothing and type 2 writes zeros).
template <class T>
struct Plan {
  using Complex = std::complex<T>;
  int type = 1, dim = 1;
  std::int64_t ntrans = 1, num_modes = 1, num_points = 0;
  bool points_set = false;
  std::optional<nufft::Plan<T>> plan;

  // Checks shared by both libraries, then the fieldft plan. eps is clamped into
  // [min_eps<T>, 1]; returns FINUFFT_WARN_EPS_TOO_SMALL when it was raised, else 0. A mode count
  // of 0 is FINUFFT's empty transform where allow_zero_modes (cuFINUFFT refuses it).
  int make(int type_, int dim_, const std::int64_t* n_modes, int iflag, int ntrans_, double eps,
           const Context& context, nufft::Options options, bool allow_zero_modes) {
    check(type_ >= 1 && type_ <= 3, FINUFFT_ERR_TYPE_NOTVALID,
          "type is " + std::to_string(type_) + ", expected 1, 2 or 3");
    check(dim_ >= 1 && dim_ <= 3, FINUFFT_ERR_DIM_NOTVALID, "dim is " + std::to_string(dim_) + ", expected 1, 2 or 3");
    check(ntrans_ >= 1, FINUFFT_ERR_NTRANS_NOTVALID, "ntrans is " + std::to_string(ntrans_) + ", expected >= 1");
    check(!(eps != eps), FINUFFT_ERR_INVALID_ARGUMENT, "tol is NaN");
    type = type_;
    dim = dim_;
    ntrans = ntrans_;
    std::array<std::int64_t, 3> n{1, 1, 1};
    if (type != 3) {
      check(n_modes != nullptr, FINUFFT_ERR_INVALID_ARGUMENT, "n_modes is NULL");
      for (int d = 0; d < dim; ++d) {
        check(n_modes[d] >= (allow_zero_modes ? 0 : 1), FINUFFT_ERR_NDATA_NOTVALID,
              "n_modes[" + std::to_string(d) + "] is " + std::to_string(n_modes[d]) + ", expected >= " +
                  (allow_zero_modes ? "0" : "1"));
        n[d] = n_modes[d];
      }
    }
    num_modes = n[0] * n[1] * n[2];
    int warning = 0;
    if (eps < nufft::min_eps<T>()) {
      eps = nufft::min_eps<T>();
      warning = FINUFFT_WARN_EPS_TOO_SMALL;
    }
    eps = std::min(eps, 1.0);
    const int isign = iflag >= 0 ? 1 : -1;
    // The rounding floor also depends on the grid (the deconvolution's gain, core/plan_setup): a
    // CUDA plan at upsampfac 2 refuses float eps 1e-7 (floor ~1.0e-7). FINUFFT raises a too-small
    // tolerance and warns, so raise it in steps of 1.5 until the plan takes it (a few steps at most:
    // the gain is below 3), keeping the warning.
    for (int attempt = 0; num_modes > 0; ++attempt) {
      try {
        plan.emplace(type, std::span<const std::int64_t>(n.data(), static_cast<std::size_t>(dim)), isign, ntrans,
                     eps, context, options);
        break;
      } catch (const Error& e) {
        if (e.code() != ErrorCode::kEpsTooSmall || attempt >= 8) throw;
        eps = std::min(eps * 1.5, 1.0);
        warning = FINUFFT_WARN_EPS_TOO_SMALL;
      }
    }
    return warning;
  }

  int set_points(std::int64_t m, const T* x, const T* y, const T* z, std::int64_t nk, const T* s, const T* t,
                 const T* u) {
    check(m >= 0, FINUFFT_ERR_NUM_NU_PTS_INVALID, "M is " + std::to_string(m) + ", expected >= 0");
    if (m > 0) {
      check(x != nullptr && (dim < 2 || y != nullptr) && (dim < 3 || z != nullptr), FINUFFT_ERR_INVALID_ARGUMENT,
            "a coordinate array of the " + std::to_string(dim) + "D points is NULL");
    }
    if (type == 3) {
      check(nk >= 0, FINUFFT_ERR_NUM_NU_PTS_INVALID, "N is " + std::to_string(nk) + ", expected >= 0");
      if (nk > 0)
        check(s != nullptr && (dim < 2 || t != nullptr) && (dim < 3 || u != nullptr), FINUFFT_ERR_INVALID_ARGUMENT,
              "a coordinate array of the " + std::to_string(dim) + "D targets is NULL");
      plan->set_points(m, x, y, z, nk, s, t, u);
      num_modes = nk;
    } else if (plan) {
      plan->set_points(m, x, y, z);
    }
    num_points = m;
    points_set = true;
    return 0;
  }

  // FINUFFT's execute(c, f) / execute_adjoint(c, f): c holds the points' values, f the modes'
  // (type 3: the targets'); which is read and which written follows from the type.
  int execute(Complex* c, Complex* f, bool adjoint) {
    check(points_set, FINUFFT_ERR_PLAN_NOTVALID, "execute before setpts");
    // c is the input of type 1 and 3 and of the type 2 adjoint
    const bool c_in = (type == 2) == adjoint;
    if (num_points > 0) check(c != nullptr, FINUFFT_ERR_INVALID_ARGUMENT, "the strengths array c is NULL");
    if (num_modes > 0) check(f != nullptr, FINUFFT_ERR_INVALID_ARGUMENT, "the modes array f is NULL");
    if (!plan) {  // no modes: f is empty and c, when written, is zero
      if (!c_in && num_points > 0) std::fill(c, c + ntrans * num_points, Complex(0));
      return 0;
    }
    const Complex* in = c_in ? c : f;
    Complex* out = c_in ? f : c;
    if (adjoint)
      plan->execute_adjoint(in, out);
    else
      plan->execute(in, out);
    return 0;
  }
};

// makeplan's body: configure() returns the {Context, nufft::Options} of the caller's options struct
// (it runs inside the guard, so its refusals become return codes).
template <class Handle, class Configure>
int makeplan(const char* who, int type, int dim, const std::int64_t* n_modes, int iflag, int ntrans, double tol,
             Handle** out, bool allow_zero_modes, Configure&& configure) {
  if (out) *out = nullptr;
  return guard(who, [&] {
    check(out != nullptr, FINUFFT_ERR_INVALID_ARGUMENT, "the plan pointer is NULL");
    const auto [context, options] = configure();
    auto h = std::make_unique<Handle>();
    const int warning = h->p.make(type, dim, n_modes, iflag, ntrans, tol, context, options, allow_zero_modes);
    *out = h.release();
    return warning;
  });
}

// The entry points' bodies over a handle `h` holding a Plan<T> `p` (finufft_plan_s and the like).
template <class Handle, class T, class N>
int setpts(const char* who, Handle* h, std::int64_t m, const T* x, const T* y, const T* z, N nk, const T* s,
           const T* t, const T* u) {
  return guard(who, [&] {
    check(h != nullptr, FINUFFT_ERR_PLAN_NOTVALID, "the plan is NULL");
    return h->p.set_points(m, x, y, z, static_cast<std::int64_t>(nk), s, t, u);
  });
}

// c and f: the caller's complex type of the plan's precision (std::complex, cuComplex).
template <class Handle, class C>
int execute(const char* who, Handle* h, C* c, C* f, bool adjoint) {
  return guard(who, [&] {
    check(h != nullptr, FINUFFT_ERR_PLAN_NOTVALID, "the plan is NULL");
    using Complex = typename decltype(h->p)::Complex;
    static_assert(sizeof(C) == sizeof(Complex));
    return h->p.execute(reinterpret_cast<Complex*>(c), reinterpret_cast<Complex*>(f), adjoint);
  });
}

}  // namespace fieldft::compat
