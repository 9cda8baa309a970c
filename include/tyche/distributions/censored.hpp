// tyche/distributions/censored.hpp — right_censored(d), left_censored(d): censored observations.
// right_censored(weibull(alpha, sigma)).observe(data(t)) says that each event happened after tᵢ
// (observation stopped at tᵢ with the event unseen), left_censored(d) that it happened at or
// before tᵢ; for observations only:
//   log p(t | right_censored(d)) = Σ log P(T > tᵢ),   log p(t | left_censored(d)) = Σ log P(T ≤ tᵢ),
// d's *_lccdf / *_lcdf (log_densities.hpp lists the families that have them: the closed-form
// ones, the gamma and beta families, Student's t, the Bernoulli, Poisson, binomial, beta-binomial
// and negative binomial counts). Unlike target(weibull_lccdf(...)), the values
// are observations: loo(m, fit) counts each as one (its pointwise log-likelihood is log P(T > tᵢ)),
// observation_names() names them, and d's data checks apply. A replicate drawn from the term
// (posterior_predictive, sample_observations) is a draw of T itself, uncensored.
#pragma once
#include <tyche/config.hpp>
#include <tyche/distributions/detail/family.hpp>

namespace tyche {

/// Distribution Dist observed through its CDF: Upper, log P(X > x); else log P(X ≤ x).
template <class Dist, bool Upper>
struct censored_distribution : distribution<censored_distribution<Dist, Upper>> {
  static constexpr const char* family = Dist::family;
  Dist base;
  template <class X>
  auto log_prob(const X& x) const {
    if constexpr (!has_cdf) return detail::total(lit<0> * x);  // after make_censored's static_assert: no more errors
    else if constexpr (Upper) return base.log_ccdf(x);
    else return base.log_cdf(x);
  }
  static constexpr bool has_cdf = requires(const Dist& d, const data_vector<>& y) {
    d.log_ccdf(y);
    d.log_cdf(y);
  };
  auto arguments() const { return base.arguments(); }
  /// The same censoring of Dist with other arguments (do_ substitutes into them).
  template <class... A>
  auto with_arguments(const A&... a) const {
    auto b = detail::with_arguments(base, a...);
    return censored_distribution<decltype(b), Upper>{{}, b};
  }
  template <class G, class... A>
  static double draw(G& rng, A... a) {
    return Dist::draw(rng, a...);
  }
  auto check_supports() const {
    if constexpr (requires { base.check_supports(); }) base.check_supports();
  }
  /// Dist's checks of the observed values that read its arguments (a binomial's y ≤ n), and its
  /// refusal of a value where P(X > x) = 0 for right censoring (a binomial count at n, uniform's
  /// upper bound) or P(X ≤ x) = 0 for left censoring (the lower bound of uniform and pareto).
  template <class Y>
  void check_observed(const Y& y) const {
    if constexpr (Upper && requires { base.check_right_censored(y); }) base.check_right_censored(y);
    else if constexpr (!Upper && requires { base.check_left_censored(y); }) base.check_left_censored(y);
    else if constexpr (requires { base.check_observed(y); }) base.check_observed(y);
  }
  /// Dist's checks of a value, and its refusal of a value where P(X ≤ x) = 0 (left censoring) or
  /// P(X > x) = 0 (right censoring).
  static const char* observation_problem(double v) {
    if constexpr (requires { Dist::observation_problem(v); })
      if (const char* p = Dist::observation_problem(v)) return p;
    if constexpr (!Upper && requires { Dist::lcdf_problem(v); }) return Dist::lcdf_problem(v);
    if constexpr (Upper && requires { Dist::lccdf_problem(v); }) return Dist::lccdf_problem(v);
    return nullptr;
  }
};

namespace detail {
template <bool Upper, class Dist>
auto make_censored(const Dist& d) {
  if constexpr (!censored_distribution<Dist, Upper>::has_cdf) {
    static_assert(censored_distribution<Dist, Upper>::has_cdf,
                  "tyche::right_censored(d) / left_censored(d): d's family has no log CDF (log_cdf / log_ccdf: "
                  "the families with a closed-form CDF, the gamma and beta families, Student's t and the "
                  "Bernoulli, Poisson, binomial, beta-binomial and negative binomial counts have them; "
                  "docs/reference/distributions.md)");
    return censored_distribution<Dist, Upper>{{}, d};
  } else {
    return censored_distribution<Dist, Upper>{{}, d};
  }
}
}  // namespace detail

/// d observed through its survival function: each observed value is a lower bound of the event
/// (right_censored(weibull(alpha, sigma)).observe(data(t_censored))).
template <class Dist>
  requires distribution_family<Dist>
auto right_censored(const Dist& d) {
  return detail::make_censored<true>(d);
}
/// d observed through its CDF: each observed value is an upper bound of the event.
template <class Dist>
  requires distribution_family<Dist>
auto left_censored(const Dist& d) {
  return detail::make_censored<false>(d);
}

}  // namespace tyche
