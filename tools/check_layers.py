#!/usr/bin/env python3
"""Checks that no file of the library includes a header of a layer above its own.

The layers are docs/architecture.md's table ("Layers"; DESIGN.md section 1). Every file under
src/ and include/fieldft/ belongs to one layer by its path (LAYER_OF below); each of its
`#include "..."` / `#include <fieldft/...>` lines is resolved to a file of the tree (src-relative
as "core/x.hpp", public as "fieldft/x.hpp", or relative to the including file) and must belong
to the same layer or one the file's layer may use (MAY_USE). Includes of files outside the tree
(std, CUDA, FFTW, ...) are not checked. EXCEPTIONS lists the allowed upward includes, each with
its reason (docs/architecture.md, "Layers", says the same).

The build enforces the src/ half (each layer's object library sees only its own and the lower
layers' folders: fieldft_layer(<layer> SEES ...) in src/**/CMakeLists.txt); this script checks the
public headers too, says which file and line break the rule, and checks that every
fieldft_layer call's SEES is this table's. Exit status 0 when clean, 1 otherwise.

Usage: tools/check_layers.py [--root DIR] [--list]   (--list prints every file's layer too)
"""
import argparse
import os
import re
import sys

# Bottom to top. Each layer may include itself and the layers listed (all of them below it).
MAY_USE = {
    "math": set(),
    "core": {"math"},
    "cpu": {"math", "core"},
    "cuda": {"math", "core"},
    "transform": {"math", "core", "cpu", "cuda"},
    "op": {"math", "core", "cpu", "cuda", "transform"},
    "mri": {"math", "core", "cpu", "cuda", "transform", "op"},
    "solve": {"math", "core", "cpu", "cuda", "transform", "op"},
    "dist": {"math", "core", "cpu", "cuda", "transform", "op"},
    "io": {"math", "core", "cpu", "cuda", "transform", "op", "mri"},
    "capi": {"math", "core", "cpu", "cuda", "transform", "op", "mri", "solve", "dist", "io"},
}

# (path prefix relative to the repository root, layer); the longest matching prefix wins.
LAYER_OF = [
    ("include/fieldft/detail/", "math"),
    ("include/fieldft/error.hpp", "math"),
    ("include/fieldft/config.hpp", "math"),  # generated from cmake/config.hpp.in: build options only
    ("include/fieldft/runtime.hpp", "core"),  # build and device information (src/core/runtime.cpp)
    ("include/fieldft/reference.hpp", "core"),  # the exact sums (src/core/reference.cpp)
    ("include/fieldft/context.hpp", "transform"),
    ("include/fieldft/nufft.hpp", "transform"),
    ("include/fieldft/op/", "op"),
    ("include/fieldft/mri/", "mri"),
    ("include/fieldft/solve/", "solve"),
    ("include/fieldft/dist.hpp", "dist"),
    ("include/fieldft/fieldft.hpp", "capi"),
    ("include/fieldft/fieldft.h", "capi"),
    ("include/fieldft/compat/", "capi"),
    ("src/core/", "core"),
    ("src/cpu/", "cpu"),
    ("src/cuda/", "cuda"),
    ("src/plan.cpp", "transform"),
    ("src/context.cpp", "transform"),
    ("src/op/", "op"),
    ("src/mri/", "mri"),
    ("src/solve/", "solve"),
    ("src/dist/", "dist"),
    ("src/io/", "io"),
    ("src/capi/", "capi"),
]

# Allowed upward includes: (including layer, included file) -> reason.
EXCEPTIONS = {
    ("core", "include/fieldft/nufft.hpp"):
        "the transform's public vocabulary (Type, Options, Tuning, PlanInfo, the enums) that the "
        "planner validates and fills; core implements its parse_* names and cpu_threads_for",
    ("cuda", "include/fieldft/nufft.hpp"):
        "as core: the options and PlanInfo a backend runs with (nufft_launch.hpp, grid_fft.cuh)",
}

SOURCE_EXT = (".hpp", ".h", ".cpp", ".cu", ".cuh", ".cpp.in", ".cu.in", ".hpp.in")
INCLUDE_RE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')


def layer_of(rel):
    best = None
    for prefix, layer in LAYER_OF:
        if rel == prefix or (prefix.endswith("/") and rel.startswith(prefix)):
            if best is None or len(prefix) > len(best[0]):
                best = (prefix, layer)
    return best[1] if best else None


def resolve(root, including, delim, name):
    """The included file's path relative to root, or None when it is outside the tree."""
    if name.startswith("fieldft/"):
        return "include/" + name
    if delim == '"':
        first = name.split("/", 1)[0]
        if "/" in name and os.path.isdir(os.path.join(root, "src", first)):
            return "src/" + name
        local = os.path.normpath(os.path.join(os.path.dirname(including), name))
        if os.path.exists(os.path.join(root, local)):
            return local
    return None


def check_cmake(root):
    """The build's table must be this one: each fieldft_layer(<layer> SEES ...) call must name
    exactly the src/ folders of its layer and of those MAY_USE gives it."""
    folders = {d for d in os.listdir(os.path.join(root, "src"))
               if os.path.isdir(os.path.join(root, "src", d))}
    call = re.compile(r"fieldft_layer\(\s*(\w+)\s+SEES\s+([\w\s]+?)\s*(?:SOURCES\b|\))")
    problems, seen = [], set()
    for dirpath, _, names in os.walk(os.path.join(root, "src")):
        for n in names:
            if n != "CMakeLists.txt" and not n.endswith(".cmake"):
                continue
            rel = os.path.relpath(os.path.join(dirpath, n), root)
            with open(os.path.join(root, rel), encoding="utf-8") as f:
                text = f.read()
            for m in call.finditer(text):
                layer, sees = m.group(1), set(m.group(2).split())
                seen.add(layer)
                if layer not in MAY_USE:
                    problems.append(f"{rel}: fieldft_layer({layer}): no such layer in MAY_USE")
                    continue
                want = ({layer} | MAY_USE[layer]) & folders
                if sees != want:
                    problems.append(f"{rel}: fieldft_layer({layer}) SEES {' '.join(sorted(sees))}; "
                                    f"the table says {' '.join(sorted(want))}")
    for layer in sorted((folders & set(MAY_USE)) - seen):
        problems.append(f"src/{layer}: no fieldft_layer({layer} ...) call found")
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    ap.add_argument("--list", action="store_true", help="print every file's layer")
    args = ap.parse_args()
    root = os.path.abspath(args.root)

    files = []
    for top in ("src", "include/fieldft"):
        for dirpath, _, names in os.walk(os.path.join(root, top)):
            for n in names:
                if n.endswith(SOURCE_EXT):
                    files.append(os.path.relpath(os.path.join(dirpath, n), root))
    files.sort()

    problems, used_exceptions, checked = [], set(), 0
    for rel in files:
        layer = layer_of(rel)
        if layer is None:
            problems.append(f"{rel}: no layer (add its folder to LAYER_OF in tools/check_layers.py)")
            continue
        if args.list:
            print(f"{layer:10s} {rel}")
        with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
            for lineno, line in enumerate(f, 1):
                m = INCLUDE_RE.match(line)
                if not m:
                    continue
                target = resolve(root, rel, m.group(1), m.group(2))
                if target is None:
                    continue
                checked += 1
                to = layer_of(target)
                if to is None:
                    problems.append(f"{rel}:{lineno}: includes {target}, which has no layer")
                elif to != layer and to not in MAY_USE[layer]:
                    if (layer, target) in EXCEPTIONS:
                        used_exceptions.add((layer, target))
                    else:
                        problems.append(f"{rel}:{lineno}: layer {layer} includes {m.group(2)} "
                                        f"(layer {to}); {layer} may use: "
                                        f"{', '.join(sorted(MAY_USE[layer])) or 'std only'}")
    problems += check_cmake(root)
    for key in sorted(set(EXCEPTIONS) - used_exceptions):
        print(f"note: exception {key} is no longer used; remove it from EXCEPTIONS")
    for p in problems:
        print(p)
    print(f"check_layers: {len(files)} files, {checked} includes within the tree, "
          f"{len(used_exceptions)} documented exceptions used, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
