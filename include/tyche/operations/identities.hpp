// tyche/operations/identities.hpp — the identities that make a node vanish as it is built, the
// partial-evaluation rules that need neither a support nor data: x + 0, x · 1, x / 1, …, and a
// literal ∘ literal folded into one literal by the compiler (docs/design/partial-evaluation.md).
#pragma once
#include <tyche/config.hpp>
#include <tyche/autodiff/arithmetic.hpp>
#include <tyche/core/nodes.hpp>

#include <cstdint>
#include <type_traits>

namespace tyche::detail {

/// a ∘ b for two literals, done by the compiler in exact rational arithmetic (lit<1, 2> +
/// lit<1, 3> is lit<5, 6>); nothing for a division by lit<0>.
template <class Rule, class A, class B>
inline constexpr bool folds_literals_v =
    literal_parts<A>::is_literal && literal_parts<B>::is_literal &&
    (std::is_same_v<Rule, rules::add> || std::is_same_v<Rule, rules::subtract> ||
     std::is_same_v<Rule, rules::multiply> ||
     (std::is_same_v<Rule, rules::divide> && !is_literal_equal_v<B, 0>));
template <class Rule, class A, class B>
constexpr auto fold_literal_pair() {
  constexpr std::intmax_t n1 = literal_parts<A>::num, d1 = literal_parts<A>::den;
  constexpr std::intmax_t n2 = literal_parts<B>::num, d2 = literal_parts<B>::den;
  if constexpr (std::is_same_v<Rule, rules::add>) return reduced_literal<n1 * d2 + n2 * d1, d1 * d2>();
  else if constexpr (std::is_same_v<Rule, rules::subtract>) return reduced_literal<n1 * d2 - n2 * d1, d1 * d2>();
  else if constexpr (std::is_same_v<Rule, rules::multiply>) return reduced_literal<n1 * n2, d1 * d2>();
  else return reduced_literal<n1 * d2, d1 * n2>();
}

/// The identities that make a node vanish, applied as nodes are built (the partial-evaluation
/// rules that need no support): x + 0, 0 + x, x − 0, x · 1, 1 · x, x / 1 are x; a literal ∘
/// literal is a literal. (0 · x is not 0: x may be ∞ or NaN.)
template <class Rule, class NA, class NB>
inline constexpr int binary_identity_v =
    folds_literals_v<Rule, NA, NB> ? 3
    : ((std::is_same_v<Rule, rules::add> || std::is_same_v<Rule, rules::subtract>) && is_literal_equal_v<NB, 0>) ||
            ((std::is_same_v<Rule, rules::multiply> || std::is_same_v<Rule, rules::divide>) &&
             is_literal_equal_v<NB, 1>)
        ? 1  // the left operand
    : (std::is_same_v<Rule, rules::add> && is_literal_equal_v<NA, 0>) ||
            (std::is_same_v<Rule, rules::multiply> && is_literal_equal_v<NA, 1>)
        ? 2  // the right operand
        : 0;

}  // namespace tyche::detail
