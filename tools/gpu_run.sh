#!/bin/bash
# tools/gpu_run.sh — the GPU checks and benchmarks of issue 16 as one short, prepared run, for a
# session that builds on a machine without a GPU and is lent one for a few minutes.
#
#   bash tools/gpu_run.sh build        # here: nvcc -O3 sm_90 binaries (~15 min on 2 cores) and the
#                                      # posteriors they read, into build/gpu-run/ (one folder to carry)
#   bash build/gpu-run/run.sh [LIMIT] [STEPS]  # on the GPU machine: the tests, then the benchmarks,
#                                      # each alone on the GPU, stopping new steps after LIMIT seconds
#                                      # (default 470: the tests ~260, --blocks ~65, --quick --data
#                                      # ~45 on an H200); STEPS: the benchmark steps to run, of
#                                      # workers,split,blocks,data,many (default blocks,data); results
#                                      # under $OUT (or build/gpu-run/out)
#
# Order: the executor test first (its checks against the emulation and the references; the
# 100-d correlated Gaussian, one chain per thread, last), then the chosen benchmark steps:
# bench/cuda_workers (the workers' pass alone), cuda_executor --split (whole_device's controllers
# and gradients A/B), --blocks (the defaults with fewer worker blocks, more tiles) and --quick
# --data (the data rows, float X) and --many (eight schools at 16,384 and 131,072 chains: the
# host's part), with nvidia-smi's SM clock sampled beside the benchmarks. Compare timings
# within one run only (two H200 machines differed 1.8x on the same code, docs/gpu.md).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
case "${1:-}" in
  build)
    build=$root/build/gpu
    [ -f "$build/CMakeCache.txt" ] ||
      cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DTYCHE_BUILD_EXAMPLES=OFF -DTYCHE_BUILD_BENCH=OFF
    cmake --build "$build" -j "$(nproc)" -- -k test_cuda_nuts_executor_test test_cuda_device_eval_test \
      test_cuda_nuts_kernel_test bench_cuda_executor bench_cuda_workers
    out=$root/build/gpu-run
    rm -rf "$out" && mkdir -p "$out/devshared/posteriors"
    cp "$build"/tests/test_cuda_{nuts_executor,device_eval,nuts_kernel}_test "$build"/bench/cuda_{executor,workers} "$out/"
    for p in eight_schools-eight_schools_noncentered kidiq-kidscore_interaction; do
      cp -r "$root/../shared/posteriors/$p" "$out/devshared/posteriors/"
    done
    cp "$root/tools/gpu_run.sh" "$out/run.sh"
    echo "carry build/gpu-run; run: bash build/gpu-run/run.sh" ;;
  *)
    here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
    limit=${1:-470}
    steps=,${2:-blocks,data},
    out=${OUT:-$here/out}
    mkdir -p "$out"
    export TYCHE_SHARED=$here/devshared
    start=$(date +%s)
    left() { echo $((limit - ($(date +%s) - start))); }
    step() {  # step NAME SECONDS COMMAND...: runs it if time is left, with a timeout
      local name=$1 t=$2
      shift 2
      local l
      l=$(left)
      if [ "$l" -lt 20 ]; then echo "$name: skipped (time)" >> "$out/log.txt"; return; fi
      [ "$t" -gt "$l" ] && t=$l
      echo "== $name (limit $t s, at $(($(date +%s) - start)) s)" >> "$out/log.txt"
      set +e
      timeout "$t" "$@" > "$out/$name.txt" 2>&1
      echo "rc=$? at $(($(date +%s) - start)) s" >> "$out/log.txt"
      set -e
    }
    nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.limit --format=csv > "$out/gpu.txt" 2>&1 || true
    step device_eval 60 "$here/test_cuda_device_eval_test"
    step nuts_kernel 60 "$here/test_cuda_nuts_kernel_test"
    step nuts_executor 260 "$here/test_cuda_nuts_executor_test"
    (while true; do
       nvidia-smi --query-gpu=clocks.sm,power.draw,clocks_throttle_reasons.active --format=csv,noheader \
         >> "$out/clocks.txt" 2>&1 || true
       sleep 5
     done) &
    monitor=$!
    [[ $steps == *,workers,* ]] && step workers 40 "$here/cuda_workers"
    [[ $steps == *,split,* ]] && step split 120 "$here/cuda_executor" --split
    [[ $steps == *,blocks,* ]] && step blocks 150 "$here/cuda_executor" --blocks
    [[ $steps == *,data,* ]] && step data 150 "$here/cuda_executor" --quick --data
    [[ $steps == *,many,* ]] && step many 90 "$here/cuda_executor" --many
    kill "$monitor" 2>/dev/null || true
    cat "$out/log.txt" ;;
esac
