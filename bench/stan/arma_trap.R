# bench/stan/arma_trap.R — Stan 2.21 (rstan, its defaults) on bench/arma_trap.cpp's model and data:
# chains whose mean |theta| > 1, seeds 1 ... 60. Usage: ./build/bench-release/bench/arma_trap --json > build/arma.json;
# Rscript bench/stan/arma_trap.R <repository root>
args <- commandArgs(trailingOnly = TRUE)
root <- if (length(args) > 0) args[1] else "."
suppressMessages({library(rstan); library(jsonlite)})
rstan_options(boost_lib = "/usr/include")
d <- fromJSON(file.path(root, "build", "arma.json"))
m <- stan_model(file.path(root, "bench", "stan", "models", "arma11_unconstrained.stan"), auto_write = FALSE)
trapped <- 0; total <- 0
for (s in 1:60) {
  f <- suppressWarnings(sampling(m, data = d, chains = 4, cores = 1, seed = s, refresh = 0))
  th <- extract(f, "theta", permuted = FALSE)[, , 1]
  for (c in 1:4) { total <- total + 1; if (mean(abs(th[, c])) > 1) { trapped <- trapped + 1; cat("seed", s, "chain", c, mean(abs(th[, c])), "\n") } }
}
cat("stan trapped", trapped, "of", total, "\n")
