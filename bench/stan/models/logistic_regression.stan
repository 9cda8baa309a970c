// Bayesian logistic regression, N(0, 1) priors, on the benchmarks' synthetic 10,000 x 100 data
// (bench/synthetic.hpp, written as JSON by bench/stan/write_logistic_data.cpp). Written for speed:
// Stan's bernoulli_logit_glm. Parameters in tyche's order: alpha, beta.
data {
  int<lower=0> N;
  int<lower=0> K;
  matrix[N, K] X;
  int<lower=0, upper=1> y[N];
}
parameters {
  real alpha;
  vector[K] beta;
}
model {
  alpha ~ std_normal();
  beta ~ std_normal();
  y ~ bernoulli_logit_glm(X, alpha, beta);
}
