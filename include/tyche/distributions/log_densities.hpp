// tyche/distributions/log_densities.hpp — the log density of every family as a function of
// expressions, under Stan's names: normal_lpdf(y, mu, sigma) = log normal(y | mu, sigma), summed
// over y when y is a vector; poisson_lpmf(k, lambda) for the discrete families. For free terms
// of a model's log density (target(e), model/joint.hpp), mixtures written by hand
// (log_sum_exp of lpdfs), and user functions.
//
// Each checks what observe() checks, when it is called: the arguments against their domains (at
// compile time where the types decide, else against the data) and data values of y against the
// family's support.
#pragma once
#include <tyche/config.hpp>
#include <tyche/distributions/bernoulli.hpp>
#include <tyche/distributions/bernoulli_logit.hpp>
#include <tyche/distributions/beta.hpp>
#include <tyche/distributions/beta_binomial.hpp>
#include <tyche/distributions/beta_neg_binomial.hpp>
#include <tyche/distributions/beta_proportion.hpp>
#include <tyche/distributions/binomial.hpp>
#include <tyche/distributions/binomial_logit.hpp>
#include <tyche/distributions/car.hpp>
#include <tyche/distributions/categorical.hpp>
#include <tyche/distributions/categorical_logit_glm.hpp>
#include <tyche/distributions/cauchy.hpp>
#include <tyche/distributions/censored.hpp>
#include <tyche/distributions/chi_square.hpp>
#include <tyche/distributions/dirichlet.hpp>
#include <tyche/distributions/discrete_range.hpp>
#include <tyche/distributions/double_exponential.hpp>
#include <tyche/distributions/exp_mod_normal.hpp>
#include <tyche/distributions/exponential.hpp>
#include <tyche/distributions/frechet.hpp>
#include <tyche/distributions/gamma.hpp>
#include <tyche/distributions/gaussian_dlm_obs.hpp>
#include <tyche/distributions/glm.hpp>
#include <tyche/distributions/gumbel.hpp>
#include <tyche/distributions/half_normal.hpp>
#include <tyche/distributions/half_student_t.hpp>
#include <tyche/distributions/hypergeometric.hpp>
#include <tyche/distributions/inflated.hpp>
#include <tyche/distributions/inv_chi_square.hpp>
#include <tyche/distributions/inv_gamma.hpp>
#include <tyche/distributions/logistic.hpp>
#include <tyche/distributions/loglogistic.hpp>
#include <tyche/distributions/lognormal.hpp>
#include <tyche/distributions/multi_normal_prec.hpp>
#include <tyche/distributions/multi_gp.hpp>
#include <tyche/distributions/multi_student_t.hpp>
#include <tyche/distributions/multinomial.hpp>
#include <tyche/distributions/neg_binomial.hpp>
#include <tyche/distributions/neg_binomial_2.hpp>
#include <tyche/distributions/neg_binomial_2_log.hpp>
#include <tyche/distributions/normal.hpp>
#include <tyche/distributions/ordered_logistic.hpp>
#include <tyche/distributions/pareto.hpp>
#include <tyche/distributions/pareto_type_2.hpp>
#include <tyche/distributions/poisson.hpp>
#include <tyche/distributions/poisson_binomial.hpp>
#include <tyche/distributions/poisson_log.hpp>
#include <tyche/distributions/rayleigh.hpp>
#include <tyche/distributions/scaled_inv_chi_square.hpp>
#include <tyche/distributions/skew_double_exponential.hpp>
#include <tyche/distributions/skew_normal.hpp>
#include <tyche/distributions/student_t.hpp>
#include <tyche/distributions/uniform.hpp>
#include <tyche/distributions/von_mises.hpp>
#include <tyche/distributions/weibull.hpp>
#include <tyche/distributions/wiener.hpp>
#include <tyche/distributions/wishart.hpp>
#include <tyche/distributions/wishart_cholesky.hpp>

#include <type_traits>

namespace tyche {

namespace detail {
/// log p(y | d), with d's argument checks and, for data y, the check of its values.
template <class Dist, class Y>
auto log_density_at(const Dist& d, const Y& y) {
  if constexpr (requires { d.check_supports(); }) d.check_supports();
  return d.observe(y).log_density();
}
}  // namespace detail

/// log bernoulli(y | p), summed over y.
template <detail::operand Y, detail::operand P>
auto bernoulli_lpmf(const Y& y, const P& p) {
  return detail::log_density_at(bernoulli(p), y);
}
/// log bernoulli_logit(y | alpha), summed over y.
template <detail::operand Y, detail::operand Alpha>
auto bernoulli_logit_lpmf(const Y& y, const Alpha& alpha) {
  return detail::log_density_at(bernoulli_logit(alpha), y);
}
/// log beta(y | a, b), summed over y.
template <detail::operand Y, detail::operand A, detail::operand B>
auto beta_lpdf(const Y& y, const A& a, const B& b) {
  return detail::log_density_at(beta(a, b), y);
}
/// log beta_binomial(y | n, a, b), summed over y.
template <detail::operand Y, detail::operand N, detail::operand A, detail::operand B>
auto beta_binomial_lpmf(const Y& y, const N& n, const A& a, const B& b) {
  return detail::log_density_at(beta_binomial(n, a, b), y);
}
/// log beta_proportion(y | mu, kappa), summed over y.
template <detail::operand Y, detail::operand Mu, detail::operand Kappa>
auto beta_proportion_lpdf(const Y& y, const Mu& mu, const Kappa& kappa) {
  return detail::log_density_at(beta_proportion(mu, kappa), y);
}
/// log binomial(y | n, p), summed over y.
template <detail::operand Y, detail::operand N, detail::operand P>
auto binomial_lpmf(const Y& y, const N& n, const P& p) {
  return detail::log_density_at(binomial(n, p), y);
}
/// log binomial_logit(y | n, alpha), summed over y.
template <detail::operand Y, detail::operand N, detail::operand Alpha>
auto binomial_logit_lpmf(const Y& y, const N& n, const Alpha& alpha) {
  return detail::log_density_at(binomial_logit(n, alpha), y);
}
/// log categorical(y | theta), summed over y.
template <detail::operand Y, detail::operand Theta>
auto categorical_lpmf(const Y& y, const Theta& theta) {
  return detail::log_density_at(categorical(theta), y);
}
/// log categorical_logit(y | beta), summed over y.
template <detail::operand Y, detail::operand Beta>
auto categorical_logit_lpmf(const Y& y, const Beta& beta) {
  return detail::log_density_at(categorical_logit(beta), y);
}
/// log categorical_logit_glm(y | X, alpha, beta), summed over the rows of X (Stan's
/// categorical_logit_glm_lpmf; beta category by category, distributions/categorical_logit_glm.hpp).
template <detail::operand Y, detail::operand Alpha, detail::operand Beta>
auto categorical_logit_glm_lpmf(const Y& y, const data_matrix& x, const Alpha& alpha, const Beta& beta) {
  return detail::log_density_at(categorical_logit_glm(x, alpha, beta), y);
}
/// log car(phi | alpha, tau, graph) of one vector phi of K values (## car).
template <detail::operand Phi, detail::operand Alpha, detail::operand Tau>
auto car_lpdf(const Phi& phi, const Alpha& alpha, const Tau& tau, const areal_graph& graph) {
  return detail::log_density_at(car(alpha, tau, graph), phi);
}
/// log icar(phi | graph) of one vector phi of K values: unit precision, soft sum-to-zero (## car).
template <detail::operand Phi>
auto icar_lpdf(const Phi& phi, const areal_graph& graph) {
  return detail::log_density_at(icar(graph), phi);
}
/// log cauchy(y | mu, sigma), summed over y.
template <detail::operand Y, detail::operand Mu, detail::operand Sigma>
auto cauchy_lpdf(const Y& y, const Mu& mu, const Sigma& sigma) {
  return detail::log_density_at(cauchy(mu, sigma), y);
}
/// log half_cauchy(y | sigma), summed over y.
template <detail::operand Y, detail::operand Sigma>
auto half_cauchy_lpdf(const Y& y, const Sigma& sigma) {
  return detail::log_density_at(half_cauchy(sigma), y);
}
/// log chi_square(y | nu), summed over y.
template <detail::operand Y, detail::operand Nu>
auto chi_square_lpdf(const Y& y, const Nu& nu) {
  return detail::log_density_at(chi_square(nu), y);
}
/// log dirichlet(y | alpha), summed over y.
template <detail::operand Y, detail::operand Alpha>
auto dirichlet_lpdf(const Y& y, const Alpha& alpha) {
  return detail::log_density_at(dirichlet(alpha), y);
}
/// log double_exponential(y | mu, sigma), summed over y.
template <detail::operand Y, detail::operand Mu, detail::operand Sigma>
auto double_exponential_lpdf(const Y& y, const Mu& mu, const Sigma& sigma) {
  return detail::log_density_at(double_exponential(mu, sigma), y);
}
/// log exp_mod_normal(y | mu, sigma, lambda), summed over y.
template <detail::operand Y, detail::operand Mu, detail::operand Sigma, detail::operand Lambda>
auto exp_mod_normal_lpdf(const Y& y, const Mu& mu, const Sigma& sigma, const Lambda& lambda) {
  return detail::log_density_at(exp_mod_normal(mu, sigma, lambda), y);
}
/// log exponential(y | lambda), summed over y.
template <detail::operand Y, detail::operand Lambda>
auto exponential_lpdf(const Y& y, const Lambda& lambda) {
  return detail::log_density_at(exponential(lambda), y);
}
/// log frechet(y | alpha, sigma), summed over y.
template <detail::operand Y, detail::operand Alpha, detail::operand Sigma>
auto frechet_lpdf(const Y& y, const Alpha& alpha, const Sigma& sigma) {
  return detail::log_density_at(frechet(alpha, sigma), y);
}
/// log gamma(y | alpha, beta), summed over y.
template <detail::operand Y, detail::operand Alpha, detail::operand Beta>
auto gamma_lpdf(const Y& y, const Alpha& alpha, const Beta& beta) {
  return detail::log_density_at(gamma(alpha, beta), y);
}
/// log gumbel(y | mu, beta), summed over y.
template <detail::operand Y, detail::operand Mu, detail::operand Beta>
auto gumbel_lpdf(const Y& y, const Mu& mu, const Beta& beta) {
  return detail::log_density_at(gumbel(mu, beta), y);
}
/// log half_normal(y | sigma), summed over y.
template <detail::operand Y, detail::operand Sigma>
auto half_normal_lpdf(const Y& y, const Sigma& sigma) {
  return detail::log_density_at(half_normal(sigma), y);
}
/// log half_student_t(y | nu, sigma), summed over y.
template <detail::operand Y, detail::operand Nu, detail::operand Sigma>
auto half_student_t_lpdf(const Y& y, const Nu& nu, const Sigma& sigma) {
  return detail::log_density_at(half_student_t(nu, sigma), y);
}
/// log inv_chi_square(y | nu), summed over y.
template <detail::operand Y, detail::operand Nu>
auto inv_chi_square_lpdf(const Y& y, const Nu& nu) {
  return detail::log_density_at(inv_chi_square(nu), y);
}
/// log inv_gamma(y | alpha, beta), summed over y.
template <detail::operand Y, detail::operand Alpha, detail::operand Beta>
auto inv_gamma_lpdf(const Y& y, const Alpha& alpha, const Beta& beta) {
  return detail::log_density_at(inv_gamma(alpha, beta), y);
}
/// log inv_wishart(W | nu, S) of one K × K matrix W (K·K values, row major); S a data matrix or
/// an expression of K·K values.
template <detail::operand W, detail::operand Nu, class S>
auto inv_wishart_lpdf(const W& w, const Nu& nu, const S& s) {
  return detail::log_density_at(inv_wishart(nu, s), w);
}
/// log inv_wishart_cholesky(L_W | nu, L_S) of one lower Cholesky factor L_W (K·K values, row
/// major); L_S a data matrix or an expression of K·K values.
template <detail::operand LW, detail::operand Nu, class LS>
auto inv_wishart_cholesky_lpdf(const LW& lw, const Nu& nu, const LS& ls) {
  return detail::log_density_at(inv_wishart_cholesky(nu, ls), lw);
}
/// log logistic(y | mu, sigma), summed over y.
template <detail::operand Y, detail::operand Mu, detail::operand Sigma>
auto logistic_lpdf(const Y& y, const Mu& mu, const Sigma& sigma) {
  return detail::log_density_at(logistic(mu, sigma), y);
}
/// log loglogistic(y | alpha, beta), summed over y.
template <detail::operand Y, detail::operand Alpha, detail::operand Beta>
auto loglogistic_lpdf(const Y& y, const Alpha& alpha, const Beta& beta) {
  return detail::log_density_at(loglogistic(alpha, beta), y);
}
/// log lognormal(y | mu, sigma), summed over y.
template <detail::operand Y, detail::operand Mu, detail::operand Sigma>
auto lognormal_lpdf(const Y& y, const Mu& mu, const Sigma& sigma) {
  return detail::log_density_at(lognormal(mu, sigma), y);
}
/// log multi_normal(y | mu, Sigma), summed over the rows of y (N·K values, row n at n·K; one row
/// where Sigma is data); Sigma a data matrix or an expression of K·K values.
template <detail::operand Y, detail::operand Mu, class Sigma>
auto multi_normal_lpdf(const Y& y, const Mu& mu, const Sigma& sigma) {
  return detail::log_density_at(multi_normal(mu, sigma), y);
}
/// log multi_normal_cholesky(y | mu, L), summed over the rows of y.
template <detail::operand Y, detail::operand Mu, class L>
auto multi_normal_cholesky_lpdf(const Y& y, const Mu& mu, const L& l) {
  return detail::log_density_at(multi_normal_cholesky(mu, l), y);
}
/// log multi_normal_prec(y | mu, Omega), summed over the rows of y; Omega a data matrix or an
/// expression of K·K values.
template <detail::operand Y, detail::operand Mu, class Omega>
auto multi_normal_prec_lpdf(const Y& y, const Mu& mu, const Omega& omega) {
  return detail::log_density_at(multi_normal_prec(mu, omega), y);
}
/// log gaussian_dlm_obs(y | F, G, V, W, m0, C0) of the r × T observations y (a data matrix of r
/// rows, or the r·T values of one, row major; the other arguments as gaussian_dlm_obs's).
template <class Y, class F, class G, class V, class W, detail::operand M0, class C0>
auto gaussian_dlm_obs_lpdf(const Y& y, const F& f, const G& g, const V& v, const W& w, const M0& m0, const C0& c0) {
  return detail::log_density_at(gaussian_dlm_obs(f, g, v, w, m0, c0), y);
}
/// log multi_gp(y | Sigma, w) of the K·N values of y (K rows of N, row major); Sigma a data matrix
/// or an expression of N·N values, w of K values (or one).
template <detail::operand Y, class Sigma, detail::operand W>
auto multi_gp_lpdf(const Y& y, const Sigma& sigma, const W& w) {
  return detail::log_density_at(multi_gp(sigma, w), y);
}
/// log multi_gp_cholesky(y | L, w), L the Cholesky factor of Sigma.
template <detail::operand Y, class L, detail::operand W>
auto multi_gp_cholesky_lpdf(const Y& y, const L& l, const W& w) {
  return detail::log_density_at(multi_gp_cholesky(l, w), y);
}
/// log multi_student_t(y | nu, mu, Sigma), summed over the rows of y; Sigma a data matrix or an
/// expression of K·K values.
template <detail::operand Y, detail::operand Nu, detail::operand Mu, class Sigma>
auto multi_student_t_lpdf(const Y& y, const Nu& nu, const Mu& mu, const Sigma& sigma) {
  return detail::log_density_at(multi_student_t(nu, mu, sigma), y);
}
/// log multi_student_t_cholesky(y | nu, mu, L), summed over the rows of y.
template <detail::operand Y, detail::operand Nu, detail::operand Mu, class L>
auto multi_student_t_cholesky_lpdf(const Y& y, const Nu& nu, const Mu& mu, const L& l) {
  return detail::log_density_at(multi_student_t_cholesky(nu, mu, l), y);
}
/// log multinomial(y | theta) of one vector y of K counts.
template <detail::operand Y, detail::operand Theta>
auto multinomial_lpmf(const Y& y, const Theta& theta) {
  return detail::log_density_at(multinomial(theta), y);
}
/// log multinomial_logit(y | gamma) of one vector y of K counts.
template <detail::operand Y, detail::operand Gamma>
auto multinomial_logit_lpmf(const Y& y, const Gamma& gamma) {
  return detail::log_density_at(multinomial_logit(gamma), y);
}
/// log dirichlet_multinomial(y | alpha) of one vector y of K counts.
template <detail::operand Y, detail::operand Alpha>
auto dirichlet_multinomial_lpmf(const Y& y, const Alpha& alpha) {
  return detail::log_density_at(dirichlet_multinomial(alpha), y);
}
/// log discrete_range(y | lower, upper), summed over y.
template <detail::operand Y, detail::operand Lower, detail::operand Upper>
auto discrete_range_lpmf(const Y& y, const Lower& lower, const Upper& upper) {
  return detail::log_density_at(discrete_range(lower, upper), y);
}
/// log hypergeometric(y | N, a, b), summed over y.
template <detail::operand Y, detail::operand Draws, detail::operand A, detail::operand B>
auto hypergeometric_lpmf(const Y& y, const Draws& n, const A& a, const B& b) {
  return detail::log_density_at(hypergeometric(n, a, b), y);
}
/// log beta_neg_binomial(y | r, alpha, beta), summed over y.
template <detail::operand Y, detail::operand R, detail::operand Alpha, detail::operand Beta>
auto beta_neg_binomial_lpmf(const Y& y, const R& r, const Alpha& alpha, const Beta& beta) {
  return detail::log_density_at(beta_neg_binomial(r, alpha, beta), y);
}
/// log neg_binomial(y | alpha, beta), summed over y.
template <detail::operand Y, detail::operand Alpha, detail::operand Beta>
auto neg_binomial_lpmf(const Y& y, const Alpha& alpha, const Beta& beta) {
  return detail::log_density_at(neg_binomial(alpha, beta), y);
}
/// log rayleigh(y | sigma), summed over y.
template <detail::operand Y, detail::operand Sigma>
auto rayleigh_lpdf(const Y& y, const Sigma& sigma) {
  return detail::log_density_at(rayleigh(sigma), y);
}
/// log scaled_inv_chi_square(y | nu, s), summed over y.
template <detail::operand Y, detail::operand Nu, detail::operand S>
auto scaled_inv_chi_square_lpdf(const Y& y, const Nu& nu, const S& s) {
  return detail::log_density_at(scaled_inv_chi_square(nu, s), y);
}
/// log skew_double_exponential(y | mu, sigma, tau), summed over y.
template <detail::operand Y, detail::operand Mu, detail::operand Sigma, detail::operand Tau>
auto skew_double_exponential_lpdf(const Y& y, const Mu& mu, const Sigma& sigma, const Tau& tau) {
  return detail::log_density_at(skew_double_exponential(mu, sigma, tau), y);
}
/// log neg_binomial_2(y | mu, phi), summed over y.
template <detail::operand Y, detail::operand Mu, detail::operand Phi>
auto neg_binomial_2_lpmf(const Y& y, const Mu& mu, const Phi& phi) {
  return detail::log_density_at(neg_binomial_2(mu, phi), y);
}
/// log neg_binomial_2_log(y | eta, phi), summed over y.
template <detail::operand Y, detail::operand Eta, detail::operand Phi>
auto neg_binomial_2_log_lpmf(const Y& y, const Eta& eta, const Phi& phi) {
  return detail::log_density_at(neg_binomial_2_log(eta, phi), y);
}
/// log normal(y | mu, sigma), summed over y.
template <detail::operand Y, detail::operand Mu, detail::operand Sigma>
auto normal_lpdf(const Y& y, const Mu& mu, const Sigma& sigma) {
  return detail::log_density_at(normal(mu, sigma), y);
}
/// Stan's GLM likelihoods (glm.hpp) as functions: log p(y | X, alpha, beta[, sigma | phi]), summed
/// over the rows of X.
template <detail::operand Y, class E, detail::operand Alpha, detail::operand Beta, detail::operand Sigma>
auto normal_id_glm_lpdf(const Y& y, const basic_data_matrix<E>& x, const Alpha& alpha, const Beta& beta,
                        const Sigma& sigma) {
  return detail::log_density_at(normal_id_glm(x, alpha, beta, sigma), y);
}
template <detail::operand Y, class E, detail::operand Alpha, detail::operand Beta>
auto bernoulli_logit_glm_lpmf(const Y& y, const basic_data_matrix<E>& x, const Alpha& alpha, const Beta& beta) {
  return detail::log_density_at(bernoulli_logit_glm(x, alpha, beta), y);
}
template <detail::operand Y, detail::operand N, class E, detail::operand Alpha, detail::operand Beta>
auto binomial_logit_glm_lpmf(const Y& y, const N& trials, const basic_data_matrix<E>& x, const Alpha& alpha,
                             const Beta& beta) {
  return detail::log_density_at(binomial_logit_glm(trials, x, alpha, beta), y);
}
template <detail::operand Y, class E, detail::operand Alpha, detail::operand Beta>
auto poisson_log_glm_lpmf(const Y& y, const basic_data_matrix<E>& x, const Alpha& alpha, const Beta& beta) {
  return detail::log_density_at(poisson_log_glm(x, alpha, beta), y);
}
template <detail::operand Y, class E, detail::operand Alpha, detail::operand Beta, detail::operand Phi>
auto neg_binomial_2_log_glm_lpmf(const Y& y, const basic_data_matrix<E>& x, const Alpha& alpha, const Beta& beta,
                                 const Phi& phi) {
  return detail::log_density_at(neg_binomial_2_log_glm(x, alpha, beta, phi), y);
}
/// log ordered_logistic(y | eta, c), summed over y.
template <detail::operand Y, detail::operand Eta, detail::operand C>
auto ordered_logistic_lpmf(const Y& y, const Eta& eta, const C& c) {
  return detail::log_density_at(ordered_logistic(eta, c), y);
}
/// log ordered_probit(y | eta, c), summed over y.
template <detail::operand Y, detail::operand Eta, detail::operand C>
auto ordered_probit_lpmf(const Y& y, const Eta& eta, const C& c) {
  return detail::log_density_at(ordered_probit(eta, c), y);
}
/// log pareto(y | y_min, alpha), summed over y.
template <detail::operand Y, detail::operand YMin, detail::operand Alpha>
auto pareto_lpdf(const Y& y, const YMin& y_min, const Alpha& alpha) {
  return detail::log_density_at(pareto(y_min, alpha), y);
}
/// log pareto_type_2(y | mu, lambda, alpha), summed over y.
template <detail::operand Y, detail::operand Mu, detail::operand Lambda, detail::operand Alpha>
auto pareto_type_2_lpdf(const Y& y, const Mu& mu, const Lambda& lambda, const Alpha& alpha) {
  return detail::log_density_at(pareto_type_2(mu, lambda, alpha), y);
}
/// log poisson(y | lambda), summed over y.
template <detail::operand Y, detail::operand Lambda>
auto poisson_lpmf(const Y& y, const Lambda& lambda) {
  return detail::log_density_at(poisson(lambda), y);
}
/// log poisson_binomial(y | theta), summed over y (theta a vector of N probabilities).
template <detail::operand Y, detail::operand Theta>
auto poisson_binomial_lpmf(const Y& y, const Theta& theta) {
  return detail::log_density_at(poisson_binomial(theta), y);
}
/// log poisson_log(y | alpha), summed over y.
template <detail::operand Y, detail::operand Alpha>
auto poisson_log_lpmf(const Y& y, const Alpha& alpha) {
  return detail::log_density_at(poisson_log(alpha), y);
}
/// log skew_normal(y | xi, omega, alpha), summed over y.
template <detail::operand Y, detail::operand Xi, detail::operand Omega, detail::operand Alpha>
auto skew_normal_lpdf(const Y& y, const Xi& xi, const Omega& omega, const Alpha& alpha) {
  return detail::log_density_at(skew_normal(xi, omega, alpha), y);
}
/// log student_t(y | nu, mu, sigma), summed over y.
template <detail::operand Y, detail::operand Nu, detail::operand Mu, detail::operand Sigma>
auto student_t_lpdf(const Y& y, const Nu& nu, const Mu& mu, const Sigma& sigma) {
  return detail::log_density_at(student_t(nu, mu, sigma), y);
}
/// log uniform(y | a, b), summed over y.
template <detail::operand Y, detail::operand A, detail::operand B>
auto uniform_lpdf(const Y& y, const A& a, const B& b) {
  return detail::log_density_at(uniform(a, b), y);
}
/// log von_mises(y | mu, kappa), summed over y.
template <detail::operand Y, detail::operand Mu, detail::operand Kappa>
auto von_mises_lpdf(const Y& y, const Mu& mu, const Kappa& kappa) {
  return detail::log_density_at(von_mises(mu, kappa), y);
}
/// log weibull(y | alpha, sigma), summed over y.
template <detail::operand Y, detail::operand Alpha, detail::operand Sigma>
auto weibull_lpdf(const Y& y, const Alpha& alpha, const Sigma& sigma) {
  return detail::log_density_at(weibull(alpha, sigma), y);
}
/// log p(y | zero_inflated(d, theta)), summed over y: d a discrete family, θ the probability of
/// a structural zero (## inflated).
template <detail::operand Y, class Dist, detail::operand Theta>
  requires distribution_family<Dist>
auto zero_inflated_lpmf(const Y& y, const Dist& d, const Theta& theta) {
  return detail::log_density_at(zero_inflated(d, theta), y);
}
/// log p(y | hurdle(d, theta)), summed over y: zeros with probability θ, else d (a discrete d
/// truncated at zero); hurdle_lpdf for a continuous d.
template <detail::operand Y, class Dist, detail::operand Theta>
  requires(distribution_family<Dist> && !continuous_family<Dist>)
auto hurdle_lpmf(const Y& y, const Dist& d, const Theta& theta) {
  return detail::log_density_at(hurdle(d, theta), y);
}
/// log p(y | hurdle(d, theta)) for a continuous d on the positive numbers: log θ at a zero,
/// log(1 − θ) + log f_d(y) elsewhere; summed over y.
template <detail::operand Y, class Dist, detail::operand Theta>
  requires continuous_family<Dist>
auto hurdle_lpdf(const Y& y, const Dist& d, const Theta& theta) {
  return detail::log_density_at(hurdle(d, theta), y);
}
/// log wiener(y | alpha, tau, beta, delta), the upper boundary's first-passage time density,
/// summed over y (a lower-boundary response: wiener_lpdf(y, alpha, tau, 1 - beta, -delta)).
template <detail::operand Y, detail::operand Alpha, detail::operand Tau, detail::operand Beta, detail::operand Delta>
auto wiener_lpdf(const Y& y, const Alpha& alpha, const Tau& tau, const Beta& beta, const Delta& delta) {
  return detail::log_density_at(wiener(alpha, tau, beta, delta), y);
}
/// log wiener(y | alpha, tau, beta, delta, sv), with the drift normal(delta, sv) across trials.
template <detail::operand Y, detail::operand Alpha, detail::operand Tau, detail::operand Beta, detail::operand Delta,
          detail::operand Sv>
auto wiener_lpdf(const Y& y, const Alpha& alpha, const Tau& tau, const Beta& beta, const Delta& delta, const Sv& sv) {
  return detail::log_density_at(wiener(alpha, tau, beta, delta, sv), y);
}
/// log wishart(W | nu, S) of one K × K matrix W (K·K values, row major); S a data matrix or an
/// expression of K·K values.
template <detail::operand W, detail::operand Nu, class S>
auto wishart_lpdf(const W& w, const Nu& nu, const S& s) {
  return detail::log_density_at(wishart(nu, s), w);
}
/// log wishart_cholesky(L_W | nu, L_S) of one lower Cholesky factor L_W (K·K values, row major);
/// L_S a data matrix or an expression of K·K values.
template <detail::operand LW, detail::operand Nu, class LS>
auto wishart_cholesky_lpdf(const LW& lw, const Nu& nu, const LS& ls) {
  return detail::log_density_at(wishart_cholesky(nu, ls), lw);
}
/// log std_normal(y), summed over y.
template <detail::operand Y>
auto std_normal_lpdf(const Y& y) {
  return detail::log_density_at(std_normal(), y);
}

/// The log CDF and log complementary CDF (survival function) of the families that have them in
/// closed form, summed over y, under Stan's names: normal_lcdf(y, mu, sigma) = Σ log P(Y ≤ yᵢ),
/// normal_lccdf(y, mu, sigma) = Σ log P(Y > yᵢ) — a right-censored observation at yᵢ is
/// target(weibull_lccdf(data(t_censored), alpha, sigma)). Each checks d's arguments and y's data
/// values as observe() does. The gamma family (gamma, inv_gamma, chi_square, inv_chi_square) and
/// the Poisson counts have theirs through the regularised incomplete gamma function
/// (log_gamma_p, log_gamma_q), beta, beta_proportion, Student's t (one node, rules::student_t_lcdf)
/// and the binomial and negative binomial counts through the regularised incomplete beta function
/// (log_inc_beta, log1m_inc_beta).
namespace detail {
template <bool Upper, class Dist, class Y>
auto log_cdf_at(const Dist& d, const Y& y) {
  return log_density_at(make_censored<Upper>(d), y);  // censored.hpp: d's checks, and left censoring's
}
}  // namespace detail
/// Σ log P(Y ≤ yᵢ), Y ~ normal(mu, sigma).
template <detail::operand Y, detail::operand Mu, detail::operand Sigma>
auto normal_lcdf(const Y& y, const Mu& mu, const Sigma& sigma) {
  return detail::log_cdf_at<false>(normal(mu, sigma), y);
}
/// Σ log P(Y > yᵢ), Y ~ normal(mu, sigma).
template <detail::operand Y, detail::operand Mu, detail::operand Sigma>
auto normal_lccdf(const Y& y, const Mu& mu, const Sigma& sigma) {
  return detail::log_cdf_at<true>(normal(mu, sigma), y);
}
/// Σ log P(Y ≤ yᵢ), Y ~ lognormal(mu, sigma).
template <detail::operand Y, detail::operand Mu, detail::operand Sigma>
auto lognormal_lcdf(const Y& y, const Mu& mu, const Sigma& sigma) {
  return detail::log_cdf_at<false>(lognormal(mu, sigma), y);
}
/// Σ log P(Y > yᵢ), Y ~ lognormal(mu, sigma).
template <detail::operand Y, detail::operand Mu, detail::operand Sigma>
auto lognormal_lccdf(const Y& y, const Mu& mu, const Sigma& sigma) {
  return detail::log_cdf_at<true>(lognormal(mu, sigma), y);
}
/// Σ log P(Y ≤ yᵢ), Y ~ exponential(lambda).
template <detail::operand Y, detail::operand Lambda>
auto exponential_lcdf(const Y& y, const Lambda& lambda) {
  return detail::log_cdf_at<false>(exponential(lambda), y);
}
/// Σ log P(Y > yᵢ), Y ~ exponential(lambda).
template <detail::operand Y, detail::operand Lambda>
auto exponential_lccdf(const Y& y, const Lambda& lambda) {
  return detail::log_cdf_at<true>(exponential(lambda), y);
}
/// Σ log P(Y ≤ yᵢ), Y ~ weibull(alpha, sigma).
template <detail::operand Y, detail::operand Alpha, detail::operand Sigma>
auto weibull_lcdf(const Y& y, const Alpha& alpha, const Sigma& sigma) {
  return detail::log_cdf_at<false>(weibull(alpha, sigma), y);
}
/// Σ log P(Y > yᵢ), Y ~ weibull(alpha, sigma).
template <detail::operand Y, detail::operand Alpha, detail::operand Sigma>
auto weibull_lccdf(const Y& y, const Alpha& alpha, const Sigma& sigma) {
  return detail::log_cdf_at<true>(weibull(alpha, sigma), y);
}
/// Σ log P(Y ≤ yᵢ), Y ~ logistic(mu, sigma).
template <detail::operand Y, detail::operand Mu, detail::operand Sigma>
auto logistic_lcdf(const Y& y, const Mu& mu, const Sigma& sigma) {
  return detail::log_cdf_at<false>(logistic(mu, sigma), y);
}
/// Σ log P(Y > yᵢ), Y ~ logistic(mu, sigma).
template <detail::operand Y, detail::operand Mu, detail::operand Sigma>
auto logistic_lccdf(const Y& y, const Mu& mu, const Sigma& sigma) {
  return detail::log_cdf_at<true>(logistic(mu, sigma), y);
}
/// Σ log P(Y ≤ yᵢ), Y ~ loglogistic(alpha, beta).
template <detail::operand Y, detail::operand Alpha, detail::operand Beta>
auto loglogistic_lcdf(const Y& y, const Alpha& alpha, const Beta& beta) {
  return detail::log_cdf_at<false>(loglogistic(alpha, beta), y);
}
/// Σ log P(Y > yᵢ), Y ~ loglogistic(alpha, beta).
template <detail::operand Y, detail::operand Alpha, detail::operand Beta>
auto loglogistic_lccdf(const Y& y, const Alpha& alpha, const Beta& beta) {
  return detail::log_cdf_at<true>(loglogistic(alpha, beta), y);
}
/// Σ log P(Y ≤ yᵢ), Y ~ gumbel(mu, beta).
template <detail::operand Y, detail::operand Mu, detail::operand Beta>
auto gumbel_lcdf(const Y& y, const Mu& mu, const Beta& beta) {
  return detail::log_cdf_at<false>(gumbel(mu, beta), y);
}
/// Σ log P(Y > yᵢ), Y ~ gumbel(mu, beta).
template <detail::operand Y, detail::operand Mu, detail::operand Beta>
auto gumbel_lccdf(const Y& y, const Mu& mu, const Beta& beta) {
  return detail::log_cdf_at<true>(gumbel(mu, beta), y);
}
/// Σ log P(Y ≤ yᵢ), Y ~ frechet(alpha, sigma).
template <detail::operand Y, detail::operand Alpha, detail::operand Sigma>
auto frechet_lcdf(const Y& y, const Alpha& alpha, const Sigma& sigma) {
  return detail::log_cdf_at<false>(frechet(alpha, sigma), y);
}
/// Σ log P(Y > yᵢ), Y ~ frechet(alpha, sigma).
template <detail::operand Y, detail::operand Alpha, detail::operand Sigma>
auto frechet_lccdf(const Y& y, const Alpha& alpha, const Sigma& sigma) {
  return detail::log_cdf_at<true>(frechet(alpha, sigma), y);
}
/// Σ log P(Y ≤ yᵢ), Y ~ half_normal(sigma).
template <detail::operand Y, detail::operand Sigma>
auto half_normal_lcdf(const Y& y, const Sigma& sigma) {
  return detail::log_cdf_at<false>(half_normal(sigma), y);
}
/// Σ log P(Y > yᵢ), Y ~ half_normal(sigma).
template <detail::operand Y, detail::operand Sigma>
auto half_normal_lccdf(const Y& y, const Sigma& sigma) {
  return detail::log_cdf_at<true>(half_normal(sigma), y);
}

/// Σ log P(Y ≤ yᵢ), Y ~ student_t(nu, mu, sigma).
template <detail::operand Y, detail::operand Nu, detail::operand Mu, detail::operand Sigma>
auto student_t_lcdf(const Y& y, const Nu& nu, const Mu& mu, const Sigma& sigma) {
  return detail::log_cdf_at<false>(student_t(nu, mu, sigma), y);
}
/// Σ log P(Y > yᵢ), Y ~ student_t(nu, mu, sigma).
template <detail::operand Y, detail::operand Nu, detail::operand Mu, detail::operand Sigma>
auto student_t_lccdf(const Y& y, const Nu& nu, const Mu& mu, const Sigma& sigma) {
  return detail::log_cdf_at<true>(student_t(nu, mu, sigma), y);
}
/// Σ log P(Y ≤ yᵢ), Y ~ half_student_t(nu, sigma).
template <detail::operand Y, detail::operand Nu, detail::operand Sigma>
auto half_student_t_lcdf(const Y& y, const Nu& nu, const Sigma& sigma) {
  return detail::log_cdf_at<false>(half_student_t(nu, sigma), y);
}
/// Σ log P(Y > yᵢ), Y ~ half_student_t(nu, sigma).
template <detail::operand Y, detail::operand Nu, detail::operand Sigma>
auto half_student_t_lccdf(const Y& y, const Nu& nu, const Sigma& sigma) {
  return detail::log_cdf_at<true>(half_student_t(nu, sigma), y);
}
/// Σ log P(Y ≤ yᵢ), Y ~ cauchy(mu, sigma).
template <detail::operand Y, detail::operand Mu, detail::operand Sigma>
auto cauchy_lcdf(const Y& y, const Mu& mu, const Sigma& sigma) {
  return detail::log_cdf_at<false>(cauchy(mu, sigma), y);
}
/// Σ log P(Y > yᵢ), Y ~ cauchy(mu, sigma).
template <detail::operand Y, detail::operand Mu, detail::operand Sigma>
auto cauchy_lccdf(const Y& y, const Mu& mu, const Sigma& sigma) {
  return detail::log_cdf_at<true>(cauchy(mu, sigma), y);
}
/// Σ log P(Y ≤ yᵢ), Y ~ half_cauchy(sigma).
template <detail::operand Y, detail::operand Sigma>
auto half_cauchy_lcdf(const Y& y, const Sigma& sigma) {
  return detail::log_cdf_at<false>(half_cauchy(sigma), y);
}
/// Σ log P(Y > yᵢ), Y ~ half_cauchy(sigma).
template <detail::operand Y, detail::operand Sigma>
auto half_cauchy_lccdf(const Y& y, const Sigma& sigma) {
  return detail::log_cdf_at<true>(half_cauchy(sigma), y);
}
/// Σ log P(Y ≤ yᵢ), Y ~ double_exponential(mu, sigma).
template <detail::operand Y, detail::operand Mu, detail::operand Sigma>
auto double_exponential_lcdf(const Y& y, const Mu& mu, const Sigma& sigma) {
  return detail::log_cdf_at<false>(double_exponential(mu, sigma), y);
}
/// Σ log P(Y > yᵢ), Y ~ double_exponential(mu, sigma).
template <detail::operand Y, detail::operand Mu, detail::operand Sigma>
auto double_exponential_lccdf(const Y& y, const Mu& mu, const Sigma& sigma) {
  return detail::log_cdf_at<true>(double_exponential(mu, sigma), y);
}
/// Σ log P(Y ≤ yᵢ), Y ~ skew_normal(xi, omega, alpha).
template <detail::operand Y, detail::operand Xi, detail::operand Omega, detail::operand Alpha>
auto skew_normal_lcdf(const Y& y, const Xi& xi, const Omega& omega, const Alpha& alpha) {
  return detail::log_cdf_at<false>(skew_normal(xi, omega, alpha), y);
}
/// Σ log P(Y > yᵢ), Y ~ skew_normal(xi, omega, alpha).
template <detail::operand Y, detail::operand Xi, detail::operand Omega, detail::operand Alpha>
auto skew_normal_lccdf(const Y& y, const Xi& xi, const Omega& omega, const Alpha& alpha) {
  return detail::log_cdf_at<true>(skew_normal(xi, omega, alpha), y);
}
/// Σ log P(Y ≤ yᵢ), Y ~ pareto(y_min, alpha).
template <detail::operand Y, detail::operand YMin, detail::operand Alpha>
auto pareto_lcdf(const Y& y, const YMin& y_min, const Alpha& alpha) {
  return detail::log_cdf_at<false>(pareto(y_min, alpha), y);
}
/// Σ log P(Y > yᵢ), Y ~ pareto(y_min, alpha).
template <detail::operand Y, detail::operand YMin, detail::operand Alpha>
auto pareto_lccdf(const Y& y, const YMin& y_min, const Alpha& alpha) {
  return detail::log_cdf_at<true>(pareto(y_min, alpha), y);
}
/// Σ log P(Y ≤ yᵢ), Y ~ pareto_type_2(mu, lambda, alpha).
template <detail::operand Y, detail::operand Mu, detail::operand Lambda, detail::operand Alpha>
auto pareto_type_2_lcdf(const Y& y, const Mu& mu, const Lambda& lambda, const Alpha& alpha) {
  return detail::log_cdf_at<false>(pareto_type_2(mu, lambda, alpha), y);
}
/// Σ log P(Y > yᵢ), Y ~ pareto_type_2(mu, lambda, alpha).
template <detail::operand Y, detail::operand Mu, detail::operand Lambda, detail::operand Alpha>
auto pareto_type_2_lccdf(const Y& y, const Mu& mu, const Lambda& lambda, const Alpha& alpha) {
  return detail::log_cdf_at<true>(pareto_type_2(mu, lambda, alpha), y);
}
/// Σ log P(Y ≤ yᵢ), Y ~ uniform(a, b).
template <detail::operand Y, detail::operand A, detail::operand B>
auto uniform_lcdf(const Y& y, const A& a, const B& b) {
  return detail::log_cdf_at<false>(uniform(a, b), y);
}
/// Σ log P(Y > yᵢ), Y ~ uniform(a, b).
template <detail::operand Y, detail::operand A, detail::operand B>
auto uniform_lccdf(const Y& y, const A& a, const B& b) {
  return detail::log_cdf_at<true>(uniform(a, b), y);
}
/// Σ log P(Y ≤ yᵢ), Y ~ beta_proportion(mu, kappa).
template <detail::operand Y, detail::operand Mu, detail::operand Kappa>
auto beta_proportion_lcdf(const Y& y, const Mu& mu, const Kappa& kappa) {
  return detail::log_cdf_at<false>(beta_proportion(mu, kappa), y);
}
/// Σ log P(Y > yᵢ), Y ~ beta_proportion(mu, kappa).
template <detail::operand Y, detail::operand Mu, detail::operand Kappa>
auto beta_proportion_lccdf(const Y& y, const Mu& mu, const Kappa& kappa) {
  return detail::log_cdf_at<true>(beta_proportion(mu, kappa), y);
}
/// Σ log P(Y ≤ yᵢ), Y ~ exp_mod_normal(mu, sigma, lambda).
template <detail::operand Y, detail::operand Mu, detail::operand Sigma, detail::operand Lambda>
auto exp_mod_normal_lcdf(const Y& y, const Mu& mu, const Sigma& sigma, const Lambda& lambda) {
  return detail::log_cdf_at<false>(exp_mod_normal(mu, sigma, lambda), y);
}
/// Σ log P(Y > yᵢ), Y ~ exp_mod_normal(mu, sigma, lambda).
template <detail::operand Y, detail::operand Mu, detail::operand Sigma, detail::operand Lambda>
auto exp_mod_normal_lccdf(const Y& y, const Mu& mu, const Sigma& sigma, const Lambda& lambda) {
  return detail::log_cdf_at<true>(exp_mod_normal(mu, sigma, lambda), y);
}
/// Σ log P(Y ≤ yᵢ), Y ~ bernoulli(p).
template <detail::operand Y, detail::operand P>
auto bernoulli_lcdf(const Y& y, const P& p) {
  return detail::log_cdf_at<false>(bernoulli(p), y);
}
/// Σ log P(Y > yᵢ), Y ~ bernoulli(p).
template <detail::operand Y, detail::operand P>
auto bernoulli_lccdf(const Y& y, const P& p) {
  return detail::log_cdf_at<true>(bernoulli(p), y);
}
/// Σ log P(Y ≤ yᵢ), Y ~ bernoulli_logit(alpha).
template <detail::operand Y, detail::operand Alpha>
auto bernoulli_logit_lcdf(const Y& y, const Alpha& alpha) {
  return detail::log_cdf_at<false>(bernoulli_logit(alpha), y);
}
/// Σ log P(Y > yᵢ), Y ~ bernoulli_logit(alpha).
template <detail::operand Y, detail::operand Alpha>
auto bernoulli_logit_lccdf(const Y& y, const Alpha& alpha) {
  return detail::log_cdf_at<true>(bernoulli_logit(alpha), y);
}

/// Σ log P(Y ≤ yᵢ), Y ~ beta_binomial(n, a, b).
template <detail::operand Y, detail::operand N, detail::operand A, detail::operand B>
auto beta_binomial_lcdf(const Y& y, const N& n, const A& a, const B& b) {
  return detail::log_cdf_at<false>(beta_binomial(n, a, b), y);
}
/// Σ log P(Y > yᵢ), Y ~ beta_binomial(n, a, b).
template <detail::operand Y, detail::operand N, detail::operand A, detail::operand B>
auto beta_binomial_lccdf(const Y& y, const N& n, const A& a, const B& b) {
  return detail::log_cdf_at<true>(beta_binomial(n, a, b), y);
}

/// Σ log P(Y ≤ yᵢ), Y ~ gamma(alpha, beta).
template <detail::operand Y, detail::operand Alpha, detail::operand Beta>
auto gamma_lcdf(const Y& y, const Alpha& alpha, const Beta& beta) {
  return detail::log_cdf_at<false>(gamma(alpha, beta), y);
}
/// Σ log P(Y > yᵢ), Y ~ gamma(alpha, beta).
template <detail::operand Y, detail::operand Alpha, detail::operand Beta>
auto gamma_lccdf(const Y& y, const Alpha& alpha, const Beta& beta) {
  return detail::log_cdf_at<true>(gamma(alpha, beta), y);
}
/// Σ log P(Y ≤ yᵢ), Y ~ inv_gamma(alpha, beta).
template <detail::operand Y, detail::operand Alpha, detail::operand Beta>
auto inv_gamma_lcdf(const Y& y, const Alpha& alpha, const Beta& beta) {
  return detail::log_cdf_at<false>(inv_gamma(alpha, beta), y);
}
/// Σ log P(Y > yᵢ), Y ~ inv_gamma(alpha, beta).
template <detail::operand Y, detail::operand Alpha, detail::operand Beta>
auto inv_gamma_lccdf(const Y& y, const Alpha& alpha, const Beta& beta) {
  return detail::log_cdf_at<true>(inv_gamma(alpha, beta), y);
}
/// Σ log P(Y ≤ yᵢ), Y ~ chi_square(nu).
template <detail::operand Y, detail::operand Nu>
auto chi_square_lcdf(const Y& y, const Nu& nu) {
  return detail::log_cdf_at<false>(chi_square(nu), y);
}
/// Σ log P(Y > yᵢ), Y ~ chi_square(nu).
template <detail::operand Y, detail::operand Nu>
auto chi_square_lccdf(const Y& y, const Nu& nu) {
  return detail::log_cdf_at<true>(chi_square(nu), y);
}
/// Σ log P(Y ≤ yᵢ), Y ~ inv_chi_square(nu).
template <detail::operand Y, detail::operand Nu>
auto inv_chi_square_lcdf(const Y& y, const Nu& nu) {
  return detail::log_cdf_at<false>(inv_chi_square(nu), y);
}
/// Σ log P(Y > yᵢ), Y ~ inv_chi_square(nu).
template <detail::operand Y, detail::operand Nu>
auto inv_chi_square_lccdf(const Y& y, const Nu& nu) {
  return detail::log_cdf_at<true>(inv_chi_square(nu), y);
}
/// Σ log P(Y ≤ yᵢ) and Σ log P(Y > yᵢ), Y ~ poisson_binomial(theta).
template <detail::operand Y, detail::operand Theta>
auto poisson_binomial_lcdf(const Y& y, const Theta& theta) {
  return detail::log_cdf_at<false>(poisson_binomial(theta), y);
}
template <detail::operand Y, detail::operand Theta>
auto poisson_binomial_lccdf(const Y& y, const Theta& theta) {
  return detail::log_cdf_at<true>(poisson_binomial(theta), y);
}
/// Σ log P(Y ≤ yᵢ), Y ~ poisson(lambda).
template <detail::operand Y, detail::operand Lambda>
auto poisson_lcdf(const Y& y, const Lambda& lambda) {
  return detail::log_cdf_at<false>(poisson(lambda), y);
}
/// Σ log P(Y > yᵢ), Y ~ poisson(lambda).
template <detail::operand Y, detail::operand Lambda>
auto poisson_lccdf(const Y& y, const Lambda& lambda) {
  return detail::log_cdf_at<true>(poisson(lambda), y);
}
/// Σ log P(Y ≤ yᵢ), Y ~ poisson_log(alpha).
template <detail::operand Y, detail::operand Alpha>
auto poisson_log_lcdf(const Y& y, const Alpha& alpha) {
  return detail::log_cdf_at<false>(poisson_log(alpha), y);
}
/// Σ log P(Y > yᵢ), Y ~ poisson_log(alpha).
template <detail::operand Y, detail::operand Alpha>
auto poisson_log_lccdf(const Y& y, const Alpha& alpha) {
  return detail::log_cdf_at<true>(poisson_log(alpha), y);
}

/// Σ log P(Y ≤ yᵢ), Y ~ beta(a, b).
template <detail::operand Y, detail::operand A, detail::operand B>
auto beta_lcdf(const Y& y, const A& a, const B& b) {
  return detail::log_cdf_at<false>(beta(a, b), y);
}
/// Σ log P(Y > yᵢ), Y ~ beta(a, b).
template <detail::operand Y, detail::operand A, detail::operand B>
auto beta_lccdf(const Y& y, const A& a, const B& b) {
  return detail::log_cdf_at<true>(beta(a, b), y);
}
/// Σ log P(Y ≤ yᵢ), Y ~ neg_binomial(alpha, beta).
template <detail::operand Y, detail::operand Alpha, detail::operand Beta>
auto neg_binomial_lcdf(const Y& y, const Alpha& alpha, const Beta& beta) {
  return detail::log_cdf_at<false>(neg_binomial(alpha, beta), y);
}
/// Σ log P(Y > yᵢ), Y ~ neg_binomial(alpha, beta).
template <detail::operand Y, detail::operand Alpha, detail::operand Beta>
auto neg_binomial_lccdf(const Y& y, const Alpha& alpha, const Beta& beta) {
  return detail::log_cdf_at<true>(neg_binomial(alpha, beta), y);
}
/// Σ log P(Y ≤ yᵢ), Y ~ rayleigh(sigma).
template <detail::operand Y, detail::operand Sigma>
auto rayleigh_lcdf(const Y& y, const Sigma& sigma) {
  return detail::log_cdf_at<false>(rayleigh(sigma), y);
}
/// Σ log P(Y > yᵢ), Y ~ rayleigh(sigma).
template <detail::operand Y, detail::operand Sigma>
auto rayleigh_lccdf(const Y& y, const Sigma& sigma) {
  return detail::log_cdf_at<true>(rayleigh(sigma), y);
}
/// Σ log P(Y ≤ yᵢ), Y ~ scaled_inv_chi_square(nu, s).
template <detail::operand Y, detail::operand Nu, detail::operand S>
auto scaled_inv_chi_square_lcdf(const Y& y, const Nu& nu, const S& s) {
  return detail::log_cdf_at<false>(scaled_inv_chi_square(nu, s), y);
}
/// Σ log P(Y > yᵢ), Y ~ scaled_inv_chi_square(nu, s).
template <detail::operand Y, detail::operand Nu, detail::operand S>
auto scaled_inv_chi_square_lccdf(const Y& y, const Nu& nu, const S& s) {
  return detail::log_cdf_at<true>(scaled_inv_chi_square(nu, s), y);
}
/// Σ log P(Y ≤ yᵢ), Y ~ skew_double_exponential(mu, sigma, tau).
template <detail::operand Y, detail::operand Mu, detail::operand Sigma, detail::operand Tau>
auto skew_double_exponential_lcdf(const Y& y, const Mu& mu, const Sigma& sigma, const Tau& tau) {
  return detail::log_cdf_at<false>(skew_double_exponential(mu, sigma, tau), y);
}
/// Σ log P(Y > yᵢ), Y ~ skew_double_exponential(mu, sigma, tau).
template <detail::operand Y, detail::operand Mu, detail::operand Sigma, detail::operand Tau>
auto skew_double_exponential_lccdf(const Y& y, const Mu& mu, const Sigma& sigma, const Tau& tau) {
  return detail::log_cdf_at<true>(skew_double_exponential(mu, sigma, tau), y);
}
/// Σ log P(Y ≤ yᵢ), Y ~ neg_binomial_2(mu, phi).
template <detail::operand Y, detail::operand Mu, detail::operand Phi>
auto neg_binomial_2_lcdf(const Y& y, const Mu& mu, const Phi& phi) {
  return detail::log_cdf_at<false>(neg_binomial_2(mu, phi), y);
}
/// Σ log P(Y > yᵢ), Y ~ neg_binomial_2(mu, phi).
template <detail::operand Y, detail::operand Mu, detail::operand Phi>
auto neg_binomial_2_lccdf(const Y& y, const Mu& mu, const Phi& phi) {
  return detail::log_cdf_at<true>(neg_binomial_2(mu, phi), y);
}
/// Σ log P(Y ≤ yᵢ), Y ~ neg_binomial_2_log(eta, phi).
template <detail::operand Y, detail::operand Eta, detail::operand Phi>
auto neg_binomial_2_log_lcdf(const Y& y, const Eta& eta, const Phi& phi) {
  return detail::log_cdf_at<false>(neg_binomial_2_log(eta, phi), y);
}
/// Σ log P(Y > yᵢ), Y ~ neg_binomial_2_log(eta, phi).
template <detail::operand Y, detail::operand Eta, detail::operand Phi>
auto neg_binomial_2_log_lccdf(const Y& y, const Eta& eta, const Phi& phi) {
  return detail::log_cdf_at<true>(neg_binomial_2_log(eta, phi), y);
}
/// Σ log P(Y ≤ yᵢ), Y ~ binomial(n, p).
template <detail::operand Y, detail::operand N, detail::operand P>
auto binomial_lcdf(const Y& y, const N& n, const P& p) {
  return detail::log_cdf_at<false>(binomial(n, p), y);
}
/// Σ log P(Y > yᵢ), Y ~ binomial(n, p).
template <detail::operand Y, detail::operand N, detail::operand P>
auto binomial_lccdf(const Y& y, const N& n, const P& p) {
  return detail::log_cdf_at<true>(binomial(n, p), y);
}
/// Σ log P(Y ≤ yᵢ), Y ~ binomial_logit(n, alpha).
template <detail::operand Y, detail::operand N, detail::operand Alpha>
auto binomial_logit_lcdf(const Y& y, const N& n, const Alpha& alpha) {
  return detail::log_cdf_at<false>(binomial_logit(n, alpha), y);
}
/// Σ log P(Y > yᵢ), Y ~ binomial_logit(n, alpha).
template <detail::operand Y, detail::operand N, detail::operand Alpha>
auto binomial_logit_lccdf(const Y& y, const N& n, const Alpha& alpha) {
  return detail::log_cdf_at<true>(binomial_logit(n, alpha), y);
}

/// The log density of each element of y under the distribution d, a vector of y's size
/// (a scalar for a scalar y): log d(y₁), log d(y₂), … — Stan's loop
/// `for (n in 1:N) lp[n] = normal_lpdf(y[n] | mu, sigma)` is
/// `pointwise_log_density(normal(mu, sigma), data(y))`. For the emission densities of
/// hmm_marginal (operations/hmm.hpp), mixtures written by hand and pointwise log-likelihoods.
/// Checks d's arguments and y's data values as d.observe(y) does.
template <class Dist, detail::operand Y>
  requires distribution_family<Dist>
auto pointwise_log_density(const Dist& d, const Y& y) {
  const auto summed = detail::log_density_at(d, y);
  using S = std::remove_cvref_t<decltype(summed)>;
  if constexpr (!is_vector_v<detail::node_t<Y>>) {
    return summed;
  } else {
    static_assert(kind_of<S> == node_kind::sum,
                  "tyche::pointwise_log_density(d, y): this family's log density of a vector y is not "
                  "a sum of elementwise terms (a multivariate family); use its *_lpdf instead");
    return summed.a;
  }
}

}  // namespace tyche
