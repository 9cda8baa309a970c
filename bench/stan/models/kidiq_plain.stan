// kidscore_interaction, the plain vectorised formulation (an extra row; kidiq.stan, with
// normal_id_glm, is the main twin): the N x 4 design matrix built once in transformed data, the
// likelihood one vectorised normal of a matrix-vector product. beta is flat. Parameters: beta,
// sigma.
data {
  int<lower=0> N;
  vector[N] kid_score;
  vector[N] mom_iq;
  vector[N] mom_hs;
}
transformed data {
  matrix[N, 4] X = append_col(append_col(append_col(rep_vector(1, N), mom_hs), mom_iq),
                              mom_hs .* mom_iq);
}
parameters {
  vector[4] beta;
  real<lower=0> sigma;
}
model {
  sigma ~ cauchy(0, 2.5);
  kid_score ~ normal(X * beta, sigma);
}
