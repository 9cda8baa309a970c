#!/usr/bin/env python3
"""bench/stan/write_data.py OUT_DIR — writes the data of every Stan-comparison case, one JSON
file per model and size in CmdStan's format (one object of named variables; integers written
without a decimal point). tyche (tyche::read_json_data) and Stan (bench/stan/json_var_context.hpp,
which turns the same file into a stan::io::array_var_context) read these very files.

  eight_schools_noncentered.json   ../shared/posteriors/eight_schools-eight_schools_noncentered
  arK.json                         ../shared/posteriors/arK-arK
  kidiq_<n>.json, n = 100, 200, 400, 434
                                   the first n rows of ../shared/posteriors/kidiq-kidscore_interaction
                                   (N, kid_score, mom_iq, mom_hs; the unused mom_*_new dropped)
  low_dim_gauss_mix.json           ../shared/posteriors/low_dim_gauss_mix-low_dim_gauss_mix
  glmm_poisson.json                synthetic, seed 20261121 (see glmm_poisson below)
  corr_gaussian_100.json           synthetic, seed 20261121 (see corr_gaussian below)
  pk_ode.json                      synthetic, seed 79 (see pk_ode below)
  pk_stiff.json                    synthetic, seed 80 (see pk_stiff below)
  steady_state.json                docs/tutorial.md's steady states (see steady_state below)
(logistic_regression.json, the 10,000 x 100 data of bench/synthetic.hpp, is written by
write_logistic_data.cpp.)

Files whose content would not change are not rewritten (their time stamps stay).
"""
import json
import math
import os
import random
import sys

KIDIQ_N = (100, 200, 400, 434)


def glmm_poisson():
    """N = 500 counts in G = 20 groups of 25 (group[i] = i mod G + 1, 1-based), x[i] ~ N(0, 1),
    y[i] ~ Poisson(exp(alpha + beta x[i] + sigma_u z[group[i]])) with alpha = 1, beta = 0.5,
    sigma_u = 0.7, z[g] ~ N(0, 1). Python's Mersenne Twister (random.Random(20261121).random(),
    whose output is stable across Python versions), normals by Box-Muller, Poisson draws by
    inversion of the CDF. x is rounded to 6 decimals so that the file is short and exact."""
    rng = random.Random(20261121)

    def normal():
        u1, u2 = 1.0 - rng.random(), rng.random()
        return math.sqrt(-2.0 * math.log(u1)) * math.cos(2.0 * math.pi * u2)

    def poisson(lam):
        u, k, p = rng.random(), 0, math.exp(-lam)
        cdf = p
        while u > cdf:
            k += 1
            p *= lam / k
            cdf += p
        return k

    n, g = 500, 20
    alpha, beta, sigma_u = 1.0, 0.5, 0.7
    z = [normal() for _ in range(g)]
    group = [i % g + 1 for i in range(n)]
    x = [round(normal(), 6) for _ in range(n)]
    y = [poisson(math.exp(alpha + beta * x[i] + sigma_u * z[group[i] - 1])) for i in range(n)]
    return {"N": n, "G": g, "group": group, "x": x, "y": y}


def corr_gaussian(k=100):
    """A correlated K = 100 dimensional Gaussian, x ~ N(mu, Sigma), as data: mu[i] ~ N(0, 1) and
    Sigma = Q diag(lambda) Q' with Q a random orthogonal matrix (Gram-Schmidt on the columns of a
    K x K matrix of N(0, 1) draws) and eigenvalues lambda log-spaced from 0.1 to 10 (condition
    number 100; the correlations are spread over all pairs, so a diagonal metric does not undo
    them). Python's Mersenne Twister (random.Random(20261121)), normals by Box-Muller. Sigma is
    exactly symmetric (the upper triangle mirrors the lower) and written with 17 digits, so both
    systems factor the same matrix."""
    rng = random.Random(20261121)

    def normal():
        u1, u2 = 1.0 - rng.random(), rng.random()
        return math.sqrt(-2.0 * math.log(u1)) * math.cos(2.0 * math.pi * u2)

    mu = [normal() for _ in range(k)]
    cols = [[normal() for _ in range(k)] for _ in range(k)]
    q = []  # orthonormal columns, modified Gram-Schmidt
    for c in cols:
        v = c[:]
        for u in q:
            d = sum(a * b for a, b in zip(u, v))
            v = [a - d * b for a, b in zip(v, u)]
        norm = math.sqrt(sum(a * a for a in v))
        q.append([a / norm for a in v])
    lam = [10.0 ** (-1.0 + 2.0 * j / (k - 1)) for j in range(k)]
    sigma = [[0.0] * k for _ in range(k)]
    for i in range(k):
        for j in range(i + 1):
            s = math.fsum(lam[m] * q[m][i] * q[m][j] for m in range(k))
            sigma[i][j] = sigma[j][i] = s
    return {"K": k, "mu": mu, "Sigma": sigma}


def pk_ode():
    """One-compartment oral absorption (bench/stan/models/pk_ode.stan): 12 concentrations of
    CL = 5, V = 30, ka = 1.2 after a dose of 100, lognormal error sigma = 0.15, seed 79; the ODE
    solved to 1e-10 (rel_tol = abs_tol) by both systems, so that their gradients agree to 1e-8."""
    rng = random.Random(79)
    ts = [0.25, 0.5, 1, 1.5, 2, 3, 4, 6, 8, 12, 16, 24]
    ke, ka = 5.0 / 30.0, 1.2
    conc = [round(100 * ka / (30 * (ka - ke)) * (math.exp(-ke * t) - math.exp(-ka * t))
                  * math.exp(0.15 * rng.gauss(0, 1)), 6) for t in ts]
    return {"N": len(ts), "ts": ts, "conc": conc, "dose": 100.0, "rel_tol": 1e-10, "abs_tol": 1e-10,
            "max_num_steps": 1000000}


def pk_stiff():
    """The stiff one-compartment model (bench/stan/models/pk_stiff.stan): 12 concentrations of
    CL = 5, V = 30, ka = CL / V + 200 after a dose of 100, lognormal error sigma = 0.15, seed 80;
    the ODE solved at Stan's ode_bdf defaults, rel_tol = abs_tol = 1e-6, by both systems' stiff
    solvers (what their users get; bench/stan/run.sh says how close the two are there)."""
    rng = random.Random(80)
    ts = [0.25, 0.5, 1, 1.5, 2, 3, 4, 6, 8, 12, 16, 24]
    ke = 5.0 / 30.0
    ka = ke + 200.0
    conc = [round(100 * ka / (30 * (ka - ke)) * (math.exp(-ke * t) - math.exp(-ka * t))
                  * math.exp(0.15 * rng.gauss(0, 1)), 6) for t in ts]
    return {"N": len(ts), "ts": ts, "conc": conc, "dose": 100.0, "rel_tol": 1e-6, "abs_tol": 1e-6,
            "max_num_steps": 1000000}


def steady_state():
    """Michaelis-Menten steady states (bench/stan/models/steady_state.stan, docs/tutorial.md
    section 12): four infusion rates, concentrations on two days (simulated from Vmax = 100,
    Km = 5, lognormal error sigma = 0.1, rounded); Powell's method in both at Stan's solve_powell
    defaults (rel_tol 1e-10, f_tol 1e-6, 200 steps)."""
    return {"N": 4, "rates": [10.0, 20.0, 40.0, 60.0], "day1": [0.52, 1.31, 3.02, 7.9],
            "day2": [0.60, 1.18, 3.51, 6.9], "rel_tol": 1e-10, "f_tol": 1e-6, "max_num_steps": 200}


def write(path, data):
    text = json.dumps(data, indent=1) + "\n"
    if os.path.exists(path):
        with open(path) as f:
            if f.read() == text:
                return
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.replace(path + ".tmp", path)


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: write_data.py OUT_DIR")
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    posteriors = os.path.join(root, "..", "shared", "posteriors")

    def load(name):
        with open(os.path.join(posteriors, name, "data.json")) as f:
            return json.load(f)

    write(os.path.join(out, "eight_schools_noncentered.json"),
          load("eight_schools-eight_schools_noncentered"))
    write(os.path.join(out, "arK.json"), load("arK-arK"))
    kidiq = load("kidiq-kidscore_interaction")
    for n in KIDIQ_N:
        if n > kidiq["N"]:
            sys.exit(f"write_data.py: kidiq has {kidiq['N']} rows, asked for {n}")
        write(os.path.join(out, f"kidiq_{n}.json"),
              {"N": n, **{k: kidiq[k][:n] for k in ("kid_score", "mom_iq", "mom_hs")}})
    write(os.path.join(out, "low_dim_gauss_mix.json"), load("low_dim_gauss_mix-low_dim_gauss_mix"))
    write(os.path.join(out, "glmm_poisson.json"), glmm_poisson())
    write(os.path.join(out, "corr_gaussian_100.json"), corr_gaussian())
    write(os.path.join(out, "pk_ode.json"), pk_ode())
    write(os.path.join(out, "pk_stiff.json"), pk_stiff())
    write(os.path.join(out, "steady_state.json"), steady_state())


if __name__ == "__main__":
    main()
