#!/usr/bin/env bash
# Stages for a lent GPU machine whose commands are limited in time (e.g. 600 s a call): each call
# runs one stage, and a build started by one call can be waited for by the next (the build
# folder stays while the machine is held). scripts/gpu_check.sh is the one-pass alternative
# where a single long command is possible. Not used by CI.
#
#   bash scripts/gpu_stages.sh build WAIT_S TARGET...   configure preset `cuda` (with the Python
#                                                       module) once, build TARGETs in the
#                                                       background, wait up to WAIT_S
#   bash scripts/gpu_stages.sh bgwait [WAIT_S]          wait for that build
#   bash scripts/gpu_stages.sh gtests TIMEOUT BIN...    run test binaries whole, one line each
#   bash scripts/gpu_stages.sh ctest REGEX
#   bash scripts/gpu_stages.sh matrix [run_matrix.py args]   cuFINUFFT from ./devcuf, required
#                                                            (bench/gpu_nufft/build_cufinufft.sh devcuf;
#                                                            name devcuf in the call's carry: an ignored
#                                                            folder does not stay between calls)
#   bash scripts/gpu_stages.sh precomp                  bench/precomputed/run_cuda.sh, summarised
#   bash scripts/gpu_stages.sh sanitize BIN FILTER [TIMEOUT]
#   bash scripts/gpu_stages.sh slices TIMEOUT [slices.py args]
#   bash scripts/gpu_stages.sh pyrun TIMEOUT NAME SCRIPT [args]   a Python benchmark (e.g.
#                                                       bench/recon/field.py) with the package laid
#                                                       out as pip would (build/cuda/pkg) and
#                                                       cuFINUFFT from ./devcuf; output $OUT/NAME.txt
# Logs and JSON go to $OUT (default /tmp/out). Run test binaries one at a time: they share the
# device, and GpuRuntime.ThousandPlanLifetimesDoNotLeak reads the device's free memory, which
# another process changes. To run stages side by side, start them with & and `wait` for their
# PIDs (a `pgrep -f` on the command line also finds the calling shell and never returns).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-8}
B=build/cuda
stage=$1; shift
case $stage in
  build)  # build [WAIT_S] TARGETS...: background build; waits up to WAIT_S
    wait_s=$1; shift
    if [[ ! -f $B/build.ninja ]]; then
      cmake --preset cuda -DFIELDFT_NATIVE=OFF -DFIELDFT_PYTHON=ON -DPython_EXECUTABLE="$(command -v python3)" >/tmp/configure.log 2>&1 || { tail -30 /tmp/configure.log; exit 1; }
    fi
    rm -f /tmp/build.rc
    setsid nohup bash -c "cmake --build $B -j 16 --target $* > /tmp/build.log 2>&1; echo \$? > /tmp/build.rc" >/dev/null 2>&1 &
    ;&
  bgwait)  # bgwait [WAIT_S]
    wait_s=${wait_s:-${1:-550}}
    t0=$SECONDS
    while [[ ! -f /tmp/build.rc ]] && (( SECONDS - t0 < wait_s )); do sleep 5; done
    if [[ -f /tmp/build.rc ]]; then echo "build rc $(cat /tmp/build.rc) after $((SECONDS - t0)) s"; grep -E "error|FAILED" /tmp/build.log | head -30; tail -2 /tmp/build.log
    else echo "build still running: $(tail -1 /tmp/build.log)"; fi
    ;;
  gtests)  # gtests TIMEOUT BIN... [-- FILTER]
    t=$1; shift
    for bin in "$@"; do
      exe=$(find $B -name "$bin" -type f -executable | head -1)
      [[ -n $exe ]] || { echo "$bin: not built"; continue; }
      s=$SECONDS
      timeout $t "$exe" --gtest_brief=1 > "$OUT/$bin.log" 2>&1; rc=$?
      echo "$bin: rc $rc in $((SECONDS - s)) s; $(grep -E '^\[  (PASSED|FAILED)  \]|tests ran' "$OUT/$bin.log" | tr '\n' ' ')"
      grep -E "^\[  FAILED  \]" "$OUT/$bin.log" | head -20
      [[ $rc == 0 ]] || grep -E "Failure|error" -A4 "$OUT/$bin.log" | head -40
    done
    ;;
  ctest)
    ctest --test-dir $B -R "$1" --output-on-failure -j 8 --timeout 300 > "$OUT/ctest.log" 2>&1; echo "ctest rc $?"
    grep -E "tests passed|tests failed|\(Failed|Timeout\)" "$OUT/ctest.log" | head -20
    ;;
  matrix)  # matrix [run_matrix args]
    PYTHONPATH=$PWD/devcuf python3 bench/gpu_nufft/run_matrix.py --bench $B/bench/gpu_nufft/fieldft_bench_gpu --require-cufinufft --json "$OUT/matrix.json" "$@" > "$OUT/matrix.txt" 2>&1; echo "matrix rc $?"
    tail -40 "$OUT/matrix.txt"
    ;;
  precomp)
    sh bench/precomputed/run_cuda.sh $B/bench/gpu_nufft/fieldft_bench_gpu > "$OUT/precomp.jsonl" 2>&1; echo "precomp rc $?"
    python3 - "$OUT/precomp.jsonl" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    line = line.strip()
    if not line.startswith("{"): print(line); continue
    j = json.loads(line)
    print(j["type"], j["dim"], j["n"], j["m"], j["ntransf"], j["eps"], j["prec"], j["method_requested"], j.get("method"),
          "exec", j.get("exec_ms"), "setpts2", j.get("setpts_again_ms"), "bytes", j.get("precomputed_bytes"), "err", j.get("rel_error"), j.get("error", ""))
PY
    ;;
  sanitize)  # sanitize BIN FILTER [TIMEOUT]
    exe=$(find $B -name "$1" -type f -executable | head -1)
    timeout ${3:-200} compute-sanitizer --tool memcheck --error-exitcode 3 "$exe" "--gtest_filter=$2" > "$OUT/san_$1.log" 2>&1; echo "sanitize $1 rc $?"
    grep -E "ERROR SUMMARY|PASSED|FAILED" "$OUT/san_$1.log" | head
    ;;
  slices)  # slices TIMEOUT [args]
    t=$1; shift
    timeout $t python3 bench/scale/slices.py --fieldft $B/apps/fieldft/fieldft "$@" --json "$OUT/slices.json" > "$OUT/slices.txt" 2>&1; echo "slices rc $?"
    tail -60 "$OUT/slices.txt"
    ;;
  pyrun)  # pyrun TIMEOUT NAME SCRIPT [args]
    t=$1 name=$2 script=$3; shift 3
    pkg=$B/pkg/fieldft
    mkdir -p "$pkg" && cp -r python/fieldft/. "$pkg/" && cp $B/python/_core*.so "$pkg/" || exit 1
    PYTHONPATH="$PWD/$B/pkg:$PWD/devcuf${PYTHONPATH:+:$PYTHONPATH}" timeout "$t" python3 "$script" "$@" \
      --json "$OUT/$name.json" > "$OUT/$name.txt" 2>&1; echo "$name rc $?"
    tail -25 "$OUT/$name.txt"
    ;;
  *) echo "unknown stage $stage"; exit 2 ;;
esac
