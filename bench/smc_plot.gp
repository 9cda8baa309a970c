# bench/smc_plot.gp — KL(p̂ ‖ p) against wall-clock time, log-log, one panel per model, after
# Paige & Wood (2014) Figure 5. gnuplot -e "trace='smc_trace.csv'; out='smc_kl_time.png'" smc_plot.gp
# trace: model,engine,algorithm,particles,seconds,kl (bench/smc.cpp --trace).
set datafile separator ","
set terminal pngcairo size 1400,560 font ",11"
set output out
set logscale xy
set format y "10^{%L}"
set xlabel "wall-clock seconds"
set ylabel "KL(estimate || exact)"
set grid
set key outside right top vertical spacing 1.1 font ",9"
set multiplot layout 1,2
algorithms = "smc pimh pg"
colors = "#1b9e77 #d95f02 #7570b3"
do for [model in "hmm crp"] {
  set title (model eq "hmm" ? "HMM (K = 10, 50 observations): KL summed over time points" : "CRP mixture (Figure 3): KL of the number of classes")
  set arrow 1 from graph 0, first 0.01 to graph 1, first 0.01 nohead dt 3 lc rgb "gray40"
  plot for [i=0:11] trace using ( \
      strcol(1) eq model && strcol(2) eq (i < 6 ? "in_process" : "fork") && \
      strcol(3) eq word(algorithms, (i % 3) + 1) && column(4) == ((i / 3) % 2 == 0 ? 100 : 1000) \
      ? $5 : 1/0):6 \
    with lines lw ((i / 3) % 2 == 0 ? 1.5 : 3) dt (i < 6 ? 1 : 2) \
    lc rgb word(colors, (i % 3) + 1) \
    title sprintf("%s %s L=%d", (i < 6 ? "in-process" : "fork"), word(algorithms, (i % 3) + 1), ((i / 3) % 2 == 0 ? 100 : 1000))
}
unset multiplot
