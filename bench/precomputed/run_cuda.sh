#!/bin/sh
# CUDA method precomputed against nupts and the planner's auto (issue 25 item 7's table): types
# 1 and 2, float and double, eps 1e-3 and 1e-6; 2D 256^2 modes, 65536 points, 32 transforms; 3D 128^3 modes, 2M
# points, 8 transforms. One JSON line per method (fieldft_bench_gpu: exec_ms the fastest of
# REPEAT executes on device data, setpts_again_ms set_points on a plan that has points,
# precomputed_bytes the weights' memory). The executes per set_points from which precomputed
# pays: (setpts_again_ms[precomputed] - setpts_again_ms[nupts]) / (exec_ms[nupts] - exec_ms[precomputed]).
# BIN: the built benchmark (cuda preset).
BIN=${1:-build/cuda/bench/gpu_nufft/fieldft_bench_gpu}
nvidia-smi --query-gpu=name --format=csv,noheader
for prec in f d; do
  for eps in 1e-3 1e-6; do
    for type in 1 2; do
      $BIN $type 2 256 65536 $eps $prec 32 auto,nupts,precomputed 20 --check 16
      $BIN $type 3 128 2000000 $eps $prec 8 auto,nupts,precomputed 10 --check 16
    done
  done
done
