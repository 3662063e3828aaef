"""Field maps and multi-shot phase in Python: fieldft.mri.TimeSegmentedEncoding and its report,
sense(kind="tseg"), pcsense, the simulation helpers shot_phase_maps and shot_labels, and
fieldft.recon with field_map / times / shots / phase_maps / encoding=.

Tolerances (the C++ suite sweeps the accuracy itself; these check the Python face):
- time segmentation against the exact DFT within the requested accuracy: `accuracy` bounds the
  worst-case relative phase error of each entry of the model, and the l2 error of a whole
  operator sits 30-100x below it (docs/architecture.md, "Time segmentation"); the NUFFT's eps is
  far below it here;
- adjointness |<Ax, y> - <x, Aᴴy>| / (|Ax| |y|): the exact DFT to rounding (1e-5 complex64,
  1e-10 complex128); NUFFT-based operators 4·eps (the forward and adjoint NUFFT each within eps
  of the model, as the C++ battery allows);
- the model shot by shot in numpy: exact DFT, rounding only;
- reconstructions: each bound says what it rests on.
A layout, sign, conjugation or shot-order mistake gives O(1) errors, far above every bound."""

import math

import numpy as np
import pytest

import fieldft
from fieldft import mri
from support import rel_err

DTYPES = [np.complex64, np.complex128]
EXACT = {np.complex64: 1e-5, np.complex128: 1e-10}
NUFFT_EPS = {np.complex64: 1e-5, np.complex128: 1e-9}
ACCURACY = 1e-3

SHAPE = (16, 20)
COILS = 3


def model(shape, k, x, field=None, times=None):
    """s_j = Σ_v x_v exp(-i(2π k_j·r_v + Δω_v t_j)), r_d = (i_d - N_d//2)/N_d, k columns in
    image-axis order."""
    r = np.meshgrid(*[(np.arange(n) - n // 2) / n for n in shape], indexing="ij")
    phase = 2 * np.pi * sum(np.outer(k[:, d], r[d].ravel()) for d in range(len(shape)))
    if field is not None:
        phase = phase + np.outer(times, field.ravel())
    return np.exp(-1j * phase) @ x.ravel()


def field_problem(shape=SHAPE, interleaves=3, dwell=2e-5, max_hz=80.0):
    """A spiral with readout times (dwell s per sample) and a smooth ±max_hz field map."""
    k = mri.spiral(shape, interleaves=interleaves)
    t = mri.readout_times(k, dwell)
    f = mri.field_map(shape, max_hz=max_hz, seed=3)
    return k.reshape(-1, 2), t.reshape(-1), f


def image(shape=SHAPE):
    n = shape[-1]
    return mri.shepp_logan(shape) * np.exp(0.4j * np.arange(n) / n)


def random(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


# ---------------------------------------------------------------------------------------------
# TimeSegmentedEncoding.

@pytest.mark.parametrize("dtype", DTYPES)
def test_tseg_matches_the_dft(dtype):
    k, t, f = field_problem()
    enc = mri.Encoding(SHAPE, k, times=t, field=f)
    ts = mri.TimeSegmentedEncoding(enc, accuracy=ACCURACY, eps=NUFFT_EPS[dtype], dtype=dtype)
    dft = mri.DftEncoding(enc, dtype=dtype)
    assert ts.ishape == SHAPE and ts.oshape == (k.shape[0],)
    x = image().astype(dtype)
    want = model(SHAPE, k, image(), f, t)
    assert rel_err(dft(x), want) < EXACT[dtype]
    assert rel_err(ts(x), want) < ACCURACY
    y = random(k.shape[0], dtype, 1)
    assert rel_err(ts.H(y), dft.H(y)) < ACCURACY
    # Without the field the same data are far off: the field matters at this size.
    plain = mri.NufftEncoding(mri.Encoding(SHAPE, k), eps=NUFFT_EPS[dtype], dtype=dtype)
    assert rel_err(plain(x), want) > 20 * ACCURACY  # measured 0.08
    # batch: B images through one NUFFT of batch L·B, each as alone.
    tb = mri.TimeSegmentedEncoding(enc, accuracy=ACCURACY, eps=NUFFT_EPS[dtype], batch=2, dtype=dtype)
    assert tb.ishape == (2,) + SHAPE and tb.oshape == (2, k.shape[0])
    xb = np.stack([x, 2j * x])
    yb = tb(xb)
    assert rel_err(yb[0], ts(x)) < 10 * NUFFT_EPS[dtype] and rel_err(yb[1], 2j * ts(x)) < 10 * NUFFT_EPS[dtype]


def test_tseg_report():
    k, t, f = field_problem()
    enc = mri.Encoding(SHAPE, k, times=t, field=f)
    ts = mri.TimeSegmentedEncoding(enc, accuracy=ACCURACY)
    r = ts.report
    assert set(r) >= {"L", "error", "accuracy", "forced", "reason", "interpolator", "amplification",
                      "distinct_times", "field_bins", "design_seconds"}
    assert r["L"] >= 2 and ts.segments == r["L"]
    assert 0 < r["error"] <= ACCURACY and r["accuracy"] == ACCURACY
    assert r["forced"] is False and r["interpolator"] == "least-squares"
    assert r["amplification"] >= 1 and r["distinct_times"] == t.size // 3  # one readout's times
    assert isinstance(r["reason"], str) and r["reason"]
    assert "TimeSegmented" in ts.name
    # The plan alone gives the same choice; Hanning needs more segments for a looser accuracy.
    assert mri.plan_time_segmentation(enc, accuracy=ACCURACY)["L"] == r["L"]
    hann = mri.plan_time_segmentation(enc, accuracy=5e-2, interpolator="hanning")
    assert hann["interpolator"] == "hanning" and hann["error"] <= 5e-2
    # Forced L: reported, not required.
    forced = mri.TimeSegmentedEncoding(enc, segments=2).report
    assert forced["L"] == 2 and forced["forced"] is True and forced["error"] > ACCURACY  # measured 0.18
    # No field map: L = 1, exact.
    assert mri.TimeSegmentedEncoding(mri.Encoding(SHAPE, k, times=t)).report["L"] == 1


def test_tseg_bad_input():
    k, t, f = field_problem(dwell=2e-4)  # long readouts: tens of radians
    enc = mri.Encoding(SHAPE, k, times=t, field=f)
    with pytest.raises(fieldft.InvalidArgumentError, match="accuracy"):
        mri.TimeSegmentedEncoding(enc, accuracy=1e-4, max_segments=2)
    with pytest.raises(fieldft.InvalidArgumentError, match="accuracy"):
        mri.TimeSegmentedEncoding(enc, accuracy=-1)
    with pytest.raises(fieldft.InvalidArgumentError, match="max_segments"):
        mri.TimeSegmentedEncoding(enc, max_segments=5000)
    with pytest.raises(fieldft.InvalidArgumentError, match="interpolator"):
        mri.TimeSegmentedEncoding(enc, interpolator="cubic")
    with pytest.raises(TypeError, match="unknown option"):
        mri.TimeSegmentedEncoding(enc, modeord=1)


@pytest.mark.parametrize("dtype", DTYPES)
def test_sense_tseg_matches_dft(dtype):
    k, t, f = field_problem()
    enc = mri.Encoding(SHAPE, k, times=t, field=f)
    maps = mri.coil_maps(SHAPE, COILS, normalize=True)
    x = image().astype(dtype)
    ts = mri.sense(enc, maps, kind="tseg", accuracy=ACCURACY, eps=NUFFT_EPS[dtype], dtype=dtype)
    dft = mri.sense(enc, maps, kind="dft", dtype=dtype)
    assert ts.oshape == (COILS, k.shape[0])
    assert rel_err(ts(x), dft(x)) < ACCURACY
    y = random(ts.oshape, dtype, 2)
    assert rel_err(ts.H(y), dft.H(y)) < ACCURACY
    with pytest.raises(fieldft.InvalidArgumentError, match="tseg|kTimeSegmented"):
        mri.sense(enc, maps)  # kind "nufft" with a field map names the fix


# ---------------------------------------------------------------------------------------------
# Simulation helpers for multi-shot data.

def test_shot_phase_maps_and_labels():
    p = mri.shot_phase_maps(SHAPE, 4, max_phase=2.5, seed=7)
    assert p.shape == (4,) + SHAPE and p.dtype == np.float64
    assert np.allclose(np.abs(p).reshape(4, -1).max(1), 2.5)
    assert np.array_equal(p, mri.shot_phase_maps(SHAPE, 4, max_phase=2.5, seed=7))
    k = mri.spiral(SHAPE, interleaves=6, samples=10)
    labels = mri.shot_labels(k, 3)
    assert labels.shape == (6, 10) and labels.dtype == np.int32
    assert np.array_equal(labels[:, 0], [0, 1, 2, 0, 1, 2]) and np.all(labels == labels[:, :1])
    k3 = mri.spiral((2,) + SHAPE, interleaves=4, samples=5)
    l3 = mri.shot_labels(k3, 2)
    assert l3.shape == (2, 4, 5) and np.array_equal(l3[1], l3[0])
    with pytest.raises(fieldft.InvalidArgumentError, match="shots"):
        mri.shot_labels(k, 7)
    with pytest.raises(fieldft.ShapeMismatchError, match="k has shape"):
        mri.shot_labels(k.reshape(-1, 2), 2)
    with pytest.raises(fieldft.InvalidArgumentError, match="max_phase"):
        mri.shot_phase_maps(SHAPE, 2, max_phase=-1)


# ---------------------------------------------------------------------------------------------
# pcSENSE.

def shot_problem(shots=3, field=False):
    k = mri.spiral(SHAPE, interleaves=6, samples=30)
    labels = mri.shot_labels(k, shots).reshape(-1)
    t = mri.readout_times(k, 2e-5).reshape(-1) if field else None
    f = mri.field_map(SHAPE, max_hz=60) if field else None
    enc = mri.Encoding(SHAPE, k, times=t, field=f, shots=labels)
    return enc, k.reshape(-1, 2), labels, t, f


@pytest.mark.parametrize("dtype", DTYPES)
def test_pcsense_matches_the_model_shot_by_shot(dtype):
    enc, k, labels, t, f = shot_problem(field=True)
    maps = mri.coil_maps(SHAPE, COILS)
    phase = mri.shot_phase_maps(SHAPE, 3, seed=4)
    a = mri.pcsense(enc, maps, phase, kind="dft", dtype=dtype)
    assert a.ishape == SHAPE and a.oshape == (COILS, k.shape[0])
    x = image()
    y = a(x.astype(dtype))
    want = np.zeros((COILS, k.shape[0]), complex)
    for s in range(3):
        j = labels == s
        for c in range(COILS):
            want[c, j] = model(SHAPE, k[j], maps[c] * np.exp(1j * phase[s]) * x, f, t[j])
    assert rel_err(y, want) < EXACT[dtype]


@pytest.mark.parametrize("kind", ["nufft", "dft", "tseg"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_pcsense_adjointness(kind, dtype):
    enc, k, labels, t, f = shot_problem(field=kind != "nufft")
    maps = mri.coil_maps(SHAPE, COILS)
    phase = mri.shot_phase_maps(SHAPE, 3, seed=4)
    eps = NUFFT_EPS[dtype]
    a = mri.pcsense(enc, maps, phase, kind=kind, eps=eps, accuracy=ACCURACY, dtype=dtype)
    x, y = random(SHAPE, dtype, 3), random(a.oshape, dtype, 4)
    ax, ahy = a(x), a.H(y)
    err = abs(np.vdot(ax, y) - np.vdot(x, ahy)) / (np.linalg.norm(ax) * np.linalg.norm(y))
    assert err < (EXACT[dtype] if kind == "dft" else 4 * eps + EXACT[dtype])
    # The normal is AᴴA: exactly for the DFT and the NUFFT pair; for time segmentation the
    # field-corrected Toeplitz normal (taken by itself, Toeplitz "auto") is within about the
    # accuracy of it (measured 6.6e-4 at 1e-3; 5x for the interpolator's l1 norm).
    normal_tol = EXACT[dtype] if kind == "dft" else 4 * eps + EXACT[dtype]
    if kind == "tseg":
        normal_tol = 5 * ACCURACY
    assert rel_err(a.N(x), a.H(ax)) < normal_tol
    if kind == "tseg":  # and within the accuracy of the exact model
        exact = mri.pcsense(enc, maps, phase, kind="dft", dtype=dtype)
        assert rel_err(ax, exact(x)) < ACCURACY


def gram_problem():
    enc, k, labels, t, f = shot_problem(field=True)
    return enc, mri.coil_maps(SHAPE, COILS), mri.shot_phase_maps(SHAPE, 3, seed=4), random(SHAPE, np.complex64, 5)


def test_pcsense_gram_changes_nothing_on_the_cpu():
    """gram=True where all shots do not run in one DFT pass (the CPU): the per-shot form."""
    enc, maps, phase, x = gram_problem()
    a = mri.pcsense(enc, maps, phase, kind="dft", gram=True)
    b = mri.pcsense(enc, maps, phase, kind="dft")
    a.prepare_normal()
    assert "Gram matrix" not in a.name
    assert rel_err(a.N(x), b.N(x)) < EXACT[np.complex64]


@pytest.mark.gpu
def test_gpu_pcsense_gram_normal_is_the_normal(cupy):
    """On a GPU in complex64: the normal through the stored Gram matrix (built by prepare_normal;
    the name says so), AᴴA within the float DFT's rounding of the CPU per-shot operator's."""
    enc, maps, phase, x = gram_problem()
    a = mri.pcsense(enc, maps, phase, kind="dft", gram=True, device="cuda:0")
    b = mri.pcsense(enc, maps, phase, kind="dft")
    a.prepare_normal()
    assert "Gram matrix" in a.name and "built)" in a.name
    assert rel_err(cupy.asnumpy(a.N(cupy.asarray(x))), b.N(x)) < EXACT[np.complex64]


def multishot_acquisition(n=24, coils=8, shots=4, field=False, max_phase=3.0):
    """A Shepp–Logan phantom on a smooth phase, normalised coil maps, a spiral of 4 arms to reach
    √2 cut to the k-space square (every Cartesian frequency sampled: test_mri_sense.py and
    tests/mri/sense_test.cpp say why), one arm per shot with a random phase of up to max_phase, and
    (field) readout times of 1e-5 s per sample with a ±80 Hz field map; data of the exact DFT
    pcSENSE model in complex128, noise-free."""
    shape = (n, n)
    k = mri.spiral(shape, interleaves=4, reach=math.sqrt(2))
    labels = mri.shot_labels(k, shots)
    t = mri.readout_times(k, 1e-5)
    inside = np.all(np.abs(k) <= n / 2, axis=-1)
    k, labels, t = k[inside], labels[inside], t[inside]
    f = mri.field_map(shape, max_hz=80, seed=2) if field else None
    maps = mri.coil_maps(shape, coils, normalize=True)
    phase = mri.shot_phase_maps(shape, shots, max_phase=max_phase, seed=9)
    truth = image(shape)
    enc = mri.Encoding(shape, k, times=t if field else None, field=f, shots=labels)
    y = mri.pcsense(enc, maps, phase, kind="dft", dtype=np.complex128)(truth)
    return dict(shape=shape, k=k, labels=labels, t=t, f=f, maps=maps, phase=phase, truth=truth, y=y)


def test_pcsense_recovers_a_multishot_phantom():
    """pcSENSE through fieldft.recon recovers the phantom that plain SENSE ruins. CG, 60
    iterations, a small Tikhonov weight (bias ~1e-4 of the mean eigenvalue, as the C++ test):
    measured 8.6e-5 (the C++ test 8.2e-5 on 32²); bound 1e-3 (a factor 12 above, for another
    platform's rounding of the float32 data and NUFFT at recon's eps 1e-4). Plain SENSE adds
    the shots' images with phases up to 6 rad apart: measured 0.74 (floor 0.3, as the C++
    test)."""
    q = multishot_acquisition()
    y = q["y"].astype(np.complex64)
    lam = 1e-4 * q["k"].shape[0]
    common = dict(iterations=60, lam=lam, progress=False)
    xp = fieldft.recon(y, q["k"], q["shape"], q["maps"], shots=q["labels"], phase_maps=q["phase"], **common)
    xs = fieldft.recon(y, q["k"], q["shape"], q["maps"], shots=q["labels"], **common)
    assert xp.dtype == np.complex64 and xp.shape == q["shape"]
    ep, es = rel_err(xp, q["truth"]), rel_err(xs, q["truth"])
    assert ep < 1e-3, ep
    assert es > 0.3, es
    # gram=True with the exact DFT (on the CPU the per-shot form: the same reconstruction).
    xg = fieldft.recon(y, q["k"], q["shape"], q["maps"], shots=q["labels"], phase_maps=q["phase"], encoding="dft",
                       gram=True, **common)
    assert rel_err(xg, q["truth"]) < 1e-3


def test_recon_with_the_field_map_beats_recon_without():
    """Data simulated with a ±80 Hz field map over 8 ms readouts (peak phase ≈ 4 rad): fieldft.recon
    with field_map and times (encoding="tseg": time segmentation) recovers the phantom (measured 7.1e-5,
    bound 1e-3 as above), the exact DFT gives the same image within the accuracy (measured
    2.3e-5), and recon without the field map is blurred and distorted (measured 0.115: bound
    0.05, and at least 20× worse)."""
    q = multishot_acquisition(shots=1, field=True, max_phase=0.0)
    y = q["y"].astype(np.complex64)
    common = dict(iterations=60, lam=1e-4 * q["k"].shape[0], progress=False)
    xt = fieldft.recon(y, q["k"], q["shape"], q["maps"], field_map=q["f"], times=q["t"], encoding="tseg", **common)
    xd = fieldft.recon(y, q["k"], q["shape"], q["maps"], field_map=q["f"], times=q["t"], encoding="dft", **common)
    xn = fieldft.recon(y, q["k"], q["shape"], q["maps"], **common)
    et, en = rel_err(xt, q["truth"]), rel_err(xn, q["truth"])
    assert et < 1e-3, et
    assert rel_err(xt, xd) < ACCURACY
    assert en > 0.05 and en > 20 * et, (en, et)


def test_recon_multishot_with_a_field_map():
    """Shots with phases AND a field map: pcSENSE with time segmentation per shot (complex128
    data; measured 8.9e-5, bound 1e-3 as above)."""
    q = multishot_acquisition(field=True)
    x = fieldft.recon(q["y"], q["k"], q["shape"], q["maps"], field_map=q["f"], times=q["t"], shots=q["labels"],
                      phase_maps=q["phase"], iterations=60, lam=1e-4 * q["k"].shape[0], progress=False,
                      encoding="tseg")
    assert x.dtype == np.complex128 and rel_err(x, q["truth"]) < 1e-3


def test_choose_field_model_and_recon_auto():
    """fieldft.mri.choose_field_model: a choice with its reason; the DFT where time segmentation
    cannot reach the accuracy; "nufft" without a field map; clear errors. fieldft.recon with
    encoding="auto" builds what it chose, prints the reason with progress=True and returns it
    with info=True; its image equals that of the chosen encoding given explicitly (the same
    operator and solver: float32 rounding only, bound 1e-5)."""
    q = multishot_acquisition(shots=1, field=True, max_phase=0.0)
    coils = q["maps"].shape[0]
    enc = mri.Encoding(q["shape"], q["k"], times=q["t"], field=q["f"])
    c = mri.choose_field_model(enc, coils)
    assert c["encoding"] in ("dft", "tseg") and c["L"] >= 1 and c["reason"]
    assert c["dft"]["feasible"] and c["dft"]["iteration_seconds"] > 0
    assert f"{coils} coils" in c["reason"] and "per iteration" in c["reason"]
    hard = mri.choose_field_model(enc, coils, accuracy=1e-14, max_segments=4)
    assert hard["encoding"] == "dft" and not hard["tseg"]["feasible"]
    assert "cannot reach the accuracy" in hard["reason"]
    plain = mri.Encoding(q["shape"], q["k"])
    assert mri.choose_field_model(plain, coils)["encoding"] == "nufft"
    with pytest.raises(fieldft.InvalidArgumentError, match="accuracy is nan"):
        mri.choose_field_model(enc, coils, accuracy=float("nan"))
    with pytest.raises(fieldft.InvalidArgumentError, match="accuracy is 0"):
        mri.choose_field_model(enc, coils, accuracy=0.0)
    with pytest.raises(fieldft.InvalidArgumentError, match="device"):
        mri.choose_field_model(enc, coils, device="tpu")

    y = q["y"].astype(np.complex64)
    common = dict(iterations=10, lam=1e-4 * q["k"].shape[0])
    xa, result = fieldft.recon(y, q["k"], q["shape"], q["maps"], field_map=q["f"], times=q["t"], info=True,
                               progress=False, **common)
    chosen = result.encoding_choice
    assert chosen["encoding"] in ("dft", "tseg") and chosen["reason"]
    xe = fieldft.recon(y, q["k"], q["shape"], q["maps"], field_map=q["f"], times=q["t"], progress=False,
                       encoding=chosen["encoding"], **common)
    assert rel_err(xa, xe) < 1e-5


def test_recon_auto_prints_its_reason(capsys):
    q = multishot_acquisition(n=16, coils=2, shots=1, field=True, max_phase=0.0)
    fieldft.recon(q["y"], q["k"], q["shape"], q["maps"], field_map=q["f"], times=q["t"], iterations=2)
    err = capsys.readouterr().err
    assert "fieldft recon: " in err and "predicted" in err


def test_field_and_shots_bad_input():
    q = multishot_acquisition(n=16, coils=2, shots=4, field=True)
    k, shape, maps, y = q["k"], q["shape"], q["maps"], q["y"]
    kw = dict(progress=False, iterations=2)
    enc = mri.Encoding(shape, k, times=q["t"], field=q["f"], shots=q["labels"])
    # Shapes: a field map of another shape, times of another length, phase maps of another
    # image shape or for another number of shots than the labels give.
    with pytest.raises(fieldft.ShapeMismatchError, match="field"):
        fieldft.recon(y, k, shape, maps, field_map=q["f"][:, :-1], times=q["t"], **kw)
    with pytest.raises(fieldft.ShapeMismatchError, match="times"):
        fieldft.recon(y, k, shape, maps, field_map=q["f"], times=q["t"][:-1], **kw)
    with pytest.raises(fieldft.ShapeMismatchError, match="phase maps"):
        mri.pcsense(enc, maps, q["phase"][:, :, :-1])
    with pytest.raises(fieldft.ShapeMismatchError, match="3 shots.*4 shots"):
        mri.pcsense(enc, maps, q["phase"][:3], kind="dft")
    with pytest.raises(fieldft.ShapeMismatchError, match="5 shots"):
        fieldft.recon(y, k, shape, maps, shots=q["labels"], phase_maps=np.zeros((5,) + shape), **kw)
    with pytest.raises(fieldft.ShapeMismatchError, match="shots"):
        fieldft.recon(y, k, shape, maps, shots=q["labels"][:-1], **kw)
    # Values: NaN in the field map or in the phase maps; a shot label without samples.
    bad = q["f"].copy()
    bad[3, 4] = np.nan
    with pytest.raises(fieldft.NonFiniteError):
        fieldft.recon(y, k, shape, maps, field_map=bad, times=q["t"], **kw)
    bad = q["phase"].copy()
    bad[2, 5, 6] = np.inf
    with pytest.raises(fieldft.NonFiniteError, match=r"shot 2 .*voxel \(5, 6\)"):
        mri.pcsense(enc, maps, bad, kind="dft")
    holes = np.where(q["labels"] == 2, 1, q["labels"])
    with pytest.raises(fieldft.InvalidArgumentError, match="shot 2 has no samples"):
        fieldft.recon(y, k, shape, maps, shots=holes, phase_maps=q["phase"], encoding="dft", field_map=q["f"],
                      times=q["t"], **kw)
    # gram=True without phase maps or without the exact DFT.
    with pytest.raises(fieldft.InvalidArgumentError, match="gram=True.*encoding='auto'"):
        fieldft.recon(y, k, shape, maps, shots=q["labels"], phase_maps=q["phase"], gram=True, **kw)
    with pytest.raises(fieldft.InvalidArgumentError, match="no phase_maps"):
        fieldft.recon(y, k, shape, maps, field_map=q["f"], times=q["t"], encoding="dft", gram=True, **kw)
    # Options: a field map without times, or with encoding="nufft"; unknown names.
    with pytest.raises(fieldft.InvalidArgumentError, match="times"):
        fieldft.recon(y, k, shape, maps, field_map=q["f"], **kw)
    with pytest.raises(fieldft.InvalidArgumentError, match="tseg"):
        fieldft.recon(y, k, shape, maps, field_map=q["f"], times=q["t"], encoding="nufft", **kw)
    with pytest.raises(fieldft.InvalidArgumentError, match="encoding"):
        fieldft.recon(y, k, shape, maps, encoding="fast", **kw)
    with pytest.raises(fieldft.InvalidArgumentError, match="kind"):
        mri.pcsense(enc, maps, q["phase"], kind="fft")
    with pytest.raises(fieldft.InvalidArgumentError, match="accuracy"):
        fieldft.recon(y, k, shape, maps, field_map=q["f"], times=q["t"], accuracy=1e-9, encoding="tseg", **kw)
    # encoding="auto" takes the exact DFT where time segmentation cannot reach the accuracy.
    _, result = fieldft.recon(y, k, shape, maps, field_map=q["f"], times=q["t"], accuracy=1e-9, info=True, **kw)
    assert result.encoding_choice["encoding"] == "dft" and "cannot reach" in result.encoding_choice["reason"]
    with pytest.raises(TypeError, match="not both"):
        fieldft.recon(y, k, shape, maps, field_map=q["f"], field=q["f"], times=q["t"], **kw)


# ---------------------------------------------------------------------------------------------
# GPU (skipped without a device).

@pytest.mark.gpu
@pytest.mark.parametrize("dtype", DTYPES)
def test_gpu_tseg_and_pcsense_match_cpu(cupy, dtype):
    k, t, f = field_problem()
    enc = mri.Encoding(SHAPE, k, times=t, field=f)
    x = image().astype(dtype)
    cpu = mri.TimeSegmentedEncoding(enc, eps=NUFFT_EPS[dtype], dtype=dtype)
    gpu = mri.TimeSegmentedEncoding(enc, eps=NUFFT_EPS[dtype], dtype=dtype, device="cuda:0")
    assert gpu.report["L"] == cpu.report["L"]
    got = gpu(cupy.asarray(x))
    assert isinstance(got, cupy.ndarray)
    assert rel_err(cupy.asnumpy(got), cpu(x)) < 10 * NUFFT_EPS[dtype]
    penc, pk, labels, pt, pf = shot_problem(field=True)
    maps = mri.coil_maps(SHAPE, COILS)
    phase = mri.shot_phase_maps(SHAPE, 3, seed=4)
    for kind in ("dft", "tseg"):
        a = mri.pcsense(penc, maps, phase, kind=kind, eps=NUFFT_EPS[dtype], dtype=dtype)
        b = mri.pcsense(penc, maps, phase, kind=kind, eps=NUFFT_EPS[dtype], dtype=dtype, device="cuda:0")
        y = random(a.oshape, dtype, 5)
        tol = EXACT[dtype] if kind == "dft" else 10 * NUFFT_EPS[dtype]
        assert rel_err(cupy.asnumpy(b(cupy.asarray(x))), a(x)) < tol
        assert rel_err(cupy.asnumpy(b.H(cupy.asarray(y))), a.H(y)) < tol


@pytest.mark.gpu
def test_gpu_recon_with_field_map_and_shots(cupy):
    q = multishot_acquisition(field=True)
    y = q["y"].astype(np.complex64)
    common = dict(field_map=q["f"], times=q["t"], shots=q["labels"], phase_maps=q["phase"], iterations=60,
                  lam=1e-4 * q["k"].shape[0], progress=False)
    xg = fieldft.recon(cupy.asarray(y), q["k"], q["shape"], q["maps"], **common)
    assert isinstance(xg, cupy.ndarray)
    assert rel_err(cupy.asnumpy(xg), q["truth"]) < 1e-3
