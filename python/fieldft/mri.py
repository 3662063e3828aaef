"""fieldft.mri: MRI encoding operators (fieldft.op operators) on one geometry, `Encoding`.

    enc = fieldft.mri.Encoding((Ny, Nx), k, times=t, field=dw)     # k: (M, 2) = (ky, kx) columns
    F = fieldft.mri.NufftEncoding(enc, eps=1e-5, batch=C)          # (C, Ny, Nx) -> (C, M)
    E = fieldft.mri.DftEncoding(enc)                                # exact, with the field map
    S = F @ fieldft.op.diag_expand(maps)                            # SENSE, maps (C, Ny, Nx)
    w = fieldft.mri.density_compensation(enc)                       # (M,) gridding weights

Model (include/fieldft/mri/encoding.hpp):  s_j = Σ_v m_v exp(-i (2π k_j·r_v + Δω_v t_j)),
adjoint the conjugate phase; k in cycles per field of view, within [-N/2, N/2] per axis; voxel
positions r_v = (i - ⌊N/2⌋) / N per axis (field-of-view units); Δω in rad/s; t in seconds.

Axis order: images are (..., [Nz,] Ny, Nx), x the last axis, stacked copies (coils, shots,
frames) on leading axes: the C++ shapes {Nx, Ny[, Nz][, C]} reversed, i.e. the same memory.
k follows the image: `k` has shape (M, ndim) and column d pairs with image axis d, so the
columns are (ky, kx) in 2D and (kz, ky, kx) in 3D (kx = k[:, -1] pairs with the last axis, as
for fieldft.Dft). Leading axes of k beyond the last (e.g. (shots, readout, ndim)) are
flattened in C order into the M samples; `times` and `shots` then hold M values in that order.
"""

from __future__ import annotations

import math
import operator
import re

import numpy as np

from . import _arrays, _core
from ._engine import c_int, caller_terms, count64
from ._plan import OPTION_NAMES, make_options
from .op import Operator, _complex_dtype, _Place, _python_shapes

__all__ = ["Encoding", "NufftEncoding", "DftEncoding", "DftR2Encoding", "density_compensation"]


def _host(v, name, dtype):
    """A C-contiguous host copy of construction data (the C++ Encoding copies it anyway)."""
    if hasattr(v, "__cuda_array_interface__") and hasattr(v, "get"):  # cupy
        v = v.get()
    elif _arrays._is_torch(v):
        v = v.detach().cpu().numpy()
    a = np.asarray(v)
    if a.dtype.kind == "c":
        raise TypeError(f"`{name}` must be real, got {a.dtype}")
    return np.ascontiguousarray(a, dtype=dtype)


def _message(dim):
    """C++ messages in the caller's terms: shapes reversed, sample j of kx / ky / kz as the entry
    of `k` it came from (k[j, -1] is kx), options.name as the keyword argument."""
    def translate(message: str) -> str:
        message = re.sub(r"\bk([xyz])\[(\d+)\]",
                         lambda m: f"k[{m.group(2)}, {dim - 1 - 'xyz'.index(m.group(1))}] (k{m.group(1)})", message)
        message = re.sub(r"\boptions\.(\w+)", r"\1", message)
        return _python_shapes(message)
    return translate


class Encoding:
    """The geometry of an MRI acquisition: image shape, k-space samples, readout times, field
    map and shot labels (validated and copied once, here).

    Encoding(shape, k, times=None, field=None, shots=None)

    shape: (Ny, Nx) or (Nz, Ny, Nx). k: (M, ndim) sample positions in cycles per field of view,
    columns in image-axis order ((ky, kx) or (kz, ky, kx)); leading axes (..., ndim) are
    flattened. times: M readout times in seconds (None: all zero). field: off-resonance map in
    rad/s of shape `shape` (None: none). shots: M integer shot labels >= 0 (None: one shot).
    Arrays may be numpy, cupy or torch (copied to the host once).
    """

    def __init__(self, shape, k, times=None, field=None, shots=None):
        try:
            shape = tuple(operator.index(n) for n in shape)
        except TypeError:
            raise TypeError(f"shape must be (Ny, Nx) or (Nz, Ny, Nx), got {shape!r}") from None
        if len(shape) not in (2, 3):
            raise _core.InvalidArgumentError(f"shape must be (Ny, Nx) or (Nz, Ny, Nx), got {shape!r}")
        self._shape = tuple(count64(n, f"shape[{i}]") for i, n in enumerate(shape))
        dim = len(shape)
        k = _host(k, "k", np.float64)
        if k.ndim < 1 or k.shape[-1] != dim:
            raise _core.ShapeMismatchError(
                f"`k` must have shape (M, {dim}) (columns {'(kz, ky, kx)' if dim == 3 else '(ky, kx)'}, "
                f"matching shape {self._shape}), got {k.shape}")
        self._k = np.ascontiguousarray(k.reshape(-1, dim))
        m = self._k.shape[0]
        self._times = None
        if times is not None:
            t = _host(times, "times", np.float64).reshape(-1)
            if t.size != m:
                raise _core.ShapeMismatchError(f"`times` has {t.size} values; `k` has {m} samples")
            self._times = t
        self._field = None
        if field is not None:
            f = _host(field, "field", np.float64)
            if f.shape != self._shape and f.shape != (math.prod(self._shape),):
                raise _core.ShapeMismatchError(f"`field` has shape {f.shape}; expected the image shape {self._shape}")
            self._field = f.reshape(self._shape)
        self._shots = None
        if shots is not None:
            s = _host(shots, "shots", np.int64).reshape(-1)
            if s.size != m:
                raise _core.ShapeMismatchError(f"`shots` has {s.size} labels; `k` has {m} samples")
            if s.size and (s.min() < 0 or s.max() > np.iinfo(np.int32).max):
                bad = int(s.min()) if s.min() < 0 else int(s.max())
                raise _core.InvalidArgumentError(f"shot labels must be integers in [0, 2**31 - 1], got {bad}")
            self._shots = np.ascontiguousarray(s, dtype=np.int32)
        self._cores = {}
        self._core(np.float64)  # validates now (ranges, NaN/Inf), in the caller's terms

    def _core(self, real_dtype):
        """The C++ Encoding<T> for float32 or float64 (made once per precision)."""
        real_dtype = np.dtype(real_dtype)
        core = self._cores.get(real_dtype)
        if core is not None:
            return core
        dim = len(self._shape)
        k = [np.ascontiguousarray(self._k[:, dim - 1 - d], dtype=real_dtype) for d in range(dim)]  # kx, ky, kz
        times = (np.ascontiguousarray(self._times, dtype=real_dtype) if self._times is not None
                 else np.empty(0, real_dtype))
        field = (np.ascontiguousarray(self._field.reshape(-1), dtype=real_dtype) if self._field is not None
                 else np.empty(0, real_dtype))
        shots = self._shots if self._shots is not None else np.empty(0, np.int32)

        def ptr(a):
            return a.__array_interface__["data"][0] if a.size else 0

        cls = _core.EncodingF if real_dtype == np.float32 else _core.EncodingD
        with caller_terms(_message(dim)):
            core = cls(list(reversed(self._shape)), self._k.shape[0], ptr(k[0]), ptr(k[1]),
                       ptr(k[2]) if dim == 3 else 0, ptr(times), times.size, ptr(field), field.size, ptr(shots),
                       shots.size)
        self._cores[real_dtype] = core
        return core

    shape = property(lambda self: self._shape, doc="image shape (Ny, Nx) or (Nz, Ny, Nx)")
    ndim = property(lambda self: len(self._shape))
    num_samples = property(lambda self: self._k.shape[0], doc="M")
    k = property(lambda self: self._k.copy(), doc="(M, ndim) sample positions, image-axis order")
    times = property(lambda self: None if self._times is None else self._times.copy())
    field = property(lambda self: None if self._field is None else self._field.copy())
    shots = property(lambda self: None if self._shots is None else self._shots.copy())
    has_field = property(lambda self: self._field is not None)
    num_shots = property(lambda self: self._core(np.float64).num_shots, doc="largest shot label + 1")

    def __repr__(self):
        extras = [name for name in ("times", "field", "shots") if getattr(self, "_" + name) is not None]
        return (f"fieldft.mri.Encoding(shape={self._shape}, num_samples={self.num_samples}"
                + (", with " + ", ".join(extras) if extras else "") + ")")


def _check_encoding(encoding):
    if not isinstance(encoding, Encoding):
        raise TypeError(f"encoding must be a fieldft.mri.Encoding, got {type(encoding).__name__}")


_NUFFT_OPTIONS = ("upsampfac", "method", "max_batch", "bin_size", "fft_planning", "spread_boxes")


class NufftEncoding(Operator):
    """The encoding through the NUFFT: type 2 forward, type 1 adjoint (points set once), each
    accurate to `eps` (relative l2). No field map (use DftEncoding).

    NufftEncoding(encoding, eps=1e-5, batch=1, *, dtype="complex64", device="cpu", stream=None,
                  nthreads=0, **opts)

    batch B > 1: B stacked images per call through one batched transform, ishape
    (B, *shape), oshape (B, M); else ishape `shape`, oshape (M,). opts: the Plan options
    upsampfac, method, max_batch, bin_size (array order), fft_planning, spread_boxes.
    """

    def __init__(self, encoding, eps=1e-5, batch=1, *, dtype="complex64", device="cpu", stream=None, nthreads=0,
                 **opts):
        _check_encoding(encoding)
        unknown = sorted(set(opts) - set(_NUFFT_OPTIONS))
        if unknown:
            extra = " (the encoding fixes the others)" if set(unknown) <= set(OPTION_NAMES) else ""
            raise TypeError(f"unknown option(s) {', '.join(unknown)}; valid options: "
                            f"{', '.join(_NUFFT_OPTIONS)}{extra}")
        dtype = _complex_dtype(dtype)
        place = _Place(device, stream, nthreads)
        options = make_options("cpu" if place.device < 0 else "cuda", dict(opts, stream=0))
        enc = encoding._core(_arrays.real_dtype_of(dtype))
        cls = _core.OperatorF if dtype == np.complex64 else _core.OperatorD
        with caller_terms(_message(encoding.ndim)):
            core = cls.nufft_encoding(enc, float(eps), count64(batch, "batch"), options, *place.args())
        super().__init__(core)
        self.encoding = encoding
        self.eps = float(eps)
        self.batch = int(batch)


class DftEncoding(Operator):
    """The exact field-corrected DFT of the encoding (include/fieldft/mri/dft.hpp), field map
    and readout times included.

    DftEncoding(encoding, batch=1, *, dtype="complex64", device="cpu", stream=None, nthreads=0)

    batch as for NufftEncoding (B images through one DFT pass).
    """

    _r2 = False

    def __init__(self, encoding, batch=1, *, dtype="complex64", device="cpu", stream=None, nthreads=0):
        _check_encoding(encoding)
        dtype = _complex_dtype(dtype)
        place = _Place(device, stream, nthreads)
        enc = encoding._core(_arrays.real_dtype_of(dtype))
        cls = _core.OperatorF if dtype == np.complex64 else _core.OperatorD
        with caller_terms(_message(encoding.ndim)):
            core = cls.dft_encoding(enc, count64(batch, "batch"), self._r2, *place.args())
        super().__init__(core)
        self.encoding = encoding
        self.batch = int(batch)


class DftR2Encoding(DftEncoding):
    """DftEncoding with the R2* intravoxel-dephasing factor Π_d sinc(k_dj/N_d + G_dv t_j), the
    gradient maps G from central differences of the field map (as fieldft.DftR2 without
    `gradients`)."""

    _r2 = True


_DENSITY_OPTIONS = ("method", "max_batch", "bin_size", "spread_boxes")


def density_compensation(encoding, iterations=30, oversampling=1.5, eps=1e-2, *, dtype="float32", device="cpu",
                         stream=None, nthreads=0, **opts):
    """Sampling density compensation weights of the encoding's trajectory by the iterative method
    of Pipe & Menon (1999): from w = 1, `iterations` steps w_j <- w_j / |(G w)_j|, G = C C^H the
    kernel's spreading onto a grid of about `oversampling` cells per cycle/FOV and interpolation
    back (include/fieldft/mri/density.hpp has the math and the reasons for the defaults).

    density_compensation(encoding, iterations=30, oversampling=1.5, eps=1e-2, *, dtype="float32",
                         device="cpu", stream=None, nthreads=0, **opts) -> numpy array (M,)

    Scale: w_j ~ (k-space area of sample j, in (cycles/FOV)^ndim) / number of voxels, so that the
    gridding reconstruction A^H (w * y) of a NufftEncoding A reproduces images the samples cover
    with unit gain (w_j = 1/N for full Cartesian sampling). Only `k` matters: times, field map and
    shots are ignored. dtype: float32 or float64 (complex64 / complex128 name the same precision).
    device: where the iterations run ("cpu" or "cuda:d"); the weights come back as a numpy array
    either way. eps chooses the kernel (width 4 at the defaults). opts: the Plan options method,
    max_batch, bin_size (array order), spread_boxes of the spreading plan.
    """
    _check_encoding(encoding)
    unknown = sorted(set(opts) - set(_DENSITY_OPTIONS))
    if unknown:
        raise TypeError(f"unknown option(s) {', '.join(unknown)}; valid options: {', '.join(_DENSITY_OPTIONS)}")
    try:
        d = np.dtype(dtype)
    except TypeError:
        raise TypeError(f"dtype must be float32 or float64, got {dtype!r}") from None
    real = {np.dtype(np.float32): np.float32, np.dtype(np.complex64): np.float32,
            np.dtype(np.float64): np.float64, np.dtype(np.complex128): np.float64}.get(d)
    if real is None:
        raise TypeError(f"dtype must be float32 or float64, got {d}")
    place = _Place(device, stream, nthreads)
    options = make_options("cpu" if place.device < 0 else "cuda", dict(opts, stream=0))
    out = np.empty(encoding.num_samples, dtype=real)
    enc = encoding._core(real)
    with caller_terms(_message(encoding.ndim)):
        enc.density_compensation(out.ctypes.data, c_int(iterations, "iterations"), float(oversampling), float(eps),
                                 options, place.device, place.stream, place.nthreads)
    return out
