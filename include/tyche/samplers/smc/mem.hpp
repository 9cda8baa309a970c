// tyche/samplers/smc/mem.hpp — stochastic memoisation and the Pólya urn (Chinese restaurant
// process), as in the paper's Figure 3 (after Church's `mem`, Goodman et al. 2008).
//
//   tyche::smc::polya_urn urn(1.0);                          // CRP with concentration α = 1
//   auto class_of = tyche::smc::mem([&](int n) { return urn.draw(tyche::smc::rng()); });
//   class_of(3) == class_of(3)                               // drawn once, then remembered
//
// mem(f) returns a callable that calls f the first time it sees an argument list and returns
// the remembered value afterwards. The table lives in the program's memory, so in the fork
// engine every particle inherits its ancestor's table. In a stepwise program, where the
// state is copied, keep a memo_table in the state instead (a mem whose function captured a
// reference into another particle's state would be wrong after a copy):
//
//   value = state.table(key, [&] { return draw(g); });
#pragma once
#include <tyche/random/philox.hpp>

#include <cstddef>
#include <map>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace tyche::smc {

/// A memo table: table(key, make) returns the value remembered for key, calling make() once.
template <class Key, class Value>
class memo_table {
 public:
  template <class Make>
  const Value& operator()(const Key& key, Make&& make) {
    auto it = values_.find(key);
    if (it == values_.end()) it = values_.emplace(key, std::forward<Make>(make)()).first;
    return it->second;
  }
  bool contains(const Key& key) const { return values_.count(key) != 0; }
  std::size_t size() const { return values_.size(); }

 private:
  std::map<Key, Value> values_;
};

namespace detail {
template <class M>
struct call_signature;
template <class C, class R, class... A>
struct call_signature<R (C::*)(A...) const> {
  using result = R;
  using key = std::tuple<std::decay_t<A>...>;
};
template <class C, class R, class... A>
struct call_signature<R (C::*)(A...)> : call_signature<R (C::*)(A...) const> {};
}  // namespace detail

/// Stochastic memoisation of f: the returned callable remembers f's value per argument list.
template <class F>
class memoised {
  using signature = detail::call_signature<decltype(&F::operator())>;
  using key = typename signature::key;
  using value = std::decay_t<typename signature::result>;

 public:
  explicit memoised(F f) : f_(std::move(f)) {}
  template <class... Args>
  const value& operator()(const Args&... args) {
    return table_(key(args...), [&] { return f_(args...); });
  }
  std::size_t size() const { return table_.size(); }

 private:
  F f_;
  memo_table<key, value> table_;
};

/// mem(f): f (a callable with one non-template call operator) memoised on its arguments
/// (Goodman et al. 2008).
template <class F>
memoised<F> mem(F f) {
  static_assert(requires { &F::operator(); },
                "tyche::smc::mem(f) requires a callable with exactly one, non-template call "
                "operator (a lambda with typed parameters)");
  return memoised<F>(std::move(f));
}

/// A Pólya urn: draw() returns an existing class k with probability n_k / (n + α) and a new
/// class (numbered from 0 in order of creation) with probability α / (n + α): the Chinese
/// restaurant process (Blackwell & MacQueen 1973). Copyable, so it can live in a state.
class polya_urn {
 public:
  explicit polya_urn(double alpha) : alpha_(alpha) {}
  /// Draws the class of the next customer and seats it (g: a counter_rng, or a correlated
  /// sweep's correlated_rng).
  template <class G>
  int draw(G& g) {
    const double total = static_cast<double>(customers_) + alpha_;
    double u = g.uniform01() * total;
    for (std::size_t k = 0; k < counts_.size(); ++k) {
      if (u < static_cast<double>(counts_[k])) return seat(static_cast<int>(k));
      u -= static_cast<double>(counts_[k]);
    }
    return seat(static_cast<int>(counts_.size()));
  }
  /// Seats a customer at class k (k == classes() opens a new class).
  int seat(int k) {
    if (static_cast<std::size_t>(k) == counts_.size()) counts_.push_back(0);
    ++counts_[static_cast<std::size_t>(k)];
    ++customers_;
    return k;
  }
  /// The number of occupied classes (the paper's urn.len_buckets).
  std::size_t classes() const { return counts_.size(); }
  std::size_t customers() const { return customers_; }
  const std::vector<std::size_t>& counts() const { return counts_; }
  double alpha() const { return alpha_; }

 private:
  double alpha_;
  std::size_t customers_ = 0;
  std::vector<std::size_t> counts_;
};

}  // namespace tyche::smc
