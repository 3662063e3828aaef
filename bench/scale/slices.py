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
       [--iters 30] [--repeat 3] [--workdir DIR] [--keep] [--slices 64] [--counts 1,2,4]
       [--no-weak] [--no-coils] [--pin auto|staged|on|off] [--slice-workers K] [--json out.json]
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


def simulate(tool, out, matrix, device):
    if os.path.exists(out + "_ksp.cfl"):
        return
    traj = "stack-of-spirals" if matrix.count("x") == 2 else "spiral"
    print("simulating %s (%s) ..." % (out, matrix), flush=True)
    j = json.loads(run([tool, "simulate", "-o", out, "--matrix", matrix, "--traj", traj, "--coils", "32",
                        "--interleaves", "64", "--samples", "1024", "--field-hz", "0", "--susceptibility-hz", "0",
                        "--json",
                        # on the GPU: the 3D stack's time-segmented model in double takes minutes on the CPU
                        "--backend", "cuda", "--device", str(device)]).strip().splitlines()[-1])
    print("  simulated in %.1f s (model %.1f s on %s, writing %.1f s)" % (
        j["total_seconds"], j["model_seconds"], j.get("backend", "?"), j["write_seconds"]), flush=True)


def recon(tool, src, extra, iters, repeat, workdir, workers=1, pin="auto", tolerance=0.0):
    best = None
    for _ in range(repeat):
        out = os.path.join(workdir, "img.npy")
        j = json.loads(run([tool, "recon", src, "-o", out, "--maps", "file", "--backend", "cuda", "--iters", str(iters),
                            "--progress", "off", "--json", "--slice-workers", str(workers), "--pin", pin, "--tolerance", repr(tolerance)] + extra).strip().splitlines()[-1])
        if best is None or j["seconds"]["solve_wall"] < best["seconds"]["solve_wall"]:
            best = j
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--fieldft", required=True)
    ap.add_argument("--devices", default="0,1")
    ap.add_argument("--iters", type=int, default=30,
                    help="CG iterations per slice (default 30: shared/BENCHMARKS.md's reconstruction protocol)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--workdir")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--slices", type=int, default=64, help="slices of the strong-scaling stack (issue 26: 64)")
    ap.add_argument("--counts", help="device counts of the strong-scaling rows, e.g. 1,2,4 (default: 1 and all)")
    ap.add_argument("--no-weak", action="store_true", help="skip the weak-scaling row (32 slices per device)")
    ap.add_argument("--no-coils", action="store_true", help="skip the coil-split rows of one slice")
    ap.add_argument("--pin", choices=["auto", "staged", "on", "off"], default="auto",
                    help="fieldft recon --pin: how the slices' data go up; auto (the tool's default) = staged "
                         "through each slice worker's pinned buffer; on: the whole stack pinned; off: the driver stages")
    ap.add_argument("--slice-workers", type=int, default=0,
                    help="fieldft recon --slice-workers: slices in flight per device (every configuration); "
                         "0 = the tool's automatic choice")
    ap.add_argument("--tolerance", type=float, default=0.0,
                    help="fieldft recon --tolerance (default 0: every slice runs --iters, and its CG brings its "
                         "residuals back once, at the end; a tolerance > 0 brings each iteration's back)")
    ap.add_argument("--json", help="also write the JSON summary (the last line printed) to this file")
    a = ap.parse_args()
    devs = a.devices.split(",")
    one, many = devs[0], a.devices
    k = len(devs)
    counts = [int(c) for c in a.counts.split(",")] if a.counts else [1, k]
    if any(c < 1 or c > k for c in counts) or counts[0] != 1:
        sys.exit("--counts: device counts from 1 up to the %d of --devices, starting with 1" % k)
    work = a.workdir or tempfile.mkdtemp(prefix="fieldft_scale_")
    os.makedirs(work, exist_ok=True)
    try:
        info = json.loads(run([a.fieldft, "info", "--json"]))
        names = ", ".join("%d %s" % (g["id"], g["name"]) for g in info["gpus"])
        print("devices: %s; CG %d iterations, R1 slices (256^2, 32 coils, 64 x 1024 spiral)" % (names, a.iters))
        # Strong scaling: --slices slices (64, issue 26) on 1, ..., k devices; weak: 32 slices per
        # device (32 on one against 32k on k).
        nstrong, nhalf, nweak = a.slices, 32, 32 * k
        stack = lambda n: os.path.join(work, "stack%d" % n)
        flat = os.path.join(work, "slice")
        for n in sorted({nstrong} | (set() if a.no_weak else {nhalf, nweak})):
            simulate(a.fieldft, stack(n), "256x256x%d" % n, one)
        if not a.no_coils:
            simulate(a.fieldft, flat, "256", one)
        rows, strong = [], {}
        for c in counts:
            opts = ["--devices", one, "--chunk", "slices"] if c == 1 else ["--devices", ",".join(devs[:c]), "--split", "problems"]
            strong[c] = recon(a.fieldft, stack(nstrong), opts, a.iters, a.repeat, work, a.slice_workers, a.pin, a.tolerance)
            rows.append(("strong", "%d slices, %d GPU%s" % (nstrong, c, "" if c == 1 else "s"), strong[c]))
        if not a.no_weak:
            rw1 = strong[1] if nhalf == nstrong else recon(a.fieldft, stack(nhalf), ["--devices", one, "--chunk", "slices"], a.iters, a.repeat, work, a.slice_workers, a.pin, a.tolerance)
            rwk = strong[k] if nweak == nstrong and k in strong else recon(
                a.fieldft, stack(nweak), ["--devices", many, "--split", "problems"], a.iters, a.repeat, work, a.slice_workers, a.pin, a.tolerance)
            rows.append(("weak", "%d slices, 1 GPU" % nhalf, rw1))
            rows.append(("weak", "%d slices, %d GPUs" % (nweak, k), rwk))
        if not a.no_coils:
            c1 = recon(a.fieldft, flat, ["--devices", one], a.iters, a.repeat, work, a.slice_workers, a.pin, a.tolerance)
            ck = recon(a.fieldft, flat, ["--devices", many, "--split", "coils"], a.iters, a.repeat, work, a.slice_workers, a.pin, a.tolerance)
            rows.append(("coils", "1 slice, 1 GPU", c1))
            rows.append(("coils", "1 slice, %d GPUs (coils split)" % k, ck))
        print("\n%-7s %-32s %10s %12s %12s %8s" % ("", "configuration", "wall s", "setup sum s", "solve sum s", "NRMSE"))
        for kind, what, j in rows:
            s = j["seconds"]
            print("%-7s %-32s %10.3f %12.3f %12.3f %8.4f" % (kind, what, s["solve_wall"], s["setup"], s["solve"],
                                                          j.get("nrmse", float("nan"))))
        # Per slice (fieldft recon's seconds.slice_setup / slice_solve): the first slice's set-up
        # (it pays for the device's start) against the median of the others.
        med = lambda v: sorted(v)[len(v) // 2] if v else float("nan")
        for kind, what, j in rows:
            ss, so = j["seconds"].get("slice_setup", []), j["seconds"].get("slice_solve", [])
            if ss:
                print("%-7s %-32s per slice: set-up first %.1f ms, median %.1f ms; solve first %.1f ms, median %.1f ms" % (
                    kind, what, 1e3 * ss[0], 1e3 * med(ss[1:]), 1e3 * so[0], 1e3 * med(so[1:])))
        # Where a slice's wall goes outside set-up and CG (seconds.slice_stage / slice_download /
        # slice_wall): staging (buffers, k-space upload, maps cut out), the image's download, and
        # the rest of the slice's wall (teardown), medians over the slices.
        for kind, what, j in rows:
            s = j["seconds"]
            if s.get("slice_wall"):
                rest = [w - a - b - c - d for w, a, b, c, d in zip(s["slice_wall"], s["slice_setup"], s["slice_solve"],
                                                                   s["slice_stage"], s["slice_download"])]
                print("%-7s %-32s per slice, median ms: wall %.1f = set-up %.1f + CG %.1f + staging %.1f + download %.1f"
                      " + rest %.1f; pinning (once) %.1f ms, of which %.1f ms in the window" % (
                          kind, what, 1e3 * med(s["slice_wall"]), 1e3 * med(s["slice_setup"]), 1e3 * med(s["slice_solve"]),
                          1e3 * med(s["slice_stage"]), 1e3 * med(s["slice_download"]), 1e3 * med(rest),
                          1e3 * s.get("pin", 0.0), 1e3 * s.get("pin_wait", 0.0)))
        # The slice workers start before the k_z transform (fieldft recon: encoding, staging buffer,
        # rehearsal); what the window waited for them is inside solve_wall. The whole process's
        # seconds (reading the files included) beside it.
        for kind, what, j in rows:
            s = j["seconds"]
            if "slice_workers_start" in s:
                print("%-7s %-32s slice workers: start %.1f ms (longest), waited %.1f ms in the window; process %.2f s "
                      "(read %.2f, k_z %.2f, maps %.2f)" % (kind, what, 1e3 * s["slice_workers_start"],
                                                           1e3 * s["slice_workers_wait"], s.get("total", float("nan")),
                                                           s.get("read", float("nan")), s.get("kz_transform", float("nan")),
                                                           s.get("coil_maps", float("nan"))))
        w = lambda j: j["seconds"]["solve_wall"]
        print()
        for c in counts[1:]:
            print("strong scaling 1 -> %d GPUs, %d slices: %.3fx (ideal %d; targets: >= 1.95 on 2, >= 3.8 on 4)" % (
                c, nstrong, w(strong[1]) / w(strong[c]), c))
        if not a.no_weak:
            print("weak scaling %d slices on 1 GPU -> %d on %d: efficiency %.3f (ideal 1)" % (nhalf, nweak, k, w(rw1) / w(rwk)))
        if not a.no_coils:
            print("coil split of one slice, 1 -> %d GPUs: %.3fx" % (k, w(c1) / w(ck)))
        summary = json.dumps({"devices": names, "iters": a.iters, "pin": a.pin, "rows": [
            {"kind": kind, "what": what, "solve_wall": j["seconds"]["solve_wall"], "setup": j["seconds"]["setup"],
             "solve": j["seconds"]["solve"], "pin": j["seconds"].get("pin"), "pin_wait": j["seconds"].get("pin_wait"), "total": j["seconds"].get("total"),
             "workers_start": j["seconds"].get("slice_workers_start"), "workers_wait": j["seconds"].get("slice_workers_wait"),
             "choices": {c: j["choices"].get(c) for c in ("split", "split_reason", "devices")}}
            for kind, what, j in rows]})
        print("\nJSON: " + summary)
        if a.json:
            with open(a.json, "w") as f:
                f.write(summary + "\n")
    finally:
        if not a.keep and not a.workdir:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
