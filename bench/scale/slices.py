#!/usr/bin/env python3
"""Scaling of `fieldft recon` over GPUs (issue 26, benchmark (i)): the 2D R1 problem
(docs/benchmarks.md: 256², 32 coils, spiral 64 arms x 1024 samples, SENSE, no field map) as the
slices of a stack, reconstructed on one device and on two.

  strong  64 slices on 1 GPU  vs  64 slices on 2 GPUs (--split problems)   target >= 1.95x
  weak    32 slices on 1 GPU  vs  64 slices on 2 GPUs                      ideal 1.00
  coils   one slice (2D R1) on 1 GPU vs its 32 coils shared by 2 GPUs (--split coils), for contrast

The time is the reconstruction's own: `seconds.solve_wall` of `fieldft recon --json`, the wall
clock of every slice's set-up (operators, uploads) and CG plus the images' download, over all
devices; not the file read, the k_z transform or the coil maps, which every configuration does
alike before it. Each configuration runs --repeat times (each a fresh process: CUDA contexts,
plans) and the minimum is kept. The sums of the slices' set-up and solve times (device-seconds)
are printed beside it: with D devices busy all the time, wall ~ (set-up + solve) / D, and the gap
is load imbalance and the devices' contention for the host.

usage: bench/scale/slices.py --fieldft build/app/apps/fieldft/fieldft [--devices 0,1]
       [--iters 20] [--repeat 3] [--workdir DIR] [--keep]
Only the standard library. The data (about 2.5 GB for 64 slices) are simulated by `fieldft
simulate` into --workdir (default: a temporary directory, removed afterwards unless --keep).
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit("failed (%d): %s\n%s" % (p.returncode, " ".join(cmd), p.stderr.strip()))
    return p.stdout


def simulate(tool, out, matrix):
    if os.path.exists(out + "_ksp.cfl"):
        return
    traj = "stack-of-spirals" if matrix.count("x") == 2 else "spiral"
    print("simulating %s (%s) ..." % (out, matrix), flush=True)
    run([tool, "simulate", "-o", out, "--matrix", matrix, "--traj", traj, "--coils", "32", "--interleaves", "64",
         "--samples", "1024", "--field-hz", "0", "--susceptibility-hz", "0", "--json"])


def recon(tool, src, extra, iters, repeat, workdir):
    best = None
    for _ in range(repeat):
        out = os.path.join(workdir, "img.npy")
        j = json.loads(run([tool, "recon", src, "-o", out, "--maps", "file", "--backend", "cuda", "--iters", str(iters),
                            "--progress", "off", "--json"] + extra).strip().splitlines()[-1])
        if best is None or j["seconds"]["solve_wall"] < best["seconds"]["solve_wall"]:
            best = j
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--fieldft", required=True)
    ap.add_argument("--devices", default="0,1")
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--workdir")
    ap.add_argument("--keep", action="store_true")
    a = ap.parse_args()
    devs = a.devices.split(",")
    one, many = devs[0], a.devices
    k = len(devs)
    work = a.workdir or tempfile.mkdtemp(prefix="fieldft_scale_")
    os.makedirs(work, exist_ok=True)
    try:
        info = json.loads(run([a.fieldft, "info", "--json"]))
        names = ", ".join("%d %s" % (g["id"], g["name"]) for g in info["gpus"])
        print("devices: %s; CG %d iterations, R1 slices (256^2, 32 coils, 64 x 1024 spiral)" % (names, a.iters))
        # 32 slices per GPU: 64 on 2 (issue 26), the weak baseline 32 on one.
        nfull, nhalf = 32 * k, 32
        half, full, flat = (os.path.join(work, n) for n in ("stack%d" % nhalf, "stack%d" % nfull, "slice"))
        simulate(a.fieldft, half, "256x256x%d" % nhalf)
        simulate(a.fieldft, full, "256x256x%d" % nfull)
        simulate(a.fieldft, flat, "256")
        rows = []
        r1 = recon(a.fieldft, full, ["--devices", one, "--chunk", "slices"], a.iters, a.repeat, work)
        rk = recon(a.fieldft, full, ["--devices", many, "--split", "problems"], a.iters, a.repeat, work)
        rw = recon(a.fieldft, half, ["--devices", one, "--chunk", "slices"], a.iters, a.repeat, work)
        c1 = recon(a.fieldft, flat, ["--devices", one], a.iters, a.repeat, work)
        ck = recon(a.fieldft, flat, ["--devices", many, "--split", "coils"], a.iters, a.repeat, work)
        rows.append(("strong", "%d slices, 1 GPU" % nfull, r1))
        rows.append(("strong", "%d slices, %d GPUs" % (nfull, k), rk))
        rows.append(("weak", "%d slices, 1 GPU" % nhalf, rw))
        rows.append(("coils", "1 slice, 1 GPU", c1))
        rows.append(("coils", "1 slice, %d GPUs (coils split)" % k, ck))
        print("\n%-7s %-32s %10s %12s %12s %8s" % ("", "configuration", "wall s", "setup sum s", "solve sum s", "NRMSE"))
        for kind, what, j in rows:
            s = j["seconds"]
            print("%-7s %-32s %10.3f %12.3f %12.3f %8.4f" % (kind, what, s["solve_wall"], s["setup"], s["solve"],
                                                          j.get("nrmse", float("nan"))))
        w = lambda j: j["seconds"]["solve_wall"]
        print("\nstrong scaling 1 -> %d GPUs, %d slices: %.3fx (ideal %d; issue 26 target >= %.2f for 2)" % (
            k, nfull, w(r1) / w(rk), k, 1.95))
        print("weak scaling %d slices on 1 GPU -> %d on %d: efficiency %.3f (ideal 1)" % (nhalf, nfull, k, w(rw) / w(rk)))
        print("coil split of one slice, 1 -> %d GPUs: %.3fx" % (k, w(c1) / w(ck)))
        print("\nJSON: " + json.dumps({"devices": names, "iters": a.iters, "rows": [
            {"kind": kind, "what": what, "solve_wall": j["seconds"]["solve_wall"], "setup": j["seconds"]["setup"],
             "solve": j["seconds"]["solve"], "choices": {c: j["choices"].get(c) for c in ("split", "split_reason", "devices")}}
            for kind, what, j in rows]}))
    finally:
        if not a.keep and not a.workdir:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
