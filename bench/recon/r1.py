#!/usr/bin/env python3
"""Case R1 of shared/BENCHMARKS.md ("Reconstruction"): 2D 256², 32 coils, spiral 64 arms × 1024
samples, SENSE without a field map, 30 CG iterations on the normal equations, float32, data
already on the GPU. fieldft against the anchors, in this process, on the same data:

  fieldft      fieldft.solve.cg on NufftEncoding(batch = coils) ∘ diag_expand(maps) (its normal
               operator: Toeplitz where the encoding picks it, as it does here)
  fieldft-pair the same with toeplitz="off": the normal through the type 2 / type 1 pair
  sigpy        sigpy.mri.app.SenseRecon on the GPU (its CG; it brings a residual to the host
               every iteration, as it is written)
  torchkbnufft a CG written in torch on torchkbnufft's Toeplitz normal operator (ToepNufft with
               smaps), scalars kept on the GPU
  cufinufft    a CG written in cupy on cuFINUFFT type 2 / type 1 plans (n_trans = coils), scalars
               kept on the GPU

Every system gets the same data y (C × M), maps, trajectory, zero initial guess, no weights,
λ = 0 and 30 iterations. Reported per system: set-up time (plans, kernels; not the upload of the
data; for fieldft its second set-up in the process, the first is reported beside it), solve time (wall clock, device synchronised before and after, best of --repeat), and
NRMSE ‖x − truth‖/‖truth‖. The truth is the modified Shepp–Logan phantom; the data are simulated
with the exact DFT in double precision (fieldft.mri.DftEncoding) plus complex Gaussian noise.
An anchor that is not installed or fails is reported as such, never silently left out.

Usage: python3 bench/recon/r1.py [--n 256] [--coils 32] [--arms 64] [--per-arm 1024]
       [--iters 30] [--repeat 3] [--eps 1e-3] [--device cuda|cpu] [--json out.json]
       [--systems fieldft,sigpy,torchkbnufft,cufinufft]
"""
from __future__ import annotations

import argparse
import math
import time

import numpy as np

from common import cg_device, device_name, nrmse, report, run_systems, sync, timed


def run_fieldft(p, a, toeplitz="auto"):
    import fieldft

    def setup():
        sync()
        t0 = time.perf_counter()
        enc = fieldft.mri.Encoding((p["n"], p["n"]), p["k"])
        f = fieldft.mri.NufftEncoding(enc, eps=a.eps, batch=p["coils"], device="cuda", toeplitz=toeplitz)
        e = fieldft.mri.sense(f, p["maps_d"])  # its normal: one fused Toeplitz pass where there is one
        kernel_s = f.prepare_normal()  # the normal operator's set-up (the Toeplitz kernel where it is used)
        sync()
        return f, e, kernel_s, time.perf_counter() - t0

    # The first set-up in a process also pays CUDA's lazy module loading and cuFFT's first plans;
    # the second is what a service reconstructing one scan after another pays.
    *_, first_s = setup()
    f, e, kernel_s, setup_s = setup()
    x, t = timed(lambda: fieldft.solve.cg(e, p["y_d"], max_iter=a.iters), a.repeat)
    info = f.toeplitz_info
    normal = "Toeplitz" if info["used"] else "NUFFT pair"
    if info["used"]:
        normal += f" (kernel {1e3 * kernel_s:.1f} ms)"
    normal += f"; first set-up in the process {1e3 * first_s:.1f} ms"
    return {"setup_s": setup_s, "solve_s": t, "nrmse": nrmse(x.get(), p["truth"]), "normal": normal}


def run_fieldft_pair(p, a):
    return run_fieldft(p, a, toeplitz="off")


def run_cufinufft(p, a):
    import cupy as cp
    import cufinufft
    n, c = p["n"], p["coils"]
    sync()
    t0 = time.perf_counter()
    pts = [cp.asarray(2 * math.pi * p["k"][:, i] / n, dtype=cp.float32) for i in range(2)]  # (ky, kx) radians
    fwd = cufinufft.Plan(2, (n, n), n_trans=c, eps=a.eps, isign=-1, dtype="complex64")
    adj = cufinufft.Plan(1, (n, n), n_trans=c, eps=a.eps, isign=+1, dtype="complex64")
    fwd.setpts(*pts)
    adj.setpts(*pts)
    maps = p["maps_d"]
    ks = cp.empty((c, p["k"].shape[0]), cp.complex64)
    imgs = cp.empty((c, n, n), cp.complex64)
    sync()
    setup = time.perf_counter() - t0

    def normal(x):
        fwd.execute(maps * x, out=ks)
        adj.execute(ks, out=imgs)
        return (cp.conj(maps) * imgs).sum(0)

    def solve():
        adj.execute(p["y_d"], out=imgs)
        b = (cp.conj(maps) * imgs).sum(0)
        return cg_device(normal, b, a.iters, cp)

    x, t = timed(solve, a.repeat)
    return {"setup_s": setup, "solve_s": t, "nrmse": nrmse(x.get(), p["truth"]), "normal": "type 2 + type 1"}


def run_torchkbnufft(p, a):
    import torch
    import torchkbnufft as tkbn
    n, c = p["n"], p["coils"]
    dev = torch.device("cuda")
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    omega = torch.as_tensor((2 * math.pi * p["k"] / n).T.copy(), dtype=torch.float32, device=dev)  # (2, M): (ky, kx)
    adj = tkbn.KbNufftAdjoint(im_size=(n, n)).to(dev)
    toep = tkbn.ToepNufft().to(dev)
    kernel = tkbn.calc_toeplitz_kernel(omega, im_size=(n, n))
    smaps = torch.as_tensor(p["maps"], dtype=torch.complex64, device=dev).unsqueeze(0)  # (1, C, n, n)
    y = torch.as_tensor(p["y"], dtype=torch.complex64, device=dev).unsqueeze(0)            # (1, C, M)
    torch.cuda.synchronize()
    setup = time.perf_counter() - t0

    def normal(x):
        return toep(x, kernel, smaps=smaps)

    def solve():
        b = adj(y, omega, smaps=smaps)  # (1, 1, n, n)
        return cg_device(normal, b, a.iters, torch)

    x, t = timed(solve, a.repeat, sync=torch.cuda.synchronize)
    return {"setup_s": setup, "solve_s": t, "nrmse": nrmse(x.cpu().numpy(), p["truth"]), "normal": "ToepNufft"}


def run_sigpy(p, a):
    import cupy as cp
    import sigpy as sp
    import sigpy.mri as mr
    dev = sp.Device(0)
    # SigPy's NUFFT is scaled by 1/sqrt(N²) (unitary on the grid): the same least-squares image
    # comes from data scaled the same way.
    y, maps = p["y_d"] / math.sqrt(p["n"] * p["n"]), p["maps_d"]
    coord = cp.asarray(p["k"], dtype=cp.float32)
    sync()
    t0 = time.perf_counter()
    app = mr.app.SenseRecon(y, maps, lamda=0, coord=coord, device=dev, max_iter=a.iters, show_pbar=False)
    sync()
    setup = time.perf_counter() - t0

    def solve():
        return mr.app.SenseRecon(y, maps, lamda=0, coord=coord, device=dev, max_iter=a.iters,
                                 show_pbar=False).run()

    del app
    x, t = timed(solve, a.repeat)
    return {"setup_s": setup, "solve_s": t, "nrmse": nrmse(cp.asnumpy(x), p["truth"]), "normal": "NUFFT pair"}


def run_fieldft_cpu(p, a):
    import fieldft
    t0 = time.perf_counter()
    enc = fieldft.mri.Encoding((p["n"], p["n"]), p["k"])
    f = fieldft.mri.NufftEncoding(enc, eps=a.eps, batch=p["coils"], device="cpu")
    e = f @ fieldft.op.diag_expand(p["maps"].astype(np.complex64))
    kernel_s = f.prepare_normal()  # builds the Toeplitz kernel where it is used
    setup = time.perf_counter() - t0
    y = p["y"].astype(np.complex64)
    t0 = time.perf_counter()
    x = fieldft.solve.cg(e, y, max_iter=a.iters)
    normal = f"Toeplitz (kernel {1e3 * kernel_s:.1f} ms)" if f.toeplitz_info["used"] else "NUFFT pair"
    return {"setup_s": setup, "solve_s": time.perf_counter() - t0, "nrmse": nrmse(x, p["truth"]), "normal": normal}


SYSTEMS = {"fieldft": run_fieldft, "fieldft-pair": run_fieldft_pair, "sigpy": run_sigpy, "torchkbnufft": run_torchkbnufft,
           "cufinufft": run_cufinufft}


def simulate(a):
    """The data, simulated with the exact DFT in double on the GPU (on the host with --device cpu)."""
    import fieldft
    n, c = a.n, a.coils
    # fieldft's simulation helpers (include/fieldft/mri/simulate.hpp): the modified Shepp–Logan
    # head, smooth coil maps with Σ_c |S_c|² = 1, a spiral of `arms` interleaves out to N/2.
    truth = fieldft.mri.shepp_logan((n, n))
    maps = fieldft.mri.coil_maps((n, n), c, normalize=True)
    k = fieldft.mri.spiral((n, n), interleaves=a.arms, samples=a.per_arm).reshape(-1, 2)
    enc = fieldft.mri.Encoding((n, n), k)
    dev = "cuda" if a.device == "cuda" else "cpu"
    e = fieldft.mri.DftEncoding(enc, batch=c, dtype="complex128", device=dev) @ \
        fieldft.op.diag_expand(maps, dtype="complex128", device=dev)
    t0 = time.perf_counter()
    if dev == "cuda":
        import cupy as cp
        y = e(cp.asarray(truth.astype(np.complex128))).get()
    else:
        y = e(truth.astype(np.complex128))
    sim_s = time.perf_counter() - t0
    rng = np.random.default_rng(20261126)
    sigma = a.noise * np.linalg.norm(y) / math.sqrt(y.size)
    y = y + sigma * (rng.standard_normal(y.shape) + 1j * rng.standard_normal(y.shape)) / math.sqrt(2)
    p = {"n": n, "coils": c, "k": k, "truth": truth, "maps": maps.astype(np.complex64),
         "y": y.astype(np.complex64), "simulate_s": sim_s}
    if dev == "cuda":
        import cupy as cp
        p["maps_d"] = cp.asarray(p["maps"])
        p["y_d"] = cp.asarray(p["y"])
    return p


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=256)
    ap.add_argument("--coils", type=int, default=32)
    ap.add_argument("--arms", type=int, default=64)
    ap.add_argument("--per-arm", type=int, default=1024)
    ap.add_argument("--iters", type=int, default=30)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--eps", type=float, default=1e-3, help="NUFFT tolerance of fieldft and cuFINUFFT")
    ap.add_argument("--noise", type=float, default=0.01, help="noise rms relative to the data's rms")
    ap.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    ap.add_argument("--systems", default=",".join(SYSTEMS))
    ap.add_argument("--json", help="write the results here")
    a = ap.parse_args()
    import fieldft
    p = simulate(a)
    print(f"R1: {a.n}² image, {a.coils} coils, spiral {a.arms} × {a.per_arm}, {a.iters} CG iterations, "
          f"float32, eps {a.eps}; simulated with the exact DFT in {p['simulate_s']:.2f} s", flush=True)
    systems = ["fieldft-cpu"] if a.device == "cpu" else a.systems.split(",")
    rows = run_systems(systems, dict(SYSTEMS, **{"fieldft-cpu": run_fieldft_cpu}), p, a)
    report(rows, "fieldft-cpu" if a.device == "cpu" else "fieldft", device_name(a.device), vars(a), a.json)


if __name__ == "__main__":
    main()
