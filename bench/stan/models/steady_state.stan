// Steady-state concentrations under constant infusion with Michaelis-Menten elimination
// (docs/tutorial.md section 12, "Algebraic equations"): at each infusion rate R, C solves
// R = Vmax C / (Km + C), Vmax = 60 + excess (above the largest rate, so that every rate has a
// steady state); C observed on two days with lognormal error. Stan 2.21's algebra_solver (Powell's
// dogleg, MINPACK's hybrj through Eigen; its stanc does not know algebra_solver_newton, whose C++
// StanHeaders 2.21 has) against tyche's solve_powell, both from the guess 1 for each rate, with
// the data file's rel_tol, f_tol and max_num_steps (Stan's solve_powell defaults). Parameters in
// tyche's order: excess, Km, sigma.
functions {
  vector mm_steady(vector c, vector theta, real[] x_r, int[] x_i) {
    return to_vector(x_r) - theta[1] * c ./ (theta[2] + c);
  }
}
data {
  int<lower=1> N;
  real rates[N];
  vector<lower=0>[N] day1;
  vector<lower=0>[N] day2;
  real<lower=0> rel_tol;
  real<lower=0> f_tol;
  int<lower=1> max_num_steps;
}
transformed data {
  int x_i[0];
  vector[N] guess = rep_vector(1.0, N);
}
parameters {
  real<lower=0> excess;
  real<lower=0> Km;
  real<lower=0> sigma;
}
model {
  vector[N] css = algebra_solver(mm_steady, guess, [60 + excess, Km]', rates, x_i, rel_tol, f_tol, max_num_steps);
  excess ~ lognormal(log(30), 1);
  Km ~ lognormal(log(4), 0.5);
  sigma ~ normal(0, 0.3);
  day1 ~ lognormal(log(css), sigma);
  day2 ~ lognormal(log(css), sigma);
}
