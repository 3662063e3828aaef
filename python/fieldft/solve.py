"""fieldft.solve: iterative solvers on fieldft.op operators, on the operator's device.

    E = fieldft.mri.NufftEncoding(enc, batch=C, device="cuda") @ fieldft.op.diag_expand(maps)
    x = fieldft.solve.cg(E, y, max_iter=30)                  # y: (C, M) cupy/torch, x: (Ny, Nx)

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

__all__ = ["cg", "Report", "Result"]


@dataclass(frozen=True)
class Report:
    """One solver iteration, as passed to a callback."""
    iteration: int    # 1, 2, …: updates of x so far
    residual: float   # ‖r‖/‖r0‖ of the normal equations
    seconds: float    # wall time since the solve started


@dataclass(frozen=True)
class Result:
    """What a solve did (returned with info=True)."""
    iterations: int
    residual: float    # final ‖r‖/‖r0‖; NaN when not computed (tol 0, no callback)
    converged: bool
    stopped: bool      # the callback returned False
    seconds: float


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


def _weights(a: Operator, w, like):
    """Real k-space weights as a complex vector of A's dtype at A's place, in the framework of
    `like` (the data). A copy is made (a conversion to complex), never a host/device transfer."""
    d = _arrays.inspect(w, "weights")
    a._check_place(d, "weights")
    if tuple(d.shape) != tuple(a.oshape) and not (len(d.shape) == 1 and d.shape[0] == math.prod(a.oshape)):
        raise _core.ShapeMismatchError(f"`weights` has shape {d.shape}; expected {tuple(a.oshape)} "
                                       f"(one real weight per sample of the operator's output)")
    if d.dtype.kind == "c":
        raise DtypeError("`weights` must be real (W is a diagonal of real weights >= 0)")
    if d.framework == "numpy":
        c = np.ascontiguousarray(d.obj, dtype=a.dtype)
    elif d.framework == "torch":
        import torch
        c = d.obj.to(getattr(torch, a.dtype.name)).contiguous()
    else:
        import cupy
        with cupy.cuda.Device(d.device):
            c = cupy.ascontiguousarray(cupy.asarray(d.obj), dtype=a.dtype)
    _check_weight_values(d)
    return _arrays.inspect(c, "weights")


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


def _zeros_like(info, shape, dtype):
    o = _arrays.empty_like(info, shape, dtype)
    o.obj[...] = 0
    return o


def _copy_into(dst, src_obj):
    dst.obj[...] = src_obj.reshape(dst.obj.shape)


def cg(a: Operator, y, x0=None, *, weights=None, lam: float = 0.0, max_iter: int = 30, tol: float = 0.0,
       callback: Optional[Callable[[Report], Optional[bool]]] = None, info: bool = False):
    """Conjugate gradients on (Aᴴ W A + λ I) x = Aᴴ W y; returns x (A.ishape), or (x, Result) with
    info=True.

    y: data (A.oshape); x0: initial guess (default 0; not modified); weights: real W >= 0 of
    A.oshape (default: W = I, which uses A's fast normal form); lam: λ >= 0; max_iter >= 1;
    tol: stop once ‖r‖/‖r0‖ <= tol (0: run max_iter iterations without waiting for the GPU);
    callback(Report) after every iteration, returning False to stop (it costs one residual per
    iteration brought to the host, and must not call fieldft operators).
    """
    if not isinstance(a, Operator):
        raise TypeError(f"`a` must be a fieldft.op.Operator, got {type(a).__name__}")
    if isinstance(max_iter, bool) or not isinstance(max_iter, (int, np.integer)):
        raise TypeError(f"max_iter must be an int, got {type(max_iter).__name__}")
    yd = _vector(a, y, a.oshape, "y")
    x = _zeros_like(yd, a.ishape, a.dtype)
    if x0 is not None:
        x0d = _vector(a, x0, a.ishape, "x0")
        _copy_into(x, x0d.obj)
    w = _weights(a, weights, yd) if weights is not None else None
    _check_no_overlap(yd, x)
    cb = None
    if callback is not None:
        if not callable(callback):
            raise TypeError("callback must be callable (it receives a fieldft.solve.Report)")

        def cb(iteration, residual, seconds):
            return callback(Report(iteration, residual, seconds))

    fn = _core.cg_f if a.dtype == np.complex64 else _core.cg_d
    with _terms():
        if yd.on_device:
            with _arrays.StreamOrder(a._core.device, a._core.stream, yd):
                r = fn(a._core, yd.ptr, x.ptr, w.ptr if w is not None else 0, int(max_iter), float(tol),
                       float(lam), cb)
        else:
            r = fn(a._core, yd.ptr, x.ptr, w.ptr if w is not None else 0, int(max_iter), float(tol), float(lam), cb)
    if info:
        return x.obj, Result(**r)
    return x.obj
