#!/usr/bin/env bash
# Runs tyche's libFuzzer harnesses (tests/fuzz/*_fuzz.cpp) for longer than the test suite does:
#   tools/fuzz.sh [seconds per harness, default 600] [harness name ...]
# Builds them with clang++ in build/fuzz (Release, -O2, ASan + UBSan + libFuzzer), runs each
# from its seed corpus in tests/fuzz/corpus/<name>/ (read only; what it finds goes to
# build/fuzz/found/<name>/), on one core each, and prints the executions per harness. Exit code
# non-zero when a harness finds a crash (the input is saved as build/fuzz/found/<name>-crash-*).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
seconds=${1:-600}
shift || true

clangxx=""
for c in clang++-14 clang++; do
    if command -v "$c" >/dev/null 2>&1; then clangxx=$(command -v "$c"); break; fi
done
[ -n "$clangxx" ] || { echo "fuzz.sh: clang++ not found (tools/setup.sh installs it)" >&2; exit 1; }

cmake -S . -B build/fuzz -DCMAKE_BUILD_TYPE=Release "-DCMAKE_CXX_FLAGS_RELEASE=-O2" \
    -DCMAKE_CXX_COMPILER="$clangxx" -DTYCHE_BUILD_EXAMPLES=OFF -DTYCHE_BUILD_BENCH=OFF \
    -DTYCHE_HEADER_TESTS=OFF -DTYCHE_ENABLE_CUDA=OFF -DTYCHE_LONG_TESTS=OFF >/dev/null
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:suppressions=$(pwd)/tests/sanitizers/ubsan.supp"
names=("$@")
if [ ${#names[@]} -eq 0 ]; then
    for f in tests/fuzz/*_fuzz.cpp; do n=$(basename "$f" _fuzz.cpp); names+=("$n"); done
fi
targets=()
for n in "${names[@]}"; do targets+=("fuzz_$n"); done
cmake --build build/fuzz -j "$(nproc 2>/dev/null || echo 2)" --target "${targets[@]}"

status=0
for n in "${names[@]}"; do
    found=build/fuzz/found/$n
    mkdir -p "$found"
    log=build/fuzz/found/$n.log
    echo "==> fuzz_$n for ${seconds} s"
    if ! build/fuzz/tests/fuzz_$n -max_total_time="$seconds" -print_final_stats=1 -max_len=4096 \
            -artifact_prefix="build/fuzz/found/$n-" "$found" "tests/fuzz/corpus/$n" >"$log" 2>&1; then
        status=1
        echo "fuzz_$n: FOUND A CRASH (log: $log)"
        tail -30 "$log"
    fi
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
    echo "fuzz_$n: ${execs:-?} executions (${rate:-?}/s), corpus $(ls "$found" | wc -l) new inputs"
done
exit "$status"
