// tyche/compile/reduce_sum.hpp — rewrites of Σᵢ over a (folded) vector expression that take
// work out of the loop, decided from the types when a model is built (see
// docs/design/partial-evaluation.md):
//
//   Σ(A ± s) → ΣA ± n·s           Σ(−A) → −ΣA
//   Σ(y − (s + Xv))², Σ((s + Xv) − y)², and any Line with the same terms (Σ(y − Xv − s)²,
//   Σ(−Xv + y + c)², …) → residual_squares: O(k²) from sufficient statistics
//   Σ(y ± s)², Σ(s ± y)² (data y, scalar s)     → S + n·(ȳ ± s)²: O(1)
//   Σ(s·A), Σ(A·s) → s·ΣA,  Σ(A / s) → (ΣA) / s,  Σ((A·s)²) → s²·Σ(A²),  Σ((A / s)²) → Σ(A²) / s²
//     — these four only when the inner sum is itself reduced (see pull_out)
//   Σ d·(s + Xv), Σ Xv, and such terms of a Line of vectors (d data)
//                                               → s·Σd + (Xᵀd)·v: O(k), the other terms one loop
//
// for a scalar s (a parameter expression or a constant), a vector A, data y, a data matrix X
// with k columns, and a vector parameter v. Everything else stays one fused loop (sum_node).
// The statistics are computed here, once, into the program's fold_storage.
#pragma once
#include <tyche/config.hpp>
#include <tyche/autodiff/vector_ops.hpp>
#include <tyche/compile/constant.hpp>
#include <tyche/core/leaves.hpp>
#include <tyche/operations/functions.hpp>
#include <tyche/operations/linear.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <tuple>
#include <type_traits>
#include <vector>

namespace tyche::detail {

/// Which operand of a binary node N with rule Rule is a scalar: 0 (left), 1 (right), or −1 (N
/// is not such a node, or both operands are vectors, or both are scalars).
template <class N, class Rule>
inline constexpr int scalar_operand_v = [] {
  if constexpr (is_binary_rule_v<N, Rule>) {
    constexpr bool l = is_vector_v<meta::at<0, children_t<N>>>;
    constexpr bool r = is_vector_v<meta::at<1, children_t<N>>>;
    return !l && r ? 0 : (l && !r ? 1 : -1);
  } else {
    return -1;
  }
}();

/// The operand of a unary node N with rule Rule (void when N is not one).
template <class N, class Rule>
struct operand_of_unary {
  using type = void;
};
template <class Rule, class A>
struct operand_of_unary<unary_node<Rule, A>, Rule> {
  using type = A;
};

/// A linear predictor s + Xv (or Xv, or Xv + s): a matvec of a data matrix and a vector
/// parameter, plus an optional scalar.
template <class N>
inline constexpr bool is_linear_predictor_v = [] {
  if constexpr (kind_of<N> == node_kind::matvec) {
    return true;
  } else if constexpr (is_binary_rule_v<N, rules::add>) {
    using A = meta::at<0, children_t<N>>;
    using B = meta::at<1, children_t<N>>;
    return (!is_vector_v<A> && kind_of<B> == node_kind::matvec) ||
           (kind_of<A> == node_kind::matvec && !is_vector_v<B>);
  } else {
    return false;
  }
}();

template <class N>
const auto& predictor_matvec(const N& n) {
  if constexpr (kind_of<N> == node_kind::matvec) return n;
  else if constexpr (kind_of<decltype(n.a)> == node_kind::matvec) return n.a;
  else return n.b;
}
template <class N>
auto predictor_intercept(const N& n) {
  if constexpr (kind_of<N> == node_kind::matvec) return lit<0>;
  else if constexpr (kind_of<decltype(n.a)> == node_kind::matvec) return n.b;
  else return n.a;
}

/// (y − L)² or (L − y)² for data y and a linear predictor L.
template <class N>
inline constexpr bool is_squared_residual_v = [] {
  if constexpr (is_unary_rule_v<N, rules::square>) {
    using D = meta::at<0, children_t<N>>;
    if constexpr (is_binary_rule_v<D, rules::subtract>) {
      using A = meta::at<0, children_t<D>>;
      using B = meta::at<1, children_t<D>>;
      return (kind_of<A> == node_kind::data_vector && is_linear_predictor_v<B>) ||
             (is_linear_predictor_v<A> && kind_of<B> == node_kind::data_vector);
    } else {
      return false;
    }
  } else {
    return false;
  }
}();

/// A ± s or s ± A for a vector A of data only (after folding) and a scalar s of parameters: the
/// residual of an iid likelihood without covariates, Σ(y − μ)².
template <class X>
inline constexpr bool is_data_shift_v = [] {
  if constexpr (is_binary_rule_v<X, rules::add> || is_binary_rule_v<X, rules::subtract>) {
    using A = meta::at<0, children_t<X>>;
    using B = meta::at<1, children_t<X>>;
    return (is_vector_v<A> && !depends_on_params_v<A> && !is_vector_v<B>) ||
           (!is_vector_v<A> && is_vector_v<B> && !depends_on_params_v<B>);
  } else {
    return false;
  }
}();

/// Σᵢ (yᵢ ∓ s)² = S + n·(ȳ ∓ s)² with the centred S = Σ(yᵢ − ȳ)² and the mean ȳ computed once (the
/// one-covariate-free case of residual_squares; centred, so a large mean loses nothing): O(1).
template <class X, class Storage>
auto data_shift_squares(const X& x, Storage&) {
  using A = meta::at<0, children_t<X>>;
  constexpr bool data_left = is_vector_v<A>;
  const auto& y = [&]() -> const auto& {
    if constexpr (data_left) return x.a; else return x.b;
  }();
  const auto& s = [&]() -> const auto& {
    if constexpr (data_left) return x.b; else return x.a;
  }();
  const std::size_t n = y.size();
  std::vector<double> values(n);
  evaluate_constant_vector(y, values.data());
  double mean = 0;
  for (double v : values) mean += v;
  mean = n > 0 ? mean / static_cast<double>(n) : 0.0;
  double centred = 0;
  for (double v : values) centred += (v - mean) * (v - mean);
  // (y − s)² and (s − y)² are both (ȳ − s)² about the mean; (y + s)², (s + y)²: (ȳ + s)².
  auto shifted = [&] {
    if constexpr (is_binary_rule_v<X, rules::subtract>) return plain_binary<rules::subtract>(constant{mean}, s);
    else return plain_binary<rules::add>(constant{mean}, s);
  }();
  return plain_binary<rules::add>(
      constant{centred}, plain_binary<rules::multiply>(constant{static_cast<double>(n)}, plain_unary<rules::square>(shifted)));
}

/// The sufficient statistics of Σᵢ (yᵢ − s − xᵢᵀv)² (layout in residual_squares_node).
template <class Storage, class Y, class E>
const double* residual_statistics(const Y& y, const basic_data_matrix<E>& x, Storage& storage) {
  const std::size_t n = x.rows, k = x.cols;
  double* st = storage.allocate(3 + 2 * k + k * k);
  double* xbar = st + 3;
  double* sxy = xbar + k;
  double* sxx = sxy + k;
  double ybar = 0;
  for (std::size_t i = 0; i < n; ++i) ybar += y[i];
  ybar = n > 0 ? ybar / static_cast<double>(n) : 0.0;
  for (std::size_t a = 0; a < k; ++a) {
    double m = 0;
    for (std::size_t i = 0; i < n; ++i) m += x.ptr[i * k + a];
    xbar[a] = n > 0 ? m / static_cast<double>(n) : 0.0;
  }
  double syy = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double dy = y[i] - ybar;
    const E* row = x.ptr + i * k;
    syy += dy * dy;
    for (std::size_t a = 0; a < k; ++a) {
      const double da = row[a] - xbar[a];
      sxy[a] += da * dy;
      for (std::size_t b = 0; b <= a; ++b) sxx[a * k + b] += da * (row[b] - xbar[b]);
    }
  }
  for (std::size_t a = 0; a < k; ++a)
    for (std::size_t b = 0; b < a; ++b) sxx[b * k + a] = sxx[a * k + b];
  st[0] = syy;
  st[1] = ybar;
  st[2] = static_cast<double>(n);
  return st;
}

/// (c·y + S − c·Xv)² read as a Line (operations/linear.hpp), in any arrangement: one data vector y
/// and one matvec Xv with opposite unit coefficients, every other term a scalar. It is
/// (y − s − Xv)² with s = −c·S.
template <std::size_t N>
struct residual_terms {
  std::size_t y = N, mv = N;  // the data vector's and the matvec's indices (N: none)
  bool ok = false;
};
/// Finds y and Xv among N terms (kinds and unit signs given per term).
template <std::size_t N>
constexpr residual_terms<N> find_residual_terms(const std::array<bool, N + 1>& is_data,
                                                const std::array<bool, N + 1>& is_mv,
                                                const std::array<bool, N + 1>& is_vec,
                                                const std::array<int, N + 1>& sign) {
  residual_terms<N> r;
  int vectors = 0;
  for (std::size_t i = 0; i < N; ++i) {
    vectors += is_vec[i] ? 1 : 0;
    if (is_data[i] && r.y == N) r.y = i;
    if (is_mv[i] && r.mv == N) r.mv = i;
  }
  r.ok = vectors == 2 && r.y < N && r.mv < N && sign[r.y] != 0 && sign[r.y] == -sign[r.mv];
  return r;
}

template <class F>
struct residual_line {
  static constexpr bool value = false;
};
template <class Off, class... Ts>
struct residual_line<forms::line_form<Off, Ts...>> {
  static constexpr std::size_t n = sizeof...(Ts);
  static constexpr std::array<int, n + 1> sign{(is_literal_equal_v<typename Ts::coef_type, 1>    ? 1
                                                : is_literal_equal_v<typename Ts::coef_type, -1> ? -1
                                                                                                 : 0)...,
                                               0};
  static constexpr residual_terms<n> terms = find_residual_terms<n>(
      std::array<bool, n + 1>{(kind_of<typename Ts::node_type> == node_kind::data_vector)..., false},
      std::array<bool, n + 1>{(kind_of<typename Ts::node_type> == node_kind::matvec)..., false},
      std::array<bool, n + 1>{is_vector_v<typename Ts::node_type>..., false}, sign);
  static constexpr std::size_t y = terms.y, mv = terms.mv;
  static constexpr bool value = terms.ok;
};

/// The form f without its vector terms (the scalar part S of a Line).
template <class F>
auto scalar_part(const F& f) {
  return [&]<std::size_t... I>(std::index_sequence<I...>) {
    auto keep = [&](const auto& t) {
      if constexpr (is_vector_v<typename std::remove_cvref_t<decltype(t)>::node_type>) return forms::light_tuple<>{};
      else return forms::light_tuple{t};
    };
    return forms::make_line_form(f.off, forms::light_concat(keep(forms::light_get<I>(f.ts))...));
  }(std::make_index_sequence<F::size>{});
}

/// s·d for a scalar s that depends on parameters and data d (a data vector, or a product of
/// them): a column d with coefficient s. (s₁·(s₂·d) has coefficient s₁·s₂; (s·d₁)·d₂ column d₁d₂.)
template <class X>
inline constexpr bool is_scaled_data_v = [] {
  if constexpr (is_binary_rule_v<X, rules::multiply> && is_vector_v<X>) {
    using A = meta::at<0, children_t<X>>;
    using B = meta::at<1, children_t<X>>;
    constexpr bool a_scalar = !is_vector_v<A> && depends_on_params_v<A>;
    constexpr bool b_scalar = !is_vector_v<B> && depends_on_params_v<B>;
    constexpr bool a_data = kind_of<A> == node_kind::data_vector;
    constexpr bool b_data = kind_of<B> == node_kind::data_vector;
    if constexpr ((a_scalar && b_data) || (a_data && b_scalar)) return true;
    else if constexpr (a_scalar || a_data) return is_scaled_data_v<B>;
    else if constexpr (b_scalar || b_data) return is_scaled_data_v<A>;
    else return false;
  } else {
    return false;
  }
}();

/// The coefficient (a scalar node) of a scaled data column.
template <class X>
auto scaled_data_coefficient(const X& x) {
  using A = std::remove_cvref_t<decltype(x.a)>;
  using B = std::remove_cvref_t<decltype(x.b)>;
  if constexpr (!is_vector_v<A>) {
    if constexpr (kind_of<B> == node_kind::data_vector) return x.a;
    else return plain_binary<rules::multiply>(x.a, scaled_data_coefficient(x.b));
  } else if constexpr (!is_vector_v<B>) {
    if constexpr (kind_of<A> == node_kind::data_vector) return x.b;
    else return plain_binary<rules::multiply>(scaled_data_coefficient(x.a), x.b);
  } else if constexpr (kind_of<A> == node_kind::data_vector) {
    return scaled_data_coefficient(x.b);
  } else {
    return scaled_data_coefficient(x.a);
  }
}
/// Multiplies column[0 .. n) by the data of a scaled data column.
template <class X>
void scaled_data_column(const X& x, double* column, std::size_t n) {
  if constexpr (kind_of<X> == node_kind::data_vector) {
    for (std::size_t i = 0; i < n; ++i) column[i] *= x.ptr[i];
  } else if constexpr (is_vector_v<X>) {
    scaled_data_column(x.a, column, n);
    scaled_data_column(x.b, column, n);
  }
}

/// The kind of a vector Line term in a general residual: 1 data, 2 scaled data, 3 matvec, −1
/// anything else (0 for scalars).
template <class X>
inline constexpr int residual_term_kind_v = !is_vector_v<X>                          ? 0
                                            : kind_of<X> == node_kind::data_vector   ? 1
                                            : is_scaled_data_v<X>                    ? 2
                                            : kind_of<X> == node_kind::matvec        ? 3
                                                                                     : -1;

/// (Σ cⱼ yⱼ + Σ cₖ sₖ dₖ + c Xv + S)² read as a Line: data vectors y with constant coefficients,
/// scalar-times-data columns, at most one matvec, scalars S. It is (Y − s − Zw)² with
/// Y = Σ cⱼ yⱼ, s = −S, Z = [−cₖ dₖ … | −c X] and w = (sₖ …, v): a residual sum of squares in the
/// coefficients w (the kidiq regression written elementwise, b0 + b1·x1 + b2·x2).
template <class F>
struct general_residual {
  static constexpr bool value = false;
};
template <class Off, class... Ts>
struct general_residual<forms::line_form<Off, Ts...>> {
  static constexpr int kinds[] = {residual_term_kind_v<typename Ts::node_type>..., 0};
  static constexpr std::size_t columns = ((residual_term_kind_v<typename Ts::node_type> == 2 ? 1 : 0) + ... + 0);
  static constexpr std::size_t matvecs = ((residual_term_kind_v<typename Ts::node_type> == 3 ? 1 : 0) + ... + 0);
  static constexpr bool value = ((residual_term_kind_v<typename Ts::node_type> >= 0) && ...) &&
                                matvecs <= 1 && columns + matvecs >= 1;
};

template <class X>
inline constexpr bool is_general_residual_v = [] {
  if constexpr (is_vector_v<X> && forms::is_line_op_v<X>) return general_residual<forms::merged_line_form_t<X>>::value;
  else if constexpr (is_vector_v<X>) return is_scaled_data_v<X>;  // Σ(s·d)²
  else return false;
}();

/// residual_squares for a general residual (see general_residual).
template <class X, class Storage>
auto general_residual_squares(const X& x, Storage& storage) {
  const auto f = forms::merge_line(forms::decompose_line(x));
  using F = std::remove_cvref_t<decltype(f)>;
  const std::size_t n = x.size();
  // The coefficients: every scaled-data term's scalar, then the matvec's vector parameter.
  const auto coefficients = [&]<std::size_t... I>(std::index_sequence<I...>) {
    auto pick = [&](const auto& t) {
      using Xt = typename std::remove_cvref_t<decltype(t)>::node_type;
      if constexpr (residual_term_kind_v<Xt> == 2) return forms::light_tuple{scaled_data_coefficient(t.x)};
      else return forms::light_tuple<>{};
    };
    auto pick_matvec = [&](const auto& t) {
      using Xt = typename std::remove_cvref_t<decltype(t)>::node_type;
      if constexpr (residual_term_kind_v<Xt> == 3) return forms::light_tuple{t.x.v};
      else return forms::light_tuple<>{};
    };
    return forms::light_concat(pick(forms::light_get<I>(f.ts))..., pick_matvec(forms::light_get<I>(f.ts))...);
  }(std::make_index_sequence<F::size>{});
  std::size_t width = 0;  // K: the columns of Z
  forms::light_apply([&](const auto&... c) { ((width += detail::operand_size(c)), ...); }, coefficients);
  double* y = storage.allocate(n);
  double* z = storage.allocate(n * width);
  for (std::size_t i = 0; i < n; ++i) y[i] = 0.0;
  std::vector<double> column(n);
  std::size_t col = 0;
  auto fill = [&](std::size_t j, double scale, const auto* values, std::size_t stride) {
    for (std::size_t i = 0; i < n; ++i) z[i * width + j] = scale * values[i * stride];
  };
  meta::static_for<F::size>([&](auto i) {  // scaled-data columns, in the coefficients' order
    const auto& t = forms::light_get<decltype(i)::value>(f.ts);
    using Xt = typename std::remove_cvref_t<decltype(t)>::node_type;
    if constexpr (residual_term_kind_v<Xt> == 1) {
      for (std::size_t r = 0; r < n; ++r) y[r] += forms::coef_value(t.c) * t.x.ptr[r];
    } else if constexpr (residual_term_kind_v<Xt> == 2) {
      std::fill(column.begin(), column.end(), 1.0);
      scaled_data_column(t.x, column.data(), n);
      fill(col++, -forms::coef_value(t.c), column.data(), 1);
    }
  });
  meta::static_for<F::size>([&](auto i) {  // the matvec's columns last
    const auto& t = forms::light_get<decltype(i)::value>(f.ts);
    using Xt = typename std::remove_cvref_t<decltype(t)>::node_type;
    if constexpr (residual_term_kind_v<Xt> == 3) {
      for (std::size_t j = 0; j < t.x.x.cols; ++j) fill(col++, -forms::coef_value(t.c), t.x.x.ptr + j, t.x.x.cols);
    }
  });
  const auto w = forms::light_apply([&](const auto&... c) { return make_vector_op(ops::stack_map{}, width, c...); },
                            coefficients);
  const auto s = -forms::emit_line(scalar_part(f));
  residual_squares_node<std::remove_cvref_t<decltype(s)>, std::remove_cvref_t<decltype(w)>> r{{}, s, w, nullptr, width};
  r.stats = residual_statistics(y, data_matrix{{}, z, n, width}, storage);
  return r;
}

template <class X>
inline constexpr bool is_residual_line_v = [] {
  if constexpr (is_vector_v<X> && forms::is_line_op_v<X>) return residual_line<forms::merged_line_form_t<X>>::value;
  else return false;
}();

template <class N>
inline constexpr bool is_sum_node_v = kind_of<N> == node_kind::sum;

template <class A, class Storage>
auto reduce_sum(const A& a, Storage& storage);

// ---- Σ d·(s + Xv) = s·Σd + (Xᵀd)·v ------------------------------------------------------------

/// A linear predictor (is_linear_predictor_v), or Xv − s.
template <class N>
inline constexpr bool is_glm_predictor_v = [] {
  if constexpr (is_binary_rule_v<N, rules::subtract>) {
    return kind_of<meta::at<0, children_t<N>>> == node_kind::matvec && !is_vector_v<meta::at<1, children_t<N>>>;
  } else {
    return is_linear_predictor_v<N>;
  }
}();
/// d·L or L·d for a vector d of data only (after folding) and a predictor L = s + Xv (or Xv − s):
/// the term of a GLM's log density that is linear in the predictor (binomial_logit's and
/// neg_binomial_2_log's y·η). Its sum is s·Σd + Σⱼ (Xᵀd)ⱼ vⱼ, with Xᵀd (k values) and Σd computed
/// once: the loop no longer reads the matvec there, so where the matvec's one other occurrence
/// is in the same loop it is streamed (compile/stream.hpp: one read of X per gradient, not two).
template <class N>
inline constexpr bool is_weighted_predictor_v = [] {
  if constexpr (is_binary_rule_v<N, rules::multiply>) {
    using A = meta::at<0, children_t<N>>;
    using B = meta::at<1, children_t<N>>;
    return (is_vector_v<A> && !depends_on_params_v<A> && is_glm_predictor_v<B>) ||
           (is_glm_predictor_v<A> && is_vector_v<B> && !depends_on_params_v<B>);
  } else {
    return false;
  }
}();

/// A term Σ takes out of its loop as statistics of X: a weighted predictor, or a bare matvec
/// (d = 1).
template <class N>
inline constexpr bool is_predictor_term_v = is_weighted_predictor_v<N> || kind_of<N> == node_kind::matvec;

/// Σᵢ dᵢ·(s + xᵢᵀv) = (Σd)·s + Σⱼ wⱼvⱼ with w = Xᵀd (Weighted = false: d = 1; Xv − s: minus), w in the
/// program's fold storage; the sum over j is a loop of k elements.
template <bool Weighted, class D, class L, class Storage>
auto predictor_sum(const D& d, const L& l, Storage& storage) {
  constexpr bool minus = is_binary_rule_v<L, rules::subtract>;  // Xv − s
  const auto& mv = [&]() -> const auto& {
    if constexpr (minus) return l.a;
    else return predictor_matvec(l);
  }();
  const std::size_t rows = mv.x.rows, k = mv.x.cols;
  std::vector<double> dv(rows, 1.0);
  if constexpr (Weighted) evaluate_constant_vector(d, dv.data());
  double* w = storage.allocate(k);  // zeros
  double total = 0;
  for (std::size_t i = 0; i < rows; ++i) {
    total += dv[i];
    const auto* row = mv.x.ptr + i * k;
    for (std::size_t j = 0; j < k; ++j) w[j] += dv[i] * static_cast<double>(row[j]);
  }
  using V = std::remove_cvref_t<decltype(mv.v)>;
  const data_vector<extent_v<V>> wv{{}, w, k};
  const auto body = plain_binary<rules::multiply>(wv, mv.v);
  const sum_node<std::remove_cvref_t<decltype(body)>> dot{{}, body};
  if constexpr (kind_of<L> == node_kind::matvec) return dot;
  else if constexpr (minus) return plain_binary<rules::subtract>(dot, plain_binary<rules::multiply>(constant{total}, l.b));
  else return plain_binary<rules::add>(plain_binary<rules::multiply>(constant{total}, predictor_intercept(l)), dot);
}

/// Σ of one predictor term (is_predictor_term_v).
template <class X, class Storage>
auto predictor_term_sum(const X& x, Storage& storage) {
  if constexpr (kind_of<X> == node_kind::matvec) {
    return predictor_sum<false>(x, x, storage);
  } else if constexpr (is_glm_predictor_v<meta::at<1, children_t<X>>> &&
                       !depends_on_params_v<meta::at<0, children_t<X>>>) {
    return predictor_sum<true>(x.a, x.b, storage);
  } else {
    return predictor_sum<true>(x.b, x.a, storage);
  }
}

/// A Line with a predictor term among its terms: Σ takes the predictor terms out and leaves the
/// others one loop (predictor_split_sum).
template <class F>
struct predictor_split {
  static constexpr bool value = false;
};
template <class Off, class... Ts>
struct predictor_split<forms::line_form<Off, Ts...>> {
  static constexpr bool value = (is_predictor_term_v<typename Ts::node_type> || ...);
};
template <class A>
inline constexpr bool splits_predictor_terms_v = [] {
  if constexpr (is_vector_v<A> && forms::is_line_op_v<A>) return predictor_split<forms::merged_line_form_t<A>>::value;
  else return false;
}();

/// Σ(a + Σₖ cₖxₖ) = Σₖ cₖ·Σxₖ over the predictor terms (each O(k), predictor_term_sum) + Σ of the
/// other terms and the constant a (one loop, reduced further where the rules above allow; n times
/// their value when none of them is a vector).
template <class A, class Storage>
auto predictor_split_sum(const A& a, Storage& storage) {
  const auto f = forms::merge_line(forms::decompose_line(a));
  using F = std::remove_cvref_t<decltype(f)>;
  auto pick = [&]<bool Predictors, std::size_t K>(std::integral_constant<std::size_t, K>) {
    const auto& t = forms::light_get<K>(f.ts);
    using X = std::remove_cvref_t<decltype(t.x)>;
    if constexpr (is_predictor_term_v<X> != Predictors) return forms::light_tuple<>{};
    else if constexpr (Predictors) return forms::light_tuple{forms::term{t.c, predictor_term_sum(t.x, storage)}};
    else return forms::light_tuple{t};
  };
  auto split = [&]<bool Predictors, std::size_t... I>(std::index_sequence<I...>) {
    return forms::light_concat(pick.template operator()<Predictors>(std::integral_constant<std::size_t, I>{})...);
  };
  const auto taken = split.template operator()<true>(std::make_index_sequence<F::size>{});
  const auto rest = split.template operator()<false>(std::make_index_sequence<F::size>{});
  const auto others = forms::emit_line(forms::make_line_form(f.off, rest));
  using O = std::remove_cvref_t<decltype(others)>;
  if constexpr (decltype(rest)::size == 0 && is_literal_equal_v<O, 0>) {
    return forms::emit_line(forms::make_line_form(lit<0>, taken));
  } else {
    const auto loop = [&] {
      if constexpr (is_vector_v<O>) return reduce_sum(others, storage);
      else return plain_binary<rules::multiply>(constant{static_cast<double>(a.size())}, others);
    }();
    return forms::emit_line(
        forms::make_line_form(lit<0>, forms::light_concat(taken, forms::light_tuple{forms::term{lit<1>, loop}})));
  }
}

/// factor(ΣB) when ΣB reduces to something other than a loop; else Σa unchanged. Pulling a
/// factor out of a loop that stays a loop would save one multiply per element but cost the
/// fused single pass (a sum reached from the root through ± only propagates its adjoint while it
/// computes its value; one under a factor needs a second pass), so it is not done.
template <class A, class B, class Storage, class Wrap>
auto pull_out(const A& a, const B& inner, Storage& storage, Wrap wrap) {
  auto reduced = reduce_sum(inner, storage);
  if constexpr (is_sum_node_v<decltype(reduced)>) return sum_node<A>{{}, a};
  else return wrap(reduced);
}

/// A node equal to Σᵢ aᵢ for a folded vector expression a.
template <class A, class Storage>
auto reduce_sum(const A& a, Storage& storage) {
  if constexpr (!depends_on_params_v<A>) {
    return constant{constant_sum(a, storage)};  // data only (a sum made by a rule below): Σ now
  } else if constexpr (is_predictor_term_v<A>) {
    return predictor_term_sum(a, storage);
  } else if constexpr (splits_predictor_terms_v<A>) {
    return predictor_split_sum(a, storage);
  } else if constexpr (is_binary_rule_v<A, rules::add> || is_binary_rule_v<A, rules::subtract>) {
    using Rule = typename A::rule_type;
    using L = meta::at<0, children_t<A>>;
    using R = meta::at<1, children_t<A>>;
    if constexpr (is_vector_v<L> && !is_vector_v<R>) {  // Σ(A ± s) = ΣA ± n·s
      const constant n{static_cast<double>(a.size())};
      return plain_binary<Rule>(reduce_sum(a.a, storage), plain_binary<rules::multiply>(n, a.b));
    } else if constexpr (!is_vector_v<L> && is_vector_v<R>) {  // Σ(s ± A) = n·s ± ΣA
      const constant n{static_cast<double>(a.size())};
      return plain_binary<Rule>(plain_binary<rules::multiply>(n, a.a), reduce_sum(a.b, storage));
    } else {
      return sum_node<A>{{}, a};
    }
  } else if constexpr (scalar_operand_v<A, rules::multiply> == 0) {
    return pull_out(a, a.b, storage, [&](const auto& r) { return plain_binary<rules::multiply>(a.a, r); });
  } else if constexpr (scalar_operand_v<A, rules::multiply> == 1) {
    return pull_out(a, a.a, storage, [&](const auto& r) { return plain_binary<rules::multiply>(a.b, r); });
  } else if constexpr (scalar_operand_v<A, rules::divide> == 1) {
    return pull_out(a, a.a, storage, [&](const auto& r) { return plain_binary<rules::divide>(r, a.b); });
  } else if constexpr (is_unary_rule_v<A, rules::negate>) {
    return plain_unary<rules::negate>(reduce_sum(a.a, storage));  // −Σ stays fused
  } else if constexpr (is_unary_rule_v<A, rules::square>) {
    using X = typename operand_of_unary<A, rules::square>::type;
    if constexpr (scalar_operand_v<X, rules::multiply> == 0) {
      return pull_out(a, plain_unary<rules::square>(a.a.b), storage, [&](const auto& r) {
        return plain_binary<rules::multiply>(plain_unary<rules::square>(a.a.a), r);
      });
    } else if constexpr (scalar_operand_v<X, rules::multiply> == 1) {
      return pull_out(a, plain_unary<rules::square>(a.a.a), storage, [&](const auto& r) {
        return plain_binary<rules::multiply>(plain_unary<rules::square>(a.a.b), r);
      });
    } else if constexpr (scalar_operand_v<X, rules::divide> == 1) {
      return pull_out(a, plain_unary<rules::square>(a.a.a), storage, [&](const auto& r) {
        return plain_binary<rules::divide>(r, plain_unary<rules::square>(a.a.b));
      });
    } else if constexpr (is_data_shift_v<X>) {
      return data_shift_squares(a.a, storage);
    } else if constexpr (is_squared_residual_v<A>) {
      const auto& d = a.a;
      const auto& predictor = [&]() -> const auto& {
        if constexpr (kind_of<decltype(d.a)> == node_kind::data_vector) return d.b; else return d.a;
      }();
      const auto& y = [&]() -> const auto& {
        if constexpr (kind_of<decltype(d.a)> == node_kind::data_vector) return d.a; else return d.b;
      }();
      const auto& mv = predictor_matvec(predictor);
      auto s = predictor_intercept(predictor);
      using V = std::remove_cvref_t<decltype(mv.v)>;
      residual_squares_node<decltype(s), V> r{{}, s, mv.v, nullptr, mv.x.cols};
      r.stats = residual_statistics(y, mv.x, storage);
      return r;
    } else if constexpr (is_residual_line_v<X>) {
      const auto f = forms::merge_line(forms::decompose_line(a.a));
      using RL = residual_line<std::remove_cvref_t<decltype(f)>>;
      const auto& y = forms::light_get<RL::y>(f.ts).x;
      const auto& mv = forms::light_get<RL::mv>(f.ts).x;
      const auto scalars = forms::emit_line(scalar_part(f));  // S
      auto s = [&] {                                   // s = −c·S
        if constexpr (RL::sign[RL::y] == 1) return -scalars;
        else return scalars;
      }();
      using V = std::remove_cvref_t<decltype(mv.v)>;
      residual_squares_node<decltype(s), V> r{{}, s, mv.v, nullptr, mv.x.cols};
      r.stats = residual_statistics(y, mv.x, storage);
      return r;
    } else if constexpr (is_general_residual_v<X>) {
      return general_residual_squares(a.a, storage);
    } else {
      return sum_node<A>{{}, a};
    }
  } else {
    return sum_node<A>{{}, a};
  }
}

// ---- loops over the same length become one --------------------------------------------------

/// The static length of a loop (a sum node over a vector of compile-time size), else 0.
template <class T>
inline constexpr std::size_t loop_extent_v = [] {
  if constexpr (kind_of<T> == node_kind::sum) {
    constexpr std::size_t e = extent_v<meta::at<0, children_t<T>>>;
    return e == dynamic_extent ? std::size_t{0} : e;
  } else {
    return std::size_t{0};
  }
}();

/// The first two terms of a Line that are loops of one static length (i, j), or (n, n).
template <class F>
struct loop_pair;
template <class Off, class... Ts>
struct loop_pair<forms::line_form<Off, Ts...>> {
  static constexpr std::array<std::size_t, sizeof...(Ts) + 1> ext{loop_extent_v<typename Ts::node_type>..., 0};
  static constexpr std::array<std::size_t, 2> value = [] {
    constexpr std::size_t n = sizeof...(Ts);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = i + 1; j < n; ++j)
        if (ext[i] != 0 && ext[i] == ext[j]) return std::array<std::size_t, 2>{i, j};
    return std::array<std::size_t, 2>{n, n};
  }();
};

template <class F>
auto merge_loops_form(const F& f) {
  // Plain integers, not the array: a lambda below reads them (nvcc does not take an array's
  // operator[] on a captured constexpr local as a constant).
  constexpr std::size_t first = loop_pair<F>::value[0], second = loop_pair<F>::value[1];
  if constexpr (first == F::size) {
    return forms::emit_line(f);
  } else {
    const auto& ti = forms::light_get<first>(f.ts);
    const auto& tj = forms::light_get<second>(f.ts);
    // cᵢΣaᵢ + cⱼΣaⱼ = Σ(cᵢaᵢ + cⱼaⱼ): one pass over the elements instead of two.
    const auto body = forms::emit_line(
        forms::make_line_form(lit<0>, forms::light_tuple{forms::term{ti.c, ti.x.a}, forms::term{tj.c, tj.x.a}}));
    const sum_node<std::remove_cvref_t<decltype(body)>> loop{{}, body};
    auto ts = [&]<std::size_t... I>(std::index_sequence<I...>) {
      auto pick = [&]<std::size_t K>(std::integral_constant<std::size_t, K>) {
        if constexpr (K == first) return forms::light_tuple{forms::term{lit<1>, loop}};
        else if constexpr (K == second) return forms::light_tuple<>{};
        else return forms::light_tuple{forms::light_get<K>(f.ts)};
      };
      return forms::light_concat(pick(std::integral_constant<std::size_t, I>{})...);
    }(std::make_index_sequence<F::size>{});
    return merge_loops_form(forms::make_line_form(f.off, ts));
  }
}

/// n with the loops of one static length among its Line's terms fused into one loop (applied
/// to the folded and reduced log density).
template <class N>
auto merge_loops(const N& n) {
  if constexpr (!forms::is_line_op_v<N>) {
    return n;
  } else {
    using P = loop_pair<forms::merged_line_form_t<N>>;
    if constexpr (P::value[0] == forms::merged_line_form_t<N>::size) return n;
    else return merge_loops_form(forms::merge_line(forms::decompose_line(n)));
  }
}

}  // namespace tyche::detail
