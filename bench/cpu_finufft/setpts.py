#!/usr/bin/env python3
"""set_points alone: fieldft (one or more fieldft_bench_cpu binaries, e.g. before and after a
change) beside FINUFFT, on the points of run.py's cases, interleaved over rounds.

For each case and round: every binary with --setpts-only (a fresh process; the minimum over
--repeats calls on one plan, wall and process CPU time), the same binary with one call (the first
set_points of a plan, which also chooses the upsampling factor and allocates), and FINUFFT's
Plan.setpts (minimum over --repeats calls on one plan, and the first call of a fresh plan).
Reported: the minimum over rounds of each. set_points of types 1 and 2 sort alike, so only the
type 1 cases run unless --cases says otherwise; type 3 (cases 9-12, M = nk = --m3) has its own.

Usage: python3 bench/cpu_finufft/setpts.py --binary BEFORE AFTER --nthreads 2 --json out.json
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run  # noqa: E402  (run.py beside this file: cases, data, FINUFFT plans)


def fieldft_setpts(binary: str, case: run.Case, files: dict, m: int, nthreads: int, repeats: int) -> dict:
    if case.nufft_type == 3:  # m sources and m targets
        shape = ["--dim", str(case.dim), "--nk", str(m), "--targets", files["targets"]]
    else:
        shape = ["--modes", *[str(case.n)] * case.dim]
    cmd = [binary, "--type", str(case.nufft_type), *shape,
           "--precision", case.precision, "--eps", repr(case.eps), "--isign", str(case.isign),
           "--nthreads", str(nthreads), "--repeats", str(repeats), "--m", str(m),
           "--points", files["points"], "--input", files["input"], "--setpts-only"]
    env = dict(os.environ, OMP_NUM_THREADS=str(nthreads))
    res = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if res.returncode != 0:
        raise RuntimeError(f"{binary} failed ({res.returncode}): {res.stderr.strip()}")
    return json.loads(res.stdout)


def finufft_setpts(case: run.Case, coords, nthreads: int, repeats: int) -> tuple[float, float]:
    """(first call of a fresh plan, minimum over repeats on one plan), ms."""
    plan = run.finufft_plan(case, case.eps, nthreads)
    t0 = time.perf_counter()
    run.finufft_setpts(plan, case, coords)
    first = 1e3 * (time.perf_counter() - t0)
    best = first
    for _ in range(repeats - 1):
        t0 = time.perf_counter()
        run.finufft_setpts(plan, case, coords)
        best = min(best, 1e3 * (time.perf_counter() - t0))
    return first, best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--binary", nargs="+", required=True, help="fieldft_bench_cpu binaries, compared in this order")
    ap.add_argument("--cases", default="1,2,5,6", help="case numbers of run.py (default: the type 1 cases)")
    ap.add_argument("--m", type=int, default=2_000_000)
    ap.add_argument("--m3", type=int, default=100_000, help="number of sources and of targets (type 3)")
    ap.add_argument("--nthreads", type=int, default=os.cpu_count())
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--repeats", type=int, default=10, help="set_points calls per plan")
    ap.add_argument("--seed", type=int, default=20261121)
    ap.add_argument("--json", help="write the results to this JSON file")
    args = ap.parse_args()
    cases = [run.all_cases()[int(i) - 1] for i in args.cases.split(",")]
    names = [os.path.basename(os.path.dirname(os.path.abspath(b))) + "/" + os.path.basename(b) for b in args.binary]
    results = []
    with tempfile.TemporaryDirectory(prefix="fieldft_setpts_") as workdir:
        for case in cases:
            m = args.m3 if case.nufft_type == 3 else args.m
            coords, data = run.make_data(case, m, args.seed)
            files = {"points": os.path.join(workdir, "points.bin"), "input": os.path.join(workdir, "input.bin")}
            if case.nufft_type == 3:  # (sources, targets), m of each
                files["targets"] = os.path.join(workdir, "targets.bin")
                np.concatenate(coords[0]).tofile(files["points"])
                np.concatenate(coords[1]).tofile(files["targets"])
            else:
                np.concatenate(coords).tofile(files["points"])
            data.tofile(files["input"])
            r = {"case": case.name, "load": [run.load1()], "fieldft": [{"min": [], "cpu": [], "first": []} for _ in args.binary],
                 "finufft": {"min": [], "first": []}}
            for _ in range(args.rounds):
                for b, out in zip(args.binary, r["fieldft"]):
                    j = fieldft_setpts(b, case, files, m, args.nthreads, args.repeats)
                    out["min"].append(j["setpts_ms"])
                    out["cpu"].append(j["setpts_cpu_ms"])
                    out["first"].append(fieldft_setpts(b, case, files, m, args.nthreads, 1)["setpts_ms"])
                first, best = finufft_setpts(case, coords, args.nthreads, args.repeats)
                r["finufft"]["min"].append(best)
                r["finufft"]["first"].append(first)
            r["load"].append(run.load1())
            results.append(r)
            print(f"{case.name} done", file=sys.stderr)
    meta = {"date": datetime.date.today().isoformat(), "cpu": run.cpu_model(), "nthreads": args.nthreads,
            "finufft_version": run.finufft.__version__, "m": args.m, "m3": args.m3, "rounds": args.rounds, "repeats": args.repeats,
            "binaries": args.binary, "command": " ".join(sys.argv)}
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"meta": meta, "results": results}, f, indent=1)
    print(f"{meta['date']}, {meta['cpu']}, {args.nthreads} threads, FINUFFT {meta['finufft_version']}, M = {args.m} (type 3: M = nk = {args.m3}), "
          f"minimum over {args.rounds} rounds of (minimum over {args.repeats} calls | first call)\n")
    head = "| case | " + " | ".join(f"{n}: ms (CPU ms) / first" for n in names) + " | FINUFFT ms / first | " + \
        " | ".join(f"{n} / FINUFFT" for n in names) + " | load |"
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    for r in results:
        fin = min(r["finufft"]["min"])
        cells = [f"{min(o['min']):.1f} ({min(o['cpu']):.1f}) / {min(o['first']):.0f}" for o in r["fieldft"]]
        ratios = [f"**{min(o['min']) / fin:.2f}**" for o in r["fieldft"]]
        print(f"| {r['case']} | " + " | ".join(cells) + f" | {fin:.1f} / {min(r['finufft']['first']):.0f} | " +
              " | ".join(ratios) + f" | {r['load'][0]:.1f}–{r['load'][1]:.1f} |")


if __name__ == "__main__":
    main()
