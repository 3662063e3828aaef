"""fieldft.mri.density_compensation and the Plan option spread_interp_only from Python.

The C++ suite (tests/mri/density_test.cpp, tests/nufft/spread_interp_test.cpp) checks the
numbers; these tests check the Python layer: the k column order, dtypes, the scale a gridding
reconstruction with NufftEncoding needs, options and errors.
"""

import numpy as np
import pytest

import fieldft
from support import rel_err


def radial(n, spokes, offset=0.0):
    """(spokes * 2n, 2) radial samples at angles pi (s + offset) / spokes, columns (ky, kx), radii
    (i - n)/2 in [-n/2, n/2)."""
    a = np.pi * (np.arange(spokes) + offset) / spokes
    r = 0.5 * (np.arange(2 * n) - n)
    ky = np.sin(a)[:, None] * r[None, :]
    kx = np.cos(a)[:, None] * r[None, :]
    return np.stack([ky.ravel(), kx.ravel()], axis=1)


def phantom(n):
    y, x = np.meshgrid((np.arange(n) - n // 2) / n, (np.arange(n) - n // 2) / n, indexing="ij")
    return np.exp(-(x * x + y * y) / (2 * 0.12**2)) + 0.6 * np.exp(-((x - 0.12)**2 + (y + 0.08)**2) / (2 * 0.05**2))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_weights_grow_with_the_radius_and_grid_a_phantom(dtype):
    n, spokes = 64, 101
    enc = fieldft.mri.Encoding((n, n), radial(n, spokes))
    w = fieldft.mri.density_compensation(enc, dtype=dtype)
    assert w.shape == (enc.num_samples,) and w.dtype == dtype
    per_spoke = w.reshape(spokes, 2 * n).mean(axis=0)
    # |k| = 16 against |k| = 8: weights grow as |k| (the C++ test: 2.0002)
    assert abs(per_spoke[n + 32] / per_spoke[n + 16] - 2) < 0.02
    # gridding A^H (w * A x) reproduces a smooth phantom (the C++ test: 1.2% NRMSE)
    cdtype = np.complex64 if dtype == np.float32 else np.complex128
    a = fieldft.mri.NufftEncoding(enc, eps=1e-6 if dtype == np.float64 else 1e-5, dtype=cdtype)
    x = phantom(n).astype(cdtype)
    assert rel_err(a.H(w * a(x)), x) < 0.03


def test_cartesian_weights_are_one_over_the_voxels_and_k_columns_follow_the_axes():
    ny, nx = 16, 24
    ky, kx = np.meshgrid(np.arange(ny) - ny // 2, np.arange(nx) - nx // 2, indexing="ij")
    k = np.stack([ky.ravel(), kx.ravel()], axis=1).astype(float)
    w = fieldft.mri.density_compensation(fieldft.mri.Encoding((ny, nx), k), eps=1e-4, dtype="complex128")
    assert w.dtype == np.float64
    # constant to 5·eps per dimension (tests/mri/density_test.cpp); the columns swapped would put
    # 24 samples on a 16-cycle axis and break the lattice
    assert np.max(np.abs(w * ny * nx - 1)) < 1e-3


def test_options_and_errors():
    enc = fieldft.mri.Encoding((16, 16), radial(16, 25))
    base = fieldft.mri.density_compensation(enc)
    more = fieldft.mri.density_compensation(enc, iterations=40, oversampling=1.5, eps=1e-2, method="nupts")
    assert more.shape == base.shape and not np.array_equal(more, base)
    with pytest.raises(fieldft.InvalidArgumentError, match="iterations"):
        fieldft.mri.density_compensation(enc, iterations=0)
    with pytest.raises(fieldft.InvalidArgumentError, match="oversampling"):
        fieldft.mri.density_compensation(enc, oversampling=3.0)
    with pytest.raises(fieldft.InvalidArgumentError, match="no samples"):
        fieldft.mri.density_compensation(fieldft.mri.Encoding((8, 8), np.zeros((0, 2))))
    with pytest.raises(TypeError, match="unknown option"):
        fieldft.mri.density_compensation(enc, upsampfac=2.0)
    with pytest.raises(TypeError, match="float32 or float64"):
        fieldft.mri.density_compensation(enc, dtype=np.int32)


def test_spread_interp_only_plan():
    rng = np.random.default_rng(7)
    m, n = 50, (20, 24)
    pts = [rng.uniform(-np.pi, np.pi, m) for _ in n]
    c = (rng.standard_normal(m) + 1j * rng.standard_normal(m)).astype(np.complex128)
    plan = fieldft.Plan(1, n, eps=1e-6, dtype="complex128", backend="cpu", spread_interp_only=True)
    assert plan.spread_interp_only and plan.fine_grid == n
    plan.setpts(*pts)
    grid = plan.execute(c)
    assert grid.shape == n
    # a single point of unit strength spreads the kernel's lattice sum, about ∫ψ per axis, and
    # the total mass is Σ c_j times it (sum over the grid of each footprint)
    one = fieldft.Plan(1, n, eps=1e-6, dtype="complex128", backend="cpu", spread_interp_only=True)
    one.setpts(*[p[:1] for p in pts])
    mass = one.execute(np.ones(1, np.complex128)).sum()
    assert abs(grid.sum() / (c.sum() * mass) - 1) < 1e-3
    # interpolation is the adjoint of spreading
    f = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(np.complex128)
    assert abs(np.vdot(f, grid) - np.vdot(plan.execute_adjoint(f), c)) < 1e-12 * np.linalg.norm(f) * np.linalg.norm(grid)
    with pytest.raises(fieldft.InvalidArgumentError, match="spread_interp_only"):
        fieldft.Plan(3, 2, eps=1e-6, spread_interp_only=True)


@pytest.mark.gpu
def test_gpu_matches_cpu():
    enc = fieldft.mri.Encoding((64, 64), radial(64, 101, 0.3))
    cpu = fieldft.mri.density_compensation(enc, dtype=np.float64)
    gpu = fieldft.mri.density_compensation(enc, dtype=np.float64, device="cuda:0")
    assert isinstance(gpu, np.ndarray)
    # the C++ parity test's bound for double
    assert np.max(np.abs(gpu - cpu)) < 1e-11 * np.max(np.abs(cpu))
