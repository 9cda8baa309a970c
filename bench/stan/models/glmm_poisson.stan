// Poisson GLMM, log link, one random intercept per group, non-centred (this benchmark's own
// synthetic model; bench/stan/write_data.py writes its data, docs/benchmarks.md defines it).
// Written for speed: the likelihood is Stan's poisson_log_glm with the covariate as an N x 1
// matrix (built once in transformed data) and the gathered group effects as a per-observation
// intercept; its analytic gradient is faster than glmm_poisson_plain.stan's poisson_log.
// `target +=`, not `~`: in Stan 2.21 `y ~ poisson_log_glm(...)` drops the whole likelihood from
// the log density (not only log y!) while keeping its gradient, and NUTS fails (stan-dev/math
// issue 1498, fixed in Stan 2.22); the `target +=` form is exact and also computes
// sum(lgamma(y + 1)) on every call. Parameters in tyche's order: alpha, beta, sigma_u, z.
data {
  int<lower=1> N;
  int<lower=1> G;
  int<lower=1, upper=G> group[N];
  vector[N] x;
  int<lower=0> y[N];
}
transformed data {
  matrix[N, 1] X = to_matrix(x);
}
parameters {
  real alpha;
  real beta;
  real<lower=0> sigma_u;
  vector[G] z;
}
model {
  alpha ~ normal(0, 5);
  beta ~ normal(0, 1);
  sigma_u ~ normal(0, 1);
  z ~ std_normal();
  target += poisson_log_glm_lpmf(y | X, alpha + sigma_u * z[group], [beta]');
}
