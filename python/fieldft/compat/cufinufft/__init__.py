"""Drop-in replacement for the ``cufinufft`` 2.5 Python package, computed by fieldft.

    import fieldft.compat.cufinufft as cufinufft

Same names (Plan, nufft1d1 … nufft3d3), signatures and defaults (dtype complex64, eps 1e-6,
isign +1 for types 1 and 3, -1 for type 2), axis order (n_modes in array order, x pairing with
axis 0), ``out=`` written in place, properties (type, dtype, dim, n_modes, n_trans), options
(the cufinufft_opts field names: gpu_method, gpu_device_id, gpu_stream, …) and exception types
(TypeError for dtypes, shapes and invalid options, ValueError for n_modes, RuntimeError when
the library fails). Arrays: cupy arrays, torch CUDA tensors, any __cuda_array_interface__
producer; outputs are made in the framework and on the device of the input, as cufinufft does.

Beyond cufinufft: host arrays (numpy, torch CPU tensors) are accepted too and come back as host
arrays, computed on the GPU when there is one, else on fieldft's CPU backend. docs/python.md
lists the differences that remain.
"""

from __future__ import annotations

import collections.abc
import functools
import math
import numbers
import operator

import numpy as np

from ... import _arrays, _core
from ..._engine import Engine, c_int_capped
from ..._plan import set_stream
from .._common import MAX_COMPAT_EPS, PointsNotSetError, check_dtype, contiguous_or_warn

__all__ = ["nufft1d1", "nufft1d2", "nufft1d3", "nufft2d1", "nufft2d2", "nufft2d3", "nufft3d1", "nufft3d2",
           "nufft3d3", "Plan"]
__version__ = "2.5.1"

# cufinufft_opts fields. Used: upsampfac, gpu_method (0 auto, 1 point-driven, 2 shared-memory
# subproblems, 3 output-driven), gpu_binsize{x,y,z} (x fastest; <= 0 automatic),
# gpu_maxbatchsize, gpu_device_id, gpu_stream, modeord, gpu_spreadinterponly (types 1 and 2:
# only spread onto / interpolate from the n_modes grid with the kernel that eps and upsampfac
# choose; fieldft's Plan option spread_interp_only). Accepted and ignored: gpu_sort (fieldft
# always sorts), gpu_obinsize*, gpu_maxsubprobsize, gpu_kerevalmeth, gpu_np, debug.
_FIELDS = ("upsampfac", "gpu_method", "gpu_sort", "gpu_binsizex", "gpu_binsizey", "gpu_binsizez", "gpu_obinsizex",
           "gpu_obinsizey", "gpu_obinsizez", "gpu_maxsubprobsize", "gpu_kerevalmeth", "gpu_spreadinterponly",
           "gpu_maxbatchsize", "gpu_device_id", "gpu_stream", "modeord", "gpu_np", "debug")
_METHODS = {0: "auto", 1: "nupts", 2: "subproblem", 3: "output"}


@functools.lru_cache(maxsize=None)
def _have_gpu() -> bool:
    return bool(_core.build_info()["cuda"] and _core.cuda_devices())


def _options(kwargs, nufft_type) -> "_core.Options":
    values = {}
    for k, v in kwargs.items():
        if k in ("fftw_lock_fun", "fftw_unlock_fun", "fftw_lock_data"):
            raise TypeError(f"Invalid option '{k}': FFTW locks are not exposed in Python")
        if k not in _FIELDS:
            raise TypeError(f"Invalid option '{k}'")
        if k == "gpu_stream":
            values[k] = v
        else:
            try:  # C int / double fields: reject what ctypes would reject
                values[k] = float(v) if k == "upsampfac" else operator.index(v)
            except TypeError:
                raise TypeError(f"option '{k}' must be {'a float' if k == 'upsampfac' else 'an int'}, "
                                f"got {type(v).__name__}") from None
    method = values.get("gpu_method", 0)
    if method not in _METHODS:
        raise RuntimeError(f"Error creating plan: gpu_method must be 0, 1, 2 or 3, got {method}")
    o = _core.Options()
    # The GPU when there is one; else the CPU backend (an extension: cufinufft needs a GPU), where
    # the GPU spreading method does not apply.
    o.backend = "cuda" if _have_gpu() else "cpu"
    o.method = _METHODS[method] if o.backend == "cuda" else "auto"
    o.upsampfac = values.get("upsampfac", 0.0)
    o.spread_interp_only = bool(values.get("gpu_spreadinterponly", 0)) and nufft_type in (1, 2)
    o.modeord = values.get("modeord", 0)
    o.max_batch = c_int_capped(max(values.get("gpu_maxbatchsize", 0), 0), "gpu_maxbatchsize")
    o.device = values.get("gpu_device_id", 0)
    o.bin_size = [max(values.get(f"gpu_binsize{a}", 0), 0) for a in "xyz"]
    set_stream(o, values.get("gpu_stream"))
    return o


def _ensure(x, name, dtype, output=False):
    """cufinufft's _ensure_array_type: None passes, wrong dtype is a TypeError, a non-C input is
    copied with a warning, a non-C output is a TypeError."""
    if x is None:
        return None
    info = _arrays.inspect(x, name)
    check_dtype(info, name, dtype)
    if not info.c_contiguous and output:
        raise TypeError(f"Argument `{name}` does not satisfy the following requirement: C")
    if not info.c_contiguous and info.framework == "cuda":  # no generic way to copy it
        raise TypeError(f"Argument `{name}` does not satisfy the following requirement: C")
    return contiguous_or_warn(info, name)


def _valid_pts(a, b, c, dim, names):
    """cufinufft's _ensure_valid_pts (TypeError)."""
    if a is None or len(a.shape) != 1:
        raise TypeError(f"Argument `{names[0]}` must be a vector")
    for d, (v, name) in enumerate(((b, names[1]), (c, names[2])), start=2):
        if dim >= d and (v is None or v.shape != a.shape):
            raise TypeError(f"Argument `{name}` must be of shape {a.shape}")
        if dim < d and v is not None and v.size > 0:
            raise TypeError(f"Plan dimension is {dim}, but `{name}` was specified")


class Plan:
    """A NUFFT plan with cufinufft's interface (see cufinufft.Plan): make it, setpts, execute.

    Plan(nufft_type, n_modes, n_trans=1, eps=1e-6, isign=None, dtype="complex64", **kwargs)
    """

    def __init__(self, nufft_type, n_modes, n_trans=1, eps=1e-6, isign=None, dtype="complex64", **kwargs):
        if isign is None:
            isign = -1 if nufft_type == 2 else +1
        self._dtype = np.dtype(dtype)
        if self._dtype not in (np.complex64, np.complex128):
            raise TypeError("Expected complex64 or complex128.")
        self._real_dtype = _arrays.real_dtype_of(self._dtype)
        if nufft_type == 3:
            if not isinstance(n_modes, numbers.Integral):
                raise ValueError("For a type 3 plan, n_modes_or_dim must be a single number, the dimension")
            dim = int(n_modes)
            n_modes = (1,) * dim
        else:
            if isinstance(n_modes, numbers.Integral):
                n_modes = (n_modes,)
            elif isinstance(n_modes, collections.abc.Iterable):
                n_modes = tuple(n_modes)
            else:
                raise ValueError(f"Invalid n_modes '{n_modes}'")
            dim = len(n_modes)
        if dim not in (1, 2, 3):
            raise ValueError("Only dimensions 1, 2, and 3 supported")
        self._dim = dim
        self._type = nufft_type
        self._isign = isign
        self._eps = float(eps)
        self._n_modes = n_modes
        self._n_trans = n_trans
        options = _options(kwargs, nufft_type)
        try:
            if nufft_type not in (1, 2, 3):
                raise _core.InvalidArgumentError(f"nufft_type must be 1, 2 or 3, got {nufft_type}")
            self._engine = Engine(int(nufft_type), dim, None if nufft_type == 3 else tuple(int(n) for n in n_modes),
                                  int(n_trans), min(self._eps, MAX_COMPAT_EPS), 1 if isign >= 0 else -1, self._dtype,
                                  options)
        except _core.Error as e:
            raise RuntimeError(f"Error creating plan. ({e})") from e

    @property
    def type(self):
        return self._type

    @property
    def dtype(self):
        return self._dtype

    @property
    def dim(self):
        return self._dim

    @property
    def n_modes(self):
        return self._n_modes

    @property
    def n_trans(self):
        return self._n_trans

    def setpts(self, x, y=None, z=None, s=None, t=None, u=None):
        """Sets the M non-uniform points (x, y, z by dimension) and, for type 3, the N targets
        (s, t, u). The arrays are copied (sorted) by the plan: they may be freed afterwards."""
        _x, _y, _z = (_ensure(v, n, self._real_dtype) for v, n in ((x, "x"), (y, "y"), (z, "z")))
        _valid_pts(_x, _y, _z, self._dim, "xyz")
        points = [_x, _y, _z][:self._dim]
        targets = None
        if self._type == 3:
            _s, _t, _u = (_ensure(v, n, self._real_dtype) for v, n in ((s, "s"), (t, "t"), (u, "u")))
            _valid_pts(_s, _t, _u, self._dim, "stu")
            targets = [_s, _t, _u][:self._dim]
        e = self._engine
        try:
            for info in points + (targets or []):
                if info.device != points[0].device:
                    raise _core.InvalidArgumentError("all coordinates must be in the same place")
                e.check_location(info, "points")
            e.set_points(points, targets)
        except (_core.Error, ValueError) as err:
            raise RuntimeError(f"Error setting non-uniform points. ({err})") from err
        self._nj = e.nj
        self._nk = e.nk

    def execute(self, data, out=None):
        """Type 1 and 3: data = strengths (n_trans, M); type 2: data = modes (n_trans, *n_modes).
        Returns the output, which is `out` when given."""
        _data = _ensure(data, "data", self._dtype)
        _out = _ensure(out, "out", self._dtype, output=True)
        if not hasattr(self, "_nj"):
            raise PointsNotSetError("Plan.setpts must be called before execute")
        if self._type == 1:
            req_data, req_out = (self._n_trans, self._nj), tuple(self._n_modes)
        elif self._type == 2:
            req_data, req_out = (self._n_trans, *self._n_modes), (self._nj,)
        else:
            req_data, req_out = (self._n_trans, self._nj), (self._nk,)
        if _data.shape != req_data and math.prod(_data.shape) != math.prod(req_data):
            raise TypeError(f"Argument `data` must be of shape {req_data}")
        batch = _data.shape[:-1] if self._type in (1, 3) else _data.shape[:len(_data.shape) - self._dim]
        req_out = tuple(batch) + req_out
        if _out is None:
            _out = _arrays.empty_like(_data, req_out, self._dtype)
        elif _out.shape != req_out:
            raise TypeError(f"Argument `out` must be of shape {req_out}")
        # cufinufft would write n_trans outputs whatever the batch shape says; refuse instead.
        if _out.size != self._n_trans * math.prod(req_out[len(batch):]):
            raise TypeError(f"Argument `data` must be of shape {req_data}")
        try:
            for info, name in ((_data, "data"), (_out, "out")):
                self._engine.check_location(info, name)
            if _data.device != _out.device:
                raise _core.InvalidArgumentError(f"`out` is in {_out.where()} but `data` is in {_data.where()}")
            self._engine.run(_data, _out, adjoint=False)
        except (_core.Error, ValueError) as err:
            raise RuntimeError(f"Error executing plan. ({err})") from err
        return _out.obj


def _invoke(dim, nufft_type, x, y, z, data, s, t, u, out, isign, eps, n_modes, kwargs):
    info = _arrays.inspect(data, "data")
    n_trans = 1 if len(info.shape) == (1 if nufft_type in (1, 3) else dim) else info.shape[0]
    if nufft_type == 1 and out is not None:
        n_modes = _arrays.inspect(out, "out").shape[-dim:]
    if nufft_type == 2:
        n_modes = info.shape[-dim:]
    plan = Plan(nufft_type, dim if nufft_type == 3 else n_modes, n_trans, eps, isign, info.dtype, **kwargs)
    plan.setpts(x, y, z, s, t, u)
    if out is None:
        return plan.execute(data)
    plan.execute(data, out=out)
    return out


def nufft1d1(x, data, n_modes=None, out=None, eps=1e-6, isign=1, **kwargs):
    """1D type 1 (non-uniform to uniform): f[k] = sum_j c[j] exp(+/-i k x[j])."""
    return _invoke(1, 1, x, None, None, data, None, None, None, out, isign, eps, n_modes, kwargs)


def nufft1d2(x, data, out=None, eps=1e-6, isign=-1, **kwargs):
    """1D type 2 (uniform to non-uniform): c[j] = sum_k f[k] exp(+/-i k x[j])."""
    return _invoke(1, 2, x, None, None, data, None, None, None, out, isign, eps, None, kwargs)


def nufft1d3(x, data, s, out=None, eps=1e-6, isign=1, **kwargs):
    """1D type 3: f[k] = sum_j c[j] exp(+/-i s[k] x[j])."""
    return _invoke(1, 3, x, None, None, data, s, None, None, out, isign, eps, None, kwargs)


def nufft2d1(x, y, data, n_modes=None, out=None, eps=1e-6, isign=1, **kwargs):
    """2D type 1: f[k1, k2] = sum_j c[j] exp(+/-i (k1 x[j] + k2 y[j]))."""
    return _invoke(2, 1, x, y, None, data, None, None, None, out, isign, eps, n_modes, kwargs)


def nufft2d2(x, y, data, out=None, eps=1e-6, isign=-1, **kwargs):
    """2D type 2: c[j] = sum_{k1, k2} f[k1, k2] exp(+/-i (k1 x[j] + k2 y[j]))."""
    return _invoke(2, 2, x, y, None, data, None, None, None, out, isign, eps, None, kwargs)


def nufft2d3(x, y, data, s, t, out=None, eps=1e-6, isign=1, **kwargs):
    """2D type 3: f[k] = sum_j c[j] exp(+/-i (s[k] x[j] + t[k] y[j]))."""
    return _invoke(2, 3, x, y, None, data, s, t, None, out, isign, eps, None, kwargs)


def nufft3d1(x, y, z, data, n_modes=None, out=None, eps=1e-6, isign=1, **kwargs):
    """3D type 1: f[k1, k2, k3] = sum_j c[j] exp(+/-i (k1 x[j] + k2 y[j] + k3 z[j]))."""
    return _invoke(3, 1, x, y, z, data, None, None, None, out, isign, eps, n_modes, kwargs)


def nufft3d2(x, y, z, data, out=None, eps=1e-6, isign=-1, **kwargs):
    """3D type 2: c[j] = sum_k f[k1, k2, k3] exp(+/-i (k1 x[j] + k2 y[j] + k3 z[j]))."""
    return _invoke(3, 2, x, y, z, data, None, None, None, out, isign, eps, None, kwargs)


def nufft3d3(x, y, z, data, s, t, u, out=None, eps=1e-6, isign=1, **kwargs):
    """3D type 3: f[k] = sum_j c[j] exp(+/-i (s[k] x[j] + t[k] y[j] + u[k] z[j]))."""
    return _invoke(3, 3, x, y, z, data, s, t, u, out, isign, eps, None, kwargs)
