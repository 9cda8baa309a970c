// Two-component normal mixture, ordered means (posteriordb low_dim_gauss_mix-low_dim_gauss_mix;
// see ../shared/posteriors/low_dim_gauss_mix-low_dim_gauss_mix/model.md). Written for speed,
// vectorised: with z_k = ((y - mu[k]) / sigma[k])^2 for all N at once,
//   log(theta N(y | mu1, s1) + (1 - theta) N(y | mu2, s2))
//     = log theta - log s1 - z1 / 2 + log1p_exp((z1 - z2) / 2 + c) - log(2 pi) / 2,
//   c = log1m(theta) - log(theta) + log s1 - log s2,
// which is log-sum-exp's stable form. In Stan 2.21 this is faster than
// low_dim_gauss_mix_plain.stan's loop of log_mix(theta, normal_lpdf(...), normal_lpdf(...))
// (compare the two gradient rows) and than the same vectorised form with the -1/2 inside z_k.
// Parameters in tyche's order: mu, sigma, theta.
data {
  int<lower=0> N;
  vector[N] y;
}
parameters {
  ordered[2] mu;
  vector<lower=0>[2] sigma;
  real<lower=0, upper=1> theta;
}
model {
  vector[N] z1 = square((y - mu[1]) / sigma[1]);
  vector[N] z2 = square((y - mu[2]) / sigma[2]);
  real c = log1m(theta) - log(theta) + log(sigma[1]) - log(sigma[2]);
  mu ~ normal(0, 2);
  sigma ~ normal(0, 2);
  theta ~ beta(5, 5);
  target += N * (log(theta) - log(sigma[1])) - 0.5 * sum(z1)
            + sum(log1p_exp(0.5 * (z1 - z2) + c));
}
