// tyche/compile/explain.hpp — explain(program or model): what a log density became after
// folding and the rewrites of partial evaluation, as one line of nested operations, e.g.
//
//   ((-1/2 * (residual_squares(alpha, beta[4]; n=434) / square(sigma))) - (434 * log(sigma))) - 398.8
//
// Leaves: numbers (literals as fractions), parameter names (vector parameters with their size),
// data[n], matrix[r x c]. A sum shows its length: sum[n](...). Use it to see whether a model's
// likelihood was reduced to sufficient statistics (residual_squares) or runs as a loop over the
// data (sum[n]).
//
// explain(m, with_supports) also prints the support of every node but numbers
// (interval/support.hpp, with the data read) after it in braces:
//
//   (exp(sigma{(-inf, inf)}){(0, inf)} * data[3]{[1, 2]}){(0, inf)}
#pragma once
#include <tyche/config.hpp>
#include <tyche/compile/program.hpp>
#include <tyche/interval/support.hpp>
#include <tyche/operations/functions.hpp>

#include <cstdio>
#include <string>
#include <type_traits>

namespace tyche {

namespace detail {

inline std::string explain_number(double x) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.10g", x);
  return buffer;
}

template <class Rule>
constexpr const char* infix_symbol() {
  if constexpr (std::is_same_v<Rule, rules::add>) return " + ";
  else if constexpr (std::is_same_v<Rule, rules::subtract>) return " - ";
  else if constexpr (std::is_same_v<Rule, rules::multiply>) return " * ";
  else if constexpr (std::is_same_v<Rule, rules::divide>) return " / ";
  else return nullptr;
}

template <std::intmax_t Num, std::intmax_t Den>
std::string explain_literal(literal<Num, Den>) {
  if constexpr (Den == 1) return std::to_string(Num);
  else return std::to_string(Num) + "/" + std::to_string(Den);
}

template <class N>
std::string explain_node(const N& n, bool supports);

/// n as text, followed by {its support} when supports is set (not for numbers).
template <class N>
std::string explain_child(const N& n, bool supports) {
  std::string s = explain_node(n, supports);
  constexpr node_kind k = kind_of<N>;
  if (supports && k != node_kind::literal && k != node_kind::constant)
    s += "{" + to_string(support(n)) + "}";
  return s;
}

/// The pieces appended in order. Not `std::string(name) + "..." + ...`: with a name known at
/// compile time, g++ 12 at -O2 warns about those chains (-Warray-bounds, a false positive, GCC
/// PR 105651).
template <class... Pieces>
std::string concat(const Pieces&... pieces) {
  std::string out;
  ((out += pieces), ...);
  return out;
}

template <class N>
std::string explain_node(const N& n, bool supports) {
  (void)supports;  // unused for leaves
  constexpr node_kind k = kind_of<N>;
  if constexpr (k == node_kind::literal) {
    using L = std::remove_cvref_t<N>;
    return explain_literal(L{});
  } else if constexpr (k == node_kind::constant) {
    return explain_number(n.value);
  } else if constexpr (k == node_kind::param) {
    return N::name.str();
  } else if constexpr (k == node_kind::vector_param) {
    return concat(N::name.str(), "[", std::to_string(n.size()), "]");
  } else if constexpr (k == node_kind::param_element) {
    return concat(N::vector_type::name.str(), "[", std::to_string(n.index + 1), "]");
  } else if constexpr (k == node_kind::data_vector) {
    return "data[" + std::to_string(n.size()) + "]";
  } else if constexpr (k == node_kind::data_matrix) {
    return "matrix[" + std::to_string(n.rows) + " x " + std::to_string(n.cols) + "]";
  } else if constexpr (k == node_kind::unary) {
    return concat(N::rule_type::name, "(", explain_child(n.a, supports), ")");
  } else if constexpr (k == node_kind::binary) {
    constexpr const char* symbol = infix_symbol<typename N::rule_type>();
    if constexpr (symbol != nullptr)
      return "(" + explain_child(n.a, supports) + symbol + explain_child(n.b, supports) + ")";
    else
      return concat(N::rule_type::name, "(", explain_child(n.a, supports), ", ", explain_child(n.b, supports), ")");
  } else if constexpr (k == node_kind::sum) {
    return "sum[" + std::to_string(n.a.size()) + "](" + explain_child(n.a, supports) + ")";
  } else if constexpr (k == node_kind::log_sum_exp) {
    return "log_sum_exp[" + std::to_string(n.a.size()) + "](" + explain_child(n.a, supports) + ")";
  } else if constexpr (k == node_kind::matvec) {
    return "matvec(" + explain_child(n.x, supports) + ", " + explain_child(n.v, supports) + ")";
  } else if constexpr (k == node_kind::vector_op) {
    std::string out = concat(N::op_type::name, "[", std::to_string(n.size()), "](");
    meta::static_for<children_t<N>::size>([&](auto j) {
      if (decltype(j)::value > 0) out += ", ";
      out += explain_child(n.template child<decltype(j)::value>(), supports);
    });
    return out + ")";
  } else if constexpr (k == node_kind::element) {
    return explain_child(n.v, supports) + "[" + std::to_string(n.index + 1) + "]";
  } else if constexpr (k == node_kind::param_gather) {
    return concat(N::vector_type::name.str(), "[idx[", std::to_string(n.size()), "]]");
  } else if constexpr (k == node_kind::residual_squares) {
    return "residual_squares(" + explain_child(n.s, supports) + ", " + explain_child(n.v, supports) + "; n=" +
           explain_number(n.stats[2]) + ")";
  } else {
    return "?";
  }
}

}  // namespace detail

/// Tag for explain(..., with_supports): print the support of every node.
struct explain_with_supports_t {};
inline constexpr explain_with_supports_t with_supports{};

/// The folded and rewritten expression of a compiled program, as one line.
template <class Expr, class Layout>
std::string explain(const program<Expr, Layout>& p) {
  return detail::explain_node(p.view().expr, false);
}
/// The same, with the support of every node (but numbers) in braces after it.
template <class Expr, class Layout>
std::string explain(const program<Expr, Layout>& p, explain_with_supports_t) {
  return detail::explain_child(p.view().expr, true);
}

/// The folded and rewritten log density of a model (with the log-Jacobian), as one line.
template <class M>
  requires requires(const M& m) { m.program(); }
std::string explain(const M& m) {
  return explain(m.program());
}
template <class M>
  requires requires(const M& m) { m.program(); }
std::string explain(const M& m, explain_with_supports_t) {
  return explain(m.program(), with_supports);
}

/// An expression (not compiled: nothing folded), with the support of every node.
template <expression E>
std::string explain(const E& e, explain_with_supports_t) {
  return detail::explain_child(detail::as_node(e), true);
}

}  // namespace tyche
