// Eight schools, non-centred (posteriordb eight_schools-eight_schools_noncentered; see
// ../shared/posteriors/eight_schools-eight_schools_noncentered/model.md). Written for speed:
// theta_trans ~ std_normal(); theta is not a transformed parameter (log_prob would validate and
// store it on every call); the likelihood is one vectorised statement.
// Parameters in tyche's order: theta_trans, mu, tau.
data {
  int<lower=0> J;
  vector[J] y;
  vector<lower=0>[J] sigma;
}
parameters {
  vector[J] theta_trans;
  real mu;
  real<lower=0> tau;
}
model {
  theta_trans ~ std_normal();
  mu ~ normal(0, 5);
  tau ~ cauchy(0, 5);
  y ~ normal(mu + tau * theta_trans, sigma);
}
