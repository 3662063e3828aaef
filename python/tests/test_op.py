"""fieldft.op and fieldft.mri: the operator battery (every operator: reference results,
linearity, adjointness, the normal, the adjoint as an operator, composition, flat vectors and
out=), the Python conventions (shapes reversed from C++, k columns in image-axis order), errors,
torch CPU tensors, and on a GPU (marker `gpu`) cupy arrays and torch CUDA tensors that stay on
their device and agree with the CPU.

Tolerances: exact operators (diagonals, combinators, the DFT encodings) within 1e-5 relative
(complex64) / 1e-12 (complex128) for adjointness, linearity and the normal, and against their
numpy references within 1e-5 / 1e-10 (the DFT sums accumulate rounding over M·N terms). The
NUFFT encoding is the model to within eps: against the model 5·eps, and its adjointness 5·eps
(forward and adjoint are two transforms, each within eps; tests/mri/encoding_battery_test.cpp
derives the bound). A layout, sign or ordering mistake gives O(1) errors."""

import numpy as np
import pytest

import fieldft
from fieldft import op
from support import random_complex, rel_err

DTYPES = [np.complex64, np.complex128]
EXACT = {np.complex64: 1e-5, np.complex128: 1e-12}      # adjointness, linearity, normal
REFERENCE = {np.complex64: 1e-5, np.complex128: 1e-10}  # against numpy references
NUFFT_EPS = {np.complex64: 1e-4, np.complex128: 1e-9}


def crandn(seed, shape, dtype=np.complex128):
    return random_complex(np.random.default_rng(seed), shape, dtype)


# ---------------------------------------------------------------------------------------------
# The model of fieldft.mri, written out: image axis d at r_d = (i - N_d // 2) / N_d, k[:, d] its
# frequency, s_j = sum_v m_v exp(-i (2 pi k_j . r_v + dw_v t_j)).

def positions(shape):
    return np.meshgrid(*[(np.arange(n) - n // 2) / n for n in shape], indexing="ij")


def model_matrix(shape, k, field=None, times=None):
    phase = 2 * np.pi * sum(np.outer(k[:, d], r.ravel()) for d, r in enumerate(positions(shape)))
    if field is not None and times is not None:
        phase = phase + np.outer(times, np.asarray(field).ravel())
    return np.exp(-1j * phase)  # (M, N)


def model_forward(shape, k, images, field=None, times=None):
    e = model_matrix(shape, k, field, times)
    lead = images.shape[:images.ndim - len(shape)]
    return (images.reshape(lead + (-1,)).astype(np.complex128) @ e.T).reshape(lead + (k.shape[0],))


def trajectory(seed, shape, m):
    rng = np.random.default_rng(seed)
    return np.stack([rng.uniform(-n / 2, n / 2, m) for n in shape], axis=1)  # columns in axis order


# ---------------------------------------------------------------------------------------------
# The operators under test. Each factory takes (dtype, device) and returns (A, reference, tol):
# reference(x) is A x in numpy (complex128), tol the relative error allowed against it and for
# adjointness. Data come from fixed seeds, so a CPU and a GPU build hold the same values.

def _d(seed, shape):
    return crandn(seed, shape)


def case_diag(dtype, device):
    d = _d(1, (3, 4))
    return op.diag(d, dtype=dtype, device=device), lambda x: d * x, None


def case_diag_expand(dtype, device):
    maps = _d(2, (5, 3, 4))
    return op.diag_expand(maps, dtype=dtype, device=device), lambda x: maps * x, None


def case_identity(dtype, device):
    return op.identity((2, 3), dtype=dtype, device=device), lambda x: x, None


def case_scale(dtype, device):
    d = _d(3, (7,))
    return (2 - 1j) * op.diag(d, dtype=dtype, device=device), lambda x: (2 - 1j) * d * x, None


def case_scale_right_and_divide(dtype, device):
    d = _d(3, (7,))
    return op.diag(d, dtype=dtype, device=device) * 3.0 / 2, lambda x: 1.5 * d * x, None


def case_sum(dtype, device):
    d1, d2 = _d(4, (3, 4)), _d(5, (3, 4))
    a, b = op.diag(d1, dtype=dtype, device=device), op.diag(d2, dtype=dtype, device=device)
    return a + b, lambda x: (d1 + d2) * x, None


def case_difference(dtype, device):
    d1, d2 = _d(4, (3, 4)), _d(5, (3, 4))
    a, b = op.diag(d1, dtype=dtype, device=device), op.diag(d2, dtype=dtype, device=device)
    return a - b, lambda x: (d1 - d2) * x, None


def case_compose(dtype, device):
    d, maps = _d(6, (3, 4)), _d(7, (2, 3, 4))
    a = op.diag_expand(maps, dtype=dtype, device=device) @ op.diag(d, dtype=dtype, device=device)
    return a, lambda x: maps * (d * x), None


def case_compose_three(dtype, device):
    d, maps = _d(6, (3, 4)), _d(7, (2, 3, 4))
    a = op.compose(op.identity((2, 3, 4), dtype=dtype, device=device), op.diag_expand(maps, dtype=dtype, device=device),
                   op.diag(d, dtype=dtype, device=device))
    return a, lambda x: maps * (d * x), None


def case_vstack_equal(dtype, device):
    d1, d2 = _d(8, (3, 4)), _d(9, (3, 4))
    a = op.vstack([op.diag(d1, dtype=dtype, device=device), op.diag(d2, dtype=dtype, device=device)])
    return a, lambda x: np.stack([d1 * x, d2 * x]), None


def case_vstack_flat(dtype, device):
    d, maps = _d(10, (3, 4)), _d(11, (2, 3, 4))
    a = op.vstack(op.diag(d, dtype=dtype, device=device), op.diag_expand(maps, dtype=dtype, device=device))
    return a, lambda x: np.concatenate([(d * x).ravel(), (maps * x).ravel()]), None


def case_hstack(dtype, device):
    d1, d2 = _d(12, (3, 4)), _d(13, (3, 4))
    a = op.hstack([op.diag(d1, dtype=dtype, device=device), op.diag(d2, dtype=dtype, device=device)])
    return a, lambda x: d1 * x[0] + d2 * x[1], None


def case_batch_diag(dtype, device):
    d = _d(14, (3, 4))
    return op.batch(op.diag(d, dtype=dtype, device=device), 3), lambda x: d * x, None


def case_batch_looped(dtype, device):
    maps = _d(15, (2, 3, 4))
    return op.batch(op.diag_expand(maps, dtype=dtype, device=device), 3), lambda x: maps * x[:, None], None


def case_adjoint_view(dtype, device):
    maps = _d(16, (2, 3, 4))
    a = op.diag_expand(maps, dtype=dtype, device=device).H
    return a, lambda y: (np.conj(maps) * y).sum(axis=0), None


# Sparsifying operators (fieldft/op/sparsify.hpp), against numpy written from their definitions.

def np_differences(x, axes, boundary):
    """out[a] = x shifted by +1 along axes[a] minus x: wrapping, or 0 at the last index."""
    outs = []
    for p in axes:
        if boundary == "periodic":
            outs.append(np.roll(x, -1, axis=p) - x)
        else:
            outs.append(np.diff(x, axis=p, append=np.take(x, [-1], axis=p)))
    return np.stack(outs)


SQ3 = np.sqrt(3.0)
LOWPASS = {"haar": np.array([1.0, 1.0]) / np.sqrt(2.0),
           "daubechies4": np.array([1 + SQ3, 3 + SQ3, 3 - SQ3, 1 - SQ3]) / (4 * np.sqrt(2.0))}


def np_wavelet(x, levels, kind):
    """Mallat's pyramid, periodized: per level, along every even axis of the corner block, the
    low half sum_k h_k x[(2j+k) mod m] then the high half with g_k = (-1)^k h_{L-1-k}."""
    h = LOWPASS[kind]
    g = (-1.0) ** np.arange(len(h)) * h[::-1]
    y = np.array(x, dtype=np.complex128)
    block = list(y.shape)
    for _ in range(levels):
        corner = tuple(slice(0, m) for m in block)
        b = y[corner]
        for p, m in enumerate(block):
            if m % 2:
                continue
            shifted = [np.roll(b, -k, axis=p) for k in range(len(h))]
            lo = sum(c * s for c, s in zip(h, shifted)).take(range(0, m, 2), axis=p)
            hi = sum(c * s for c, s in zip(g, shifted)).take(range(0, m, 2), axis=p)
            b = np.concatenate([lo, hi], axis=p)
        y[corner] = b
        block = [m // 2 if m % 2 == 0 else m for m in block]
    return y


def case_differences_2d(dtype, device):
    a = op.finite_difference((5, 6), dtype=dtype, device=device)
    return a, lambda x: np_differences(x, (0, 1), "periodic"), None


def case_differences_3d_neumann_two_axes(dtype, device):
    a = op.finite_difference((3, 4, 5), axes=(2, 0), boundary="neumann", dtype=dtype, device=device)
    return a, lambda x: np_differences(x, (2, 0), "neumann"), None


def case_differences_negative_axis(dtype, device):
    a = op.finite_difference((4, 7), axes=-1, dtype=dtype, device=device)
    return a, lambda x: np_differences(x, (1,), "periodic"), None


def case_wavelet_haar_2d(dtype, device):
    return op.wavelet((8, 6), 3, dtype=dtype, device=device), lambda x: np_wavelet(x, 3, "haar"), None


def case_wavelet_d4_3d(dtype, device):
    a = op.wavelet((4, 6, 8), 2, kind="daubechies4", dtype=dtype, device=device)
    return a, lambda x: np_wavelet(x, 2, "daubechies4"), None


def case_wavelet_d4_odd_axis(dtype, device):
    a = op.wavelet((5, 12), 2, kind="d4", dtype=dtype, device=device)
    return a, lambda x: np_wavelet(x, 2, "daubechies4"), None


def _nufft_tol(dtype):
    return 5 * NUFFT_EPS[dtype]


def case_nufft_2d(dtype, device):
    shape = (12, 16)
    k = trajectory(20, shape, 300)
    enc = fieldft.mri.Encoding(shape, k)
    a = fieldft.mri.NufftEncoding(enc, eps=NUFFT_EPS[dtype], dtype=dtype, device=device)
    return a, lambda x: model_forward(shape, k, x), _nufft_tol(dtype)


def case_nufft_3d_batch(dtype, device):
    shape = (6, 8, 10)
    k = trajectory(21, shape, 400)
    enc = fieldft.mri.Encoding(shape, k)
    a = fieldft.mri.NufftEncoding(enc, eps=NUFFT_EPS[dtype], batch=3, dtype=dtype, device=device)
    return a, lambda x: model_forward(shape, k, x), _nufft_tol(dtype)


def case_nufft_batched_by_op_batch(dtype, device):
    shape = (10, 12)
    k = trajectory(22, shape, 200)
    enc = fieldft.mri.Encoding(shape, k)
    a = op.batch(fieldft.mri.NufftEncoding(enc, eps=NUFFT_EPS[dtype], dtype=dtype, device=device), 2)
    return a, lambda x: model_forward(shape, k, x), _nufft_tol(dtype)


def _field_problem(seed, shape, m):
    rng = np.random.default_rng(seed)
    k = trajectory(seed, shape, m)
    field = 2 * np.pi * 40 * rng.standard_normal(shape)  # rad/s
    times = np.linspace(0, 8e-3, m)
    return k, field, times


def case_dft_field(dtype, device):
    shape = (6, 9)
    k, field, times = _field_problem(23, shape, 80)
    enc = fieldft.mri.Encoding(shape, k, times=times, field=field)
    a = fieldft.mri.DftEncoding(enc, dtype=dtype, device=device)
    return a, lambda x: model_forward(shape, k, x, field, times), None


def case_dft_3d_batch(dtype, device):
    shape = (3, 4, 5)
    k, field, times = _field_problem(24, shape, 60)
    enc = fieldft.mri.Encoding(shape, k, times=times, field=field)
    a = fieldft.mri.DftEncoding(enc, batch=2, dtype=dtype, device=device)
    return a, lambda x: model_forward(shape, k, x, field, times), None


def case_dft_r2(dtype, device):
    shape = (6, 7)
    k, field, times = _field_problem(25, shape, 50)
    enc = fieldft.mri.Encoding(shape, k, times=times, field=field)
    a = fieldft.mri.DftR2Encoding(enc, dtype=dtype, device=device)
    # the same model as fieldft.DftR2 (gradients from central differences of the field map)
    ref = fieldft.DftR2(shape, k[:, 1], k[:, 0], field=field, times=times, dtype=np.complex128, backend="cpu")
    return a, lambda x: ref.forward(np.asarray(x, np.complex128)), None


def case_sense_nufft(dtype, device):
    shape, coils = (10, 12), 4
    k = trajectory(26, shape, 250)
    maps = _d(27, (coils,) + shape)
    enc = fieldft.mri.Encoding(shape, k)
    f = fieldft.mri.NufftEncoding(enc, eps=NUFFT_EPS[dtype], batch=coils, dtype=dtype, device=device)
    a = f @ op.diag_expand(maps, dtype=dtype, device=device)
    return a, lambda x: model_forward(shape, k, maps * x), _nufft_tol(dtype)


def case_sense_dft_field(dtype, device):
    shape, coils = (5, 6), 3
    k, field, times = _field_problem(28, shape, 40)
    maps = _d(29, (coils,) + shape)
    enc = fieldft.mri.Encoding(shape, k, times=times, field=field)
    a = fieldft.mri.DftEncoding(enc, batch=coils, dtype=dtype, device=device) @ op.diag_expand(maps, dtype=dtype,
                                                                                                device=device)
    return a, lambda x: model_forward(shape, k, maps * x, field, times), None


def case_rank_sum_single_sense(dtype, device):
    # fieldft.dist.rank_sum over one rank: the part itself (the sums over ranks are no-ops).
    shape, coils = (10, 12), 3
    k = trajectory(30, shape, 200)
    maps = _d(31, (coils,) + shape)
    part = fieldft.mri.sense(fieldft.mri.Encoding(shape, k), maps, eps=NUFFT_EPS[dtype], dtype=dtype, device=device)
    return fieldft.dist.rank_sum(part, fieldft.dist.single()), lambda x: model_forward(shape, k, maps * x), \
        _nufft_tol(dtype)


CASES = {name[5:]: f for name, f in dict(globals()).items() if name.startswith("case_")}
CASE_PARAMS = list(CASES)


def build(name, dtype, device="cpu"):
    return CASES[name](dtype, device)


def exact_tol(dtype, tol):
    return EXACT[dtype] if tol is None else tol


def vdot(a, b):
    return np.vdot(np.asarray(a, np.complex128).ravel(), np.asarray(b, np.complex128).ravel())


# ---------------------------------------------------------------------------------------------
# The battery.

@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", CASE_PARAMS)
def test_battery(name, dtype):
    a, ref, tol = build(name, dtype)
    t_exact = exact_tol(dtype, tol)
    t_ref = REFERENCE[dtype] if tol is None else tol
    # shapes, dtype, place
    assert a.shape == (int(np.prod(a.oshape)), int(np.prod(a.ishape)))
    assert a.dtype == dtype and a.device == "cpu" and a.stream == 0
    x, x2 = crandn(100, a.ishape, dtype), crandn(101, a.ishape, dtype)
    y = crandn(102, a.oshape, dtype)
    ax = a(x)
    assert isinstance(ax, np.ndarray) and ax.shape == a.oshape and ax.dtype == dtype
    # against the reference
    assert rel_err(ax, ref(x.astype(np.complex128))) < t_ref, "forward against the reference"
    # linearity
    alpha, beta = 0.7 - 0.2j, -1.3 + 0.5j
    lhs = a((alpha * x + beta * x2).astype(dtype))
    assert rel_err(lhs, alpha * ax.astype(np.complex128) + beta * a(x2)) < exact_tol(dtype, None) * 10
    # adjointness <A x, y> = <x, A^H y>
    ahy = a.H(y)
    assert ahy.shape == a.ishape and ahy.dtype == dtype
    defect = abs(vdot(y, ax) - vdot(ahy, x))
    assert defect <= t_exact * np.linalg.norm(ax) * np.linalg.norm(y), "adjointness"
    # the normal
    assert rel_err(a.N(x), a.H(a(x))) < max(t_exact, EXACT[dtype] * 10), "A.N(x) == A.H(A(x))"
    # the adjoint operator
    assert a.H.ishape == a.oshape and a.H.oshape == a.ishape and a.H.shape == a.shape[::-1]
    assert a.H.H is a
    assert rel_err(a.H.H(x), ax) == 0
    assert rel_err(op.adjoint(a)(y), ahy) == 0
    # composition with identities on both sides changes nothing; @ on an array applies
    i_in = op.identity(a.ishape, dtype=dtype)
    i_out = op.identity(a.oshape, dtype=dtype)
    assert rel_err((i_out @ a @ i_in)(x), ax) < EXACT[dtype]
    assert rel_err(a @ x, ax) == 0
    # flat vectors in, flat vectors out; out=
    flat = a(x.ravel())
    assert flat.shape == (a.shape[0],) and rel_err(flat, ax.ravel()) == 0
    out = np.empty(a.oshape, dtype)
    assert a(x, out=out) is out and rel_err(out, ax) == 0
    # (a flat y of a 1-D oshape IS the shaped input: its result is shaped)
    out_h = np.empty(a.ishape if len(a.oshape) == 1 else (a.shape[1],), dtype)
    assert a.H(y.ravel(), out=out_h) is out_h and rel_err(out_h, ahy.reshape(out_h.shape)) == 0
    # a non-contiguous input is read through one contiguous copy
    big = np.zeros(a.ishape + (2,), dtype)
    big[..., 0] = x
    assert rel_err(a(big[..., 0]), ax) == 0
    # repeated calls give the same bits (scratch memory reused)
    assert np.array_equal(a(x), ax)


@pytest.mark.parametrize("name", CASE_PARAMS)
def test_torch_cpu_tensors(name):
    torch = pytest.importorskip("torch")
    dtype = np.complex64
    a, _, _ = build(name, dtype)
    x = crandn(100, a.ishape, dtype)
    got = a(torch.from_numpy(x))
    assert isinstance(got, torch.Tensor) and got.device.type == "cpu" and tuple(got.shape) == a.oshape
    assert np.array_equal(got.numpy(), a(x))
    y = crandn(102, a.oshape, dtype)
    assert np.array_equal(a.H(torch.from_numpy(y)).numpy(), a.H(y))
    assert np.array_equal(a.N(torch.from_numpy(x)).numpy(), a.N(x))


# ---------------------------------------------------------------------------------------------
# Conventions.

def test_shapes_are_the_cpp_shapes_reversed():
    maps = crandn(1, (5, 3, 4))
    s = op.diag_expand(maps)
    assert s.ishape == (3, 4) and s.oshape == (5, 3, 4) and s.shape == (60, 12)
    assert s._core.domain_shape == [4, 3] and s._core.codomain_shape == [4, 3, 5]
    assert op.batch(s, 2).ishape == (2, 3, 4) and op.batch(s, 2).oshape == (2, 5, 3, 4)
    assert op.vstack([s, s]).oshape == (2, 5, 3, 4)
    assert op.hstack([s.H, s.H]).ishape == (2, 5, 3, 4)
    assert op.identity(7).ishape == (7,)


def test_dtype_of_fixed_arrays():
    # complex64 unless asked otherwise, as every fieldft operator (so that they combine)
    assert op.diag(np.ones(3, np.float32)).dtype == np.complex64
    assert op.diag(np.ones(3, np.complex128)).dtype == np.complex64
    assert op.diag_expand(np.ones((2, 3))).dtype == np.complex64
    assert op.diag(np.ones(3, np.float32), dtype="complex128").dtype == np.complex128
    d = op.diag(np.arange(3.0), dtype=np.complex128)
    assert np.array_equal(d(np.ones(3, np.complex128)), np.arange(3.0))


def test_operators_keep_their_data():
    d = crandn(2, (4,))
    a = op.diag(d.copy(), dtype=np.complex128)
    want = a(np.ones(4, np.complex128))
    import gc
    gc.collect()
    assert np.array_equal(a(np.ones(4, np.complex128)), want)
    h = op.diag(d, dtype=np.complex128).H  # the operand lives on inside the view
    gc.collect()
    assert np.allclose(h(np.ones(4, np.complex128)), np.conj(d))


def test_repr_and_names_in_python_order():
    s = op.diag_expand(np.ones((5, 3, 4), np.complex64))
    assert "(3, 4) -> (5, 3, 4)" in repr(s) and "complex64" in repr(s) and "cpu" in repr(s)
    assert s.name == "diag_expand((3, 4), 5)"


def test_k_columns_follow_the_image_axes():
    # One sample at kx = 1 (last column): the phase runs along the LAST image axis.
    shape = (4, 8)
    enc = fieldft.mri.Encoding(shape, np.array([[0.0, 1.0]]))
    e = fieldft.mri.DftEncoding(enc, dtype=np.complex128)
    image = np.zeros(shape, np.complex128)
    image[0, 5] = 1  # x index 5: r_x = (5 - 4) / 8
    assert np.allclose(e(image), np.exp(-2j * np.pi * (1 / 8)))
    image = np.zeros(shape, np.complex128)
    image[3, 0] = 1  # along y only: kx . r_x with r_x = -1/2, ky = 0
    assert np.allclose(e(image), np.exp(-2j * np.pi * (-0.5)))


def test_encoding_agrees_with_fieldft_dft():
    shape, m = (6, 10), 70
    k, field, times = _field_problem(30, shape, m)
    enc = fieldft.mri.Encoding(shape, k, times=times, field=field)
    e = fieldft.mri.DftEncoding(enc, dtype=np.complex128)
    d = fieldft.Dft(shape, k[:, -1], k[:, -2], field=field, times=times, dtype=np.complex128, backend="cpu")
    x = crandn(3, shape)
    assert rel_err(e(x), d.forward(x)) < 1e-12
    y = crandn(4, m)
    assert rel_err(e.H(y), d.adjoint(y)) < 1e-12


def test_weighted_normal():
    """A.weighted_normal(w): AᴴWA through the Toeplitz kernel (NufftEncoding, SENSE), None where
    the operator has no such form; the solvers' checks of the weights."""
    shape, m, coils = (12, 16), 300, 3
    k = trajectory(23, shape, m)
    enc = fieldft.mri.Encoding(shape, k)
    w = np.random.default_rng(5).uniform(0.2, 2.0, m)
    x = crandn(6, shape)
    a = fieldft.mri.NufftEncoding(enc, eps=1e-9, dtype=np.complex128, toeplitz="on")
    n = a.weighted_normal(w)
    assert n.ishape == n.oshape == shape
    # the kernel is a type 1 NUFFT of the weights at eps 1e-9: 5 eps as for the transforms
    assert rel_err(n(x), a.H(w * a(x))) < 5e-9
    maps = crandn(7, (coils,) + shape)
    s = fieldft.mri.sense(enc, maps, eps=1e-9, dtype=np.complex128, toeplitz="on")
    ws = np.broadcast_to(w, (coils, m))
    assert rel_err(s.weighted_normal(ws)(x), s.H(ws * s(x))) < 5e-9
    # per-coil weights that differ do not fit one kernel: no fast form
    assert s.weighted_normal(ws * np.arange(1, coils + 1)[:, None]) is None
    assert fieldft.mri.NufftEncoding(enc, eps=1e-9, dtype=np.complex128, toeplitz="off").weighted_normal(w) is None
    assert op.diag(crandn(8, shape), dtype=np.complex128).weighted_normal(np.ones(shape)) is None
    with pytest.raises(fieldft.InvalidArgumentError, match="negative"):
        a.weighted_normal(-w)
    with pytest.raises(fieldft.ShapeMismatchError):
        a.weighted_normal(w[:-1])


def test_encoding_properties_and_leading_k_axes():
    shape = (8, 8)
    k = trajectory(31, shape, 24).reshape(3, 8, 2)  # (shots, readout, 2)
    shots = np.repeat(np.arange(3), 8)
    times = np.tile(np.linspace(0, 1e-3, 8), 3)
    enc = fieldft.mri.Encoding(shape, k, times=times, shots=shots)
    assert enc.shape == shape and enc.ndim == 2 and enc.num_samples == 24 and enc.num_shots == 3
    assert enc.k.shape == (24, 2) and np.array_equal(enc.k, k.reshape(24, 2))
    assert not enc.has_field and enc.field is None and np.array_equal(enc.shots, shots)
    f = fieldft.mri.NufftEncoding(enc, eps=1e-6, dtype=np.complex128)
    assert f.ishape == shape and f.oshape == (24,) and f.encoding is enc and f.batch == 1
    assert "Encoding(shape=(8, 8), num_samples=24" in repr(enc)


def test_encoding_errors():
    shape = (8, 8)
    k = trajectory(32, shape, 10)
    with pytest.raises(fieldft.ShapeMismatchError, match=r"\(M, 2\)"):
        fieldft.mri.Encoding(shape, k[:, :1])
    with pytest.raises(fieldft.ShapeMismatchError, match="times"):
        fieldft.mri.Encoding(shape, k, times=np.zeros(9))
    with pytest.raises(fieldft.ShapeMismatchError, match="field"):
        fieldft.mri.Encoding(shape, k, field=np.zeros((8, 7)))
    with pytest.raises(fieldft.InvalidArgumentError, match="shot"):
        fieldft.mri.Encoding(shape, k, shots=-np.ones(10))
    with pytest.raises(ValueError):
        fieldft.mri.Encoding((8,), k)
    bad = k.copy()
    bad[3, 1] = 100.0  # far outside [-N/2, N/2]: radians or 1/m, not cycles per FOV
    with pytest.raises(fieldft.Error):
        fieldft.mri.Encoding(shape, bad)
    bad[3, 1] = np.nan
    with pytest.raises(fieldft.NonFiniteError):
        fieldft.mri.Encoding(shape, bad)
    with_field = fieldft.mri.Encoding(shape, k, times=np.zeros(10), field=np.ones(shape))
    with pytest.raises(fieldft.Error):  # a field map needs the DFT (or time segmentation)
        fieldft.mri.NufftEncoding(with_field)
    with pytest.raises(TypeError, match="modeord"):
        fieldft.mri.NufftEncoding(fieldft.mri.Encoding(shape, k), modeord=1)
    with pytest.raises(TypeError):
        fieldft.mri.DftEncoding(k)



# ---------------------------------------------------------------------------------------------
# Errors.

def test_error_classes():
    assert issubclass(fieldft.ContextMismatchError, fieldft.Error)
    assert issubclass(fieldft.ContextMismatchError, ValueError)
    assert fieldft.ContextMismatchError.code == 12 and fieldft.ContextMismatchError.code_name == "context mismatch"
    assert issubclass(op.DtypeError, fieldft.InvalidArgumentError) and issubclass(op.DtypeError, TypeError)


def test_call_errors():
    a = op.diag(crandn(1, (3, 4)), dtype=np.complex64)
    with pytest.raises(fieldft.ShapeMismatchError, match=r"\(4, 3\).*\(3, 4\)"):
        a(np.zeros((4, 3), np.complex64))
    with pytest.raises(fieldft.ShapeMismatchError):
        a(np.zeros(11, np.complex64))
    with pytest.raises(op.DtypeError, match="complex128"):
        a(np.zeros((3, 4), np.complex128))
    with pytest.raises(TypeError):
        a(np.zeros((3, 4), np.float32))
    with pytest.raises(TypeError, match="must be an array"):
        a([[0j] * 4] * 3)
    x = np.zeros((3, 4), np.complex64)
    with pytest.raises(fieldft.ShapeMismatchError, match="out"):
        a(x, out=np.empty((12,), np.complex64))
    with pytest.raises(op.DtypeError):
        a(x, out=np.empty((3, 4), np.complex128))
    with pytest.raises(fieldft.InvalidArgumentError, match="C-contiguous"):
        a(x, out=np.empty((4, 3), np.complex64).T)
    with pytest.raises(ValueError, match="overlaps"):
        a(x, out=x)


def test_combination_errors():
    d = op.diag(np.ones((3, 4)), dtype=np.complex64)
    s = op.diag_expand(np.ones((2, 3, 4)), dtype=np.complex64)
    with pytest.raises(fieldft.ShapeMismatchError, match=r"expected shape \(3, 4\), got \(2, 3, 4\)"):
        s @ s
    with pytest.raises(fieldft.ShapeMismatchError):
        d + s
    with pytest.raises(fieldft.ShapeMismatchError):
        op.vstack([d, s.H])
    with pytest.raises(fieldft.ShapeMismatchError):
        op.hstack([d, s])
    with pytest.raises(op.DtypeError):
        d @ op.identity((3, 4), dtype=np.complex128)
    with pytest.raises(TypeError):
        d * d
    with pytest.raises(TypeError):
        d @ "x"
    with pytest.raises(TypeError, match="not a fieldft.op.Operator"):
        op.vstack([d, 3])
    with pytest.raises(fieldft.InvalidArgumentError):
        op.vstack([])
    with pytest.raises(ValueError):
        op.batch(d, 0)
    with pytest.raises(fieldft.InvalidArgumentError):
        op.identity((3, 4), device="gpu")
    with pytest.raises(op.DtypeError):
        op.identity(3, dtype=np.float32)


@pytest.mark.skipif(fieldft.build_info()["cuda"], reason="this build has CUDA")
def test_sparsifying_operators_in_python_order():
    x = crandn(40, (3, 5))
    d = op.finite_difference((3, 5), axes=(1,), dtype=np.complex128)
    assert d.ishape == (3, 5) and d.oshape == (1, 3, 5)
    assert rel_err(d(x)[0], np.roll(x, -1, axis=1) - x) < 1e-12  # axis 1: along x, the fast axis
    d = op.finite_difference((3, 5), boundary="neumann", dtype=np.complex128)
    assert d.oshape == (2, 3, 5)
    assert np.all(d(x)[0][-1] == 0) and np.all(d(x)[1][:, -1] == 0)  # no difference across the border
    assert np.all(d(np.full((3, 5), 2 - 1j)) == 0)
    # the wavelet: orthonormal, adjoint = inverse, normal = identity
    w = op.wavelet((16, 12), op.wavelet_max_levels((16, 12)), kind="daubechies4", dtype=np.complex128)
    x = crandn(41, (16, 12))
    y = w(x)
    assert abs(np.linalg.norm(y) / np.linalg.norm(x) - 1) < 1e-13
    assert rel_err(w.H(y), x) < 1e-13 and rel_err(w.N(x), x) == 0
    assert "daubechies4" in w.name and "(16, 12)" in w.name


def test_sparsifying_operator_errors():
    with pytest.raises(fieldft.InvalidArgumentError, match=r"axis 2 is out of range.*-2 <= axis < 2"):
        op.finite_difference((4, 5), axes=(0, 2))
    with pytest.raises(fieldft.InvalidArgumentError, match="appears twice"):
        op.finite_difference((4, 5), axes=(1, -1))
    with pytest.raises(fieldft.InvalidArgumentError, match="axes is empty"):
        op.finite_difference((4, 5), axes=())
    with pytest.raises(fieldft.InvalidArgumentError, match="boundary must be one of"):
        op.finite_difference((4, 5), boundary="mirror")
    with pytest.raises(fieldft.InvalidArgumentError, match="extent >= 1"):
        op.wavelet((4, 0), 1)
    with pytest.raises(fieldft.InvalidArgumentError, match="kind must be one of"):
        op.wavelet((8,), 1, kind="db8")
    with pytest.raises(fieldft.InvalidArgumentError, match="levels >= 1"):
        op.wavelet((8,), 0)
    # (6, 8) -> (3, 4) -> (3, 2) -> (3, 1): three levels; shapes in messages in Python order
    assert op.wavelet_max_levels((6, 8)) == 3 and op.wavelet_max_levels((5, 3)) == 0
    with pytest.raises(fieldft.InvalidArgumentError, match=r"too many for shape \(6, 8\).*1 <= levels <= 3"):
        op.wavelet((6, 8), 4)
    with pytest.raises(fieldft.InvalidArgumentError, match="at least one even extent"):
        op.wavelet((5, 3), 1)


def test_cuda_operator_without_cuda_build():
    with pytest.raises(fieldft.BackendUnavailableError, match="without CUDA"):
        op.identity(3, device="cuda")


def test_dft_still_works():
    # fieldft.Dft (the older face of the DFT) beside fieldft.mri
    shape, m = (4, 6), 20
    k, field, times = _field_problem(33, shape, m)
    d = fieldft.Dft(shape, k[:, 1], k[:, 0], field=field, times=times, dtype=np.complex128, backend="cpu")
    x = crandn(5, shape)
    assert rel_err(d.forward(x), model_forward(shape, k, x, field, times)) < 1e-10


# ---------------------------------------------------------------------------------------------
# GPU: cupy arrays and torch CUDA tensors stay on their device and agree with the CPU
# (fixtures cupy, torch and no_copies: conftest.py).

def gpu_tol(dtype, tol):
    # two results (host and device), each within the reference tolerance of the model
    return 2 * (REFERENCE[dtype] if tol is None else tol)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", CASE_PARAMS)
def test_gpu_cupy_matches_cpu(name, dtype, cupy, no_copies):
    cpu, _, tol = build(name, dtype, "cpu")
    gpu, _, _ = build(name, dtype, "cuda:0")
    assert gpu.device == "cuda:0" and gpu.ishape == cpu.ishape and gpu.oshape == cpu.oshape
    x, y = crandn(100, cpu.ishape, dtype), crandn(102, cpu.oshape, dtype)
    dx, dy = cupy.asarray(x), cupy.asarray(y)
    for got, want in ((gpu(dx), cpu(x)), (gpu.H(dy), cpu.H(y)), (gpu.N(dx), cpu.N(x))):
        assert isinstance(got, cupy.ndarray) and got.device.id == 0 and got.dtype == dtype
        assert rel_err(cupy.asnumpy(got), want) < gpu_tol(dtype, tol)
    out = cupy.empty(cpu.oshape, dtype)
    assert gpu(dx, out=out) is out
    # adjointness on the device
    ax, ahy = cupy.asnumpy(gpu(dx)), cupy.asnumpy(gpu.H(dy))
    assert abs(vdot(y, ax) - vdot(ahy, x)) <= exact_tol(dtype, tol) * np.linalg.norm(ax) * np.linalg.norm(y)


@pytest.mark.gpu
@pytest.mark.parametrize("name", CASE_PARAMS)
def test_gpu_torch_matches_cpu(name, torch, no_copies):
    dtype = np.complex64
    cpu, _, tol = build(name, dtype, "cpu")
    gpu, _, _ = build(name, dtype, "cuda")
    x, y = crandn(100, cpu.ishape, dtype), crandn(102, cpu.oshape, dtype)
    tx, ty = torch.from_numpy(x).cuda(), torch.from_numpy(y).cuda()
    for got, want in ((gpu(tx), cpu(x)), (gpu.H(ty), cpu.H(y)), (gpu.N(tx), cpu.N(x))):
        assert isinstance(got, torch.Tensor) and got.is_cuda and got.device == tx.device
        assert rel_err(got.cpu().numpy(), want) < gpu_tol(dtype, tol)


@pytest.mark.gpu
def test_gpu_inputs_in_the_wrong_place(cupy):
    cpu = op.diag(np.ones(8), dtype=np.complex64)
    gpu = op.diag(np.ones(8), dtype=np.complex64, device="cuda")
    with pytest.raises(fieldft.ContextMismatchError, match="host"):
        cpu(cupy.zeros(8, np.complex64))
    with pytest.raises(fieldft.ContextMismatchError, match="host memory"):
        gpu(np.zeros(8, np.complex64))
    with pytest.raises(fieldft.ContextMismatchError):
        gpu(cupy.zeros(8, np.complex64), out=np.empty(8, np.complex64))
    with pytest.raises(fieldft.ContextMismatchError):
        cpu @ gpu
    # a device diagonal from a cupy array runs where the array is
    assert op.diag(cupy.ones(8)).device == "cuda:0"


@pytest.mark.gpu
def test_gpu_operators_on_different_streams_do_not_combine(cupy):
    s = cupy.cuda.Stream(non_blocking=True)
    a = op.identity(8, device="cuda")
    b = op.identity(8, device="cuda", stream=s)
    assert b.stream == s.ptr and a.stream != s.ptr
    with pytest.raises(fieldft.ContextMismatchError, match="different places"):
        a @ b
    with s:
        c = op.identity(8, device="cuda")  # made inside the stream context: on that stream
    assert c.stream == s.ptr
    assert (b @ c).stream == s.ptr


@pytest.mark.gpu
def test_gpu_calls_are_ordered_against_the_callers_stream(cupy):
    # Operator made on the default stream, data produced and consumed on a non-blocking stream:
    # the events must order the call between them (large enough that a race would show).
    shape, coils = (128, 128), 8
    k = trajectory(40, shape, 60000)
    maps = _d(41, (coils,) + shape)
    enc = fieldft.mri.Encoding(shape, k)
    e = fieldft.mri.NufftEncoding(enc, eps=1e-4, batch=coils, device="cuda") @ op.diag_expand(
        maps, dtype=np.complex64, device="cuda")
    cpu = fieldft.mri.NufftEncoding(enc, eps=1e-4, batch=coils) @ op.diag_expand(maps, dtype=np.complex64)
    x = crandn(42, shape, np.complex64)
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        dx = cupy.asarray(x) * 2
        y = e(dx)
        total = y.sum()
        z = e.N(dx)
        host_y, host_z = cupy.asnumpy(y, stream=stream), cupy.asnumpy(z, stream=stream)
        host_total = complex(total.get(stream=stream))
        stream.synchronize()
    want = cpu(2 * x)
    assert rel_err(host_y, want) < 2 * 5e-4
    assert abs(host_total - want.sum()) <= 1e-3 * np.abs(want).sum()
    assert rel_err(host_z, cpu.N(2 * x)) < 2 * 5e-4


@pytest.mark.gpu
def test_gpu_operator_keeps_its_stream_alive(cupy):
    import gc
    s = cupy.cuda.Stream(non_blocking=True)
    with s:
        a = op.diag(np.arange(8.0), dtype=np.complex64, device="cuda")
    del s
    gc.collect()  # the operator holds the stream object, so the stream still exists
    x = cupy.ones(8, np.complex64)
    assert np.allclose(cupy.asnumpy(a(x)), np.arange(8.0))


@pytest.mark.gpu
def test_gpu_weighted_normal_matches_cpu(cupy):
    """A.weighted_normal with cupy weights on a CUDA operator: the same AᴴWA as on the CPU."""
    shape, m, coils = (12, 16), 300, 3
    k = trajectory(23, shape, m)
    enc = fieldft.mri.Encoding(shape, k)
    # the same weights for every coil: one weighted kernel (per-coil weights that differ have no
    # fast form, None, as test_weighted_normal checks)
    w = np.ascontiguousarray(np.broadcast_to(np.random.default_rng(5).uniform(0.2, 2.0, m), (coils, m)))
    maps = crandn(7, (coils,) + shape)
    x = crandn(6, shape)
    cpu = fieldft.mri.sense(enc, maps, eps=1e-9, dtype=np.complex128, toeplitz="on").weighted_normal(w)
    gpu = fieldft.mri.sense(enc, maps, eps=1e-9, dtype=np.complex128, toeplitz="on",
                            device="cuda:0").weighted_normal(cupy.asarray(w))
    got = gpu(cupy.asarray(x))
    assert isinstance(got, cupy.ndarray)
    # two Toeplitz kernels at eps 1e-9, each within 5 eps of AᴴWA
    assert rel_err(cupy.asnumpy(got), cpu(x)) < 1e-8
