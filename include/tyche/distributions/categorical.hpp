// tyche/distributions/categorical.hpp — categorical(theta) and categorical_logit(beta), for observations only.
//   log p(y | θ) = log θ_y,                 y ∈ {1, …, K}, θ a vector of K probabilities;
//   log p(y | β) = β_y − log Σₖ exp βₖ,     y ∈ {1, …, K}, β ∈ ℝᴷ (softmax).
// y is 1-based, as in Stan. Observing n values gathers θ or β through the data (a gather leaf,
// autodiff/vector_ops.hpp): Σᵢ log θ_{yᵢ}, and Σᵢ β_{yᵢ} − n log Σₖ exp βₖ with one log-sum-exp.
// The data must be integers 1 … K: observe throws "... y[i] = v is not a category 1 … K".
// β (or θ) is one vector of K values shared by every observation. A multinomial logistic
// regression, with values per observation and category, is not this family but
// categorical_logit_glm(X, alpha, beta) (categorical_logit_glm.hpp). An argument that holds one
// value per observation computed from a data matrix (K = n, with y's categories below n) is that
// mistake, and observe throws saying so.
#pragma once
#include <tyche/config.hpp>
#include <tyche/distributions/detail/family.hpp>
#include <tyche/operations/vectors.hpp>
#include <tyche/scalar/format.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

namespace tyche {

namespace detail {
/// True when node N reads a data matrix somewhere below it (matvec(X, beta), …).
template <class N>
inline constexpr bool reads_data_matrix_v = [] {
  if constexpr (kind_of<N> == node_kind::data_matrix) return true;
  else return []<class... C>(meta::list<C...>) { return (reads_data_matrix_v<C> || ...); }(children_t<N>{});
}();

/// The categories y (data, 1-based doubles) checked against K; then f(gathered) where gathered
/// is the vector v[y₁ − 1], v[y₂ − 1], … (or, for one constant y, the scalar v[y − 1]).
template <class V, class Y>
auto gather_categories(const char* family, const V& v, const Y& y) {
  static_assert(is_vector_v<V>, "tyche::categorical(theta) / categorical_logit(beta): the argument "
                                "must be a vector of K values");
  static_assert(kind_of<Y> == node_kind::data_vector || kind_of<Y> == node_kind::constant,
                "tyche::categorical / categorical_logit: only data can be observed (y must be data)");
  const std::size_t k = v.size();
  auto check = [&](double c, std::size_t i) {
    if (!(c >= 1 && c <= double(k) && c == std::floor(c)))
      throw std::invalid_argument(std::string("tyche::") + family + "(...).observe(y): y[" +
                                  std::to_string(i + 1) + "] = " + tyche::detail::format_number(c) +
                                  " is not a category 1 … " + std::to_string(k));
  };
  if constexpr (kind_of<Y> == node_kind::data_vector) {
    for (std::size_t i = 0; i < y.size(); ++i) check(y.ptr[i], i);
    // One logit vector per observation (a regression's X · beta) where one vector of K values
    // shared by all observations is meant: it would silently be read as K = n categories.
    if constexpr (reads_data_matrix_v<V>) {
      if (k == y.size() && k > 1) {
        double top = 0;
        for (std::size_t i = 0; i < y.size(); ++i) top = std::max(top, y.ptr[i]);
        if (top < double(k))
          throw std::invalid_argument(
              std::string("tyche::") + family + "(v).observe(y): v has " + std::to_string(k) +
              " values, one per observation, computed from a data matrix, and y's categories go up to " +
              tyche::detail::format_number(top) + ": v would be read as the " + std::to_string(k) +
              " categories' values, shared by every observation. " + family +
              " takes one vector of K values for all observations; a regression with its own values per "
              "observation and category is categorical_logit_glm(X, alpha, beta).observe(data(y)) "
              "(docs/reference/distributions.md)");
      }
    }
    return gather_node<1>(v, y.ptr, y.size());
  } else {
    check(y.value, 0);
    return at(v, static_cast<std::size_t>(y.value) - 1);
  }
}

/// n draws from the categories 1 … K with probabilities p (not necessarily normalised).
template <class G>
std::vector<double> draw_categories(G& rng, std::size_t n, const std::vector<double>& p) {
  std::discrete_distribution<int> d(p.begin(), p.end());
  std::vector<double> out(n);
  for (auto& o : out) o = d(rng) + 1;
  return out;
}
}  // namespace detail

template <class Theta>
struct categorical_distribution : distribution<categorical_distribution<Theta>> {
  static constexpr const char* family = "categorical";
  Theta theta;
  template <class X>
  auto log_prob(const X& y) const {
    return detail::total(log(detail::gather_categories(family, theta, y)));
  }
  auto arguments() const { return std::tuple{theta}; }
  /// The arguments are whole vectors (model.hpp draws with draw_all, not element by element).
  static constexpr bool whole_arguments = true;
  template <class G>
  static std::vector<double> draw_all(G& rng, std::size_t n, const std::vector<double>& theta) {
    return detail::draw_categories(rng, n, theta);
  }
  static const char* observation_problem(double v) { return detail::category_problem(v); }
};

template <class Beta>
struct categorical_logit_distribution : distribution<categorical_logit_distribution<Beta>> {
  static constexpr const char* family = "categorical_logit";
  Beta beta;
  template <class X>
  auto log_prob(const X& y) const {
    const auto picked = detail::gather_categories(family, beta, y);
    const double n = static_cast<double>(detail::operand_size(picked));
    return detail::total(picked) - constant{n} * log_sum_exp(beta);
  }
  auto arguments() const { return std::tuple{beta}; }
  static constexpr bool whole_arguments = true;
  template <class G>
  static std::vector<double> draw_all(G& rng, std::size_t n, const std::vector<double>& beta) {
    double top = -HUGE_VAL;
    for (double b : beta) top = std::max(top, b);
    std::vector<double> p(beta.size());
    for (std::size_t k = 0; k < beta.size(); ++k) p[k] = std::exp(beta[k] - top);
    return detail::draw_categories(rng, n, p);
  }
  static const char* observation_problem(double v) { return detail::category_problem(v); }
};

/// The distribution categorical(theta), to observe categories 1 … K: `categorical(theta).observe(data(y))`.
template <detail::operand Theta>
auto categorical(const Theta& theta) {
  return detail::make_distribution<categorical_distribution>(theta);
}
/// The distribution categorical_logit(beta) (softmax): `categorical_logit(beta).observe(data(y))`.
template <detail::operand Beta>
auto categorical_logit(const Beta& beta) {
  return detail::make_distribution<categorical_logit_distribution>(beta);
}

TYCHE_OBSERVED_ONLY_FAMILY(categorical)
TYCHE_OBSERVED_ONLY_FAMILY(categorical_logit)

}  // namespace tyche
