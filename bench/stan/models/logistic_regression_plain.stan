// Bayesian logistic regression, the plain vectorised formulation (an extra row;
// logistic_regression.stan, with bernoulli_logit_glm, is the main twin).
// Parameters in tyche's order: alpha, beta.
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
  y ~ bernoulli_logit(alpha + X * beta);
}
