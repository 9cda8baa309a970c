// One-compartment oral absorption as an ODE (docs/tutorial.md section 12, "ODEs"): gut amount
// g' = -ka g, central amount c' = ka g - (CL / V) c, (g, c)(0) = (dose, 0); concentrations c / V
// observed with lognormal error. Stan 2.21's integrate_ode_rk45 (odeint's Dormand-Prince 5(4)
// with forward sensitivities of the parameters {CL / V + kd, CL / V}: the two tyche's ode_rk45 carries);
// the tolerances and step limit from the data file, the same numbers tyche's twin reads.
// ka = CL / V + kd with kd > 0: absorption faster than elimination, which removes the flip-flop
// mode (ka and ke swapped, V scaled by ke / ka: the same curve) that trapped chains started from
// uniform(-2, 2) in both systems (min bulk ESS 6-7 with ka a parameter of its own).
// Parameters in tyche's order: CL, V, kd, sigma.
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
  real y[N, 2] = integrate_ode_rk45(one_cpt, {dose, 0.0}, 0.0, ts, {CL / V + kd, CL / V}, x_r, x_i, rel_tol, abs_tol,
                                    max_num_steps);
  CL ~ lognormal(log(5), 0.5);
  V ~ lognormal(log(30), 0.5);
  kd ~ lognormal(0, 0.5);
  sigma ~ lognormal(log(0.2), 0.5);
  conc ~ lognormal(log(to_vector(y[, 2]) / V), sigma);
}
