#!/usr/bin/env bash
# bench/stan/plot.sh CSV OUT_DIR — the figures of the Stan comparison, from the CSV that
# bench/stan/run.sh prints (it calls this at the end: a full run writes into docs/, --quick into
# build/bench-stan/). Needs gnuplot; without it, says so and exits 0 (the rows do not depend on
# the figures).
#
#   stan_ratios.png     Stan's time / tyche's per gradient (one bar per gradient row, log scale,
#                       the issue's 20x goal marked) and tyche's ESS per second / Stan's per NUTS
#                       row (sampling only and warm-up included, the 10x goal marked)
#   stan_covertype.png  Edward2's workload: ms per leapfrog per chain against the number of chains
#                       sharing each pass over X (tyche: 1, 8, 32; Stan: 1), with the time of one
#                       read of X at the measured bandwidth and the 10 ms goal
set -euo pipefail

[ $# -eq 2 ] || { echo "usage: bench/stan/plot.sh CSV OUT_DIR" >&2; exit 2; }
csv=$1
out=$2
if ! command -v gnuplot >/dev/null 2>&1; then
    echo "bench/stan/plot.sh: gnuplot not found; no figures (apt-get install gnuplot-nox)" >&2
    exit 0
fi
mkdir -p "$out"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tyche-stan-plot-XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# Bars, top to bottom in the CSV's order: label, ratio, kind (0 main, 1 extra/plain, 2 warm-up
# included). gnuplot's y counts upwards, so the rows are reversed.
awk -F, '$1 == "gradient" && $8 != "" {
    m = $2; kind = sub(/_plain$/, "", m) ? 1 : 0
    label = m (m == "kidiq" ? " n=" $3 : "") (kind ? " (plain)" : "")
    print label "," $8 "," kind
}' "$csv" | tac > "$tmp/gradient.csv"
awk -F, '($1 == "nuts" || $1 == "nuts_total") && $8 != "" {
    print $2 ($1 == "nuts_total" ? " (with warm-up)" : "") "," $8 "," ($1 == "nuts_total" ? 2 : 0)
}' "$csv" | tac > "$tmp/nuts.csv"
# Edward2's workload: chains, ms per chain per leapfrog (tyche, stan); one pass in ms.
awk -F, '$1 == "edward2" {print $4 "," $5 "," $6}' "$csv" > "$tmp/covertype.csv"
one_pass=$(awk -F, '$1 == "one_pass" && $2 == "covertype" {print $5}' "$csv")
covertype_n=$(awk -F, '$1 == "edward2" {print $3; exit}' "$csv")

if [ -s "$tmp/gradient.csv" ] || [ -s "$tmp/nuts.csv" ]; then
    rows=$(cat "$tmp/gradient.csv" "$tmp/nuts.csv" | wc -l)
    height=$((200 + 22 * rows))
    gnuplot <<GP
set datafile separator ","
set terminal pngcairo size 1200,$height font ",10" noenhanced
set output "$out/stan_ratios.png"
set multiplot layout 1,2 title "tyche against Stan 2.21, same machine, same run, one thread each (> 1: tyche is faster)"
set logscale x
set grid xtics
set ytics scale 0
set key bottom right
set style fill solid 0.85 border -1
colour(k) = k == 0 ? 0x1b9e77 : (k == 1 ? 0xa6dba0 : 0x7570b3)
set title "gradient: Stan ns / tyche ns"
set xlabel "ratio (log scale)"
set xrange [0.1:1000]
set yrange [-0.7:*]
set arrow 1 from first 20, graph 0 to first 20, graph 1 nohead dt 2 lw 2 lc rgb "#d95f02"
set arrow 2 from first 1, graph 0 to first 1, graph 1 nohead lc rgb "black"
set label 1 "goal 20x" at first 20, graph 0 offset 0.5,0.8 tc rgb "#d95f02"
plot "$tmp/gradient.csv" using (sqrt(\$2)):0:(1):2:(\$0 - 0.4):(\$0 + 0.4):(colour(\$3)):yticlabels(1) \
         with boxxyerror lc rgb variable notitle, \
     "" using 2:0:(sprintf(" %.3g", \$2)) with labels left font ",8" notitle
unset arrow 1; unset arrow 2; unset label 1
set title "NUTS: tyche min bulk-ESS/s / Stan's"
set xrange [0.1:100]
set arrow 1 from first 10, graph 0 to first 10, graph 1 nohead dt 2 lw 2 lc rgb "#d95f02"
set arrow 2 from first 1, graph 0 to first 1, graph 1 nohead lc rgb "black"
set label 1 "goal 10x" at first 10, graph 0 offset 0.5,0.8 tc rgb "#d95f02"
plot "$tmp/nuts.csv" using (sqrt(\$2)):0:(1):2:(\$0 - 0.4):(\$0 + 0.4):(colour(\$3)):yticlabels(1) \
         with boxxyerror lc rgb variable notitle, \
     "" using 2:0:(sprintf(" %.3g", \$2)) with labels left font ",8" notitle
unset multiplot
GP
    echo "bench/stan/plot.sh: $out/stan_ratios.png" >&2
fi

if [ -s "$tmp/covertype.csv" ] && [ -n "$one_pass" ]; then
    gnuplot <<GP
set datafile separator ","
set terminal pngcairo size 800,480 font ",10" noenhanced
set output "$out/stan_covertype.png"
set title "Edward2's workload: logistic regression, $covertype_n x 54, NUTS (one thread)"
set logscale x 2
set xrange [0.7:45]
set xtics (1, 8, 32)
set yrange [0:*]
set offsets 0, 0, graph 0.1, 0
set xlabel "chains sharing each pass over X"
set ylabel "ms per leapfrog, per chain"
set grid ytics
set key top right
set arrow 1 from graph 0, first 10 to graph 1, first 10 nohead dt 2 lw 2 lc rgb "#d95f02"
set label 1 "goal: 10 ms, one chain" at graph 0.02, first 10 offset 0,-0.9 tc rgb "#d95f02"
set arrow 2 from graph 0, first $one_pass to graph 1, first $one_pass nohead dt 3 lw 2 lc rgb "gray40"
set label 2 sprintf("one read of X at the measured bandwidth: %.1f ms", $one_pass) at graph 0.02, first $one_pass offset 0,0.7 tc rgb "gray30"
plot "$tmp/covertype.csv" using 1:2 with linespoints pt 7 ps 1.5 lw 2 lc rgb "#1b9e77" title "tyche", \
     "" using 1:2:(sprintf("  %.1f", \$2)) with labels left notitle, \
     "" using 1:(\$3 > 0 ? \$3 : 1/0) with points pt 5 ps 1.5 lc rgb "#d95f02" title "Stan (bernoulli_logit_glm)", \
     "" using 1:(\$3 > 0 ? \$3 : 1/0):(sprintf("  %.1f", \$3)) with labels left notitle
GP
    echo "bench/stan/plot.sh: $out/stan_covertype.png" >&2
fi
