#!/usr/bin/env bash
# bench/callgrind.sh — instruction counts (valgrind --tool=callgrind) of one value_and_gradient,
# tyche vs hand-written twin, as a repeatable second measure next to bench/run.sh's timings.
# Valgrind 3.19 cannot decode AVX-512, so this builds bench/gradients.cpp with
# -O3 -march=x86-64-v3 (AVX2 + FMA) instead of -march=native. Prints CSV:
#   model,calls,tyche_Ir_per_call,handwritten_Ir_per_call,ratio
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
out=$root/build/bench-callgrind
mkdir -p "$out"
${CXX:-g++} -std=c++20 -O3 -DNDEBUG -march=x86-64-v3 -I"$root/include" -I"$root/examples" "$root/bench/gradients.cpp" \
    -o "$out/gradients" -lbenchmark -lpthread >&2
echo "model,calls,tyche_Ir_per_call,handwritten_Ir_per_call,ratio"
for spec in iid_normal_100:100000 eight_schools_noncentered:100000 logistic_regression:10 \
        kidiq_100:100000 kidiq_200:100000 kidiq_400:100000 kidiq_434:100000 kidiq_10000:2000 \
        kidiq_elementwise_100:100000 kidiq_elementwise_434:100000 kidiq_elementwise_10000:100000 \
        arK:100000 low_dim_gauss_mix:200 glmm_poisson:2000; do
    model=${spec%%:*} calls=${spec##*:}
    declare -A ir=()
    for impl in tyche handwritten; do
        valgrind --tool=callgrind --callgrind-out-file="$out/callgrind.$model.$impl" \
            --toggle-collect='*repeat_calls*' "$out/gradients" --calls="$model/$impl:$calls" \
            2>"$out/valgrind.$model.$impl.log" >/dev/null
        ir[$impl]=$(sed -n 's/^==[0-9]*== Collected : \([0-9]*\)$/\1/p' "$out/valgrind.$model.$impl.log")
    done
    python3 -c "import sys; t,h,c=map(int,sys.argv[1:4]); print(f'{sys.argv[4]},{c},{t/c:.0f},{h/c:.0f},{t/h:.3f}')" \
        "${ir[tyche]}" "${ir[handwritten]}" "$calls" "$model"
done
