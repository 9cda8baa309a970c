// Two-component normal mixture, ordered means (posteriordb low_dim_gauss_mix-low_dim_gauss_mix;
// see ../shared/posteriors/low_dim_gauss_mix-low_dim_gauss_mix/model.md). The plain formulation
// (an extra row; low_dim_gauss_mix.stan, vectorised, is the main twin): Stan's log_mix of two
// normal_lpdf per observation, in a loop, as the Stan manual writes mixtures. Parameters in
// tyche's order: mu, sigma, theta.
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
  mu ~ normal(0, 2);
  sigma ~ normal(0, 2);
  theta ~ beta(5, 5);
  for (n in 1:N)
    target += log_mix(theta, normal_lpdf(y[n] | mu[1], sigma[1]),
                      normal_lpdf(y[n] | mu[2], sigma[2]));
}
