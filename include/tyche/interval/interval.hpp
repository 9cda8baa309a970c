// tyche/interval/interval.hpp — constexpr interval arithmetic over the extended reals, with open
// and closed ends: the supports of expression nodes are computed with it (interval/support.hpp),
// at compile time from the types and at model construction from the data
// (docs/design/partial-evaluation.md, "Supports and checks"; the idea is Rainier's, whose every
// node carries its interval).
//
// An interval is {lo, hi, lo_closed, hi_closed}; lo = −∞ / hi = +∞ are allowed, and a closed
// infinite end means the value ±∞ itself can occur (log(0) = −∞, 1/0 = +∞). Every operation
// returns a SOUND superset of the exact image: never a smaller set. Where a bound is computed in
// floating point and the result may be inexact, it is moved outward by one ulp (exactness of
// + − × ÷ is tested with error-free transformations, so exact results such as 0 + 1·(0, 1) stay
// exact). Transcendental functions (exp, log, lgamma, …) have no constexpr implementation in
// C++20: in constant evaluation their images use exactly known values only (exp(0) = 1,
// logistic(0) = ½, the limits at ±∞) and monotonicity; at run time they call <cmath> and widen
// by a few ulps. Where an operand leaves a function's domain (log of a negative number), the
// image is the whole line: the point of the supports is to find such operands, and the checks
// look at the operand, not at the result.
#pragma once
#include <tyche/config.hpp>
#include <tyche/scalar/math.hpp>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

namespace tyche {

struct interval {
  double lo = -std::numeric_limits<double>::infinity();
  double hi = std::numeric_limits<double>::infinity();
  bool lo_closed = false;
  bool hi_closed = false;

  static constexpr double inf = std::numeric_limits<double>::infinity();

  /// The whole line (−∞, ∞).
  static constexpr interval whole() { return {}; }
  /// The empty set (represented as (+∞, −∞)).
  static constexpr interval empty() { return {inf, -inf, false, false}; }
  static constexpr interval point(double x) { return {x, x, true, true}; }
  static constexpr interval closed(double a, double b) { return {a, b, true, true}; }
  static constexpr interval open(double a, double b) { return {a, b, false, false}; }
  static constexpr interval closed_open(double a, double b) { return {a, b, true, false}; }
  static constexpr interval open_closed(double a, double b) { return {a, b, false, true}; }
  /// (0, ∞) and [0, ∞).
  static constexpr interval positive() { return open(0.0, inf); }
  static constexpr interval nonnegative() { return closed_open(0.0, inf); }

  [[nodiscard]] constexpr bool is_empty() const {
    return lo > hi || (lo == hi && !(lo_closed && hi_closed)) || lo != lo || hi != hi;
  }
  [[nodiscard]] constexpr bool is_whole() const {
    return lo == -inf && hi == inf && !lo_closed && !hi_closed;
  }
  [[nodiscard]] constexpr bool bounded_below() const { return lo > -inf; }
  [[nodiscard]] constexpr bool bounded_above() const { return hi < inf; }
  [[nodiscard]] constexpr bool contains(double x) const {
    return !is_empty() && (lo_closed ? x >= lo : x > lo) && (hi_closed ? x <= hi : x < hi);
  }
  /// True when every element of *this is in d (the empty set is inside everything).
  [[nodiscard]] constexpr bool subset_of(const interval& d) const {
    if (is_empty()) return true;
    if (d.is_empty()) return false;
    const bool lo_ok = lo > d.lo || (lo == d.lo && (d.lo_closed || !lo_closed));
    const bool hi_ok = hi < d.hi || (hi == d.hi && (d.hi_closed || !hi_closed));
    return lo_ok && hi_ok;
  }
  /// True when *this and d have no element in common.
  [[nodiscard]] constexpr bool disjoint_from(const interval& d) const;
  constexpr bool operator==(const interval& o) const {
    if (is_empty() && o.is_empty()) return true;
    return lo == o.lo && hi == o.hi && lo_closed == o.lo_closed && hi_closed == o.hi_closed;
  }
};

// ---- floating-point helpers (constexpr) --------------------------------------------------------

namespace detail::iv {

inline constexpr double inf = std::numeric_limits<double>::infinity();

constexpr bool is_nan(double x) { return x != x; }
/// Finite (no arithmetic: ∞ − ∞ is not a constant expression).
constexpr bool is_finite(double x) { return x > -std::numeric_limits<double>::infinity() && x < std::numeric_limits<double>::infinity(); }

/// The next double towards −∞ / +∞ (std::nextafter is not constexpr before C++23).
constexpr double next_down(double x) {
  if (is_nan(x) || x == -inf) return x;
  if (x == 0.0) return -std::numeric_limits<double>::denorm_min();
  const auto bits = std::bit_cast<std::uint64_t>(x);
  return std::bit_cast<double>(x > 0 ? bits - 1 : bits + 1);
}
constexpr double next_up(double x) { return -next_down(-x); }

/// Error-free sum (Knuth's TwoSum): s + e == a + b exactly, for finite a, b, s.
constexpr bool sum_exact(double a, double b, double s) {
  if (!is_finite(s)) return !is_finite(a) || !is_finite(b);  // overflow is inexact
  const double bb = s - a;
  const double e = (a - (s - bb)) + (b - bb);
  return e == 0.0;
}

/// Veltkamp split and Dekker's TwoProduct: whether a · b == p exactly (finite operands).
constexpr void split(double a, double& hi, double& lo) {
  const double c = 134217729.0 * a;  // 2^27 + 1
  hi = c - (c - a);
  lo = a - hi;
}
constexpr bool product_exact(double a, double b, double p) {
  if (a == 0.0 || b == 0.0) return p == 0.0;
  if (!is_finite(p) || !is_finite(a) || !is_finite(b)) return !is_finite(a) || !is_finite(b);
  // Far from overflow and underflow, Dekker's product is exact; near them, call it inexact.
  const double m = a < 0 ? -a : a, n = b < 0 ? -b : b, q = p < 0 ? -p : p;
  if (m > 1e150 || n > 1e150 || q < 1e-290 || q > 1e290) return false;
  double ah = 0, al = 0, bh = 0, bl = 0;
  split(a, ah, al);
  split(b, bh, bl);
  const double e = ((ah * bh - p) + ah * bl + al * bh) + al * bl;
  return e == 0.0;
}

/// A bound computed in round-to-nearest, moved outward unless it is known exact.
constexpr double down_unless(bool exact, double x) { return exact ? x : next_down(x); }
constexpr double up_unless(bool exact, double x) { return exact ? x : next_up(x); }

/// One end of an interval while it is being computed: a value and whether it is attained.
struct end {
  double value;
  bool closed;
};

}  // namespace detail::iv

constexpr bool interval::disjoint_from(const interval& d) const {
  if (is_empty() || d.is_empty()) return true;
  // The intersection's ends are the larger lo and the smaller hi.
  const bool a_lo = lo > d.lo || (lo == d.lo && !lo_closed);
  interval x{a_lo ? lo : d.lo, 0, a_lo ? lo_closed : d.lo_closed, false};
  if (lo == d.lo) x.lo_closed = lo_closed && d.lo_closed;
  const bool a_hi = hi < d.hi || (hi == d.hi && !hi_closed);
  x.hi = a_hi ? hi : d.hi;
  x.hi_closed = a_hi ? hi_closed : d.hi_closed;
  if (hi == d.hi) x.hi_closed = hi_closed && d.hi_closed;
  return x.is_empty();
}

// ---- set operations ------------------------------------------------------------------------------

/// The smallest interval containing a and b.
constexpr interval hull(const interval& a, const interval& b) {
  if (a.is_empty()) return b;
  if (b.is_empty()) return a;
  interval r;
  r.lo = a.lo < b.lo ? a.lo : b.lo;
  r.lo_closed = (a.lo == r.lo && a.lo_closed) || (b.lo == r.lo && b.lo_closed);
  r.hi = a.hi > b.hi ? a.hi : b.hi;
  r.hi_closed = (a.hi == r.hi && a.hi_closed) || (b.hi == r.hi && b.hi_closed);
  return r;
}

/// a ∩ b.
constexpr interval intersect(const interval& a, const interval& b) {
  if (a.is_empty() || b.is_empty()) return interval::empty();
  interval r;
  r.lo = a.lo > b.lo ? a.lo : b.lo;
  r.lo_closed = (a.lo != r.lo || a.lo_closed) && (b.lo != r.lo || b.lo_closed);
  r.hi = a.hi < b.hi ? a.hi : b.hi;
  r.hi_closed = (a.hi != r.hi || a.hi_closed) && (b.hi != r.hi || b.hi_closed);
  return r.is_empty() ? interval::empty() : r;
}

// ---- arithmetic ----------------------------------------------------------------------------------

constexpr interval operator-(const interval& a) {
  if (a.is_empty()) return a;
  return {-a.hi, -a.lo, a.hi_closed, a.lo_closed};
}

constexpr interval operator+(const interval& a, const interval& b) {
  using namespace detail::iv;
  if (a.is_empty() || b.is_empty()) return interval::empty();
  interval r;
  if (a.lo == -inf || b.lo == -inf) {
    r.lo = -inf;
    r.lo_closed = (a.lo == -inf && a.lo_closed) || (b.lo == -inf && b.lo_closed);
  } else {
    const double s = a.lo + b.lo;
    r.lo = down_unless(sum_exact(a.lo, b.lo, s), s);
    r.lo_closed = a.lo_closed && b.lo_closed;
  }
  if (a.hi == inf || b.hi == inf) {
    r.hi = inf;
    r.hi_closed = (a.hi == inf && a.hi_closed) || (b.hi == inf && b.hi_closed);
  } else {
    const double s = a.hi + b.hi;
    r.hi = up_unless(sum_exact(a.hi, b.hi, s), s);
    r.hi_closed = a.hi_closed && b.hi_closed;
  }
  return r;
}

constexpr interval operator-(const interval& a, const interval& b) { return a + (-b); }

namespace detail::iv {
/// x · y for interval ends, with 0 · ±∞ = 0 (a limit, as in interval arithmetic); rounded
/// down (Down) or up.
template <bool Down>
constexpr double end_product(double x, double y) {
  if (x == 0.0 || y == 0.0) return 0.0;
  const double p = x * y;
  return Down ? down_unless(product_exact(x, y, p), p) : up_unless(product_exact(x, y, p), p);
}
/// Whether the product of two ends is attained: both are, or one is an attained 0.
constexpr bool end_product_closed(const end& x, const end& y) {
  return (x.closed && y.closed) || (x.value == 0.0 && x.closed) || (y.value == 0.0 && y.closed);
}
}  // namespace detail::iv

constexpr interval operator*(const interval& a, const interval& b) {
  using namespace detail::iv;
  if (a.is_empty() || b.is_empty()) return interval::empty();
  const end xs[2] = {{a.lo, a.lo_closed}, {a.hi, a.hi_closed}};
  const end ys[2] = {{b.lo, b.lo_closed}, {b.hi, b.hi_closed}};
  interval r{inf, -inf, false, false};
  for (const end& x : xs) {
    for (const end& y : ys) {
      const double lo = end_product<true>(x.value, y.value);
      const double hi = end_product<false>(x.value, y.value);
      const bool closed = end_product_closed(x, y);
      if (lo < r.lo) {
        r.lo = lo;
        r.lo_closed = closed;
      } else if (lo == r.lo) {
        r.lo_closed = r.lo_closed || closed;
      }
      if (hi > r.hi) {
        r.hi = hi;
        r.hi_closed = closed;
      } else if (hi == r.hi) {
        r.hi_closed = r.hi_closed || closed;
      }
    }
  }
  // An attained 0 in either factor makes 0 attained, also strictly inside the result.
  return r;
}

/// 1/x. When x may be 0 the result contains ±∞ (1/0 = +∞ in IEEE arithmetic).
constexpr interval inverse(const interval& a) {
  using namespace detail::iv;
  if (a.is_empty()) return a;
  auto inv_down = [](double x) {  // lower bound of 1/x
    if (x == inf || x == -inf) return 0.0;
    const double q = 1.0 / x;
    return down_unless(product_exact(q, x, 1.0) && q * x == 1.0, q);
  };
  auto inv_up = [](double x) {
    if (x == inf || x == -inf) return 0.0;
    const double q = 1.0 / x;
    return up_unless(product_exact(q, x, 1.0) && q * x == 1.0, q);
  };
  const bool positive_side = a.lo > 0 || (a.lo == 0 && !a.lo_closed);
  const bool negative_side = a.hi < 0 || (a.hi == 0 && !a.hi_closed);
  if (positive_side) {  // (0, ∞]: 1/x decreasing
    interval r;
    r.lo = inv_down(a.hi);
    r.lo_closed = a.hi_closed;  // 1/∞ = 0 is attained only if ∞ is
    r.hi = a.lo == 0 ? inf : inv_up(a.lo);
    r.hi_closed = a.lo == 0 ? false : a.lo_closed;
    return r;
  }
  if (negative_side) return -inverse(-a);
  if (a.lo == 0 && a.hi > 0) {  // [0, b]: 1/0 = +∞
    return {inv_down(a.hi), inf, a.hi_closed, true};
  }
  if (a.hi == 0 && a.lo < 0) return {-inf, inv_up(a.lo), true, a.lo_closed};
  return {-inf, inf, true, true};
}

constexpr interval operator/(const interval& a, const interval& b) { return a * inverse(b); }

/// n · a for a count n (the sum of n elements of a).
constexpr interval scale(double n, const interval& a) {
  if (n == 0) return interval::point(0.0);
  return interval::point(n) * a;
}

// ---- elementwise functions ---------------------------------------------------------------------

namespace detail::iv {

/// Lower and upper bounds of f(x) for a function known exactly only at some points: the
/// image of a monotone function at a finite end that is not one of them is bracketed by the
/// nearest known points (a sound superset).
struct known_point {
  double x;
  double fx;
};

/// f(x) rounded down/up: at run time through Fn (<cmath>), widened by 4 ulps; in constant
/// evaluation from the known points of an increasing f.
template <bool Down, class Fn, std::size_t K>
constexpr double monotone_bound(double x, Fn fn, const known_point (&known)[K]) {
  for (const auto& p : known)
    if (p.x == x) return p.fx;
  if (!std::is_constant_evaluated()) {
    double y = fn(x);
    for (int i = 0; i < 4; ++i) y = Down ? next_down(y) : next_up(y);
    return y;
  }
  // Largest known point below x (for the lower bound) / smallest above (upper bound).
  double best = Down ? -inf : inf;
  for (const auto& p : known) {
    if (Down && p.x < x && p.fx > best) best = p.fx;
    if (!Down && p.x > x && p.fx < best) best = p.fx;
  }
  return best;
}

/// The image of [a] under an increasing f on its domain, given its limits at the ends of the
/// domain in `known` (which must include them). Attained ends stay attained where f is
/// strictly increasing and finite there; an end mapped to a known limit at ±∞ is attained only
/// if the infinite end is.
template <class Fn, std::size_t K>
constexpr interval increasing_image(const interval& a, Fn fn, const known_point (&known)[K]) {
  if (a.is_empty()) return a;
  interval r;
  r.lo = monotone_bound<true>(a.lo, fn, known);
  r.hi = monotone_bound<false>(a.hi, fn, known);
  // A bound taken from a known point strictly below/above the end is not attained.
  const bool lo_exact = [&] {
    for (const auto& p : known)
      if (p.x == a.lo) return true;
    return !std::is_constant_evaluated();
  }();
  const bool hi_exact = [&] {
    for (const auto& p : known)
      if (p.x == a.hi) return true;
    return !std::is_constant_evaluated();
  }();
  r.lo_closed = a.lo_closed && lo_exact;
  r.hi_closed = a.hi_closed && hi_exact;
  // Never past f's limits at the ends of its domain (known[0], known[K − 1]): a run-time bound
  // widened by ulps, or rounded to the limit (exp(−800) = 0), is put back to the limit, which
  // only the end of the domain itself attains.
  if (r.lo <= known[0].fx && a.lo != known[0].x) {
    r.lo = known[0].fx;
    r.lo_closed = false;
  }
  if (r.hi >= known[K - 1].fx && a.hi != known[K - 1].x) {
    r.hi = known[K - 1].fx;
    r.hi_closed = false;
  }
  return r;
}

template <class Fn, std::size_t K>
constexpr interval decreasing_image(const interval& a, Fn fn, const known_point (&known)[K]) {
  // f decreasing: f(x) = g(−x) with g increasing.
  known_point flipped[K];
  for (std::size_t i = 0; i < K; ++i) flipped[i] = {-known[K - 1 - i].x, known[K - 1 - i].fx};
  return increasing_image(-a, [fn](double x) { return fn(-x); }, flipped);
}

}  // namespace detail::iv

// Each function below is the image of an interval under the elementwise operation of the same
// name in operations/functions.hpp (rules in autodiff/).

namespace detail::iv {
inline constexpr known_point exp_points[] = {{-inf, 0.0}, {0.0, 1.0}, {inf, inf}};
inline constexpr known_point log_points[] = {{0.0, -inf}, {1.0, 0.0}, {inf, inf}};
inline constexpr known_point log1p_points[] = {{-1.0, -inf}, {0.0, 0.0}, {inf, inf}};
inline constexpr known_point expm1_points[] = {{-inf, -1.0}, {0.0, 0.0}, {inf, inf}};
inline constexpr known_point sqrt_points[] = {{0.0, 0.0}, {1.0, 1.0}, {inf, inf}};
inline constexpr known_point log1p_exp_points[] = {{-inf, 0.0}, {inf, inf}};
inline constexpr known_point logistic_points[] = {{-inf, 0.0}, {0.0, 0.5}, {inf, 1.0}};
inline constexpr known_point log_logistic_points[] = {{-inf, -inf}, {inf, 0.0}};
inline constexpr known_point log1m_logistic_points[] = {{-inf, 0.0}, {inf, -inf}};  // decreasing
inline constexpr known_point odd_unit_points[] = {{-inf, -1.0}, {0.0, 0.0}, {inf, 1.0}};  // tanh, erf
inline constexpr known_point digamma_points[] = {{0.0, -inf}, {inf, inf}};
inline constexpr known_point trigamma_points[] = {{0.0, inf}, {inf, 0.0}};
inline constexpr known_point odd_points[] = {{-inf, -inf}, {0.0, 0.0}, {inf, inf}};  // sinh, asinh, cbrt
inline constexpr known_point asin_points[] = {{-1.0, -1.57079632679489661923}, {0.0, 0.0}, {1.0, 1.57079632679489661923}};
inline constexpr known_point acos_points[] = {{-1.0, 3.14159265358979323846}, {0.0, 1.57079632679489661923}, {1.0, 0.0}};
inline constexpr known_point acosh_points[] = {{1.0, 0.0}, {inf, inf}};
inline constexpr known_point atanh_points[] = {{-1.0, -inf}, {0.0, 0.0}, {1.0, inf}};
inline constexpr known_point erfc_points[] = {{-inf, 2.0}, {0.0, 1.0}, {inf, 0.0}};
inline constexpr known_point inv_phi_points[] = {{0.0, -inf}, {0.5, 0.0}, {1.0, inf}};
inline constexpr known_point atan_points[] = {{-inf, -1.57079632679489661923}, {0.0, 0.0}, {inf, 1.57079632679489661923}};

/// The closed domain of a function; outside it the image is the whole line.
constexpr bool inside(const interval& a, double lo) { return a.is_empty() || a.lo >= lo; }

/// log(1 + eˣ) as in rules::log1p_exp.
inline double log1p_exp_value(double x) { return (x > 0 ? x : 0.0) + std::log1p(std::exp(-std::fabs(x))); }
inline double logistic_value(double x) { return 1.0 / (1.0 + std::exp(-x)); }
inline double log_logistic_value(double x) { return -log1p_exp_value(-x); }
inline double log1m_logistic_value(double x) { return -log1p_exp_value(x); }
inline double phi_value(double x) { return 0.5 * std::erfc(-x * 0.70710678118654752440); }
inline constexpr known_point log_bessel_i0_points[] = {{0.0, 0.0}, {inf, inf}};  // on |x|
}  // namespace detail::iv

constexpr interval exp(const interval& a) {
  return detail::iv::increasing_image(a, [](double x) { return std::exp(x); }, detail::iv::exp_points);
}
/// log x: domain [0, ∞] (log 0 = −∞).
constexpr interval log(const interval& a) {
  if (!detail::iv::inside(a, 0.0)) return interval::whole();
  return detail::iv::increasing_image(a, [](double x) { return std::log(x); }, detail::iv::log_points);
}
/// log(1 + x): domain [−1, ∞].
constexpr interval log1p(const interval& a) {
  if (!detail::iv::inside(a, -1.0)) return interval::whole();
  return detail::iv::increasing_image(a, [](double x) { return std::log1p(x); }, detail::iv::log1p_points);
}
constexpr interval expm1(const interval& a) {
  return detail::iv::increasing_image(a, [](double x) { return std::expm1(x); }, detail::iv::expm1_points);
}
/// √x: domain [0, ∞].
constexpr interval sqrt(const interval& a) {
  if (!detail::iv::inside(a, 0.0)) return interval::whole();
  return detail::iv::increasing_image(a, [](double x) { return std::sqrt(x); }, detail::iv::sqrt_points);
}
/// log(1 + eˣ): (0, ∞) for the whole line.
constexpr interval log1p_exp(const interval& a) {
  return detail::iv::increasing_image(a, detail::iv::log1p_exp_value, detail::iv::log1p_exp_points);
}
/// The inverse logit: (0, 1) for the whole line.
constexpr interval logistic(const interval& a) {
  return detail::iv::increasing_image(a, detail::iv::logistic_value, detail::iv::logistic_points);
}
/// log σ(x): (−∞, 0).
constexpr interval log_logistic(const interval& a) {
  return detail::iv::increasing_image(a, detail::iv::log_logistic_value, detail::iv::log_logistic_points);
}
/// log(1 − σ(x)): (−∞, 0), decreasing.
constexpr interval log1m_logistic(const interval& a) {
  return detail::iv::decreasing_image(a, detail::iv::log1m_logistic_value,
                                      detail::iv::log1m_logistic_points);
}
constexpr interval tanh(const interval& a) {
  return detail::iv::increasing_image(a, [](double x) { return std::tanh(x); }, detail::iv::odd_unit_points);
}
constexpr interval erf(const interval& a) {
  return detail::iv::increasing_image(a, [](double x) { return std::erf(x); }, detail::iv::odd_unit_points);
}
/// The standard normal cdf: (0, 1).
constexpr interval Phi(const interval& a) {
  return detail::iv::increasing_image(a, detail::iv::phi_value, detail::iv::logistic_points);
}
/// log Φ(x): (−∞, 0), increasing.
constexpr interval log_Phi(const interval& a) {
  return detail::iv::increasing_image(a, [](double x) { return math::log_Phi(x); },
                                      detail::iv::log_logistic_points);
}
/// cos x: [−1, 1] (not narrowed for short intervals).
constexpr interval cos(const interval& a) {
  if (a.is_empty()) return a;
  return interval::closed(-1.0, 1.0);
}
/// sin x: [−1, 1] (not narrowed for short intervals).
constexpr interval sin(const interval& a) { return cos(a); }
/// atan x: (−π/2, π/2), increasing.
constexpr interval atan(const interval& a) {
  return detail::iv::increasing_image(a, [](double x) { return std::atan(x); }, detail::iv::atan_points);
}
/// asin x, acos x: domain [−1, 1]; [−π/2, π/2] increasing, [0, π] decreasing.
constexpr interval asin(const interval& a) {
  if (!detail::iv::inside(a, -1.0) || a.hi > 1) return interval::whole();
  return detail::iv::increasing_image(a, [](double x) { return std::asin(x); }, detail::iv::asin_points);
}
constexpr interval acos(const interval& a) {
  if (!detail::iv::inside(a, -1.0) || a.hi > 1) return interval::whole();
  return detail::iv::decreasing_image(a, [](double x) { return std::acos(x); }, detail::iv::acos_points);
}
/// sinh, asinh and the cube root: increasing and odd.
constexpr interval sinh(const interval& a) {
  return detail::iv::increasing_image(a, [](double x) { return std::sinh(x); }, detail::iv::odd_points);
}
constexpr interval asinh(const interval& a) {
  return detail::iv::increasing_image(a, [](double x) { return std::asinh(x); }, detail::iv::odd_points);
}
constexpr interval cbrt(const interval& a) {
  return detail::iv::increasing_image(a, [](double x) { return std::cbrt(x); }, detail::iv::odd_points);
}
/// cosh x: [1, ∞) (not narrowed).
constexpr interval cosh(const interval& a) {
  if (a.is_empty()) return a;
  return interval::closed_open(1.0, interval::inf);
}
/// acosh x: domain [1, ∞), image [0, ∞); atanh x: domain (−1, 1), the whole line.
constexpr interval acosh(const interval& a) {
  if (!detail::iv::inside(a, 1.0)) return interval::whole();
  return detail::iv::increasing_image(a, [](double x) { return std::acosh(x); }, detail::iv::acosh_points);
}
constexpr interval atanh(const interval& a) {
  if (!detail::iv::inside(a, -1.0) || a.hi > 1) return interval::whole();
  return detail::iv::increasing_image(a, [](double x) { return std::atanh(x); }, detail::iv::atanh_points);
}
/// erfc x: (0, 2), decreasing.
constexpr interval erfc(const interval& a) {
  return detail::iv::decreasing_image(a, [](double x) { return std::erfc(x); }, detail::iv::erfc_points);
}
/// Φ⁻¹(p): domain [0, 1], increasing onto the whole line.
constexpr interval inv_Phi(const interval& a) {
  if (!detail::iv::inside(a, 0.0) || a.hi > 1) return interval::whole();
  return detail::iv::increasing_image(a, [](double x) { return math::inv_Phi(x); }, detail::iv::inv_phi_points);
}

/// fmin(a, b) and fmax(a, b): each end the smaller (larger) of the operands' ends.
constexpr interval fmin(const interval& a, const interval& b) {
  if (a.is_empty() || b.is_empty()) return interval::empty();
  interval r;
  r.lo = a.lo < b.lo ? a.lo : b.lo;
  r.lo_closed = (a.lo == r.lo && a.lo_closed) || (b.lo == r.lo && b.lo_closed);
  r.hi = a.hi < b.hi ? a.hi : b.hi;
  // The larger end is reached only where both operands reach it.
  r.hi_closed = a.hi == b.hi ? (a.hi_closed && b.hi_closed) : (a.hi < b.hi ? a.hi_closed : b.hi_closed);
  return r;
}
constexpr interval fmax(const interval& a, const interval& b) { return -fmin(-a, -b); }

/// step(x) (0 for x < 0, else 1): {1} where x ≥ 0, {0} where x < 0, else [0, 1].
constexpr interval step(const interval& a) {
  if (a.is_empty()) return a;
  if (a.lo >= 0) return interval::closed(1.0, 1.0);
  if (a.hi < 0 || (a.hi == 0 && !a.hi_closed)) return interval::closed(0.0, 0.0);
  return interval::closed(0.0, 1.0);
}

/// log step(x) (0 for x ≥ 0, −∞ below): {0} where x ≥ 0, {−∞} where x < 0, else [−∞, 0] (−∞
/// is a value here: the ends are closed).
constexpr interval log_step(const interval& a) {
  if (a.is_empty()) return a;
  if (a.lo >= 0) return interval::closed(0.0, 0.0);
  if (a.hi < 0 || (a.hi == 0 && !a.hi_closed)) return interval::closed(-interval::inf, -interval::inf);
  return interval::closed(-interval::inf, 0.0);
}

/// |x|.
constexpr interval abs(const interval& a) {
  if (a.is_empty() || a.lo >= 0) return a;
  if (a.hi <= 0) return -a;
  const interval n = -a;  // lo < 0 < hi: 0 is attained
  interval r{0.0, n.hi > a.hi ? n.hi : a.hi, true, false};
  r.hi_closed = (n.hi == r.hi && n.hi_closed) || (a.hi == r.hi && a.hi_closed);
  return r;
}

/// log I₀(x): even, increasing in |x|, 0 at x = 0; [0, ∞) for the whole line.
constexpr interval log_bessel_i0(const interval& a) {
  return detail::iv::increasing_image(abs(a), [](double x) { return math::log_bessel_i0(x); },
                                      detail::iv::log_bessel_i0_points);
}

/// x²: |x| · |x|, which has no dependency problem since |x| ≥ 0.
constexpr interval square(const interval& a) {
  const interval m = abs(a);
  return m * m;
}

/// lgamma(x) = log |Γ(x)|: on (0, ∞] it is ≥ lgamma(1.4616…) = −0.1214862905…, decreasing
/// before that minimum and increasing after it; on the negative half-line the whole line.
constexpr interval lgamma(const interval& a) {
  using namespace detail::iv;
  if (a.is_empty()) return a;
  if (!(a.lo > 0 || (a.lo == 0 && !a.lo_closed))) return interval::whole();
  constexpr double x_min = 1.4616321449683623;
  const double y_min = next_down(-0.12148629053584961);
  if (std::is_constant_evaluated()) {
    // lgamma ≥ 0 on (0, 1] and [2, ∞), = 0 at 1 and 2.
    const bool nonneg = a.hi <= 1.0 || a.lo >= 2.0;
    interval r{nonneg ? 0.0 : y_min, inf, true, false};
    if (a.hi == inf && a.hi_closed) r.hi_closed = true;
    return r;
  }
  auto down = [](double x) { return next_down(next_down(std::lgamma(x))); };
  auto up = [](double x) { return next_up(next_up(std::lgamma(x))); };
  auto at = [&](double x, bool lower) { return x == 0 || x == inf ? inf : (lower ? down(x) : up(x)); };
  if (a.hi <= x_min) return {at(a.hi, true), at(a.lo, false), a.hi_closed, a.lo_closed && a.lo != 0};
  if (a.lo >= x_min) return {at(a.lo, true), at(a.hi, false), a.lo_closed, a.hi_closed && a.hi != inf};
  const double l = at(a.lo, false), h = at(a.hi, false);
  interval r{y_min, l > h ? l : h, true, false};
  r.hi_closed = (l >= h && a.lo_closed && a.lo != 0) || (h >= l && a.hi_closed && a.hi != inf);
  return r;
}

/// digamma(x): increasing on (0, ∞); the whole line elsewhere (poles at 0, −1, −2, …).
constexpr interval digamma(const interval& a) {
  if (a.is_empty()) return a;
  if (!(a.lo > 0 || (a.lo == 0 && !a.lo_closed))) return interval::whole();
  return detail::iv::increasing_image(a, [](double x) { return math::digamma(x); },
                                      detail::iv::digamma_points);
}

/// trigamma(x): decreasing on (0, ∞) from +∞ to 0; positive everywhere (a sum of 1/(x + n)²).
constexpr interval trigamma(const interval& a) {
  if (a.is_empty()) return a;
  if (!(a.lo > 0 || (a.lo == 0 && !a.lo_closed))) return interval::open(0.0, interval::inf);
  return detail::iv::decreasing_image(a, [](double x) { return math::trigamma(x); },
                                      detail::iv::trigamma_points);
}

namespace detail::iv {
/// aⁿ for a ⊆ [0, ∞] and a whole n ≥ 1, by repeated multiplication (monotone there).
constexpr interval pow_nonnegative(const interval& a, long long n) {
  interval r = a;
  for (long long i = 1; i < n; ++i) r = r * a;
  return r;
}
}  // namespace detail::iv

/// aᶜ for a constant exponent c (a literal, or a run-time constant at model construction).
/// Whole c: even powers are ≥ 0, odd powers keep the sign, negative powers go through 1/x.
/// Fractional c: domain [0, ∞].
constexpr interval pow(const interval& a, double c) {
  using namespace detail::iv;
  if (a.is_empty()) return a;
  if (c == 0) return interval::point(1.0);
  const bool whole_number = c == static_cast<double>(static_cast<long long>(c)) && c >= -64 && c <= 64;
  if (whole_number) {
    const long long n = static_cast<long long>(c);
    if (n < 0) return inverse(pow(a, -c));
    if (n % 2 == 0) return pow_nonnegative(abs(a), n);
    if (a.lo >= 0) return pow_nonnegative(a, n);
    if (a.hi <= 0) return -pow_nonnegative(-a, n);
    const interval neg = -pow_nonnegative(-intersect(a, interval::closed(-inf, 0.0)), n);
    return hull(neg, pow_nonnegative(intersect(a, interval::closed(0.0, inf)), n));
  }
  if (!inside(a, 0.0)) return interval::whole();
  if (c > 0) {
    const known_point k[] = {{0.0, 0.0}, {1.0, 1.0}, {inf, inf}};
    return increasing_image(a, [c](double x) { return std::pow(x, c); }, k);
  }
  const known_point k[] = {{0.0, inf}, {1.0, 1.0}, {inf, 0.0}};
  return decreasing_image(a, [c](double x) { return std::pow(x, c); }, k);
}

/// aᵇ for two intervals: a point b is pow(a, c); otherwise only the sign of the result is
/// known: (0, ∞) for a > 0, [0, ∞] for a ≥ 0, the whole line else.
constexpr interval pow(const interval& a, const interval& b) {
  if (a.is_empty() || b.is_empty()) return interval::empty();
  if (b.lo == b.hi) return pow(a, b.lo);
  if (a.lo > 0 || (a.lo == 0 && !a.lo_closed)) return {0.0, interval::inf, false, a.hi_closed && a.hi == interval::inf};
  if (a.lo >= 0) return {0.0, interval::inf, true, true};
  return interval::whole();
}

// ---- text ------------------------------------------------------------------------------------

/// A short string built in constant evaluation.
struct interval_text {
  char chars[64]{};
  std::size_t size = 0;
  constexpr void append(char c) {
    if (size + 1 < sizeof chars) chars[size++] = c;
  }
  constexpr void append(const char* s) {
    while (*s) append(*s++);
  }
  [[nodiscard]] std::string str() const { return std::string(chars, size); }
};

namespace detail::iv {
constexpr void append_unsigned(interval_text& t, unsigned long long v) {
  char digits[24]{};
  int n = 0;
  do {
    digits[n++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v != 0);
  while (n > 0) t.append(digits[--n]);
}
}  // namespace detail::iv

/// x as text: "inf", "-inf", "nan", whole numbers below 10^15 exactly, anything else to six
/// significant digits ("0.333333", "1.5e+300"). The same in constant evaluation and at run
/// time, so that compile-time and construction-time messages agree.
constexpr void append_number(interval_text& t, double x) {
  using namespace detail::iv;
  if (is_nan(x)) return t.append("nan");
  if (x < 0) {
    t.append('-');
    x = -x;
  }
  if (x == inf) return t.append("inf");
  if (x < 1e15 && x == static_cast<double>(static_cast<unsigned long long>(x)))
    return append_unsigned(t, static_cast<unsigned long long>(x));
  // six significant digits: x ≈ m · 10^e with 1 ≤ m < 10
  int e = 0;
  double m = x;
  while (m >= 10.0) {
    m /= 10.0;
    ++e;
  }
  while (m < 1.0) {
    m *= 10.0;
    --e;
  }
  auto digits = static_cast<unsigned long long>(m * 100000.0 + 0.5);
  if (digits >= 1000000ULL) {
    digits /= 10;
    ++e;
  }
  char d[6]{};
  for (int i = 5; i >= 0; --i) {
    d[i] = static_cast<char>('0' + digits % 10);
    digits /= 10;
  }
  int last = 5;  // drop trailing zeros
  while (last > 0 && d[last] == '0') --last;
  if (e >= -5 && e < 15) {
    if (e < 0) {
      t.append("0.");
      for (int i = -1; i > e; --i) t.append('0');
      for (int i = 0; i <= last; ++i) t.append(d[i]);
    } else {
      for (int i = 0; i <= (e > last ? e : last); ++i) {
        if (i == e + 1) t.append('.');
        t.append(i <= 5 ? d[i] : '0');
      }
    }
    return;
  }
  t.append(d[0]);
  if (last > 0) {
    t.append('.');
    for (int i = 1; i <= last; ++i) t.append(d[i]);
  }
  t.append(e < 0 ? "e-" : "e+");
  append_unsigned(t, static_cast<unsigned long long>(e < 0 ? -e : e));
}

/// "(0, inf)", "[0, 1]", "(-inf, 2]"; "{}" for the empty set.
constexpr interval_text to_text(const interval& a) {
  interval_text t;
  if (a.is_empty()) {
    t.append("{}");
    return t;
  }
  t.append(a.lo_closed ? '[' : '(');
  append_number(t, a.lo);
  t.append(", ");
  append_number(t, a.hi);
  t.append(a.hi_closed ? ']' : ')');
  return t;
}

inline std::string to_string(const interval& a) { return to_text(a).str(); }
inline std::string number_to_string(double x) {
  interval_text t;
  append_number(t, x);
  return t.str();
}

}  // namespace tyche
