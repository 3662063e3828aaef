#!/usr/bin/env python3
"""Round trips `fieldft simulate` -> `fieldft recon`, and recon's handling of bad input.

usage: recon_check.py FIELDFT MODE [MODE-ARGS] -- SIMULATE-ARGS [++ RECON-ARGS]

modes:
  roundtrip NRMSE FORMAT [KEY=VALUE ...] [worse=FACTOR:ARG,ARG...]
      simulate SIMULATE-ARGS into a temporary directory as FORMAT (h5: ISMRMRD, cfl: BART set),
      then `recon --json` with RECON-ARGS writing .nii.gz, .npy, .cfl and .png; the JSON report
      must parse and hold the documented keys, its NRMSE against the simulated truth must be
      below NRMSE, each choices[KEY] must equal VALUE (nifti=0: no NIfTI output; scale=S: the .cfl
      set's maps and k-space are multiplied by S first, as in scanner units), every output must be a valid file of its
      format with the image's size, and nothing else (no temporary file) may be left. worse=:
      the recon with ARGS instead of RECON-ARGS (e.g. --encoding,nufft: ignoring the field map)
      must be at least FACTOR times worse: the model the tool chose is the reason for the NRMSE.
  corrupt FORMAT HOW
      simulate, damage the k-space (truncate: cut the .cfl / the .h5 file in half; garbage:
      overwrite with text), recon must fail with "fieldft: error:" and a library exit code, and
      write no output.
  parity NRMSE TOL FORMAT
      simulate, then recon with `--backend cpu` and with `--backend cuda` (RECON-ARGS added to
      both) into .npy images: the CUDA run must report backend cuda and its device, both NRMSEs
      must be below NRMSE, and the two images must agree to a relative l2 difference below TOL.
  simulate_parity TOL
      (gpu) simulate (SIM-ARGS) with --backend cpu and with --backend cuda into .cfl sets: each
      must report its backend, and the k-spaces must agree to a relative l2 difference below TOL.
  simulate_stack TOL
      simulate a stack (SIM-ARGS) with --stack auto (its slices' 2D models and the k_z transform)
      and with --stack off (one 3D model) into .cfl sets: the reports must say so (stack_slices
      Nz and 0), and the k-spaces must agree to a relative l2 difference below TOL.
  chunks TOL FORMAT
      simulate a stack (3D, every k_z plane sampled alike), then recon (RECON-ARGS added) with
      `--chunk none` and with `--chunk slices` into .npy images: the images must agree to a relative
      l2 difference below TOL (the slices' problems are the whole's, recon_chunks.hpp); with
      `--chunk auto --memory-limit` between the two estimates recon must choose slices and give the
      same image; with a limit below one slice's estimate it must fail (10 + kTooLarge) saying how
      much is needed and available, and write nothing.
  memory FORMAT
      simulate data that are not a stack (2D), then `--memory-limit 1K` must fail (10 + kTooLarge)
      saying how much is needed, what is available and that the data cannot be split, and
      `--chunk slices` must fail (10 + kInvalidArgument) saying why; nothing written.
  unwritable
      simulate, recon with one good output and one in a directory that does not exist: clear
      error, nonzero exit, and neither output written.
  ranks MPIEXEC TOL FORMAT SPLIT K [K ...]
      simulate, recon in one process (RECON-ARGS; for SPLIT problems with --chunk slices, as all runs), then
      `MPIEXEC --oversubscribe -n K fieldft recon ... --split SPLIT` for each K: the report (rank 0's
      only: one JSON line) must say the split and K ranks (K > 1), and the image must agree with the
      one-process image to a relative l2 difference <= TOL (TOL 0: byte for byte).
  ranks_error MPIEXEC K FORMAT
      simulate, then under `MPIEXEC -n K`: an output that only rank 0 checks (its directory does not
      exist) and a --maps file that no rank can read must each end every rank with a nonzero status,
      one "fieldft: error: rank r of K:" message naming the cause, and nothing written.
  devices TOL FORMAT SPLIT
      (gpu) simulate, recon with --devices 0 and with every visible device up to 4 (--devices 0,1,..
      --split SPLIT, RECON-ARGS added): the report must say the split and the devices; the images
      must agree to TOL.
      Skipped (77) with fewer than two CUDA devices.

Only the standard library.
"""
import array
import gzip
import json
import os
import struct
import subprocess
import sys
import tempfile

from cli_check import LIBRARY_EXIT_CODES, fail, png_chunks, require_keys, run


def simulate(tool, d, fmt, sim_args):
    out = os.path.join(d, "sim.h5" if fmt == "h5" else "sim")
    p = run(tool, ["simulate", "-o", out, "--json"] + sim_args)
    if p.returncode != 0:
        fail("simulate failed with status %d" % p.returncode)
    j = json.loads(p.stdout)
    return out, j


def recon_json(tool, args):
    p = run(tool, ["recon"] + args + ["--json"])
    if p.returncode != 0:
        fail("recon exit status %d, expected 0" % p.returncode)
    lines = [l for l in p.stdout.splitlines() if l.strip()]
    if len(lines) != 1:
        fail("expected one line of JSON, got %d" % len(lines))
    return json.loads(lines[0])


def check_npy(path, shape):
    with open(path, "rb") as f:
        data = f.read()
    if data[:6] != b"\x93NUMPY":
        fail("%s: not an .npy file" % path)
    hlen = struct.unpack("<H", data[8:10])[0]
    header = data[10:10 + hlen].decode("latin1")
    want = "(" + ", ".join(str(s) for s in reversed(shape)) + ("," if len(shape) == 1 else "") + ")"
    if "'<c8'" not in header or want not in header:
        fail("%s: header %r, expected complex64 of shape %s" % (path, header, want))
    if len(data) != 10 + hlen + 8 * prod(shape):
        fail("%s: %d bytes, expected header + %d" % (path, len(data), 8 * prod(shape)))


def check_nifti_gz(path, shape):
    with gzip.open(path, "rb") as f:
        hdr = f.read(348)
    if struct.unpack("<i", hdr[:4])[0] != 348:
        fail("%s: not a NIfTI-1 header" % path)
    dims = struct.unpack("<8h", hdr[40:56])
    if list(dims[1:1 + dims[0]]) != list(shape):
        fail("%s: dimensions %s, expected %s" % (path, dims[1:1 + dims[0]], shape))


def check_cfl(base, shape):
    with open(base + ".hdr") as f:
        dims = [int(x) for x in f.read().split("\n")[1].split()]
    if dims[:len(shape)] != list(shape) or os.path.getsize(base + ".cfl") != 8 * prod(shape):
        fail("%s: dims %s / size, expected %s" % (base, dims, shape))


SKIP = 77  # ctest's SKIP_RETURN_CODE for the gpu-labelled parity tests


def read_npy_c8(path):
    """The values of a complex64 (or, from --prec d, complex128) .npy file as a list of complex numbers."""
    with open(path, "rb") as f:
        data = f.read()
    hlen = struct.unpack("<H", data[8:10])[0]
    body = data[10 + hlen:]
    wide = "'<c16'" in data[10:10 + hlen].decode("latin1")
    vals = struct.unpack("<%d%s" % (len(body) // (8 if wide else 4), "d" if wide else "f"), body)
    return [complex(vals[i], vals[i + 1]) for i in range(0, len(vals), 2)]


def check_parity(tool, margs, sim, rec):
    bound, tol, fmt = float(margs[0]), float(margs[1]), margs[2]
    require_cuda(tool)
    with tempfile.TemporaryDirectory() as d:
        src, _ = simulate(tool, d, fmt, sim)
        images, reports = recon_variants(tool, src, d, "backend", ["cpu", "cuda"], rec)
        for backend, j in reports.items():
            if not j["nrmse"] < bound:
                fail("%s: NRMSE %.4f >= %g" % (backend, j["nrmse"], bound))
        g = reports["cuda"]
        require_keys(g["choices"], ["device", "device_name"])
        require_keys(g["seconds"], ["upload", "download"])
        if "--gram" in rec and "Gram matrix" not in g["choices"].get("operator", ""):
            fail("--gram on CUDA: choices.operator does not name the Gram normal: %r" % g["choices"].get("operator"))
        rel = rel_l2(images["cpu"], images["cuda"])
        print("NRMSE cpu %.4f, cuda %.4f (device %d, %s); |x_cuda - x_cpu| / |x_cpu| = %.3e" % (
            reports["cpu"]["nrmse"], g["nrmse"], g["choices"]["device"], g["choices"]["device_name"], rel))
        if not rel < tol:
            fail("the CPU and CUDA images differ by %.3e (relative l2), expected < %g" % (rel, tol))


def simulate_two(tool, option, values, sim, check):
    """simulate SIM-ARGS once with each `option value` into .cfl sets; check(value, report) for
    each; returns {value: k-space}."""
    ksp = {}
    with tempfile.TemporaryDirectory() as d:
        for value in values:
            out = os.path.join(d, value)
            p = run(tool, ["simulate", "-o", out, "--json", option, value] + sim)
            if p.returncode != 0:
                fail("simulate %s %s: exit status %d: %s" % (option, value, p.returncode, p.stderr.strip()))
            check(value, json.loads(p.stdout))
            with open(out + "_ksp.cfl", "rb") as f:
                raw = array.array("f")
                raw.frombytes(f.read())
            ksp[value] = [complex(raw[i], raw[i + 1]) for i in range(0, len(raw), 2)]
    return ksp


def check_simulate_parity(tool, margs, sim):
    """simulate --backend cpu and --backend cuda: the same k-space up to TOL (relative l2)."""
    tol = float(margs[0])
    require_cuda(tool)

    def check(backend, j):
        if j.get("backend") != backend:
            fail("simulate --backend %s reports backend %r" % (backend, j.get("backend")))
    ksp = simulate_two(tool, "--backend", ("cpu", "cuda"), sim, check)
    rel = rel_l2(ksp["cpu"], ksp["cuda"])
    print("simulate: |y_cuda - y_cpu| / |y_cpu| = %.3e over %d samples" % (rel, len(ksp["cpu"])))
    if not rel < tol:
        fail("the CPU and CUDA simulations differ by %.3e (relative l2), expected < %g" % (rel, tol))


def check_simulate_stack(tool, margs, sim):
    """simulate --stack auto and --stack off: the same k-space up to TOL (relative l2)."""
    tol = float(margs[0])

    def check(stack, j):
        nz = j["matrix"][2]
        if j.get("stack_slices") != (nz if stack == "auto" else 0):
            fail("simulate --stack %s reports stack_slices %r (matrix %r)" % (stack, j.get("stack_slices"), j["matrix"]))
    ksp = simulate_two(tool, "--stack", ("auto", "off"), sim, check)
    rel = rel_l2(ksp["off"], ksp["auto"])
    print("simulate: |y_slices - y_3d| / |y_3d| = %.3e over %d samples" % (rel, len(ksp["off"])))
    if not rel < tol:
        fail("the stack's slice-wise and 3D simulations differ by %.3e (relative l2), expected < %g" % (rel, tol))


def rel_l2(a, b):
    diff = sum(abs(x - y) ** 2 for x, y in zip(a, b)) ** 0.5
    ref = sum(abs(x) ** 2 for x in a) ** 0.5
    return diff / ref if ref > 0 else float("inf")


def require_cuda(tool):
    info = json.loads(run(tool, ["info", "--json"]).stdout)
    if "cuda" not in info["usable_backends"]:
        print("SKIP: no usable CUDA device (fieldft info: %s)" % info["usable_backends"])
        sys.exit(SKIP)


def require_cuda_if_asked(tool, rec):
    if "--backend" in rec and rec[rec.index("--backend") + 1] == "cuda":
        require_cuda(tool)


def recon_variants(tool, src, d, option, values, rec):
    """recon with `--OPTION VALUE` for each value into VALUE.npy; choices[OPTION] must be VALUE."""
    images, reports = {}, {}
    for value in values:
        out = os.path.join(d, value + ".npy")
        j = recon_json(tool, [src, "-o", out, "--" + option, value] + rec)
        if j["choices"].get(option) != value:
            fail("--%s %s ran as %r" % (option, value, j["choices"].get(option)))
        images[value], reports[value] = read_npy_c8(out), j
    return images, reports


def expect_too_large(p, outs, texts):
    expect_failure(p, outs)
    if p.returncode != 15:
        fail("exit status %d, expected 15 (10 + kTooLarge)" % p.returncode)
    for t in texts:
        if t not in p.stderr:
            fail("the message should say %r" % t)
    print("ok: " + p.stderr.strip())


def check_chunks(tool, margs, sim, rec):
    tol, fmt = float(margs[0]), margs[1]
    require_cuda_if_asked(tool, rec)
    with tempfile.TemporaryDirectory() as d:
        src, s = simulate(tool, d, fmt, sim)
        images, reports = recon_variants(tool, src, d, "chunk", ["none", "slices"], rec)
        for j in reports.values():
            require_keys(j["memory"], ["needed_bytes", "needed_per_slice_bytes", "available_bytes", "budget_source"])
        if reports["slices"]["choices"].get("slices") != s["matrix"][2]:
            fail("expected %d slices, got %r" % (s["matrix"][2], reports["slices"]["choices"].get("slices")))
        # Per-slice seconds: one of each per slice, and a slice's wall holds its parts.
        secs = reports["slices"]["seconds"]
        parts = ["slice_setup", "slice_solve", "slice_stage", "slice_download", "slice_wall"]
        require_keys(secs, parts)
        for k in parts:
            if len(secs[k]) != s["matrix"][2] or min(secs[k]) < 0:
                fail("seconds.%s: %r, expected %d non-negative values" % (k, secs[k], s["matrix"][2]))
        for z, wall in enumerate(secs["slice_wall"]):
            inside = sum(secs[k][z] for k in parts[:4])
            if not inside <= wall * (1 + 1e-9) + 1e-6:
                fail("slice %d: set-up + solve + staging + download %.6f s exceed its wall %.6f s" % (z, inside, wall))
        # On a device, --pin auto locks this small stack (on: far below a quarter of any host's
        # memory); a lock that fails is a note, and the copies still go up.
        pin_notes = [n for n in reports["slices"].get("notes", []) if "pinned" in n]
        if "cuda" in rec and pin_notes:
            print("note: %r" % pin_notes)
        if "cuda" in rec:
            # The workers start before the k_z transform; the solve stage reports what it waited.
            ch = reports["slices"]["choices"]
            if ch.get("pin") != "on" or "at most a quarter of the host" not in ch.get("pin_reason", ""):
                fail("--pin auto: choices.pin %r (%r), expected on" % (ch.get("pin"), ch.get("pin_reason")))
            for k in ("slice_workers_start", "slice_workers_wait", "pin", "pin_wait"):
                if not secs.get(k, -1) >= 0:
                    fail("seconds.%s: %r, expected the slice workers' start and the locking's seconds" % (k, secs.get(k)))
            # The other two ways up give the same image within the tolerance (the NUFFT's atomics
            # reorder sums run to run): each worker's pinned staging buffer, and pageable memory
            # staged by the driver; neither locks the stack (no seconds.pin).
            for mode in ("staged", "off"):
                out = os.path.join(d, "pin_%s.npy" % mode)
                j = recon_json(tool, [src, "-o", out, "--chunk", "slices", "--pin", mode] + rec)
                for k in ("pin", "pin_wait"):
                    if k in j["seconds"]:
                        fail("--pin %s: seconds.%s %r, expected no locking" % (mode, k, j["seconds"][k]))
                if j["choices"].get("pin") != mode or j["choices"].get("pin_reason") != "asked for":
                    fail("--pin %s: choices.pin %r (%r)" % (mode, j["choices"].get("pin"), j["choices"].get("pin_reason")))
                r = rel_l2(images["slices"], read_npy_c8(out))
                if not r < tol:
                    fail("--pin %s differs from locked (auto) slices by %.3e" % (mode, r))
        r = rel_l2(images["none"], images["slices"])
        print("|x_slices - x_whole| / |x_whole| = %.3e (NRMSE whole %.4f, slices %.4f)" % (
            r, reports["none"]["nrmse"], reports["slices"]["nrmse"]))
        if not r < tol:
            fail("slice by slice and whole differ by %.3e (relative l2), expected < %g" % (r, tol))
        mem = reports["none"]["memory"]
        whole, one = mem["needed_bytes"], mem["needed_per_slice_bytes"]
        if not one < whole:
            fail("one slice's estimate %g is not below the whole's %g" % (one, whole))
        # A budget between the two: auto must go slice by slice, with the same image.
        out = os.path.join(d, "auto.npy")
        j = recon_json(tool, [src, "-o", out, "--chunk", "auto", "--memory-limit", "%d" % int((whole * one) ** 0.5)] + rec)
        if j["choices"].get("chunk") != "slices" or "stack" not in j["choices"].get("chunk_reason", ""):
            fail("auto under a budget between slice and whole: chunk %r (%r)" % (
                j["choices"].get("chunk"), j["choices"].get("chunk_reason")))
        r = rel_l2(images["slices"], read_npy_c8(out))
        if not r < tol:
            fail("auto's slices differ from --chunk slices by %.3e" % r)
        # Below one slice: a clear error, nothing written.
        out = os.path.join(d, "never.npy")
        p = run(tool, ["recon", src, "-o", out, "--memory-limit", "%d" % int(one / 2)] + rec)
        expect_too_large(p, [out], ["even one slice", "needs about", "is available", "--memory-limit"])


def check_memory(tool, margs, sim, rec):
    fmt = margs[0]
    require_cuda_if_asked(tool, rec)
    with tempfile.TemporaryDirectory() as d:
        src, _ = simulate(tool, d, fmt, sim)
        out = os.path.join(d, "never.npy")
        p = run(tool, ["recon", src, "-o", out, "--memory-limit", "1K"] + rec)
        expect_too_large(p, [out], ["needs about", "1 KiB", "--memory-limit", "not a stack", "try "])
        p = run(tool, ["recon", src, "-o", out, "--chunk", "slices"] + rec)
        expect_failure(p, [out])
        if p.returncode != 11 or "not a stack" not in p.stderr:
            fail("--chunk slices on data that are not a stack: exit %d, expected 11 and 'not a stack'" % p.returncode)


def prod(xs):
    p = 1
    for x in xs:
        p *= x
    return p


def split_args(rest):
    margs = rest[:rest.index("--")] if "--" in rest else rest
    tail = rest[rest.index("--") + 1:] if "--" in rest else []
    sim = tail[:tail.index("++")] if "++" in tail else tail
    rec = tail[tail.index("++") + 1:] if "++" in tail else []
    return margs, sim, rec


def check_roundtrip(tool, margs, sim, rec):
    bound, fmt = float(margs[0]), margs[1]
    expect = dict(a.split("=", 1) for a in margs[2:] if not a.startswith("worse="))
    nifti = expect.pop("nifti", "1") == "1"  # nifti=0: a build without libnifti2
    scale = float(expect.pop("scale", "1"))
    worse = [a[len("worse="):] for a in margs[2:] if a.startswith("worse=")]
    with tempfile.TemporaryDirectory() as d:
        src, s = simulate(tool, d, fmt, sim)
        if scale != 1:
            for part in ("_maps.cfl", "_ksp.cfl"):
                values = array.array("f")
                with open(src + part, "rb") as f:
                    values.frombytes(f.read())
                with open(src + part, "wb") as f:
                    f.write(array.array("f", (v * scale for v in values)).tobytes())
        outs = [os.path.join(d, n) for n in ["img.nii.gz", "img.npy", "img.cfl", "img.png"]]
        args = [src] + sum([["-o", o] for o in outs[0 if nifti else 1:]], []) + rec
        j = recon_json(tool, args)
        require_keys(j, ["choices", "iterations", "residuals", "seconds", "nrmse", "matrix", "coils", "samples"])
        require_keys(j["choices"], ["model", "model_reason", "encoding", "encoding_reason", "maps", "backend",
                                    "operator"])
        # The operator after the solve names the normal it used: the field-corrected Toeplitz one
        # where the choice planned it.
        if j["choices"].get("toeplitz_normal") is True and "normal FieldToeplitzNormal(" not in j["choices"]["operator"]:
            fail("choices.toeplitz_normal is true but the operator %r names no such normal" % j["choices"]["operator"])
        require_keys(j["seconds"], ["read", "coil_maps", "setup", "solve", "write", "total"])
        if j["matrix"] != s["matrix"] or j["samples"] != s["samples"] or j["coils"] != s["coils"]:
            fail("recon saw %s / %d samples / %d coils, simulate wrote %s / %d / %d" % (
                j["matrix"], j["samples"], j["coils"], s["matrix"], s["samples"], s["coils"]))
        if len(j["residuals"]) != j["iterations"]:
            fail("one residual per iteration expected")
        for k, v in expect.items():
            if str(j["choices"].get(k)) != v:
                fail("choices[%s] = %r, expected %r" % (k, j["choices"].get(k), v))
        if not j["nrmse"] < bound:
            fail("NRMSE %.4f >= %g" % (j["nrmse"], bound))
        shape = j["matrix"]
        if nifti:
            check_nifti_gz(outs[0], shape)
        check_npy(outs[1], shape)
        check_cfl(outs[2][:-4], shape)
        with open(outs[3], "rb") as f:
            png_chunks(f.read())
        left = sorted(f for f in os.listdir(d) if not f.startswith("sim") and not f.startswith("img"))
        if left:
            fail("files left behind: %s" % left)
        for w in worse:
            factor, extra = w.split(":", 1)
            j2 = recon_json(tool, [src, "-o", os.path.join(d, "worse.png")] + extra.split(","))
            if not j2["nrmse"] > float(factor) * j["nrmse"]:
                fail("with %s the NRMSE is %.4f, expected > %s x %.4f" % (extra, j2["nrmse"], factor, j["nrmse"]))
            print("with %s: NRMSE %.4f = %.2f x" % (extra, j2["nrmse"], j2["nrmse"] / j["nrmse"]))


def expect_failure(p, outs):
    if p.returncode == 0:
        fail("recon succeeded on bad input")
    if not p.stderr.startswith("fieldft: error: ") or len(p.stderr.strip().splitlines()) > 2:
        fail("expected a short 'fieldft: error:' message on stderr")
    for o in outs:
        if os.path.exists(o):
            fail("%s was written although recon failed" % o)


def check_corrupt(tool, fmt, how):
    small = ["--matrix", "24", "--coils", "2", "--threads", "1"]
    with tempfile.TemporaryDirectory() as d:
        src, _ = simulate(tool, d, fmt, small)
        victim = src if fmt == "h5" else src + "_ksp.cfl"
        if how == "truncate":
            size = os.path.getsize(victim)
            with open(victim, "r+b") as f:
                f.truncate(size // 2)
        else:
            with open(victim, "wb") as f:
                f.write(b"this is not raw data\n" * 10)
        out = os.path.join(d, "img.nii.gz")
        p = run(tool, ["recon", src, "-o", out, "--threads", "1"])
        expect_failure(p, [out])
        if p.returncode not in LIBRARY_EXIT_CODES:
            fail("exit status %d, expected a library error (11..22)" % p.returncode)
        print("ok: " + p.stderr.strip())


def check_unwritable(tool):
    with tempfile.TemporaryDirectory() as d:
        src, _ = simulate(tool, d, "cfl", ["--matrix", "24", "--coils", "2", "--threads", "1"])
        good = os.path.join(d, "img.npy")
        bad = os.path.join(d, "no_such_dir", "img.png")
        p = run(tool, ["recon", src, "-o", good, "-o", bad, "--threads", "1"])
        expect_failure(p, [good, bad])
        if "no_such_dir" not in p.stderr:
            fail("the message should name the output that cannot be written")


def mpi_env():
    env = dict(os.environ)
    env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMP_NUM_THREADS="1")
    return env


def mpi_run(mpiexec, k, tool, args):
    cmd = [mpiexec, "--oversubscribe", "-n", str(k), tool, "recon"] + args
    return subprocess.run(cmd, capture_output=True, text=True, env=mpi_env(), timeout=100)


def same_image(ref_path, path, tol, what):
    if tol == 0:
        with open(ref_path, "rb") as f, open(path, "rb") as g:
            if f.read() != g.read():
                fail("%s: the image differs from one process's (expected byte for byte)" % what)
        print("%s: identical to one process" % what)
        return
    r = rel_l2(read_npy_c8(ref_path), read_npy_c8(path))
    print("%s: |x - x_1| / |x_1| = %.3e" % (what, r))
    if not r <= tol:
        fail("%s: differs from one process by %.3e (relative l2), expected <= %g" % (what, r, tol))


def check_ranks(tool, margs, sim, rec):
    mpiexec, tol, fmt, split, ks = margs[0], float(margs[1]), margs[2], margs[3], [int(k) for k in margs[4:]]
    with tempfile.TemporaryDirectory() as d:
        src, _ = simulate(tool, d, fmt, sim)
        ref = os.path.join(d, "one.npy")
        chunk = ["--chunk", "slices"] if split == "problems" else []  # one process: slice by slice too
        recon_json(tool, [src, "-o", ref] + rec + chunk)
        for k in ks:
            out = os.path.join(d, "k%d.npy" % k)
            p = mpi_run(mpiexec, k, tool, [src, "-o", out, "--split", split, "--json"] + rec + chunk)
            if p.returncode != 0:
                fail("mpirun -n %d: exit status %d: %s" % (k, p.returncode, p.stderr.strip()[-2000:]))
            lines = [l for l in p.stdout.splitlines() if l.strip()]
            if len(lines) != 1:
                fail("mpirun -n %d: expected one JSON line (rank 0's), got %d" % (k, len(lines)))
            j = json.loads(lines[0])
            if k > 1 and (j["choices"].get("split") != split or j["choices"].get("ranks") != k):
                fail("mpirun -n %d: split %r over %r ranks, expected %s over %d" % (
                    k, j["choices"].get("split"), j["choices"].get("ranks"), split, k))
            same_image(ref, out, tol, "mpirun -n %d, split %s" % (k, split))


def check_ranks_error(tool, margs):
    mpiexec, k, fmt = margs[0], int(margs[1]), margs[2]
    with tempfile.TemporaryDirectory() as d:
        src, _ = simulate(tool, d, fmt, ["--matrix", "24", "--coils", str(k + 1), "--threads", "1"])
        good = os.path.join(d, "img.npy")
        cases = [(["-o", os.path.join(d, "no_such_dir", "img.png")], "rank 0 of %d: cannot write" % k),
                 (["-o", good, "--maps", os.path.join(d, "no_such_maps.npy")], "no_such_maps.npy")]
        for args, text in cases:
            p = mpi_run(mpiexec, k, tool, [src, "--threads", "1", "--backend", "cpu"] + args)
            errors = [l for l in p.stderr.splitlines() if l.startswith("fieldft: error: ")]
            print("mpirun -n %d: exit %d, %s" % (k, p.returncode, errors))
            if p.returncode == 0:
                fail("mpirun -n %d %s: succeeded on bad input" % (k, args))
            if len(errors) != 1 or text not in errors[0] or ("rank " not in errors[0] and k > 1):
                fail("expected one 'fieldft: error: rank r of %d: ...%s...' line, got %r" % (k, text, errors))
            if os.path.exists(good):
                fail("%s was written although recon failed" % good)


def check_devices(tool, margs, sim, rec):
    tol, fmt, split = float(margs[0]), margs[1], margs[2]
    info = json.loads(run(tool, ["info", "--json"]).stdout)
    if "cuda" not in info["usable_backends"] or len(info["gpus"]) < 2:
        print("SKIP: fewer than two usable CUDA devices (%d)" % len(info["gpus"]))
        sys.exit(SKIP)
    # Every visible device up to 4 (the simulation's 4 coils and 5 slices give each a share).
    devices = list(range(min(len(info["gpus"]), 4)))
    flag = ",".join(str(i) for i in devices)
    with tempfile.TemporaryDirectory() as d:
        src, _ = simulate(tool, d, fmt, sim)
        one, many = os.path.join(d, "one.npy"), os.path.join(d, "many.npy")
        recon_json(tool, [src, "-o", one, "--devices", "0"] + rec + (["--chunk", "slices"] if split == "problems" else []))
        p = run(tool, ["recon", src, "-o", many, "--devices", flag, "--split", split, "--json"] + rec)
        if p.returncode == 17 and "NCCL" in p.stderr:
            print("SKIP: " + p.stderr.strip())
            sys.exit(SKIP)
        if p.returncode != 0:
            fail("--devices %s: exit status %d: %s" % (flag, p.returncode, p.stderr.strip()))
        j = json.loads(p.stdout.strip().splitlines()[-1])
        if j["choices"].get("split") != split or j["choices"].get("devices") != devices:
            fail("--devices %s: split %r on %r" % (flag, j["choices"].get("split"), j["choices"].get("devices")))
        if split == "problems" and j["choices"].get("pin") != "on":
            fail("--pin auto on %d devices: choices.pin %r (%r), expected on" % (
                len(devices), j["choices"].get("pin"), j["choices"].get("pin_reason")))
        same_image(one, many, tol, "--devices %s --split %s" % (flag, split))


def main(argv):
    tool, mode = argv[1], argv[2]
    margs, sim, rec = split_args(argv[3:])
    if mode == "roundtrip":
        check_roundtrip(tool, margs, sim, rec)
    elif mode == "corrupt":
        check_corrupt(tool, margs[0], margs[1])
    elif mode == "parity":
        check_parity(tool, margs, sim, rec)
    elif mode == "chunks":
        check_chunks(tool, margs, sim, rec)
    elif mode == "memory":
        check_memory(tool, margs, sim, rec)
    elif mode == "unwritable":
        check_unwritable(tool)
    elif mode == "ranks":
        check_ranks(tool, margs, sim, rec)
    elif mode == "ranks_error":
        check_ranks_error(tool, margs)
    elif mode == "simulate_parity":
        check_simulate_parity(tool, margs, sim)
    elif mode == "simulate_stack":
        check_simulate_stack(tool, margs, sim)
    elif mode == "devices":
        check_devices(tool, margs, sim, rec)
    else:
        fail("unknown mode %r" % mode)
    print("PASS")


if __name__ == "__main__":
    main(sys.argv)
