#!/usr/bin/env bash
# bench/batching.sh [--quick] — run by `bash bench/run.sh batching`: builds bench/batching.cpp in
# Release, prints its CSV (target,mode,chains,grads_per_second,utilization) to stdout and, when
# gnuplot is installed, plots it as the autobatching paper's Figures 6 and 7: gradient throughput
# and utilisation against the number of chains. A full run writes docs/batching_throughput.png and
# docs/batching_utilization.png; a --quick run writes them under build/bench-release/.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=$root/build/bench-release
args=()
plots=$root/docs
for a in "$@"; do
    case $a in
        --quick) args+=(--quick); plots=$build ;;
        *) echo "usage: bash bench/run.sh batching [--quick]" >&2; exit 2 ;;
    esac
done

[ -f "$root/tools/setup.sh" ] && bash "$root/tools/setup.sh" >&2
if [ ! -f "$build/CMakeCache.txt" ]; then
    cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DTYCHE_BUILD_TESTS=OFF \
        -DTYCHE_BUILD_EXAMPLES=OFF -DTYCHE_BUILD_BENCH=ON >&2
fi
cmake --build "$build" --target bench_batching -j "$(nproc)" >&2

csv=$build/batching.csv
"$build/bench/batching" "${args[@]}" | tee "$csv"

if ! command -v gnuplot >/dev/null; then
    echo "batching: gnuplot not found; no plots (apt-get install gnuplot-nox)" >&2
    exit 0
fi
mkdir -p "$plots"
for what in throughput utilization; do
    if [ $what = throughput ]; then col=4; ylabel="gradients per second"; logy="set logscale y"
    else col=5; ylabel="utilisation (useful lane gradients / lane slots)"; logy="set yrange [0:1.05]"; fi
    gnuplot <<GP
set datafile separator ","
set terminal pngcairo size 900,420 font ",10" noenhanced
set output "$plots/batching_$what.png"
set multiplot layout 1,2 title "Lockstep NUTS: $ylabel against chains ($(nproc) threads)"
set logscale x 2
$logy
set xlabel "chains"
set ylabel "$ylabel"
set key bottom right
do for [t in "corr_gaussian_100 logistic_regression"] {
  set title t
  plot "$csv" using (strcol(1) eq t && strcol(2) eq "program_counter" ? \$3 : 1/0):$col with linespoints title "program counter", \
       "$csv" using (strcol(1) eq t && strcol(2) eq "trajectory_sync" ? \$3 : 1/0):$col with linespoints title "trajectory sync"
}
unset multiplot
GP
    echo "batching: wrote $plots/batching_$what.png" >&2
done
