// AR(K), the plain vectorised formulation (an extra row; arK.stan, with normal_id_glm, is the
// main twin): the lag matrix built once in transformed data, the likelihood one vectorised
// normal over a matrix-vector product instead of posteriordb's double loop.
// Parameters in tyche's order: alpha, beta, sigma.
data {
  int<lower=0> K;
  int<lower=0> T;
  vector[T] y;
}
transformed data {
  matrix[T - K, K] lags;
  vector[T - K] y_next = y[(K + 1):T];
  for (t in (K + 1):T)
    for (k in 1:K)
      lags[t - K, k] = y[t - k];
}
parameters {
  real alpha;
  vector[K] beta;
  real<lower=0> sigma;
}
model {
  alpha ~ normal(0, 10);
  beta ~ normal(0, 10);
  sigma ~ cauchy(0, 2.5);
  y_next ~ normal(alpha + lags * beta, sigma);
}
