"""fieldft.solve: iterative solvers on fieldft.op operators, on the operator's device.

    E = fieldft.mri.NufftEncoding(enc, batch=C, device="cuda") @ fieldft.op.diag_expand(maps)
    x = fieldft.solve.cg(E, y, max_iter=30)                  # y: (C, M) cupy/torch, x: (Ny, Nx)
    D = fieldft.op.finite_difference(E.ishape, device="cuda")
    x = fieldft.solve.pwls_pcg(E, y, D, beta=1e3, potential="hyperbolic", delta=0.01)
    x = fieldft.solve.fista(E, y, psi=fieldft.op.wavelet(E.ishape, 4, device="cuda"), lam=1e2)
    x = fieldft.solve.admm(E, y, D, lam=1e2, isotropic=True)                  # total variation

cg minimises ‖W^{1/2}(A x − y)‖² + λ‖x‖² by conjugate gradients on its normal equations
(Aᴴ W A + λ I) x = Aᴴ W y (include/fieldft/solve/cg.hpp). With W = I the operator's normal form is
used, so a Toeplitz normal operator is picked up where the operator has one. On a GPU the whole
solve stays there: no host round trip per iteration unless `tol` > 0 or a `callback` asks for the
residual (one number per iteration).

Arrays follow fieldft.op's rules: they live where A runs, have A's dtype and its shapes (or are
flat); the result is made in y's framework and on its device.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np

from . import _arrays, _core
from ._engine import _check_no_overlap
from .op import DtypeError, Operator, _terms

__all__ = ["cg", "pwls_pcg", "fista", "admm", "max_eigenvalue", "Report", "Result"]


@dataclass(frozen=True)
class Report:
    """One solver iteration, as passed to a callback."""
    iteration: int    # 1, 2, …: updates of x so far
    residual: float   # cg: ‖r‖/‖r0‖ of the normal equations; the others: ‖x_k − x_{k−1}‖/‖x_k‖
    seconds: float    # wall time since the solve started
    objective: float = math.nan  # the solver's cost at x_k (NaN where it is not evaluated)


@dataclass(frozen=True)
class Result:
    """What a solve did (returned with info=True)."""
    iterations: int
    residual: float    # final ‖r‖/‖r0‖; NaN when not computed (tol 0, no callback)
    converged: bool
    stopped: bool      # the callback returned False
    seconds: float
    objective: float = math.nan


def _vector(a: Operator, obj, shape, name):
    """ArrayInfo of an operand: A's dtype and place, `shape` or flat, C-contiguous."""
    d = _arrays.inspect(obj, name)
    if d.dtype != a.dtype:
        raise DtypeError(f"`{name}` has dtype {d.dtype}; this operator takes {a.dtype.name}")
    a._check_place(d, name)
    if tuple(d.shape) != tuple(shape) and not (len(d.shape) == 1 and d.shape[0] == math.prod(shape)):
        raise _core.ShapeMismatchError(f"`{name}` has shape {d.shape}; expected {tuple(shape)} "
                                       f"(or a flat vector of {math.prod(shape)} elements)")
    if not d.c_contiguous:
        d = _arrays.contiguous_copy(d, name)
    return d


def _weights(a: Operator, w):
    """Real k-space weights W >= 0 of A.oshape (or flat), checked, as a complex vector of A's dtype
    at A's place (a conversion in the weights' framework, never a host/device transfer)."""
    d = _weights_like(a, w, a.oshape, "weights")
    _check_weight_values(_arrays.inspect(w, "weights"))
    return d


def _weights_like(a: Operator, w, shape, name):
    """A real array of `shape` (or flat) at A's place as a complex vector of A's dtype (values are
    not checked here: the C++ solvers check host values)."""
    d = _arrays.inspect(w, name)
    a._check_place(d, name)
    if tuple(d.shape) != tuple(shape) and not (len(d.shape) == 1 and d.shape[0] == math.prod(shape)):
        raise _core.ShapeMismatchError(f"`{name}` has shape {d.shape}; expected {tuple(shape)} "
                                       f"(or a flat vector of {math.prod(shape)} values)")
    if d.dtype.kind == "c":
        raise DtypeError(f"`{name}` must be real")
    if d.framework == "numpy":
        c = np.ascontiguousarray(d.obj, dtype=a.dtype)
    elif d.framework == "torch":
        import torch
        c = d.obj.to(getattr(torch, a.dtype.name)).contiguous()
    else:
        import cupy
        with cupy.cuda.Device(d.device):
            c = cupy.ascontiguousarray(cupy.asarray(d.obj), dtype=a.dtype)
    return _arrays.inspect(c, name)


def _check_weight_values(d):
    """W must be finite and >= 0: checked once per solve (on a GPU one reduction and one sync,
    before the first iteration; the C++ solver does not inspect device data)."""
    w = d.obj
    if d.framework == "numpy":
        bad_nan, bad_neg = not np.isfinite(w).all(), bool((w < 0).any())
    elif d.framework == "torch":
        import torch
        bad_nan, bad_neg = not bool(torch.isfinite(w).all()), bool((w < 0).any())
    else:
        import cupy
        with cupy.cuda.Device(d.device):
            w = cupy.asarray(w)
            bad_nan, bad_neg = not bool(cupy.isfinite(w).all()), bool((w < 0).any())
    if bad_nan:
        raise _core.InvalidArgumentError("`weights` contains NaN or Inf; expected finite real weights >= 0")
    if bad_neg:
        raise _core.InvalidArgumentError("`weights` contains a negative value; expected real weights >= 0")


_zeros_like = _arrays.zeros_like
_copy_into = _arrays.copy_into


def _check_iterations(max_iter):
    if isinstance(max_iter, bool) or not isinstance(max_iter, (int, np.integer)):
        raise TypeError(f"max_iter must be an int, got {type(max_iter).__name__}")


def _operator(a, name):
    if not isinstance(a, Operator):
        raise TypeError(f"`{name}` must be a fieldft.op.Operator, got {type(a).__name__}")


def _core_callback(callback):
    """The compiled solvers' callback (iteration, residual, seconds, objective) calling
    callback(Report), or None."""
    if callback is None:
        return None
    if not callable(callback):
        raise TypeError("callback must be callable (it receives a fieldft.solve.Report)")

    def cb(iteration, residual, seconds, objective):
        return callback(Report(iteration, residual, seconds, objective))

    return cb


def _run(name, a: Operator, y, x0, weights, callback, info, call):
    """The common part of every solve: checks and prepares y, x (x0 copied in, or 0) and the
    weights at A's place, wraps the callback, runs call(fn, y_ptr, x_ptr, w_ptr, cb) on the
    compiled solver `name` under stream order, and returns x (and a Result with info=True)."""
    _operator(a, "a")
    yd = _vector(a, y, a.oshape, "y")
    x = _zeros_like(yd, a.ishape, a.dtype)
    if x0 is not None:
        x0d = _vector(a, x0, a.ishape, "x0")
        _copy_into(x, x0d.obj)
    w = _weights(a, weights) if weights is not None else None
    _check_no_overlap(yd, x)
    cb = _core_callback(callback)
    fn = getattr(_core, name + ("_f" if a.dtype == np.complex64 else "_d"))
    wp = w.ptr if w is not None else 0
    with _terms():
        if yd.on_device:
            with _arrays.StreamOrder(a._core.device, a._core.stream, yd):
                r = call(fn, yd.ptr, x.ptr, wp, cb)
        else:
            r = call(fn, yd.ptr, x.ptr, wp, cb)
    if info:
        return x.obj, Result(**r)
    return x.obj


def _same_place(a: Operator, r: Operator, name):
    _operator(r, name)
    if r.dtype != a.dtype:
        raise DtypeError(f"`{name}` has dtype {r.dtype.name}; the data operator has {a.dtype.name}")
    if tuple(r.ishape) != tuple(a.ishape):
        raise _core.ShapeMismatchError(f"`{name}` takes {tuple(r.ishape)}; expected the image shape {tuple(a.ishape)}")


def cg(a: Operator, y, x0=None, *, weights=None, lam: float = 0.0, max_iter: int = 30, tol: float = 0.0,
       callback: Optional[Callable[[Report], Optional[bool]]] = None, check_every: int = 1, info: bool = False):
    """Conjugate gradients on (Aᴴ W A + λ I) x = Aᴴ W y; returns x (A.ishape), or (x, Result) with
    info=True.

    y: data (A.oshape); x0: initial guess (default 0; not modified); weights: real W >= 0 of
    A.oshape (default: W = I, which uses A's fast normal form); lam: λ >= 0; max_iter >= 1;
    tol: stop once ‖r‖/‖r0‖ <= tol (0: run max_iter iterations without waiting for the GPU);
    callback(Report) after every iteration, returning False to stop (it costs one residual per
    iteration brought to the host, and must not call fieldft operators); check_every >= 1: the
    residuals come back from the GPU that many iterations at a time (the callback sees them in
    order, late; tol and a False stop at the end of the batch, so x may have up to
    check_every - 1 iterations more; info describes the x returned).
    """
    _check_iterations(max_iter)
    return _run("cg", a, y, x0, weights, callback, info,
                lambda fn, yp, xp, wp, cb: fn(a._core, yp, xp, wp, int(max_iter), float(tol), float(lam),
                                              int(check_every), cb))


_POTENTIALS = {"quadratic": 0, "hyperbolic": 1}


def pwls_pcg(a: Operator, y, r: Operator, x0=None, *, beta: float, potential: str = "quadratic",
             delta: float = 1.0, weights=None, preconditioner=None, max_iter: int = 30, tol: float = 0.0,
             line_search_iterations: int = 3, callback=None, info: bool = False):
    """Penalised weighted least squares (include/fieldft/solve/pwls_pcg.hpp; Fessler's PWLS-PCG as
    PowerGrid uses it): minimises ½‖W^{1/2}(Ax − y)‖² + β Σ_k ψ(|[Rx]_k|), ψ quadratic (½t²) or
    hyperbolic (δ²(√(1+(t/δ)²) − 1), edge-preserving), by Polak–Ribière conjugate gradients with a
    majorize-minimize line search (the objective never increases).

    r: the penalty's operator on images (e.g. fieldft.op.finite_difference(shape)); beta >= 0;
    delta > 0 (hyperbolic); preconditioner: real > 0 diagonal of A.ishape (default I). The rest as
    for cg; a Report's residual is the relative change of x and its objective the cost.
    """
    _check_iterations(max_iter)
    _same_place(a, r, "r")
    if potential not in _POTENTIALS:
        raise _core.InvalidArgumentError(f"potential must be 'quadratic' or 'hyperbolic', got {potential!r}")
    pre = _weights_like(a, preconditioner, a.ishape, "preconditioner") if preconditioner is not None else None
    return _run("pwls_pcg", a, y, x0, weights, callback, info,
                lambda fn, yp, xp, wp, cb: fn(a._core, yp, xp, wp, r._core, pre.ptr if pre is not None else 0,
                                              int(max_iter), float(tol), float(beta), _POTENTIALS[potential],
                                              float(delta), int(line_search_iterations), cb))


def fista(a: Operator, y, x0=None, *, lam: float, psi: Optional[Operator] = None, weights=None,
          max_iter: int = 50, tol: float = 0.0, lipschitz: float = 0.0, power_iterations: int = 30,
          monotone: bool = False, callback=None, info: bool = False):
    """FISTA (Beck & Teboulle 2009; include/fieldft/solve/fista.hpp): minimises
    ½‖W^{1/2}(Ax − y)‖² + λ‖Ψx‖₁ for a UNITARY Ψ (e.g. fieldft.op.wavelet; None: Ψ = I), step 1/L
    with L from a power iteration on AᴴWA (`power_iterations`, one synchronisation) unless
    `lipschitz` is given; monotone=True is MFISTA (one synchronisation per iteration).
    """
    _check_iterations(max_iter)
    if psi is not None:
        _same_place(a, psi, "psi")
    return _run("fista", a, y, x0, weights, callback, info,
                lambda fn, yp, xp, wp, cb: fn(a._core, yp, xp, wp, psi._core if psi is not None else None,
                                              int(max_iter), float(tol), float(lam), float(lipschitz),
                                              int(power_iterations), bool(monotone), cb))


def admm(a: Operator, y, r: Operator, x0=None, *, lam: float, rho: float = 1.0, cg_iterations: int = 5,
         isotropic: bool = False, weights=None, max_iter: int = 30, tol: float = 0.0, callback=None,
         info: bool = False):
    """ADMM (Boyd et al. 2011, scaled form; include/fieldft/solve/admm.hpp): minimises
    ½‖W^{1/2}(Ax − y)‖² + λ‖Rx‖₁ for a general R — total variation with
    R = fieldft.op.finite_difference(shape) and isotropic=True (the ℓ2 norm over the difference
    axis). The x-update is `cg_iterations` warm-started CG steps on AᴴWA + ρRᴴR.
    """
    _check_iterations(max_iter)
    _same_place(a, r, "r")
    return _run("admm", a, y, x0, weights, callback, info,
                lambda fn, yp, xp, wp, cb: fn(a._core, yp, xp, wp, r._core, int(max_iter), float(tol), float(lam),
                                              float(rho), int(cg_iterations), bool(isotropic), cb))


def max_eigenvalue(n: Operator, iterations: int = 30) -> float:
    """The largest eigenvalue of a Hermitian positive semi-definite square operator N (e.g.
    A.N through fieldft.op: pass the normal operator as an Operator), by the power method."""
    _operator(n, "n")
    fn = _core.max_eigenvalue_f if n.dtype == np.complex64 else _core.max_eigenvalue_d
    with _terms():
        return float(fn(n._core, int(iterations)))
