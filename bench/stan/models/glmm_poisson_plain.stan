// Poisson GLMM, log link, one random intercept per group, non-centred (this benchmark's own
// synthetic model; bench/stan/write_data.py writes its data, docs/benchmarks.md defines it).
// The plain vectorised formulation (an extra row; glmm_poisson.stan, with poisson_log_glm, is the
// main twin): one vectorised poisson_log over the linear predictor, the group effects gathered
// with a multi-index. Parameters in tyche's order: alpha, beta, sigma_u, z.
data {
  int<lower=1> N;
  int<lower=1> G;
  int<lower=1, upper=G> group[N];
  vector[N] x;
  int<lower=0> y[N];
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
  y ~ poisson_log(alpha + beta * x + sigma_u * z[group]);
}
