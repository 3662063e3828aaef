#!/usr/bin/env bash
# One pass on a GPU machine: build preset `cuda` (tests and benchmarks), run the CTest tests
# labelled gpu (or those matching $1, a ctest -R regex), compute-sanitizer memcheck and racecheck
# on the operator battery's GPU cases, and the operator-layer benchmark. Writes logs to
# ${OUT:-build/gpu_check} and prints a short table last. Needs nvcc and a GPU; not used by CI.
#   FIELDFT_GPU_BENCH=0  skips the benchmarks; FIELDFT_SANITIZE=0 skips compute-sanitizer;
#   FIELDFT_CTEST=0 skips ctest (e.g. a second pass on a machine whose build is already there).
#   FIELDFT_RECON_BENCH=1 also builds the Python module (nanobind) into build/cuda and runs the
#   reconstruction benchmark bench/recon/r1.py against its anchors (those importable: sigpy,
#   torchkbnufft, cufinufft on PYTHONPATH; bench/gpu_nufft/build_cufinufft.sh builds the last).
set -uo pipefail
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo_root"
out="${OUT:-build/gpu_check}"
mkdir -p "$out"
filter="${1:-}"
summary=()
note() { summary+=("$1"); printf '[gpu_check] %s\n' "$1"; }

start=$SECONDS
py_flags=()
if [[ "${FIELDFT_RECON_BENCH:-0}" == 1 ]]; then
  py_flags=(-DFIELDFT_PYTHON=ON "-DPython_EXECUTABLE=$(command -v python3)")
fi
cmake --preset cuda -DFIELDFT_NATIVE=OFF "${py_flags[@]}" >"$out/configure.log" 2>&1 || { tail -30 "$out/configure.log"; exit 1; }
if cmake --build --preset cuda -j "$(nproc)" >"$out/build.log" 2>&1; then
  note "build: ok in $((SECONDS - start)) s"
else
  grep -E "error|Error" "$out/build.log" | head -40
  note "build: FAILED"
  exit 1
fi

# The GPU tests' CPU references run OpenMP: two threads each, so that parallel tests do not
# oversubscribe the cores (FIELDFT_GPU_JOBS tests at once, default 10).
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-2}"
args=(--test-dir build/cuda --output-on-failure -j "${FIELDFT_GPU_JOBS:-10}" --timeout 600)
if [[ -n "$filter" ]]; then args+=(-R "$filter"); else args+=(-L gpu); fi
if [[ "${FIELDFT_CTEST:-1}" == 1 ]]; then
  start=$SECONDS
  ctest "${args[@]}" >"$out/ctest.log" 2>&1
  rc=$?
  note "ctest ${args[*]:2}: exit $rc in $((SECONDS - start)) s; $(grep -E 'tests passed|tests failed' "$out/ctest.log" | tail -1)"
  grep -E "^\s+[0-9]+ - .*\((Failed|Timeout|SEGFAULT|Subprocess aborted|Exception)\)" "$out/ctest.log" | head -30
fi

if [[ "${FIELDFT_SANITIZE:-1}" == 1 ]]; then
  cs=compute-sanitizer
  command -v $cs >/dev/null || cs=/usr/local/cuda/bin/compute-sanitizer
  for tool in memcheck racecheck; do
    for exe in build/cuda/tests/op/fieldft_test_op_gpu build/cuda/tests/mri/fieldft_test_mri_gpu \
               build/cuda/tests/solve/fieldft_test_solve_gpu; do
      [[ -x $exe ]] || continue
      name="$(basename "$exe")"
      # Small cases only: the batteries, the operators and the solvers; not the tests that time
      # a call against a held stream (the sanitizer serialises the device, so they must fail).
      filt='--gtest_filter=*Battery*:*Combinators*:*VectorOps*:*Context*:*Encoding*:*Sparsify*:*Prox*:*Toeplitz*:*Sense*:*CoilMaps*:*Density*:*Cg*:*Pwls*:*Fista*:*Admm*-*ReturnsBefore*:*StreamOrder*'
      $cs --tool $tool --error-exitcode 3 "$exe" "$filt" >"$out/sanitize_${tool}_${name}.log" 2>&1
      rc=$?
      note "compute-sanitizer --tool $tool $name $filt: exit $rc; $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$out/sanitize_${tool}_${name}.log" | tail -1)"
    done
  done
fi

if [[ "${FIELDFT_GPU_BENCH:-1}" == 1 ]]; then
  for b in op/fieldft_bench_sense_normal; do  # (bench/mri/toeplitz_bench is host-only)
    [[ -x build/cuda/bench/$b ]] || continue
    name="$(basename "$b")"
    build/cuda/bench/$b >"$out/$name.txt" 2>&1
    note "$name: exit $?"
    cat "$out/$name.txt"
  done
fi

if [[ "${FIELDFT_RECON_BENCH:-0}" == 1 ]]; then
  # The package as pip would lay it out: python/fieldft with the module built above.
  pkg=build/cuda/pkg/fieldft
  mkdir -p "$pkg"
  cp -r python/fieldft/. "$pkg/"
  cp build/cuda/python/_core*.so "$pkg/"
  PYTHONPATH="$repo_root/build/cuda/pkg${PYTHONPATH:+:$PYTHONPATH}" python3 bench/recon/r1.py --json "$out/r1.json" \
    ${FIELDFT_RECON_ARGS:-} >"$out/bench_r1.txt" 2>&1
  note "bench/recon/r1.py: exit $?"
  cat "$out/bench_r1.txt"
fi

printf '\n%s\n' "${summary[@]}"
