# bench/chains_pass.gp — ms per chain-gradient against the number of chains (log-log), tyche
# (chains in SIMD lanes) against the BLAS twin and its two products alone, one panel per shape.
# gnuplot -e "csv='chains_pass.csv'; out='chains_pass.png'" chains_pass.gp
# csv: shape,rows,cols,impl,chains,ms_per_evaluation,ms_per_chain_gradient,reads_of_x_per_chain
# (bench/chains_pass.cpp).
set datafile separator ","
set terminal pngcairo size 1400,560 font ",11"
set output out
set logscale xy 2
set logscale y 10
set xlabel "chains evaluated together (one thread)"
set ylabel "ms per chain-gradient"
set grid
impls = "tyche blas blas_products_only"
colors = "#1b9e77 #d95f02 #7570b3"
label(i) = i == 1 ? "tyche (chains in lanes, rows in tiles)" : (i == 2 ? "BLAS twin (GEMV/GEMM + per-element term)" : "BLAS products alone")
set multiplot layout 1,2
do for [panel = 1:2] {
  shape = panel == 1 ? "logistic_regression" : "covertype"
  set title (panel == 1 ? "logistic regression 10,000 × 100 (X in cache)" : "covertype shape 581,012 × 54 (X 251 MB)")
  plot for [i=1:3] sprintf("< awk -F, '$1 == \"%s\" && $4 == \"%s\"' %s", shape, word(impls, i), csv) \
       using 5:7 with linespoints lw 2 pt 7 lc rgb word(colors, i) title label(i)
}
unset multiplot
