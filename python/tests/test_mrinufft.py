"""fieldft as an MRI-NUFFT backend (fieldft.mrinufft), used through MRI-NUFFT's public API the way
its users do: get_operator("fieldft")(samples, shape, ...), op / adj_op / data_consistency,
with_off_resonance_correction, density=True. The references are MRI-NUFFT's own: its "numpy"
backend (an explicit NUDFT matrix, MRInumpy) and its MRIFourierCorrected off-resonance wrapper.
Skipped without MRI-NUFFT; the GPU variants carry the marker gpu."""

import warnings

import numpy as np
import pytest

mrinufft = pytest.importorskip("mrinufft")
import fieldft.mrinufft  # noqa: E402  (registers the backend "fieldft")
from mrinufft import get_operator  # noqa: E402
from mrinufft.operators import MRIFourierCorrected  # noqa: E402

from support import rel_err  # noqa: E402

# MRI-NUFFT's numpy reference builds its NUDFT matrix in complex64 whatever the input (its
# get_fourier_matrix), so it is good to a few 1e-6 relative; fieldft runs at eps 1e-6 in single
# precision (relative l2 about 1e-6 to 1e-5 with float32 rounding). 1e-4 leaves a factor 10.
TOL = 1e-4


@pytest.fixture(autouse=True)
def _quiet():
    # MRI-NUFFT warns when it rescales [-0.5, 0.5) samples to radians; that is its behaviour.
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Samples will be rescaled")
        yield


def radial_2d(shots=12, samples=24):
    return mrinufft.initialize_2D_radial(shots, samples).astype(np.float32)  # (shots, samples, 2) in [-0.5, 0.5)


def random_3d(rng, m=400):
    return rng.uniform(-0.5, 0.5, size=(m, 3)).astype(np.float32)


def crandn(rng, shape, dtype=np.complex64):
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


def vdot(a, b):
    return np.vdot(np.asarray(a).ravel(), np.asarray(b).ravel())


def test_registered_on_import():
    assert "fieldft" in mrinufft.list_backends(available_only=True)
    assert get_operator("fieldft") is fieldft.mrinufft.MRIFieldft
    assert mrinufft.check_backend("fieldft")


@pytest.mark.parametrize("dim", [2, 3])
def test_forward_and_adjoint_match_mrinufft_nudft(rng, dim):
    shape = (16, 12) if dim == 2 else (8, 10, 6)
    samples = radial_2d() if dim == 2 else random_3d(rng)
    op = get_operator("fieldft")(samples, shape)
    ref = get_operator("numpy")(samples, shape)
    x = crandn(rng, shape)
    y = crandn(rng, op.n_samples)
    got = op.op(x)
    assert got.shape == (op.n_samples,) and got.dtype == np.complex64
    assert rel_err(got, ref.op(x)) < TOL
    back = op.adj_op(y)
    assert back.shape == shape and back.dtype == np.complex64
    assert rel_err(back, ref.adj_op(y)) < TOL


@pytest.mark.parametrize("sense", [False, True])
def test_adjointness(rng, sense):
    shape, coils, batches = (16, 16), 3, 2
    samples = radial_2d()
    smaps = crandn(rng, (coils,) + shape) if sense else None
    op = get_operator("fieldft")(samples, shape, n_coils=coils, n_batchs=batches, smaps=smaps, squeeze_dims=False)
    x = crandn(rng, op.img_full_shape)
    y = crandn(rng, op.ksp_full_shape)
    lhs, rhs = vdot(op.op(x), y), vdot(x, op.adj_op(y))
    # Both sides are sums of ~1e4 float32 products; the transforms' adjoint pair is exact up to
    # rounding (fieldft spreads and interpolates with the same kernel), so 1e-5 relative.
    assert abs(lhs - rhs) <= 1e-5 * abs(lhs)


def test_multicoil_sense_matches_mrinufft_nudft(rng):
    shape, coils = (16, 12), 4
    samples = radial_2d()
    smaps = crandn(rng, (coils,) + shape)
    op = get_operator("fieldft")(samples, shape, n_coils=coils, smaps=smaps)
    ref = get_operator("numpy")(samples, shape, n_coils=coils, smaps=smaps)
    x = crandn(rng, shape)
    y = crandn(rng, (coils, op.n_samples))
    assert op.uses_sense and op.op(x).shape == (coils, op.n_samples)
    assert rel_err(op.op(x), ref.op(x)) < TOL
    assert rel_err(op.adj_op(y), ref.adj_op(y)) < TOL


def test_calibrationless_batches_and_coils(rng):
    """n_batchs x n_coils images through one batched transform, each as the single-image NUDFT."""
    shape, coils, batches = (12, 12), 3, 2
    samples = radial_2d()
    op = get_operator("fieldft")(samples, shape, n_coils=coils, n_batchs=batches)
    ref = get_operator("numpy")(samples, shape)
    x = crandn(rng, (batches, coils) + shape)
    y = crandn(rng, (batches, coils, op.n_samples))
    got, back = op.op(x), op.adj_op(y)
    assert got.shape == (batches, coils, op.n_samples) and back.shape == (batches, coils) + shape
    for b in range(batches):
        for c in range(coils):
            assert rel_err(got[b, c], ref.op(x[b, c])) < TOL
            assert rel_err(back[b, c], ref.adj_op(y[b, c])) < TOL


def test_sense_with_batches(rng):
    shape, coils, batches = (12, 10), 2, 3
    samples = radial_2d()
    smaps = crandn(rng, (coils,) + shape)
    op = get_operator("fieldft")(samples, shape, n_coils=coils, n_batchs=batches, smaps=smaps)
    ref = get_operator("numpy")(samples, shape, n_coils=coils, smaps=smaps)
    x = crandn(rng, (batches, 1) + shape)
    y = crandn(rng, (batches, coils, op.n_samples))
    got, back = op.op(x), op.adj_op(y)
    assert got.shape == (batches, coils, op.n_samples) and back.shape == (batches,) + shape
    for b in range(batches):
        assert rel_err(got[b], ref.op(x[b, 0])) < TOL
        assert rel_err(back[b], ref.adj_op(y[b])) < TOL


def test_density_array_weights_the_adjoint(rng):
    shape = (16, 16)
    samples = radial_2d()
    m = samples.shape[0] * samples.shape[1]
    w = rng.uniform(0.5, 2.0, m).astype(np.float32)
    op = get_operator("fieldft")(samples, shape, density=w)
    ref = get_operator("numpy")(samples, shape)
    y = crandn(rng, m)
    assert op.uses_density
    assert rel_err(op.adj_op(y), ref.adj_op(w * y)) < TOL
    x = crandn(rng, shape)
    assert rel_err(op.op(x), ref.op(x)) < TOL  # the forward is not weighted


def test_density_pipe_by_fieldft():
    """density=True is MRI-NUFFT's "pipe" method, which asks the backend: fieldft's Pipe–Menon
    iteration, scaled by MRI-NUFFT's normalisation (the weighted PSF has mean magnitude 1)."""
    shape = (32, 32)
    samples = mrinufft.initialize_2D_radial(32, 64).astype(np.float32)
    op = get_operator("fieldft")(samples, shape, density=True)
    w = np.asarray(op.density)
    assert w.shape == (op.n_samples,) and w.dtype == np.float32 and np.all(np.isfinite(w)) and np.all(w > 0)
    psf = op.adj_op(op.op(np.ones(shape, np.complex64)))
    assert abs(np.mean(np.abs(psf)) - 1) < 1e-3  # MRI-NUFFT's normalisation, up to float32 sums
    # The same call, but density=True goes through MRI-NUFFT's density registry, which rescales the
    # samples to [-0.5, 0.5) in float32 first: rounding of the positions, amplified by 10 steps.
    assert rel_err(fieldft.mrinufft.MRIFieldft.pipe(op.samples, shape), w) < 1e-4
    # A density compensation: the gridding reconstruction A^H(w y) of a phantom, scaled by its
    # least-squares factor, beats the analytic radial ramp |k| on this undersampled trajectory
    # (measured 0.30 against 0.36; without weights 0.71).
    truth = fieldft.mri.shepp_logan(shape).astype(np.complex64)
    plain = get_operator("fieldft")(samples, shape)
    y = plain.op(truth)

    def gridding_error(weights):
        r = plain.adj_op(weights.astype(np.float32) * y)
        return rel_err(np.vdot(r, truth) / np.vdot(r, r) * r, truth)

    ramp = np.maximum(np.linalg.norm(op.samples, axis=1), np.pi / 64)
    assert gridding_error(w) < gridding_error(ramp) < gridding_error(np.ones_like(w))


def test_finufft_backend_density_runs_on_compat_finufft(monkeypatch):
    """MRI-NUFFT's finufft backend estimates densities with finufft's spreadinterponly=1 plans;
    with fieldft.compat.finufft in finufft's place it runs unchanged. Against the real finufft
    (when installed) the weights agree to the difference of the two kernels."""
    import fieldft.compat.finufft as compat
    from mrinufft.operators.interfaces import finufft as backend

    shape = (32, 32)
    samples = mrinufft.initialize_2D_radial(32, 64).astype(np.float32).reshape(-1, 2)  # its pipe takes (M, 2)
    have_finufft = backend.FINUFFT_AVAILABLE
    reference = backend.MRIfinufft.pipe(samples, shape) if have_finufft else None
    monkeypatch.setattr(backend, "Plan", compat.Plan, raising=False)  # absent when finufft is not installed
    monkeypatch.setattr(backend, "FINUFFT_AVAILABLE", True)
    monkeypatch.setattr(backend.MRIfinufft, "available", True)
    w = backend.MRIfinufft.pipe(samples, shape)
    assert w.shape == (samples.shape[0],) and np.all(np.isfinite(w)) and np.all(np.abs(w) > 0)
    if reference is not None:
        # fieldft's kernel (width and shape for eps 1e-6, upsampfac 2) differs from finufft's,
        # and the estimate is the ratio of kernel sums: measured 4 % apart, not rounding.
        assert rel_err(w, reference) < 0.1


@pytest.mark.parametrize("toeplitz", ["on", "off"])
@pytest.mark.parametrize("sense", [False, True])
def test_data_consistency(rng, toeplitz, sense):
    shape, coils = (16, 16), 3
    samples = radial_2d()
    smaps = crandn(rng, (coils,) + shape) if sense else None
    op = get_operator("fieldft")(samples, shape, n_coils=coils, smaps=smaps, toeplitz=toeplitz)
    x = crandn(rng, op.img_full_shape).reshape((shape if sense else (coils,) + shape))
    y = crandn(rng, (coils, op.n_samples))
    naive = op.adj_op(op.op(x) - y)
    # Toeplitz: the point-spread kernel is a type 1 NUFFT at eps 1e-6; float32 FFTs on the 2N
    # grid: 1e-4 relative as for the transforms.
    assert rel_err(op.data_consistency(x, y), naive) < TOL


@pytest.mark.parametrize("toeplitz", ["on", "off"])
@pytest.mark.parametrize("sense", [False, True])
def test_data_consistency_with_density(rng, toeplitz, sense):
    """With density weights D: Aᴴ D (A x - y); with toeplitz "on" through AᴴDA with D in the
    Toeplitz kernel (fieldft.op.Operator.weighted_normal)."""
    shape, coils, batches = (16, 16), 2, 2
    samples = radial_2d()
    w = rng.uniform(0.5, 2.0, samples.shape[0] * samples.shape[1]).astype(np.float32)
    smaps = crandn(rng, (coils,) + shape) if sense else None
    op = get_operator("fieldft")(samples, shape, density=w, n_coils=coils, n_batchs=batches, smaps=smaps,
                                 toeplitz=toeplitz)
    assert (op._operators()["AHDA"] is not None) == (toeplitz == "on")  # which path runs
    x, y = crandn(rng, op.img_full_shape), crandn(rng, op.ksp_full_shape)
    assert rel_err(op.data_consistency(x, y), op.adj_op(op.op(x) - y)) < TOL


def _staircase_field(shape, values_hz):
    """A b0 map (Hz) taking a few distinct values, and MRI-NUFFT interpolators (B, C) that are then
    exact: C[l] the indicator of value l, B[:, l] = exp(2πi f_l t) (MRI-NUFFT's sign)."""
    b0 = np.zeros(shape, np.float32)
    bands = np.array_split(np.arange(shape[0]), len(values_hz))
    for band, v in zip(bands, values_hz):
        b0[band] = v
    c = np.stack([(b0 == v).astype(np.complex64) for v in values_hz])
    return b0, c


@pytest.mark.parametrize("sense", [False, True])
def test_off_resonance_dft_matches_mrinufft_corrected(rng, sense):
    shape, coils = (12, 12), 2
    samples = radial_2d(8, 24)
    shots, per_shot = samples.shape[:2]
    t = (np.arange(per_shot) * 4e-4).astype(np.float32)  # 0 to ~9 ms per readout
    values = [-60.0, 0.0, 45.0, 120.0]
    b0, c = _staircase_field(shape, values)
    b = np.exp(2j * np.pi * np.outer(t, values)).astype(np.complex64)
    smaps = crandn(rng, (coils,) + shape) if sense else None
    n_coils = coils if sense else 1
    op = get_operator("fieldft")(samples, shape, n_coils=n_coils, smaps=smaps)
    corrected = op.with_off_resonance_correction(t, b0, interpolator="fieldft-dft")
    assert isinstance(corrected, fieldft.mrinufft.MRIFieldft) and corrected.field_model == "dft"
    ref = MRIFourierCorrected(get_operator("numpy")(samples, shape, n_coils=n_coils, smaps=smaps), b0_map=b0,
                              readout_time=t, interpolator="mti")
    # Exact interpolators in place of MTI's (MRI-NUFFT 1.5.1 turns a (B, C) tuple argument into a
    # list before it tests for a tuple, so they are set as its attributes, which op/adj_op use).
    ref.B, ref.C = b, c
    x = crandn(rng, shape)
    y = crandn(rng, (n_coils, op.n_samples)).squeeze()
    assert rel_err(corrected.op(x), ref.op(x)) < TOL
    assert rel_err(corrected.adj_op(y), ref.adj_op(y)) < TOL


def test_off_resonance_time_segmentation_and_auto(rng):
    shape = (16, 16)
    samples = radial_2d(8, 32)
    t = (np.arange(samples.shape[1]) * 3e-4).astype(np.float32)
    yy, xx = np.mgrid[:16, :16]
    b0 = (80.0 * np.exp(-((yy - 8) ** 2 + (xx - 6) ** 2) / 20.0)).astype(np.float32)
    op = get_operator("fieldft")(samples, shape)
    exact = op.with_off_resonance_correction(t, b0, interpolator="fieldft-dft")
    tseg = op.with_off_resonance_correction(t, b0, interpolator={"name": "fieldft-tseg", "accuracy": 1e-4})
    auto = op.with_off_resonance_correction(t, b0)
    assert tseg.field_model == "tseg" and auto.field_model in ("dft", "tseg")
    x = crandn(rng, shape)
    y = crandn(rng, op.n_samples)
    # Time segmentation: phase error <= accuracy 1e-4 plus the NUFFT's eps times its
    # amplification; 1e-3 leaves a margin of the amplification (a few).
    assert rel_err(tseg.op(x), exact.op(x)) < 1e-3
    assert rel_err(tseg.adj_op(y), exact.adj_op(y)) < 1e-3
    # auto at the default accuracy 1e-3 (phase) → 1e-2 relative with the same margin.
    assert rel_err(auto.op(x), exact.op(x)) < 1e-2


def test_off_resonance_mrinufft_interpolators_wrap_fieldft(rng):
    """MRI-NUFFT's own interpolators (and R2*) keep MRI-NUFFT's wrapper around the fieldft NUFFT."""
    shape = (12, 12)
    samples = radial_2d(8, 24)
    t = (np.arange(samples.shape[1]) * 4e-4).astype(np.float32)
    b0, _ = _staircase_field(shape, [-30.0, 30.0])
    op = get_operator("fieldft")(samples, shape)
    wrapped = op.with_off_resonance_correction(t, b0, interpolator="svd")
    assert isinstance(wrapped, MRIFourierCorrected)
    exact = op.with_off_resonance_correction(t, b0, interpolator="fieldft-dft")
    x = crandn(rng, shape)
    # MRI-NUFFT's SVD interpolator at its own L: its accuracy, not fieldft's (1e-2 is generous).
    assert rel_err(wrapped.op(x), exact.op(x)) < 1e-2
    with pytest.raises(ValueError, match="R2"):
        op.with_off_resonance_correction(t, b0, r2star_map=np.ones(shape, np.float32), interpolator="fieldft")


def test_float64_samples_give_complex128(rng):
    shape = (12, 12)
    samples = radial_2d().astype(np.float64)
    op = get_operator("fieldft")(samples, shape, eps=1e-10)
    x = crandn(rng, shape, np.complex128)
    assert op.cpx_dtype == np.complex128 and op.op(x).dtype == np.complex128
    ref = get_operator("numpy")(samples, shape)
    assert rel_err(op.op(x), ref.op(x)) < TOL  # the reference is complex64


def test_torch_cpu_tensors(rng):
    torch = pytest.importorskip("torch")
    shape = (12, 12)
    samples = radial_2d()
    op = get_operator("fieldft")(samples, shape)
    x = crandn(rng, shape)
    got = op.op(torch.from_numpy(x))
    assert isinstance(got, torch.Tensor) and got.device.type == "cpu"
    assert rel_err(got.numpy(), op.op(x)) < 1e-6  # the same computation on the same memory layout
    y = op.op(x)
    back = op.adj_op(torch.from_numpy(y))
    assert isinstance(back, torch.Tensor) and tuple(back.shape) == shape
    assert rel_err(back.numpy(), op.adj_op(y)) < 1e-6
    grad = op.data_consistency(torch.from_numpy(x), torch.from_numpy(y))
    assert isinstance(grad, torch.Tensor) and rel_err(grad.numpy(), op.data_consistency(x, y)) < 1e-6


def test_lipschitz_and_pinv_solver_run(rng):
    """MRI-NUFFT's generic tools on the fieldft operator: the power method changes coils and
    maps for a while (the operator rebuilds itself) and restores them."""
    shape, coils = (12, 12), 2
    samples = radial_2d()
    smaps = crandn(rng, (coils,) + shape)
    op = get_operator("fieldft")(samples, shape, n_coils=coils, smaps=smaps)
    ref = get_operator("numpy")(samples, shape)
    lip = op.get_lipschitz_cst(max_iter=20)
    assert op.uses_sense and op.n_coils == coils
    assert abs(lip - ref.get_lipschitz_cst(max_iter=20)) < 0.05 * lip  # power-method iterates, not exact


def test_stacked_backend_on_fieldft(rng):
    """MRI-NUFFT's stack-of-2D-NUFFTs operator takes any backend by name: "stacked-fieldft"
    agrees with "stacked-finufft" (the real finufft; skipped without it)."""
    if not mrinufft.check_backend("finufft"):
        pytest.skip("finufft not installed")
    shape = (12, 12, 6)
    plane = mrinufft.initialize_2D_radial(8, 16).reshape(-1, 2).astype(np.float32)
    kz = np.linspace(-0.5, 0.5, shape[2], endpoint=False).astype(np.float32)
    samples = np.concatenate([np.column_stack([plane, np.full(len(plane), z, np.float32)]) for z in kz])
    ours = get_operator("stacked-fieldft")(samples, shape, n_coils=1, smaps=None)
    theirs = get_operator("stacked-finufft")(samples, shape, n_coils=1, smaps=None)
    x = crandn(rng, shape)
    y = ours.op(x)
    # two NUFFTs at eps 1e-6 in single precision: 1e-4 as against the NUDFT
    assert rel_err(y, theirs.op(x)) < TOL
    assert rel_err(ours.adj_op(y), theirs.adj_op(y)) < TOL


def test_update_samples(rng):
    shape = (12, 12)
    op = get_operator("fieldft")(radial_2d(), shape, density=True)
    other = random_3d(rng, 300)[:, :2]
    op.update_samples(other)
    assert op.n_samples == 300 and np.asarray(op.density).shape == (300,)  # recomputed by its method
    x = crandn(rng, shape)
    assert rel_err(op.op(x), get_operator("numpy")(other, shape).op(x)) < TOL


def test_errors():
    samples = radial_2d()
    with pytest.raises(ValueError, match="2D or 3D"):
        get_operator("fieldft")(samples[..., :1].reshape(-1, 1), (16,))
    with pytest.raises(ValueError, match="coordinates per point"):
        get_operator("fieldft")(samples, (16, 16, 8))
    with pytest.raises(ValueError, match="toeplitz"):
        get_operator("fieldft")(samples, (16, 16), toeplitz="yes")
    with pytest.raises(ValueError, match="field_model"):
        get_operator("fieldft")(samples, (16, 16), field_model="fast")
    op = get_operator("fieldft")(samples, (16, 16))
    with pytest.raises(ValueError, match="samples"):
        op.adj_op(np.zeros(7, np.complex64))
    with pytest.raises(ValueError, match="shape"):
        op.op(np.zeros((8, 8), np.complex64))


# ---------------------------------------------------------------------------------------------
# GPU: the operator on a CUDA device, with cupy arrays, torch CUDA tensors and numpy arrays.

@pytest.mark.gpu
def test_gpu_cupy_matches_cpu(rng, cupy):
    shape, coils = (16, 16), 3
    samples = radial_2d()
    smaps = crandn(rng, (coils,) + shape)
    cpu = get_operator("fieldft")(samples, shape, n_coils=coils, smaps=smaps)
    gpu = get_operator("fieldft")(cupy.asarray(samples), shape, n_coils=coils, smaps=cupy.asarray(smaps))
    assert gpu.device.startswith("cuda")
    x = crandn(rng, shape)
    y = crandn(rng, (coils, cpu.n_samples))
    got = gpu.op(cupy.asarray(x))
    assert isinstance(got, cupy.ndarray)
    assert rel_err(cupy.asnumpy(got), cpu.op(x)) < TOL
    back = gpu.adj_op(cupy.asarray(y))
    assert isinstance(back, cupy.ndarray)
    assert rel_err(cupy.asnumpy(back), cpu.adj_op(y)) < TOL
    # numpy in, numpy out, computed on the GPU
    assert isinstance(gpu.op(x), np.ndarray) and rel_err(gpu.op(x), cpu.op(x)) < TOL
    assert rel_err(cupy.asnumpy(gpu.data_consistency(cupy.asarray(x), cupy.asarray(y))),
                   cpu.data_consistency(x, y)) < TOL


@pytest.mark.gpu
def test_gpu_torch_density_and_field(rng, torch):
    shape = (16, 16)
    samples = radial_2d()
    t = (np.arange(samples.shape[1]) * 3e-4).astype(np.float32)
    b0, _ = _staircase_field(shape, [-40.0, 0.0, 50.0])
    cpu = get_operator("fieldft")(samples, shape, density=True)
    gpu = get_operator("fieldft")(samples, shape, density=True, device="cuda")
    # The GPU's Pipe–Menon iteration sums in another order: float32 rounding, amplified by 10
    # iterations (1e-5 on the CPU between two paths, test_density_pipe_by_fieldft), so 1e-3.
    assert rel_err(np.asarray(gpu.density), np.asarray(cpu.density)) < 1e-3
    y = crandn(rng, cpu.n_samples)
    back = gpu.adj_op(torch.from_numpy(y).cuda())
    assert isinstance(back, torch.Tensor) and back.is_cuda
    assert rel_err(back.cpu().numpy(), cpu.adj_op(y)) < TOL
    for model in ("fieldft-dft", "fieldft-tseg"):
        g = gpu.with_off_resonance_correction(t, b0, interpolator=model)
        c = cpu.with_off_resonance_correction(t, b0, interpolator=model)
        x = crandn(rng, shape)
        assert g.device.startswith("cuda")
        assert rel_err(g.op(torch.from_numpy(x).cuda()).cpu().numpy(), c.op(x)) < TOL
