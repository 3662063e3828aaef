#!/bin/bash
# One GPU session for the field-corrected DFT: gpu tests, benchmark, compute-sanitizer on a small
# test. Uses prebuilt binaries under build/dftcuda when they run on this machine, else builds
# them (cmake -G Ninja -DFIELDFT_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DFIELDFT_BUILD_TESTS=ON).
# Results go to $OUT (or ./dft_out). Usage: bench/dft/run_gpu.sh [--quick]
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/lib:${LD_LIBRARY_PATH:-}
OUT=${OUT:-$PWD/dft_out}
mkdir -p "$OUT"
B=build/dftcuda
T=$B/tests/mri/fieldft_test_mri_gpu
X=$B/bench/dft/fieldft_bench_dft
nvidia-smi --query-gpu=name,clocks.max.sm,clocks.sm,power.limit,driver_version --format=csv | tee "$OUT/gpu.txt"
if ! "$T" --gtest_list_tests > /dev/null 2>&1 || ! "$X" --help > /dev/null 2>&1; then
  echo "== building"
  cmake -S . -B $B -G Ninja -DFIELDFT_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DFIELDFT_BUILD_TESTS=ON \
    -DFIELDFT_BUILD_BENCH=ON > "$OUT/cmake.txt" 2>&1 || tail -20 "$OUT/cmake.txt"
  cmake --build $B -j16 --target fieldft_test_mri_gpu fieldft_bench_dft > "$OUT/build.txt" 2>&1 || tail -40 "$OUT/build.txt"
fi
echo "== gpu tests"
timeout 150 "$T" > "$OUT/gpu_tests.txt" 2>&1; echo "tests rc=$?"
grep -E "^\[ [^ =-]|FAILED|PASSED|Failure|Expected|Which is|actual" "$OUT/gpu_tests.txt" | grep -v "^\[ RUN" | head -80
echo "== benchmark"
timeout 150 "$X" ${1:-} --json "$OUT/bench.json" > "$OUT/bench.txt" 2>&1; echo "bench rc=$?"
cat "$OUT/bench.txt"
echo "== compute-sanitizer"
CS=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
[ -n "${SKIP_MEMCHECK:-}" ] && CS=""
if [ -n "$CS" ]; then
  F='DftAccuracy/0.OddSizesAndTinyGrid:DftAccuracy/0.ImagesOfVeryDifferentScale:DftR2Test/0.Adjointness:DftBadInput.*:DftGpu.DevicePointersAndOperatorInterface'
  echo "$CS --tool memcheck --leak-check full $T --gtest_filter=$F"
  timeout 100 "$CS" --tool memcheck --leak-check full "$T" --gtest_filter="$F" > "$OUT/memcheck.txt" 2>&1
  echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|LEAK SUMMARY|PASSED|FAILED|Invalid" "$OUT/memcheck.txt" | head -20
else
  echo "compute-sanitizer not found"
fi
