"""fieldft.Plan and the one-call functions nufft1d1 … nufft3d3 (the native Python API).

Conventions (the same as the finufft Python package, so arrays move between them unchanged):
  * n_modes in array order (N1, N2, N3); a mode array of one transform has shape n_modes, and
    coordinate x pairs with axis 0, y with axis 1, z with axis 2:
        type 1: f[k1, k2] = sum_j c[j] exp(isign i (k1 x_j + k2 y_j)),  k_d in [-N_d/2, (N_d-1)/2]
        type 2: c[j] = sum_k f[k1, k2] exp(isign i (k1 x_j + k2 y_j))
        type 3: f[k] = sum_j c[j] exp(isign i (s_k x_j + t_k y_j))
  * n_trans transforms stack on leading axes: any leading shape whose product is n_trans,
    e.g. (n_trans, N1, N2) or (n_trans, M); outputs get the input's leading shape.
  * points x, y, z (and type 3 targets s, t, u) are 1-D real arrays of the plan's precision,
    in radians, 2π-periodic (types 1 and 2).
"""

from __future__ import annotations

import math
import numbers
import operator

import numpy as np

from . import _arrays, _core
from ._engine import (COMPLEX_DTYPES, Engine, c_int, c_int_capped, check_isign, check_type, count64,
                      expected_shape_text, lead_shape)

OPTION_NAMES = ("modeord", "upsampfac", "max_batch", "bin_size", "nthreads", "fft_planning", "method", "device",
                "stream", "spread_boxes", "type3_direct", "spread_interp_only", "reuse", "precompute_max_bytes",
                "planning", "wisdom_path")


def complex_dtype(dtype) -> np.dtype:
    try:
        d = np.dtype(dtype)
    except TypeError:
        raise TypeError(f"dtype must be complex64 or complex128, got {dtype!r}") from None
    if d not in COMPLEX_DTYPES:
        raise TypeError(f"dtype must be complex64 or complex128, got {d}")
    return d


def modes_tuple(n_modes):
    """n_modes as a tuple of 1 to 3 ints (an int means one dimension)."""
    if isinstance(n_modes, numbers.Integral):
        modes = (int(n_modes),)
    else:
        try:
            modes = tuple(operator.index(n) for n in n_modes)
        except TypeError:
            raise TypeError(f"n_modes must be an int or a sequence of 1 to 3 ints, got {n_modes!r}") from None
    if not 1 <= len(modes) <= 3:
        raise ValueError(f"n_modes must have 1, 2 or 3 entries (the dimension), got {len(modes)}")
    if len(modes) == 1:
        return (count64(modes[0], "n_modes"),)
    return tuple(count64(n, f"n_modes[{i}]") for i, n in enumerate(modes))


def make_options(backend: str, opts: dict) -> "_core.Options":
    """A C++ Options from the native keyword options (array-order bin_size, any stream form)."""
    unknown = sorted(set(opts) - set(OPTION_NAMES))
    if unknown:
        raise TypeError(f"unknown option(s) {', '.join(unknown)}; valid options: {', '.join(OPTION_NAMES)}")
    o = _core.Options()
    o.backend = str(backend)
    for name in ("modeord", "device", "spread_boxes", "type3_direct"):
        if name in opts:
            setattr(o, name, c_int(opts[name], name))
    for name in ("max_batch", "nthreads"):  # larger than a C int: as many as there are
        if name in opts:
            setattr(o, name, c_int_capped(opts[name], name))
    if "upsampfac" in opts:
        o.upsampfac = float(opts["upsampfac"])
    if "spread_interp_only" in opts:
        o.spread_interp_only = bool(opts["spread_interp_only"])
    if "reuse" in opts:
        o.reuse = int(opts["reuse"])
    if "precompute_max_bytes" in opts:
        o.precompute_max_bytes = float(opts["precompute_max_bytes"])
    if "method" in opts:
        o.method = str(opts["method"])
    if "fft_planning" in opts:
        o.fft_planning = str(opts["fft_planning"])
    if "planning" in opts:
        o.planning = str(opts["planning"])
    if "wisdom_path" in opts:
        o.wisdom_path = str(opts["wisdom_path"])
    if "bin_size" in opts:
        bins = opts["bin_size"]
        bins = (bins,) if isinstance(bins, numbers.Integral) else tuple(bins)
        if not 1 <= len(bins) <= 3:
            raise ValueError(f"bin_size must have 1 to 3 entries (array order), got {bins!r}")
        o.bin_size = [c_int(b, f"bin_size[{len(bins) - 1 - i}]") for i, b in enumerate(reversed(bins))] + \
            [0] * (3 - len(bins))
    set_stream(o, opts.get("stream"))
    return o


def set_stream(o: "_core.Options", stream) -> None:
    """The plan's CUDA stream: the one given, else the current stream of the GPU framework in
    use (see _arrays.framework_current_stream). Irrelevant for the CPU backend."""
    if stream is not None:
        o.stream = _arrays.stream_handle(stream)
    elif o.backend != "cpu" and _core.build_info()["cuda"]:
        o.stream = _arrays.framework_current_stream(o.device)


class Plan:
    """A NUFFT plan: make once, set points, execute many times.

    Plan(nufft_type, n_modes, n_trans=1, eps=1e-6, isign=None, dtype="complex64",
         backend="auto", **opts)

    nufft_type: 1 (non-uniform to uniform), 2 (uniform to non-uniform) or 3 (non-uniform to
    non-uniform; n_modes is then the dimension, 1 to 3). n_modes: an int or a tuple of 1 to 3
    ints in array order. isign: sign of the exponent, +1 or -1; None means +1 for types 1 and 3,
    -1 for type 2. eps: relative l2 error target in (0, 1]. dtype: "complex64" or "complex128"
    (coordinates are float32 or float64 to match). backend: "auto" (CUDA when built in and a
    device is present), "cpu" or "cuda".

    opts: modeord (0 increasing, 1 FFT order), upsampfac (0 automatic, else 1.25 to 2.25),
    max_batch, bin_size (array order), nthreads (CPU; capped, see the nthreads property),
    fft_planning ("estimate"/"measure", CPU), planning ("estimate", "measure" or "remeasure": the
    configuration timed at set_points and kept in the wisdom file wisdom_path, default
    $FIELDFT_WISDOM; docs/tuning.md "Measured planning and wisdom"), method ("auto", "nupts",
    "subproblem", "output", "precomputed": CUDA; "auto", "nupts", "precomputed": CPU), reuse
    (expected executes per set_points, 0 unknown: the CPU precomputes the kernel weights from 8
    under "auto"; CUDA never: measured, it does not pay there), precompute_max_bytes ("precomputed": limit of the weights'
    memory, 0 a quarter of physical memory on the CPU, of free device memory on CUDA),
    spread_boxes (CUDA, 3D output-driven at kernel width <= 7: -1 automatic, 0 off,
    1 on), type3_direct (type 3: -1
    automatic: direct sums where they cost less than the grid, 0 the grid, 1 the direct sums),
    spread_interp_only (types 1 and 2: only spread onto / interpolate from a grid of n_modes
    cells with the plan's kernel, no FFT; see include/fieldft/nufft.hpp), device (CUDA ordinal), stream (CUDA stream: int handle, cupy or torch stream; default: the
    current stream of cupy or torch, whichever is in use, else the default stream).

    Arrays: numpy on the host; cupy arrays, torch tensors (CPU or CUDA) or any object with
    __cuda_array_interface__. Outputs are made in the framework and on the device of the input.
    Nothing is copied, except inputs that are not C-contiguous (copied once per call).
    """

    def __init__(self, nufft_type, n_modes, n_trans=1, eps=1e-6, isign=None, dtype="complex64", backend="auto",
                 **opts):
        t = check_type(nufft_type)
        if t == 3:
            dim = operator.index(n_modes)
            if not 1 <= dim <= 3:
                raise ValueError(f"a type 3 plan takes its dimension (1, 2 or 3) as n_modes, got {dim}")
            modes = None
        else:
            modes = modes_tuple(n_modes)
            dim = len(modes)
        n_trans = count64(n_trans, "n_trans")
        if isign is None:
            isign = -1 if t == 2 else 1
        dtype = complex_dtype(dtype)
        options = make_options(backend, opts)
        self._engine = Engine(t, dim, modes, n_trans, eps, check_isign(isign), dtype, options)

    # -- properties (read-only) ----------------------------------------------------------------
    type = property(lambda self: self._engine.type, doc="NUFFT type (1, 2 or 3)")
    dim = property(lambda self: self._engine.dim, doc="dimension (1, 2 or 3)")
    n_modes = property(lambda self: self._engine.n_modes, doc="modes in array order (None for type 3)")
    n_trans = property(lambda self: self._engine.n_trans, doc="transforms per execute")
    dtype = property(lambda self: self._engine.dtype, doc="complex dtype of the data")
    eps = property(lambda self: self._engine.core.eps, doc="requested relative tolerance")
    isign = property(lambda self: self._engine.core.isign, doc="sign of the exponent (+1 or -1)")
    backend = property(lambda self: self._engine.core.backend, doc='"cpu" or "cuda"')
    method = property(lambda self: self._engine.core.method, doc="spreading method")
    configured_by = property(lambda self: self._engine.core.configured_by,
                             doc='where the configuration came from: "estimate", "measured now (...)", "wisdom PATH"')
    modeord = property(lambda self: self._engine.core.modeord, doc="0 increasing, 1 FFT order")
    upsampfac = property(lambda self: self._engine.core.upsampfac, doc="fine grid / modes")
    kernel_width = property(lambda self: self._engine.core.kernel_width, doc="kernel width in fine-grid cells")
    spread_boxes = property(lambda self: self._engine.core.spread_boxes,
                            doc="CUDA: setpts chose register boxes for 3D output-driven spreading")
    spread_tensor_cores = property(lambda self: self._engine.core.spread_tensor_cores,
                                   doc="CUDA: setpts chose tensor-core tiles (float 3D type 1, sparse points)")
    spread_interp_only = property(lambda self: self._engine.core.spread_interp_only,
                                  doc="the plan only spreads (type 1) or interpolates (type 2) on n_modes cells")
    type3_direct = property(lambda self: self._engine.core.type3_direct,
                            doc="type 3: setpts chose the direct sums rather than the grid (False before setpts)")
    nthreads = property(lambda self: self._engine.core.nthreads,
                        doc="CPU threads the plan uses (the nthreads option, capped; 0 on the CUDA backend)")
    fine_grid = property(lambda self: tuple(reversed(self._engine.core.fine_grid[:self._engine.dim])),
                         doc="fine (upsampled) grid in array order (type 1 and 2)")
    num_points = property(lambda self: self._engine.nj, doc="M, once setpts was called (else None)")
    num_targets = property(lambda self: self._engine.nk if self._engine.type == 3 else None,
                           doc="number of type 3 targets (None for types 1 and 2)")
    device = property(lambda self: self._engine.device, doc="CUDA device ordinal")
    stream = property(lambda self: self._engine.stream, doc="cudaStream_t handle (int) the plan works on")

    def __repr__(self):
        e = self._engine
        what = f"n_modes={e.n_modes}" if e.type != 3 else f"dim={e.dim}"
        return (f"fieldft.Plan(type={e.type}, {what}, n_trans={e.n_trans}, eps={self.eps:g}, "
                f"dtype={e.dtype}, backend={self.backend})")

    # -- points ----------------------------------------------------------------------------------
    def setpts(self, x, y=None, z=None, s=None, t=None, u=None):
        """Sets the M non-uniform points (x[, y[, z]]) and, for type 3, the targets (s[, t[, u]]).
        The plan keeps its own sorted copy: the arrays may change or be freed afterwards."""
        e = self._engine
        points = self._coordinates((x, y, z), ("x", "y", "z"))
        targets = None
        if e.type == 3:
            targets = self._coordinates((s, t, u), ("s", "t", "u"))
        else:
            for name, v in zip(("s", "t", "u"), (s, t, u)):
                if v is not None:
                    raise ValueError(f"`{name}` (type 3 targets) given to a type {e.type} plan")
        e.set_points(points, targets)

    def _coordinates(self, arrays, names):
        e = self._engine
        infos = []
        for d, (v, name) in enumerate(zip(arrays, names)):
            if d >= e.dim:
                if v is not None:
                    raise ValueError(f"`{name}` given to a {e.dim}D plan (it takes {', '.join(names[:e.dim])})")
                continue
            if v is None:
                raise ValueError(f"a {e.dim}D plan needs `{name}`")
            info = _arrays.inspect(v, name)
            if info.dtype != e.real_dtype:
                raise TypeError(f"`{name}` has dtype {info.dtype}; a {e.dtype} plan takes {e.real_dtype} coordinates")
            if len(info.shape) != 1:
                raise ValueError(f"`{name}` must be 1-D, got shape {info.shape}")
            if infos and info.shape != infos[0].shape:
                raise ValueError(f"`{name}` has {info.shape[0]} points but `{names[0]}` has {infos[0].shape[0]}")
            if infos and info.device != infos[0].device:
                raise ValueError(f"`{name}` is in {info.where()} but `{names[0]}` is in {infos[0].where()}")
            e.check_location(info, name)
            if not info.c_contiguous:
                info = _arrays.contiguous_copy(info, name)
            infos.append(info)
        return infos

    # -- transforms ------------------------------------------------------------------------------
    def execute(self, data, out=None):
        """Applies the plan: type 1 c (n_trans, M) -> f (n_trans, *n_modes); type 2 the reverse;
        type 3 c (n_trans, M) -> f (n_trans, N). Returns `out` (allocated when None)."""
        return self._run(data, out, adjoint=False)

    def execute_adjoint(self, data, out=None):
        """Applies the adjoint (conjugate transpose) of execute: the opposite direction with the
        opposite sign, on the same points."""
        return self._run(data, out, adjoint=True)

    def _run(self, data, out, adjoint):
        e = self._engine
        if e.nj is None:
            raise _core.InvalidStateError("setpts must be called before execute")
        in_tail, out_tail = e.tails(adjoint)
        d = _arrays.inspect(data, "data")
        if d.dtype != e.dtype:
            raise TypeError(f"`data` has dtype {d.dtype}; this plan takes {e.dtype}")
        lead = lead_shape(d.shape, in_tail, e.n_trans)
        if lead is None:
            raise ValueError(f"`data` must have shape {expected_shape_text(in_tail, e.n_trans)}, got {d.shape}")
        e.check_location(d, "data")
        if out is None:
            o = _arrays.empty_like(d, lead + tuple(out_tail), e.dtype)
        else:
            o = _arrays.inspect(out, "out")
            if o.dtype != e.dtype:
                raise TypeError(f"`out` has dtype {o.dtype}; this plan writes {e.dtype}")
            if lead_shape(o.shape, out_tail, e.n_trans) is None:
                raise ValueError(f"`out` must have shape {expected_shape_text(out_tail, e.n_trans)}, got {o.shape}")
            if not o.c_contiguous or not o.writable:
                raise ValueError("`out` must be C-contiguous and writable (fieldft writes it in place)")
            if o.device != d.device:
                raise ValueError(f"`out` is in {o.where()} but `data` is in {d.where()}")
        if not d.c_contiguous:
            d = _arrays.contiguous_copy(d, "data")
        e.run(d, o, adjoint)
        return o.obj


# ---------------------------------------------------------------------------------------------
# One-call functions


def _simple(dim, nufft_type, points, data, targets, n_modes, out, eps, isign, kwargs, data_name):
    info = _arrays.inspect(data, data_name)
    dtype = info.dtype
    if dtype not in COMPLEX_DTYPES:
        raise TypeError(f"`{data_name}` must be complex64 or complex128, got {dtype}")
    if nufft_type == 2:
        if len(info.shape) < dim:
            raise ValueError(f"`{data_name}` must have at least {dim} axes (the modes), got shape {info.shape}")
        modes = tuple(info.shape[len(info.shape) - dim:])
        n_trans = math.prod(info.shape[:len(info.shape) - dim])
    else:
        if len(info.shape) < 1:
            raise ValueError(f"`{data_name}` must have at least one axis (the points)")
        n_trans = math.prod(info.shape[:-1])
        if nufft_type == 1:
            if n_modes is None:
                if out is None:
                    raise ValueError("type 1 needs n_modes or out (whose trailing axes give the modes)")
                modes = tuple(_arrays.inspect(out, "out").shape[-dim:])
            else:
                modes = (operator.index(n_modes),) * dim if isinstance(n_modes, numbers.Integral) else n_modes
                modes = modes_tuple(modes)
                if len(modes) != dim:
                    raise ValueError(f"n_modes has {len(modes)} entries; nufft{dim}d1 needs {dim}")
    if nufft_type == 3:
        plan = Plan(3, dim, n_trans, eps, isign, dtype, **kwargs)
    else:
        plan = Plan(nufft_type, modes, n_trans, eps, isign, dtype, **kwargs)
    plan.setpts(*points, *([None] * (3 - dim)), *targets)
    return plan.execute(data, out)


def nufft1d1(x, c, n_modes=None, out=None, eps=1e-6, isign=1, **kwargs):
    """1D type 1: f[k] = sum_j c[j] exp(isign i k x_j), k in [-N/2, (N-1)/2]. Returns f."""
    return _simple(1, 1, (x,), c, (), n_modes, out, eps, isign, kwargs, "c")


def nufft1d2(x, f, out=None, eps=1e-6, isign=-1, **kwargs):
    """1D type 2: c[j] = sum_k f[k] exp(isign i k x_j). Returns c."""
    return _simple(1, 2, (x,), f, (), None, out, eps, isign, kwargs, "f")


def nufft1d3(x, c, s, out=None, eps=1e-6, isign=1, **kwargs):
    """1D type 3: f[k] = sum_j c[j] exp(isign i s_k x_j). Returns f."""
    return _simple(1, 3, (x,), c, (s,), None, out, eps, isign, kwargs, "c")


def nufft2d1(x, y, c, n_modes=None, out=None, eps=1e-6, isign=1, **kwargs):
    """2D type 1: f[k1, k2] = sum_j c[j] exp(isign i (k1 x_j + k2 y_j)). Returns f (N1, N2)."""
    return _simple(2, 1, (x, y), c, (), n_modes, out, eps, isign, kwargs, "c")


def nufft2d2(x, y, f, out=None, eps=1e-6, isign=-1, **kwargs):
    """2D type 2: c[j] = sum_k f[k1, k2] exp(isign i (k1 x_j + k2 y_j)). Returns c."""
    return _simple(2, 2, (x, y), f, (), None, out, eps, isign, kwargs, "f")


def nufft2d3(x, y, c, s, t, out=None, eps=1e-6, isign=1, **kwargs):
    """2D type 3: f[k] = sum_j c[j] exp(isign i (s_k x_j + t_k y_j)). Returns f."""
    return _simple(2, 3, (x, y), c, (s, t), None, out, eps, isign, kwargs, "c")


def nufft3d1(x, y, z, c, n_modes=None, out=None, eps=1e-6, isign=1, **kwargs):
    """3D type 1: f[k1, k2, k3] = sum_j c[j] exp(isign i (k1 x_j + k2 y_j + k3 z_j)). Returns f."""
    return _simple(3, 1, (x, y, z), c, (), n_modes, out, eps, isign, kwargs, "c")


def nufft3d2(x, y, z, f, out=None, eps=1e-6, isign=-1, **kwargs):
    """3D type 2: c[j] = sum_k f[k1, k2, k3] exp(isign i (k1 x_j + k2 y_j + k3 z_j)). Returns c."""
    return _simple(3, 2, (x, y, z), f, (), None, out, eps, isign, kwargs, "f")


def nufft3d3(x, y, z, c, s, t, u, out=None, eps=1e-6, isign=1, **kwargs):
    """3D type 3: f[k] = sum_j c[j] exp(isign i (s_k x_j + t_k y_j + u_k z_j)). Returns f."""
    return _simple(3, 3, (x, y, z), c, (s, t, u), None, out, eps, isign, kwargs, "c")
