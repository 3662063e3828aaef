#!/usr/bin/env bash
# Sets up a fresh Debian 12 machine for fieldft and builds it: installs the Debian packages the
# build needs, configures and builds a CMake preset (default `ci`: everything; scripts/demo.sh
# asks for `app`: the library and the tool only), then installs the library and the `fieldft`
# tool into a prefix on PATH (/usr/local as root, else ~/.local).
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
#   FIELDFT_EXTRA_PACKAGES  more Debian packages to install with the others (scripts/test.sh
#                       adds the test tools: bart, clang, libclang-rt-14-dev)
#   FIELDFT_PREFIX      where to install the library and the tool (default /usr/local as root,
#                       ~/.local otherwise); FIELDFT_INSTALL=0 skips the installation
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
  libnifti2-dev                              # NIfTI output (src/io; optional: FIELDFT_NIFTI)
  libismrmrd-dev                             # ISMRMRD raw data in and out (brings libhdf5-dev, libpugixml-dev)
  openmpi-bin libopenmpi-dev                 # MPI communicators for scale-out (src/dist; optional: FIELDFT_MPI)
  python3 python3-venv python3-pip           # Python package and its tests
)

read -r -a extra_packages <<<"${FIELDFT_EXTRA_PACKAGES:-}"
packages+=("${extra_packages[@]}")

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
# Ninja prints one [done/total] line per step when its output is not a terminal: that is the
# progress a user sees while the build runs.
say "building with $jobs jobs: cmake --build --preset $preset"
start=$SECONDS
cmake --build --preset "$preset" -j "$jobs"
say "build done in $((SECONDS - start)) s ($repo_root/build/$preset)"

# --- 4. Install the library and the tool -------------------------------------------------------
if [[ "${FIELDFT_INSTALL:-1}" != 1 ]]; then
  say "FIELDFT_INSTALL=0: not installing"
elif [[ ! -x "build/$preset/apps/fieldft/fieldft" ]]; then
  say "the fieldft tool was not built in this preset: nothing to install"
else
  prefix="${FIELDFT_PREFIX:-}"
  if [[ -z "$prefix" ]]; then
    if [[ "$(id -u)" == 0 ]]; then prefix=/usr/local; else prefix="$HOME/.local"; fi
  fi
  say "installing into $prefix: cmake --install build/$preset --prefix $prefix"
  cmake --install "build/$preset" --prefix "$prefix" >/dev/null
  case ":$PATH:" in
    *":$prefix/bin:"*) say "fieldft is on PATH: $prefix/bin/fieldft" ;;
    *) say "fieldft installed as $prefix/bin/fieldft, which is not on PATH; add it with:"
       say "  export PATH=\"$prefix/bin:\$PATH\"" ;;
  esac
fi
