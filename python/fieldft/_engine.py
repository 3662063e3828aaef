"""The compiled plan and the array checks that every front end (fieldft.Plan, the finufft and
cufinufft compatibility layers) shares.

Axis order. Python arrays are C-ordered with the LAST axis fastest; the C++ plan is
column-major with x fastest. With modes given in array order (N1, N2, N3) and coordinate d
pairing with array axis d (finufft's Python convention), the C++ plan sees modes (N3, N2, N1)
and coordinates (z, y, x): exactly the same memory, so nothing is transposed or copied.
"""

from __future__ import annotations

import contextlib
import math
import operator
import re

import numpy as np

from . import _arrays, _core
from ._arrays import ArrayInfo

COMPLEX_DTYPES = (np.dtype(np.complex64), np.dtype(np.complex128))

INT32_MIN, INT32_MAX = -2**31, 2**31 - 1
INT64_MIN, INT64_MAX = -2**63, 2**63 - 1


# ---------------------------------------------------------------------------------------------
# Integers on their way to the library. The library validates values; what it cannot see is an
# integer too large for its C type (nanobind would raise a bare TypeError), so that is checked
# here, in the caller's names.

def count64(value, name: str, minimum: int = 1) -> int:
    """A count held in a signed 64-bit integer (mode counts, n_trans, image sizes)."""
    v = operator.index(value)
    if v > INT64_MAX:
        raise _core.TooLargeError(f"{name} = {v} is too large: it must fit in a signed 64-bit integer "
                                  f"(at most 2**63 - 1 = {INT64_MAX})")
    if v < INT64_MIN:
        raise _core.InvalidArgumentError(f"{name} must be >= {minimum}, got {v}")
    return v


def c_int(value, name: str) -> int:
    """An option held in a C int. Outside its range the value is wrong whatever the option."""
    v = operator.index(value)
    if not INT32_MIN <= v <= INT32_MAX:
        raise _core.InvalidArgumentError(f"{name} = {v} is out of range (a C int, {INT32_MIN} to {INT32_MAX})")
    return v


def c_int_capped(value, name: str) -> int:
    """A C int option where a larger value means "as many as possible" (nthreads, max_batch): the
    library caps it (PlanInfo reports what is used); negative values it refuses by name."""
    v = operator.index(value)
    if v > INT32_MAX:
        return INT32_MAX
    if v < INT32_MIN:
        raise _core.InvalidArgumentError(f"{name} is {v}; expected 0 or a positive count")
    return v


def check_isign(isign) -> int:
    """The library refuses any isign but +1 and -1; one it cannot even receive is refused here in
    the same words."""
    v = operator.index(isign)
    if not INT32_MIN <= v <= INT32_MAX:
        raise _core.InvalidArgumentError(f"isign must be +1 or -1 (the sign of the exponent), got {v}")
    return v


# ---------------------------------------------------------------------------------------------
# Library messages in the caller's terms. The C++ plan sees the caller's coordinates and axes in
# reverse order (x fastest, see the module documentation): its x is the caller's last
# coordinate, its dimension 1 the caller's last axis, its mode count N1 the caller's n_modes[-1].

_CPP_COORDINATE = re.compile(r"\b([xyz]|[stu])(?=\[)|(?<=coordinate array )([xyzstu])\b")
_CPP_DIMENSION = re.compile(r"\bin dimension ([123])\b")
_CPP_MODE_COUNT = re.compile(r"\bmode count N([123])\b")
_CPP_GRID_SIZE = re.compile(r"\bgrid size ([012])\b")
_CPP_OPTION = re.compile(r"\boptions\.(\w+)")


def plan_message(message: str, dim: int) -> str:
    """A message of the C++ plan, with coordinate arrays, dimensions and mode counts named as the
    caller of a `dim`-dimensional Python plan names them, and ntransf as n_trans."""
    def coordinate(m):
        letter = m.group(1) or m.group(2)
        letters = "xyz" if letter in "xyz" else "stu"
        i = letters.index(letter)
        return letters[dim - 1 - i] if i < dim else letter

    message = _CPP_COORDINATE.sub(coordinate, message)
    message = _CPP_DIMENSION.sub(lambda m: f"along axis {dim - int(m.group(1))}"
                                 if int(m.group(1)) <= dim else m.group(0), message)
    message = _CPP_MODE_COUNT.sub(lambda m: f"n_modes[{dim - int(m.group(1))}]"
                                  if int(m.group(1)) <= dim else m.group(0), message)
    return re.sub(r"\bntransf\b", "n_trans", message)


def dft_message(message: str, dim: int) -> str:
    """A message of the C++ Dft: grid sizes (x first) as the caller's shape entries (x last), and
    options.name as the keyword argument name."""
    message = _CPP_GRID_SIZE.sub(lambda m: f"shape[{dim - 1 - int(m.group(1))}]"
                                 if int(m.group(1)) < dim else m.group(0), message)
    return _CPP_OPTION.sub(lambda m: m.group(1), message)


@contextlib.contextmanager
def caller_terms(translate):
    """Re-raises a fieldft.Error from the library as the same class with translate(message)."""
    try:
        yield
    except _core.Error as e:
        message = str(e)
        better = translate(message)
        if better == message:
            raise
        raise type(e)(better) from None


def min_eps(dtype) -> float:
    """Smallest eps a plan of this complex dtype accepts."""
    return _core.min_eps_float() if np.dtype(dtype) == np.complex64 else _core.min_eps_double()


def check_type(nufft_type) -> int:
    try:
        t = operator.index(nufft_type)
    except TypeError:
        raise TypeError(f"nufft_type must be an int (1, 2 or 3), got {type(nufft_type).__name__}") from None
    if t not in (1, 2, 3):
        raise ValueError(f"nufft_type must be 1, 2 or 3, got {t}")
    return t


class Engine:
    """One C++ plan and what the front ends need to drive it. Arrays reaching set_points and run
    are already checked by the front end (dtype, shape, contiguity, and where they live, with
    check_location); Engine orders CUDA streams and calls the library."""

    def __init__(self, nufft_type: int, dim: int, n_modes, n_trans: int, eps: float, isign: int, dtype,
                 options: "_core.Options"):
        self.type = nufft_type
        self.dim = dim
        self.n_modes = tuple(n_modes) if nufft_type != 3 else None  # array order
        self.n_trans = n_trans
        self.dtype = np.dtype(dtype)
        self.real_dtype = _arrays.real_dtype_of(self.dtype)
        cpp_modes = list(reversed(self.n_modes)) if nufft_type != 3 else [1] * dim
        cls = _core.PlanF if self.dtype == np.complex64 else _core.PlanD
        with caller_terms(self._message):
            self.core = cls(nufft_type, cpp_modes, isign, n_trans, float(eps), options)
        self.device = options.device
        self.stream = options.stream
        self.nj = None  # points not set yet
        self.nk = 0

    @property
    def backend(self) -> str:
        return self.core.backend

    def _message(self, message: str) -> str:
        return plan_message(message, self.dim)

    # -- where arrays may live -----------------------------------------------------------------
    def check_location(self, info: ArrayInfo, name: str) -> None:
        if not info.on_device:
            return
        if self.core.backend != "cuda":
            hint = ("" if _core.build_info()["cuda"]
                    else " (this fieldft was built without CUDA: reinstall with a CUDA toolkit present)")
            raise ValueError(f"`{name}` is on CUDA device {info.device} but this plan runs on the CPU backend{hint}; "
                             "pass host arrays or make the plan with backend='cuda'")
        if info.device != self.device:
            raise ValueError(f"`{name}` is on CUDA device {info.device} but this plan runs on device {self.device}")

    # -- the two calls -------------------------------------------------------------------------
    def set_points(self, points, targets=None) -> None:
        """points: `dim` ArrayInfo (array order x, y, z), 1-D, contiguous, same length and place.
        targets: the same for type 3 (s, t, u)."""
        m = points[0].size
        nk = targets[0].size if targets else 0
        cpp = [p.ptr for p in reversed(points)] + [0] * (3 - self.dim)
        cpp_t = ([p.ptr for p in reversed(targets)] + [0] * (3 - self.dim)) if targets else [0, 0, 0]
        first = points[0]
        with caller_terms(self._message):
            if first.on_device:
                with _arrays.StreamOrder(self.device, self.stream, first):
                    self.core.set_points(m, *cpp, nk, *cpp_t)
            else:
                self.core.set_points(m, *cpp, nk, *cpp_t)
        self.nj = m
        self.nk = nk

    def run(self, data: ArrayInfo, out: ArrayInfo, adjoint: bool) -> None:
        _check_no_overlap(data, out)
        if data.on_device or out.on_device:
            with _arrays.StreamOrder(self.device, self.stream, data if data.on_device else out):
                self.core.execute(data.ptr, out.ptr, adjoint)
        else:
            self.core.execute(data.ptr, out.ptr, adjoint)

    # -- shapes ----------------------------------------------------------------------------------
    def tails(self, adjoint: bool):
        """(input tail, output tail): the trailing shape of one transform's input and output."""
        if self.type == 1:
            pair = ((self.nj,), self.n_modes)
        elif self.type == 2:
            pair = (self.n_modes, (self.nj,))
        else:
            pair = ((self.nj,), (self.nk,))
        return (pair[1], pair[0]) if adjoint else pair


def _check_no_overlap(a: ArrayInfo, b: ArrayInfo) -> None:
    if a.device != b.device or a.size == 0 or b.size == 0:
        return
    a_end = a.ptr + a.size * a.dtype.itemsize
    b_end = b.ptr + b.size * b.dtype.itemsize
    if a.ptr < b_end and b.ptr < a_end:
        raise ValueError("the output array overlaps the input array; pass a separate `out`")


def lead_shape(shape, tail, n_trans: int):
    """The leading (batch) axes of `shape` in front of `tail`, or None when `shape` is not
    lead + tail with prod(lead) == n_trans."""
    k = len(tail)
    if len(shape) < k or tuple(shape[len(shape) - k:]) != tuple(tail):
        return None
    lead = tuple(shape[:len(shape) - k])
    return lead if math.prod(lead) == n_trans else None


def expected_shape_text(tail, n_trans: int) -> str:
    t = tuple(int(n) for n in tail)
    return str(t) if n_trans == 1 else f"{(n_trans,) + t} (n_trans first)"
