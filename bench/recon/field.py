#!/usr/bin/env python3
"""Cases R2 and R3 of shared/BENCHMARKS.md ("Reconstruction"): SENSE with a field map, fieldft
against its anchors in this process, on the same data (as r1.py does for R1).

  --case r2  2D 256², 8 coils, the R1 spiral (64 arms × 1024), readout 10.24 ms, field map of
             smooth blobs up to 150 Hz (fieldft.mri.field_map(max_hz=150): −1.2 … 150 Hz here);
             data: the exact field-corrected DFT in double (as bench/recon/field_bench.cpp).
  --case r3  3D 128³, 8 coils, stack of spirals (128 kz planes × 16 arms × 1024), readout 4.1 ms,
             field map up to 100 Hz; data: fieldft's time-segmented model in double at phase
             accuracy 1e-6 with NUFFT eps 1e-10 (BENCHMARKS: "a time-segmented model far more
             accurate than the reconstruction"): worst-case phase error 1e-6 against the
             reconstructions' 1e-3 (at 24²×12 its data differ from the exact DFT's by 1.9e-8,
             relative l2); --sim dft takes the exact DFT instead (2M samples × 2M voxels × 8
             coils in double: tens of seconds on an H100).

Both: Shepp–Logan truth (2D; 3D Kak–Slaney), 8 normalised coil maps (fieldft.mri.coil_maps), 1 %
complex noise (fieldft.mri.add_noise, seed 7, as field_bench.cpp), 30 CG iterations from 0 on
(AᴴA + λI) x = Aᴴy with λ = 1e-3·M/N (field_bench.cpp's; M samples per coil, N voxels) for every
system, float32, data on the GPU.

Systems (set-up ms, solve ms = best of --repeat after a warm-up, device synchronised, NRMSE
‖x − truth‖/‖truth‖):
  fieldft              fieldft.mri.sense(enc, maps, kind="tseg") (TimeSegmentedEncoding, L from
                       --accuracy, NUFFT --eps) with fieldft.solve.cg; its normal: the
                       field-corrected Toeplitz (FieldToeplitzNormal) where the context runs it
                       (CUDA: 2D with 2N a power of two), else the L·C NUFFT passes
  fieldft-uncorrected  fieldft.mri.sense(kind="nufft") on the geometry without field map: what the
                       correction gains
  cufinufft-tseg       a CG in cupy on cuFINUFFT type 2 / type 1 plans (n_trans = coils, eps --eps),
                       time segmentation with --segments L (8 for r2, 6 for r3), the least-squares
                       interpolator of Sutton, Noll & Fessler (IEEE TMI 22(2), 2003) written here:
                       segment images b_l(r) = exp(−iω(r)τ_l) at τ_l equally spaced over the
                       readout, coefficients a_l(t) by least squares over the field map's
                       histogram (--bins); per iteration L type 2 and L type 1 transforms
                       (forward then adjoint), scalars on the GPU
  sigpy-tseg           sigpy.mri.app.SenseRecon(..., tseg=...) (SigPy's own interpolator,
                       sigpy.mri.util.tseg_off_res_b_ct, L = --segments) on the (arms, samples)
                       trajectory; SigPy's Sense takes one continuous readout (len(coord) samples):
                       where it rejects the multi-arm trajectory its reason is reported
  sigpy-tseg-arms      the same pieces of SigPy (its NUFFT, its interpolator, its CG in
                       LinearLeastSquares) assembled as Sense's tseg branch does, with the
                       interpolator's rows broadcast over the arms (readout time = sample index)
With --device cpu the fieldft systems run on the host and the cuFINUFFT anchor's code runs as
finufft-tseg (numpy + the finufft package): a check of the anchor's logic at small sizes.

Usage: python3 bench/recon/field.py --case r2|r3 [--n N] [--nz NZ] [--coils C] [--arms A]
       [--per-arm S] [--iters 30] [--repeat 3] [--eps 1e-3] [--accuracy 1e-3] [--segments L]
       [--bins 100] [--gpu-method 0|1|2] [--sim dft|tseg] [--device cuda|cpu] [--systems a,b] [--json out.json]
"""
from __future__ import annotations

import argparse
import math
import time

import numpy as np

from common import cg_device, device_name, no_sync, nrmse, report, run_systems, sync, timed_first

CASES = {  # BENCHMARKS.md's problems
    "r2": dict(n=256, nz=0, coils=8, arms=64, per_arm=1024, readout=10.24e-3, max_hz=150.0, segments=8, sim="dft"),
    "r3": dict(n=128, nz=128, coils=8, arms=16, per_arm=1024, readout=4.1e-3, max_hz=100.0, segments=6, sim="tseg"),
}


# --- the problem ---------------------------------------------------------------------------------

def geometry(a):
    """Image shape, k (M, ndim), readout times (M,) in s, field map (rad/s) and the Encodings with
    and without the field."""
    import fieldft
    shape = (a.nz, a.n, a.n) if a.nz else (a.n, a.n)
    k = fieldft.mri.spiral(shape, interleaves=a.arms, samples=a.per_arm)  # (…, arms, samples, ndim)
    # field_bench.cpp: dwell = readout / samples, t = s · dwell (the last sample at readout − dwell).
    t = fieldft.mri.readout_times(k, a.readout / a.per_arm).reshape(-1)
    field = fieldft.mri.field_map(shape, max_hz=a.max_hz)
    k = k.reshape(-1, len(shape))
    enc = fieldft.mri.Encoding(shape, k, times=t, field=field)
    return shape, k, t, field, enc, fieldft.mri.Encoding(shape, k)


def _apply(e, truth, dev):
    """e(truth) in double, where e runs, brought to the host."""
    if dev == "cuda":
        import cupy as cp
        return cp.asnumpy(e(cp.asarray(truth.astype(np.complex128))))
    return np.asarray(e(truth.astype(np.complex128)))


def simulate(a):
    import fieldft
    shape, k, t, field, enc, enc_plain = geometry(a)
    truth = fieldft.mri.shepp_logan(shape)
    maps = fieldft.mri.coil_maps(shape, a.coils, normalize=True)
    dev = a.device
    exact = "the exact field-corrected DFT in double"
    t0 = time.perf_counter()
    if a.sim == "dft":
        y, how = _apply(fieldft.mri.sense(enc, maps, kind="dft", dtype="complex128", device=dev), truth, dev), exact
    else:
        try:
            e = fieldft.mri.sense(enc, maps, kind="tseg", accuracy=a.sim_accuracy, eps=1e-10, dtype="complex128",
                                  device=dev)
            y = _apply(e, truth, dev)
            plan = fieldft.mri.plan_time_segmentation(enc, accuracy=a.sim_accuracy)
            how = (f"time segmentation in double (L {plan['L']}, phase error {plan['error']:.1e}, NUFFT eps 1e-10; "
                   f"{e.name})")
            del e
        except Exception as err:  # noqa: BLE001 - the exact model is the fallback, said so
            how = f"{exact} (time segmentation failed: {str(err).splitlines()[0][:200]})"
            print(how, flush=True)
            t0 = time.perf_counter()
            y = _apply(fieldft.mri.sense(enc, maps, kind="dft", dtype="complex128", device=dev), truth, dev)
    sim_s = time.perf_counter() - t0
    # field_bench.cpp: add_noise(y, 0.01 · rms / √2, seed 7) on the same (C, M) data.
    rms = float(np.sqrt(np.mean(np.abs(y) ** 2)))
    y = fieldft.mri.add_noise(y, a.noise * rms / math.sqrt(2.0), 7)
    m, nvox = k.shape[0], math.prod(shape)
    p = {"shape": shape, "coils": a.coils, "k": k, "t": t, "field": field, "enc": enc, "enc_plain": enc_plain,
         "truth": truth, "maps": maps.astype(np.complex64), "y": y.astype(np.complex64), "simulate_s": sim_s,
         "simulated_by": how, "lam": a.lam if a.lam is not None else 1e-3 * m / nvox,
         "sync": sync if dev == "cuda" else no_sync}
    if dev == "cuda":
        import cupy as cp
        p["maps_d"] = cp.asarray(p["maps"])
        p["y_d"] = cp.asarray(p["y"])
    else:
        p["maps_d"], p["y_d"] = p["maps"], p["y"]
    return p


# --- the time-segmentation interpolator of the anchors -------------------------------------------

def ls_interpolator(field, times, segments, bins):
    """The least-squares time-segmentation interpolator (Sutton, Noll & Fessler 2003):
    exp(−iωt) ≈ Σ_l a_l(t) exp(−iωτ_l), τ_l equally spaced over [min t, max t], a(t) minimising
    Σ_b h_b |exp(−iω_b t) − Σ_l a_l(t) exp(−iω_b τ_l)|² over the field map's histogram (`bins`
    bins; centre ω_b, h_b voxels), one least-squares solve for all distinct readout times.
    Returns (tau (L,), distinct times (D,), index (M,) of each time among them, a (L, D))."""
    field = np.asarray(field, dtype=np.float64)
    times = np.asarray(times, dtype=np.float64).reshape(-1)
    tau = np.linspace(times.min(), times.max(), segments) if segments > 1 else np.array([times.mean()])
    counts, edges = np.histogram(field, bins=bins)
    keep = counts > 0
    w, h = (0.5 * (edges[:-1] + edges[1:]))[keep], counts[keep].astype(np.float64)
    distinct, index = np.unique(times, return_inverse=True)
    sq = np.sqrt(h)[:, None]
    basis = np.exp(-1j * np.outer(w, tau))        # (B, L)
    target = np.exp(-1j * np.outer(w, distinct))  # (B, D)
    coef, *_ = np.linalg.lstsq(sq * basis, sq * target, rcond=None)  # (L, D)
    return tau, distinct, index.reshape(-1), coef


def interpolator_error(field, distinct, tau, coef, points=2001):
    """max over the distinct readout times and a fine grid of frequencies over the field map's
    range of |exp(−iωt) − Σ_l a_l(t) exp(−iωτ_l)|; and the largest over t of its rms over the
    field map's voxels (a subsample of about 2048)."""
    grid = np.linspace(field.min(), field.max(), points)
    err = np.abs(np.exp(-1j * np.outer(grid, distinct)) - np.exp(-1j * np.outer(grid, tau)) @ coef).max()
    vox = np.asarray(field).reshape(-1)
    vox = vox[:: max(1, vox.size // 2048)]
    e_vox = np.exp(-1j * np.outer(vox, distinct)) - np.exp(-1j * np.outer(vox, tau)) @ coef
    return float(err), float(np.sqrt(np.mean(np.abs(e_vox) ** 2, axis=0)).max())


# --- systems ---------------------------------------------------------------------------------------

def run_fieldft(p, a, corrected=True, toeplitz="auto"):
    import fieldft
    syn = p["sync"]

    def setup():
        syn()
        t0 = time.perf_counter()
        if corrected:
            e = fieldft.mri.sense(p["enc"], p["maps_d"], kind="tseg", accuracy=a.accuracy, eps=a.eps, device=a.device,
                                  toeplitz=toeplitz)
        else:
            e = fieldft.mri.sense(p["enc_plain"], p["maps_d"], kind="nufft", eps=a.eps, device=a.device)
        kernel_s = e.prepare_normal() if hasattr(e, "prepare_normal") else None  # (when the API has it)
        syn()
        return e, kernel_s, time.perf_counter() - t0

    # The first set-up in a process also pays CUDA's lazy module loading and cuFFT's first plans.
    *_, first_setup = setup()
    e, kernel_s, setup_s = setup()
    x, t, first = timed_first(lambda: fieldft.solve.cg(e, p["y_d"], lam=p["lam"], max_iter=a.iters), a.repeat,
                              sync=syn)
    note = e.name
    if corrected:
        plan = fieldft.mri.plan_time_segmentation(p["enc"], accuracy=a.accuracy)
        note += f"; L {plan['L']} (phase error {plan['error']:.1e})"
        if ", normal FieldToeplitzNormal(" in e.name:
            pass  # the name reports the normal the solve used (TimeSegmentedEncoding::name)
        elif toeplitz == "auto" and "TimeSegmentedEncoding(" in e.name:
            note += "; normal: the L·C NUFFT passes (no field-corrected Toeplitz normal was built)"
        else:  # TimeSegmentationOptions::toeplitz (include/fieldft/mri/time_segmentation.hpp)
            note += {"on": "; normal: field-corrected Toeplitz (toeplitz='on')",
                     "off": "; normal: the L·C NUFFT passes (toeplitz='off')",
                     "auto": "; normal: field-corrected Toeplitz where its difference design reaches the accuracy "
                             "(toeplitz='auto'; not reported by the Python API)"}[toeplitz]
    if isinstance(kernel_s, (int, float)):
        note += f"; prepare_normal {1e3 * kernel_s:.1f} ms"
    elif kernel_s is not None:
        note += f"; prepare_normal {kernel_s}"
    note += f"; first set-up in the process {1e3 * first_setup:.1f} ms, first solve {1e3 * first:.1f} ms"
    x = x.get() if hasattr(x, "get") else np.asarray(x)
    return {"setup_s": setup_s, "solve_s": t, "nrmse": nrmse(x, p["truth"]), "normal": note}


def run_fieldft_uncorrected(p, a):
    return run_fieldft(p, a, corrected=False)


def run_fieldft_toeplitz(p, a):
    """fieldft with the field-corrected Toeplitz normal forced on."""
    return run_fieldft(p, a, toeplitz="on")


def run_fieldft_pair(p, a):
    """fieldft with the time-segmented normal through the L·C NUFFT passes (Toeplitz off)."""
    return run_fieldft(p, a, toeplitz="off")


def run_nufft_tseg(p, a, xp, plan_cls, syn, where, **plan_opts):
    """The time-segmented SENSE CG on a type 2 / type 1 plan pair (cuFINUFFT with cupy, or finufft
    with numpy on the host), n_trans = coils, L segments: per iteration L type 2 and L type 1."""
    shape, c = p["shape"], p["coils"]
    ndim, m = len(shape), p["k"].shape[0]
    lam = p["lam"]
    syn()
    t0 = time.perf_counter()
    tau, distinct, index, coef = ls_interpolator(p["field"], p["t"], a.segments, a.bins)
    design_s = time.perf_counter() - t0
    # Points in radians, columns (…, ky, kx) pairing with the image axes (x, y[, z] of the plan
    # are its array axes 0, 1[, 2], as in r1.py): phase exp(∓i Σ_d x_d (i_d − N_d/2)).
    pts = [xp.asarray(2 * math.pi * p["k"][:, d] / shape[d], dtype=xp.float32) for d in range(ndim)]
    fwd = plan_cls(2, shape, n_trans=c, eps=a.eps, isign=-1, dtype="complex64", **plan_opts)
    adj = plan_cls(1, shape, n_trans=c, eps=a.eps, isign=+1, dtype="complex64", **plan_opts)
    fwd.setpts(*pts)
    adj.setpts(*pts)
    maps, maps_c = p["maps_d"], xp.conj(p["maps_d"])
    # a_l(t_j) (L, M) and the segment images b_l(r) = exp(−iω(r)τ_l) (L, *shape), made on the device.
    seg_a = xp.take(xp.asarray(coef.astype(np.complex64)), xp.asarray(index), axis=1)
    seg_a_c = xp.conj(seg_a)
    field = xp.asarray(p["field"])
    seg_b = xp.stack([xp.exp(-1j * (float(tl) * field)).astype(xp.complex64) for tl in tau])
    seg_b_c = xp.conj(seg_b)
    imgs = xp.empty((c,) + shape, xp.complex64)
    ks = xp.empty((c, m), xp.complex64)
    kl = xp.empty((c, m), xp.complex64)
    syn()
    setup = time.perf_counter() - t0
    segments = seg_a.shape[0]

    def forward(x, out):  # y_c = Σ_l a_l ∘ F(b_l S_c x)
        for l in range(segments):
            xp.multiply(maps, seg_b[l] * x, out=imgs)
            fwd.execute(imgs, out=kl if l else out)
            if l:
                out += seg_a[l] * kl
            else:
                out *= seg_a[0]
        return out

    def adjoint(y):  # Σ_l conj(b_l) Σ_c conj(S_c) Fᴴ(conj(a_l) y_c)
        x = None
        for l in range(segments):
            xp.multiply(seg_a_c[l], y, out=kl)
            adj.execute(kl, out=imgs)
            term = seg_b_c[l] * (maps_c * imgs).sum(0)
            x = term if x is None else x + term
        return x

    def normal(x):
        return adjoint(forward(x, ks)) + lam * x

    def solve():
        return cg_device(normal, adjoint(p["y_d"]), a.iters, xp)

    x, t, first = timed_first(solve, a.repeat, sync=syn)
    x = x.get() if hasattr(x, "get") else x
    err, err_rms = interpolator_error(p["field"], distinct, tau, coef)
    opts = "".join(f", {k} {v}" for k, v in plan_opts.items())
    note = (f"{where} type 2 + type 1, n_trans {c}, eps {a.eps}{opts}; L {segments} least-squares over {a.bins} bins "
            f"(design {1e3 * design_s:.1f} ms; phase error max {err:.1e}, rms over the voxels {err_rms:.1e}); "
            f"first solve {1e3 * first:.1f} ms")
    return {"setup_s": setup, "solve_s": t, "nrmse": nrmse(x, p["truth"]), "normal": note, "segments": segments,
            "interpolator_error": err, "interpolator_error_rms": err_rms}


def run_cufinufft_tseg(p, a):
    import cupy as cp
    import cufinufft
    opts = {"gpu_method": a.gpu_method} if a.gpu_method else {}
    return run_nufft_tseg(p, a, cp, cufinufft.Plan, sync, "cuFINUFFT", **opts)


def run_finufft_tseg(p, a):
    import finufft
    return run_nufft_tseg(p, a, np, finufft.Plan, no_sync, "finufft (host)")


def _sigpy_problem(p, a):
    """SigPy's view of the problem: its NUFFT is scaled by 1/√N (unitary on the grid), so data
    scaled the same way and λ/N give the same minimiser; coordinates (…, arms, samples, ndim) in
    cycles/FOV as fieldft's k; the field map in Hz (SigPy's b0), dwell time in ms (its dt)."""
    import sigpy as sp
    shape, nvox = p["shape"], math.prod(p["shape"])
    dev = sp.Device(0 if a.device == "cuda" else -1)
    xp = dev.xp
    traj = (-1, a.arms, a.per_arm) if len(shape) == 3 else (a.arms, a.per_arm)
    coord = xp.asarray(p["k"].reshape(traj + (len(shape),)), dtype=xp.float32)
    y = xp.asarray(p["y_d"]).reshape((p["coils"],) + traj) / math.sqrt(nvox)
    b0 = (p["field"] / (2 * math.pi)).reshape(1, -1)  # flat: SigPy concatenates b0's rows (C order)
    dt = 1e3 * a.readout / a.per_arm
    return sp, dev, xp, coord, y, p["lam"] / nvox, b0, dt


def run_sigpy_tseg(p, a):
    import sigpy.mri as mr
    sp, dev, xp, coord, y, lam, b0, dt = _sigpy_problem(p, a)
    tseg = {"b0": b0, "dt": dt, "lseg": a.segments, "n_bins": a.bins}
    syn = p["sync"]

    def app():
        return mr.app.SenseRecon(y, p["maps_d"], lamda=lam, tseg=tseg, coord=coord, device=dev, max_iter=a.iters,
                                 show_pbar=False)

    syn()
    t0 = time.perf_counter()
    try:
        app()
    except ValueError as e:  # its tseg takes the first axis of coord as one readout's samples
        raise ValueError(f"SigPy's Sense(tseg) rejects the {tuple(coord.shape)} trajectory: {e} (it builds the "
                         f"interpolator for len(coord) = {coord.shape[0]} samples of one readout)") from e
    syn()
    setup = time.perf_counter() - t0
    x, t, first = timed_first(lambda: app().run(), a.repeat, sync=syn)
    return {"setup_s": setup, "solve_s": t, "nrmse": nrmse(sp.to_device(x), p["truth"]),
            "normal": f"SigPy Sense(tseg), L {a.segments}, {a.bins} bins; its CG; first solve {1e3 * first:.1f} ms"}


def run_sigpy_tseg_arms(p, a):
    import sigpy.mri.util as mu
    sp, dev, xp, coord, y, lam, b0, dt = _sigpy_problem(p, a)
    shape, syn = p["shape"], p["sync"]
    syn()
    t0 = time.perf_counter()
    # SigPy's interpolator for one readout of per_arm samples (t = 0 … T on per_arm points).
    b, ct = mu.tseg_off_res_b_ct(b0, a.bins, a.segments, dt, a.per_arm * dt)
    if b.shape[0] != a.per_arm:
        raise RuntimeError(f"sigpy.mri.util.tseg_off_res_b_ct gave {b.shape[0]} time points, expected {a.per_arm}")
    with dev:
        maps = xp.asarray(p["maps_d"])
        S = sp.linop.Multiply(shape, maps)
        F = sp.linop.NUFFT(S.oshape, coord)
        A = None
        for l in range(a.segments):  # Sense's tseg branch, B_l broadcast over the arms (and planes)
            B = sp.linop.Multiply(F.oshape, xp.asarray(b[:, l].astype(np.complex64)))
            Ct = sp.linop.Multiply(shape, xp.asarray(ct[:, l].reshape(shape).astype(np.complex64)))
            term = B * F * S * Ct
            A = term if A is None else A + term
    syn()
    setup = time.perf_counter() - t0

    def solve():
        return sp.app.LinearLeastSquares(A, y, lamda=lam, max_iter=a.iters, show_pbar=False).run()

    x, t, first = timed_first(solve, a.repeat, sync=syn)
    return {"setup_s": setup, "solve_s": t, "nrmse": nrmse(sp.to_device(x), p["truth"]),
            "normal": f"SigPy linops: Σ_l B_l F S C_l, L {a.segments}, its interpolator over {a.bins} bins; "
                      f"its CG; first solve {1e3 * first:.1f} ms"}


SYSTEMS = {"fieldft": run_fieldft, "fieldft-uncorrected": run_fieldft_uncorrected,
           "fieldft-toeplitz": run_fieldft_toeplitz, "fieldft-pair": run_fieldft_pair,
           "cufinufft-tseg": run_cufinufft_tseg, "finufft-tseg": run_finufft_tseg,
           "sigpy-tseg": run_sigpy_tseg, "sigpy-tseg-arms": run_sigpy_tseg_arms}
DEFAULT_SYSTEMS = {("r2", "cuda"): "fieldft,fieldft-uncorrected,cufinufft-tseg,sigpy-tseg,sigpy-tseg-arms",
                   ("r3", "cuda"): "fieldft,fieldft-uncorrected,cufinufft-tseg",
                   ("r2", "cpu"): "fieldft,fieldft-uncorrected,finufft-tseg,sigpy-tseg,sigpy-tseg-arms",
                   ("r3", "cpu"): "fieldft,fieldft-uncorrected,finufft-tseg"}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--case", choices=sorted(CASES), required=True)
    for name, kind in (("n", int), ("nz", int), ("coils", int), ("arms", int), ("per-arm", int),
                       ("readout", float), ("max-hz", float), ("segments", int)):
        ap.add_argument(f"--{name}", type=kind, help="default: the case's")
    ap.add_argument("--sim", choices=("dft", "tseg"), help="how the data are simulated (default: the case's)")
    ap.add_argument("--sim-accuracy", type=float, default=1e-6, help="phase accuracy of --sim tseg")
    ap.add_argument("--iters", type=int, default=30)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--eps", type=float, default=1e-3, help="NUFFT tolerance of fieldft and cuFINUFFT")
    ap.add_argument("--accuracy", type=float, default=1e-3, help="fieldft's time-segmentation phase accuracy")
    ap.add_argument("--gpu-method", type=int, default=0, help="cuFINUFFT's gpu_method (0: its default)")
    ap.add_argument("--bins", type=int, default=100, help="field-map histogram bins of the anchors' interpolators")
    ap.add_argument("--lam", type=float, help="Tikhonov λ (default 1e-3·M/N, as field_bench.cpp)")
    ap.add_argument("--noise", type=float, default=0.01, help="noise rms relative to the data's rms")
    ap.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    ap.add_argument("--systems", help="comma-separated, of " + ", ".join(SYSTEMS))
    ap.add_argument("--json", help="write the results here")
    a = ap.parse_args()
    for key, value in CASES[a.case].items():
        if getattr(a, key) is None:
            setattr(a, key, value)
    if a.case == "r3" and not a.nz:
        a.nz = a.n
    import fieldft  # noqa: F401 (fails early when the module is missing)
    p = simulate(a)
    shape = "×".join(map(str, p["shape"]))
    m = p["k"].shape[0]
    print(f"{a.case.upper()}: {shape} image, {a.coils} coils, {m} samples ({a.arms} arms × {a.per_arm}"
          f"{f' × {a.nz} planes' if a.nz else ''}), readout {1e3 * a.readout:.2f} ms, field "
          f"{p['field'].min() / (2 * math.pi):.1f} … {p['field'].max() / (2 * math.pi):.1f} Hz, {a.iters} CG "
          f"iterations, λ {p['lam']:.3g}, float32, eps {a.eps}; simulated with {p['simulated_by']} in "
          f"{p['simulate_s']:.2f} s", flush=True)
    names = (a.systems or DEFAULT_SYSTEMS[(a.case, a.device)]).split(",")
    rows = run_systems(names, SYSTEMS, p, a)
    report(rows, "fieldft", device_name(a.device), vars(a), a.json,
           {"simulated_by": p["simulated_by"], "simulate_s": p["simulate_s"], "lam": p["lam"]})


if __name__ == "__main__":
    main()
