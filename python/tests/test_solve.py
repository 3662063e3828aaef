"""fieldft.solve and fieldft.recon: conjugate gradients on fieldft.op operators and the one-call
reconstruction, against dense least-squares solutions computed with numpy (float64) on problems
small enough to write the matrix down, and on a simulated phantom with a known truth. GPU cases
(marker gpu) run the same solves on cupy arrays and compare with the host."""

import math

import numpy as np
import pytest

import fieldft
from fieldft import mri, op, solve
from support import rel_err

N = 12
COILS = 3


def geometry(seed=0):
    """A small 2D problem: an N×N image, COILS smooth coil maps, M random samples in cycles/FOV
    (more samples than unknowns, so the least-squares solution is unique)."""
    rng = np.random.default_rng(seed)
    m = 2 * N * N
    k = rng.uniform(-N / 2, N / 2, (m, 2))
    y, x = np.meshgrid(np.arange(N) - N // 2, np.arange(N) - N // 2, indexing="ij")
    maps = np.stack([np.exp(-((x - 6 * math.cos(a)) ** 2 + (y - 6 * math.sin(a)) ** 2) / 60.0)
                     * np.exp(0.2j * x * math.cos(a)) for a in 2 * np.pi * np.arange(COILS) / COILS])
    return k, maps


def dense(k, maps):
    """The SENSE matrix of the encoding model s_j = Σ_v m_v exp(-i 2π k_j·r_v), r = (i - N/2)/N,
    stacked over coils: (COILS·M, N²) in float64, rows in (coil, sample) order."""
    r = (np.arange(N) - N // 2) / N
    ry, rx = np.meshgrid(r, r, indexing="ij")
    f = np.exp(-2j * np.pi * (np.outer(k[:, 0], ry.ravel()) + np.outer(k[:, 1], rx.ravel())))
    return np.concatenate([f * maps[c].ravel()[None, :] for c in range(COILS)])


def sense(k, maps, dtype, device="cpu"):
    enc = mri.Encoding((N, N), k)
    return mri.DftEncoding(enc, batch=COILS, dtype=dtype, device=device) @ op.diag_expand(maps, dtype=dtype,
                                                                                           device=device)


def data(seed, shape, dtype):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


# float32 CG stalls near 1e-6 relative residual; the problem is well conditioned (2× oversampled
# random k-space, smooth maps), so 60 iterations reach the float64 least-squares solution to a
# few times float32 resolution; complex128 to 1e-9.
TOL = {np.complex64: 2e-4, np.complex128: 1e-9}


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_cg_reaches_least_squares(dtype):
    k, maps = geometry()
    a = sense(k, maps, dtype)
    y = data(1, a.oshape, dtype)
    x, info = solve.cg(a, y, max_iter=60, tol=1e-12 if dtype == np.complex128 else 1e-7, info=True)
    want = np.linalg.lstsq(dense(k, maps), y.astype(np.complex128).ravel(), rcond=None)[0].reshape(N, N)
    assert x.shape == (N, N) and x.dtype == dtype
    assert rel_err(x, want) < TOL[dtype]
    assert info.iterations <= 60 and info.residual <= 1e-6


def test_cg_weights_and_tikhonov():
    dtype = np.complex128
    k, maps = geometry(2)
    a = sense(k, maps, dtype)
    y = data(3, a.oshape, dtype)
    w = np.random.default_rng(4).uniform(0.2, 2.0, a.oshape)
    lam = 0.5
    x = solve.cg(a, y, weights=w, lam=lam, max_iter=200, tol=1e-13)
    m = dense(k, maps)
    wf = w.ravel()
    want = np.linalg.solve(m.conj().T @ (wf[:, None] * m) + lam * np.eye(N * N), m.conj().T @ (wf * y.ravel()))
    assert rel_err(x, want.reshape(N, N)) < 1e-9


def test_cg_initial_guess_is_not_modified_and_is_used():
    dtype = np.complex128
    k, maps = geometry(5)
    a = sense(k, maps, dtype)
    truth = data(6, (N, N), dtype)
    y = a(truth)
    x0 = truth.copy()
    x, info = solve.cg(a, y, x0, max_iter=5, tol=1e-12, info=True)
    assert np.array_equal(x0, truth)        # the caller's guess is left alone
    assert info.iterations == 0             # starting at the solution: r0 = 0
    assert rel_err(x, truth) < 1e-12


def test_cg_callback_reports_and_stops():
    dtype = np.complex64
    k, maps = geometry(7)
    a = sense(k, maps, dtype)
    y = data(8, a.oshape, dtype)
    reports = []

    def cb(r):
        reports.append(r)
        return r.iteration < 3

    x, info = solve.cg(a, y, max_iter=30, callback=cb, info=True)
    assert [r.iteration for r in reports] == [1, 2, 3]
    assert info.stopped and info.iterations == 3
    assert all(0 <= r.residual < 1 for r in reports) and reports[0].seconds <= reports[-1].seconds

    def boom(r):
        raise RuntimeError("stop from the callback")

    with pytest.raises(RuntimeError, match="stop from the callback"):
        solve.cg(a, y, callback=boom)


def test_cg_residuals_in_batches():
    """check_every = 4: the same reports (iteration and residual) and the same x as one round trip
    per iteration; a stop asked at iteration 3 takes effect at the batch's end (iteration 4)."""
    dtype = np.complex64
    k, maps = geometry(7)
    a = sense(k, maps, dtype)
    y = data(8, a.oshape, dtype)
    seen = {1: [], 4: []}
    xs = {e: solve.cg(a, y, max_iter=10, check_every=e, callback=lambda r, e=e: seen[e].append(r)) for e in seen}
    assert [(r.iteration, r.residual) for r in seen[4]] == [(r.iteration, r.residual) for r in seen[1]]
    assert [r.iteration for r in seen[1]] == list(range(1, 11))
    np.testing.assert_array_equal(xs[4], xs[1])
    reports = []
    x, info = solve.cg(a, y, max_iter=10, check_every=4, callback=lambda r: reports.append(r) or r.iteration < 3,
                       info=True)
    assert [r.iteration for r in reports] == [1, 2, 3]
    assert info.stopped and info.iterations == 4
    with pytest.raises(fieldft.InvalidArgumentError, match="check_every"):
        solve.cg(a, y, check_every=0, callback=lambda r: None)


def test_cg_bad_input():
    dtype = np.complex64
    k, maps = geometry(9)
    a = sense(k, maps, dtype)
    y = data(10, a.oshape, dtype)
    with pytest.raises(fieldft.InvalidArgumentError, match="max_iterations|iteration"):
        solve.cg(a, y, max_iter=0)
    with pytest.raises(fieldft.InvalidArgumentError, match="lambda|λ|lam"):
        solve.cg(a, y, lam=-1.0)
    with pytest.raises(fieldft.InvalidArgumentError, match="negative"):
        solve.cg(a, y, weights=-np.ones(a.oshape, np.float32))
    with pytest.raises(fieldft.InvalidArgumentError, match="NaN"):
        w = np.ones(a.oshape, np.float32)
        w[1, 2] = np.nan
        solve.cg(a, y, weights=w)
    with pytest.raises(fieldft.ShapeMismatchError, match="expected"):
        solve.cg(a, y[:, :-1])
    with pytest.raises(TypeError, match="dtype"):
        solve.cg(a, y.astype(np.complex128))
    with pytest.raises(fieldft.NonFiniteError):
        yy = y.copy()
        yy[0, 0] = np.nan
        solve.cg(a, yy)


def test_recon_known_truth():
    """A disc phantom sampled by a dense spiral (noise-free, exact DFT simulation) comes back from
    fieldft.recon within the NRMSE that CG reaches in 40 iterations on this well-sampled problem."""
    n, coils = 32, 4
    y0, x0 = np.meshgrid(np.arange(n) - n // 2, np.arange(n) - n // 2, indexing="ij")
    truth = ((x0 ** 2 + y0 ** 2 < (0.35 * n) ** 2) * (1 + 0.5 * (x0 > 0))).astype(np.complex64)
    maps = np.stack([np.exp(-((x0 - 14 * math.cos(a)) ** 2 + (y0 - 14 * math.sin(a)) ** 2) / 400.0)
                     for a in 2 * np.pi * np.arange(coils) / coils]).astype(np.complex64)
    t = np.arange(600) / 600
    k = np.concatenate([np.stack([(n / 2) * t * np.sin(2 * np.pi * (4 * t + a / 12)),
                                  (n / 2) * t * np.cos(2 * np.pi * (4 * t + a / 12))], 1) for a in range(12)])
    enc = mri.Encoding((n, n), k)
    e = mri.DftEncoding(enc, batch=coils, dtype=np.complex128) @ op.diag_expand(maps, dtype=np.complex128)
    y = e(truth.astype(np.complex128)).astype(np.complex64)
    x, info = fieldft.recon(y, k, (n, n), maps, iterations=40, progress=False, info=True)
    assert x.shape == (n, n) and x.dtype == np.complex64 and info.iterations == 40
    # A sharp-edged disc is not band-limited: CG on the spiral's support converges to the
    # band-limited least-squares image; the Gibbs ringing at the edges bounds the NRMSE (~0.1).
    assert rel_err(x, truth) < 0.15
    xd = fieldft.recon(y, k, (n, n), maps, iterations=40, encoding="dft", progress=False)
    assert rel_err(x, xd) < 1e-3  # NUFFT (eps 1e-4) and exact DFT give the same image
    # Without maps they are estimated from the data (RSS): the image is then the truth times the
    # RSS of the true maps (a smooth real weight) up to the calibration's resolution; compare the
    # magnitude after removing that weight inside the disc.
    xe = fieldft.recon(y, k, (n, n), iterations=40, progress=False)
    rss = np.sqrt((np.abs(maps) ** 2).sum(0))
    inside = np.abs(truth) > 0
    inner = (x0 ** 2 + y0 ** 2 < (0.25 * n) ** 2) & inside
    ratio = np.abs(xe[inner]) / (np.abs(truth[inner]) * rss[inner])
    # Gibbs ringing of the sharp disc and of the half-plane step dominate (as for x above);
    # the median ratio is the overall scale, the spread is the ringing.
    assert np.median(np.abs(ratio / np.median(ratio) - 1)) < 0.1


def test_recon_bad_input():
    k, maps = geometry(11)
    y = data(12, (COILS, k.shape[0]), np.complex64)
    with pytest.raises(fieldft.ShapeMismatchError, match="maps"):
        fieldft.recon(y, k, (N, N), maps[:2], progress=False)
    with pytest.raises(fieldft.InvalidArgumentError, match="maps='magic'"):
        fieldft.recon(y, k, (N, N), "magic", progress=False)
    with pytest.raises(fieldft.InvalidArgumentError, match="iterations"):
        fieldft.recon(y, k, (N, N), maps, iterations=0, progress=False)
    with pytest.raises(fieldft.InvalidArgumentError, match="lam"):
        fieldft.recon(y, k, (N, N), maps, lam=-1, progress=False)
    with pytest.raises(fieldft.InvalidArgumentError, match="method"):
        fieldft.recon(y, k, (N, N), maps, method="magic", progress=False)
    with pytest.raises(fieldft.ShapeMismatchError, match="samples"):
        fieldft.recon(y[:, :-1], k, (N, N), maps, progress=False)


@pytest.mark.gpu
def test_gpu_cg_matches_cpu():
    cupy = pytest.importorskip("cupy")
    dtype = np.complex64
    k, maps = geometry(13)
    cpu = sense(k, maps, dtype)
    gpu = sense(k, maps, dtype, device="cuda:0")
    y = data(14, cpu.oshape, dtype)
    x_cpu = solve.cg(cpu, y, max_iter=20)
    x_gpu = solve.cg(gpu, cupy.asarray(y), max_iter=20)
    assert isinstance(x_gpu, cupy.ndarray)
    # 20 float32 CG iterations on two machines: the iterates agree to float32 rounding amplified
    # by the iteration (well conditioned: a few 1e-5).
    assert rel_err(cupy.asnumpy(x_gpu), x_cpu) < 1e-4
    xr = fieldft.recon(cupy.asarray(y), k, (N, N), maps, iterations=20, encoding="dft", progress=False)
    assert isinstance(xr, cupy.ndarray) and rel_err(cupy.asnumpy(xr), x_cpu) < 1e-4


# ---------------------------------------------------------------------------------------------
# The regularised solvers (the C++ tests, tests/solve/*, cover them in depth; these check the
# Python face on problems with known answers).

def test_fista_identity_is_soft_thresholding():
    """A = I, Ψ = I: the minimiser of ½‖x − y‖² + λ‖x‖₁ is the complex soft threshold of y, and
    FISTA with L = 1 reaches it in one step."""
    dtype = np.complex128
    a = op.identity((6, 5), dtype=dtype)
    y = data(20, (6, 5), dtype)
    lam = 0.8
    x, info = solve.fista(a, y, lam=lam, lipschitz=1.0, max_iter=5, info=True)
    mag = np.abs(y)
    want = np.where(mag > lam, (1 - lam / np.maximum(mag, 1e-300)) * y, 0)
    assert rel_err(x, want) < 1e-12 and info.iterations == 5


def test_pwls_quadratic_beta0_is_least_squares():
    dtype = np.complex128
    k, maps = geometry(21)
    a = sense(k, maps, dtype)
    y = data(22, a.oshape, dtype)
    d = op.finite_difference((N, N), dtype=dtype)
    x = solve.pwls_pcg(a, y, d, beta=0.0, max_iter=200, tol=1e-14)
    want = np.linalg.lstsq(dense(k, maps), y.ravel(), rcond=None)[0].reshape(N, N)
    assert rel_err(x, want) < 1e-8


@pytest.mark.parametrize("method", ["pwls", "tv", "l1-wavelet"])
def test_regularised_objective_decreases(method):
    """Each regularised solver, through fieldft.recon, reports an objective that ends below
    where it started (PWLS-PCG and MFISTA never increase it; ADMM's and FISTA's are not monotone
    step by step, so only first against last is asserted for them)."""
    k, maps = geometry(23)
    a = sense(k, maps, np.complex64)
    truth = np.zeros((N, N), np.complex64)
    truth[3:9, 4:10] = 1
    y = a(truth)
    reports = []
    x, info = fieldft.recon(y, k, (N, N), maps, method=method, lam=0.05, iterations=15, progress=False,
                            callback=reports.append, info=True, levels=2)
    objectives = [r.objective for r in reports]
    assert len(objectives) == 15 and all(np.isfinite(objectives))
    assert objectives[-1] < objectives[0]
    if method == "pwls":
        assert all(b <= a_ * (1 + 1e-6) for a_, b in zip(objectives, objectives[1:]))
    assert rel_err(x, truth) < 0.5


def test_regularised_bad_input():
    k, maps = geometry(24)
    a = sense(k, maps, np.complex64)
    y = data(25, a.oshape, np.complex64)
    d = op.finite_difference((N, N))
    with pytest.raises(fieldft.InvalidArgumentError, match="potential"):
        solve.pwls_pcg(a, y, d, beta=1.0, potential="huber")
    with pytest.raises(fieldft.InvalidArgumentError, match="delta|δ"):
        solve.pwls_pcg(a, y, d, beta=1.0, potential="hyperbolic", delta=0.0)
    with pytest.raises(fieldft.InvalidArgumentError, match="lambda|λ"):
        solve.fista(a, y, lam=-1.0)
    with pytest.raises(fieldft.InvalidArgumentError, match="rho|ρ"):
        solve.admm(a, y, d, lam=1.0, rho=0.0)
    with pytest.raises(fieldft.ShapeMismatchError, match="image shape"):
        solve.admm(a, y, op.finite_difference((N, N + 1)), lam=1.0)
    with pytest.raises(fieldft.InvalidArgumentError, match="iteration"):
        solve.fista(a, y, lam=1.0, max_iter=0)


def test_max_eigenvalue_of_a_diagonal():
    dtype = np.complex128
    dvals = np.linspace(0.5, 3.0, 20)
    n = op.diag(dvals.astype(dtype))
    assert abs(solve.max_eigenvalue(n, 200) - 3.0) < 1e-3


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_cg_with_and_without_toeplitz_give_the_same_image(dtype):
    """The SENSE normal operator through the Toeplitz kernel or through the NUFFT pair: both are
    AᴴA to the NUFFT's eps, so 20 CG iterations give the same image to a few eps (the iteration
    amplifies the operators' difference by at most the condition number seen in 20 steps, a
    few here: 2× oversampled random k-space, smooth maps). Measured: 0.12·eps (float), 0.25·eps
    (double)."""
    k, maps = geometry(30)
    eps = 1e-4 if dtype == np.complex64 else 1e-9
    enc = mri.Encoding((N, N), k)
    y = data(31, (COILS, k.shape[0]), dtype)
    images = []
    for toeplitz in ("on", "off"):
        f = mri.NufftEncoding(enc, eps, batch=COILS, dtype=dtype, toeplitz=toeplitz)
        assert f.toeplitz_info["used"] == (toeplitz == "on")
        a = f @ op.diag_expand(maps, dtype=dtype)
        images.append(solve.cg(a, y, max_iter=20))
    assert rel_err(images[0], images[1]) < 5 * eps
    assert not math.isnan(mri.NufftEncoding(enc, eps, batch=COILS, dtype=dtype, toeplitz="on").prepare_normal())


@pytest.mark.parametrize("method", ["cg", "pwls", "l1-wavelet", "tv"])
def test_recon_unnormalised_maps(method):
    """Coil maps of magnitude ~1e5 (scanner units, not normalised): in float32 the solvers'
    scalars overflowed (pᴴAᴴAp ~ |S|⁶|y|² > 3.4e38) and fieldft.recon returned NaN. It now solves
    in normalised units: the image equals the one from the same data with maps scaled to ~1 (and
    the data with them), mapped back. λ (and δ, ρ) are in the user's units, so the scaled problem
    takes λ·a² (Tikhonov, hyperbolic) or λ·a·b (ℓ1, TV) for maps ×a and data ×b; δ is in image
    units (×b/a)."""
    n, coils = 24, 4
    shape = (n, n)
    truth = mri.shepp_logan(shape).astype(np.complex64)
    k = mri.spiral(shape).reshape(-1, 2)
    maps = mri.coil_maps(shape, coils).astype(np.complex64)
    y = np.asarray(mri.sense(mri.Encoding(shape, k), maps, eps=1e-6)(truth))
    a, b = 1e5, 3e4  # maps ×a; the data of those maps are y·a, then ×b/a of other units
    lam = {"cg": 1e-2, "pwls": 1e-2, "l1-wavelet": 1e-3, "tv": 1e-3}[method]
    big_lam = lam * a * a if method in ("cg", "pwls") else lam * a * b
    opts = dict(method=method, iterations=15, progress=False, info=True)
    x1, r1 = fieldft.recon(y, k, shape, maps, lam=lam, **opts)
    seen = []
    x2, r2 = fieldft.recon(y * b, k, shape, maps * a, lam=big_lam, delta=0.01 * b / a,
                           callback=lambda r: seen.append(r), **opts)
    assert np.all(np.isfinite(x2)) and np.all(np.isfinite([r.residual for r in seen]))
    # The same problem in other units: equal up to float32 rounding of the scaled arrays (each
    # rounding ~6e-8, amplified by the iterations' conditioning; 1e-3 still fails any wrong
    # power of a or b in the λ mapping, which changes the image by O(1)).
    assert rel_err(x2 * a / b, x1) < 1e-3
    assert r2.iterations == r1.iterations
    if math.isfinite(r1.objective):  # reported in the caller's units: ×b² like the data term
        assert abs(r2.objective / (b * b * r1.objective) - 1) < 1e-3
    if method == "cg":
        assert rel_err(x1, truth) < 0.2  # and it is a reconstruction, not just two equal images
