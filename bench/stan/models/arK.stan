// AR(K) (posteriordb arK-arK; see ../shared/posteriors/arK-arK/model.md). Written for speed: the
// (T - K) x K matrix of lags is built once in transformed data, and the likelihood is Stan's
// normal_id_glm, whose analytic gradient keeps the T - K means off the autodiff stack (about
// 4x faster than arK_plain.stan's normal(alpha + lags * beta, sigma) in Stan 2.21).
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
  y_next ~ normal_id_glm(lags, alpha, beta, sigma);
}
