// tyche/model/model.hpp — model(joint): the compiled log density of a joint distribution on the
// unconstrained space, with and without the log-Jacobian, parameter names, constrain /
// unconstrain, Stan-style random initialisation, prior and posterior predictive sampling.
#pragma once
#include <tyche/config.hpp>
#include <tyche/compile/program.hpp>
#include <tyche/compile/relocate.hpp>
#include <tyche/model/joint.hpp>
#include <tyche/random/philox.hpp>
#include <tyche/scalar/format.hpp>

#include <algorithm>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <functional>
#include <limits>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

namespace tyche {

template <class Joint>
class model_t {
 public:
  using joint_type = Joint;
  using layout = typename Joint::layout;
  using variables = typename Joint::variables;

  explicit model_t(const Joint& joint)
      : joint_(joint), with_jacobian_(compile_density<true>(joint)),
        without_jacobian_(compile_density<false>(joint)) {}

  /// Number of unconstrained parameters.
  [[nodiscard]] std::size_t dim() const { return with_jacobian_.dim(); }

  /// Number of constrained values: what constrain() returns and unconstrain() takes. It is
  /// dim() unless the model has a matrix variable (cholesky_factor_corr, cov_matrix, …), whose
  /// K² entries are its values while θ holds only its free coordinates.
  [[nodiscard]] std::size_t constrained_dim() const {
    std::size_t n = 0;
    for_each_variable([&](const auto& v, std::size_t) { n += detail::value_count(v.value_expression()); });
    return n;
  }

  /// Names of the constrained values, Stan style: "mu", "theta[1]", "theta[2]", …, and for a
  /// K × K matrix variable "L[1,1]", "L[1,2]", …, "L[K,K]" (row major; CmdStan's CSV writes
  /// L.1.1 and orders a matrix by column, which readers match by name). For models without
  /// matrix variables these are also the names of the coordinates of θ.
  [[nodiscard]] std::vector<std::string> parameter_names() const {
    std::vector<std::string> names;
    for_each_variable([&](const auto& v, std::size_t) {
      using V = std::remove_cvref_t<decltype(v)>;
      const std::string name(V::name.str());
      if constexpr (matrix_transform<V>) {
        const std::size_t k = v.transform().order();
        for (std::size_t i = 1; i <= k; ++i)
          for (std::size_t j = 1; j <= k; ++j)
            names.push_back(name + "[" + std::to_string(i) + "," + std::to_string(j) + "]");
      } else if constexpr (kind_of<typename V::param_type> == node_kind::vector_param) {
        for (std::size_t i = 1; i <= v.size(); ++i) names.push_back(name + "[" + std::to_string(i) + "]");
      } else {
        names.push_back(name);
      }
    });
    return names;
  }

  /// Names of the model's quantities (quantity<"name">(e) terms of its joint), in order, Stan
  /// style: "theta[1]", …, "theta[n]" for a vector, "Omega[1,1]", …, "Omega[r,c]" for one
  /// given a matrix shape (quantity<"Omega">(e, r, c)), "name" for a scalar. Empty without any.
  [[nodiscard]] std::vector<std::string> quantity_names() const {
    std::vector<std::string> names;
    for_each_quantity([&](const auto& q) {
      using Q = std::remove_cvref_t<decltype(q)>;
      const std::string name(Q::name.str());
      if (q.rows > 0) {
        for (std::size_t i = 1; i <= q.rows; ++i)
          for (std::size_t j = 1; j <= q.cols; ++j)
            names.push_back(name + "[" + std::to_string(i) + "," + std::to_string(j) + "]");
      } else if constexpr (is_vector_v<decltype(q.value)>) {
        const std::size_t n = detail::value_count(q.value);
        for (std::size_t i = 1; i <= n; ++i) names.push_back(name + "[" + std::to_string(i) + "]");
      } else {
        names.push_back(name);
      }
    });
    return names;
  }
  /// The number of the quantities' values (quantity_names().size()).
  [[nodiscard]] std::size_t quantity_count() const {
    std::size_t n = 0;
    for_each_quantity([&](const auto& q) { n += detail::value_count(q.value); });
    return n;
  }
  /// The quantities' values at θ (unconstrained), in the order of quantity_names().
  [[nodiscard]] std::vector<double> quantities(std::span<const double> theta) const {
    check_size(theta.size(), "quantities");
    std::vector<double> out;
    for_each_quantity([&](const auto& q) {
      const std::size_t at = out.size();
      out.resize(at + detail::value_count(q.value));
      detail::evaluate_at<layout>(q.value, layout_(), theta.data(), out.data() + at);
    });
    return out;
  }
  [[nodiscard]] std::vector<double> quantities(const std::vector<double>& theta) const {
    return quantities(std::span<const double>(theta));
  }

  /// log p(θ) on the unconstrained space; with jacobian = false, without the log-Jacobian.
  [[nodiscard]] double log_prob(std::span<const double> theta, bool jacobian = true) const {
    check_size(theta.size(), "log_prob");
    return jacobian ? with_jacobian_.value(theta, workspace(theta))
                    : without_jacobian_.value(theta, workspace(theta));
  }
  [[nodiscard]] double log_prob(const std::vector<double>& theta, bool jacobian = true) const {
    return log_prob(std::span<const double>(theta), jacobian);
  }
  /// log p(θ) and its gradient, written to grad.
  double log_prob_and_gradient(std::span<const double> theta, std::span<double> grad,
                               bool jacobian = true) const {
    check_size(theta.size(), "log_prob_and_gradient");
    if (grad.size() != dim())
      throw std::invalid_argument("tyche::model::log_prob_and_gradient: grad has " + std::to_string(grad.size()) +
                                  " values, expected " + std::to_string(dim()));
    return jacobian ? with_jacobian_.value_and_gradient(theta, grad, workspace(theta))
                    : without_jacobian_.value_and_gradient(theta, grad, workspace(theta));
  }
  double log_prob_and_gradient(const std::vector<double>& theta, std::vector<double>& grad,
                               bool jacobian = true) const {
    return log_prob_and_gradient(std::span<const double>(theta), std::span<double>(grad), jacobian);
  }

  /// The compiled log density (with the log-Jacobian): evaluate it for any scalar type, with a
  /// caller-owned workspace and no allocation (program::value_and_gradient, program::view()).
  [[nodiscard]] const auto& program() const { return with_jacobian_; }
  [[nodiscard]] const auto& program_without_jacobian() const { return without_jacobian_; }
  /// The number of data values one evaluation of the log density reads (observations,
  /// covariates, folded statistics; a buffer read by two terms counts twice): how data-heavy the
  /// model is (compile/relocate.hpp, data_values_read).
  [[nodiscard]] std::size_t data_values() const { return data_values_read(with_jacobian_.view()); }
  /// The part of data_values() that matrices read (X in matvec(X, v), multi_normal's Cholesky
  /// factor of a data covariance; compile/relocate.hpp, matrix_values_read).
  [[nodiscard]] std::size_t matrix_values() const { return matrix_values_read(with_jacobian_.view()); }
  /// The part of data_values() that the loops of the fused sums read (a likelihood over
  /// observations): what a split evaluation divides among its parts (compile/relocate.hpp,
  /// split_values_read).
  [[nodiscard]] std::size_t split_values() const { return split_values_read(with_jacobian_.view()); }
  /// The work of those loops, in units of one data value read by an elementwise loop (a streamed
  /// matvec's rows and columns weighted by what they cost; compile/relocate.hpp,
  /// split_work_read): what the CPU executor's automatic split is chosen by.
  [[nodiscard]] std::size_t split_work() const { return split_work_read(with_jacobian_.view()); }

  /// The constrained values of θ, in layout order: constrained_dim() values (the length of θ
  /// unless a matrix variable gives its K² entries).
  [[nodiscard]] std::vector<double> constrain(std::span<const double> theta) const {
    check_size(theta.size(), "constrain");
    std::vector<double> out(constrained_dim());
    std::size_t at_value = 0;
    for_each_variable([&](const auto& v, std::size_t) {
      detail::evaluate_at<layout>(v.value_expression(), layout_(), theta.data(), out.data() + at_value);
      at_value += detail::value_count(v.value_expression());
    });
    return out;
  }
  [[nodiscard]] std::vector<double> constrain(const std::vector<double>& theta) const {
    return constrain(std::span<const double>(theta));
  }

  /// θ from constrained values (the inverse of constrain). A value outside its variable's
  /// support throws, naming the variable, the index and the value.
  /// A draw of a fit may hold the model's quantities after the parameters' values (a row of
  /// nuts_fit::values): they are not read.
  [[nodiscard]] std::vector<double> unconstrain(std::span<const double> values) const {
    return unconstrain_values(values, false);
  }
  [[nodiscard]] std::vector<double> unconstrain(const std::vector<double>& values) const {
    return unconstrain(std::span<const double>(values));
  }
  /// unconstrain() of a sampler's draw, whose values a bounded variable's transform may have
  /// rounded onto a finite bound (a scale of 1e-330 is stored as 0, a probability 1 − 1e-17 as
  /// 1): such a value is taken as the nearest double inside the support (std::nextafter toward
  /// it), so the draw still has a θ (finite, far out) — what the quantities of a fit are computed
  /// at. Values beyond a bound, NaN, and the whole-vector transforms' values (simplex, matrices)
  /// are checked as unconstrain() checks them.
  [[nodiscard]] std::vector<double> unconstrain_draw(std::span<const double> values) const {
    return unconstrain_values(values, true);
  }

  /// Stan's default initialisation: every coordinate of θ uniform on (−2, 2).
  template <class Generator>
  [[nodiscard]] std::vector<double> initial_point(Generator& rng, double radius = 2.0) const {
    std::vector<double> theta(dim());
    if constexpr (std::is_same_v<Generator, counter_rng>) {  // as the device draws it (device_chain_initialise)
      for (auto& t : theta) t = rng.uniform(-radius, radius);
    } else {
      std::uniform_real_distribution<double> u(-radius, radius);
      for (auto& t : theta) t = u(rng);
    }
    return theta;
  }

  /// A draw from the prior: each random variable in order, given the ones before it. Returns
  /// constrained values in layout order.
  template <class Generator>
  [[nodiscard]] std::vector<double> sample_prior(Generator& rng) const {
    std::vector<double> theta(dim(), 0.0), values(constrained_dim(), 0.0);
    std::size_t at_value = 0;
    for_each_variable([&](const auto& v, std::size_t k) {
      const std::size_t n = detail::value_count(v.value_expression());
      auto draws = draw_from(v.distribution, n, theta, rng);
      if constexpr (matrix_transform<decltype(v)>) {  // the family draws the whole matrix
        std::copy(draws.begin(), draws.end(), values.begin() + at_value);
        unconstrain_whole(v, draws.data(), theta.data() + offset(k));
      } else if constexpr (whole_vector_transform<decltype(v)>) {
        using Tr = decltype(v.transform());
        Tr::restrict_draws(draws, [&](std::size_t i) {
          return draw_from(v.distribution, v.size(), theta, rng)[i];
        });
        std::copy(draws.begin(), draws.end(), values.begin() + at_value);
        unconstrain_whole(v, draws.data(), theta.data() + offset(k));
      } else {
        for (std::size_t i = 0; i < v.size(); ++i) {
          values[at_value + i] = draws[i];
          theta[offset(k) + i] = unconstrain_one(v, draws[i], i, theta);
        }
      }
      at_value += n;
    });
    return values;
  }

  /// A posterior (or prior) predictive draw of every observation, given θ (unconstrained, as
  /// log_prob takes it): one vector per observed term, in the order of the joint. For the
  /// constrained values a fit or sample_prior gives, sample_observations_at(values, rng).
  template <class Generator>
  [[nodiscard]] std::vector<std::vector<double>> sample_observations(std::span<const double> theta,
                                                                      Generator& rng) const {
    check_size(theta.size(), "sample_observations");
    std::vector<double> th(theta.begin(), theta.end());
    std::vector<std::vector<double>> out;
    for_each_observed(
        [&](const auto& t, std::size_t) { out.push_back(draw_from(t.distribution, detail::value_count(t.value), th, rng)); });
    return out;
  }

  /// sample_observations given constrained values (constrained_dim() of them, in the order of
  /// constrain(): a fit's draw, sample_prior's output), unconstrained first. With a draw of a
  /// fit this is a posterior predictive draw, with sample_prior's a prior predictive one.
  template <class Generator>
  [[nodiscard]] std::vector<std::vector<double>> sample_observations_at(std::span<const double> values,
                                                                         Generator& rng) const {
    if (values.size() != constrained_dim() && values.size() != constrained_dim() + quantity_count())
      throw std::invalid_argument("tyche::model::sample_observations_at: got " + std::to_string(values.size()) +
                                  " values, expected " + std::to_string(constrained_dim()) +
                                  " (constrained: a fit's draw or sample_prior's output)");
    std::vector<double> theta;
    try {
      theta = unconstrain_draw(values);  // a value rounded onto its bound: the nearest one inside
    } catch (const std::invalid_argument& e) {  // (one draw: fit.draw(chain, d), not a misaligned slice)
      throw std::invalid_argument(std::string("tyche::model::sample_observations_at: ") + e.what() +
                                  " (values must be one draw, constrained: fit.draw(chain, d) or sample_prior's output)");
    }
    return sample_observations(std::span<const double>(theta), rng);
  }
  template <class Generator>
  [[nodiscard]] std::vector<std::vector<double>> sample_observations_at(const std::vector<double>& values,
                                                                         Generator& rng) const {
    return sample_observations_at(std::span<const double>(values), rng);
  }

  [[nodiscard]] const Joint& joint() const { return joint_; }

  /// The log-likelihood of each observation at θ (unconstrained), for leave-one-out
  /// cross-validation (diagnostics/loo.hpp): the observed terms of joint(...) in order, each
  /// vector of observations element by element (log p(yᵢ | θ)); a term whose log density is not
  /// a sum over its elements (a multivariate family, hmm_marginal) or that observes one value
  /// counts as one observation. target(e) terms are not observations and are left out.
  [[nodiscard]] TYCHE_COLD std::vector<double> pointwise_log_likelihood(std::span<const double> theta) const {
    check_size(theta.size(), "pointwise_log_likelihood");
    std::vector<double> out;
    for_each_observed([&](const auto& t, std::size_t) {
      const auto e = pointwise_expression(t);
      const std::size_t at = out.size();
      out.resize(at + detail::value_count(e));
      detail::evaluate_at<layout>(e, layout_(), theta.data(), out.data() + at);
    });
    return out;
  }
  /// The observed terms of several values that pointwise_log_likelihood counts as one
  /// observation (their log density is not a sum over the values: a multivariate family,
  /// categorical_logit's shared normaliser, hmm_marginal), described as in messages.
  [[nodiscard]] TYCHE_COLD std::vector<std::string> observations_counted_whole() const {
    std::vector<std::string> out;
    for_each_observed([&](const auto& t, std::size_t term) {
      using E = std::remove_cvref_t<decltype(pointwise_expression(t))>;
      if (!is_vector_v<detail::node_t<E>> && detail::value_count(t.value) > 1)
        out.push_back("term " + std::to_string(term) + ", " + detail::describe_term(t));
    });
    return out;
  }
  /// A name for each value of pointwise_log_likelihood, in its order: the observed data's name
  /// with the element (`y[3]`, 1-based; data(y, "y") names it), else `term k[i]` (k: the term's
  /// place in joint(...)); a term counted whole is named without an element.
  [[nodiscard]] TYCHE_COLD std::vector<std::string> observation_names() const {
    std::vector<std::string> out;
    for_each_observed([&](const auto& t, std::size_t term) {
      using V = std::remove_cvref_t<decltype(t.value)>;
      std::string base = "term " + std::to_string(term);
      if constexpr (kind_of<V> == node_kind::data_vector)
        if (t.value.name != nullptr) base = t.value.name;
      const std::size_t n = detail::value_count(pointwise_expression(t));
      if (n == 1 && !is_vector_v<detail::node_t<decltype(pointwise_expression(t))>>) out.push_back(base);
      else
        for (std::size_t i = 0; i < n; ++i) out.push_back(base + "[" + std::to_string(i + 1) + "]");
    });
    return out;
  }

  /// The log density's terms at θ (unconstrained), one per term of joint(...) in order: a random
  /// variable's log prior plus its log-Jacobian, an observation's log-likelihood, a target(e)'s
  /// value. They add up to log_prob(θ) up to rounding. Each term is evaluated by itself, without
  /// the compiled program's folding: for finding which term is −∞ or NaN, not for speed.
  [[nodiscard]] TYCHE_COLD std::vector<double> log_prob_terms(std::span<const double> theta) const {
    check_size(theta.size(), "log_prob_terms");
    std::vector<double> out;
    joint_.template for_each_term<true>([&](const auto&, const auto& e) {
      double v = 0;
      detail::evaluate_at<layout>(e, layout_(), theta.data(), &v);
      out.push_back(v);
    });
    return out;
  }
  /// What each term of joint(...) is, for messages, in the order of log_prob_terms: "the random
  /// variable 'mu' (normal)", "normal(...).observe(y) (y has 7 values, …)", "target(...)".
  [[nodiscard]] TYCHE_COLD std::vector<std::string> term_descriptions() const {
    std::vector<std::string> out;
    joint_.template for_each_term<true>([&](const auto& t, const auto&) { out.push_back(detail::describe_term(t)); });
    return out;
  }
  /// The terms that are not finite at θ, for messages ("" when all are): "term 3 of joint(...),
  /// normal(...).observe(y) (y has 7 values, …), is -inf" (at most three, then "…").
  [[nodiscard]] TYCHE_COLD std::string non_finite_terms(std::span<const double> theta) const {
    const std::vector<double> values = log_prob_terms(theta);
    std::vector<std::string> what, hints;
    std::string text;
    std::size_t shown = 0;
    for (std::size_t k = 0; k < values.size(); ++k) {
      if (std::isfinite(values[k])) continue;
      if (what.empty()) {
        what = term_descriptions();
        // What makes a family's log density NaN where its arguments' supports cannot tell
        // (cutpoints that do not increase): the family's own words, when it has them.
        joint_.template for_each_term<true>([&](const auto& t, const auto&) {
          if constexpr (requires { std::remove_cvref_t<decltype(t.distribution)>::non_finite_hint; })
            hints.emplace_back(std::remove_cvref_t<decltype(t.distribution)>::non_finite_hint);
          else
            hints.emplace_back();
        });
      }
      if (++shown > 3) {
        text += "; …";
        break;
      }
      if (!text.empty()) text += "; ";
      text += "term " + std::to_string(k + 1) + " of joint(...), " + what[k] + ", is " + detail::format_number(values[k]);
      if (!hints[k].empty()) text += " (" + hints[k] + ")";
    }
    return text;
  }

 private:
  // Every variable's parameter is listed, so a variable whose density does not involve it
  // (a flat prior, a uniform) still has its place in θ (with gradient 0).
  template <bool Jacobian>
  static auto compile_density(const Joint& joint) {
    return std::apply(
        [&](const auto&... p) {
          return detail::compile_with_layout<layout>(joint.template log_density<Jacobian>(), p...);
        },
        joint.parameters());
  }

  const detail::param_offsets<layout>& layout_() const { return with_jacobian_.view().layout; }

  /// f(term, k) for every term of joint(...), in order, k its 1-based place there.
  template <class F>
  void for_each_term(F&& f) const {
    std::size_t k = 0;
    std::apply([&](const auto&... t) { (f(t, ++k), ...); }, joint_.terms);
  }
  /// f(term, k) for each observed term, k its 1-based place in joint(...).
  template <class F>
  void for_each_observed(F&& f) const {
    for_each_term([&](const auto& t, std::size_t k) {
      if constexpr (detail::is_observed<std::remove_cvref_t<decltype(t)>>::value) f(t, k);
    });
  }
  /// An observed term's log density element by element: the summand of its sum over the
  /// observations, or the whole (scalar) log density when it is not such a sum.
  template <class T>
  static auto pointwise_expression(const T& t) {
    const auto lp = detail::as_node(t.log_density());
    using L = std::remove_cvref_t<decltype(lp)>;
    if constexpr (kind_of<L> == node_kind::sum && is_vector_v<detail::node_t<decltype(t.value)>>) {
      if constexpr (is_vector_v<std::remove_cvref_t<decltype(lp.a)>>) return lp.a;
      else return lp;
    } else {
      return lp;
    }
  }
  std::size_t offset(std::size_t k) const { return with_jacobian_.offset(k); }

  /// f(quantity) for each quantity term, in order.
  template <class F>
  void for_each_quantity(F&& f) const {
    for_each_term([&](const auto& t, std::size_t) {
      if constexpr (detail::is_quantity_term<std::remove_cvref_t<decltype(t)>>::value) f(t);
    });
  }
  /// f(variable, k) for each random variable, k its 0-based place among them.
  template <class F>
  void for_each_variable(F&& f) const {
    std::size_t k = 0;
    for_each_term([&](const auto& t, std::size_t) {
      if constexpr (detail::is_random_variable<std::remove_cvref_t<decltype(t)>>::value) f(t, k++);
    });
  }

  // Scratch space for matvec buffers: one per thread, so a model can be evaluated from several
  // threads at once (the sampler runs chains on threads).
  std::span<double> workspace(std::span<const double>) const {
    thread_local std::vector<double> ws;
    const std::size_t need = std::max(with_jacobian_.workspace_size(), without_jacobian_.workspace_size());
    if (ws.size() < need) ws.resize(need);
    return std::span<double>(ws.data(), need);
  }

  void check_size(std::size_t n, const char* fn) const {
    if (n != dim())
      throw std::invalid_argument(std::string("tyche::model::") + fn + ": got " + std::to_string(n) +
                                  " values, expected " + std::to_string(dim()));
  }

  /// Value of expression e (element i, or its only value) at θ.
  template <class E>
  double value_at(const E& e, std::size_t i, const std::vector<double>& theta) const {
    const std::vector<double> v = values_of(e, theta);
    return v.size() == 1 ? v[0] : v[i];
  }

  /// Variables whose transform maps the whole vector at once (ordered, positive_ordered).
  template <class V>
  static constexpr bool whole_vector_transform =
      requires(const std::remove_cvref_t<V>& v) {
        requires decltype(v.transform())::whole_vector;
      };

  /// Variables whose value is a K × K matrix (transforms/matrix.hpp).
  template <class V>
  static constexpr bool matrix_transform =
      requires(const std::remove_cvref_t<V>& v) {
        requires decltype(v.transform())::matrix_valued;
      };

  /// θ of a variable with a whole-vector transform from its constrained values x.
  template <class V>
  void unconstrain_whole(const V& v, const double* x, double* u) const {
    using Tr = decltype(v.transform());
    std::size_t k = 0;
    std::string problem, where;
    if constexpr (matrix_transform<V>) {
      const auto tr = v.transform();
      problem = tr.unconstrain_matrix(x, u, k);
      where = std::to_string(k / tr.order() + 1) + "," + std::to_string(k % tr.order() + 1);
    } else {
      problem = Tr::unconstrain_vector(x, u, v.size(), k);
      where = std::to_string(k + 1);
    }
    if (!problem.empty())
      throw std::invalid_argument("tyche::model::unconstrain: " + V::name.str() + "[" +
                                  where + "] = " + tyche::detail::format_number(x[k]) + " " + problem);
  }

  std::vector<double> unconstrain_values(std::span<const double> values, bool from_edge) const {
    if (values.size() != constrained_dim() && values.size() != constrained_dim() + quantity_count())
      throw std::invalid_argument("tyche::model::unconstrain: got " + std::to_string(values.size()) +
                                  " values, expected " + std::to_string(constrained_dim()));
    std::vector<double> theta(dim(), 0.0);
    std::size_t at_value = 0;
    for_each_variable([&](const auto& v, std::size_t k) {
      if constexpr (whole_vector_transform<decltype(v)>) {
        unconstrain_whole(v, values.data() + at_value, theta.data() + offset(k));
      } else {
        for (std::size_t i = 0; i < v.size(); ++i)
          theta[offset(k) + i] = unconstrain_one(v, values[at_value + i], i, theta, from_edge);
      }
      at_value += detail::value_count(v.value_expression());
    });
    return theta;
  }

  /// The unconstrained coordinate of element i of variable v with constrained value x, bounds
  /// evaluated at θ (earlier variables already filled in). from_edge: a value exactly on a finite
  /// bound is taken as the nearest double inside (unconstrain_draw).
  template <class V>
  double unconstrain_one(const V& v, double x, std::size_t i, const std::vector<double>& theta,
                         bool from_edge = false) const {
    const auto tr = v.transform();
    using Tr = decltype(tr);
    bool inside = true;
    double u = x;
    if constexpr (requires { tr.lower; tr.upper; }) {
      const double l = value_at(tr.lower, i, theta), h = value_at(tr.upper, i, theta);
      if (from_edge && l < h && x == l && std::isfinite(l)) x = std::nextafter(l, h);
      if (from_edge && l < h && x == h && std::isfinite(h)) x = std::nextafter(h, l);
      inside = Tr::contains(x, l, h);
      if (inside) u = Tr::unconstrain(x, l, h);
    } else if constexpr (requires { tr.lower; }) {
      const double l = value_at(tr.lower, i, theta);
      if (from_edge && x == l && std::isfinite(l)) x = std::nextafter(l, HUGE_VAL);
      inside = Tr::contains(x, l);
      if (inside) u = Tr::unconstrain(x, l);
    } else if constexpr (requires { tr.upper; }) {
      const double h = value_at(tr.upper, i, theta);
      if (from_edge && x == h && std::isfinite(h)) x = std::nextafter(h, -HUGE_VAL);
      inside = Tr::contains(x, h);
      if (inside) u = Tr::unconstrain(x, h);
    } else {
      inside = Tr::contains(x);
    }
    if (!inside) {
      std::string where(V::name.str());
      if (v.size() > 1 || kind_of<typename V::param_type> == node_kind::vector_param)
        where += "[" + std::to_string(i + 1) + "]";
      throw std::invalid_argument("tyche::model::unconstrain: " + where + " = " + tyche::detail::format_number(x) +
                                  " is outside its support (" + Tr::name + ")");
    }
    return u;
  }

  /// n draws from distribution d, its arguments evaluated at θ (elementwise for vectors).
  template <class D, class Generator>
  std::vector<double> draw_from(const D& d, std::size_t n, const std::vector<double>& theta,
                                Generator& rng) const {
    const auto args = std::apply(
        [&](const auto&... a) {
          return std::array<std::vector<double>, sizeof...(a)>{values_of(a, theta)...};
        },
        d.arguments());
    if constexpr (requires { D::whole_arguments; }) {  // arguments are whole vectors (categorical)
      return std::apply([&](const auto&... a) { return d.draw_all(rng, n, a...); }, args);
    } else {
      std::vector<double> out(n);
      for (std::size_t i = 0; i < n; ++i) {
        out[i] = [&]<std::size_t... J>(std::index_sequence<J...>) {
          return D::draw(rng, (args[J].size() == 1 ? args[J][0] : args[J][i])...);
        }(std::make_index_sequence<std::tuple_size_v<decltype(d.arguments())>>{});
      }
      return out;
    }
  }
  /// The values of expression e at θ (one for a scalar).
  template <class E>
  std::vector<double> values_of(const E& e, const std::vector<double>& theta) const {
    std::vector<double> v(detail::value_count(e));
    detail::evaluate_at<layout>(e, layout_(), theta.data(), v.data());
    return v;
  }

  Joint joint_;
  decltype(detail::compile_with_layout<layout>(std::declval<Joint>().template log_density<true>())) with_jacobian_;
  decltype(detail::compile_with_layout<layout>(std::declval<Joint>().template log_density<false>())) without_jacobian_;
};

/// The model of a joint distribution: `auto m = model(joint(mu, tau, ...))`, or of a callable
/// that returns one: `model([&] { ...; return joint(...); })`.
template <class J>
auto model(const J& j) {
  if constexpr (requires { j(); }) return model_t<std::remove_cvref_t<decltype(j())>>(j());
  else return model_t<J>(j);
}

/// The model a function of the data builds: `model([](const schools& d) { ...; return
/// joint(...); }, d)` calls f(d) once. The model views the data f reads through data(...), as
/// always: d must outlive the model (a named object, not a temporary), and f must take it by
/// reference (a by-value parameter is a compile error where the type says so). The same function makes
/// the model of other data of the same kind (`model(f, other)`), e.g. in simulation-based
/// calibration or cross-validation.
namespace detail {
/// The parameter type of a callable with one parameter that is not a template (a lambda with a
/// declared parameter type, a function): void when it cannot be known (a generic lambda).
template <class Sig>
struct single_parameter {
  using type = void;
};
template <class R, class P>
struct single_parameter<R (*)(P)> {
  using type = P;
};
template <class R, class C, class P>
struct single_parameter<R (C::*)(P) const> {
  using type = P;
};
template <class R, class C, class P>
struct single_parameter<R (C::*)(P)> {
  using type = P;
};
template <class F>
auto parameter_of_callable() {
  if constexpr (std::is_function_v<F>) return std::type_identity<typename single_parameter<F*>::type>{};
  else if constexpr (requires { &F::operator(); }) return std::type_identity<typename single_parameter<decltype(&F::operator())>::type>{};
  else return std::type_identity<void>{};
}
}  // namespace detail

template <class F, class Data>
  requires std::invocable<const F&, const Data&>
auto model(const F& f, const Data& d) {
  using P = typename decltype(detail::parameter_of_callable<F>())::type;
  static_assert(std::is_void_v<P> || std::is_reference_v<P>,
                "tyche::model(f, data): f takes its data by value, so the model would keep views of "
                "a copy destroyed when f returns: take it by const reference, "
                "[](const my_data& d) { ... }");
  using J = std::remove_cvref_t<std::invoke_result_t<const F&, const Data&>>;
  return model_t<J>(f(d));
}
/// Forbidden: the model would keep views of a temporary's storage, destroyed at the end of the line.
template <class F, class Data>
  requires(!std::is_lvalue_reference_v<Data> && std::invocable<const F&, const Data&>)
auto model(const F&, Data&&) {
  static_assert(sizeof(Data) == 0,
                "tyche::model(f, data) keeps views of 'data', not a copy: pass a named object that "
                "outlives the model, not a temporary");
  return 0;
}

}  // namespace tyche
