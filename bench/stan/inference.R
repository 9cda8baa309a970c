# bench/stan/inference.R — Stan 2.21's optimizing (L-BFGS) and vb (ADVI mean-field), rstan's
# defaults, on the posteriordb posteriors of bench/stan/models, 10 seeds each, against the
# reference posteriors: the Stan side of bench/inference.cpp's optimize and advi rows (bash
# bench/run.sh inference runs tyche's; docs/inference.md has both). CSV on stdout:
#
#   posterior,method,seeds,seconds,max_z,median_sd_ratio,reached,failures
#
# seconds: mean wall time of one call (the model compiled once, before); max_z and
# median_sd_ratio as bench/inference.cpp (the draws' mean and sd against the reference's,
# over the names both report), averaged over the seeds that did not fail; reached (optimize):
# the fraction of seeds whose mode's log density is within 0.01 of the best seed's, as
# bench/inference.cpp's optimize row; failures: seeds whose call stopped with an error. Usage: Rscript bench/stan/inference.R <repository root>
suppressMessages({
  library(rstan)
  library(jsonlite)
})
# Debian's r-cran-bh holds no headers (it points at the system's Boost, libboost-dev).
if (!file.exists(file.path(system.file(package = "BH"), "include", "boost"))) rstan_options(boost_lib = "/usr/include")
args <- commandArgs(trailingOnly = TRUE)
root <- if (length(args) > 0) args[1] else "."
posteriors <- file.path(root, "..", "shared", "posteriors")
models <- list(
  c("eight_schools-eight_schools_noncentered", "eight_schools_noncentered.stan"),
  c("kidiq-kidscore_interaction", "kidiq.stan"),
  c("arK-arK", "arK.stan"),
  c("low_dim_gauss_mix-low_dim_gauss_mix", "low_dim_gauss_mix.stan")
)
seeds <- 1:10
cat("posterior,method,seeds,seconds,max_z,median_sd_ratio,reached,failures\n")
for (m in models) {
  folder <- m[1]
  data <- fromJSON(file.path(posteriors, folder, "data.json"))
  ref <- read.csv(file.path(posteriors, folder, "reference_summary.csv"))
  model <- stan_model(file.path(root, "bench", "stan", "models", m[2]), auto_write = FALSE)
  compare <- function(draws) {  # draws: a matrix, columns named as rstan names them
    names <- intersect(colnames(draws), ref$name)
    z <- sapply(names, function(n) abs(mean(draws[, n]) - ref$mean[ref$name == n]) / ref$sd[ref$name == n])
    r <- sapply(names, function(n) sd(draws[, n]) / ref$sd[ref$name == n])
    c(max(z), median(r))
  }
  for (method in c("optimize", "advi")) {
    secs <- c(); acc <- c(); fails <- 0; values <- c()
    for (s in seeds) {
      t0 <- Sys.time()
      res <- tryCatch({
        if (method == "optimize") {
          o <- optimizing(model, data = data, seed = s, as_vector = TRUE)
          if (o$return_code != 0) stop("return code ", o$return_code)
          list(draws = NULL, value = o$value)
        } else {
          v <- suppressWarnings(vb(model, data = data, seed = s, refresh = 0))
          list(draws = as.matrix(v))
        }
      }, error = function(e) NULL)
      elapsed <- as.numeric(difftime(Sys.time(), t0, units = "secs"))
      if (is.null(res)) { fails <- fails + 1; next }
      secs <- c(secs, elapsed)
      if (!is.null(res$draws)) acc <- rbind(acc, compare(res$draws))
      if (!is.null(res$value)) values <- c(values, res$value)
    }
    mz <- if (is.null(acc)) NaN else mean(acc[, 1])
    sr <- if (is.null(acc)) NaN else mean(acc[, 2])
    reached <- if (is.null(values)) NaN else mean(values >= max(values) - 0.01)
    cat(sprintf("%s,%s,%d,%.4f,%.3f,%.3f,%.2f,%d\n", folder, method, length(seeds), mean(secs), mz, sr, reached, fails))
  }
}
