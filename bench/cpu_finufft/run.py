#!/usr/bin/env python3
"""fieldft vs FINUFFT on the CPU: same machine, same points, same tolerance, same thread count.

For each case (2D 512² and 3D 64³, M = 2e6, types 1 and 2, float at eps 1e-5 and double at
eps 1e-9; cases 9-12: type 3 in 2D and 3D, float and double, M = nk = --m3) this script
  1. draws points uniform in [-π, π)^d and strengths (type 1) or modes (type 2) with real and
     imaginary parts uniform in [-1, 1], and writes them as raw files; type 3: sources uniform in
     [-π, π)^d, targets uniform in [-n/2, n/2)^d (the space-bandwidth product of a type 1 with n
     modes per dimension: both libraries spread onto a grid of about 2n per dimension and run an
     inner type 2 on it), strengths as for type 1;
  2. times, interleaved over several rounds, fieldft (the C++ program fieldft_bench_cpu, one
     process per round) at eps and at a looser eps (eps × --loose-factor, see below) and FINUFFT
     (the `finufft` Python package, Plan API) — execute is the minimum over all rounds × repeats
     after a warm-up, set_points likewise;
  3. computes each result's relative l2 error against a direct double-precision sum (numpy) on a
     random subset of outputs, evaluated at the coordinates each library actually received (the
     float cases use float32-rounded points);
  4. reads FINUFFT's own debug output for its kernel width, upsampling factor and stage times, and
     (with --phases) fieldft's stage times, and prints markdown tables.

Why a looser-eps fieldft column: fieldft designs its kernel for eps/2.5 so that its measured error
stays below eps, while FINUFFT's measured error can exceed eps by 2–3x. The looser run compares
the two at about equal measured error; both columns are reported.

Usage: python3 bench/cpu_finufft/run.py --binary build/bench/bench/cpu_finufft/fieldft_bench_cpu
(pip install -r bench/cpu_finufft/requirements.txt first). --help lists the options.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass

import numpy as np

try:
    import finufft
except ImportError:  # pragma: no cover - reported to the user
    sys.exit("error: the finufft package is missing; pip install -r bench/cpu_finufft/requirements.txt")


@dataclass(frozen=True)
class Case:
    dim: int
    n: int
    nufft_type: int
    precision: str  # "float" or "double"
    eps: float

    @property
    def name(self) -> str:
        if self.nufft_type == 3:
            return f"{self.dim}D type 3 S={self.n // 2} {self.precision} ε={self.eps:g}"
        grid = f"{self.n}²" if self.dim == 2 else f"{self.n}³"
        return f"{self.dim}D {grid} type {self.nufft_type} {self.precision} ε={self.eps:g}"

    @property
    def real(self):
        return np.float32 if self.precision == "float" else np.float64

    @property
    def cplx(self):
        return np.complex64 if self.precision == "float" else np.complex128

    @property
    def isign(self) -> int:  # FINUFFT's default signs, used explicitly for both libraries
        return -1 if self.nufft_type == 2 else 1


# Type 3: targets in [-n/2, n/2)^d with sources in [-π, π)^d. n chosen so that each case takes
# 50-500 ms on the 2-core development machine at M = nk = 1e5.
TYPE3_N = {2: 512, 3: 32}


def all_cases() -> list[Case]:
    cases = []
    for dim, n in ((2, 512), (3, 64)):
        for t in (1, 2):
            for prec, eps in (("float", 1e-5), ("double", 1e-9)):
                cases.append(Case(dim, n, t, prec, eps))
    for dim in (2, 3):
        for prec, eps in (("float", 1e-5), ("double", 1e-9)):
            cases.append(Case(dim, TYPE3_N[dim], 3, prec, eps))
    return cases


# ------------------------------------------------------------------------------------------------
# Machine state

def load1() -> float:
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def wait_for_quiet(threshold: float, max_wait: float) -> float:
    """Waits until the 1-minute load is below threshold (or max_wait s passed); returns the load."""
    t0 = time.time()
    load = load1()
    while load >= threshold and time.time() - t0 < max_wait:
        print(f"  load {load:.2f} >= {threshold}: waiting ({time.time() - t0:.0f} s so far)", file=sys.stderr)
        time.sleep(15)
        load = load1()
    return load


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


# ------------------------------------------------------------------------------------------------
# Data and the exact reference

def make_data(case: Case, m: int, seed: int):
    """Coordinates (list of dim arrays, x first) and the execute input, in the case's precision;
    type 3: (sources, targets) as coordinates, m of each."""
    rng = np.random.default_rng([seed, case.dim, case.nufft_type])
    coords = [rng.uniform(-np.pi, np.pi, m).astype(case.real) for _ in range(case.dim)]
    count = case.n ** case.dim if case.nufft_type == 2 else m
    data = (rng.uniform(-1, 1, count) + 1j * rng.uniform(-1, 1, count)).astype(case.cplx)
    if case.nufft_type == 3:
        targets = [rng.uniform(-case.n / 2, case.n / 2, m).astype(case.real) for _ in range(case.dim)]
        return (coords, targets), data
    return coords, data


def mode_indices(case: Case, flat: np.ndarray) -> np.ndarray:
    """Integer frequencies (len(flat) × dim) of flat column-major, modeord-0 mode indices."""
    ks = []
    rest = flat.copy()
    for _ in range(case.dim):
        ks.append(rest % case.n - case.n // 2)
        rest //= case.n
    return np.stack(ks, axis=1).astype(np.float64)


def reference_type1(case: Case, coords, c, which: np.ndarray) -> np.ndarray:
    """f[k] = Σ_j c_j exp(isign·i·k·x_j) at the flat mode indices `which`, in double."""
    k = mode_indices(case, which)
    x = np.stack([np.asarray(v, dtype=np.float64) for v in coords])  # dim × M
    cd = c.astype(np.complex128)
    out = np.zeros(len(which), dtype=np.complex128)
    chunk = 20000
    for a in range(0, x.shape[1], chunk):
        phase = k @ x[:, a:a + chunk]
        out += np.exp(1j * case.isign * phase) @ cd[a:a + chunk]
    return out


def reference_type2(case: Case, coords, f, which: np.ndarray) -> np.ndarray:
    """c_j = Σ_k f[k] exp(isign·i·k·x_j) at the point indices `which`, in double."""
    kk = np.arange(case.n, dtype=np.float64) - case.n // 2
    fd = f.astype(np.complex128).reshape((case.n,) * case.dim)  # C order: axes (z,) y, x
    out = np.empty(len(which), dtype=np.complex128)
    for i, j in enumerate(which):
        e = [np.exp(1j * case.isign * kk * float(coords[d][j])) for d in range(case.dim)]
        if case.dim == 2:
            out[i] = e[1] @ fd @ e[0]
        else:
            out[i] = np.einsum("zyx,z,y,x->", fd, e[2], e[1], e[0])
    return out


def reference_type3(case: Case, coords, c, which: np.ndarray) -> np.ndarray:
    """f[k] = Σ_j c_j exp(isign·i·s_k·x_j) at the target indices `which`, in double."""
    sources, targets = coords
    s = np.stack([np.asarray(v, dtype=np.float64)[which] for v in targets], axis=1)  # len(which) × dim
    x = np.stack([np.asarray(v, dtype=np.float64) for v in sources])  # dim × M
    cd = c.astype(np.complex128)
    out = np.zeros(len(which), dtype=np.complex128)
    chunk = 20000
    for a in range(0, x.shape[1], chunk):
        out += np.exp(1j * case.isign * (s @ x[:, a:a + chunk])) @ cd[a:a + chunk]
    return out


def rel_err(a: np.ndarray, ref: np.ndarray) -> float:
    return float(np.linalg.norm(a.astype(np.complex128) - ref) / np.linalg.norm(ref))


# ------------------------------------------------------------------------------------------------
# fieldft (the C++ program)

def run_fieldft(binary: str, case: Case, eps: float, m: int, files: dict, nthreads: int, repeats: int,
                output: str | None = None, phases: bool = False) -> dict:
    if case.nufft_type == 3:  # m sources and m targets
        shape = ["--dim", str(case.dim), "--nk", str(m), "--targets", files["targets"]]
    else:
        shape = ["--modes", *[str(case.n)] * case.dim]
    cmd = [binary, "--type", str(case.nufft_type), *shape,
           "--precision", case.precision, "--eps", repr(eps), "--isign", str(case.isign),
           "--nthreads", str(nthreads), "--repeats", str(repeats), "--m", str(m),
           "--points", files["points"], "--input", files["input"]]
    if output:
        cmd += ["--output", output]
    if phases:
        cmd += ["--phases"]
    env = dict(os.environ, OMP_NUM_THREADS=str(nthreads))
    res = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if res.returncode != 0:
        raise RuntimeError(f"fieldft_bench_cpu failed ({res.returncode}): {res.stderr.strip()}\ncommand: {' '.join(cmd)}")
    return json.loads(res.stdout)


# ------------------------------------------------------------------------------------------------
# FINUFFT

class CapturedStdout:
    """Captures what C code writes to file descriptor 1 (FINUFFT's debug output)."""

    def __enter__(self):
        sys.stdout.flush()
        self._tmp = tempfile.TemporaryFile(mode="w+b")
        self._saved = os.dup(1)
        os.dup2(self._tmp.fileno(), 1)
        return self

    def __exit__(self, *exc):
        sys.stdout.flush()
        try:
            import ctypes
            ctypes.CDLL(None).fflush(None)  # C stdio buffers, before the descriptor is restored
        except OSError:
            pass
        os.dup2(self._saved, 1)
        os.close(self._saved)
        self._tmp.seek(0)
        self.text = self._tmp.read().decode(errors="replace")
        self._tmp.close()


def finufft_plan(case: Case, eps: float, nthreads: int, **opts):
    # Python finufft uses C (row-major) order: modes and coordinates go slowest first, so the
    # first coordinate handed to the C library (its fastest axis) is fieldft's x.
    shape = case.dim if case.nufft_type == 3 else (case.n,) * case.dim
    return finufft.Plan(case.nufft_type, shape, n_trans=1, eps=eps, isign=case.isign,
                        dtype=np.dtype(case.cplx).name, nthreads=nthreads, **opts)


def finufft_setpts(plan, case: Case, coords):
    if case.nufft_type == 3:  # sources x, y, z and targets s, t, u; the sum s·x is the same in any axis order
        sources, targets = coords
        names = ("x", "y", "z")[:len(sources)], ("s", "t", "u")[:len(targets)]
        plan.setpts(**dict(zip(names[0], sources)), **dict(zip(names[1], targets)))
    else:
        plan.setpts(*coords[::-1])


def finufft_input(case: Case, data):
    return data.reshape((case.n,) * case.dim) if case.nufft_type == 2 else data


def finufft_debug_info(case: Case, eps: float, nthreads: int, coords, data, runs: int = 3) -> dict:
    """Kernel width, upsampling factor, fine grid and stage times from FINUFFT's debug output."""
    info: dict = {}
    stage_keys = {"spread": r"tot spread:\s*([0-9.eE+-]+) s", "interp": r"tot interp:\s*([0-9.eE+-]+) s",
                  "fft": r"tot FFT:\s*([0-9.eE+-]+) s", "deconv": r"tot deconvolve:\s*([0-9.eE+-]+) s",
                  # type 3 (prephase, spread, inner type 2 with its FFT, deconvolve)
                  "prephase": r"tot prephase:\s*([0-9.eE+-]+) s", "inner": r"tot inner NUFFT:\s*([0-9.eE+-]+) s"}
    with CapturedStdout() as cap:
        plan = finufft_plan(case, eps, nthreads, debug=1)
        finufft_setpts(plan, case, coords)
        src = finufft_input(case, data)
        for _ in range(runs + 1):
            plan.execute(src)
        del plan
    text = cap.text
    info["debug_text"] = text
    if mt := re.search(r"chose ns=(\d+) beta=([0-9.]+)", text):
        info["kernel_width"] = int(mt.group(1))
        info["kernel_beta"] = float(mt.group(2))
    if mt := re.search(r"kerformula=(\d+):\s*([^.\n]*)", text):
        info["kernel"] = mt.group(2).strip()
    if mt := re.search(r"upsampfac=([0-9.]+)", text) or re.search(r"sigma=([0-9.]+)", text):
        info["upsampfac"] = float(mt.group(1))
    if mt := re.search(r"\(nf1,nf2,nf3\)=\((\d+),(\d+),(\d+)\)", text):
        info["fine_grid"] = [int(v) for v in mt.groups()][: case.dim]
    if case.nufft_type == 3:  # the spreading grid, nf0 nf1 nf2 (the inner plan's grid is σ times that)
        if nfs := re.findall(r"\bnf(\d)=(\d+)", text):
            info["fine_grid"] = [int(v) for _, v in sorted(set(nfs))][: case.dim]
        for key, pat in (("setpts_phase_ms", r"\[setpts t3\] phase & deconv factors:\s*([0-9.eE+-]+) s"),
                         ("sort_ms", r"\[setpts t3\] sort \(didSort=\d\):\s*([0-9.eE+-]+) s"),
                         ("setpts_inner_ms", r"\[setpts t3\] inner t2 plan & setpts:\s*([0-9.eE+-]+) s")):
            if mt := re.search(pat, text):
                info[key] = 1e3 * float(mt.group(1))
    if case.nufft_type != 3 and (mt := re.search(r"sort \(didSort=\d\):\s*([0-9.eE+-]+) s", text)):
        info["sort_ms"] = 1e3 * float(mt.group(1))
    for key, pat in stage_keys.items():
        vals = [1e3 * float(v) for v in re.findall(pat, text)]
        if vals:  # the first execute is the warm-up
            info[f"{key}_ms"] = min(vals[1:] or vals)
    return info


def time_finufft(plan, case: Case, coords, data, out, repeats: int) -> tuple[float, float]:
    """(set_points ms, execute ms): minima over repeats (set_points over up to 3), after a warm-up."""
    setpts = float("inf")
    for _ in range(min(repeats, 3)):
        t0 = time.perf_counter()
        finufft_setpts(plan, case, coords)
        setpts = min(setpts, 1e3 * (time.perf_counter() - t0))
    src = finufft_input(case, data)
    plan.execute(src, out=out)
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        plan.execute(src, out=out)
        best = min(best, 1e3 * (time.perf_counter() - t0))
    return setpts, best


# ------------------------------------------------------------------------------------------------

def run_case(case: Case, args, workdir: str, max_wait: float) -> dict:
    m = args.m3 if case.nufft_type == 3 else args.m
    coords, data = make_data(case, m, args.seed)
    tag = f"{case.dim}d_t{case.nufft_type}_{case.precision}"
    files = {"points": os.path.join(workdir, f"points_{tag}.bin"), "input": os.path.join(workdir, f"input_{tag}.bin")}
    if case.nufft_type == 3:
        files["targets"] = os.path.join(workdir, f"targets_{tag}.bin")
        np.concatenate(coords[0]).tofile(files["points"])
        np.concatenate(coords[1]).tofile(files["targets"])
    else:
        np.concatenate(coords).tofile(files["points"])
    data.tofile(files["input"])
    out_len = case.n ** case.dim if case.nufft_type == 1 else m
    out_file = {"eps": os.path.join(workdir, f"out_{tag}.bin"), "loose": os.path.join(workdir, f"outl_{tag}.bin")}
    loose_eps = case.eps * args.loose_factor

    plan = finufft_plan(case, case.eps, args.nthreads)
    fin_out = np.zeros((case.n,) * case.dim if case.nufft_type == 1 else m, dtype=case.cplx)  # type 3: nk = m
    load_before = wait_for_quiet(args.max_load, max_wait)
    ff = {"eps": [], "loose": []}
    fin_setpts, fin_exec = [], []
    for r in range(args.rounds):
        last = r == args.rounds - 1
        ff["eps"].append(run_fieldft(args.binary, case, case.eps, m, files, args.nthreads, args.repeats,
                                     out_file["eps"] if last else None))
        s, e = time_finufft(plan, case, coords, data, fin_out, args.repeats)
        fin_setpts.append(s)
        fin_exec.append(e)
        ff["loose"].append(run_fieldft(args.binary, case, loose_eps, m, files, args.nthreads, args.repeats,
                                       out_file["loose"] if last else None))
    load_after = load1()
    del plan

    rng = np.random.default_rng([args.seed, 7, case.dim, case.nufft_type])
    which = np.sort(rng.choice(out_len, size=min(args.subset, out_len), replace=False))
    if case.nufft_type == 1:
        ref = reference_type1(case, coords, data, which)
    elif case.nufft_type == 2:
        ref = reference_type2(case, coords, data, which)
    else:
        ref = reference_type3(case, coords, data, which)
    res = {"case": case.name, "dim": case.dim, "n": case.n, "type": case.nufft_type, "precision": case.precision,
           "eps": case.eps, "loose_eps": loose_eps, "m": m, "nthreads": args.nthreads,
           "load_before": load_before, "load_after": load_after}
    for key in ("eps", "loose"):
        runs = ff[key]
        out = np.fromfile(out_file[key], dtype=case.cplx)
        res[f"fieldft_{key}"] = {
            "exec_ms": min(j["exec_ms"] for j in runs), "setpts_ms": min(j["setpts_ms"] for j in runs),
            "plan_ms": min(j["plan_ms"] for j in runs), "first_exec_ms": min(j["first_exec_ms"] for j in runs),
            "exec_ms_per_round": [j["exec_ms"] for j in runs], "kernel_width": runs[0]["kernel_width"],
            "upsampfac": runs[0]["upsampfac"], "fine_grid": runs[0]["fine_grid"], "rel_err": rel_err(out[which], ref)}
        if case.nufft_type == 3:
            res[f"fieldft_{key}"]["type3_direct"] = runs[0]["type3_direct"]
    fin_res = fin_out.reshape(-1)[which]
    res["finufft"] = {"exec_ms": min(fin_exec), "setpts_ms": min(fin_setpts), "exec_ms_per_round": fin_exec,
                      "rel_err": rel_err(fin_res, ref)}
    dbg = finufft_debug_info(case, case.eps, args.nthreads, coords, data)
    if args.keep_debug:
        res["finufft"]["debug_text"] = dbg["debug_text"]
    dbg.pop("debug_text", None)
    res["finufft"]["debug"] = dbg
    if args.phases and case.nufft_type != 3:  # the stage split covers types 1 and 2 only
        for key, eps in (("eps", case.eps), ("loose", loose_eps)):
            res[f"fieldft_{key}"]["phases"] = run_fieldft(args.binary, case, eps, m, files, args.nthreads,
                                                         args.repeats, phases=True)["phases"]
    for f in (*files.values(), *out_file.values()):
        os.remove(f)
    return res


def fmt_ms(v: float) -> str:
    return f"{v:.1f}" if v >= 10 else f"{v:.2f}"


def markdown(results: list[dict]) -> str:
    lines = []
    lines.append("| case | fieldft exec ms | FINUFFT exec ms | FINUFFT/fieldft | fieldft @2.5ε exec ms | "
                 "FINUFFT/fieldft@2.5ε | setpts ms fieldft / @2.5ε / FINUFFT | rel. l2 error fieldft / @2.5ε / FINUFFT | "
                 "width w fieldft / @2.5ε / FINUFFT | σ fieldft / FINUFFT | load 1-min |")
    lines.append("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in results:
        a, b, f = r["fieldft_eps"], r["fieldft_loose"], r["finufft"]
        d = f.get("debug", {})
        lines.append(
            f"| {r['case']} | {fmt_ms(a['exec_ms'])} | {fmt_ms(f['exec_ms'])} | **{f['exec_ms'] / a['exec_ms']:.2f}** | "
            f"{fmt_ms(b['exec_ms'])} | **{f['exec_ms'] / b['exec_ms']:.2f}** | "
            f"{fmt_ms(a['setpts_ms'])} / {fmt_ms(b['setpts_ms'])} / {fmt_ms(f['setpts_ms'])} | "
            f"{a['rel_err']:.1e} / {b['rel_err']:.1e} / {f['rel_err']:.1e} | "
            f"{a['kernel_width']} / {b['kernel_width']} / {d.get('kernel_width', '?')} | "
            f"{a['upsampfac']:g} / {d.get('upsampfac', '?')} | {r['load_before']:.2f}–{r['load_after']:.2f} |")
    if any("phases" in r["fieldft_eps"] for r in results):
        lines.append("")
        lines.append("Stages of one execute, ms. fieldft: FFT and mode copy timed alone on a grid of the plan's size "
                     "(FFTW, FFTW_ESTIMATE), spread/interp = exec − FFT − copy; \"presorted\" = the same problem "
                     "with points (and strengths) handed over in about the plan's sorted order. FINUFFT: its own "
                     "debug timers (\"sort\" = its set_points).")
        lines.append("")
        lines.append("| case | spread/interp fieldft / @2.5ε / FINUFFT | FFT fieldft / FINUFFT | "
                     "copy+deconv fieldft / FINUFFT | exec presorted fieldft / @2.5ε | "
                     "set_points fieldft / presorted / FINUFFT sort |")
        lines.append("|---|---|---|---|---|---|")
        nan = float("nan")
        for r in results:
            if "phases" not in r["fieldft_eps"]:
                continue
            p, pl, d = r["fieldft_eps"]["phases"], r["fieldft_loose"]["phases"], r["finufft"]["debug"]
            si = "spread_ms" if r["type"] == 1 else "interp_ms"
            copy = p["copy_ms"] + p.get("zero_ms", 0.0)
            lines.append(
                f"| {r['case']} | {fmt_ms(p[si])} / {fmt_ms(pl[si])} / {fmt_ms(d.get(si, nan))} | "
                f"{fmt_ms(p['fft_ms'])} / {fmt_ms(d.get('fft_ms', nan))} | "
                f"{fmt_ms(copy)} / {fmt_ms(d.get('deconv_ms', nan))} | "
                f"{fmt_ms(p['exec_presorted_ms'])} / {fmt_ms(pl['exec_presorted_ms'])} | "
                f"{fmt_ms(r['fieldft_eps']['setpts_ms'])} / {fmt_ms(p['setpts_presorted_ms'])} / "
                f"{fmt_ms(d.get('sort_ms', nan))} |")
    t3 = [r for r in results if r["type"] == 3]
    if t3:
        lines.append("")
        lines.append("Type 3: the spreading grid (per dimension; each library's inner type 2 runs on a fine grid σ "
                     "times larger) and FINUFFT's stages from its debug timers, ms.")
        lines.append("")
        lines.append("| case | grid fieldft / FINUFFT | FINUFFT exec: prephase / spread / inner type 2 / deconvolve | "
                     "FINUFFT set_points: factors / sort / inner plan and set_points |")
        lines.append("|---|---|---|---|")
        nan = float("nan")
        for r in t3:
            d = r["finufft"].get("debug", {})
            grid = "×".join(str(v) for v in r["fieldft_eps"]["fine_grid"])
            fgrid = "×".join(str(v) for v in d.get("fine_grid", [])) or "?"
            lines.append(
                f"| {r['case']} | {grid} / {fgrid} | "
                + " / ".join(fmt_ms(d.get(k, nan)) for k in ("prephase_ms", "spread_ms", "inner_ms", "deconv_ms"))
                + " | "
                + " / ".join(fmt_ms(d.get(k, nan)) for k in ("setpts_phase_ms", "sort_ms", "setpts_inner_ms"))
                + " |")
    return "\n".join(lines)


def main() -> None:
    here = os.path.dirname(os.path.abspath(__file__))
    default_binary = os.path.normpath(os.path.join(here, "..", "..", "build", "bench", "bench", "cpu_finufft",
                                                   "fieldft_bench_cpu"))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--binary", default=default_binary, help="fieldft_bench_cpu (default: %(default)s)")
    ap.add_argument("--cases", default="all",
                    help="comma-separated case numbers 1-12 in the order of the matrix (9-12: type 3), or 'all'")
    ap.add_argument("--m", type=int, default=2_000_000, help="number of points (types 1 and 2)")
    ap.add_argument("--m3", type=int, default=100_000, help="number of sources and of targets (type 3)")
    ap.add_argument("--nthreads", type=int, default=os.cpu_count(), help="threads for both libraries")
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds (fieldft, FINUFFT, fieldft@loose)")
    ap.add_argument("--repeats", type=int, default=5, help="timed executes per round, after a warm-up")
    ap.add_argument("--loose-factor", type=float, default=2.5, help="eps factor of the equal-error fieldft run")
    ap.add_argument("--subset", type=int, default=200, help="outputs checked against the direct sum")
    ap.add_argument("--seed", type=int, default=20261121)
    ap.add_argument("--max-load", type=float, default=0.5, help="wait for the 1-minute load to fall below this")
    ap.add_argument("--max-wait", type=float, default=600, help="longest wait for a quiet machine before the first case, s")
    ap.add_argument("--max-wait-case", type=float, default=60, help="longest wait before each later case, s")
    ap.add_argument("--phases", action="store_true", help="also time the stages of execute")
    ap.add_argument("--keep-debug", action="store_true", help="keep FINUFFT's debug text in the JSON")
    ap.add_argument("--json", help="write all results to this JSON file")
    ap.add_argument("--report", nargs="+", metavar="JSON",
                    help="only print the tables of results saved earlier with --json (files are concatenated)")
    args = ap.parse_args()
    if args.report:
        results = []
        for path in args.report:
            with open(path) as f:
                saved = json.load(f)
            m = saved["meta"]
            print(f"{path}: {m['date']}, {m['cpu']}, {m['nthreads']} threads, FINUFFT {m['finufft_version']}, "
                  f"M = {m['m']} (type 3: M = nk = {m.get('m3', '-')}), min over {m['rounds']} rounds × {m['repeats']} executes")
            results += saved["results"]
        print()
        print(markdown(results))
        return
    if not os.access(args.binary, os.X_OK):
        sys.exit(f"error: {args.binary} is not an executable; build the target fieldft_bench_cpu "
                 "(cmake --build <build dir> --target fieldft_bench_cpu) or pass --binary")
    cases = all_cases()
    if args.cases != "all":
        try:
            cases = [cases[int(i) - 1] for i in args.cases.split(",")]
        except (ValueError, IndexError):
            sys.exit(f"error: --cases takes numbers 1-{len(cases)} separated by commas, got '{args.cases}'")
    os.environ["OMP_NUM_THREADS"] = str(args.nthreads)

    results = []
    with tempfile.TemporaryDirectory(prefix="fieldft_bench_") as workdir:
        for i, case in enumerate(cases):
            print(f"{case.name} ...", file=sys.stderr)
            r = run_case(case, args, workdir, args.max_wait if i == 0 else args.max_wait_case)
            results.append(r)
            print(f"  fieldft {r['fieldft_eps']['exec_ms']:.2f} ms (err {r['fieldft_eps']['rel_err']:.1e}), "
                  f"@loose {r['fieldft_loose']['exec_ms']:.2f} ms (err {r['fieldft_loose']['rel_err']:.1e}), "
                  f"FINUFFT {r['finufft']['exec_ms']:.2f} ms (err {r['finufft']['rel_err']:.1e})", file=sys.stderr)
    meta = {"date": datetime.date.today().isoformat(), "cpu": cpu_model(), "logical_cpus": os.cpu_count(),
            "niceness": os.nice(0),
            "nthreads": args.nthreads, "finufft_version": finufft.__version__, "numpy_version": np.__version__,
            "m": args.m, "m3": args.m3, "rounds": args.rounds, "repeats": args.repeats, "command": " ".join(sys.argv)}
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"meta": meta, "results": results}, f, indent=1)
    print(f"{meta['date']}, {meta['cpu']}, {args.nthreads} threads, FINUFFT {meta['finufft_version']}, "
          f"M = {args.m} (type 3: M = nk = {args.m3}), min over {args.rounds} rounds × {args.repeats} executes\n")
    print(markdown(results))


if __name__ == "__main__":
    main()
