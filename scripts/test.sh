#!/usr/bin/env bash
# Runs the whole fieldft test suite on a fresh or already set-up machine: scripts/setup.sh
# (packages + build of preset `ci`), then every CTest test. The CTest suite includes the
# install check (tests/consumer: `cmake --install` to a scratch prefix, then a separate project
# that uses find_package(fieldft)). Then the Python package: pip install into build/pyenv and
# pytest (section 3). Then a short fuzz run of the file readers (section 4, scripts/fuzz.sh: 30 s
# per target; FIELDFT_FUZZ_SECONDS changes it, FIELDFT_FUZZ=0 skips it). Exits non-zero on any
# failure.
#
# GPU tests (CTest label `gpu`) run when a GPU is visible to nvidia-smi or FIELDFT_GPU_TESTS=1,
# and are excluded otherwise (FIELDFT_GPU_TESTS=0 excludes them even with a GPU).
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo_root"

say() { printf '[fieldft test] %s\n' "$*"; }

total_start=$SECONDS

# --- 1. Set up and build -----------------------------------------------------------------------
# Test-only tools on top of the build's packages: `bart` for the BART cross-checks
# (tests/io/bart_crosscheck_test.cpp) and clang with its libFuzzer runtime for section 4.
export FIELDFT_EXTRA_PACKAGES="${FIELDFT_EXTRA_PACKAGES:-} bart clang libclang-rt-14-dev"
bash scripts/setup.sh
preset="${FIELDFT_PRESET:-ci}"
build_dir="$repo_root/build/$preset"

# --- 2. C++ tests (CTest) ----------------------------------------------------------------------
gpu_tests="${FIELDFT_GPU_TESTS:-}"
if [[ -z "$gpu_tests" ]]; then
  gpu_tests=0
  if command -v nvidia-smi >/dev/null && nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
    gpu_tests=1
  fi
fi
ctest_args=(--test-dir "$build_dir" --output-on-failure -j2 --no-tests=error)
if [[ "$gpu_tests" == 1 ]]; then
  say "GPU tests included (label gpu)"
else
  say "GPU tests excluded (no GPU seen by nvidia-smi; FIELDFT_GPU_TESTS=1 forces them)"
  ctest_args+=(--label-exclude gpu)
fi

say "ctest ${ctest_args[*]}"
start=$SECONDS
ctest_rc=0
ctest "${ctest_args[@]}" || ctest_rc=$?
say "ctest finished in $((SECONDS - start)) s with exit code $ctest_rc"

# --- 3. Python tests (pytest) ------------------------------------------------------------------
# pip builds the package from this checkout (scikit-build-core + nanobind, from the root
# CMakeLists.txt; CUDA compiled when a GPU is present and nvcc is found, FIELDFT_PYTHON_CUDA=OFF,
# AUTO or ON overrides) into the virtual environment build/pyenv, with an incremental build tree in
# build/python; then pytest runs python/tests. Marker `gpu` follows the CTest rule above.
# FIELDFT_PYTHON=/path/to/python uses that interpreter instead of the venv, e.g. one that has
# cupy or torch for the GPU tests (without them those tests skip themselves).
# pytest exits 5 when it collects no test; that counts as a failure, like --no-tests=error.
python_tests() {
  local py="${FIELDFT_PYTHON:-}"
  if [[ -z "$py" ]]; then
    if [[ ! -x build/pyenv/bin/python ]]; then
      python3 -m venv build/pyenv || return $?
    fi
    py="$repo_root/build/pyenv/bin/python"
  fi
  say "python: $("$py" --version 2>&1) at $py"
  local pip=("$py" -m pip install -q --disable-pip-version-check)
  say "pip install scikit-build-core nanobind numpy pytest mpi4py finufft mri-nufft (from PyPI; mpi4py builds against the system MPI)"
  "${pip[@]}" "scikit-build-core>=0.10" "nanobind>=2.0" "numpy>=1.22" "pytest>=7" || return $?
  # mpi4py for the Python MPI test (python/tests/test_recon_dist.py under mpirun); it skips without.
  "${pip[@]}" "mpi4py>=3.1" || say "mpi4py not installable here: the Python MPI test will skip"
  # The real finufft enables the compat layer's cross-checks (they skip without it).
  "${pip[@]}" "finufft>=2.5,<2.6" || say "finufft not installable here: its cross-checks will skip"
  # MRI-NUFFT for the backend tests (python/tests/test_mrinufft.py). Its required dependencies are
  # numpy, scipy, matplotlib and tqdm (CPU wheels; no extra pulls CUDA); checked with 1.5.1.
  "${pip[@]}" "mri-nufft==1.5.1" || say "mri-nufft not installable here: test_mrinufft.py will skip"
  # Without a GPU the extension is built CPU-only: section 2 already compiled every CUDA source.
  local cuda="${FIELDFT_PYTHON_CUDA:-}"
  [[ -n "$cuda" ]] || { [[ "$gpu_tests" == 1 ]] && cuda=AUTO || cuda=OFF; }
  # Verbose, so that the compile lines show while the extension builds (no silent minutes).
  say "pip install . into $py (FIELDFT_CUDA=$cuda; build tree build/python)"
  # The whole log goes to build/pip-install.log; the progress lines and errors to the screen.
  "$py" -m pip install -v --disable-pip-version-check --no-build-isolation --no-deps \
    -C build-dir=build/python -C cmake.define.FIELDFT_CUDA="$cuda" . 2>&1 |
    tee build/pip-install.log |
    grep --line-buffered -E '^ *\[[0-9]+/[0-9]+\]|Successfully|[Ee]rror|CMake (Error|Warning)'
  local pip_rc=${PIPESTATUS[0]}
  if ((pip_rc != 0)); then
    say "pip install . failed with exit code $pip_rc (full log: build/pip-install.log)"
    return "$pip_rc"
  fi
  "$py" -c 'import fieldft' || { say "import fieldft fails after pip install ."; return 1; }
  say "import fieldft works with $py (activate with: source build/pyenv/bin/activate)"
  local args=(-m pytest python/tests -q -p no:cacheprovider)
  if [[ "$gpu_tests" != 1 ]]; then
    args+=(-m "not gpu")
  fi
  say "python ${args[*]}"
  "$py" "${args[@]}" || return $?
  # fieldft.recon over MPI ranks (mpi4py, MPI_COMM_WORLD): the same test file under mpirun -n 2, 3.
  if command -v mpirun >/dev/null && "$py" -c 'import mpi4py' 2>/dev/null; then
    local k
    for k in 2 3; do
      say "mpirun -n $k python -m pytest python/tests/test_recon_dist.py"
      OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1 timeout 300 \
        mpirun --oversubscribe -n "$k" "$py" -m pytest python/tests/test_recon_dist.py -q -p no:cacheprovider \
        -m "not gpu" || return $?
    done
  fi
}
start=$SECONDS
python_rc=0
python_tests || python_rc=$?
say "python tests finished in $((SECONDS - start)) s with exit code $python_rc"

# --- 4. Fuzzing (short) ------------------------------------------------------------------------
# The readers of .npy and .cfl (and every target fuzz/CMakeLists.txt lists) under libFuzzer with
# AddressSanitizer and UndefinedBehaviorSanitizer; the long runs are recorded in docs/fuzzing.md.
fuzz_rc=0
if [[ "${FIELDFT_FUZZ:-1}" == 1 ]]; then
  start=$SECONDS
  FIELDFT_FUZZ_SECONDS="${FIELDFT_FUZZ_SECONDS:-30}" bash scripts/fuzz.sh || fuzz_rc=$?
  say "fuzzing finished in $((SECONDS - start)) s with exit code $fuzz_rc"
else
  say "FIELDFT_FUZZ=0: fuzzing skipped"
fi

# --- Summary -----------------------------------------------------------------------------------
say "total time $((SECONDS - total_start)) s"
if ((ctest_rc != 0 || python_rc != 0 || fuzz_rc != 0)); then
  say "FAILED (ctest exit $ctest_rc, python exit $python_rc, fuzz exit $fuzz_rc)"
  exit 1
fi
say "all tests passed"
