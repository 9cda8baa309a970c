// A correlated 100-dimensional Gaussian, x ~ N(mu, Sigma) with mu and Sigma data
// (bench/stan/write_data.py; docs/benchmarks.md). The formulation the Stan manual recommends
// (an extra row; corr_gaussian_100.stan is the main twin): the Cholesky factor computed once in
// transformed data, x ~ multi_normal_cholesky(mu, L). In Stan 2.21 this inverts L on every call
// (O(K^3)). Parameters: x.
data {
  int<lower=1> K;
  vector[K] mu;
  cov_matrix[K] Sigma;
}
transformed data {
  matrix[K, K] L = cholesky_decompose(Sigma);
}
parameters {
  vector[K] x;
}
model {
  x ~ multi_normal_cholesky(mu, L);
}
