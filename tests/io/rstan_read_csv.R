# tests/io/rstan_read_csv.R — the CmdStan CSV round trip through R (ctest io_rstan_read_csv).
#
#   Rscript --vanilla tests/io/rstan_read_csv.R <test_io executable> <work folder>
#
# Runs the hidden Catch2 test "[.rstan]" of test_io, which fits eight schools (4 chains x 1000
# draws) and writes eight_schools_<chain>.csv with tyche::write_stan_csv_files, plus tyche's own
# summary of the same fit. Then reads the files with rstan::read_stan_csv (any warning counts as a
# failure) and checks that rstan sees what tyche computed:
#   - 4 chains of 1000 draws; the parameter names tyche uses (theta_raw[1], ...: rstan turns
#     CmdStan's theta_raw.1 back into brackets);
#   - every parameter's mean and sd (rstan's summary) equal to tyche's summary: |difference| at most
#     1e-12 sd (only the order of the floating-point sums differs: the files hold every double
#     exactly);
#   - per chain, the sums of n_leapfrog__ and divergent__ and the adapted step size;
#   - if the posterior package is installed, R-hat, bulk-ESS and tail-ESS of the draws rstan read
#     equal tyche's to 1e-8 relative (tyche matches posterior to 1e-14 on the same draws, so this
#     checks that chains and draws kept their order).
# Exit status: 0 all checks pass, 1 a check fails, 77 rstan is not installed (ctest reports the
# test as skipped; tools/setup.sh does not install rstan, Debian package r-cran-rstan).
args <- commandArgs(trailingOnly = TRUE)
if (length(args) != 2) {
  cat("usage: Rscript --vanilla rstan_read_csv.R <test_io executable> <work folder>\n")
  quit(status = 2)
}
if (!requireNamespace("rstan", quietly = TRUE)) {
  cat("rstan is not installed (Debian: apt-get install r-cran-rstan): test skipped\n")
  quit(status = 77)
}
exe <- args[1]
work <- args[2]
dir.create(work, recursive = TRUE, showWarnings = FALSE)
unlink(list.files(work, pattern = "\\.csv$", full.names = TRUE))

failures <- 0
check <- function(ok, what) {
  if (isTRUE(ok)) {
    cat("ok    ", what, "\n")
  } else {
    cat("FAIL  ", what, "\n")
    failures <<- failures + 1
  }
}

status <- system2(exe, shQuote("[.rstan]"), env = paste0("TYCHE_STAN_CSV_DIR=", shQuote(work)))
if (status != 0) {
  cat("FAIL   ", exe, " \"[.rstan]\" exited with status ", status, "\n", sep = "")
  quit(status = 1)
}
files <- file.path(work, sprintf("eight_schools_%d.csv", 1:4))
ref <- read.csv(file.path(work, "tyche_summary.csv"), stringsAsFactors = FALSE)
ref_chains <- read.csv(file.path(work, "tyche_chains.csv"))

warnings_seen <- character(0)
fit <- withCallingHandlers(
  suppressMessages(rstan::read_stan_csv(files)),
  warning = function(w) {
    warnings_seen <<- c(warnings_seen, conditionMessage(w))
    invokeRestart("muffleWarning")
  })
check(length(warnings_seen) == 0,
      paste("rstan::read_stan_csv reads the files without warnings", paste(warnings_seen, collapse = "; ")))

draws <- as.array(fit)  # iterations x chains x (parameters, lp__), in file order
check(identical(dim(draws), c(1000L, 4L, nrow(ref) + 1L)),
      sprintf("4 chains of 1000 draws of %d parameters and lp__ (rstan: %s)", nrow(ref),
              paste(dim(draws), collapse = " x ")))
pars <- setdiff(dimnames(draws)[[3]], "lp__")
check(identical(pars, ref$name),
      sprintf("parameter names as tyche's (rstan: %s)", paste(pars, collapse = ", ")))

s <- rstan::summary(fit)$summary[ref$name, , drop = FALSE]
for (i in seq_len(nrow(ref))) {
  dm <- abs(s[i, "mean"] - ref$mean[i]) / ref$sd[i]
  ds <- abs(s[i, "sd"] / ref$sd[i] - 1)
  check(dm <= 1e-12 && ds <= 1e-12,
        sprintf("%-13s mean %.10g (tyche %.10g), sd %.10g (tyche %.10g)", ref$name[i], s[i, "mean"],
                ref$mean[i], s[i, "sd"], ref$sd[i]))
}

sp <- rstan::get_sampler_params(fit, inc_warmup = FALSE)
info <- rstan::get_adaptation_info(fit)
for (c in 1:4) {
  leapfrogs <- sum(sp[[c]][, "n_leapfrog__"])
  divergent <- sum(sp[[c]][, "divergent__"])
  step <- as.numeric(sub(".*Step size = ([^\n]+).*", "\\1", info[[c]]))
  check(leapfrogs == ref_chains$n_leapfrog[c] && divergent == ref_chains$divergent[c] &&
          identical(step, ref_chains$step_size[c]),
        sprintf("chain %d: %d leapfrogs, %d divergent, step size %.17g (tyche: %d, %d, %.17g)", c,
                as.integer(leapfrogs), as.integer(divergent), step, ref_chains$n_leapfrog[c],
                ref_chains$divergent[c], ref_chains$step_size[c]))
}
times <- rstan::get_elapsed_time(fit)
check(identical(dim(times), c(4L, 2L)) && all(is.finite(times)), "elapsed times read (4 chains x warm-up, sampling)")

if (requireNamespace("posterior", quietly = TRUE)) {
  d <- posterior::subset_draws(posterior::as_draws_array(draws), variable = ref$name)
  ps <- posterior::summarise_draws(d, "rhat", "ess_bulk", "ess_tail")
  for (i in seq_len(nrow(ref))) {
    rel <- max(abs(ps$rhat[i] / ref$rhat[i] - 1), abs(ps$ess_bulk[i] / ref$ess_bulk[i] - 1),
               abs(ps$ess_tail[i] / ref$ess_tail[i] - 1))
    check(ps$variable[i] == ref$name[i] && rel <= 1e-8,
          sprintf("%-13s posterior: rhat %.6f, ess_bulk %.1f, ess_tail %.1f (largest relative difference from tyche %.1e)",
                  ref$name[i], ps$rhat[i], ps$ess_bulk[i], ps$ess_tail[i], rel))
  }
} else {
  cat("note   the posterior package is not installed: R-hat and ESS not compared\n")
}

if (failures > 0) {
  cat(failures, "check(s) failed\n")
  quit(status = 1)
}
cat("all checks passed\n")
