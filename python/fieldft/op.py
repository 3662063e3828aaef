"""fieldft.op: linear operators on numpy, cupy and torch arrays, without copies.

    import fieldft
    F = fieldft.mri.NufftEncoding(enc, batch=8, device="cuda")   # (8, Ny, Nx) -> (8, M)
    S = fieldft.op.diag_expand(maps)                             # (Ny, Nx) -> (8, Ny, Nx)
    E = F @ S                                                    # SENSE: (Ny, Nx) -> (8, M)
    y = E(x); xh = E.H(y); z = E.N(x)                            # apply, adjoint, normal

An `Operator` wraps a C++ fieldft::op::LinearOperator (include/fieldft/op/). Shapes are in
Python order: `ishape` / `oshape` are the C++ domain / codomain shapes reversed (C++ is x fastest
with stacked copies last, so an image {Nx, Ny} with C coils {Nx, Ny, C} is (C, Ny, Nx) here, the
same memory). `shape` is (codomain size, domain size), as for a matrix.

Where an operator runs. Every operator is made for one place, its context: `device="cpu"` (the
host, `nthreads` OpenMP threads, 0 = all) or `"cuda"` / `"cuda:N"` (the current CUDA device of
cupy or torch for plain "cuda"). A CUDA operator orders its work on one stream, fixed when it is
made: `stream=` (an int handle, a cupy or torch stream), else the current stream of the GPU
framework in use at that moment (cupy's if cupy is imported, else torch's if torch has
initialised CUDA, else the legacy default stream); the operator keeps that stream object alive.
Each call is ordered against the INPUT framework's current stream as it is at call time: the
operator's stream waits for the work already queued there and that stream waits for the call,
with CUDA events (the host does not block; nothing happens when both are the same stream). So
results are correct whatever stream the caller is on. Operators combined into one must share
their place (device and stream): otherwise ContextMismatchError.

Calls never copy between host and device: inputs must live where the operator runs
(ContextMismatchError otherwise), have its dtype (DtypeError, a TypeError) and either its
input shape or be a flat vector of that many elements (ShapeMismatchError otherwise); the
output is made in the input's framework and on its device (or written to `out=`), shaped
`oshape` (flat for a flat input). A non-C-contiguous input is copied once, in its framework.
On CUDA a call returns once its work is queued; framework operations queued afterwards on the
caller's stream see the result.
"""

from __future__ import annotations

import math
import numbers
import operator
import re
import sys

import numpy as np

from . import _arrays, _core
from ._engine import _check_no_overlap, c_int_capped, caller_terms, count64

__all__ = ["Operator", "DtypeError", "compose", "sum", "vstack", "hstack", "diag", "diag_expand", "identity",
           "batch", "scale", "adjoint", "finite_difference", "wavelet", "wavelet_max_levels"]


class DtypeError(_core.InvalidArgumentError, TypeError):
    """An array or operator of the wrong dtype (an InvalidArgumentError and a TypeError)."""


# ---------------------------------------------------------------------------------------------
# Messages of the C++ operator layer name shapes x fastest ("64x32x8"); the caller's shapes are
# reversed tuples ((8, 32, 64)). Single extents read the same either way; stream addresses
# ("0x7f…") are left alone.

_CPP_SHAPE = re.compile(r"(?<![\w.])(?!0x)(\d+(?:x\d+)+)(?![\w.])")


def _python_shapes(message: str) -> str:
    return _CPP_SHAPE.sub(lambda m: "(" + ", ".join(reversed(m.group(1).split("x"))) + ")", message)


def _terms():
    return caller_terms(_python_shapes)


# ---------------------------------------------------------------------------------------------
# Places: (device ordinal or -1 for the host, stream handle, the Python object that owns it).

def _current_cuda_device() -> int:
    cupy = sys.modules.get("cupy")
    if cupy is not None:
        try:
            return int(cupy.cuda.runtime.getDevice())
        except Exception:
            pass
    torch = sys.modules.get("torch")
    if torch is not None and getattr(torch, "cuda", None) is not None:
        try:
            if torch.cuda.is_initialized():
                return int(torch.cuda.current_device())
        except Exception:
            pass
    return 0


def _parse_device(device) -> int:
    """-1 for the host, else the CUDA ordinal. Accepts "cpu", "cuda", "cuda:N", an int N (a CUDA
    ordinal), torch.device and cupy.cuda.Device objects."""
    if device is None:
        return -1
    if isinstance(device, numbers.Integral) and not isinstance(device, bool):
        n = int(device)
        if n < 0:
            raise _core.InvalidArgumentError(f"device must be 'cpu', 'cuda', 'cuda:N' or N >= 0, got {n}")
        return n
    if type(device).__module__.split(".")[0] == "cupy" and hasattr(device, "id"):
        return int(device.id)
    text = str(device).strip().lower()
    if text in ("cpu", "host"):
        return -1
    if text == "cuda":
        return _current_cuda_device()
    m = re.fullmatch(r"cuda:(\d+)", text)
    if m:
        return int(m.group(1))
    raise _core.InvalidArgumentError(f"device must be 'cpu', 'cuda' or 'cuda:N', got {device!r}")


def _framework_stream(device: int):
    """(handle, owner) of the current stream of the GPU framework in use (see the module
    documentation); owner is kept alive by the operators made on it."""
    cupy = sys.modules.get("cupy")
    if cupy is not None:
        try:
            with cupy.cuda.Device(device):
                s = cupy.cuda.get_current_stream()
            return int(s.ptr), s
        except Exception:  # cupy present without a usable device: fall through
            pass
    torch = sys.modules.get("torch")
    if torch is not None and getattr(torch, "cuda", None) is not None:
        try:
            if torch.cuda.is_initialized():
                s = torch.cuda.current_stream(device)
                return int(s.cuda_stream), s
        except Exception:
            pass
    return 0, None


class _Place:
    __slots__ = ("device", "stream", "owner", "nthreads")

    def __init__(self, device=None, stream=None, nthreads=0):
        self.device = _parse_device(device)
        self.nthreads = c_int_capped(nthreads, "nthreads")
        self.owner = None
        self.stream = 0
        if self.device >= 0:
            if not _core.build_info()["cuda"]:
                raise _core.BackendUnavailableError(
                    f"device={device!r} asks for CUDA, but this fieldft was built without CUDA "
                    "(reinstall with a CUDA toolkit present); use device='cpu'")
            if stream is not None:
                self.stream = _arrays.stream_handle(stream)
                self.owner = stream
            else:
                self.stream, self.owner = _framework_stream(self.device)

    def args(self):
        """(device, stream, nthreads, owner), as the compiled factories take them."""
        return self.device, self.stream, self.nthreads, self.owner


def _device_name(device: int) -> str:
    return "cpu" if device < 0 else f"cuda:{device}"


def _core_class(dtype):
    return _core.OperatorF if np.dtype(dtype) == np.complex64 else _core.OperatorD


def _complex_dtype(dtype) -> np.dtype:
    try:
        d = np.dtype(dtype)
    except TypeError:
        raise DtypeError(f"dtype must be complex64 or complex128, got {dtype!r}") from None
    if d not in (np.complex64, np.complex128):
        raise DtypeError(f"dtype must be complex64 or complex128, got {d}")
    return d


def _shape_tuple(shape, name="shape"):
    if isinstance(shape, numbers.Integral):
        shape = (shape,)
    try:
        t = tuple(int(count64(n, f"{name}[{i}]", 0)) for i, n in enumerate(shape))
    except TypeError:
        raise TypeError(f"{name} must be an int or a sequence of ints, got {shape!r}") from None
    for i, n in enumerate(t):
        if n < 0:
            raise _core.InvalidArgumentError(f"{name}[{i}] must be >= 0, got {n}")
    return t


def _is_array(obj) -> bool:
    return (isinstance(obj, np.ndarray) or hasattr(obj, "__cuda_array_interface__") or _arrays._is_torch(obj))


# ---------------------------------------------------------------------------------------------

class Operator:
    """A linear operator A (made by fieldft.op and fieldft.mri functions, not directly).

    A(x) / A.H(y) / A.N(x): apply, adjoint, normal (AᴴA, with the operator's fast form where
    it has one); each takes out=. A.H is the adjoint as an operator. A @ B composes, A + B, A - B,
    -A, alpha * A, A * alpha and A / alpha combine; A @ x applies A to an array x.
    """

    __array_ufunc__ = None  # numpy scalars and arrays defer to our operators (2.0 * A, A @ x)

    def __init__(self, core):
        self._core = core  # _core.OperatorF / OperatorD (it also holds its streams' Python owners)
        self._dtype = np.dtype(np.complex64 if isinstance(core, _core.OperatorF) else np.complex128)
        self._H = None

    # -- what it is ------------------------------------------------------------------------------
    @property
    def ishape(self) -> tuple:
        """Input (domain) shape, Python order."""
        return tuple(reversed(self._core.domain_shape))

    @property
    def oshape(self) -> tuple:
        """Output (codomain) shape, Python order."""
        return tuple(reversed(self._core.codomain_shape))

    @property
    def shape(self) -> tuple:
        """(codomain size, domain size): the shape of A as a matrix."""
        return (self._core.codomain_size, self._core.domain_size)

    dtype = property(lambda self: self._dtype, doc="numpy.complex64 or numpy.complex128")
    device = property(lambda self: _device_name(self._core.device), doc="'cpu' or 'cuda:N'")
    stream = property(lambda self: self._core.stream, doc="the CUDA stream (an int handle; 0 on the host)")
    name = property(lambda self: _python_shapes(self._core.name), doc="what the operator is made of")
    context = property(lambda self: self._core.context, doc="the C++ context, described")

    def __repr__(self):
        return (f"<{type(self).__module__}.{type(self).__qualname__} {self.name}: {self.ishape} -> {self.oshape}, "
                f"{self._dtype.name}, {self.device}>")

    # -- calls ------------------------------------------------------------------------------------
    def __call__(self, x, out=None):
        """y = A x."""
        return self._run(self._core.apply, x, out, self.ishape, self.oshape, "x")

    def N(self, x, out=None):
        """z = AᴴA x (the normal operator)."""
        return self._run(self._core.apply_normal, x, out, self.ishape, self.ishape, "x")

    @property
    def H(self) -> "Operator":
        """Aᴴ, the adjoint, as an operator (a view: nothing is copied; A.H.H is A)."""
        if self._H is None:
            with _terms():
                core = _core_class(self._dtype).adjoint(self._core)
            h = Operator(core)
            h._H = self
            self._H = h
        return self._H

    def prepare_normal(self) -> None:
        """Builds now what N() needs and would otherwise build at its first call (a Toeplitz
        kernel: its allocation and set-up), so that it can be timed apart and no solver iteration
        pays it. Idempotent; nothing for operators without such a set-up. The solvers call it."""
        self._core.prepare_normal()

    def weighted_normal(self, weights):
        """AᴴWA with W = diag(weights) as an operator on ishape, where A has a form faster than
        A, ·W, Aᴴ: a NUFFT encoding or SENSE operator with a Toeplitz normal (W goes into its
        kernel; the same weights for every stacked image). None otherwise: apply A, the weights
        and Aᴴ yourself. weights: real values >= 0 of oshape (or flat), where A runs (numpy,
        cupy or torch); read once, here."""
        from .solve import _weights  # the solvers' check and conversion of k-space weights
        w = _weights(self, weights)
        with _terms():
            if w.on_device:
                with _arrays.StreamOrder(self._core.device, self._core.stream, w):
                    core = type(self._core).weighted_normal(self._core, w.ptr)
            else:
                core = type(self._core).weighted_normal(self._core, w.ptr)
        return None if core is None else Operator(core)

    def synchronize(self) -> None:
        """Blocks until the work queued on the operator's stream is done (no-op on the host)."""
        self._core.synchronize()

    def _run(self, call, data, out, in_shape, out_shape, name):
        d = _arrays.inspect(data, name)
        if d.dtype != self._dtype:
            raise DtypeError(f"`{name}` has dtype {d.dtype}; this operator takes {self._dtype.name}")
        self._check_place(d, name)
        if tuple(d.shape) == in_shape:
            result_shape = out_shape
        elif len(d.shape) == 1 and d.shape[0] == math.prod(in_shape):
            result_shape = (math.prod(out_shape),)
        else:
            raise _core.ShapeMismatchError(f"`{name}` has shape {d.shape}; this operator takes {in_shape} "
                                           f"(or a flat vector of {math.prod(in_shape)} elements)")
        if out is None:
            o = _arrays.empty_like(d, result_shape, self._dtype)
        else:
            o = _arrays.inspect(out, "out")
            if o.dtype != self._dtype:
                raise DtypeError(f"`out` has dtype {o.dtype}; this operator writes {self._dtype.name}")
            self._check_place(o, "out")
            if tuple(o.shape) != result_shape:
                raise _core.ShapeMismatchError(f"`out` has shape {o.shape}; expected {result_shape}")
            if not o.c_contiguous or not o.writable:
                raise _core.InvalidArgumentError("`out` must be C-contiguous and writable")
        if not d.c_contiguous:
            d = _arrays.contiguous_copy(d, name)
        _check_no_overlap(d, o)
        with _terms():
            if d.on_device:
                with _arrays.StreamOrder(self._core.device, self._core.stream, d):
                    call(d.ptr, o.ptr)
            else:
                call(d.ptr, o.ptr)
        return o.obj

    def _check_place(self, info, name):
        dev = self._core.device
        if dev < 0 and info.on_device:
            raise _core.ContextMismatchError(
                f"`{name}` is on CUDA device {info.device} but this operator runs on the host (device='cpu'); "
                f"pass a host array (numpy, torch CPU) or make the operator with device='cuda:{info.device}'")
        if dev >= 0 and not info.on_device:
            raise _core.ContextMismatchError(
                f"`{name}` is in host memory but this operator runs on cuda:{dev}; pass a cupy array or a torch "
                "CUDA tensor on that device (operators never copy between host and device)")
        if dev >= 0 and info.device != dev:
            raise _core.ContextMismatchError(f"`{name}` is on CUDA device {info.device} but this operator runs "
                                             f"on cuda:{dev}")

    # -- algebra ----------------------------------------------------------------------------------
    def __matmul__(self, other):
        if isinstance(other, Operator):
            return compose(self, other)
        if _is_array(other):
            return self(other)
        return NotImplemented

    def __add__(self, other):
        if isinstance(other, Operator):
            return sum([self, other])
        return NotImplemented

    def __sub__(self, other):
        if isinstance(other, Operator):
            return sum([self, scale(-1.0, other)])
        return NotImplemented

    def __neg__(self):
        return scale(-1.0, self)

    def __mul__(self, alpha):
        if _is_scalar(alpha):
            return scale(alpha, self)
        return NotImplemented

    __rmul__ = __mul__

    def __truediv__(self, alpha):
        if _is_scalar(alpha):
            return scale(1.0 / complex(alpha), self)
        return NotImplemented


def _is_scalar(v) -> bool:
    return isinstance(v, numbers.Number) and not isinstance(v, bool)


def _operators(ops, what):
    if isinstance(ops, Operator):
        ops = [ops]
    ops = list(ops)
    if not ops:
        raise _core.InvalidArgumentError(f"{what} needs at least one operator")
    for i, a in enumerate(ops):
        if not isinstance(a, Operator):
            raise TypeError(f"{what}: operand {i} is a {type(a).__name__}, not a fieldft.op.Operator")
        if a.dtype != ops[0].dtype:
            raise DtypeError(f"{what}: operand {i} is {a.dtype.name} but operand 0 is {ops[0].dtype.name}; "
                             "every operand must have one dtype")
    return ops


def _many(args, what):
    """vstack([A, B]) and vstack(A, B) alike."""
    if len(args) == 1 and not isinstance(args[0], Operator):
        return _operators(args[0], what)
    return _operators(args, what)


# ---------------------------------------------------------------------------------------------
# The combinators (include/fieldft/op/combinators.hpp has the math and the normal forms).

def compose(*ops) -> Operator:
    """A @ B @ …: x ↦ A(B(…x)). The input shape of each must be the output shape of the next.
    The normal of A @ B is Bᴴ(AᴴA)B, keeping A's fast normal."""
    ops = _many(ops, "compose")
    result = ops[-1]
    for a in reversed(ops[:-1]):
        with _terms():
            core = _core_class(a.dtype).compose(a._core, result._core)
        result = Operator(core)
    return result


def sum(*ops) -> Operator:  # noqa: A001 (fieldft.op.sum mirrors op::sum)
    """A + B + …: equal input shapes and equal output shapes."""
    ops = _many(ops, "sum")
    with _terms():
        core = _core_class(ops[0].dtype).sum([a._core for a in ops])
    return Operator(core)


def vstack(*ops) -> Operator:
    """x ↦ (A_1 x, …, A_K x): equal input shapes; the output is (K, *oshape) when all output
    shapes agree, else the flat concatenation. Normal: Σ A_iᴴA_i."""
    ops = _many(ops, "vstack")
    with _terms():
        core = _core_class(ops[0].dtype).vstack([a._core for a in ops])
    return Operator(core)


def hstack(*ops) -> Operator:
    """(x_1, …, x_K) ↦ Σ A_i x_i: equal output shapes; the input is (K, *ishape) when all input
    shapes agree, else the flat concatenation."""
    ops = _many(ops, "hstack")
    with _terms():
        core = _core_class(ops[0].dtype).hstack([a._core for a in ops])
    return Operator(core)


def scale(alpha, a: Operator) -> Operator:
    """alpha A (alpha a real or complex number); adjoint conj(alpha) Aᴴ, normal |alpha|² AᴴA."""
    if not _is_scalar(alpha):
        raise TypeError(f"scale: alpha must be a number, got {type(alpha).__name__}")
    (a,) = _operators([a], "scale")
    alpha = complex(alpha)
    with _terms():
        core = _core_class(a.dtype).scale(alpha.real, alpha.imag, a._core)
    return Operator(core)


def adjoint(a: Operator) -> Operator:
    """Aᴴ (the same as a.H)."""
    (a,) = _operators([a], "adjoint")
    return a.H


def batch(a: Operator, k: int) -> Operator:
    """K stacked copies of A: input (k, *A.ishape), output (k, *A.oshape). Encodings batch
    through ONE batched transform (never a loop of plans); other operators without a batched
    form are applied k times in turn."""
    (a,) = _operators([a], "batch")
    k = count64(k, "k")
    with _terms():
        core = _core_class(a.dtype).batch(a._core, k)
    return Operator(core)


def _fixed_values(d, name, dtype):
    """A C-contiguous host copy of a fixed array (the C++ operator copies it to its place)."""
    info_device = -1
    if hasattr(d, "__cuda_array_interface__") and hasattr(d, "get"):  # cupy
        info_device = int(d.device.id)
        d = d.get()
    elif _arrays._is_torch(d):
        if d.device.type == "cuda":
            info_device = d.device.index if d.device.index is not None else 0
        d = d.detach().resolve_conj().cpu().numpy()
    elif hasattr(d, "__cuda_array_interface__"):
        raise TypeError(f"`{name}`: fixed arrays on the GPU are read through cupy or torch; got "
                        f"{type(d).__name__}")
    a = np.asarray(d)
    dtype = _complex_dtype(dtype)
    return np.ascontiguousarray(a, dtype=dtype), dtype, info_device


def _place_for(device, stream, nthreads, data_device):
    """The place an operator on a fixed array runs: `device` when given, else where the array
    was (a cupy array or torch CUDA tensor: its device; else the host)."""
    if device is None:
        device = "cpu" if data_device < 0 else f"cuda:{data_device}"
    return _Place(device, stream, nthreads)


def diag(d, *, dtype="complex64", device=None, stream=None, nthreads=0) -> Operator:
    """x ↦ d ∘ x for a fixed array d (ishape = oshape = d.shape); adjoint conj(d) ∘ y.

    dtype: the operator's, complex64 (default, as for every fieldft operator) or complex128;
    d (real or complex) is converted to it. device: where it runs (default: where d is). d is
    copied there once."""
    values, dtype, ddev = _fixed_values(d, "d", dtype)
    place = _place_for(device, stream, nthreads, ddev)
    with _terms():
        core = _core_class(dtype).diag(values.__array_interface__["data"][0], values.size,
                                       list(reversed(values.shape)), *place.args())
    return Operator(core)


def diag_expand(maps, *, dtype="complex64", device=None, stream=None, nthreads=0) -> Operator:
    """x ↦ (maps[0] ∘ x, …, maps[K-1] ∘ x): one image to K weighted copies (coil
    sensitivities). maps: (K, *shape); ishape = shape, oshape = (K, *shape); adjoint
    Σ_k conj(maps[k]) ∘ y[k]; normal (Σ_k |maps[k]|²) ∘ x. dtype and device as for diag."""
    values, dtype, ddev = _fixed_values(maps, "maps", dtype)
    if values.ndim < 1:
        raise _core.ShapeMismatchError("diag_expand: maps must have shape (K, *image_shape)")
    place = _place_for(device, stream, nthreads, ddev)
    with _terms():
        core = _core_class(dtype).diag_expand(values.__array_interface__["data"][0], values.size,
                                              list(reversed(values.shape[1:])), values.shape[0], *place.args())
    return Operator(core)


def identity(shape, *, dtype="complex64", device="cpu", stream=None, nthreads=0) -> Operator:
    """x ↦ x on arrays of `shape` (an int or a tuple, Python order)."""
    shape = _shape_tuple(shape)
    dtype = _complex_dtype(dtype)
    place = _Place(device, stream, nthreads)
    with _terms():
        core = _core_class(dtype).identity(list(reversed(shape)), *place.args())
    return Operator(core)


# ---------------------------------------------------------------------------------------------
# Sparsifying operators (include/fieldft/op/sparsify.hpp, where the math is written out).

_BOUNDARIES = {"periodic": 0, "neumann": 1}
_WAVELETS = {"haar": 0, "daubechies4": 1, "d4": 1, "db2": 1}


def _python_axes(axes, ndim):
    """Python axes (negatives allowed) as C++ axes: Python axis p is C++ axis ndim - 1 - p."""
    if axes is None:
        return [ndim - 1 - p for p in range(ndim)]
    if isinstance(axes, numbers.Integral):
        axes = (axes,)
    axes = tuple(axes)
    if not axes:
        raise _core.InvalidArgumentError(
            f"finite_difference: axes is empty; expected at least one axis of the {ndim}-axis image")
    out, seen = [], set()
    for a in axes:
        if not isinstance(a, numbers.Integral) or isinstance(a, bool):
            raise TypeError(f"axes must be ints, got {a!r}")
        p = int(a)
        if not -ndim <= p < ndim:
            raise _core.InvalidArgumentError(
                f"finite_difference: axis {p} is out of range for an image of {ndim} axes; expected "
                f"{-ndim} <= axis < {ndim}")
        p %= ndim
        if p in seen:
            raise _core.InvalidArgumentError(f"finite_difference: axis {p} appears twice in axes; expected distinct axes")
        seen.add(p)
        out.append(ndim - 1 - p)
    return out


def _choice(value, table, what):
    key = str(value).strip().lower()
    if key not in table:
        raise _core.InvalidArgumentError(f"{what} must be one of {', '.join(map(repr, table))}; got {value!r}")
    return table[key]


def finite_difference(shape, axes=None, *, boundary="periodic", dtype="complex64", device="cpu", stream=None,
                      nthreads=0) -> Operator:
    """First differences of an image of `shape` along `axes` (default: every axis).

    ishape = shape, oshape = (len(axes), *shape): out[a] = x shifted by +1 along axes[a], minus x.
    boundary "periodic" wraps the last index to the first (constants are the null space);
    "neumann" gives 0 at the last index (no difference across the border). The adjoint is the
    negative divergence; A.N(x) = AᴴA x is the grid Laplacian, computed in one pass."""
    shape = _shape_tuple(shape)
    cpp_axes = _python_axes(axes, len(shape))
    b = _choice(boundary, _BOUNDARIES, "boundary")
    dtype = _complex_dtype(dtype)
    place = _Place(device, stream, nthreads)
    with _terms():
        core = _core_class(dtype).finite_difference(list(reversed(shape)), cpp_axes, b, *place.args())
    return Operator(core)


def wavelet(shape, levels, *, kind="haar", dtype="complex64", device="cpu", stream=None, nthreads=0) -> Operator:
    """The orthonormal separable wavelet transform (periodic) of an image of `shape`, `levels`
    levels (1 to wavelet_max_levels(shape)); kind "haar" or "daubechies4" (D4, also "d4" and
    "db2": 4 taps, two vanishing moments).

    ishape = oshape = shape: coefficients in Mallat's pyramid layout. A level works on the corner
    block of extents m (the whole image at level 1): along every axis whose m is even it puts the
    low-pass (approximation) half first and the high-pass (detail) half second, so for a 2D
    level y[:m0//2, :m1//2] is the approximation, y[:m0//2, m1//2:] low along axis 0 and high
    along axis 1, and so on; the next level works on the approximation corner. Axes of odd
    extent are left whole from then on. A.H is the inverse and A.N the identity."""
    shape = _shape_tuple(shape)
    k = _choice(kind, _WAVELETS, "kind")
    dtype = _complex_dtype(dtype)
    place = _Place(device, stream, nthreads)
    with _terms():
        core = _core_class(dtype).wavelet(list(reversed(shape)), operator.index(levels), k, *place.args())
    return Operator(core)


def wavelet_max_levels(shape) -> int:
    """The most levels wavelet(shape, levels) accepts (0 when every extent is odd)."""
    shape = _shape_tuple(shape)
    with _terms():
        return int(_core.wavelet_max_levels(list(reversed(shape))))
