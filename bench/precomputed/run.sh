#!/bin/sh
# The cases of docs/benchmarks.md ("Precomputed kernel weights"); BIN: the built benchmark.
BIN=${1:-build/dev/bench/precomputed/fieldft_bench_precomputed}
export OMP_WAIT_POLICY=passive  # idle threads sleep, so the process CPU time is the work
uptime
for c in "2 256 65536 1e-3 float" "2 256 65536 1e-6 float" "2 256 65536 1e-3 double" "2 256 65536 1e-6 double" \
         "3 64 500000 1e-3 float" "3 64 500000 1e-6 float" "3 64 500000 1e-6 double" \
         "3 64 2000000 1e-3 float" "3 64 2000000 1e-6 float" "3 64 2000000 1e-6 double" \
         "3 128 2000000 1e-3 float" "3 128 2000000 1e-6 double"; do
  $BIN $c 5 3 2
done
uptime
