"""fieldft.mri.sense and the simulation helpers (fieldft.mri.shepp_logan, spiral, radial,
readout_times, coil_maps, field_map, add_noise): Python shapes and k column order, values
against the C++ definitions (include/fieldft/mri/simulate.hpp) written out in numpy, SENSE
against its model, and errors.

Tolerances: the exact DFT SENSE against the numpy model within 1e-5 (complex64) / 1e-10
(complex128), as the other DFT encodings (test_op.py); the NUFFT SENSE against the DFT SENSE
within 5·eps (each NUFFT within eps of the model; test_op.py's bound). A layout, sign, coil
order or conjugation mistake gives O(1) errors."""

import numpy as np
import pytest

import fieldft
from fieldft import mri, op
from support import rel_err

DTYPES = [np.complex64, np.complex128]
EXACT = {np.complex64: 1e-5, np.complex128: 1e-10}
NUFFT_EPS = {np.complex64: 1e-4, np.complex128: 1e-9}


# ---------------------------------------------------------------------------------------------
# Simulation helpers.

def test_shepp_logan_shapes_and_landmarks():
    img = mri.shepp_logan((100, 100), subsamples=1)
    assert img.shape == (100, 100) and img.dtype == np.float64
    # Voxel (iy, ix) at u = 0.02 (ix - 50), v = 0.02 (iy - 50): centre 0.2, skull 1, ventricle 0.
    assert img[50, 50] == pytest.approx(0.2)
    assert img[95, 50] == pytest.approx(1.0)      # (u, v) = (0, 0.9): y is the first axis
    assert img[50, 61] == pytest.approx(0.0)      # the right ventricle at u = +0.22
    assert img[50, 95] == pytest.approx(0.0)      # outside the skull's a = 0.69 along x
    vol = mri.shepp_logan((6, 8, 10))
    assert vol.shape == (6, 8, 10)


def test_trajectories_layout_and_columns():
    k = mri.spiral((32, 24), interleaves=3, samples=50)
    assert k.shape == (3, 50, 2)
    assert np.all(np.abs(k[..., 0]) <= 16) and np.all(np.abs(k[..., 1]) <= 12)  # (ky, kx): N/2 per axis
    assert np.max(np.abs(k[..., 0])) > 15 and np.max(np.abs(k[..., 1])) > 11
    assert np.all(k[:, 0] == 0)
    d = mri.radial((32, 32), centre_out=False)
    assert d.shape == (51, 64, 2)
    assert tuple(d[0, 0]) == pytest.approx((0.0, -16.0))  # spoke 0 along x, from -N/2: kx is the last column
    k3 = mri.spiral((4, 16, 16), interleaves=2, samples=10)
    assert k3.shape == (4, 2, 10, 3)
    assert np.array_equal(k3[:, 0, 0, 0], [-2, -1, 0, 1])  # kz planes p - Nz//2, slowest
    assert np.array_equal(k3[1, ..., 1:], k3[0, ..., 1:])  # the same spiral on each plane
    enc = mri.Encoding((4, 16, 16), k3)                       # Encoding takes the layout as is
    assert enc.num_samples == 80
    t = mri.readout_times(k3, 4e-6, start=1e-3)
    assert t.shape == (4, 2, 10)
    assert t[2, 1, 9] == pytest.approx(1e-3 + 9 * 4e-6)


def test_coil_maps_field_map_and_noise():
    maps = mri.coil_maps((20, 24), 6, normalize=True)
    assert maps.shape == (6, 20, 24) and maps.dtype == np.complex128
    assert np.allclose(np.sum(np.abs(maps) ** 2, axis=0), 1, atol=1e-12)
    raw = mri.coil_maps((20, 24), 6)
    assert abs(raw[0, 10, 21]) > 2 * abs(raw[0, 10, 3])  # coil 0 sits at +x (the last axis)
    f = mri.field_map((6, 16, 20), max_hz=80, blobs=4, seed=7)
    assert f.shape == (6, 16, 20)
    assert np.max(np.abs(f)) == pytest.approx(2 * np.pi * 80)
    assert np.array_equal(f, mri.field_map((6, 16, 20), max_hz=80, blobs=4, seed=7))
    z = mri.add_noise(np.zeros(100000, np.complex128), 0.5, seed=3)
    assert np.mean(np.abs(z) ** 2) == pytest.approx(0.25, rel=0.03)  # 5 standard errors: 5/sqrt(n)
    z32 = mri.add_noise(np.ones(10, np.complex64), 0.5, seed=3)
    assert z32.dtype == np.complex64
    assert np.allclose(z32, 1 + z[:10], atol=1e-6)


def test_simulation_bad_input():
    with pytest.raises(fieldft.InvalidArgumentError, match="shape"):
        mri.shepp_logan((16,))
    with pytest.raises(fieldft.InvalidArgumentError, match="subsamples"):
        mri.shepp_logan((16, 16), subsamples=0)
    with pytest.raises(fieldft.InvalidArgumentError, match="reach"):
        mri.spiral((16, 16), reach=3)
    with pytest.raises(fieldft.InvalidArgumentError, match="coils"):
        mri.coil_maps((16, 16), 0)
    with pytest.raises(fieldft.InvalidArgumentError, match="max_hz"):
        mri.field_map((16, 16), max_hz=-1)
    with pytest.raises(fieldft.InvalidArgumentError, match="sigma"):
        mri.add_noise(np.zeros(3, np.complex128), float("nan"), 1)
    with pytest.raises(fieldft.InvalidArgumentError, match="dwell"):
        mri.readout_times(np.zeros((2, 3, 2)), -1)


# ---------------------------------------------------------------------------------------------
# SENSE.

SHAPE = (12, 16)
COILS = 3


def problem():
    k = mri.spiral(SHAPE, interleaves=3, samples=40).reshape(-1, 2)
    maps = mri.coil_maps(SHAPE, COILS, normalize=True)
    x = mri.shepp_logan(SHAPE) * np.exp(0.3j * np.arange(SHAPE[1]) / SHAPE[1])
    return k, maps, x


def model(shape, k, x, field=None, times=None):
    """s_j = Σ_v x_v exp(-i(2π k_j·r_v + Δω_v t_j)), r_d = (i_d - N_d//2)/N_d."""
    r = np.meshgrid(*[(np.arange(n) - n // 2) / n for n in shape], indexing="ij")
    phase = 2 * np.pi * sum(np.outer(k[:, d], r[d].ravel()) for d in range(len(shape)))
    if field is not None:
        phase = phase + np.outer(times, field.ravel())
    return np.exp(-1j * phase) @ x.ravel()


@pytest.mark.parametrize("dtype", DTYPES)
def test_sense_matches_the_model(dtype):
    k, maps, x = problem()
    enc = mri.Encoding(SHAPE, k)
    s = mri.sense(enc, maps, kind="dft", dtype=dtype)
    assert s.ishape == SHAPE and s.oshape == (COILS, k.shape[0])
    y = s(x.astype(dtype))
    want = np.stack([model(SHAPE, k, maps[c] * x) for c in range(COILS)])
    assert rel_err(y, want) < EXACT[dtype]
    # Adjoint: Σ_c conj(maps[c]) Eᴴ y[c], against <Ax, y> = <x, Aᴴy>.
    rng = np.random.default_rng(5)
    v = (rng.standard_normal(y.shape) + 1j * rng.standard_normal(y.shape)).astype(dtype)
    lhs, rhs = np.vdot(y, v), np.vdot(x, s.H(v))
    assert abs(lhs - rhs) / (np.linalg.norm(y) * np.linalg.norm(v)) < EXACT[dtype]


@pytest.mark.parametrize("dtype", DTYPES)
def test_sense_nufft_dft_and_ready_operator_agree(dtype):
    k, maps, x = problem()
    enc = mri.Encoding(SHAPE, k)
    eps = NUFFT_EPS[dtype]
    x = x.astype(dtype)
    exact = mri.sense(enc, maps, kind="dft", dtype=dtype)(x)
    assert rel_err(mri.sense(enc, maps, eps=eps, dtype=dtype)(x), exact) < 5 * eps
    ready = mri.NufftEncoding(enc, eps=eps, batch=COILS, dtype=dtype)
    by_hand = (ready @ op.diag_expand(maps, dtype=dtype))(x)
    assert rel_err(mri.sense(ready, maps)(x), by_hand) < EXACT[dtype]


def test_sense_with_a_field_map_needs_the_dft():
    k, maps, x = problem()
    t = mri.readout_times(k[None], 1e-4)[0]
    f = mri.field_map(SHAPE, max_hz=40)
    enc = mri.Encoding(SHAPE, k, times=t, field=f)
    with pytest.raises(fieldft.InvalidArgumentError, match="field map"):
        mri.sense(enc, maps)
    y = mri.sense(enc, maps, kind="dft", dtype=np.complex128)(x)
    want = np.stack([model(SHAPE, k, maps[c] * x, f, t) for c in range(COILS)])
    assert rel_err(y, want) < EXACT[np.complex128]


def test_sense_bad_input():
    k, maps, _ = problem()
    enc = mri.Encoding(SHAPE, k)
    with pytest.raises(fieldft.ShapeMismatchError, match=r"\(3, 16, 12\).*\(C, 12, 16\)"):
        mri.sense(enc, maps.transpose(0, 2, 1))
    with pytest.raises(fieldft.ShapeMismatchError, match="expected"):
        mri.sense(enc, maps[0])
    with pytest.raises(fieldft.InvalidArgumentError, match="C >= 1"):
        mri.sense(enc, maps[:0])
    bad = maps.copy()
    bad[2, 4, 7] = np.nan
    with pytest.raises(fieldft.NonFiniteError, match=r"coil map 2 .*voxel \(4, 7\)"):
        mri.sense(enc, bad)
    with pytest.raises(fieldft.InvalidArgumentError, match="kind"):
        mri.sense(enc, maps, kind="fft")
    ready = mri.DftEncoding(enc, batch=2)
    with pytest.raises(fieldft.ShapeMismatchError, match="ishape"):
        mri.sense(ready, maps)


@pytest.mark.gpu
def test_sense_gpu_matches_cpu():
    cupy = pytest.importorskip("cupy")
    k, maps, x = problem()
    enc = mri.Encoding(SHAPE, k)
    cpu = mri.sense(enc, maps, kind="dft", dtype=np.complex128)(x)
    gpu = mri.sense(enc, maps, kind="dft", dtype=np.complex128, device="cuda:0")
    got = cupy.asnumpy(gpu(cupy.asarray(x, dtype=np.complex128)))
    assert rel_err(got, cpu) < 1e-10
