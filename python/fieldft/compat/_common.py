"""Pieces shared by the finufft and cufinufft compatibility modules."""

from __future__ import annotations

import warnings

import numpy as np

from .. import _arrays, _core
from .._engine import Engine, min_eps

# finufft and cufinufft take any eps above 1 (their loosest kernel); fieldft's own Plan refuses
# it, so the compatibility layers plan with eps = 1 instead.
MAX_COMPAT_EPS = 1.0


class PointsNotSetError(AttributeError, RuntimeError):
    """execute before setpts. finufft and cufinufft fail there with an AttributeError (the
    number of points is not set yet), so a program may catch that; a RuntimeError is what the
    failure means. This class is both."""


def make_engine_with_eps_fallback(nufft_type, dim, n_modes, n_trans, eps, isign, dtype, options, warning):
    """An Engine, where an eps below what the precision can deliver is raised to the smallest
    eps the plan accepts, with `warning` (message, category) issued once — finufft's behaviour
    (it warns and uses its most accurate kernel) instead of fieldft's EpsTooSmallError."""
    floor = min_eps(dtype)
    eps = min(float(eps), MAX_COMPAT_EPS)
    warned = False
    if not eps > 0 or eps < floor:  # also catches eps <= 0, which finufft treats the same way
        warnings.warn(*warning, stacklevel=3)
        warned = True
        eps = floor
    while True:
        try:
            return Engine(nufft_type, dim, n_modes, n_trans, eps, isign, dtype, options)
        except _core.EpsTooSmallError:
            # The kernel or the rounding floor of this grid needs a larger eps: go up in steps of
            # 2 (a few tries at most; planning is cheap before set_points).
            if eps >= 1e-2:
                raise
            if not warned:
                warnings.warn(*warning, stacklevel=3)
                warned = True
            eps *= 2


def check_dtype(info, name, dtype):
    if info.dtype != dtype:
        raise TypeError(f"Argument `{name}` does not have the correct dtype: {info.dtype} was given, but "
                        f"{np.dtype(dtype)} was expected.")


def contiguous_or_warn(info, name):
    """Both packages copy a non-C-contiguous input with this warning."""
    if info.c_contiguous:
        return info
    warnings.warn(f"Argument `{name}` does not satisfy the following requirement: C. Copying array "
                  "(this may reduce performance)", stacklevel=4)
    return _arrays.contiguous_copy(info, name)
