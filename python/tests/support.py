"""Helpers of the fieldft Python tests: direct-sum oracles, random data, GPU detection.

Tolerances. These tests check the Python layer (axis order, signs, batching, dtypes, memory,
frameworks), not the library's accuracy, which the C++ suite sweeps. They use eps = 1e-4
(complex64) / 1e-9 (complex128) and accept a relative l2 error up to 5*eps: the library meets
eps (tests/nufft), while any binding mistake (swapped axes, wrong sign, wrong mode order,
misplaced batch) gives an O(1) error, far above 5*eps.
"""

import math

import numpy as np
import fieldft

EPS = {np.complex64: 1e-4, np.complex128: 1e-9}
SLACK = 5.0


def have_gpu() -> bool:
    return bool(fieldft.build_info()["cuda"] and fieldft.cuda_devices())


def rel_err(got, want) -> float:
    got = np.asarray(got, dtype=np.complex128)
    want = np.asarray(want, dtype=np.complex128)
    return float(np.linalg.norm((got - want).ravel()) / np.linalg.norm(want.ravel()))


def mode_range(n: int) -> np.ndarray:
    """k in [-N/2, (N-1)/2], increasing (modeord 0)."""
    return np.arange(-(n // 2), (n - 1) // 2 + 1)


def direct_type1(points, c, n_modes, isign):
    """f[k1, ..., kd] = sum_j c[j] exp(isign i sum_d k_d x_d[j]); c (..., M) -> (..., *n_modes)."""
    points = [np.asarray(p, dtype=np.float64) for p in points]
    c = np.asarray(c, dtype=np.complex128)
    factors = [np.exp(isign * 1j * mode_range(n)[:, None] * p[None, :]) for n, p in zip(n_modes, points)]
    letters = "abc"[:len(points)]
    expr = ",".join(f"{l}j" for l in letters)
    return np.einsum(f"...j,{expr}->...{letters}", c, *factors)


def direct_type2(points, f, isign):
    """c[j] = sum_k f[k] exp(isign i sum_d k_d x_d[j]); f (..., *n_modes) -> (..., M)."""
    dim = len(points)
    points = [np.asarray(p, dtype=np.float64) for p in points]
    f = np.asarray(f, dtype=np.complex128)
    n_modes = f.shape[f.ndim - dim:]
    factors = [np.exp(isign * 1j * mode_range(n)[:, None] * p[None, :]) for n, p in zip(n_modes, points)]
    letters = "abc"[:dim]
    expr = ",".join(f"{l}j" for l in letters)
    return np.einsum(f"...{letters},{expr}->...j", f, *factors)


def direct_type3(points, c, targets, isign):
    """f[k] = sum_j c[j] exp(isign i sum_d s_d[k] x_d[j])."""
    phase = sum(np.outer(np.asarray(s, np.float64), np.asarray(x, np.float64)) for s, x in zip(targets, points))
    return np.asarray(c, np.complex128) @ np.exp(isign * 1j * phase).T


def random_points(rng, dim, m, dtype=np.float64, spread=math.pi):
    real = np.float32 if np.dtype(dtype) in (np.complex64, np.float32) else np.float64
    return [rng.uniform(-spread, spread, m).astype(real) for _ in range(dim)]


def random_complex(rng, shape, dtype):
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
