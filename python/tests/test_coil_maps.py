"""fieldft.mri.estimate_coil_maps: the maps of simulated multi-coil data match the true maps up to
a common per-voxel factor (the C++ tests, tests/mri/coil_maps_test.cpp, cover the methods in
depth; these check the Python face: shapes, dtypes, frameworks, options and errors)."""

import math

import numpy as np
import pytest

import fieldft
from fieldft import mri, op


def problem(n=32, coils=4, dtype=np.complex64):
    y0, x0 = np.meshgrid(np.arange(n) - n // 2, np.arange(n) - n // 2, indexing="ij")
    obj = np.exp(-((x0 / (0.35 * n)) ** 2 + (y0 / (0.3 * n)) ** 2) ** 4) * (1 + 0.3 * np.cos(x0 / 5.0))
    maps = np.stack([np.exp(-((x0 - 0.6 * n * math.cos(a)) ** 2 + (y0 - 0.6 * n * math.sin(a)) ** 2) / (0.5 * n) ** 2)
                     * np.exp(1j * (0.05 * x0 * math.cos(a) + a)) for a in 2 * np.pi * np.arange(coils) / coils])
    k = np.stack(np.meshgrid(np.arange(n) - n // 2, np.arange(n) - n // 2, indexing="ij"), -1).reshape(-1, 2)
    enc = mri.Encoding((n, n), k.astype(np.float64))
    e = mri.DftEncoding(enc, batch=coils, dtype=np.complex128) @ op.diag_expand(maps, dtype=np.complex128)
    y = e(obj.astype(np.complex128)).astype(dtype)
    return enc, y, maps, obj


def misfit(est, true, inside):
    """max over `inside` of 1 − |⟨S_est, S_true⟩|² / (‖S_est‖² ‖S_true‖²): 0 when the maps agree
    up to one complex factor per voxel."""
    dot = np.abs((np.conj(est) * true).sum(0)) ** 2
    den = (np.abs(est) ** 2).sum(0) * (np.abs(true) ** 2).sum(0)
    return float(np.max(1 - dot[inside] / den[inside]))


@pytest.mark.parametrize("method", ["rss", "espirit"])
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_maps_match_truth(method, dtype):
    enc, y, maps, obj = problem(dtype=dtype)
    est, info = mri.estimate_coil_maps(enc, y, method=method, calibration_radius=8, info=True)
    assert est.shape == maps.shape and est.dtype == dtype
    inside = obj > 0.5
    # Cartesian data of a smooth object and smooth maps: the C++ tests bound this at 5e-3 (RSS)
    # and 1e-3 (ESPIRiT); a looser bound here, the Python face is under test.
    assert misfit(est, maps, inside) < 2e-2
    kept = (np.abs(est) ** 2).sum(0) > 0
    assert np.allclose((np.abs(est[:, kept]) ** 2).sum(0), 1, atol=1e-4)
    assert info["calibration_samples"] > 0
    if method == "espirit":
        assert info["kernel_rank"] > 0 and info["calibration_size"] == 17


def test_reference_coil_is_real():
    enc, y, maps, obj = problem()
    est = mri.estimate_coil_maps(enc, y, reference_coil=2)
    kept = (np.abs(est) ** 2).sum(0) > 0
    assert np.all(np.abs(est[2][kept].imag) < 1e-5) and np.all(est[2][kept].real >= 0)


def test_bad_input():
    enc, y, maps, obj = problem()
    with pytest.raises(fieldft.InvalidArgumentError, match="method"):
        mri.estimate_coil_maps(enc, y, method="sense")
    with pytest.raises(fieldft.ShapeMismatchError, match="expected"):
        mri.estimate_coil_maps(enc, y[:, :-1])
    with pytest.raises(fieldft.InvalidArgumentError, match="radius"):
        mri.estimate_coil_maps(enc, y, calibration_radius=0)
    bad = y.copy()
    bad[1, 3] = np.nan
    with pytest.raises(fieldft.NonFiniteError):
        mri.estimate_coil_maps(enc, bad)
    with pytest.raises(fieldft.ShapeMismatchError, match="density"):
        mri.estimate_coil_maps(enc, y, density=np.ones(5))


@pytest.mark.gpu
@pytest.mark.parametrize("method", ["rss", "espirit"])
def test_gpu_matches_cpu(method):
    cupy = pytest.importorskip("cupy")
    enc, y, maps, obj = problem()
    cpu = mri.estimate_coil_maps(enc, y, method=method)
    gpu = mri.estimate_coil_maps(enc, cupy.asarray(y), method=method)
    assert isinstance(gpu, cupy.ndarray)
    inside = obj > 0.5
    assert misfit(cupy.asnumpy(gpu), cpu, inside) < 1e-4
