// A stiff one-compartment oral absorption (docs/tutorial.md section 12, "ODEs", ode_stiff): the
// model of pk_ode.stan with a drug absorbed within minutes, ka = CL / V + 200 kd with kd about 1
// (ka about 200 per hour) against an elimination rate CL / V about 0.17 per hour, observed over 24
// hours: rates three orders apart, so an explicit method's step is bound by stability (2.8 / ka)
// long after the absorption is over. kd is on the scale of its typical value so that the default
// initialisation (uniform(-2, 2) on the log scale) starts near the posterior: written with kd
// itself about 200, Stan's chains stayed trapped (docs/benchmarks.md). Stan 2.21's
// integrate_ode_bdf (CVODES' variable-order BDF with forward sensitivities of {CL / V + 200 kd,
// CL / V}), tyche's twin ode_stiff (Rosenbrock-W); the tolerances and step limit from the data
// file. Parameters in tyche's order: CL, V, kd, sigma.
functions {
  real[] one_cpt(real t, real[] y, real[] theta, real[] x_r, int[] x_i) {
    real dydt[2];
    dydt[1] = -theta[1] * y[1];
    dydt[2] = theta[1] * y[1] - theta[2] * y[2];
    return dydt;
  }
}
data {
  int<lower=1> N;
  real ts[N];
  vector<lower=0>[N] conc;
  real<lower=0> dose;
  real<lower=0> rel_tol;
  real<lower=0> abs_tol;
  int<lower=1> max_num_steps;
}
transformed data {
  real x_r[0];
  int x_i[0];
}
parameters {
  real<lower=0> CL;
  real<lower=0> V;
  real<lower=0> kd;
  real<lower=0> sigma;
}
model {
  real y[N, 2] = integrate_ode_bdf(one_cpt, {dose, 0.0}, 0.0, ts, {CL / V + 200 * kd, CL / V}, x_r, x_i, rel_tol, abs_tol,
                                    max_num_steps);
  CL ~ lognormal(log(5), 0.5);
  V ~ lognormal(log(30), 0.5);
  kd ~ lognormal(0, 0.5);
  sigma ~ lognormal(log(0.2), 0.5);
  conc ~ lognormal(log(to_vector(y[, 2]) / V), sigma);
}
