#!/usr/bin/env bash
# Builds fieldft's libFuzzer targets (fuzz/, with clang: -fsanitize=fuzzer,address,undefined),
# writes each target's seed corpus with fieldft's own writers (fuzz/NAME_seeds.cpp), and runs
# every target listed in build/fuzz/fuzzers.txt, one after the other.
#
#   bash scripts/fuzz.sh                 # each target for FIELDFT_FUZZ_SECONDS (default 30 s)
#   FIELDFT_FUZZ_RUNS=1000000 bash scripts/fuzz.sh   # each target for exactly that many inputs
#   bash scripts/fuzz.sh npy             # only the named targets
#
# Needs Debian's clang and libclang-rt-14-dev (scripts/test.sh installs them). Exits non-zero
# on the first crash, hang (an input taking more than 10 s), leak or sanitizer report; the
# reproducer is left in build/fuzz/artifacts/. Prints the number of executions of each target.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo_root"
say() { printf '[fieldft fuzz] %s\n' "$*"; }

build=build/fuzz
cxx="${FIELDFT_FUZZ_CXX:-$(command -v clang++ || command -v clang++-14 || true)}"
[[ -n "$cxx" ]] || { say "error: clang++ not found (apt-get install clang libclang-rt-14-dev)"; exit 1; }
say "building with $cxx into $build"
cmake -S fuzz -B "$build" -G Ninja -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j "${FIELDFT_JOBS:-2}"

# Targets that read files by name (ismrmrd_fuzz: libhdf5) write each input to $TMPDIR; a tmpfs
# makes that cheap.
if [[ -z "${TMPDIR:-}" && -d /dev/shm && -w /dev/shm ]]; then export TMPDIR=/dev/shm; fi

declare -A max_len=()
while read -r name len; do max_len[$name]=$len; done <"$build/fuzzers.txt"
mapfile -t targets < <(if (($# > 0)); then printf '%s\n' "$@"; else cut -d' ' -f1 "$build/fuzzers.txt"; fi)
mkdir -p "$build/artifacts"
for t in "${targets[@]}"; do
  [[ -n "${max_len[$t]:-}" && -x "$build/${t}_fuzz" ]] ||
    { say "error: no fuzz target '$t' (targets: ${!max_len[*]})"; exit 1; }
  corpus="$build/corpus/$t"
  rm -rf "$corpus"
  mkdir -p "$corpus"
  if [[ -x "$build/${t}_seeds" ]]; then
    "$build/${t}_seeds" "$corpus"
  fi
  args=(-timeout=10 -rss_limit_mb=2048 "-max_len=${max_len[$t]}" -print_final_stats=1 "-artifact_prefix=$build/artifacts/${t}-")
  if [[ -n "${FIELDFT_FUZZ_RUNS:-}" ]]; then
    args+=("-runs=$FIELDFT_FUZZ_RUNS")
  else
    args+=("-max_total_time=${FIELDFT_FUZZ_SECONDS:-30}")
  fi
  say "$t: $(ls "$corpus" | wc -l) seeds; ${t}_fuzz ${args[*]}"
  log="$build/$t.log"
  rc=0
  "$build/${t}_fuzz" "${args[@]}" "$corpus" >"$log" 2>&1 || rc=$?
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
  if ((rc != 0)); then
    tail -n 40 "$log"
    say "$t: FAILED (exit $rc) after $runs executions; log $log, reproducer in $build/artifacts/"
    exit 1
  fi
  say "$t: $runs executions, no crash, hang or sanitizer report ($(grep -o 'cov: [0-9]*' "$log" | tail -1))"
done
