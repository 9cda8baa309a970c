// tyche/distributions.hpp — every distribution family.
#pragma once
#include <tyche/distributions/cauchy.hpp>
#include <tyche/distributions/normal.hpp>
#include <tyche/distributions/half_normal.hpp>
#include <tyche/distributions/exponential.hpp>
#include <tyche/distributions/lognormal.hpp>
#include <tyche/distributions/gamma.hpp>
#include <tyche/distributions/inv_gamma.hpp>
#include <tyche/distributions/poisson.hpp>
#include <tyche/distributions/poisson_log.hpp>
#include <tyche/distributions/bernoulli.hpp>
#include <tyche/distributions/bernoulli_logit.hpp>
#include <tyche/distributions/binomial.hpp>
#include <tyche/distributions/binomial_logit.hpp>
#include <tyche/distributions/neg_binomial_2.hpp>
#include <tyche/distributions/neg_binomial_2_log.hpp>
#include <tyche/distributions/beta_binomial.hpp>
