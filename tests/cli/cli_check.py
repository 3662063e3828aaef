#!/usr/bin/env python3
"""Runs the fieldft command-line tool and checks what it prints and how it exits.

usage: cli_check.py FIELDFT MODE [MODE-ARGS] [-- TOOL-ARGS]

modes:
  info                         `info --json` is one JSON object with the documented keys
  help                         --help of the tool and every subcommand documents each option
  accuracy FACTOR -- ARGS      `nufft ARGS --check --json`: rel_error < FACTOR * eps
  text -- ARGS                 `nufft ARGS --check` (text) reports an accuracy line
  fails CODE TEXT -- ARGS      `ARGS` exits with CODE ("lib" = any library error, 11..21),
                               prints "fieldft: error:" and TEXT (case-insensitive) on stderr
  demo FACTOR NRMSE -- ARGS    `demo ARGS --json --out F`: NUFFT errors < FACTOR * eps,
                               reconstruction NRMSE < NRMSE, F is a valid PGM

Only the standard library: numpy may be absent on the build machine.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

LIBRARY_EXIT_CODES = range(11, 22)  # 10 + fieldft::ErrorCode (kInvalidArgument .. kInternal)


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
    p = run(tool, ["info"])
    if p.returncode != 0 or j["version"] not in p.stdout:
        fail("text `info` failed or does not show the version")


HELP_OPTIONS = {
    "nufft": ["--type", "--dim", "--modes", "--points", "--targets", "--eps", "--prec", "--backend",
              "--ntransf", "--upsampfac", "--method", "--check", "--repeat", "--seed", "--json"],
    "demo": ["--size", "--trajectory", "--out", "--eps", "--prec", "--backend", "--json"],
    "info": ["--json"],
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
    for word in ["time:", "execute", "relative l2 error"]:
        if word not in p.stdout:
            fail("text output lacks %r" % word)


def check_fails(tool, code, text, args):
    p = run(tool, args)
    ok = p.returncode in LIBRARY_EXIT_CODES if code == "lib" else p.returncode == int(code)
    if not ok:
        fail("exit status %d, expected %s" % (p.returncode, code))
    if not p.stderr.startswith("fieldft: error: "):
        fail("stderr does not start with 'fieldft: error: '")
    if text.lower() not in p.stderr.lower():
        fail("stderr does not mention %r" % text)


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
        check_fails(tool, margs[0], margs[1], args)
    elif mode == "demo":
        check_demo(tool, float(margs[0]), float(margs[1]), args)
    else:
        fail("unknown mode %r" % mode)
    print("PASS")


if __name__ == "__main__":
    main(sys.argv)
