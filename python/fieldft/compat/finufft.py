"""Drop-in replacement for the ``finufft`` 2.5 Python package, computed by fieldft.

    import fieldft.compat.finufft as finufft

Same names (Plan, nufft1d1 … nufft3d3), signatures and defaults (dtype complex128, eps 1e-6,
isign +1 for types 1 and 3 and -1 for type 2), axis order (n_modes in array order, x pairing
with axis 0), ``out=`` written in place and returned, properties (type, dtype, dim, n_modes,
n_trans), options (the finufft_opts field names), warnings (unknown option, eps too small,
non-contiguous input copied) and exception types (RuntimeError for invalid arguments and
shapes, TypeError for dtypes and non-contiguous or read-only outputs). It runs on fieldft's
CPU backend, as finufft does. docs/python.md lists the differences that remain.
"""

from __future__ import annotations

import math
import numbers
import operator
import warnings

import numpy as np

from .. import _arrays, _core
from .._engine import c_int_capped
from ._common import PointsNotSetError, check_dtype, contiguous_or_warn, make_engine_with_eps_fallback

__all__ = ["nufft1d1", "nufft1d2", "nufft1d3", "nufft2d1", "nufft2d2", "nufft2d3", "nufft3d1", "nufft3d2",
           "nufft3d3", "Plan"]
__version__ = "2.5.1"

# finufft_opts fields and their defaults (finufft_default_opts). How fieldft uses them:
# modeord, nthreads, upsampfac, maxbatchsize: same meaning; fftw: FFTW_ESTIMATE (64) plans by
# estimate, any other flag by measure; spreadinterponly=1 (types 1 and 2; ignored by type 3, as
# finufft does): the plan only spreads onto / interpolates from the n_modes grid with the kernel
# that eps and upsampfac choose (fieldft's Plan option spread_interp_only); the spread_* tuning
# fields, debug and showwarn: accepted and ignored (fieldft picks its own spreading).
_DEFAULT_OPTS = {
    "modeord": 0, "spreadinterponly": 0, "debug": 0, "spread_debug": 0, "showwarn": 1, "nthreads": 0,
    "fftw": 64, "spread_sort": 2, "spread_kerevalmeth": 1, "spread_kerpad": 1, "upsampfac": 0.0,
    "spread_thread": 0, "maxbatchsize": 0, "spread_nthr_atomic": -1, "spread_max_sp_size": 0,
    "spread_kerformula": 0,
}
_FFTW_ESTIMATE = 64
_EPS_WARNING = ("FINUFFT eps tolerance too small to achieve", Warning)


def _set_opts(kwargs) -> dict:
    opts = dict(_DEFAULT_OPTS)
    with warnings.catch_warnings():
        warnings.simplefilter("always")  # finufft repeats this warning on every plan
        for key, value in kwargs.items():
            if key in ("fftw_lock_fun", "fftw_unlock_fun", "fftw_lock_data"):
                raise TypeError(f"Invalid option '{key}': FFTW locks are not exposed in Python")
            if key not in opts:
                warnings.warn(f'Warning: finufft_opts does not have attribute "{key}"', Warning, stacklevel=4)
                continue
            try:  # the fields are C int / double: reject what ctypes would reject
                opts[key] = float(value) if key == "upsampfac" else operator.index(value)
            except TypeError:
                kind = "float" if key == "upsampfac" else "int"
                raise TypeError(f"option '{key}' must be an {kind}, got {type(value).__name__}") from None
    return opts


def _options(opts, nufft_type) -> "_core.Options":
    o = _core.Options()
    o.backend = "cpu"
    o.spread_interp_only = bool(opts["spreadinterponly"]) and nufft_type in (1, 2)
    o.modeord = opts["modeord"]
    o.nthreads = c_int_capped(max(opts["nthreads"], 0), "nthreads")  # finufft: <= 0 means all
    o.upsampfac = opts["upsampfac"]
    o.max_batch = c_int_capped(max(opts["maxbatchsize"], 0), "maxbatchsize")
    o.fft_planning = "estimate" if opts["fftw"] == _FFTW_ESTIMATE else "measure"
    return o


def _runtime_error(e: Exception) -> RuntimeError:
    return RuntimeError(f"FINUFFT (fieldft): {e}")


class Plan:
    """A NUFFT plan with finufft's interface (see finufft.Plan): make it, setpts, execute.

    Plan(nufft_type, n_modes_or_dim, n_trans=1, eps=1e-6, isign=None, dtype='complex128', **kwargs)
    """

    def __init__(self, nufft_type, n_modes_or_dim, n_trans=1, eps=1e-6, isign=None, dtype='complex128', **kwargs):
        if isign is None:
            isign = -1 if nufft_type == 2 else 1
        opts = _set_opts(kwargs)
        dtype = np.dtype(dtype)
        if dtype not in (np.complex64, np.complex128):
            raise RuntimeError('FINUFFT dtype(precision type) must be single or double')
        if nufft_type == 3:
            npdim = np.asarray(n_modes_or_dim, dtype=np.int64)
            if npdim.size != 1:
                raise RuntimeError('FINUFFT type 3 plan n_modes_or_dim must be one number, the dimension')
            dim = int(npdim.reshape(-1)[0])
            modes = None
        else:
            npmodes = np.asarray(n_modes_or_dim, dtype=np.int64).reshape(-1)
            if not 1 <= npmodes.size <= 3:
                raise RuntimeError("FINUFFT n_modes dimension must be 1, 2, or 3")
            dim = int(npmodes.size)
            modes = tuple(int(n) for n in npmodes)
        if nufft_type not in (1, 2, 3):
            raise RuntimeError('FINUFFT transform type invalid')
        if not 1 <= dim <= 3:
            raise RuntimeError('FINUFFT number of dimensions dim invalid')
        if n_trans < 1:
            raise RuntimeError('FINUFFT number of transforms ntrans invalid')
        try:
            self._engine = make_engine_with_eps_fallback(int(nufft_type), dim, modes, int(n_trans), eps,
                                                         1 if isign >= 0 else -1, dtype, _options(opts, nufft_type),
                                                         _EPS_WARNING)
        except _core.Error as e:
            raise _runtime_error(e) from e
        self._type = int(nufft_type)
        self._dim = dim
        # finufft reports the mode counts in the library's order (fastest first), which is the
        # reverse of the array order given; (1,)*dim for type 3.
        self._n_modes = tuple(reversed(modes)) if modes is not None else (1,) * dim
        self._n_trans = int(n_trans)
        self._dtype = dtype

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

    def setpts(self, x=None, y=None, z=None, s=None, t=None, u=None):
        """Sets the non-uniform points x (and y, z by dimension) and, for type 3, the targets
        s (and t, u)."""
        real = _arrays.real_dtype_of(self._dtype)
        arrays = {}
        for name, v in zip("xyzstu", (x, y, z, s, t, u)):
            if v is None:
                arrays[name] = None
                continue
            info = _arrays.inspect(v, name)
            check_dtype(info, name, real)
            arrays[name] = contiguous_or_warn(info, name)
        nj, nk = _valid_setpts(self._type, self._dim, arrays)
        e = self._engine
        points = [arrays[n] for n in "xyz"[:self._dim]]
        targets = [arrays[n] for n in "stu"[:self._dim]] if self._type == 3 else None
        for info, name in zip(points + (targets or []), "xyzstu"[:self._dim] + "stu"[:self._dim]):
            if info.on_device:
                raise RuntimeError(f"FINUFFT `{name}` must be in host memory (finufft runs on the CPU; "
                                   "use fieldft.compat.cufinufft for GPU arrays)")
        try:
            e.set_points(points, targets)
        except _core.Error as err:
            raise _runtime_error(err) from err
        self._nj, self._nk = nj, nk

    def execute(self, data, out=None):
        """Type 1 and 3: data = strengths c; type 2: data = modes f. Returns the output, which
        is `out` when given."""
        return self._run(data, out, adjoint=False)

    def execute_adjoint(self, data, out=None):
        """The adjoint of execute (opposite direction and sign)."""
        return self._run(data, out, adjoint=True)

    def _run(self, data, out, adjoint):
        d = _arrays.inspect(data, "data")
        check_dtype(d, "data", self._dtype)
        d = contiguous_or_warn(d, "data")
        o = None
        if out is not None:
            o = _arrays.inspect(out, "out")
            check_dtype(o, "out", self._dtype)
            if not o.c_contiguous:
                raise TypeError("Argument `out` does not satisfy the following requirement: C")
            if not o.writable:
                raise TypeError("Argument `out` does not satisfy the following requirement: W")
        if not hasattr(self, "_nj"):
            raise PointsNotSetError("Plan.setpts must be called before execute")
        tp, dim, n_trans = self._type, self._dim, self._n_trans
        modes = tuple(reversed(self._n_modes))  # array order
        nj, nk = self._nj, self._nk
        # What each side holds: "c" point values of the given length, "f" a mode array, "t" type 3
        # target values (finufft checks them as an f array); checked as finufft does, in its
        # order and words: the input, then `out` when given.
        if tp == 3:
            (in_kind, in_len), (out_kind, out_len) = (("c", nk), ("c", nj)) if adjoint else (("c", nj), ("t", nk))
        else:
            sides = (("c", nj), ("f", None)) if tp == 1 else (("f", None), ("c", nj))
            (in_kind, in_len), (out_kind, out_len) = reversed(sides) if adjoint else sides
        _valid_shape(in_kind, d.shape, in_len, n_trans, dim, modes)
        if o is not None:
            _valid_shape(out_kind, o.shape, out_len, n_trans, dim, modes)
        else:  # the output's leading axes are the input's, as finufft allocates it
            batch = d.shape[:len(d.shape) - dim] if in_kind == "f" else d.shape[:-1]
            tail = modes if out_kind == "f" else (out_len,)
            o = _arrays.empty_like(d, tuple(batch) + tuple(tail), self._dtype)
        if d.on_device or o.on_device:
            raise RuntimeError("FINUFFT data must be in host memory (use fieldft.compat.cufinufft for GPU arrays)")
        try:
            self._engine.run(d, o, adjoint)
        except _core.Error as err:
            raise _runtime_error(err) from err
        return o.obj


def _ndim(info):
    return -1 if info is None else len(info.shape)


def _valid_setpts(tp, dim, a):
    """finufft's checks of the point arrays (RuntimeError); returns (nj, nk)."""
    def vector(name):
        if _ndim(a[name]) != 1:
            raise RuntimeError(f'FINUFFT {name} must be a vector')
        return a[name].shape[0]

    nj = vector("x")
    nk = vector("s") if tp == 3 else 0
    for d in range(1, dim):
        name, tname = "xyz"[d], "stu"[d]
        if vector(name) != nj:
            raise RuntimeError(f'FINUFFT {name} must have same length as x')
        if tp == 3 and vector(tname) != nk:
            raise RuntimeError(f'FINUFFT {tname} must have same length as s')
    return nj, nk


def _valid_shape(kind, shape, length, n_trans, dim, modes):
    if kind == "c":
        _valid_cshape(shape, length, n_trans)
    else:
        _valid_fshape(shape, n_trans, dim, modes if kind == "f" else None, length)


def _valid_cshape(shape, length, n_trans):
    """finufft's check of an array of point values (length `length`), in its order and words."""
    if n_trans == 1:
        if len(shape) != 1 and len(shape) != 2:
            raise RuntimeError('FINUFFT c.ndim must be 1 or 2 if n_trans == 1')
        if shape[-1] != length or math.prod(shape) != length:
            raise RuntimeError('FINUFFT c.size must be same as x.size if n_trans == 1')
    if n_trans > 1:
        if len(shape) != 2:
            raise RuntimeError('FINUFFT c.ndim must be 2 if n_trans > 1')
        if shape[1] != length or shape[0] != n_trans:
            raise RuntimeError('FINUFFT c.shape must be (n_trans, x.size) if n_trans > 1')


def _valid_fshape(shape, n_trans, dim, modes, nk=None):
    """finufft's check of an output or mode array, in its order and words: type 3 targets when
    modes is None (nk of them), else a mode array of `modes` (array order)."""
    if modes is None:
        if n_trans == 1:
            if len(shape) != 1 and len(shape) != 2:
                raise RuntimeError('FINUFFT f.ndim must be 1 or 2 for type 3 if n_trans == 1')
            if shape[-1] != nk or math.prod(shape) != nk:
                raise RuntimeError('FINUFFT f.size of must be nk if n_trans == 1')  # sic, finufft's words
        if n_trans > 1:
            if len(shape) != 2:
                raise RuntimeError('FINUFFT f.ndim must be 2 for type 3 if n_trans > 1')
            if shape[1] != nk or shape[0] != n_trans:
                raise RuntimeError('FINUFFT f.shape must be (n_trans, nk) if n_trans > 1')
        return
    if n_trans == 1:
        if len(shape) != dim and len(shape) != dim + 1:
            raise RuntimeError('FINUFFT f.ndim must be same as the problem dimension or the problem dimension + 1 '
                               'for type 1 or 2 if n_trans == 1')
        if len(shape) == dim + 1 and shape[0] != n_trans:
            raise RuntimeError('FINUFFT f.shape[0] must be 1 for type 1 or 2 if n_trans == 1 and '
                               'len(f.shape) == dim+1')
    if n_trans > 1:
        if len(shape) != dim + 1:
            raise RuntimeError('FINUFFT f.ndim must be same as the problem dimension + 1 for type 1 or 2 if '
                               'n_trans > 1')
        if shape[0] != n_trans:
            raise RuntimeError('FINUFFT f.shape[0] must be n_trans for type 1 or 2 if n_trans > 1')
    for axis in range(1, dim + 1):  # the last axis first, as finufft compares ms, mt, mu
        if shape[-axis] != modes[-axis]:
            raise RuntimeError('FINUFFT f.shape is not consistent with n_modes')


# ---------------------------------------------------------------------------------------------
# One-call functions (finufft's "simple" interface)


def _ntrans_from(x, c):
    """n_trans = c.size / x.size, with finufft's checks."""
    xs = _arrays.inspect(x, "x").size
    ci = _arrays.inspect(c, "c")
    n_trans = ci.size // xs if xs else (ci.size if len(ci.shape) < 2 else ci.shape[0])
    if xs and n_trans * xs != ci.size:
        raise RuntimeError('FINUFFT c.size must be divisible by x.size')
    if xs:
        _valid_cshape(ci.shape, xs, max(n_trans, 1))
    return max(n_trans, 1)


def _ntrans_modes_from(dim, shape, n_trans_in, n_modes_in):
    if len(shape) == dim + 1:
        n_trans, n_modes = shape[0], tuple(shape[1:])
    elif len(shape) == dim:
        n_trans, n_modes = 1, tuple(shape)
    else:
        raise RuntimeError('FINUFFT type 1 output dimension or type 2 input dimension must be either dim '
                           '(n_trans==1) or dim+1 (n_trans>=1)')
    if n_trans_in is not None and n_trans != n_trans_in:
        raise RuntimeError('FINUFFT input n_trans and output n_trans do not match')
    if n_modes_in is not None and tuple(n_modes) != tuple(n_modes_in):
        raise RuntimeError('FINUFFT input n_modes and output n_modes do not match')
    return n_trans, n_modes


def _invoke(dim, tp, x, y, z, c, s, t, u, f, isign, eps, n_modes, kwargs):
    xi = _arrays.inspect(x, "x")
    if xi.dtype == np.float64:
        dtype = 'complex128'
    elif xi.dtype == np.float32:
        dtype = 'complex64'
    else:
        raise RuntimeError('FINUFFT x dtype should be float64 for double precision or float32 for single precision')
    if n_modes is not None:
        if not isinstance(n_modes, (tuple, numbers.Integral)):
            raise RuntimeError('FINUFFT input n_modes must be a tuple or an integer')
        if isinstance(n_modes, tuple):
            if len(n_modes) != dim:
                raise RuntimeError('FINUFFT input n_modes dimension does not match problem dimension')
            if not all(isinstance(n, numbers.Integral) for n in n_modes):
                raise RuntimeError('FINUFFT all elements of input n_modes must be integer')
        else:
            n_modes = (n_modes,) * dim
    if tp == 1:
        n_trans = _ntrans_from(x, c)
        if n_modes is None and f is None:
            raise RuntimeError('FINUFFT type 1 input must supply n_modes or output vector, or both')
        if f is not None:
            n_trans, n_modes = _ntrans_modes_from(dim, _arrays.inspect(f, "out").shape, n_trans, n_modes)
    elif tp == 2:
        n_trans, n_modes = _ntrans_modes_from(dim, _arrays.inspect(f, "f").shape, None, None)
    else:
        n_trans = _ntrans_from(x, c)
    plan = Plan(tp, dim if tp == 3 else n_modes, n_trans, eps, isign, dtype, **kwargs)
    plan.setpts(x, y, z, s, t, u)
    return plan.execute(c, f) if tp in (1, 3) else plan.execute(f, c)


def nufft1d1(x, c, n_modes=None, out=None, eps=1e-6, isign=1, **kwargs):
    """1D type 1 (non-uniform to uniform): f[k] = sum_j c[j] exp(+/-i k x[j])."""
    return _invoke(1, 1, x, None, None, c, None, None, None, out, isign, eps, n_modes, kwargs)


def nufft1d2(x, f, out=None, eps=1e-6, isign=-1, **kwargs):
    """1D type 2 (uniform to non-uniform): c[j] = sum_k f[k] exp(+/-i k x[j])."""
    return _invoke(1, 2, x, None, None, out, None, None, None, f, isign, eps, None, kwargs)


def nufft1d3(x, c, s, out=None, eps=1e-6, isign=1, **kwargs):
    """1D type 3 (non-uniform to non-uniform): f[k] = sum_j c[j] exp(+/-i s[k] x[j])."""
    return _invoke(1, 3, x, None, None, c, s, None, None, out, isign, eps, None, kwargs)


def nufft2d1(x, y, c, n_modes=None, out=None, eps=1e-6, isign=1, **kwargs):
    """2D type 1: f[k1, k2] = sum_j c[j] exp(+/-i (k1 x[j] + k2 y[j]))."""
    return _invoke(2, 1, x, y, None, c, None, None, None, out, isign, eps, n_modes, kwargs)


def nufft2d2(x, y, f, out=None, eps=1e-6, isign=-1, **kwargs):
    """2D type 2: c[j] = sum_{k1, k2} f[k1, k2] exp(+/-i (k1 x[j] + k2 y[j]))."""
    return _invoke(2, 2, x, y, None, out, None, None, None, f, isign, eps, None, kwargs)


def nufft2d3(x, y, c, s, t, out=None, eps=1e-6, isign=1, **kwargs):
    """2D type 3: f[k] = sum_j c[j] exp(+/-i (s[k] x[j] + t[k] y[j]))."""
    return _invoke(2, 3, x, y, None, c, s, t, None, out, isign, eps, None, kwargs)


def nufft3d1(x, y, z, c, n_modes=None, out=None, eps=1e-6, isign=1, **kwargs):
    """3D type 1: f[k1, k2, k3] = sum_j c[j] exp(+/-i (k1 x[j] + k2 y[j] + k3 z[j]))."""
    return _invoke(3, 1, x, y, z, c, None, None, None, out, isign, eps, n_modes, kwargs)


def nufft3d2(x, y, z, f, out=None, eps=1e-6, isign=-1, **kwargs):
    """3D type 2: c[j] = sum_k f[k1, k2, k3] exp(+/-i (k1 x[j] + k2 y[j] + k3 z[j]))."""
    return _invoke(3, 2, x, y, z, out, None, None, None, f, isign, eps, None, kwargs)


def nufft3d3(x, y, z, c, s, t, u, out=None, eps=1e-6, isign=1, **kwargs):
    """3D type 3: f[k] = sum_j c[j] exp(+/-i (s[k] x[j] + t[k] y[j] + u[k] z[j]))."""
    return _invoke(3, 3, x, y, z, c, s, t, u, out, isign, eps, None, kwargs)
