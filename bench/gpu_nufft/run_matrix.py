#!/usr/bin/env python3
"""The CUDA NUFFT benchmark matrix A–M of shared/BENCHMARKS.md: fieldft against cuFINUFFT.

For each case (eps 1e-5, float32) this script
  1. runs fieldft_bench_gpu once: it draws the points and inputs, computes exact double reference
     values at a random subset of outputs (fieldft::reference), then plans, times (CUDA events,
     minimum over --repeat executes after a warm-up) and checks fieldft with method auto and, for
     type 1, each method (output, subproblem, nupts);
  2. when the `cufinufft` package imports, has that program dump its exact inputs, subset and
     reference values, and times cuFINUFFT on them (cupy arrays, every gpu_method the type
     supports, warm-up then minimum over --repeat, CUDA events), with its error against the same
     reference values;
  3. prints one table: fieldft times and errors, cuFINUFFT's best method, its time and error, and
     ratio = cuFINUFFT best / fieldft auto (> 1: fieldft is faster).
When cuFINUFFT cannot be imported (the PyPI wheel needs CUDA 12's libcudart.so.12 and
libcufft.so.11), the script says why in one line and fills the cuFINUFFT columns with the
published H100 best times of shared/BENCHMARKS.md, labelled "published H100"; the ratios are then
against those and only indicative (another run, possibly another device).

Usage: python3 bench/gpu_nufft/run_matrix.py [--cases A,B] [--repeat 5] [--quick] [--json out.json]
See bench/gpu_nufft/README.md; --help lists every option.
"""
from __future__ import annotations

import argparse
import ctypes
import datetime
import glob
import importlib
import importlib.util
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EPS = 1e-5
# The methods timed beside auto (not with --quick): each forced, and "measured" (planning remeasure:
# the library times its candidates, method x upsampling factor x bins, and keeps the fastest).
FORCED_METHODS = {1: ("output", "subproblem", "nupts", "precomputed"), 2: ("subproblem", "nupts", "precomputed"), 3: ()}
SHORT = {"output": "out", "subproblem": "sub", "nupts": "nupts", "precomputed": "pre"}
# cuFINUFFT's gpu_method values and their names; which ones each type supports.
CUF_METHOD_NAMES = {1: "GM-sort", 2: "SM", 3: "output-driven"}
CUF_METHODS_BY_TYPE = {1: (1, 2, 3), 2: (1, 2), 3: (1, 2)}


@dataclass(frozen=True)
class Case:
    id: str
    nufft_type: int
    dim: int
    n: int          # modes per dimension; type 3: N^dim targets
    m: float        # points (type 3: sources)
    ntransf: int
    published_ms: float     # cuFINUFFT's best exec on one H100 (BENCHMARKS.md)
    published_method: str

    @property
    def label(self) -> str:
        grid = f"{self.n}²" if self.dim == 2 else f"{self.n}³"
        what = f"{grid} targets" if self.nufft_type == 3 else f"N={grid}"
        extra = f", {self.ntransf} tr" if self.ntransf > 1 else ""
        return f"{self.dim}D t{self.nufft_type} {what}, M={short_count(self.m)}{extra}"


def short_count(v: float) -> str:
    """262144, 1e7, 1.34e8: as BENCHMARKS.md writes them."""
    if v < 1e6:
        return f"{int(v)}"
    mant, exp = f"{v:.3g}".split("e+")
    return f"{mant}e{int(exp)}"


# shared/BENCHMARKS.md, "The matrix". Methods marked "—" there have no named best method.
CASES = [
    Case("A", 1, 2, 1024, 1e7, 1, 1.35, "output-driven"),
    Case("B", 1, 3, 128, 1e7, 1, 6.35, "output-driven"),
    Case("C", 1, 3, 256, 1.34e8, 1, 78.2, "output-driven"),
    Case("D", 1, 2, 256, 262144, 32, 1.97, "output-driven"),
    Case("E", 1, 3, 128, 2e6, 8, 16.4, "output-driven"),
    Case("F", 1, 3, 64, 262144, 1, 0.283, "output-driven"),
    Case("G", 2, 2, 1024, 1e7, 1, 1.34, "GM-sort"),
    Case("H", 2, 3, 128, 1e7, 1, 3.25, "GM-sort"),
    Case("I", 2, 3, 256, 1.34e8, 1, 40.4, "GM-sort"),
    Case("J", 2, 2, 256, 262144, 32, 1.16, "GM-sort"),
    Case("K", 2, 3, 128, 2e6, 8, 8.28, "GM-sort"),
    Case("L", 2, 3, 64, 262144, 1, 0.163, "—"),
    Case("M", 3, 3, 128, 1e7, 1, 137.0, "—"),
]


# --------------------------------------------------------------------------------------------
# Environment


def device_name() -> str:
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=30)
        if out.returncode == 0 and out.stdout.strip():
            return "; ".join(line.strip() for line in out.stdout.strip().splitlines()) + " (nvidia-smi)"
    except (OSError, subprocess.TimeoutExpired):
        pass
    try:
        import cupy
        props = cupy.cuda.runtime.getDeviceProperties(0)
        name = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])
        return f"{name} (cupy)"
    except Exception as e:  # noqa: BLE001 - any failure just means "unknown"
        return f"unknown (no nvidia-smi; cupy: {type(e).__name__})"


def git_commit() -> str:
    try:
        out = subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                             timeout=10)
        dirty = subprocess.run(["git", "-C", REPO, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10)
        if out.returncode == 0:
            return out.stdout.strip() + (" (modified)" if dirty.stdout.strip() else "")
    except (OSError, subprocess.TimeoutExpired):
        pass
    return "unknown"


def import_cufinufft():
    """((cupy, cufinufft), None) or (None, reason). cufinufft's loader swallows the dynamic
    linker's message (it falls back to a system search and reports that failure instead), so on
    failure its bundled library is loaded directly to recover the real reason (libcudart.so.12
    missing on a CUDA 13 machine, say)."""
    reasons, mods = [], []
    for name in ("cufinufft", "cupy"):
        try:
            mods.append(importlib.import_module(name))
        except Exception as e:  # noqa: BLE001 - reported, never fatal
            reason = f"import {name}: {type(e).__name__}: {e}"
            spec = importlib.util.find_spec(name) if name == "cufinufft" else None
            if spec and spec.submodule_search_locations:
                for lib in glob.glob(os.path.join(list(spec.submodule_search_locations)[0], "libcufinufft*.so*"))[:1]:
                    try:
                        ctypes.CDLL(lib)
                    except OSError as le:
                        reason += f" (loading {os.path.basename(lib)}: {le})"
            reasons.append(reason)
    if reasons:
        return None, "; ".join(reasons)
    return (mods[1], mods[0]), None


# --------------------------------------------------------------------------------------------
# fieldft side


def find_bench(path: str | None) -> str:
    if path:
        if not os.access(path, os.X_OK):
            sys.exit(f"error: --bench {path} is not an executable file")
        return path
    found = glob.glob(os.path.join(REPO, "build", "*", "bench", "gpu_nufft", "fieldft_bench_gpu"))
    if not found:
        sys.exit("error: no build/*/bench/gpu_nufft/fieldft_bench_gpu found; build target fieldft_bench_gpu "
                 "(CUDA build, see bench/gpu_nufft/README.md) or pass --bench PATH")
    return max(found, key=os.path.getmtime)  # the most recently built


def run_bench(bench: str, case: Case, methods: list[str], args, dump_dir: str | None) -> tuple[list[dict], str, float]:
    """JSON lines of fieldft_bench_gpu (one per method), its stderr tail, wall seconds."""
    cmd = [bench, str(case.nufft_type), str(case.dim), str(case.n), f"{case.m:.6g}", f"{EPS:g}", "f",
           str(case.ntransf), ",".join(methods), str(args.repeat), "-", "0",
           "--check", str(args.check), "--ref-terms", f"{args.ref_terms:g}"]
    if dump_dir:
        cmd += ["--dump", dump_dir]
    t0 = time.monotonic()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
        stdout, stderr, rc = p.stdout, p.stderr, p.returncode
    except subprocess.TimeoutExpired as e:
        stdout = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        stderr, rc = f"timed out after {args.timeout} s", -1
    wall = time.monotonic() - t0
    lines = []
    for line in stdout.splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                lines.append(json.loads(line))
            except json.JSONDecodeError:
                pass
    tail = [ln for ln in stderr.strip().splitlines() if not ln.startswith("fieldft_bench_gpu: data ")][-3:]
    note = "" if rc == 0 else f"exit {rc}" + (": " + " | ".join(tail) if tail else "")
    return lines, note, wall


# --------------------------------------------------------------------------------------------
# Dumped data (fieldft_bench_gpu --dump; format in README.md)


def load_dump(d: str) -> dict:
    with open(os.path.join(d, "meta.json")) as f:
        meta = json.load(f)
    real, cplx = np.dtype(meta["real_dtype"]), np.dtype(meta["complex_dtype"])
    dump = {"meta": meta,
            "x": [np.fromfile(os.path.join(d, f"x{k}.bin"), dtype=real) for k in range(meta["dim"])],
            "input": np.fromfile(os.path.join(d, "input.bin"), dtype=cplx),
            "which": np.fromfile(os.path.join(d, "which.bin"), dtype=np.int64),
            "reference": np.fromfile(os.path.join(d, "reference.bin"), dtype=np.complex128)}
    if meta["type"] == 3:
        dump["s"] = [np.fromfile(os.path.join(d, f"s{k}.bin"), dtype=real) for k in range(meta["dim"])]
    return dump


def rel_l2(a: np.ndarray, b: np.ndarray) -> float:
    a, b = np.asarray(a, dtype=np.complex128).ravel(), np.asarray(b, dtype=np.complex128).ravel()
    den = np.linalg.norm(b)
    return float(np.linalg.norm(a - b) / den) if den > 0 else float(np.linalg.norm(a) > 0) * math.inf


def numpy_reference(dump: dict, max_terms: float = 2e8) -> tuple[np.ndarray, np.ndarray]:
    """Direct sums in numpy at the dump's subset, from the dumped arrays alone (the modes of type
    1/2 in increasing order, x fastest): an independent check that the dump reads as documented.
    Returns (values, rows): rows are the (transform, subset position) pairs evaluated, kept
    under max_terms."""
    meta = dump["meta"]
    t, dim, isign, nt = meta["type"], meta["dim"], meta["isign"], meta["ntransf"]
    x = np.stack([v.astype(np.float64) for v in dump["x"]])
    which, inp = dump["which"], dump["input"].astype(np.complex128).reshape(nt, -1)
    if t in (1, 2):
        modes = meta["modes"]
        axes = [np.arange(n) - n // 2 for n in modes]
        grids = np.meshgrid(*axes, indexing="ij")                  # grids[d][k1, k2, k3]
        kall = np.stack([g.ravel(order="F") for g in grids])       # column d: modes, x fastest
    per_output = inp.shape[1]
    rows = [(tr, i) for tr in range(nt) for i in range(len(which))]
    rows = rows[:max(1, int(max_terms // max(per_output, 1)))]
    vals = np.empty(len(rows), dtype=np.complex128)
    for r, (tr, i) in enumerate(rows):
        o = which[i]
        if t == 1:
            ph = kall[:, o] @ x
            vals[r] = np.sum(inp[tr] * np.exp(1j * isign * ph))
        elif t == 2:
            ph = x[:, o] @ kall
            vals[r] = np.sum(inp[tr] * np.exp(1j * isign * ph))
        else:
            s = np.array([v[o] for v in dump["s"]], dtype=np.float64)
            vals[r] = np.sum(inp[tr] * np.exp(1j * isign * (s @ x)))
    return vals, np.array(rows, dtype=np.int64).reshape(-1, 2)


def verify_dump(d: str) -> float:
    dump = load_dump(d)
    vals, rows = numpy_reference(dump)
    count = len(dump["which"])
    ref = dump["reference"].reshape(dump["meta"]["ntransf"], count)[rows[:, 0], rows[:, 1]]
    return rel_l2(vals, ref)


# --------------------------------------------------------------------------------------------
# cuFINUFFT side


def run_cufinufft(mods, dump: dict, repeat: int) -> dict:
    """Times every gpu_method the type supports on the dumped data; returns per-method results."""
    cp, cufinufft = mods
    meta = dump["meta"]
    t, dim, nt, isign = meta["type"], meta["dim"], meta["ntransf"], meta["isign"]
    count = len(dump["which"])
    ref = dump["reference"].reshape(nt, count)
    # fieldft's arrays are column-major with x fastest; cuFINUFFT's Python interface is row-major
    # (last axis fastest). Reversing the mode counts and the coordinate arrays makes the same
    # memory mean the same modes, so no data is transposed.
    rev_modes = tuple(reversed(meta["modes"]))
    pts = [cp.asarray(v) for v in reversed(dump["x"])]
    tgt = [cp.asarray(v) for v in reversed(dump["s"])] if t == 3 else []
    lead = (nt,) if nt > 1 else ()
    m, nk = meta["m"], meta["nk"]
    in_shape = lead + (rev_modes if t == 2 else (m,))
    out_shape = lead + (rev_modes if t == 1 else ((m,) if t == 2 else (nk,)))
    d_in = cp.asarray(dump["input"]).reshape(in_shape)
    which = cp.asarray(dump["which"])
    results = {}
    for gm in CUF_METHODS_BY_TYPE[t]:
        name = CUF_METHOD_NAMES[gm]
        plan = None
        try:
            plan = cufinufft.Plan(t, dim if t == 3 else rev_modes, n_trans=nt, eps=meta["eps"],
                                  isign=isign, dtype="complex64", gpu_method=gm)
            ev0, ev1 = cp.cuda.Event(), cp.cuda.Event()
            cp.cuda.Device().synchronize()
            ev0.record()
            if t == 3:
                plan.setpts(*pts, *tgt)
            else:
                plan.setpts(*pts)
            ev1.record()
            ev1.synchronize()
            setpts_ms = cp.cuda.get_elapsed_time(ev0, ev1)
            out = cp.empty(out_shape, dtype=cp.complex64)
            plan.execute(d_in, out=out)  # warm-up
            cp.cuda.Device().synchronize()
            best = math.inf
            for _ in range(repeat):
                ev0.record()
                plan.execute(d_in, out=out)
                ev1.record()
                ev1.synchronize()
                best = min(best, cp.cuda.get_elapsed_time(ev0, ev1))
            got = out.reshape(nt, -1)[:, which].get()
            results[name] = {"gpu_method": gm, "exec_ms": best, "setpts_ms": setpts_ms,
                             "rel_error": rel_l2(got, ref)}
        except Exception as e:  # noqa: BLE001 - a method the case does not support, out of memory...
            results[name] = {"gpu_method": gm, "error": f"{type(e).__name__}: {e}"}
        finally:
            del plan
            cp.get_default_memory_pool().free_all_blocks()
    return results


# --------------------------------------------------------------------------------------------
# Table


def fmt_ms(v) -> str:
    if v is None or not math.isfinite(v):
        return "—"
    return f"{v:.3g}" if v < 100 else f"{v:.1f}"


def fmt_err(v) -> str:
    return "—" if v is None or not math.isfinite(v) else f"{v:.1e}"


def summarise(case: Case, lines: list[dict], note: str, cuf: dict | None, cuf_reason: str | None) -> dict:
    by_method = {ln.get("method_requested"): ln for ln in lines}
    auto = by_method.get("auto", {})
    row = {"case": case.id, "label": case.label, "type": case.nufft_type, "dim": case.dim, "n": case.n,
           "m": case.m, "ntransf": case.ntransf, "fieldft": by_method, "note": note}
    row["auto_ms"] = auto.get("exec_ms")
    row["auto_method"] = auto.get("method")
    row["auto_bins"] = auto.get("bins")
    row["setpts_ms"] = auto.get("setpts_ms")
    row["rel_error"] = auto.get("rel_error")
    row["check_outputs"] = auto.get("check_outputs")
    row["ref_ms"] = auto.get("ref_ms")
    per = [by_method[mm]["exec_ms"] for mm in (*FORCED_METHODS[case.nufft_type], "measured")
           if mm in by_method and "exec_ms" in by_method[mm]]
    row["auto_over_best_method"] = row["auto_ms"] / min(per) if per and row["auto_ms"] else None
    # The same question inside one plan's measurement: the planner's candidate against the fastest
    # (one execute plus its adjoint, timed back to back by the library).
    cands = by_method.get("measured", {}).get("candidates") or []
    planner = [c["ms"] for c in cands if c.get("planner")]
    row["measured_best"] = cands[0] if cands else None
    row["auto_over_best_measured"] = planner[0] / cands[0]["ms"] if planner and cands and cands[0]["ms"] else None
    if cuf is not None:
        ok = {k: v for k, v in cuf.items() if "exec_ms" in v}
        best = min(ok, key=lambda k: ok[k]["exec_ms"]) if ok else None
        row["cufinufft"] = {"source": "same run", "methods": cuf, "best_method": best,
                            "best_ms": ok[best]["exec_ms"] if best else None,
                            "rel_error": ok[best]["rel_error"] if best else None}
    else:
        row["cufinufft"] = {"source": "published H100", "unavailable": cuf_reason, "best_method": case.published_method,
                            "best_ms": case.published_ms, "rel_error": None}
    c = row["cufinufft"]
    row["ratio"] = c["best_ms"] / row["auto_ms"] if c["best_ms"] and row["auto_ms"] else None
    return row


def print_table(rows: list[dict]) -> None:
    head = ["case", "problem", "fieldft auto ms (method, bins)", "forced methods ms", "measured best (ms per pair)",
            "auto/best", "auto/best measured", "set_points ms", "fieldft err (outputs)", "cuFINUFFT best ms", "cuFINUFFT method",
            "cuFINUFFT err", "cuFINUFFT source", "ratio cuF/fieldft"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for r in rows:
        f = r["fieldft"]
        per = " / ".join(f"{SHORT[mm]} {fmt_ms(f[mm].get('exec_ms')) if 'exec_ms' in f[mm] else 'failed'}"
                         for mm in FORCED_METHODS[r["type"]] if mm in f) or "—"
        mb = r.get("measured_best")
        per = [per, "—" if not mb else f"{mb['method']} @{mb['upsampfac']} bins {mb['bins']} ({fmt_ms(mb['ms'])})"]
        auto = "failed" if r["auto_ms"] is None else f"{fmt_ms(r['auto_ms'])} ({r['auto_method']}, {r['auto_bins']})"
        c = r["cufinufft"]
        cells = [r["case"], r["label"], auto, *per,
                 "—" if r["auto_over_best_method"] is None else f"{r['auto_over_best_method']:.2f}",
                 "—" if r.get("auto_over_best_measured") is None else f"{r['auto_over_best_measured']:.2f}",
                 fmt_ms(r["setpts_ms"]),
                 f"{fmt_err(r['rel_error'])} ({r['check_outputs']})" if r["rel_error"] is not None else "—",
                 fmt_ms(c["best_ms"]), c["best_method"] or "—", fmt_err(c["rel_error"]), c["source"],
                 "—" if r["ratio"] is None else f"{r['ratio']:.2f}"]
        print("| " + " | ".join(str(x) for x in cells) + " |")
    for r in rows:
        if r["note"]:
            print(f"note {r['case']}: fieldft_bench_gpu {r['note']}")
        for name, ln in r["fieldft"].items():
            if "error" in ln:
                print(f"note {r['case']}: fieldft method {name} failed: {ln['error']}")
        for name, v in (r["cufinufft"].get("methods") or {}).items():
            if "error" in v:
                print(f"note {r['case']}: cuFINUFFT {name} failed: {v['error']}")


def geomean(vals: list[float]) -> float | None:
    vals = [v for v in vals if v and v > 0]
    return math.exp(sum(math.log(v) for v in vals) / len(vals)) if vals else None


# --------------------------------------------------------------------------------------------


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", default=",".join(c.id for c in CASES), help="comma-separated case ids (default: A–M)")
    ap.add_argument("--repeat", type=int, default=5, help="timed executes per method, after a warm-up (default 5)")
    ap.add_argument("--quick", action="store_true", help="fieldft method auto only (skip output/subproblem/nupts)")
    ap.add_argument("--bench", help="fieldft_bench_gpu (default: newest build/*/bench/gpu_nufft/fieldft_bench_gpu)")
    ap.add_argument("--json", help="also write all results to this file")
    ap.add_argument("--check", type=int, default=64, help="outputs checked against the reference per transform")
    ap.add_argument("--ref-terms", type=float, default=4e9,
                    help="cap on direct-sum terms per case; fewer outputs are checked above it (default 4e9)")
    ap.add_argument("--timeout", type=float, default=600, help="seconds per fieldft_bench_gpu call (default 600)")
    ap.add_argument("--no-cufinufft", action="store_true", help="do not try to import cuFINUFFT (published times)")
    ap.add_argument("--require-cufinufft", action="store_true",
                    help="stop (exit 3) before timing anything when cuFINUFFT cannot be imported, instead of "
                         "falling back to the published times")
    ap.add_argument("--dump-dir", help="where cases are dumped for cuFINUFFT (default: a temporary folder)")
    ap.add_argument("--verify-dump", metavar="DIR",
                    help="only check a fieldft_bench_gpu --dump folder against numpy direct sums, then exit")
    args = ap.parse_args()

    if args.verify_dump:
        err = verify_dump(args.verify_dump)
        print(f"dump {args.verify_dump}: numpy direct sums vs reference.bin, rel l2 {err:.2e}")
        return 0 if err < 1e-10 else 1
    if args.repeat < 1:
        ap.error("--repeat must be >= 1")
    known = {c.id: c for c in CASES}
    wanted = [s.strip().upper() for s in args.cases.split(",") if s.strip()]
    bad = [s for s in wanted if s not in known]
    if bad or not wanted:
        ap.error(f"unknown case id(s) {', '.join(bad) or '(none)'}; expected some of {', '.join(known)}")
    cases = [known[s] for s in wanted]

    t_start = time.monotonic()
    now = datetime.datetime.now(datetime.timezone.utc)
    bench = find_bench(args.bench)
    dev = device_name()
    print(f"# fieldft CUDA NUFFT matrix, eps {EPS:g}, float32 — {now:%Y-%m-%d %H:%M} UTC")
    print(f"device: {dev}")
    print(f"fieldft: {bench} (git {git_commit()}), repeat {args.repeat}, {'auto only' if args.quick else 'all methods'}")

    if args.no_cufinufft:
        mods, reason = None, "--no-cufinufft given"
    else:
        mods, reason = import_cufinufft()
    if mods is None and args.require_cufinufft:
        print(f"cuFINUFFT unavailable ({reason}) and --require-cufinufft given: nothing timed")
        sys.exit(3)
    if mods is None:
        print(f"cuFINUFFT unavailable ({reason}); its columns show the published H100 best times of "
              f"shared/BENCHMARKS.md, labelled 'published H100', and ratios are against those.")
    else:
        print(f"cuFINUFFT {getattr(mods[1], '__version__', '?')} (same run, same data; gpu_method 1/2/3 per type)")
    sys.stdout.flush()

    rows = []
    for case in cases:
        methods = ["auto"] + ([] if args.quick else list(FORCED_METHODS[case.nufft_type]) +
                              (["measured"] if case.nufft_type != 3 else []))
        dump_dir = None
        if mods is not None:
            base = args.dump_dir or tempfile.gettempdir()
            dump_dir = tempfile.mkdtemp(prefix=f"fieldft_case_{case.id}_", dir=base)
        try:
            lines, note, wall = run_bench(bench, case, methods, args, dump_dir)
            cuf = None
            if mods is not None:
                try:
                    dump = load_dump(dump_dir)
                    cuf = run_cufinufft(mods, dump, args.repeat)
                    del dump
                except Exception as e:  # noqa: BLE001
                    cuf = {"all": {"error": f"{type(e).__name__}: {e}"}}
        finally:
            if dump_dir:
                shutil.rmtree(dump_dir, ignore_errors=True)
        row = summarise(case, lines, note, cuf, reason)
        row["bench_wall_s"] = wall
        rows.append(row)
        print(f"case {case.id} done in {wall:.1f} s (reference {row['ref_ms'] or 0:.0f} ms at "
              f"{row['check_outputs']} outputs): fieldft auto {fmt_ms(row['auto_ms'])} ms, err {fmt_err(row['rel_error'])}"
              + (f" — {row['note']}" if row["note"] else ""))
        sys.stdout.flush()

    print()
    print_table(rows)
    ratios = [r["ratio"] for r in rows if r["ratio"]]
    g = geomean(ratios)
    src = "published H100 times" if mods is None else "same-run cuFINUFFT"
    if g:
        faster = sum(1 for v in ratios if v >= 1)
        print(f"\ngeometric mean of ratio (cuFINUFFT best / fieldft auto, against {src}): {g:.2f} over "
              f"{len(ratios)} cases; fieldft at least as fast in {faster} of {len(ratios)}")
    runtime = time.monotonic() - t_start
    print(f"script run time: {runtime:.1f} s")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"date_utc": now.isoformat(timespec="seconds"), "device": dev, "bench": bench,
                       "git": git_commit(), "eps": EPS, "precision": "float32", "repeat": args.repeat,
                       "quick": args.quick,
                       "cufinufft": {"available": mods is not None, "reason": reason,
                                     "source": "same run" if mods is not None else "published H100"},
                       "cases": rows, "geomean_ratio": g, "runtime_s": runtime}, f, indent=1)
        print(f"wrote {args.json}")
    failed = [r["case"] for r in rows if r["auto_ms"] is None]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
