// A correlated 100-dimensional Gaussian, x ~ N(mu, Sigma) with mu and Sigma data
// (bench/stan/write_data.py; docs/benchmarks.md). Written for speed: the Cholesky factor L of
// Sigma is computed once, in transformed data, and the log density is
// -||L^-1 (x - mu)||^2 / 2 (the normalising terms are constants), one triangular solve with a
// data matrix (Stan's mdivide_left_tri for double L and var x: O(K^2) forward and in reverse).
// corr_gaussian_100_plain.stan's `x ~ multi_normal_cholesky(mu, L)` computes the same density,
// but Stan 2.21's multi_normal_cholesky_lpdf inverts L on every call (mdivide_left_tri of
// value_of(L): O(K^3)), several times slower here (compare the two gradient rows); with the
// precision matrix in transformed data, -quad_form_sym(P, x - mu) / 2 is as fast as this form.
// Parameters: x.
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
  target += -0.5 * dot_self(mdivide_left_tri_low(L, x - mu));
}
