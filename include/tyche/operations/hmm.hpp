// tyche/operations/hmm.hpp — hmm_marginal(log_omega, Gamma, rho): the log marginal likelihood
// of a hidden Markov model, its discrete states summed out by the forward algorithm, with the
// gradient from the backward algorithm (Stan 2.24's function of the same name and arguments).
// The op is in autodiff/hmm.hpp. For a recursion that is not an HMM, write its step with scan
// (compile/scan.hpp).
#pragma once
#include <tyche/config.hpp>
#include <tyche/autodiff/hmm.hpp>
#include <tyche/core/nodes.hpp>
#include <tyche/interval/support.hpp>
#include <tyche/operations/functions.hpp>
#include <tyche/scalar/format.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>

namespace tyche {

namespace detail {
template <class T>
struct is_tuple_of : std::false_type {};
template <class... Ts>
struct is_tuple_of<std::tuple<Ts...>> : std::true_type {};

/// The operand nodes of a matrix argument given whole (one vector) or by rows (a std::tuple of
/// vectors), and the sizes of its pieces.
template <class M>
auto hmm_matrix_nodes(const M& m) {
  if constexpr (is_tuple_of<M>::value) {
    return std::apply([](const auto&... r) { return std::tuple{as_node(r)...}; }, m);
  } else {
    return std::tuple{as_node(m)};
  }
}

/// How far from 1 the sum of a row of Γ or of ρ may be: Stan's CONSTRAINT_TOLERANCE, with which
/// its hmm_marginal checks the same (check_simplex).
inline constexpr double hmm_sum_tolerance = 1e-8;

/// Data (a data_vector piece of log_omega, Γ or ρ): no NaN or +inf in log_omega; probabilities in
/// [0, 1] in Γ and ρ, and each of their distributions summing to 1. `rows` values make one
/// distribution (K: a row of Γ given whole, a row given alone, ρ), `piece` the 1-based row of a
/// matrix given by rows (0: given whole).
template <class Node>
void hmm_check_data(const Node& node, const char* arg, std::size_t piece, bool probabilities, std::size_t rows = 0) {
  if constexpr (kind_of<Node> == node_kind::data_vector) {
    const std::string head = std::string("tyche::hmm_marginal(log_omega, Gamma, rho): '") + arg + "'";
    for (std::size_t i = 0; i < node.size(); ++i) {
      const double v = node.ptr[i];
      const bool bad = probabilities ? !(v >= 0 && v <= 1) : (std::isnan(v) || v == INFINITY);
      if (bad)
        throw std::invalid_argument(head + (piece ? " row " + std::to_string(piece) : std::string()) + " has value " +
                                    tyche::detail::format_number(v) + " at index " + std::to_string(i + 1) +
                                    (probabilities ? " (1-based); it must be a probability in [0, 1]"
                                                   : " (1-based); log densities must not be NaN or +inf"));
    }
    if (!probabilities || rows == 0) return;
    for (std::size_t r = 0; r * rows < node.size(); ++r) {
      double total = 0;
      for (std::size_t j = 0; j < rows; ++j) total += node.ptr[r * rows + j];
      const double tolerance = std::max(hmm_sum_tolerance, 4.0 * static_cast<double>(rows) * 2.220446049250313e-16);
      if (!(std::fabs(total - 1) <= tolerance)) {
        const std::size_t row = piece ? piece : r + 1;
        const bool matrix = std::string_view(arg) == "Gamma";
        throw std::invalid_argument(
            head + (matrix ? " row " + std::to_string(row) : std::string()) + " sums to " +
            tyche::detail::format_number(total) + (matrix ? " (rows count from 1)" : std::string()) +
            "; it must be a probability distribution, summing to 1 (within 1e-8, as Stan checks)");
      }
    }
  }
}

/// A piece of Γ or ρ that is an expression: its support must be inside [0, 1] (at compile time
/// where the types say, otherwise with its data read); that its distributions sum to 1 the
/// evaluation checks (autodiff/hmm.hpp: NaN otherwise).
template <bool Rho, class Node>
void hmm_check_probabilities(const Node& node) {
  static_assert(Rho || argument_support_t<Node, domains::probability>::ok,
                "tyche::hmm_marginal(log_omega, Gamma, rho): Gamma must hold probabilities in [0, 1] (its "
                "rows simplexes: dirichlet variables, softmax(...), p and 1 - p of a beta p), but the support "
                "of a row (spelled out in tyche::support_is<...> in this diagnostic) is not inside [0, 1]"
                TYCHE_SUPPORT_HINT);
  static_assert(!Rho || argument_support_t<Node, domains::probability>::ok,
                "tyche::hmm_marginal(log_omega, Gamma, rho): rho must hold probabilities in [0, 1] (a "
                "simplex: a dirichlet variable, softmax(...)), but its support (spelled out in "
                "tyche::support_is<...> in this diagnostic) is not inside [0, 1]" TYCHE_SUPPORT_HINT);
  if constexpr (kind_of<Node> != node_kind::data_vector)
    check_argument<domains::probability>("hmm_marginal(log_omega, Gamma, rho)", Rho ? "rho" : "Gamma", node);
}
}  // namespace detail

/// log p(y) of a hidden Markov model with K states and N observations, the states summed out:
///   log_omega  the log densities of the observations in each state, log p(yₜ | zₜ = k): one
///              vector of K·N values (row k holds state k's N values: Stan's K × N matrix, row
///              major) or a std::tuple of K vectors of N values, e.g.
///              `std::tuple{pointwise_log_density(normal(mu[0], sigma), data(y)), …}`;
///   Gamma      the transition matrix, Γᵢⱼ = p(zₜ = j | zₜ₋₁ = i): one vector of K² values (row
///              major) or a std::tuple of its K rows (e.g. K simplex random variables);
///   rho        the initial state's distribution, a vector of K values (a simplex).
/// One scalar; add it to the model with target(...). Gradients flow to every argument.
/// O(N K²) per evaluation, forwards and backwards; the forward variables are kept (N·K values).
template <class Omega, class Gamma, class Rho>
auto hmm_marginal(const Omega& log_omega, const Gamma& gamma, const Rho& rho) {
  using NR = detail::node_t<Rho>;
  static_assert(is_vector_v<NR>, "tyche::hmm_marginal(log_omega, Gamma, rho): 'rho' (the initial state's "
                                 "distribution, K values) must be a vector expression");
  const NR rho_node = detail::as_node(rho);
  const std::size_t k = rho_node.size();
  if (k == 0) throw std::invalid_argument("tyche::hmm_marginal(log_omega, Gamma, rho): 'rho' has no values");
  constexpr bool omega_rows = detail::is_tuple_of<Omega>::value;
  constexpr bool gamma_rows = detail::is_tuple_of<Gamma>::value;
  const auto omega_nodes = detail::hmm_matrix_nodes(log_omega);
  const auto gamma_nodes = detail::hmm_matrix_nodes(gamma);
  const std::string fn = "tyche::hmm_marginal(log_omega, Gamma, rho): ";

  std::size_t n = 0;
  std::apply(
      [&](const auto&... r) {
        static_assert((is_vector_v<std::remove_cvref_t<decltype(r)>> && ...),
                      "tyche::hmm_marginal(log_omega, Gamma, rho): 'log_omega' must be a vector "
                      "expression (K*N values, row k for state k) or a std::tuple of K vector "
                      "expressions (N values each)");
        if constexpr (omega_rows) {
          if (sizeof...(r) != k)
            throw std::invalid_argument(fn + "'log_omega' has " + std::to_string(sizeof...(r)) +
                                        " rows but 'rho' has " + std::to_string(k) + " states");
          std::size_t row = 0;
          ((n = row == 0 ? r.size() : n,
            r.size() != n ? throw std::invalid_argument(fn + "'log_omega' row " + std::to_string(row + 1) + " has " +
                                                        std::to_string(r.size()) + " values, row 1 has " +
                                                        std::to_string(n))
                          : void(),
            detail::hmm_check_data(r, "log_omega", ++row, false)),
           ...);
        } else {
          const std::size_t total = (r.size(), ...);
          if (total % k != 0)
            throw std::invalid_argument(fn + "'log_omega' has " + std::to_string(total) +
                                        " values, not a multiple of the " + std::to_string(k) +
                                        " states of 'rho' (K*N values, row major)");
          n = total / k;
          (detail::hmm_check_data(r, "log_omega", 0, false), ...);
        }
      },
      omega_nodes);
  std::apply(
      [&](const auto&... r) {
        static_assert((is_vector_v<std::remove_cvref_t<decltype(r)>> && ...),
                      "tyche::hmm_marginal(log_omega, Gamma, rho): 'Gamma' must be a vector "
                      "expression (K*K values, row major) or a std::tuple of its K rows");
        if constexpr (gamma_rows) {
          if (sizeof...(r) != k)
            throw std::invalid_argument(fn + "'Gamma' has " + std::to_string(sizeof...(r)) + " rows but 'rho' has " +
                                        std::to_string(k) + " states");
          std::size_t row = 0;
          ((++row, r.size() != k ? throw std::invalid_argument(fn + "'Gamma' row " + std::to_string(row) + " has " +
                                                               std::to_string(r.size()) + " values, not " +
                                                               std::to_string(k))
                                 : void(),
            detail::hmm_check_data(r, "Gamma", row, true, k), detail::hmm_check_probabilities<false>(r)),
           ...);
        } else {
          const std::size_t total = (r.size(), ...);
          if (total != k * k)
            throw std::invalid_argument(fn + "'Gamma' has " + std::to_string(total) + " values, not " +
                                        std::to_string(k) + "*" + std::to_string(k) + " (the " + std::to_string(k) +
                                        " states of 'rho', row major)");
          (detail::hmm_check_data(r, "Gamma", 0, true, k), ...);
          (detail::hmm_check_probabilities<false>(r), ...);
        }
      },
      gamma_nodes);
  detail::hmm_check_data(rho_node, "rho", 0, true, k);
  detail::hmm_check_probabilities<true>(rho_node);

  const ops::hmm_marginal_map op{k, n, omega_rows, gamma_rows};
  const auto node = std::apply(
      [&](const auto&... o) {
        return std::apply([&](const auto&... g) { return make_vector_op(op, 1, o..., g..., rho_node); }, gamma_nodes);
      },
      omega_nodes);
  return at(node, 0);
}

}  // namespace tyche
