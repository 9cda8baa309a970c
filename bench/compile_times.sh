#!/usr/bin/env bash
# bench/compile_times.sh [--quick] [--only NAME[,NAME...]] — how long user code that includes tyche
# takes to compile. Prints CSV: target,compiler,flags,user_s,max_rss_mb (the run with the median
# user time of 3; 1 with --quick), one compile at a time.
#   header_only          a translation unit that only includes <tyche/tyche.hpp>
#   quickstart           examples/quickstart.cpp (the eight-schools model, nuts(), summary)
#   kidiq                examples/posteriordb_kidiq.cpp (one posteriordb model, its JSON data)
#   hmm                  examples/hmm.cpp (a 2-state HMM by scan, NUTS, summary)
#   hmm_n100, hmm_n10000 the same with N = 100 and N = 10,000 observations (-DTYCHE_EXAMPLE_HMM_N):
#                        the loop is a scan, so N is a run-time length and the times agree
#   local_level, arma,   examples/local_level.cpp (Kalman filter by scan), examples/arma.cpp
#   change_point         (ARMA(1,1) by scan), examples/change_point.cpp (a free term): each with NUTS
#   gradients            bench/gradients.cpp (every gradient case, its twin, Google Benchmark)
#   arithmetic_test      tests/autodiff/arithmetic_test.cpp (many small programs, four scalar types)
#   nuts_driver          src/tyche_nuts_driver.cpp: the NUTS driver, compiled once per program
#                        that links tyche::separate_driver (docs/compile-time.md)
# flags: -fsyntax-only (the front end: templates), -O2 (a full compile to an object file, as
# tyche::simd builds by default) for every target; for header_only, quickstart and kidiq also -O0
# and -O1 (for iterating on a model), -O0 -march=native (a debug build) and -O2 with
# <tyche/tyche.hpp> precompiled (`-O2 pch`: what target_precompile_headers(t PRIVATE
# <tyche/tyche.hpp>) gives; the header's own precompilation is not counted), and -O2 with
# TYCHE_SEPARATE_DRIVER, without and with the precompiled header (`-O2 separate driver`, `-O2 pch
# separate driver`: a file of a program that links tyche::separate_driver; the driver's own file is
# the row nuts_driver).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
reps=3
only=""
while [ $# -gt 0 ]; do
    case "$1" in
        --quick) reps=1 ;;
        --only) only=",$2,"; shift ;;
        *) echo "usage: bash bench/compile_times.sh [--quick] [--only NAME,...]" >&2; exit 2 ;;
    esac
    shift
done
[ -x /usr/bin/time ] || { echo "compile_times.sh: needs /usr/bin/time (Debian package time)" >&2; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/tyche-compile-XXXXXX")
trap 'rm -rf "$tmp"' EXIT
printf '#include <tyche/tyche.hpp>\nint main() { return 0; }\n' > "$tmp/header_only.cpp"

compilers=()
for c in g++ clang++; do command -v "$c" >/dev/null 2>&1 && compilers+=("$c"); done
# The examples read ../shared/posteriors relative to their source; none is run here.
flags=(-std=c++20 -DTYCHE_USE_XSIMD=1 -I"$root/include" -I"$root/tests" -I"$root/examples")

# measure TARGET COMPILER FLAGS-LABEL COMMAND...: the row of the run with the median user time.
measure() {
    local target=$1 cxx=$2 label=$3
    shift 3
    local rows=()
    for _ in $(seq "$reps"); do
        /usr/bin/time -f '%U %M' -o "$tmp/time" "$@" >/dev/null 2>"$tmp/err" ||
            { echo "compile failed: $*" >&2; cat "$tmp/err" >&2; exit 1; }
        rows+=("$(cat "$tmp/time")")
    done
    printf '%s\n' "${rows[@]}" | sort -n | awk -v t="$target" -v c="$cxx" -v f="$label" \
        '{u[NR]=$1; m[NR]=$2} END {k=int((NR+1)/2); printf "%s,%s,%s,%.2f,%.0f\n", t, c, f, u[k], m[k]/1024}'
}

# precompiled <tyche/tyche.hpp> for COMPILER at -O2 [with the further flags given]: prints the flags
# that use it.
pch_flags() {
    local cxx=$1
    shift
    local dir
    dir=$tmp/pch-$cxx$(printf '%s' "$@" | tr -c 'A-Za-z0-9' '_')
    mkdir -p "$dir/tyche"
    printf '#include <tyche/tyche.hpp>\n' > "$dir/tyche/pch.hpp"
    if [ "$cxx" = g++ ]; then
        "$cxx" "${flags[@]}" "$@" -O2 -x c++-header "$dir/tyche/pch.hpp" -o "$dir/tyche/pch.hpp.gch"
        echo "$* -include $dir/tyche/pch.hpp"
    else
        "$cxx" "${flags[@]}" "$@" -O2 -x c++-header "$dir/tyche/pch.hpp" -o "$dir/tyche/pch.hpp.pch"
        echo "$* -include-pch $dir/tyche/pch.hpp.pch"
    fi
}

declare -A pch=()  # compiler -> the flags that use its precompiled header (built on first use)
echo "target,compiler,flags,user_s,max_rss_mb"
for entry in "header_only:$tmp/header_only.cpp" "quickstart:$root/examples/quickstart.cpp" \
             "kidiq:$root/examples/posteriordb_kidiq.cpp" "hmm:$root/examples/hmm.cpp" \
             "hmm_n100:$root/examples/hmm.cpp:-DTYCHE_EXAMPLE_HMM_N=100" \
             "hmm_n10000:$root/examples/hmm.cpp:-DTYCHE_EXAMPLE_HMM_N=10000" \
             "local_level:$root/examples/local_level.cpp" "arma:$root/examples/arma.cpp" \
             "change_point:$root/examples/change_point.cpp" "gradients:$root/bench/gradients.cpp" \
             "arithmetic_test:$root/tests/autodiff/arithmetic_test.cpp" \
             "nuts_driver:$root/src/tyche_nuts_driver.cpp:-DTYCHE_SEPARATE_DRIVER"; do
    name=${entry%%:*}
    rest=${entry#*:}
    file=${rest%%:*}
    [ -n "$only" ] && [[ "$only" != *",$name,"* ]] && continue
    extra=()
    [ "$rest" != "$file" ] && extra=("${rest#*:}")
    for cxx in "${compilers[@]}"; do
        measure "$name" "$cxx" "-fsyntax-only" "$cxx" "${flags[@]}" "${extra[@]}" -fsyntax-only "$file"
        measure "$name" "$cxx" "-O2" "$cxx" "${flags[@]}" "${extra[@]}" -O2 -c "$file" -o "$tmp/out.o"
        case "$name" in header_only | quickstart | kidiq) ;; *) continue ;; esac
        for o in -O0 -O1 "-O0 -march=native"; do
            # shellcheck disable=SC2086
            measure "$name" "$cxx" "$o" "$cxx" "${flags[@]}" "${extra[@]}" $o -c "$file" -o "$tmp/out.o"
        done
        [ -n "${pch[$cxx]:-}" ] || pch[$cxx]=$(pch_flags "$cxx")
        # shellcheck disable=SC2086
        measure "$name" "$cxx" "-O2 pch" "$cxx" "${flags[@]}" "${extra[@]}" -O2 ${pch[$cxx]} -c "$file" -o "$tmp/out.o"
        measure "$name" "$cxx" "-O2 separate driver" "$cxx" "${flags[@]}" "${extra[@]}" -O2 -DTYCHE_SEPARATE_DRIVER \
            -c "$file" -o "$tmp/out.o"
        [ -n "${pch[$cxx sep]:-}" ] || pch[$cxx sep]=$(pch_flags "$cxx" -DTYCHE_SEPARATE_DRIVER)
        # shellcheck disable=SC2086
        measure "$name" "$cxx" "-O2 pch separate driver" "$cxx" "${flags[@]}" "${extra[@]}" -O2 ${pch[$cxx sep]} \
            -c "$file" -o "$tmp/out.o"
    done
done
