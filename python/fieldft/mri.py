"""fieldft.mri: MRI encoding operators (fieldft.op operators) on one geometry, `Encoding`.

    enc = fieldft.mri.Encoding((Ny, Nx), k, times=t, field=dw)     # k: (M, 2) = (ky, kx) columns
    F = fieldft.mri.NufftEncoding(enc, eps=1e-5, batch=C)          # (C, Ny, Nx) -> (C, M)
    E = fieldft.mri.DftEncoding(enc)                                # exact, with the field map
    T = fieldft.mri.TimeSegmentedEncoding(enc, accuracy=1e-3)       # the field map through the NUFFT
    S = fieldft.mri.sense(enc, maps, eps=1e-5)                      # SENSE, maps (C, Ny, Nx):
                                                                    # F @ fieldft.op.diag_expand(maps)
    P = fieldft.mri.pcsense(enc, maps, phase_maps)                  # multi-shot pcSENSE, phase (S, Ny, Nx)
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
from .op import Operator, _complex_dtype, _fixed_values, _Place, _python_shapes

__all__ = ["Encoding", "NufftEncoding", "DftEncoding", "DftR2Encoding", "TimeSegmentedEncoding",
           "plan_time_segmentation", "choose_field_model", "sense", "pcsense", "estimate_coil_maps", "density_compensation", "shepp_logan",
           "spiral", "radial", "readout_times", "coil_maps", "field_map", "shot_phase_maps", "shot_labels",
           "add_noise"]


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


def _image_shape(shape):
    """An image shape (Ny, Nx) or (Nz, Ny, Nx) as a tuple of ints."""
    try:
        shape = tuple(operator.index(n) for n in shape)
    except TypeError:
        raise TypeError(f"shape must be (Ny, Nx) or (Nz, Ny, Nx), got {shape!r}") from None
    if len(shape) not in (2, 3):
        raise _core.InvalidArgumentError(f"shape must be (Ny, Nx) or (Nz, Ny, Nx), got {shape!r}")
    return shape


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
        shape = _image_shape(shape)
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


def _setup(encoding, dtype, device, stream, nthreads, opts):
    """What every operator factory on an Encoding needs: (dtype, place, Plan options, the C++
    encoding of dtype's precision, the compiled operator class)."""
    dtype = _complex_dtype(dtype)
    place = _Place(device, stream, nthreads)
    options = make_options("cpu" if place.device < 0 else "cuda", dict(opts, stream=0))
    enc = encoding._core(_arrays.real_dtype_of(dtype))
    cls = _core.OperatorF if dtype == np.complex64 else _core.OperatorD
    return dtype, place, options, enc, cls


_NUFFT_OPTIONS = ("upsampfac", "method", "max_batch", "bin_size", "fft_planning", "spread_boxes")
_TOEPLITZ = {"off": 0, "on": 1, "auto": 2}


def _toeplitz_code(toeplitz) -> int:
    if toeplitz not in _TOEPLITZ:
        raise _core.InvalidArgumentError(f"toeplitz must be 'auto', 'on' or 'off', got {toeplitz!r}")
    return _TOEPLITZ[toeplitz]


class NufftEncoding(Operator):
    """The encoding through the NUFFT: type 2 forward, type 1 adjoint (points set once), each
    accurate to `eps` (relative l2). No field map (use DftEncoding).

    NufftEncoding(encoding, eps=1e-5, batch=1, *, dtype="complex64", device="cpu", stream=None,
                  nthreads=0, toeplitz="auto", **opts)

    batch B > 1: B stacked images per call through one batched transform, ishape
    (B, *shape), oshape (B, M); else ishape `shape`, oshape (M,). opts: the Plan options
    upsampfac, method, max_batch, bin_size (array order), fft_planning, spread_boxes.
    toeplitz: the normal operator N(x) = AᴴA x — "on": the Toeplitz form (a point-spread kernel on
    the 2N grid, pad → FFT → kernel → inverse FFT → crop; include/fieldft/mri/toeplitz.hpp),
    "off": the two transforms, "auto" (default): Toeplitz where its cost model says it is faster.
    The kernel is built at the first N() (or prepare_normal()); `toeplitz_info` reports it.
    """

    def __init__(self, encoding, eps=1e-5, batch=1, *, dtype="complex64", device="cpu", stream=None, nthreads=0,
                 toeplitz="auto", **opts):
        _check_encoding(encoding)
        unknown = sorted(set(opts) - set(_NUFFT_OPTIONS))
        if unknown:
            extra = " (the encoding fixes the others)" if set(unknown) <= set(OPTION_NAMES) else ""
            raise TypeError(f"unknown option(s) {', '.join(unknown)}; valid options: "
                            f"{', '.join(_NUFFT_OPTIONS)}{extra}")
        dtype, place, options, enc, cls = _setup(encoding, dtype, device, stream, nthreads, opts)
        with caller_terms(_message(encoding.ndim)):
            core = cls.nufft_encoding(enc, float(eps), count64(batch, "batch"), options, _toeplitz_code(toeplitz),
                                      *place.args())
        super().__init__(core)
        self.encoding = encoding
        self.eps = float(eps)
        self.batch = int(batch)

    @property
    def toeplitz_info(self) -> dict:
        """{'used': bool, 'reason': the cost model's numbers, 'setup_seconds': the kernel's set-up
        (NaN until built)}."""
        return type(self._core).toeplitz_info(self._core, False)

    def prepare_normal(self) -> float:
        """Builds the Toeplitz kernel now (if used and not built); returns its set-up seconds."""
        with caller_terms(_message(self.encoding.ndim)):
            return type(self._core).toeplitz_info(self._core, True)["setup_seconds"]


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



# ---------------------------------------------------------------------------------------------
# Time segmentation (include/fieldft/mri/time_segmentation.hpp).

_INTERPOLATORS = {"least-squares": 0, "hanning": 1}
_KINDS = {"nufft": 0, "dft": 1, "tseg": 2}


def _tseg_args(accuracy, interpolator, max_segments, segments):
    """(accuracy, interpolator code, max_segments, segments) for the compiled factories; the
    ranges themselves are checked by the C++ design (its messages name them)."""
    if interpolator not in _INTERPOLATORS:
        raise _core.InvalidArgumentError(
            f"interpolator must be 'least-squares' or 'hanning', got {interpolator!r}")
    if segments is None:
        segments = 0
    return (float(accuracy), _INTERPOLATORS[interpolator], c_int(max_segments, "max_segments"),
            c_int(segments, "segments"))


def _check_nufft_options(opts, kind):
    unknown = sorted(set(opts) - set(_NUFFT_OPTIONS))
    if unknown or (opts and kind == "dft"):
        raise TypeError(f"unknown option(s) {', '.join(unknown or sorted(opts))}; valid options (kind 'nufft' "
                        f"or 'tseg'): {', '.join(_NUFFT_OPTIONS)}")


class TimeSegmentedEncoding(Operator):
    """The field-corrected encoding through the NUFFT by time segmentation:
    exp(-iΔω t) ≈ Σ_l h_l(t) exp(-iΔω τ_l), L segments chosen from a requested accuracy.

    TimeSegmentedEncoding(encoding, accuracy=1e-3, interpolator="least-squares", max_segments=64,
                          segments=None, eps=1e-5, batch=1, *, dtype="complex64", device="cpu",
                          stream=None, nthreads=0, **opts)

    accuracy: the worst-case relative error of the phase approximation over every readout time
    and the field map's histogram; L is the smallest in 1 … max_segments (<= 1024) that reaches
    it. segments: force L (the error is then reported, not required). interpolator:
    "least-squares" (min-max over the field map's histogram; few segments) or "hanning" (raised
    cosine between neighbouring segments; several times more). eps: the NUFFT's tolerance; the
    operator's own error against DftEncoding is about the phase error plus eps times
    report["amplification"]. batch and opts as for NufftEncoding. Without a field map (or
    times) L = 1 and the operator is the NUFFT. `report`: a dict with L, interpolator, error
    (the worst-case phase error at L), accuracy, forced, amplification, distinct_times,
    field_bins, design_seconds and reason (how L came about). No accuracy reachable with
    max_segments segments raises InvalidArgumentError naming the best error and its L.
    """

    def __init__(self, encoding, accuracy=1e-3, interpolator="least-squares", max_segments=64, segments=None,
                 eps=1e-5, batch=1, *, dtype="complex64", device="cpu", stream=None, nthreads=0, **opts):
        _check_encoding(encoding)
        _check_nufft_options(opts, "tseg")
        args = _tseg_args(accuracy, interpolator, max_segments, segments)
        dtype, place, options, enc, cls = _setup(encoding, dtype, device, stream, nthreads, opts)
        with caller_terms(_message(encoding.ndim)):
            core = cls.tseg_encoding(enc, *args, float(eps), count64(batch, "batch"), options, *place.args())
        super().__init__(core)
        self.encoding = encoding
        self.eps = float(eps)
        self.batch = int(batch)

    @property
    def report(self) -> dict:
        """How L was chosen: L, interpolator, error, accuracy, forced, amplification,
        distinct_times, field_bins, design_seconds, reason."""
        return type(self._core).tseg_report(self._core)

    @property
    def segments(self) -> int:
        """L, the number of time segments."""
        return self.report["L"]


def plan_time_segmentation(encoding, accuracy=1e-3, interpolator="least-squares", max_segments=64,
                           segments=None) -> dict:
    """What TimeSegmentedEncoding(encoding, ...) would choose, without building plans: its
    `report` dict (L, error, accuracy, forced, reason, ...); the same errors."""
    _check_encoding(encoding)
    args = _tseg_args(accuracy, interpolator, max_segments, segments)
    with caller_terms(_message(encoding.ndim)):
        return encoding._core(np.float64).plan_time_segmentation(*args)


def choose_field_model(encoding, coils=1, *, per_shot=False, accuracy=1e-3, eps=1e-5, max_segments=64,
                       interpolator="least-squares", iterations=30, device="cpu", nthreads=0,
                       dtype="complex64") -> dict:
    """The field-corrected model by predicted cost (include/fieldft/mri/field_model.hpp): the
    exact DFT ("dft") or time segmentation ("tseg"), with the field-corrected Toeplitz normal or
    not, for `coils` coils and `iterations` normal applications at `accuracy` (the time
    segmentation's worst-case phase error); "nufft" without a field map. per_shot: one encoding
    per shot (pcsense). device: "cpu" or "cuda[:d]" (which throughput constants); dtype:
    complex64 or complex128. Returns a dict: encoding, toeplitz, L, L_toeplitz, error, the
    candidates "dft", "tseg", "tseg_toeplitz" (feasible, setup_seconds, iteration_seconds,
    total_seconds, note), planning_seconds and a one-line reason naming the numbers."""
    _check_encoding(encoding)
    args = _tseg_args(accuracy, interpolator, max_segments, None)
    if not isinstance(device, str) or not (device == "cpu" or device.startswith("cuda")):
        raise _core.InvalidArgumentError(f"device must be 'cpu' or 'cuda[:d]', got {device!r}")
    double = np.dtype(dtype) == np.complex128
    with caller_terms(_message(encoding.ndim)):
        return encoding._core(np.float64).choose_field_model(
            count64(coils, "coils"), bool(per_shot), args[0], float(eps), args[2], args[1],
            c_int(iterations, "iterations"), -1 if device == "cpu" else 0, c_int(nthreads, "nthreads"), double)


_COIL_METHODS = {"rss": 0, "espirit": 1}
_WINDOWS = {"hann": 0, "box": 1}


def estimate_coil_maps(encoding, kspace, *, method="rss", calibration_radius=12.0, window="hann", density=None,
                       threshold=0.05, reference_coil=None, kernel_size=0, kernel_threshold=0.02,
                       eigen_threshold=0.9, eps=1e-5, stream=None, nthreads=0, info=False):
    """Coil sensitivities from the data themselves (include/fieldft/mri/coil_maps.hpp).

    kspace: (C, M) samples of C coils on `encoding` (numpy, cupy or torch; complex64 or
    complex128); the maps come back as (C, *encoding.shape) in the same framework, on the same
    device, with the same dtype, normalised so that Σ_c |S_c|² = 1 where not masked (0 elsewhere).
    method: "rss" (low-resolution coil images from the samples with |k| <= calibration_radius
    cycles/FOV, Hann-windowed (window="box": none), divided by their root-sum-of-squares, masked
    below threshold·max) or "espirit" (Uecker et al. 2014 on the gridded calibration cube of
    half-width calibration_radius; kernel_size, kernel_threshold, eigen_threshold).
    density: M real weights >= 0 (default: 1 / the number of samples in each 1-cycle/FOV cell).
    reference_coil: make that coil's map real and >= 0 (coil phases relative to it); None: the
    method's default (rss: none, the object's phase stays in the maps; espirit: coil 0).
    info=True returns (maps, dict of calibration_samples, kernel_rank, kernel_size, calibration_size).
    """
    _check_encoding(encoding)
    if method not in _COIL_METHODS:
        raise _core.InvalidArgumentError(f"method {method!r} is not one of {', '.join(_COIL_METHODS)}")
    if window not in _WINDOWS:
        raise _core.InvalidArgumentError(f"window {window!r} is not one of {', '.join(_WINDOWS)}")
    d = _arrays.inspect(kspace, "kspace")
    if d.dtype not in (np.complex64, np.complex128):
        raise TypeError(f"`kspace` has dtype {d.dtype}; expected complex64 or complex128")
    m = encoding.num_samples
    if len(d.shape) != 2 or d.shape[1] != m:
        raise _core.ShapeMismatchError(f"`kspace` has shape {d.shape}; expected (coils, {m}) for this encoding")
    if not d.c_contiguous:
        d = _arrays.contiguous_copy(d, "kspace")
    coils = d.shape[0]
    dens = None
    if density is not None:
        dens = np.ascontiguousarray(_host(density, "density", np.float64).reshape(-1))
        if dens.size != m:
            raise _core.ShapeMismatchError(f"`density` has {dens.size} values; expected {m} (one per sample)")
    out = _arrays.empty_like(d, (coils,) + encoding.shape, d.dtype)
    place = _Place("cpu" if not d.on_device else f"cuda:{d.device}", stream, nthreads)
    ref = -1 if reference_coil is None else operator.index(reference_coil)
    real = np.float32 if d.dtype == np.complex64 else np.float64
    core = encoding._core(real)
    with caller_terms(_message(len(encoding.shape))):
        call = lambda: core.estimate_coil_maps(  # noqa: E731
            d.ptr, coils, out.ptr, _COIL_METHODS[method], float(calibration_radius), _WINDOWS[window],
            dens.__array_interface__["data"][0] if dens is not None else 0, 0 if dens is None else dens.size,
            float(threshold), ref, int(kernel_size), float(kernel_threshold), float(eigen_threshold), float(eps),
            *place.args()[:3])
        if d.on_device:
            with _arrays.StreamOrder(place.device, place.args()[1], d):
                result = call()
        else:
            result = call()
    return (out.obj, result) if info else out.obj


# ---------------------------------------------------------------------------------------------
# SENSE (include/fieldft/mri/sense.hpp).

def _check_maps(maps, image_shape):
    """maps: (C, *image_shape), C >= 1, finite; errors in the caller's (Python) terms."""
    if maps.ndim != len(image_shape) + 1 or maps.shape[1:] != tuple(image_shape):
        raise _core.ShapeMismatchError(
            f"sense: the coil maps have shape {maps.shape}, expected (C, {', '.join(map(str, image_shape))}) "
            "(the number of coils C followed by the image shape)")
    if maps.shape[0] < 1:
        raise _core.InvalidArgumentError(f"sense: the coil maps have {maps.shape[0]} coils, expected C >= 1")
    bad = np.argwhere(~np.isfinite(maps))
    if bad.size:
        first = tuple(int(i) for i in bad[0])
        raise _core.NonFiniteError(
            f"sense: coil map {first[0]} is {maps[first]} at voxel {first[1:]} (image axes {len(image_shape)}, "
            "Python order); coil sensitivities must be finite")


def sense(encoding, maps, *, kind="nufft", eps=1e-5, accuracy=1e-3, interpolator="least-squares", max_segments=64,
          segments=None, dtype="complex64", device="cpu", stream=None, nthreads=0, toeplitz="auto",
          **opts) -> Operator:
    """The SENSE model y_c = E(S_c ∘ x) as ONE operator, the coils a batch axis of one transform.

    sense(encoding, maps, *, kind="nufft", eps=1e-5, accuracy=1e-3, interpolator="least-squares",
          max_segments=64, segments=None, dtype="complex64", device="cpu", stream=None, nthreads=0,
          **opts)
        encoding: a fieldft.mri.Encoding; kind "nufft" (NufftEncoding, accurate to eps; no field
        map; toeplitz and opts as for NufftEncoding; for "tseg" toeplitz picks the field-corrected
        Toeplitz normal, "auto" where its design reaches the accuracy), "dft" (the exact field-corrected DFT, with
        the field map and readout times) or "tseg" (TimeSegmentedEncoding: the field map and
        readout times through the NUFFT, L chosen from `accuracy`; interpolator, max_segments,
        segments, eps and opts as there).
    sense(batched_encoding, maps)
        batched_encoding: a ready encoding operator over the C coils (ishape (C, *shape), e.g.
        NufftEncoding(enc, batch=C)); the result runs where it does, with its dtype.

    maps: (C, *shape) coil sensitivities (numpy, cupy or torch; copied once). ishape `shape`,
    oshape (C, M): y[c] = E(maps[c] * x); adjoint Σ_c conj(maps[c]) * Eᴴ y[c]. k-space weights
    belong to the solver, not to this operator.
    """
    if isinstance(encoding, Operator):
        if (opts or kind != "nufft" or eps != 1e-5 or accuracy != 1e-3 or interpolator != "least-squares"
                or max_segments != 64 or segments is not None or device != "cpu" or stream is not None
                or nthreads != 0):
            raise TypeError("sense(batched_encoding, maps) takes no other arguments: the operator fixes them")
        values, _, _ = _fixed_values_for(maps, encoding.dtype)
        ishape = tuple(encoding.ishape)
        if len(ishape) < 2:
            raise _core.ShapeMismatchError(f"sense: the batched encoding's ishape {ishape} has no coil axis")
        _check_maps(values, ishape[1:])
        if values.shape != ishape:
            raise _core.ShapeMismatchError(
                f"sense: the batched encoding has ishape {ishape}, expected the coil maps' shape {values.shape}")
        with caller_terms(_python_shapes):
            core = type(encoding._core).sense_on(encoding._core, values.__array_interface__["data"][0], values.size,
                                                 list(reversed(values.shape)))
        return Operator(core)
    _check_encoding(encoding)
    _check_kind(kind)
    _check_nufft_options(opts, kind)
    tseg = _tseg_args(accuracy, interpolator, max_segments, segments)
    dtype, place, options, enc, cls = _setup(encoding, dtype, device, stream, nthreads, opts)
    values, _, _ = _fixed_values_for(maps, dtype)
    _check_maps(values, encoding.shape)
    with caller_terms(_message(encoding.ndim)):
        core = cls.sense(enc, values.__array_interface__["data"][0], values.size, list(reversed(values.shape)),
                         _KINDS[kind], float(eps), options, _toeplitz_code(toeplitz), *tseg, *place.args())
    op = Operator(core)
    op.encoding = encoding
    return op


def _check_kind(kind):
    if kind not in _KINDS:
        raise _core.InvalidArgumentError(f"kind must be 'nufft', 'dft' or 'tseg', got {kind!r}")


def _check_phase_maps(phase, image_shape, shots):
    """phase: (S, *image_shape) real radians with S the encoding's shots, finite; errors in the
    caller's (Python) terms."""
    want = (shots,) + tuple(image_shape)
    if phase.ndim != len(image_shape) + 1 or phase.shape[1:] != tuple(image_shape):
        raise _core.ShapeMismatchError(
            f"pcsense: the phase maps have shape {phase.shape}, expected {want} (the number of shots followed "
            "by the image shape)")
    if phase.shape[0] != shots:
        raise _core.ShapeMismatchError(
            f"pcsense: phase maps for {phase.shape[0]} shots (shape {phase.shape}), but the encoding's shot labels "
            f"give {shots} shots; expected {want}")
    bad = np.argwhere(~np.isfinite(phase))
    if bad.size:
        first = tuple(int(i) for i in bad[0])
        raise _core.NonFiniteError(
            f"pcsense: the phase map of shot {first[0]} is {phase[first]} at voxel {first[1:]} (Python order); "
            "phases must be finite (radians)")


def pcsense(encoding, maps, phase_maps, *, kind="nufft", eps=1e-5, accuracy=1e-3, interpolator="least-squares",
            max_segments=64, segments=None, dtype="complex64", device="cpu", stream=None, nthreads=0,
            toeplitz="auto", gram=False, **opts) -> Operator:
    """Multi-shot phase-corrected SENSE as ONE operator: y_{s,c} = E_s(S_c ∘ e^{+iφ_s} ∘ x).

    pcsense(encoding, maps, phase_maps, *, kind="nufft", eps=1e-5, accuracy=1e-3,
            interpolator="least-squares", max_segments=64, segments=None, dtype="complex64",
            device="cpu", stream=None, nthreads=0, toeplitz="auto", gram=False, **opts)

    encoding: a fieldft.mri.Encoding whose `shots` label the samples (S = encoding.num_shots;
    none: one shot); E_s: the encoding of shot s's samples (their k, times, and the common field
    map), built per shot by `kind` with its options as in sense() ("nufft", "dft" or "tseg": L is
    then chosen per shot). maps: (C, *shape) coil sensitivities. phase_maps: (S, *shape) real
    phases in radians; the forward model MULTIPLIES the image by e^{+iφ_s}, so φ_s is the phase of
    shot s's own image relative to x (how such maps are estimated), for data in the Encoding's
    exp(-i2πk·r) convention (include/fieldft/mri/pcsense.hpp). ishape `shape`, oshape (C, M), the
    samples in the encoding's original order; adjoint Σ_s e^{-iφ_s} Σ_c conj(maps[c]) E_sᴴ y.
    gram=True (kind "dft" on a GPU in complex64, where all shots run in one DFT pass): the normal
    AᴴA through the stored Gram matrix of the exact-DFT model (N² complex values for N voxels,
    2 GiB at 128²), built before a solver's loop (op.prepare_normal()) from DFT passes of unit
    images, then one dense product per normal instead of two DFT passes: for many solves or
    iterations with one trajectory, field map and shot phases. Elsewhere it changes nothing.
    Errors: phase maps of another image shape or for another number of shots
    (ShapeMismatchError), NaN/Inf in them (NonFiniteError), a shot label without samples
    (InvalidArgumentError), sense()'s checks of the maps; with gram, a matrix that does not fit
    the device (OutOfMemoryError, naming the sizes).
    """
    _check_encoding(encoding)
    _check_kind(kind)
    _check_nufft_options(opts, kind)
    tseg = _tseg_args(accuracy, interpolator, max_segments, segments)
    dtype, place, options, enc, cls = _setup(encoding, dtype, device, stream, nthreads, opts)
    values, _, _ = _fixed_values_for(maps, dtype)
    _check_maps(values, encoding.shape)
    phase = _host(phase_maps, "phase_maps", np.float64)
    _check_phase_maps(phase, encoding.shape, encoding.num_shots)
    phase = np.ascontiguousarray(phase, dtype=_arrays.real_dtype_of(dtype))
    with caller_terms(_message(encoding.ndim)):
        core = cls.pcsense(enc, values.__array_interface__["data"][0], values.size, list(reversed(values.shape)),
                           phase.__array_interface__["data"][0], phase.size, list(reversed(phase.shape)),
                           _KINDS[kind], float(eps), options, _toeplitz_code(toeplitz), *tseg, bool(gram),
                           *place.args())
    op = Operator(core)
    op.encoding = encoding
    return op


def _fixed_values_for(maps, dtype):
    return _fixed_values(maps, "maps", dtype)


# ---------------------------------------------------------------------------------------------
# Simulated data (include/fieldft/mri/simulate.hpp): shapes in Python order, k columns in
# image-axis order ((ky, kx) or (kz, ky, kx)), as Encoding takes them.

def shepp_logan(shape, subsamples=4) -> np.ndarray:
    """The modified Shepp–Logan head phantom (Shepp & Logan 1974 ellipses, Toft 1996
    intensities; 3D: Kak & Slaney's ellipsoids), real float64 of `shape` ((Ny, Nx) or
    (Nz, Ny, Nx)); each voxel the average of subsamples**ndim sub-samples."""
    shape = _image_shape(shape)
    with caller_terms(_python_shapes):
        v = _core.sim_shepp_logan(list(reversed(shape)), operator.index(subsamples))
    return v.reshape(shape)


def _trajectory(shape, kind, a, b, oversampling, reach, centre_out):
    shape = _image_shape(shape)
    with caller_terms(_python_shapes):
        kx, ky, kz, l, s, p = _core.sim_trajectory(list(reversed(shape)), kind, operator.index(a),
                                                   operator.index(b), float(oversampling), float(reach),
                                                   bool(centre_out))
    cols = (ky, kx) if len(shape) == 2 else (kz, ky, kx)
    k = np.stack(cols, axis=-1)
    return k.reshape((l, s, 2)) if len(shape) == 2 else k.reshape((p, l, s, 3))


def spiral(shape, interleaves=0, samples=0, oversampling=1.0, reach=1.0) -> np.ndarray:
    """Archimedean spiral interleaves out to reach·N/2 cycles/FOV, arms 1/oversampling apart
    (1: the Nyquist spacing) and samples at most 1 cycle/FOV apart along them (0 = defaults:
    max(1, N/8) arms, ⌈2π·turns·R⌉ samples). 3D: a stack of spirals on the Nz planes.
    Returns k of shape (interleaves, samples, 2) or (Nz, interleaves, samples, 3)."""
    return _trajectory(shape, 0, interleaves, samples, oversampling, reach, True)


def radial(shape, spokes=0, samples=0, centre_out=True) -> np.ndarray:
    """Radial spokes out to N/2 cycles/FOV: centre-out (angles 2πl/L) or diameters (angles
    πl/L); defaults at the Nyquist spacing between spokes at the edge and twice the Nyquist rate
    along them. 3D: a stack of stars. Shape as for spiral."""
    return _trajectory(shape, 1, spokes, samples, 1.0, 1.0, centre_out)


def readout_times(k, dwell, start=0.0) -> np.ndarray:
    """Readout times t = start + s·dwell (seconds) for sample s of each readout of a trajectory
    k of shape (..., samples, ndim): an array of shape k.shape[:-1]."""
    dwell, start = float(dwell), float(start)
    if not (math.isfinite(dwell) and dwell >= 0):
        raise _core.InvalidArgumentError(f"readout_times: dwell is {dwell}, expected a finite value >= 0")
    if not math.isfinite(start):
        raise _core.InvalidArgumentError(f"readout_times: start is {start}, expected a finite value")
    k = np.asarray(k)
    if k.ndim < 2:
        raise _core.ShapeMismatchError(f"readout_times: k must have shape (..., samples, ndim), got {k.shape}")
    t = start + dwell * np.arange(k.shape[-2], dtype=np.float64)
    return np.ascontiguousarray(np.broadcast_to(t, k.shape[:-1]))


def coil_maps(shape, coils, *, radius=1.2, width=1.0, phase=1.0, normalize=False) -> np.ndarray:
    """Smooth synthetic coil sensitivities, complex128 of shape (coils, *shape): Gaussian
    magnitude around coils on a circle of `radius` (half-FOV units), phase sloping towards the
    coil; normalize: Σ_c |S_c|² = 1 at every voxel."""
    shape = _image_shape(shape)
    with caller_terms(_python_shapes):
        v = _core.sim_coil_maps(list(reversed(shape)), operator.index(coils), float(radius), float(width),
                                float(phase), bool(normalize))
    return v.reshape((int(coils),) + shape)


def field_map(shape, max_hz=50.0, blobs=3, seed=1) -> np.ndarray:
    """A smooth off-resonance map of Gaussian blobs with max |Δf| = max_hz, returned as
    Δω = 2π·Δf in rad/s (Encoding's unit), float64 of `shape`."""
    shape = _image_shape(shape)
    with caller_terms(_python_shapes):
        v = _core.sim_field_map(list(reversed(shape)), float(max_hz), operator.index(blobs), operator.index(seed))
    return v.reshape(shape)


def shot_phase_maps(shape, shots, max_phase=3.0, seed=1) -> np.ndarray:
    """Smooth per-shot phase maps in radians, float64 of shape (shots, *shape): for each shot a
    constant + linear + quadratic polynomial in the voxel positions (the shape of motion-induced
    phase in diffusion-weighted shots), seeded, scaled so that max |φ_s| = max_phase; the
    phase_maps of pcsense."""
    shape = _image_shape(shape)
    with caller_terms(_python_shapes):
        v = _core.sim_shot_phase_maps(list(reversed(shape)), operator.index(shots), float(max_phase),
                                      operator.index(seed))
    return v.reshape((int(shots),) + shape)


def shot_labels(k, shots) -> np.ndarray:
    """Shot labels for a trajectory from spiral() or radial(): interleave l (arm or spoke) is
    acquired in shot l mod shots (1 <= shots <= interleaves; in 3D every kz plane's arm l in the
    same shot). k: (interleaves, samples, 2) or (Nz, interleaves, samples, 3); returns int32 labels
    of shape k.shape[:-1], the Encoding's `shots` (flattened in the same order as k)."""
    shape = tuple(np.shape(k))
    if len(shape) not in (3, 4) or shape[-1] != len(shape) - 1:
        raise _core.ShapeMismatchError(
            f"shot_labels: k has shape {shape}, expected (interleaves, samples, 2) or "
            "(Nz, interleaves, samples, 3) as spiral() and radial() give it")
    partitions = shape[0] if len(shape) == 4 else 1
    with caller_terms(_python_shapes):
        v = _core.sim_shot_labels(shape[-3], shape[-2], partitions, operator.index(shots))
    return v.reshape(shape[:-1])


def add_noise(data, sigma, seed) -> np.ndarray:
    """data + complex white Gaussian noise of standard deviation sigma per value (each part of
    variance sigma²/2), seeded; a new complex array (complex64 data stays complex64)."""
    a = np.asarray(data)
    dtype = np.complex64 if a.dtype in (np.complex64, np.float32) else np.complex128
    out = np.array(a, dtype=dtype, order="C", copy=True)
    fn = _core.sim_add_noise_f if dtype == np.complex64 else _core.sim_add_noise_d
    fn(out.__array_interface__["data"][0] if out.size else 0, out.size, float(sigma), operator.index(seed))
    return out


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
