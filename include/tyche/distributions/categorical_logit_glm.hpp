// tyche/distributions/categorical_logit_glm.hpp — categorical_logit_glm(X, alpha, beta), for observations only: multinomial logistic regression.
//   log p(y | X, α, β) = Σₙ (ηₙ,yₙ − log Σₖ exp ηₙₖ),   ηₙₖ = αₖ + Σₚ Xₙₚ βₚₖ,
//   y ∈ {1, …, K} (n = 1 … N), X an N × P data matrix, α ∈ ℝᴷ, β ∈ ℝᴾˣᴷ (Stan's
//   categorical_logit_glm(y | X, alpha, beta)).
// X is a data matrix, `matrix(values, N, P, "X")` (row major, viewed: it must outlive the
// model; doubles, or floats for half the memory and bandwidth, summed in double); alpha a
// vector of K values; beta a vector of P·K values, category by category: the P coefficients of
// category k at [(k − 1)·P, k·P) — Stan's P × K matrix beta in its column-major order. With every category's coefficients free, the priors identify them; to fix category 1
// as the reference, give it zeros: `append_row(rep_vector(0.0, P), beta_rest)` with beta_rest
// a parameter of P·(K − 1) values (likewise alpha). No intercepts: `rep_vector(0.0, K)`.
// One vector_op (autodiff/categorical_glm.hpp) reads X once per evaluation: each row's K linear
// predictors, their log-sum-exp, and the row's share of the gradient while the row is in cache
// (O(N·P·K)); writing the same model with one matvec(X, beta_k) per category and
// log_sum_exp reads X K times and keeps N·K intermediate values. The op's values are the N rows'
// log-likelihoods, summed: loo() leaves out one row at a time.
//
// Data checks (std::invalid_argument naming the index and the value):
//   y[i] = v is not a category 1 … K
//   y has n values but X has m rows
//   X[i, j] = v; data must be finite
//   beta has s values, not P·K (X's P columns times alpha's K categories)
#pragma once
#include <tyche/config.hpp>
#include <tyche/autodiff/categorical_glm.hpp>
#include <tyche/distributions/detail/family.hpp>
#include <tyche/operations/functions.hpp>
#include <tyche/scalar/format.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

namespace tyche {

template <class Alpha, class Beta, class E = double>
struct categorical_logit_glm_distribution : distribution<categorical_logit_glm_distribution<Alpha, Beta, E>> {
  static constexpr const char* family = "categorical_logit_glm";
  basic_data_matrix<E> x;
  Alpha alpha;
  Beta beta;

  // (A wrong argument or observation has its static_assert; nothing else is said about it.)
  static constexpr bool arguments_valid = is_vector_v<Alpha> && is_vector_v<Beta>;

  template <class X>
  auto log_prob(const X& y) const {
    const auto node = detail::as_node(y);
    if constexpr (arguments_valid && kind_of<detail::node_t<X>> == node_kind::data_vector) {
      check_observed(node);  // (observe() has; a direct log_prob(data(y)) is checked here)
      ops::basic_categorical_logit_glm_map<E> op{};
      op.x = x.ptr;
      op.y = node.ptr;
      op.n = x.rows;
      op.p = x.cols;
      op.k = alpha.size();
      return sum(make_vector_op(op, x.rows, alpha, beta));
    } else {
      return constant{0.0};
    }
  }
  /// Checks y's size against X's rows and its categories against K (observe() has checked
  /// that its values are finite whole numbers ≥ 1; a direct log_prob has not: checked here too).
  template <class Y>
  void check_observed(const Y& y) const {
    static_assert(kind_of<Y> == node_kind::data_vector,
                  "tyche::categorical_logit_glm(X, alpha, beta).observe(y): y must be data, one category "
                  "per row of X: .observe(data(y))");
    if constexpr (arguments_valid && kind_of<Y> == node_kind::data_vector) {
      const std::string head = "tyche::categorical_logit_glm(X, alpha, beta).observe(y): ";
      if (y.size() != x.rows)
        throw std::invalid_argument(head + "y has " + std::to_string(y.size()) + " values but " +
                                    (x.name ? x.name : "X") + " has " + std::to_string(x.rows) +
                                    " rows (one category per row)");
      const std::size_t k = alpha.size();
      for (std::size_t i = 0; i < y.size(); ++i)
        if (!(y.ptr[i] >= 1 && y.ptr[i] <= double(k) && y.ptr[i] == std::floor(y.ptr[i])))
          throw std::invalid_argument(head + "y[" + std::to_string(i + 1) + "] = " +
                                      tyche::detail::format_number(y.ptr[i]) + " is not a category 1 … " +
                                      std::to_string(k) + " (alpha has " + std::to_string(k) + " values)");
    }
  }
  auto arguments() const { return std::tuple{alpha, beta}; }
  /// The same X with other arguments (detail::with_arguments).
  template <class A, class B>
  auto with_arguments(const A& a, const B& b) const {
    return categorical_logit_glm_distribution<A, B, E>{{}, x, a, b};
  }
  /// The arguments are whole vectors (model.hpp draws with draw_all, not element by element):
  /// one category per row of X, from the softmax of its linear predictors.
  static constexpr bool whole_arguments = true;
  template <class G>
  std::vector<double> draw_all(G& rng, std::size_t n, const std::vector<double>& a,
                               const std::vector<double>& b) const {
    const std::size_t k = a.size(), p = x.cols;
    std::vector<double> out(n), w(k);
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    for (std::size_t r = 0; r < n; ++r) {
      const E* xr = x.ptr + (r % x.rows) * p;
      double top = -HUGE_VAL;
      for (std::size_t c = 0; c < k; ++c) {
        double eta = a[c];
        for (std::size_t j = 0; j < p; ++j) eta += xr[j] * b[c * p + j];
        w[c] = eta;
        top = std::max(top, eta);
      }
      double total = 0;
      for (std::size_t c = 0; c < k; ++c) total += (w[c] = std::exp(w[c] - top));
      if (!std::isfinite(total)) {  // a linear predictor not finite: no category
        out[r] = NAN;
        continue;
      }
      double u = unit(rng) * total;
      std::size_t c = 0;
      while (c + 1 < k && u >= w[c]) u -= w[c++];
      out[r] = static_cast<double>(c + 1);
    }
    return out;
  }
  static const char* observation_problem(double v) { return detail::category_problem(v); }
};

/// The distribution categorical_logit_glm(X, alpha, beta) — a multinomial logistic regression —
/// to observe one category 1 … K per row of the data matrix X:
/// `categorical_logit_glm(matrix(x, N, P, "X"), alpha, beta).observe(data(y))`. X may be a
/// matrix of floats (`matrix(const float*, N, P, "X")`): half the memory and bytes read per pass;
/// each value is converted to double (or the chains' scalar) and summed in it.
template <class E, detail::operand Alpha, detail::operand Beta>
auto categorical_logit_glm(const basic_data_matrix<E>& x, const Alpha& alpha, const Beta& beta) {
  using A = detail::node_t<Alpha>;
  using B = detail::node_t<Beta>;
  static_assert(is_vector_v<A>, "tyche::categorical_logit_glm(X, alpha, beta): alpha must be a vector of the K "
                                "categories' intercepts (no intercepts: rep_vector(0.0, K))");
  static_assert(is_vector_v<B>, "tyche::categorical_logit_glm(X, alpha, beta): beta must be a vector of P*K "
                                "coefficients, category by category (Stan's P x K matrix, column-major)");
  const A a = detail::as_node(alpha);
  const B b = detail::as_node(beta);
  if constexpr (is_vector_v<A> && is_vector_v<B>) {
    const std::string head = "tyche::categorical_logit_glm(X, alpha, beta): ";
    if (a.size() == 0) throw std::invalid_argument(head + "alpha has no values (one per category)");
    if (b.size() != x.cols * a.size())
      throw std::invalid_argument(head + "beta has " + std::to_string(b.size()) + " values, not " +
                                  std::to_string(x.cols) + "*" + std::to_string(a.size()) + " (" +
                                  (x.name ? x.name : "X") + "'s " + std::to_string(x.cols) + " columns times alpha's " +
                                  std::to_string(a.size()) + " categories, category by category)");
    detail::check_matrix_finite(x, "categorical_logit_glm(X, alpha, beta)", "X");
  }
  return categorical_logit_glm_distribution<A, B, E>{{}, x, a, b};
}

TYCHE_OBSERVED_ONLY_FAMILY(categorical_logit_glm)

}  // namespace tyche
