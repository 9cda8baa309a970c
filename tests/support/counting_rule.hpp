// tests/support/counting_rule.hpp — a unary rule (x²) that counts its evaluations, to observe
// how often a node is evaluated: sharing, hoisting out of loops, and folding.
#pragma once
#include <tyche/tyche.hpp>

namespace tyche_test {

struct counting_square {
  static constexpr const char* name = "counting_square";
  static constexpr bool has_payload = false;
  static inline int calls = 0;
  template <class T>
  T value(const T& x) const {
    ++calls;
    return x * x;
  }
  template <class T>
  T value(const T& x, T& dx) const {
    ++calls;
    dx = x + x;
    return x * x;
  }
};

template <class E>
auto counted(const E& e) {
  return tyche::detail::make_unary<counting_square>(e);
}

}  // namespace tyche_test
