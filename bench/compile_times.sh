#!/usr/bin/env bash
# bench/compile_times.sh [--quick] — how long user code that includes tyche takes to compile.
# Prints CSV: file,compiler,mode,seconds (median wall time of 3 runs; 1 with --quick).
#   header_only          a translation unit that only includes <tyche/tyche.hpp>
#   quickstart           examples/quickstart.cpp (the eight-schools model)
#   hmm                  examples/hmm.cpp (a 2-state HMM by scan, NUTS, summary)
#   hmm_n100, hmm_n10000 the same with N = 100 and N = 10,000 observations (-DTYCHE_EXAMPLE_HMM_N):
#                        the loop is a scan, so N is a run-time length and the times agree
#   local_level, arma,   examples/local_level.cpp (Kalman filter by scan), examples/arma.cpp
#   change_point         (ARMA(1,1) by scan), examples/change_point.cpp (a free term): each with NUTS
#   gradients            bench/gradients.cpp (every gradient case, its twin, Google Benchmark)
#   arithmetic_test      tests/autodiff/arithmetic_test.cpp (many small programs, four scalar types)
# mode: syntax = -fsyntax-only (front end: templates), O2 = full compile to an object file.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
reps=3
[ "${1:-}" = "--quick" ] && reps=1

tmp=$(mktemp -d "${TMPDIR:-/tmp}/tyche-compile-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
printf '#include <tyche/tyche.hpp>\nint main() { return 0; }\n' > "$tmp/header_only.cpp"

files=("header_only:$tmp/header_only.cpp" "quickstart:$root/examples/quickstart.cpp"
       "hmm:$root/examples/hmm.cpp" "local_level:$root/examples/local_level.cpp"
       "arma:$root/examples/arma.cpp" "change_point:$root/examples/change_point.cpp"
       "gradients:$root/bench/gradients.cpp"
       "arithmetic_test:$root/tests/autodiff/arithmetic_test.cpp")
compilers=()
for c in g++ clang++; do command -v "$c" >/dev/null 2>&1 && compilers+=("$c"); done

flags=(-std=c++20 -DTYCHE_USE_XSIMD=1 -I"$root/include" -I"$root/tests")

median_time() {  # median wall seconds of $reps runs of "$@"
    local times=()
    for _ in $(seq "$reps"); do
        local start end
        start=$(date +%s%N)
        "$@" >/dev/null 2>&1 || { echo "compile failed: $*" >&2; exit 1; }
        end=$(date +%s%N)
        times+=("$(( (end - start) / 1000000 ))")  # milliseconds
    done
    printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {printf "%.2f", a[int((NR+1)/2)] / 1000}'
}

echo "file,compiler,mode,seconds"
for entry in "${files[@]}" "hmm_n100:$root/examples/hmm.cpp:-DTYCHE_EXAMPLE_HMM_N=100" \
             "hmm_n10000:$root/examples/hmm.cpp:-DTYCHE_EXAMPLE_HMM_N=10000"; do
    name=${entry%%:*}
    rest=${entry#*:}
    file=${rest%%:*}
    extra=()
    [ "$rest" != "$file" ] && extra=("${rest#*:}")
    for cxx in "${compilers[@]}"; do
        s=$(median_time "$cxx" "${flags[@]}" "${extra[@]}" -fsyntax-only "$file")
        echo "$name,$cxx,syntax,$s"
        o=$(median_time "$cxx" "${flags[@]}" "${extra[@]}" -O2 -c "$file" -o "$tmp/out.o")
        echo "$name,$cxx,O2,$o"
    done
done
