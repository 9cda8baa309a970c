// tyche/model/joint.hpp — joint(...): the random variables and likelihood terms of a model,
// and from them its log density (priors, log-Jacobians, likelihoods) as one core expression.
#pragma once
#include <tyche/config.hpp>
#include <tyche/core/meta.hpp>
#include <tyche/distributions/distribution.hpp>
#include <tyche/distributions/random_variable.hpp>
#include <tyche/operations/functions.hpp>

#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

namespace tyche {

/// A free term of the log density, made by target(e): Stan's `target += e`.
template <class E>
struct log_density_term {
  E value;
  auto log_density() const { return value; }
};

/// Adds e to the model's log density (Stan's `target += e`, NumPyro's `factor`, PyMC's
/// `Potential`): `joint(mu, sigma, target(log_sum_exp(lp)))`. e is any scalar expression of the
/// parameters and data, or a vector expression (its elements are summed). The term is added as
/// written, on the scale of the parameters it is written in: when e stands for the density of a
/// *transformed* parameter, the log-Jacobian of that transform is the user's to add (a random
/// variable's own transform, from its declaration, is accounted for by the library as always).
template <detail::operand E>
auto target(const E& e) {
  using N = detail::node_t<E>;
  if constexpr (is_vector_v<N>) {
    auto total = sum(detail::as_node(e));
    return log_density_term<decltype(total)>{total};
  } else {
    return log_density_term<N>{detail::as_node(e)};
  }
}

/// A quantity recorded with every draw, not a term of the log density: quantity<"theta">(e)
/// among joint(...)'s terms, e any expression of the model's random variables and data (Stan's
/// transformed parameters, and generated quantities that are functions of them). nuts(),
/// laplace(), pathfinder() and advi() add its values to each draw after the parameters, under
/// Stan's names ("theta[1]", …, or "theta" for a scalar), so summary(fit) and the CSV writer
/// show them; model.quantities(θ) evaluates them at one point. A quantity that holds a matrix's
/// entries (row major) is named "Omega[1,1]", …, "Omega[rows,cols]" when its shape is given
/// (rows > 0: quantity<"Omega">(e, rows, cols)); an expression does not carry its values' shape.
template <fixed_string Name, class E>
struct quantity_term {
  static constexpr auto name = Name;
  static constexpr bool is_quantity = true;  // what detail::is_quantity_term reads
  E value;
  std::size_t rows = 0, cols = 0;  ///< a matrix's shape (row major), or 0, 0: a vector or scalar
  auto log_density() const { return literal<0>{}; }
};

/// quantity<"theta">(mu + tau * theta_raw): see quantity_term.
template <fixed_string Name, detail::operand E>
auto quantity(const E& e) {
  return quantity_term<Name, detail::node_t<E>>{detail::as_node(e)};
}

/// quantity<"Omega">(multiply_lower_tri_self_transpose(L_Omega), K, K): a quantity whose values
/// are a rows × cols matrix's entries, row major, named "Omega[1,1]", "Omega[1,2]", …,
/// "Omega[rows,cols]" (CmdStan's CSV writer writes Omega.1.1, …). Throws std::invalid_argument
/// when rows · cols is not the number of values e has.
template <fixed_string Name, detail::operand E>
auto quantity(const E& e, std::size_t rows, std::size_t cols) {
  quantity_term<Name, detail::node_t<E>> q{detail::as_node(e), rows, cols};
  std::size_t n = 1;
  if constexpr (is_vector_v<detail::node_t<E>>) n = q.value.size();
  if (rows == 0 || cols == 0 || n % rows != 0 || n / rows != cols)
    throw std::invalid_argument("tyche::quantity<\"" + std::string(Name.str()) + "\">(e, " + std::to_string(rows) +
                                ", " + std::to_string(cols) + "): a " + std::to_string(rows) + " × " +
                                std::to_string(cols) + " matrix has " + std::to_string(rows * cols) +
                                " entries, e has " + std::to_string(n) + (n == 1 ? " value" : " values"));
  return q;
}

namespace detail {
// By a member, as is_random_variable below.
template <class T>
struct is_quantity_term : std::bool_constant<requires { requires std::remove_cvref_t<T>::is_quantity == true; }> {};
template <class T>
struct is_log_density_term : std::false_type {};
template <class E>
struct is_log_density_term<log_density_term<E>> : std::true_type {};
// By a member, not a partial specialisation: nvcc's front end does not deduce a
// `fixed_string Name` from random_variable<Name, Dist, Shape>.
template <class T>
struct is_random_variable
    : std::bool_constant<requires { requires std::remove_cvref_t<T>::is_named_random_variable == true; }> {};
template <class T>
struct is_observed : std::false_type {};
template <class Dist, class X>
struct is_observed<observed<Dist, X>> : std::true_type {};

template <class L, class T>
struct append_if_variable {
  using type = L;
};
template <class... Ls, class T>
  requires is_random_variable<T>::value
struct append_if_variable<meta::list<Ls...>, T> {
  using type = meta::list<Ls..., T>;
};
template <class L, class... Ts>
struct variables_of {
  using type = L;
};
template <class L, class T, class... Ts>
struct variables_of<L, T, Ts...> {
  using type = typename variables_of<typename append_if_variable<L, T>::type, Ts...>::type;
};

template <class L>
struct params_of_variables;
template <class... Vs>
struct params_of_variables<meta::list<Vs...>> {
  using type = meta::list<typename Vs::param_type...>;
};

/// The support checks of a term's distribution (its arguments against their domains): static
/// assertions where the types decide, std::invalid_argument where constants or data do. They
/// run here, when a model is assembled, and not when a distribution is made: a density written
/// over bare parameters to be evaluated at chosen points (tests, compile(dist.log_prob(x), ...))
/// is not a model and is not checked (docs/design/partial-evaluation.md, "Supports and checks").
/// `auto`, as every check_supports(): instantiated where joint() calls it, so that clang's error
/// names the user's line (docs/design/model-api.md).
/// A named random variable's checks go through this function, whose first template argument
/// spells the variable's name (random_variable_named<'t', 'a', 'u'>): a failed check's
/// diagnostic then says which variable, where the term's own type shows its name only as
/// packed numbers (fixed_string). `auto` too, for clang's notes.
/// (The test of whether the distribution has checks instantiates them, an `auto` function's
/// body being needed for its type: so it is made here too.)
template <class T>
TYCHE_COLD std::string describe_term(const T& t);
/// A check that fails when the model is built (data, constants) says which variable or term too.
/// An observed term's checks go through it as well, Named then spelling the random variables
/// its arguments read (observation_reads<random_variable_named<'p', 'h', 'i'>, ...>): a variable
/// declared with a support its use there does not allow (neg_binomial_2_log(eta, phi) with phi ~
/// normal) is then named in the diagnostic.
template <class Named, class T>
auto check_variable_supports(const T& term) {
  if constexpr (requires { term.distribution.check_supports(); }) {
    try {
      term.distribution.check_supports();
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument("tyche::joint(...): " + describe_term(term) + ": " + e.what());
    }
  }
}
/// The random variables an observed term's arguments read, spelled (Named of
/// check_variable_supports for an observed term).
template <class... Named>
struct observation_reads {};
template <class Tuple>
struct observation_reads_of;
template <class... As>
struct observation_reads_of<std::tuple<As...>> {
  template <class L>
  struct spell;
  template <class... Ps>
  struct spell<meta::list<Ps...>> {
    using type = observation_reads<typename spelled_name<Ps::name>::type...>;
  };
  using type = typename spell<meta::unique<meta::same, meta::concat<params_of<node_t<As>>...>>>::type;
};
template <class T>
auto check_term_supports(const T& term) {
  if constexpr (requires { T::is_named_random_variable; })
    check_variable_supports<typename spelled_name<T::name>::type>(term);
  else if constexpr (is_observed<T>::value)
    check_variable_supports<
        typename observation_reads_of<std::remove_cvref_t<decltype(term.distribution.arguments())>>::type>(term);
  else if constexpr (requires { term.distribution.check_supports(); })
    term.distribution.check_supports();
}

/// True when every parameter of Used is declared in Layout (by name); else the diagnostic above.
template <class Layout, class Used>
constexpr bool every_variable_listed() {
  return []<class... Us>(meta::list<Us...>) {
    return ([]<class U>(std::type_identity<U>) {
      constexpr bool listed = []<class... Ls>(meta::list<Ls...>) { return ((Ls::name == U::name) || ...); }(Layout{});
      if constexpr (listed) return true;
      else return variable_missing_from_joint<typename spelled_name<U::name>::type>();
    }(std::type_identity<Us>{}) && ...);
  }(Used{});
}

/// "data#k" for the k-th data leaf of a term, or the name it was given (data(y, "y")).
template <class N>
TYCHE_COLD std::string data_label(const N& n, std::size_t k) {
  return n.name ? std::string(n.name) : "data#" + std::to_string(k);
}

/// The first value below node n that no model can use: a data value that is NaN or infinite,
/// or a constant that is NaN ("" when there is none). count numbers the data leaves met.
template <class N>
std::string first_non_finite(const N& n, std::size_t& count) {
  if constexpr (kind_of<N> == node_kind::data_vector) {
    ++count;
    for (std::size_t i = 0; i < n.size(); ++i)
      if (!std::isfinite(n.ptr[i]))
        return data_label(n, count) + "[" + std::to_string(i + 1) + "] = " + number_to_string(n.ptr[i]);
    return {};
  } else if constexpr (kind_of<N> == node_kind::data_matrix) {
    ++count;
    for (std::size_t i = 0; i < n.rows * n.cols; ++i)
      if (!std::isfinite(n.ptr[i]))
        return data_label(n, count) + "[" + std::to_string(i / n.cols + 1) + ", " + std::to_string(i % n.cols + 1) +
               "] = " + number_to_string(n.ptr[i]);
    return {};
  } else if constexpr (kind_of<N> == node_kind::constant) {
    return std::isnan(n.value) ? std::string("a constant = nan") : std::string();
  } else if constexpr (kind_of<N> == node_kind::vector_op && requires { N::op_type::checks_own_data; }) {
    return {};  // an op that checked its data operands when it was made (hmm_marginal)
  } else if constexpr (children_t<N>::size > 0 && requires { n.template child<0>(); }) {
    std::string found;
    meta::static_for<children_t<N>::size>([&](auto c) {
      if (found.empty()) found = first_non_finite(n.template child<decltype(c)::value>(), count);
    });
    return found;
  } else {
    return {};
  }
}

/// "has 8 values" for a vector node, "is a scalar" for a scalar.
template <class N>
TYCHE_COLD std::string size_text(const N& n) {
  if constexpr (is_vector_v<N>) return "has " + std::to_string(n.size()) + " values";
  else return "is a scalar";
}

/// " (uses theta, tau)", " (data 'x' with theta)": the named data and the random variables node
/// n reads (operand_reads; "" for unnamed data only).
template <class N>
TYCHE_COLD std::string reads_text(const N& n) {
  const std::string reads = operand_reads(n);
  return reads == "data" ? std::string() : " (" + reads + ")";
}

/// What a term is, for messages: "the random variable 'mu' (normal)", "normal(...).observe(y)
/// (y has 7 values, argument 1 has 8 values, argument 2 is a scalar)", "target(...)".
template <class T>
TYCHE_COLD std::string describe_term(const T& t) {
  // Built by appending: g++ 12 at -O2 warns (-Warray-bounds, a false positive in its
  // std::string operator+ chains, GCC PR 105651) on `std::string(a) + "..." + b` here.
  std::string text;
  if constexpr (is_random_variable<T>::value) {
    text += "the random variable '";
    text += T::name.str();
    text += "' (";
    text += T::distribution_type::family;
    text += ")";
    return text;
  } else if constexpr (is_quantity_term<T>::value) {
    text += "the quantity '";
    text += T::name.str();
    text += "'";
    return text;
  } else if constexpr (is_observed<T>::value) {
    text += std::remove_cvref_t<decltype(t.distribution)>::family;
    text += "(...).observe(y) (y ";
    text += size_text(as_node(t.value));
    std::size_t k = 0;
    std::apply([&](const auto&... a) { ((text += ", argument " + std::to_string(++k) + " " + size_text(as_node(a)) + reads_text(as_node(a))), ...); },
               t.distribution.arguments());
    text += ")";
    return text;
  } else {
    (void)t;
    text += "target(...)";
    return text;
  }
}

/// For an observed term whose vector arguments differ in size from its y (or, y a scalar, from
/// each other), what must hold ("" otherwise): describe_term already shows the sizes.
template <class T>
TYCHE_COLD std::string size_mismatch_text(const T& t) {
  if constexpr (is_observed<T>::value) {
    constexpr bool vector_y = is_vector_v<decltype(as_node(t.value))>;
    std::size_t want = 0;
    if constexpr (vector_y) want = as_node(t.value).size();
    bool differ = false;
    std::apply([&](const auto&... a) {
      auto check = [&](const auto& n) {
        if constexpr (is_vector_v<decltype(n)>) {
          if (want == 0) want = n.size();
          else if (n.size() != want) differ = true;
        }
      };
      (check(as_node(a)), ...);
    }, t.distribution.arguments());
    if (!differ) return {};
    return vector_y ? "every vector argument must have as many values as y"
                    : "its vector arguments must have the same number of values";
  } else {
    (void)t;
    return {};
  }
}

/// Term `index` of joint(...) (1-based) checked for data that no model can use: NaN or
/// infinite data values (covariates, scales, bounds; an observed y is checked by observe()
/// already) and NaN constants. Throws std::invalid_argument naming the term, the data (its
/// name or its place) and the index.
template <class T>
void check_term_data(const T& t, std::size_t index) {
  std::size_t count = 0;
  std::string found;
  if constexpr (is_random_variable<T>::value || is_observed<T>::value) {
    std::size_t k = 0;
    std::apply([&](const auto&... a) {
      ((found.empty() ? (++k, found = first_non_finite(as_node(a), count)) : found), ...);
    }, t.distribution.arguments());
    if (!found.empty()) found = "argument " + std::to_string(k) + " reads " + found;
  } else {
    found = first_non_finite(as_node(t.value), count);
    if (!found.empty()) found = "it reads " + found;
  }
  if (!found.empty())
    throw std::invalid_argument("tyche::joint(...): term " + std::to_string(index) + ", " + describe_term(t) +
                                ": " + found + "; data must be finite (remove or impute the value; indices count from 1)");
}

/// a + b, where a literal 0 on either side is dropped.
template <class A, class B>
auto add_terms(const A& a, const B& b) {
  if constexpr (std::is_same_v<A, literal<0>>) return b;
  else if constexpr (std::is_same_v<B, literal<0>>) return a;
  else return a + b;
}
}  // namespace detail

/// A model's random variables (parameters, in θ order) and likelihood terms.
template <class... Terms>
struct joint_t {
  std::tuple<Terms...> terms;

  /// The random variables, in the order given.
  using variables = typename detail::variables_of<meta::list<>, Terms...>::type;
  /// Their parameters: the layout of θ.
  using layout = typename detail::params_of_variables<variables>::type;

  /// The parameters of the random variables, in θ order (a std::tuple).
  auto parameters() const {
    return std::apply(
        [](const auto&... t) {
          return std::tuple_cat([](const auto& term) {
            if constexpr (detail::is_random_variable<std::remove_cvref_t<decltype(term)>>::value)
              return std::tuple{term.parameter};
            else return std::tuple<>{};
          }(t)...);
        },
        terms);
  }

  /// The log density on the unconstrained space: Σ log priors (+ Σ log-Jacobians when
  /// Jacobian) + Σ log-likelihoods.
  template <bool Jacobian>
  auto log_density() const {
    return std::apply([](const auto&... t) { return sum_terms(term<Jacobian>(t)...); }, terms);
  }

  /// Calls f(term, e) for every term in order, with e the term's share of log_density<Jacobian>():
  /// a random variable's log prior (+ its log-Jacobian), an observation's log-likelihood, a free
  /// term's value.
  template <bool Jacobian, class F>
  void for_each_term(F&& f) const {
    std::apply([&](const auto&... t) { (f(t, term<Jacobian>(t)), ...); }, terms);
  }

 private:
  template <bool Jacobian, class T>
  static auto term(const T& t) {
    // A term whose log density cannot be built (vectors of different sizes, …) is named, with
    // the sizes of y and the arguments.
    try {
      if constexpr (detail::is_random_variable<T>::value) {
        if constexpr (Jacobian) return detail::add_terms(detail::as_node(t.log_prior()), detail::as_node(t.log_jacobian()));
        else return detail::as_node(t.log_prior());
      } else {
        return detail::as_node(t.log_density());
      }
    } catch (const std::invalid_argument& e) {
      // Sizes that disagree are shown by the term's description; the operation that found them
      // (an internal node such as bernoulli_logit_term) would only repeat them.
      const std::string sizes = detail::size_mismatch_text(t);
      if (!sizes.empty()) throw std::invalid_argument("tyche::joint(...): " + detail::describe_term(t) + ": " + sizes);
      throw std::invalid_argument("tyche::joint(...): " + detail::describe_term(t) + ": " + e.what());
    }
  }
  template <class First, class... Rest>
  static auto sum_terms(const First& first, const Rest&... rest) {
    if constexpr (sizeof...(Rest) == 0) return first;
    else return detail::add_terms(first, sum_terms(rest...));
  }
};

namespace detail {
/// Instantiated for a name that two terms of a joint share (Name spells it): the same variable
/// twice (or two of one family and shape), or two different ones.
template <class Name>
constexpr bool variable_listed_twice() {
  static_assert(sizeof(Name) == 0,
                "tyche::joint(terms...): a random variable is listed twice, or two random variables "
                "have the same name: list each once, with a name of its own. The name is spelled out, "
                "a character at a time, in random_variable_named<...> (Name) of this diagnostic");
  return false;
}
template <class Name>
constexpr bool variables_share_name() {
  static_assert(sizeof(Name) == 0,
                "tyche::joint(terms...): two different random variables have the same name; give each "
                "its own name. The name is spelled out, a character at a time, in "
                "random_variable_named<...> (Name) of this diagnostic");
  return false;
}
/// True when no two of the variables Vs share a name; else one of the diagnostics above, for
/// the first name met twice.
template <class... Vs>
constexpr bool variables_named_once(meta::list<Vs...>) {
  constexpr std::size_t n = sizeof...(Vs);
  constexpr auto first_repeat = [] {  // {i, j}: Vs[j] has Vs[i]'s name, i < j; {n, n} if none
    // maybe_unused: a joint with no random variable left (do_ fixed them all) has no Vs.
    [[maybe_unused]] std::size_t i = 0, found_i = n, found_j = n;
    ([&]<class A>(std::type_identity<A>) {
      std::size_t j = 0;
      ([&]<class B>(std::type_identity<B>) {
        if (found_i == n && i < j && A::name == B::name) found_i = i, found_j = j;
        ++j;
      }(std::type_identity<Vs>{}), ...);
      ++i;
    }(std::type_identity<Vs>{}), ...);
    return std::pair<std::size_t, std::size_t>{found_i, found_j};
  }();
  if constexpr (first_repeat.first == n) {
    return true;
  } else {
    using A = meta::at<first_repeat.first, meta::list<Vs...>>;
    using B = meta::at<first_repeat.second, meta::list<Vs...>>;
    using name = typename spelled_name<A::name>::type;
    if constexpr (std::is_same_v<A, B>) return variable_listed_twice<name>();
    else return variables_share_name<name>();
  }
}
/// The parameters quantity term T reads (none for other terms).
template <class T>
struct quantity_params {
  using type = meta::list<>;
};
template <class T>
  requires is_quantity_term<T>::value
struct quantity_params<T> {
  using type = params_of<std::remove_cvref_t<decltype(std::declval<const T&>().value)>>;
};
/// Instantiated for a quantity's name that another quantity or a random variable has (Name
/// spells it).
template <class Name>
constexpr bool quantity_name_taken() {
  static_assert(sizeof(Name) == 0,
                "tyche::joint(terms...): a quantity<\"name\">(e) has the name of a random variable or of "
                "another quantity: give it a name of its own. The name is spelled out, a character "
                "at a time, in random_variable_named<...> (Name) of this diagnostic");
  return false;
}
/// Whether A is a quantity and B a quantity or a random variable of A's name (A itself counts).
template <class A, class B>
constexpr bool quantity_named_as() {
  if constexpr (is_quantity_term<A>::value && (is_quantity_term<B>::value || is_random_variable<B>::value))
    return A::name == B::name;
  else
    return false;
}
template <class A, class... Ts>
constexpr std::size_t quantity_name_count() {
  return (std::size_t{quantity_named_as<A, Ts>()} + ... + 0);
}
/// True when no quantity among Ts shares its name with a random variable or another quantity.
template <class... Ts>
constexpr bool quantities_named_once() {
  constexpr std::size_t n = sizeof...(Ts);
  constexpr bool clash[] = {(quantity_name_count<Ts, Ts...>() > 1)..., false};
  constexpr std::size_t first_clash = [&] {
    std::size_t i = 0;
    while (i < n && !clash[i]) ++i;
    return i;
  }();
  if constexpr (first_clash == n) return true;
  else return quantity_name_taken<typename spelled_name<meta::at<first_clash, meta::list<Ts...>>::name>::type>();
}
}  // namespace detail

/// The joint distribution of random variables and observations: `joint(mu, tau, y_obs)`.
/// Random variables are laid out in θ in the order given.
template <class... Terms>
auto joint(const Terms&... terms) {
  static_assert(sizeof...(Terms) > 0, "tyche::joint(...) requires at least one term");
  static_assert(((detail::is_random_variable<Terms>::value || detail::is_observed<Terms>::value ||
                  detail::is_log_density_term<Terms>::value || detail::is_quantity_term<Terms>::value) &&
                 ...),
                "tyche::joint(terms...) requires every term to be a named random variable "
                "(normal<\"mu\">(0, 1)), an observation (normal(mu, 1).observe(data(y))), a "
                "free log-density term (target(e)) or a quantity (quantity<\"theta\">(e))");
  using J = joint_t<Terms...>;
  static_assert(detail::variables_named_once(typename J::variables{}),
                "tyche::joint(terms...): every random variable needs a name of its own");
  // A quantity named as a variable or another quantity: quantity_name_taken's static_assert
  // names it (one error, not a second one here).
  [[maybe_unused]] constexpr bool named_once = detail::quantities_named_once<Terms...>();
  // The parameters the density uses and those the quantities read.
  using used = meta::concat<params_of<detail::node_t<decltype(std::declval<const J&>().template log_density<true>())>>,
                            typename detail::quantity_params<Terms>::type...>;
  // A variable missing from joint(...): every_variable_listed's own static_assert names it.
  [[maybe_unused]] constexpr bool listed = detail::every_variable_listed<typename J::layout, used>();
  (detail::check_term_supports(terms), ...);
  std::size_t index = 0;
  (detail::check_term_data(terms, ++index), ...);
  return J{{terms...}};
}

}  // namespace tyche
