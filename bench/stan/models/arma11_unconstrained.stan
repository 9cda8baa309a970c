// ARMA(1,1) with an unconstrained moving-average coefficient (bench/arma_trap.cpp's model), for
// bench/stan/arma_trap.R.
data { int<lower=1> T; vector[T] y; }
parameters { real mu; real phi; real theta; real<lower=0> sigma; }
model {
  vector[T] err;
  err[1] = y[1] - (mu + phi * mu);
  for (t in 2:T) err[t] = y[t] - (mu + phi * y[t-1] + theta * err[t-1]);
  mu ~ normal(0, 10); phi ~ normal(0, 2); theta ~ normal(0, 2); sigma ~ cauchy(0, 5);
  err ~ normal(0, sigma);
}
