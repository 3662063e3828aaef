#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine for fieldft and builds it: installs the Debian packages the
# build needs, then configures and builds the CMake preset `ci` into build/ci.
#
# Idempotent: packages already installed are not touched (apt-get is skipped altogether when
# nothing is missing), and a second build only recompiles what changed.
#
# CUDA: the CUDA toolkit is not a Debian package we install. When nvcc is present
# (/usr/local/cuda/bin/nvcc or on PATH) the CUDA sources are compiled for one architecture;
# otherwise the build is CPU only. Running needs no GPU.
#
# Environment (all optional):
#   FIELDFT_PRESET      CMake configure/build preset (default: ci)
#   FIELDFT_CMAKE_ARGS  extra arguments for the configure step, e.g. "-DFIELDFT_CUDA=OFF"
#   FIELDFT_JOBS        parallel build jobs (default: number of cores)
#   FIELDFT_SKIP_APT=1  do not install packages (for machines set up by other means)
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo_root"

say() { printf '[fieldft setup] %s\n' "$*"; }
die() { printf '[fieldft setup] error: %s\n' "$*" >&2; exit 1; }

preset="${FIELDFT_PRESET:-ci}"
jobs="${FIELDFT_JOBS:-$(nproc 2>/dev/null || echo 2)}"

# --- 1. Debian packages ------------------------------------------------------------------------
# One list; add to it when the project gains a dependency. Python packages (nanobind,
# scikit-build-core, numpy, pytest) come from PyPI inside a virtual environment, so only the
# interpreter and venv support are Debian packages here.
packages=(
  g++ cmake ninja-build pkg-config           # toolchain
  libfftw3-dev                               # CPU FFTs (float + double, with OpenMP threads)
  libgtest-dev libgmock-dev                  # tests
  libbenchmark-dev                           # micro benchmarks in bench/
  libcli11-dev nlohmann-json3-dev            # the fieldft command-line tool
  python3 python3-venv python3-pip           # Python package and its tests
)

if [[ "${FIELDFT_SKIP_APT:-0}" == 1 ]]; then
  say "FIELDFT_SKIP_APT=1: not installing packages"
else
  missing=()
  for p in "${packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q '^install ok installed$'; then
      missing+=("$p")
    fi
  done
  if ((${#missing[@]} == 0)); then
    say "all ${#packages[@]} Debian packages already installed"
  else
    command -v apt-get >/dev/null || die "apt-get not found: this script expects Debian 12 (bookworm); install by hand: ${missing[*]}"
    if [[ "$(id -u)" == 0 ]]; then
      sudo=()
    elif command -v sudo >/dev/null; then
      sudo=(sudo)
    else
      die "not root and no sudo: run as root, or install by hand: ${missing[*]}"
    fi
    export DEBIAN_FRONTEND=noninteractive
    say "installing ${#missing[@]} Debian packages: ${missing[*]}"
    say "apt-get update"
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
    say "apt-get install"
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
      -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold "${missing[@]}" </dev/null
    say "packages installed"
  fi
fi

# --- 2. Configure ------------------------------------------------------------------------------
# The root CMakeLists finds nvcc at /usr/local/cuda/bin/nvcc or on PATH (FIELDFT_CUDA=AUTO).
nvcc_path=""
if [[ -x /usr/local/cuda/bin/nvcc ]]; then
  nvcc_path=/usr/local/cuda/bin/nvcc
elif command -v nvcc >/dev/null; then
  nvcc_path="$(command -v nvcc)"
fi
if [[ -n "$nvcc_path" ]]; then
  say "nvcc found at $nvcc_path: CUDA sources will be compiled (one architecture, no GPU needed)"
else
  say "no nvcc: CPU-only build"
fi

read -r -a extra_args <<<"${FIELDFT_CMAKE_ARGS:-}"
say "configuring: cmake --preset $preset ${extra_args[*]}"
cmake --preset "$preset" "${extra_args[@]}"

# --- 3. Build ----------------------------------------------------------------------------------
say "building with $jobs jobs: cmake --build --preset $preset"
start=$SECONDS
cmake --build --preset "$preset" -j "$jobs"
say "build done in $((SECONDS - start)) s ($repo_root/build/$preset)"
