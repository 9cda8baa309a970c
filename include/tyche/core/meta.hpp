// tyche/core/meta.hpp — the small compile-time vocabulary the expression core is built from:
// compile-time strings (parameter names), type lists, and paths into an expression tree.
#pragma once
#include <tyche/config.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

namespace tyche {

/// A string usable as a template argument: `param<"mu">`. At most 63 characters.
///
/// The characters are packed eight to a word in scalar members, not held in a char array: nvcc
/// writes the template arguments of every CUDA kernel's parameter types into the host code it
/// generates, and it spells an array member as `char [3]{...}`, which no host compiler parses.
/// With words it writes `fixed_string<3ul>{30061ul}`, which the constructor from words below
/// accepts; so a model's types (whose parameters carry their names) can be a kernel's argument
/// (docs/gpu.md).
template <std::size_t N>
struct fixed_string {
  static_assert(N >= 1 && N <= 64,
                "tyche: a name (param<\"...\">, a random variable's name) has at most 63 characters (bytes: "
                "fewer letters outside ASCII)");
  std::uint64_t w0 = 0, w1 = 0, w2 = 0, w3 = 0, w4 = 0, w5 = 0, w6 = 0, w7 = 0;

  constexpr fixed_string(const char (&s)[N]) {  // NOLINT: implicit by design
    for (std::size_t i = 0; i + 1 < N; ++i) word(i / 8) |= std::uint64_t(static_cast<unsigned char>(s[i])) << (8 * (i % 8));
  }
  /// The packed form (what nvcc's generated host code spells). Bytes past the name's length are
  /// cleared, so that equal names are equal template arguments.
  constexpr explicit fixed_string(std::uint64_t a, std::uint64_t b = 0, std::uint64_t c = 0, std::uint64_t d = 0,
                                  std::uint64_t e = 0, std::uint64_t f = 0, std::uint64_t g = 0, std::uint64_t h = 0)
      : w0(a), w1(b), w2(c), w3(d), w4(e), w5(f), w6(g), w7(h) {
    for (std::size_t i = N - 1; i < 64; ++i) word(i / 8) &= ~(std::uint64_t(0xff) << (8 * (i % 8)));
  }

  /// Character i (i < size()).
  [[nodiscard]] constexpr char operator[](std::size_t i) const {
    return static_cast<char>((word(i / 8) >> (8 * (i % 8))) & 0xffu);
  }
  [[nodiscard]] static constexpr std::size_t size() { return N - 1; }
  [[nodiscard]] std::string str() const {
    std::string out(size(), '\0');
    for (std::size_t i = 0; i < size(); ++i) out[i] = (*this)[i];
    return out;
  }
  template <std::size_t M>
  [[nodiscard]] constexpr bool starts_with(const char (&prefix)[M]) const {
    if constexpr (M > N) {  // a longer prefix (if, not a return before the loop: nvcc warns of
      return false;         // an unreachable loop)
    } else {
      for (std::size_t i = 0; i + 1 < M; ++i)
        if ((*this)[i] != prefix[i]) return false;
      return true;
    }
  }
  template <std::size_t M>
  constexpr bool operator==(const fixed_string<M>& other) const {
    if constexpr (M != N) {
      return false;
    } else {
      for (std::size_t i = 0; i < size(); ++i)
        if ((*this)[i] != other[i]) return false;
      return true;
    }
  }

 private:
  constexpr std::uint64_t& word(std::size_t k) {
    std::uint64_t* words[8] = {&w0, &w1, &w2, &w3, &w4, &w5, &w6, &w7};
    return *words[k];
  }
  [[nodiscard]] constexpr std::uint64_t word(std::size_t k) const {
    const std::uint64_t words[8] = {w0, w1, w2, w3, w4, w5, w6, w7};
    return words[k];
  }
};

namespace meta {

template <class... Ts>
struct list {
  static constexpr std::size_t size = sizeof...(Ts);
};

template <class... Ls>
struct concat_impl;
template <>
struct concat_impl<> {
  using type = list<>;
};
template <class... As>
struct concat_impl<list<As...>> {
  using type = list<As...>;
};
template <class... As, class... Bs, class... Rest>
struct concat_impl<list<As...>, list<Bs...>, Rest...> {
  using type = typename concat_impl<list<As..., Bs...>, Rest...>::type;
};
/// Concatenation of type lists.
template <class... Ls>
using concat = typename concat_impl<Ls...>::type;

/// Element I of a list, found by overload resolution on a class that derives from indexed<0, T0>,
/// indexed<1, T1>, …: one such class per list (shared by all its lookups) and no instantiation
/// per step. (A recursion at_impl<I, list<T, Ts...>> : at_impl<I − 1, list<Ts...>> instantiated
/// I classes per lookup, each naming the rest of the list: O(N²) classes whose arguments are
/// whole expression types — 23,710 of them for a model with a clamp written from step(), most of
/// its 120 s of clang -O0.)
template <std::size_t I, class T>
struct indexed {
  using type = T;
};
template <class Seq, class... Ts>
struct indexer;
template <std::size_t... Is, class... Ts>
struct indexer<std::index_sequence<Is...>, Ts...> : indexed<Is, Ts>... {};
template <std::size_t I, class T>
indexed<I, T> pick(const indexed<I, T>&);  // declared only: its return type is the answer

template <std::size_t I, class L>
struct at_impl;
template <std::size_t I, class... Ts>
struct at_impl<I, list<Ts...>> {
  static_assert(I < sizeof...(Ts), "tyche::meta::at: index past the end of the list");
  using type = typename decltype(tyche::meta::pick<I>(std::declval<const indexer<std::index_sequence_for<Ts...>, Ts...>&>()))::type;
};
/// The I-th element of a type list.
template <std::size_t I, class L>
using at = typename at_impl<I, L>::type;

/// Index of the first element E of L with Eq<E, T>::value, or L::size when there is none.
template <template <class, class> class Eq, class T, class L>
struct find_if_equal;
template <template <class, class> class Eq, class T, class... Ts>
struct find_if_equal<Eq, T, list<Ts...>> {
  static constexpr std::size_t value = [] {
    constexpr bool hits[] = {Eq<Ts, T>::value..., true};  // the sentinel stops the search
    std::size_t i = 0;
    while (!hits[i]) ++i;
    return i;
  }();
};

/// Number of elements E of L with Eq<E, T>::value.
template <template <class, class> class Eq, class T, class L>
struct count_equal;
template <template <class, class> class Eq, class T, class... Ts>
struct count_equal<Eq, T, list<Ts...>> {
  static constexpr std::size_t value = (std::size_t{0} + ... + (Eq<Ts, T>::value ? 1 : 0));
};

/// L without later duplicates (under Eq, an equivalence), first occurrences kept in order: the
/// indices of the first occurrences computed in one constant expression, the list picked by
/// them. (A recursion over a Done and a Todo list instantiated one class per element, each
/// naming both lists: O(N²) in the size of the types' names.)
template <template <class, class> class Eq, class L>
struct unique_impl;
template <template <class, class> class Eq>
struct unique_impl<Eq, list<>> {
  using type = list<>;
};
template <template <class, class> class Eq, class... Ts>
struct unique_impl<Eq, list<Ts...>> {
  struct kept_t {
    std::size_t index[sizeof...(Ts)] = {};
    std::size_t count = 0;
  };
  static constexpr kept_t kept = [] {
    constexpr std::size_t first[] = {find_if_equal<Eq, Ts, list<Ts...>>::value...};
    kept_t k;
    for (std::size_t i = 0; i < sizeof...(Ts); ++i)
      if (first[i] == i) k.index[k.count++] = i;
    return k;
  }();
  template <std::size_t... J>
  static list<at<kept.index[J], list<Ts...>>...> pick_kept(std::index_sequence<J...>);
  using type = decltype(pick_kept(std::make_index_sequence<kept.count>{}));
};
template <template <class, class> class Eq, class L>
using unique = typename unique_impl<Eq, L>::type;

template <class A, class B>
using same = std::is_same<A, B>;

TYCHE_EXEC_CHECK_DISABLE
template <class F, std::size_t... I>
TYCHE_HD TYCHE_INLINE constexpr void static_for_impl(F& f, std::index_sequence<I...>) {
  (f(std::integral_constant<std::size_t, I>{}), ...);
}
TYCHE_EXEC_CHECK_DISABLE
template <std::size_t N, class F, std::size_t... I>
TYCHE_HD TYCHE_INLINE constexpr void static_for_reverse_impl(F& f, std::index_sequence<I...>) {
  (f(std::integral_constant<std::size_t, N - 1 - I>{}), ...);
}

/// Calls f(std::integral_constant<std::size_t, I>{}) for I = 0 .. N-1, in order.
TYCHE_EXEC_CHECK_DISABLE
template <std::size_t N, class F>
TYCHE_HD TYCHE_INLINE constexpr void static_for(F&& f) {
  static_for_impl(f, std::make_index_sequence<N>{});
}
/// Calls f(std::integral_constant<std::size_t, I>{}) for I = N-1 down to 0.
TYCHE_EXEC_CHECK_DISABLE
template <std::size_t N, class F>
TYCHE_HD TYCHE_INLINE constexpr void static_for_reverse(F&& f) {
  static_for_reverse_impl<N>(f, std::make_index_sequence<N>{});
}

}  // namespace meta

/// A path from the root of an expression to one node: the child index taken at each level.
template <std::size_t... I>
struct path {};

namespace meta {
template <class P, std::size_t J>
struct push_impl;
template <std::size_t... I, std::size_t J>
struct push_impl<path<I...>, J> {
  using type = path<I..., J>;
};
template <class P, std::size_t J>
using push = typename push_impl<P, J>::type;
}  // namespace meta

}  // namespace tyche
