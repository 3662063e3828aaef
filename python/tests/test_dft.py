"""fieldft.Dft and fieldft.DftR2 on the host: results against the sums written out in numpy,
image layout (x = last axis), several images per call, adjointness and errors.

Tolerances: the operators are exact sums; include/fieldft/mri/dft.hpp gives their measured
relative error as ~2e-6 (float) and ~1e-14 (double). 1e-5 and 1e-10 leave room for that while
a layout or sign mistake gives an O(1) error."""

import numpy as np
import pytest

import fieldft
from support import random_complex, rel_err

TOL = {np.complex64: 1e-5, np.complex128: 1e-10}


def positions(shape):
    """r_d of every voxel, arrays of the image shape, in field-of-view units (dft.hpp)."""
    grids = np.meshgrid(*[(np.arange(n) - n // 2) / n for n in shape], indexing="ij")
    return grids[::-1]  # rx (last axis), ry, [rz]


def direct_forward(shape, ks, field, times, image, gradients=None):
    """s_j = sum_v m_v exp(-i (2 pi k_j . r_v + dw_v t_j)) [* prod_d sinc(k_dj/N_d + G_dv t_j)]."""
    rs = positions(shape)
    phase = sum(np.outer(k, r.ravel()) for k, r in zip(ks, rs)) * 2 * np.pi
    phase = phase + np.outer(times, field.ravel())
    e = np.exp(-1j * phase)
    if gradients is not None:
        sizes = shape[::-1]  # N_x, N_y, [N_z]
        for k, g, n in zip(ks, gradients, sizes):
            e = e * np.sinc(k[:, None] / n + np.outer(times, g.ravel()))
    return image.reshape(image.shape[:-len(shape)] + (-1,)).astype(np.complex128) @ e.T


def problem(rng, shape, m):
    ks = [rng.uniform(-n / 2, n / 2, m) for n in shape[::-1]]  # kx pairs with the last axis
    field = 2 * np.pi * 40 * rng.standard_normal(shape)  # rad/s, tens of Hz
    times = np.linspace(0, 8e-3, m)  # 8 ms readout
    return ks, field, times


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@pytest.mark.parametrize("shape", [(6, 9), (4, 5, 3)])
def test_dft_matches_direct_sum(rng, shape, dtype):
    m = 70
    ks, field, times = problem(rng, shape, m)
    op = fieldft.Dft(shape, *ks, field=field, times=times, dtype=dtype, backend="cpu")
    assert op.shape == shape and op.num_samples == m and op.domain_shape == shape
    image = random_complex(rng, shape, dtype)
    got = op.forward(image)
    assert got.shape == (m,) and got.dtype == dtype
    assert rel_err(got, direct_forward(shape, ks, field, times, image)) < TOL[dtype]
    # adjoint: <E x, y> = <x, E^H y>
    y = random_complex(rng, m, dtype)
    lhs = np.vdot(y.astype(np.complex128), got)
    rhs = np.vdot(op.adjoint(y).astype(np.complex128), image)
    assert abs(lhs - rhs) / (np.linalg.norm(got) * np.linalg.norm(y)) < TOL[dtype]


def test_several_images_per_call(rng):
    shape, m, c = (5, 8), 40, 3
    ks, field, times = problem(rng, shape, m)
    op = fieldft.Dft(shape, *ks, field=field, times=times, dtype=np.complex128, images=c)
    images = random_complex(rng, (c,) + shape, np.complex128)
    got = op.forward(images)
    assert got.shape == (c, m) and op.codomain_shape == (c, m)
    assert rel_err(got, direct_forward(shape, ks, field, times, images)) < TOL[np.complex128]
    out = np.empty((c,) + shape, np.complex128)
    assert op.adjoint(got, out=out) is out


def test_dft_r2_matches_direct_sum(rng):
    shape, m = (6, 7), 50
    ks, field, times = problem(rng, shape, m)
    image = random_complex(rng, shape, np.complex128)
    f = field / (2 * np.pi)
    derived = [np.gradient(f, axis=1), np.gradient(f, axis=0)]  # central differences, one-sided edges
    op = fieldft.DftR2(shape, *ks, field=field, times=times, dtype=np.complex128)
    assert op.r2
    assert rel_err(op.forward(image), direct_forward(shape, ks, field, times, image, derived)) < 1e-10
    given = [rng.uniform(-5, 5, shape), rng.uniform(-5, 5, shape)]  # Hz per voxel
    op = fieldft.DftR2(shape, *ks, field=field, times=times, gradients=given, dtype=np.complex128)
    assert rel_err(op.forward(image), direct_forward(shape, ks, field, times, image, given)) < 1e-10


def test_without_field_is_a_plain_dft(rng):
    shape, m = (8, 8), 30
    ks, _, _ = problem(rng, shape, m)
    op = fieldft.Dft(shape, *ks, dtype=np.complex128)
    image = random_complex(rng, shape, np.complex128)
    want = direct_forward(shape, ks, np.zeros(shape), np.zeros(m), image)
    assert rel_err(op.forward(image), want) < 1e-10


def test_errors(rng):
    shape, m = (6, 5), 20
    ks, field, times = problem(rng, shape, m)
    with pytest.raises(ValueError, match="shape"):
        fieldft.Dft((6,), ks[0], ks[1])
    with pytest.raises(ValueError, match="3D image shape needs kz"):
        fieldft.Dft((2, 6, 5), *ks)
    with pytest.raises(ValueError, match="`ky` has 19 values"):
        fieldft.Dft(shape, ks[0], ks[1][:-1])
    with pytest.raises(ValueError, match="`field`"):
        fieldft.Dft(shape, *ks, field=np.zeros(7))
    with pytest.raises(fieldft.NonFiniteError):
        fieldft.Dft(shape, *ks, times=np.full(m, np.nan))
    op = fieldft.Dft(shape, *ks, field=field, times=times)  # complex64
    with pytest.raises(TypeError, match="complex64"):
        op.forward(np.zeros(shape, np.complex128))
    with pytest.raises(ValueError, match=r"\(6, 5\)"):
        op.forward(np.zeros((5, 6), np.complex64))  # transposed image
    with pytest.raises(ValueError, match="`out` must have shape"):
        op.adjoint(np.zeros(m, np.complex64), out=np.zeros((6, 6), np.complex64))
