#!/usr/bin/env python3
"""Runs the fieldft command-line tool and checks what it prints and how it exits.

usage: cli_check.py FIELDFT MODE [MODE-ARGS] [-- TOOL-ARGS]

modes:
  info                         `info --json` is one JSON object with the documented keys, and
                               text and JSON agree on which backends are usable
  help                         --help of the tool and every subcommand documents each option
  accuracy FACTOR -- ARGS      `nufft ARGS --check --json`: rel_error < FACTOR * eps
  text -- ARGS                 `nufft ARGS --check` (text) reports an accuracy line
  fails CODE TEXT... -- ARGS   `ARGS` exits with CODE ("lib" = any library error, 11..22),
                               prints "fieldft: error:" and each TEXT (case-insensitive) on stderr
  demo FACTOR NRMSE -- ARGS    `demo ARGS --json --out F`: NUFFT errors < FACTOR * eps,
                               reconstruction NRMSE < NRMSE, F is a valid PGM
  png -- ARGS                  `demo ARGS --out F.png` and `--out F.pgm`: F.png is a valid PNG
                               (signature, IHDR, chunk CRCs, zlib data) of the pixels of F.pgm,
                               and nothing else is left in the directory
  tune FACTOR -- ARGS          `tune ARGS --json --wisdom F` times candidates (one the planner's,
                               fastest first) and stores F; `nufft ARGS --planning measure
                               --wisdom F --check --json` then takes F's entry, rel_error <
                               FACTOR * eps (ARGS: type 1 or 2 problem with --points)
  threads_cap -- ARGS          `ARGS --threads 100000` succeeds, with one notice on stderr of the
                               thread count used, at most 4 x the CPUs; a JSON result reports
                               that count

Only the standard library: numpy may be absent on the build machine.
"""
import json
import os
import re
import struct
import subprocess
import sys
import tempfile
import zlib

LIBRARY_EXIT_CODES = range(11, 23)  # 10 + fieldft::ErrorCode (kInvalidArgument .. kContextMismatch)


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def run(tool, args):
    print("running: " + " ".join([tool] + args))
    p = subprocess.run([tool] + args, capture_output=True, text=True, timeout=120)
    print("exit status %d\nstdout:\n%s\nstderr:\n%s" % (p.returncode, p.stdout, p.stderr))
    if p.returncode < 0:
        fail("killed by signal %d (a crash)" % -p.returncode)
    return p


def run_json(tool, args):
    p = run(tool, args)
    if p.returncode != 0:
        fail("exit status %d, expected 0" % p.returncode)
    lines = [l for l in p.stdout.splitlines() if l.strip()]
    if len(lines) != 1:
        fail("expected one line of JSON on stdout, got %d lines" % len(lines))
    try:
        obj = json.loads(lines[0])
    except json.JSONDecodeError as e:
        fail("stdout is not JSON: %s" % e)
    if not isinstance(obj, dict):
        fail("stdout is JSON but not an object")
    return obj


def require_keys(obj, keys):
    missing = [k for k in keys if k not in obj]
    if missing:
        fail("missing keys: %s" % ", ".join(missing))


def arg_value(args, name, default=None):
    return args[args.index(name) + 1] if name in args else default


def check_info(tool):
    j = run_json(tool, ["info", "--json"])
    require_keys(j, ["version", "build", "backends", "cpu_threads", "gpus"])
    if not re.fullmatch(r"\d+\.\d+\.\d+.*", j["version"]):
        fail("version %r is not MAJOR.MINOR.PATCH" % j["version"])
    if "cpu" not in j["backends"]:
        fail("backends %r lack cpu" % j["backends"])
    if j["build"].get("cuda") != ("cuda" in j["backends"]):
        fail("build.cuda disagrees with backends")
    if not (isinstance(j["cpu_threads"], int) and j["cpu_threads"] >= 1):
        fail("cpu_threads %r is not a positive integer" % j["cpu_threads"])
    for g in j["gpus"]:
        require_keys(g, ["id", "name", "compute_capability", "total_memory_bytes"])
    # Compiled in is not usable: CUDA needs a device too.
    require_keys(j, ["usable_backends", "auto_backend"])
    usable = j["usable_backends"]
    if "cpu" not in usable or not set(usable) <= set(j["backends"]):
        fail("usable_backends %r: not cpu plus some of backends %r" % (usable, j["backends"]))
    if ("cuda" in usable) != (bool(j["build"].get("cuda")) and len(j["gpus"]) > 0):
        fail("usable_backends %r disagree with build.cuda and gpus" % usable)
    if j["auto_backend"] != ("cuda" if "cuda" in usable else "cpu"):
        fail("auto_backend %r is not cuda when usable, else cpu" % j["auto_backend"])
    p = run(tool, ["info"])
    if p.returncode != 0 or j["version"] not in p.stdout:
        fail("text `info` failed or does not show the version")
    line = next((l for l in p.stdout.splitlines() if l.startswith("backends:")), None)
    if line is None:
        fail("text `info` has no 'backends:' line")
    listed = line.split(":", 1)[1].split(";")[0]
    for b in j["backends"]:
        m = re.search(r"\b%s\b( \([^)]*no device[^)]*\))?" % b, listed)
        if not m:
            fail("backends line %r does not list %s" % (line, b))
        if (m.group(1) is None) != (b in usable):
            fail("backends line %r: %s should be marked 'no device' exactly when unusable" % (line, b))
    if "cuda" not in j["backends"] and "cuda" in listed:
        fail("backends line %r lists cuda, which is not compiled in" % line)


HELP_OPTIONS = {
    "nufft": ["--type", "--dim", "--modes", "--points", "--targets", "--eps", "--prec", "--backend",
              "--ntransf", "--upsampfac", "--method", "--check", "--repeat", "--seed", "--planning",
              "--wisdom", "--json"],
    "tune": ["--type", "--modes", "--points", "--density", "--ntransf", "--reuse", "--eps", "--prec",
             "--backend", "--method", "--upsampfac", "--wisdom", "--json"],
    "demo": ["--size", "--trajectory", "--out", "--eps", "--prec", "--backend", "--json"],
    "info": ["--json"],
    "dft": ["--dim", "--size", "--samples", "--prec", "--backend", "--r2", "--images", "--check",
            "--check-count", "--repeat", "--field", "--tmax", "--threads", "--device", "--seed",
            "--json"],
    "simulate": ["--out", "--matrix", "--coils", "--traj", "--interleaves", "--samples", "--shots",
                 "--dwell", "--field-hz", "--susceptibility-hz", "--shot-phase", "--snr", "--fov",
                 "--encoding", "--seed", "--threads", "--json"],
    "recon": ["--out", "--model", "--encoding", "--accuracy", "--eps", "--maps", "--iters",
              "--lambda", "--tolerance", "--truth", "--matrix", "--prec", "--backend", "--device",
              "--threads", "--progress", "--gram", "--json"],
}


def check_help(tool):
    p = run(tool, ["--help"])
    if p.returncode != 0:
        fail("--help exits with %d" % p.returncode)
    for sub in HELP_OPTIONS:
        if sub not in p.stdout:
            fail("--help does not list subcommand %s" % sub)
    for sub, options in HELP_OPTIONS.items():
        p = run(tool, [sub, "--help"])
        if p.returncode != 0:
            fail("%s --help exits with %d" % (sub, p.returncode))
        for o in options:
            if not re.search(re.escape(o) + r"(?![\w-])", p.stdout):
                fail("%s --help does not document %s" % (sub, o))


NUFFT_KEYS = ["rel_error", "exec_ms", "setpts_ms", "backend", "method", "type", "dim", "prec",
              "modes", "M", "ntransf", "eps", "upsampfac", "kernel_width", "fine_grid"]


def check_accuracy(tool, factor, args):
    j = run_json(tool, ["nufft"] + args + ["--check", "--json"])
    require_keys(j, NUFFT_KEYS)
    if j["M"] != int(arg_value(args, "--points")):
        fail("M = %r, expected --points" % j["M"])
    if j["type"] != int(arg_value(args, "--type")):
        fail("type = %r, expected --type" % j["type"])
    if len(j["modes"]) != j["dim"] or len(j["fine_grid"]) != j["dim"]:
        fail("modes/fine_grid do not have dim entries")
    if j["prec"] != arg_value(args, "--prec", "d"):
        fail("prec = %r, expected --prec" % j["prec"])
    if not (j["exec_ms"] >= 0 and j["setpts_ms"] >= 0):
        fail("negative times")
    eps = float(arg_value(args, "--eps"))
    print("rel_error %.3e, bound %.3e" % (j["rel_error"], factor * eps))
    if not j["rel_error"] < factor * eps:
        fail("rel_error %.3e >= %g * eps = %.3e" % (j["rel_error"], factor, factor * eps))


def check_text(tool, args):
    p = run(tool, ["nufft"] + args + ["--check"])
    if p.returncode != 0:
        fail("exit status %d" % p.returncode)
    words = ["time:", "execute", "relative l2 error"]
    if "--explain" in args:
        words += ["configuration:"]
    for word in words:
        if word not in p.stdout:
            fail("text output lacks %r" % word)


def check_fails(tool, code, texts, args):
    p = run(tool, args)
    ok = p.returncode in LIBRARY_EXIT_CODES if code == "lib" else p.returncode == int(code)
    if not ok:
        fail("exit status %d, expected %s" % (p.returncode, code))
    if not p.stderr.startswith("fieldft: error: "):
        fail("stderr does not start with 'fieldft: error: '")
    for text in texts:
        if text.lower() not in p.stderr.lower():
            fail("stderr does not mention %r" % text)


def check_tune(tool, factor, args):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "wisdom.json")
        j = run_json(tool, ["tune"] + args + ["--json", "--wisdom", path])
        rows = j.get("candidates", [])
        if not rows or sum(1 for r in rows if r["planner_choice"]) != 1:
            fail("tune: candidates %r lack exactly one planner's choice" % rows)
        if any(a["ms"] > b["ms"] for a, b in zip(rows, rows[1:])):
            fail("tune: candidates not fastest first")
        if not j["configured_by"].startswith("measured now"):
            fail("tune: configured_by %r" % j["configured_by"])
        with open(path) as f:
            w = json.load(f)
        if len(w.get("entries", [])) != 1:
            fail("tune: wisdom file %r does not hold one entry" % w)
        n = run_json(tool, ["nufft"] + args + ["--planning", "measure", "--wisdom", path, "--check", "--json",
                                               "--repeat", "1"])
        if not n["configured_by"].startswith("wisdom " + path):
            fail("nufft --planning measure did not take the wisdom: %r" % n["configured_by"])
        eps = float(arg_value(args, "--eps"))
        if not n["rel_error"] < factor * eps:
            fail("rel_error %.3e >= %g * eps" % (n["rel_error"], factor))


def check_threads_cap(tool, args):
    p = run(tool, args + ["--threads", "100000"])
    if p.returncode != 0:
        fail("exit status %d, expected 0" % p.returncode)
    notes = re.findall(r"^fieldft: note: --threads 100000 lowered to (\d+)\b", p.stderr, re.M)
    if len(notes) != 1:
        fail("expected one notice 'fieldft: note: --threads 100000 lowered to N' on stderr")
    used = int(notes[0])
    most = 4 * (os.cpu_count() or 1)
    if not 1 <= used <= most:
        fail("%d threads used, expected 1 .. %d" % (used, most))
    if "--json" in args:
        j = json.loads(p.stdout)
        if j.get("threads") != used:
            fail("JSON threads %r, notice says %d" % (j.get("threads"), used))


def png_chunks(data):
    """(type, body) of each chunk, checking lengths and CRCs."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        fail("no PNG signature")
    chunks, at = [], 8
    while at < len(data):
        if at + 12 > len(data):
            fail("truncated chunk at byte %d" % at)
        (n,) = struct.unpack(">I", data[at:at + 4])
        kind, body = data[at + 4:at + 8], data[at + 8:at + 8 + n]
        (crc,) = struct.unpack(">I", data[at + 8 + n:at + 12 + n])
        if len(body) != n or zlib.crc32(kind + body) != crc:
            fail("chunk %r: bad length or CRC" % kind)
        chunks.append((kind.decode("latin-1"), body))
        at += 12 + n
    return chunks


def check_png(tool, args):
    with tempfile.TemporaryDirectory() as tmp:
        png, pgm = os.path.join(tmp, "demo.png"), os.path.join(tmp, "demo.pgm")
        for out in (png, pgm):
            if run(tool, ["demo"] + args + ["--out", out]).returncode != 0:
                fail("demo --out %s failed" % out)
        if sorted(os.listdir(tmp)) != ["demo.pgm", "demo.png"]:
            fail("files left beside the images: %r" % os.listdir(tmp))
        with open(pgm, "rb") as f:
            m = re.match(rb"P5\n(\d+) (\d+)\n255\n", f.read())
        with open(pgm, "rb") as f:
            pixels = f.read()[m.end():]
        width, height = int(m.group(1)), int(m.group(2))
        with open(png, "rb") as f:
            chunks = png_chunks(f.read())
        kinds = [k for k, _ in chunks]
        if kinds[0] != "IHDR" or kinds[-1] != "IEND" or "IDAT" not in kinds:
            fail("chunks %r: not IHDR ... IDAT ... IEND" % kinds)
        ihdr = struct.unpack(">IIBBBBB", chunks[0][1])
        if ihdr != (width, height, 8, 0, 0, 0, 0):
            fail("IHDR %r, expected %dx%d, 8-bit gray, no interlace" % (ihdr, width, height))
        try:
            raw = zlib.decompress(b"".join(b for k, b in chunks if k == "IDAT"))
        except zlib.error as e:
            fail("IDAT is not a valid zlib stream: %s" % e)
        if len(raw) != height * (width + 1):
            fail("%d bytes of filtered image, expected %d" % (len(raw), height * (width + 1)))
        rows = [raw[y * (width + 1):(y + 1) * (width + 1)] for y in range(height)]
        if any(r[0] != 0 for r in rows):
            fail("a row has a filter other than 0 (none)")
        if b"".join(r[1:] for r in rows) != pixels:
            fail("PNG pixels differ from the PGM's")


def check_demo(tool, factor, max_nrmse, args):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "demo.pgm")
        j = run_json(tool, ["demo"] + args + ["--json", "--out", out])
        require_keys(j, ["size", "M", "eps", "forward_rel_error", "adjoint_rel_error", "nrmse",
                         "setpts_ms", "forward_ms", "adjoint_ms", "backend", "method"])
        bound = factor * j["eps"]
        for key in ["forward_rel_error", "adjoint_rel_error"]:
            if not j[key] < bound:
                fail("%s %.3e >= %g * eps = %.3e" % (key, j[key], factor, bound))
        if not j["nrmse"] < max_nrmse:
            fail("nrmse %.4f >= %g" % (j["nrmse"], max_nrmse))
        n = j["size"]
        with open(out, "rb") as f:
            data = f.read()
        header = b"P5\n%d %d\n255\n" % (3 * n, n)
        if not data.startswith(header) or len(data) != len(header) + 3 * n * n:
            fail("%s is not a %dx%d binary PGM" % (out, 3 * n, n))
        if max(data[len(header):]) < 200:
            fail("preview is nearly black: the phantom panel should reach full scale")


def main(argv):
    tool, mode, rest = argv[1], argv[2], argv[3:]
    args = rest[rest.index("--") + 1:] if "--" in rest else []
    margs = rest[:rest.index("--")] if "--" in rest else rest
    if mode == "info":
        check_info(tool)
    elif mode == "help":
        check_help(tool)
    elif mode == "accuracy":
        check_accuracy(tool, float(margs[0]), args)
    elif mode == "text":
        check_text(tool, args)
    elif mode == "fails":
        check_fails(tool, margs[0], margs[1:], args)
    elif mode == "tune":
        check_tune(tool, float(margs[0]), args)
    elif mode == "threads_cap":
        check_threads_cap(tool, args)
    elif mode == "png":
        check_png(tool, args)
    elif mode == "demo":
        check_demo(tool, float(margs[0]), float(margs[1]), args)
    else:
        fail("unknown mode %r" % mode)
    print("PASS")


if __name__ == "__main__":
    main(sys.argv)
