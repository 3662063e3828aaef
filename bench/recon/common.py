"""What the reconstruction benchmarks of bench/recon (r1.py, field.py) share: NRMSE, timing with
the device synchronised, a CG with its scalars on the device, running the systems (an anchor
missing or failing is reported, never left out) and the table / JSON they print and write.
"""
from __future__ import annotations

import datetime
import json
import math
import platform
import time
import traceback

import numpy as np


def nrmse(x, truth) -> float:
    x = np.asarray(x).reshape(truth.shape)
    return float(np.linalg.norm(x - truth) / np.linalg.norm(truth))


def sync():
    import cupy as cp
    cp.cuda.Device().synchronize()


def no_sync():
    """sync() for systems on the host."""


def timed_first(fn, repeat, sync=sync):
    """fn() → (result, best wall time over `repeat` runs after one warm-up, the warm-up's time),
    device synchronised around each run."""
    sync()
    t0 = time.perf_counter()
    out = fn()
    sync()
    first = time.perf_counter() - t0
    best = math.inf
    for _ in range(repeat):
        sync()
        t0 = time.perf_counter()
        out = fn()
        sync()
        best = min(best, time.perf_counter() - t0)
    return out, best, first


def timed(fn, repeat, sync=sync):
    """fn() → result; best wall time over `repeat` runs after one warm-up, device synchronised."""
    out, best, _ = timed_first(fn, repeat, sync)
    return out, best


def cg_device(normal, b, iters, xp):
    """CG on normal(x) = b from x = 0 with the scalars on the device (no host round trip)."""
    x = xp.zeros_like(b)
    r = b.clone() if hasattr(b, "clone") else b.copy()
    p = r.clone() if hasattr(r, "clone") else r.copy()
    rr = xp.sum(xp.abs(r) ** 2)
    for _ in range(iters):
        q = normal(p)
        alpha = rr / xp.sum(xp.conj(p) * q).real
        x += alpha * p
        r -= alpha * q
        rr_new = xp.sum(xp.abs(r) ** 2)
        p = r + (rr_new / rr) * p
        rr = rr_new
    return x


def run_systems(names, systems, *args):
    """rows[name] = systems[name](*args), or {"error": the first line of what it raised} (with
    the traceback on stderr): an anchor that is missing or fails is reported, not fatal."""
    rows = {}
    for name in names:
        try:
            rows[name] = systems[name](*args)
        except Exception as e:  # noqa: BLE001 - an anchor missing or failing is reported, not fatal
            rows[name] = {"error": f"{type(e).__name__}: {e}".splitlines()[0][:300]}
            traceback.print_exc(limit=3)
        print(name, rows[name], flush=True)
    return rows


def device_name(device: str) -> str:
    if device == "cuda":
        import fieldft
        return fieldft.cuda_devices()[0]["name"]
    return "cpu: " + (platform.processor() or platform.machine())


def report(rows, ref, device, args, path=None, extra=None):
    """Prints the table (solve time relative to rows[ref]'s) and writes the JSON to `path`."""
    ref_row = rows.get(ref) or {}
    print(f"\n{datetime.date.today()}  {device}")
    print(f"| system | set-up ms | solve ms | NRMSE | solve time / {ref}'s | normal operator |")
    print("|---|---|---|---|---|---|")
    for name, r in rows.items():
        if "error" in r:
            print(f"| {name} | – | – | – | – | {r['error']} |")
            continue
        ratio = r["solve_s"] / ref_row["solve_s"] if "solve_s" in ref_row else float("nan")
        print(f"| {name} | {1e3 * r['setup_s']:.1f} | {1e3 * r['solve_s']:.2f} | {r['nrmse']:.4f} | {ratio:.2f} | "
              f"{r['normal']} |")
    if path:
        with open(path, "w") as f:
            json.dump({"date": str(datetime.date.today()), "device": device, "args": args, "rows": rows,
                       **(extra or {})}, f, indent=1)
