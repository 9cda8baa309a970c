# bench/smc_plot.gp — KL(p̂ ‖ p) against wall-clock time, log-log, one panel per model, after
# Paige & Wood (2014) Figure 5. gnuplot -e "trace='smc_trace.csv'; out='smc_kl_time.png'" smc_plot.gp
# trace: model,engine,algorithm,particles,seconds,kl (bench/smc.cpp --trace).
set datafile separator ","
set terminal pngcairo size 1500,600 font ",11"
set output out
set logscale xy
set format x "10^{%L}"
set format y "10^{%L}"
set xlabel "wall-clock seconds"
set ylabel "KL(estimate || exact)"
set grid
algorithms = "smc pimh pg"
colors = "#1b9e77 #d95f02 #7570b3"
engine(i) = i < 6 ? "in_process" : "fork"
algorithm(i) = word(algorithms, (i % 3) + 1)
particles(i) = (i / 3) % 2 == 0 ? 100 : 1000
selected(m, i) = strcol(1) eq m && strcol(2) eq engine(i) && strcol(3) eq algorithm(i) && column(4) == particles(i)
dash(i) = i < 6 ? 1 : 2
label(i) = sprintf("%s %s L=%d", i < 6 ? "in-process" : "fork", algorithm(i), particles(i))
set multiplot
set bmargin at screen 0.12
set tmargin at screen 0.92
do for [panel = 1:2] {
  model = panel == 1 ? "hmm" : "crp"
  if (panel == 1) { set lmargin at screen 0.06; set rmargin at screen 0.41; unset key } \
  else { set lmargin at screen 0.48; set rmargin at screen 0.83; set key at screen 0.99, 0.9 right top vertical font ",10" }
  set title (model eq "hmm" ? "HMM (K = 10, 50 observations): KL summed over time points" : "CRP mixture (Figure 3): KL of the number of classes")
  set arrow 1 from graph 0, first 0.01 to graph 1, first 0.01 nohead dt 3 lc rgb "gray40"
  plot for [i=0:11] trace using (selected(model, i) ? $5 : 1/0):6 with lines lw (particles(i) == 100 ? 1.5 : 3) dt dash(i) lc rgb word(colors, (i % 3) + 1) title label(i)
}
unset multiplot
