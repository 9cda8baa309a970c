#!/usr/bin/env bash
# bench/smc.sh [--quick] — called by `bash bench/run.sh smc [--quick]`. Builds bench/smc.cpp in
# Release, prints its CSV to stdout (model,engine,algorithm,particles,seconds,kl,sweeps,
# seconds_to_kl_0.01; see the top of bench/smc.cpp), and, after a full run with gnuplot
# installed (apt-get install gnuplot-nox), plots KL against wall-clock time to
# docs/smc_kl_time.png (bench/smc_plot.gp). The trace behind the plot is kept in
# build/bench-release/smc_trace.csv. Full: 24 rows of 60 s (about half an hour: a row always
# finishes the sweep it started); --quick: 3 s per row, skipping the three HMM rows of the fork
# engine with 1000 particles (about a minute and a half in all).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$root/build/bench-release
quick=0
for a in "$@"; do
    case $a in
        --quick) quick=1 ;;
        *) echo "usage: bash bench/run.sh smc [--quick]" >&2; exit 2 ;;
    esac
done
if [ -f "$root/tools/setup.sh" ]; then bash "$root/tools/setup.sh" >&2; fi
if [ ! -f "$build/CMakeCache.txt" ]; then
    cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DTYCHE_BUILD_TESTS=OFF \
        -DTYCHE_BUILD_EXAMPLES=OFF -DTYCHE_BUILD_BENCH=ON >&2
else
    cmake "$build" >&2  # a tree configured before bench_smc existed must learn the target
fi
cmake --build "$build" --target bench_smc -j "$(nproc)" >&2
trace=$build/smc_trace.csv
args=(--trace "$trace")
[ $quick -eq 1 ] && args+=(--quick)
"$build/bench/smc" "${args[@]}"
if [ $quick -eq 0 ]; then
    if command -v gnuplot >/dev/null; then
        gnuplot -e "trace='$trace'; out='$root/docs/smc_kl_time.png'" "$root/bench/smc_plot.gp"
        echo "smc: wrote docs/smc_kl_time.png" >&2
    else
        echo "smc: gnuplot not found; no plot (apt-get install gnuplot-nox)" >&2
    fi
fi
