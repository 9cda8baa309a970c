// Supports: interval arithmetic (interval/interval.hpp), the support of every node from the types
// (support_of, support_known_v) and from the data (support, support_at), the construction-time
// checks of distribution arguments (exact message text), the escape hatch (assume_support), and
// explain(..., with_supports). The compile-time checks are tests/compile_fail/support_*.cpp.
#include <tyche/tyche.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

using namespace tyche;

namespace {

constexpr double inf = std::numeric_limits<double>::infinity();
constexpr interval whole = interval::whole();
constexpr interval pos = interval::positive();
constexpr interval nonneg = interval::nonnegative();
constexpr interval unit_open = interval::open(0, 1);
constexpr interval unit = interval::closed(0, 1);

/// The text of the exception thrown by f (empty when none is).
template <class F>
std::string thrown(F&& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

}  // namespace

// ---- interval arithmetic: every rule, with its open and closed ends, in constant evaluation ------

// representation and set operations
static_assert(interval::empty().is_empty() && !whole.is_empty() && whole.is_whole());
static_assert(interval::open(1, 1).is_empty() && interval::closed_open(1, 1).is_empty() &&
              !interval::point(1).is_empty());
static_assert(pos.contains(1e-300) && !pos.contains(0) && nonneg.contains(0) && !pos.contains(inf));
static_assert(unit_open.subset_of(unit) && !unit.subset_of(unit_open) && unit_open.subset_of(pos));
static_assert(!nonneg.subset_of(pos) && pos.subset_of(nonneg) && interval::empty().subset_of(pos));
static_assert(interval::closed(-1, 0).disjoint_from(pos) && !nonneg.disjoint_from(interval::closed(-1, 0)) &&
              interval::open(-1, 0).disjoint_from(nonneg));
static_assert(hull(interval::open(0, 1), interval::closed(1, 2)) == interval::open_closed(0, 2));
static_assert(hull(interval::open(0, 1), interval::closed(0, 0.5)) == interval::closed_open(0, 1));
static_assert(intersect(interval::closed(-1, 1), pos) == interval::open_closed(0, 1));
static_assert(intersect(interval::closed(-1, 0), pos).is_empty());

// negation, addition, subtraction: an end is attained when both ends that make it are
static_assert(-interval::closed_open(1, 2) == interval::open_closed(-2, -1));
static_assert(interval::open(0, 1) + interval::closed(1, 2) == interval::open(1, 3));
static_assert(interval::closed(0, 1) + interval::closed(0, 1) == interval::closed(0, 2));
static_assert(interval::open_closed(-inf, 1) + nonneg == whole);
static_assert(interval::closed(0, 1) - interval::open(0, 1) == interval::open(-1, 1));
static_assert(interval::closed(0, 1) - interval::closed_open(0, 1) == interval::open_closed(-1, 1));
static_assert(pos + pos == pos && pos - pos == whole);
// exact when the result is representable; moved outward by one ulp when not
static_assert(interval::point(0.5) + interval::point(0.25) == interval::point(0.75));
static_assert((interval::point(0.1) + interval::point(0.2)).lo < 0.1 + 0.2 &&
              (interval::point(0.1) + interval::point(0.2)).hi > 0.1 + 0.2);

// multiplication: an end is attained when both factors' ends are, or one of them is an attained 0
static_assert(interval::closed_open(0, 1) * interval::open(0, 1) == interval::closed_open(0, 1));
static_assert(interval::open_closed(-1, 2) * interval::closed(3, 4) == interval::open_closed(-4, 8));
static_assert(pos * pos == pos && pos * nonneg == nonneg);
static_assert(nonneg * interval::open(-inf, 0) == interval::open_closed(-inf, 0));
static_assert(interval::point(0) + interval::point(1) * unit_open == unit_open);  // L + (U − L)·σ(u)
static_assert(interval::point(2) * unit_open == interval::open(0, 2));
static_assert(interval::point(0) * whole == interval::point(0));

// division and the inverse: 1/0 = +∞ is in the result when 0 is in the divisor
static_assert(interval::closed(1, 2) / interval::closed(4, 8) == interval::closed(0.125, 0.5));
static_assert(inverse(pos) == pos && inverse(interval::open(-inf, 0)) == interval::open(-inf, 0));
static_assert(inverse(interval::closed_open(2, inf)) == interval::open_closed(0, 0.5));
static_assert(inverse(unit) == interval::closed(1, inf));
static_assert(inverse(interval::open(-1, 1)) == interval::closed(-inf, inf));
static_assert(interval::point(1) / pos == pos);
static_assert((interval::point(1) / interval::point(3)).lo < 1.0 / 3 &&
              (interval::point(1) / interval::point(3)).hi > 1.0 / 3);

// powers by a constant, square, abs
static_assert(square(interval::open(-1, 2)) == interval::closed_open(0, 4));
static_assert(square(whole) == nonneg && square(pos) == pos);
static_assert(square(interval::closed(-3, -2)) == interval::closed(4, 9));
static_assert(pow(interval::open_closed(-2, 1), 3) == interval::open_closed(-8, 1));
static_assert(pow(interval::closed(-1, 1), 2) == unit);
static_assert(pow(pos, -1) == pos && pow(interval::closed(2, 4), -2) == interval::closed(0.0625, 0.25));
static_assert(pow(whole, 0) == interval::point(1));
static_assert(pow(interval::closed(-1, 4), 0.5) == whole);            // fractional: domain [0, ∞]
static_assert(pow(interval::open_closed(0, 4), 0.5) == interval::open(0, inf));  // no constexpr pow
static_assert(pow(pos, interval::closed(1, 2)) == pos);                // variable exponent
static_assert(pow(whole, interval::closed(1, 2)) == whole);
static_assert(abs(interval::open_closed(-3, 2)) == interval::closed_open(0, 3));
static_assert(abs(interval::closed(-3, -1)) == interval::closed(1, 3));

// monotone functions: known values at 0, 1 and ±∞, and monotonicity
static_assert(exp(whole) == pos);
static_assert(exp(interval::open_closed(-inf, 0)) == interval::open_closed(0, 1));
static_assert(exp(interval::closed(-1, 2)) == interval::open(0, inf));  // no constexpr exp
static_assert(log(pos) == whole && log(unit) == interval::closed(-inf, 0));
static_assert(log(interval::closed_open(1, inf)) == interval::closed_open(0, inf));
static_assert(log(interval::open(-1, 1)) == whole);  // outside the domain: the whole line
static_assert(log1p(interval::open(-1, inf)) == whole && log1p(nonneg) == nonneg);
static_assert(expm1(whole) == interval::open(-1, inf) && expm1(nonneg) == nonneg);
static_assert(sqrt(nonneg) == nonneg && sqrt(unit) == unit && sqrt(interval::closed(-1, 1)) == whole);
static_assert(log1p_exp(whole) == pos);
static_assert(logistic(whole) == unit_open && logistic(nonneg) == interval::closed_open(0.5, 1));
static_assert(log_logistic(whole) == interval::open(-inf, 0));
static_assert(log1m_logistic(whole) == interval::open(-inf, 0));
static_assert(log1m_logistic(nonneg) == interval::open(-inf, 0));
static_assert(tanh(whole) == interval::open(-1, 1) && tanh(nonneg) == interval::closed_open(0, 1));
static_assert(atan(whole) == interval::open(-1.57079632679489661923, 1.57079632679489661923) &&
              atan(nonneg) == interval::closed_open(0, 1.57079632679489661923));
static_assert(sin(pos) == interval::closed(-1, 1));
static_assert(asin(interval::closed(-1, 1)) == interval::closed(-1.57079632679489661923, 1.57079632679489661923) &&
              asin(interval::closed(-2, 0)) == whole);
static_assert(acos(interval::closed(0, 1)) == interval::closed(0, 1.57079632679489661923));
static_assert(sinh(nonneg) == nonneg && asinh(whole) == whole && cbrt(pos) == pos);
static_assert(cosh(whole) == interval::closed_open(1, inf));
static_assert(acosh(interval::closed_open(1, inf)) == nonneg && acosh(whole) == whole);
static_assert(atanh(interval::open(-1, 1)) == whole && atanh(interval::closed_open(0, 1)) == nonneg);
static_assert(erfc(whole) == interval::open(0, 2) && erfc(nonneg) == interval::open_closed(0, 1));
static_assert(inv_Phi(unit_open) == whole && inv_Phi(interval::closed_open(0.5, 1)) == nonneg);
// fmin, fmax: each end the smaller (larger) of the two, attained where the end chosen is
static_assert(fmin(pos, interval::closed(-1, 1)) == interval::closed(-1, 1));
static_assert(fmin(pos, interval::point(1)) == interval::open_closed(0, 1));
static_assert(fmax(whole, interval::point(0)) == nonneg);
static_assert(fmax(interval::open(0, 1), interval::closed_open(0, 2)) == interval::open(0, 2));  // 0 needs both at 0
static_assert(fmin(interval::closed(0, 1), interval::closed_open(-1, 1)) == interval::closed_open(-1, 1));
static_assert(erf(whole) == interval::open(-1, 1));
static_assert(Phi(whole) == unit_open && Phi(interval::open_closed(-inf, 0)) == interval::open_closed(0, 0.5));
static_assert(lgamma(pos).lo < -0.1214862905 && lgamma(pos).lo > -0.1214862906 && lgamma(pos).hi == inf);
static_assert(lgamma(interval::closed_open(2, inf)) == interval::closed_open(0, inf));
static_assert(lgamma(interval::open(-1, 1)) == whole);
static_assert(digamma(pos) == whole && digamma(interval::closed(-1, 1)) == whole);

// text
static_assert(to_text(whole).size == 11);
static_assert(to_text(interval::open_closed(-inf, 0)).chars[0] == '(');

TEST_CASE("interval: text of intervals and numbers", "[partial_eval][support]") {
  CHECK(to_string(whole) == "(-inf, inf)");
  CHECK(to_string(unit) == "[0, 1]");
  CHECK(to_string(interval::open_closed(0.5, 1e300)) == "(0.5, 1e+300]");
  CHECK(to_string(interval::closed(-0.05, 123.456)) == "[-0.05, 123.456]");
  CHECK(to_string(interval::point(1.0 / 3)) == "[0.333333, 0.333333]");
  CHECK(to_string(interval::empty()) == "{}");
  CHECK(to_string(interval::closed(-inf, 0)) == "[-inf, 0]");
}

TEST_CASE("interval: transcendental images at run time use <cmath>, widened outward",
          "[partial_eval][support]") {
  const interval e = exp(interval::closed(0, 1));
  CHECK(e.lo == 1.0);
  CHECK(e.hi >= std::exp(1.0));
  CHECK(e.hi < std::exp(1.0) * (1 + 1e-14));
  CHECK(e.lo_closed);
  CHECK(e.hi_closed);
  const interval g = lgamma(interval::closed(0.5, 3));  // the minimum at 1.4616… is inside
  CHECK(g.lo < -0.12148629053584);
  CHECK(g.hi >= std::lgamma(0.5));
  CHECK(g.hi >= std::log(2.0));
  const interval d = lgamma(interval::closed(3, 4));  // increasing there
  CHECK(d.lo <= std::log(2.0));
  CHECK(d.lo > std::log(2.0) * (1 - 1e-14));
  const interval r = pow(interval::open_closed(0, 4), 0.5);
  CHECK(r.lo == 0.0);
  CHECK(!r.lo_closed);
  CHECK(r.hi >= 2.0);
  CHECK(r.hi < 2.0 + 1e-14);
  const interval l = log1m_logistic(interval::closed_open(0, inf));
  CHECK(l.hi >= -std::log(2.0));
  CHECK(l.hi < -std::log(2.0) + 1e-14);
  CHECK(l.lo == -inf);
}

// ---- support_of: from the types -----------------------------------------------------------------

namespace {
template <class E>
constexpr interval support_of_value = support_of<detail::node_t<E>>;
template <class E>
constexpr bool known_value = support_known_v<detail::node_t<E>>;

using sigma_t = decltype(half_normal<"sigma">(1.0));
using p_t = decltype(tyche::beta<"p">(2.0, 2.0));
}  // namespace

// literals exactly; a bare parameter is the whole line, and known
static_assert(support_of<literal<3, 2>> == interval::point(1.5) && support_known_v<literal<3, 2>>);
static_assert(support_of<param<"x">> == whole && support_known_v<param<"x">>);
static_assert(support_of<vector_param<"v", 3>> == whole);
// run-time constants and data: unknown from the types
static_assert(support_of<constant> == whole && !support_known_v<constant>);
static_assert(support_of<data_vector<>> == whole && !support_known_v<data_vector<>>);
static_assert(!support_known_v<decltype(exp(constant{1.0}))>);
// a random variable's value is transform(parameter): its support is the transform's
static_assert(support_of_value<sigma_t> == pos && known_value<sigma_t>);
static_assert(support_of_value<p_t> == unit_open);
static_assert(support_of_value<decltype(tyche::exponential<"l">(1.0))> == pos);
static_assert(support_of_value<decltype(normal<"m">(0.0, 1.0))> == whole);
static_assert(support_of_value<decltype(uniform<"u">(lit<-1>, lit<3>))> == interval::open(-1, 3));
static_assert(support_of_value<decltype(flat<"f">(positive()))> == pos);
static_assert(support_of_value<decltype(flat<"f">(greater_than(lit<2>)))> == interval::open(2, inf));
static_assert(support_of_value<decltype(flat<"f">(less_than(lit<5>)))> == interval::open(-inf, 5));
static_assert(support_of_value<decltype(flat<"f">(between(lit<-2>, lit<2>)))> == interval::open(-2, 2));
// bounds given by numbers are run-time constants: unknown at compile time
static_assert(support_of_value<decltype(uniform<"u">(0.0, 1.0))> == whole);
static_assert(!known_value<decltype(uniform<"u">(0.0, 1.0))>);
// parameter-dependent bounds: the interval computed from the bounds' supports
static_assert(support_of_value<decltype(uniform<"v">(lit<0>, std::declval<sigma_t>()))> == pos);
static_assert(support_of_value<decltype(flat<"w">(greater_than(std::declval<p_t>())))> == pos);
// expressions
static_assert(support_of<decltype(lit<2> + lit<3> * logistic(param<"x">{}))> == interval::open(2, 5));
static_assert(support_of<decltype(exp(param<"a">{}) + square(param<"b">{}))> == pos);
static_assert(support_of<decltype(fmax(param<"a">{}, lit<0>))> == nonneg);
static_assert(support_of<decltype(atan(exp(param<"a">{})))> == interval::open(0, 1.57079632679489661923));
static_assert(support_of<decltype(lit<1> / (lit<1> + exp(-param<"a">{})))> == interval::open(0, 1));
static_assert(support_of<decltype(log1p(exp(param<"a">{})))> == pos);
static_assert(support_of<decltype(pow(exp(param<"a">{}), lit<2>))> == pos);
static_assert(support_of<decltype(pow(param<"a">{}, 2.0))> == whole);  // run-time exponent
static_assert(support_of<decltype(pow(square(param<"a">{}), 2.0))> == interval::closed(0, inf));
static_assert(!support_known_v<decltype(pow(param<"a">{}, 2.0))>);
// reductions: n · element support for a static size; a run-time size is not known
static_assert(support_of<decltype(sum(exp(vector_param<"v", 4>{})))> == pos);
static_assert(support_of<decltype(sum(logistic(vector_param<"v", 3>{})))> == interval::open(0, 3));
static_assert(support_known_v<decltype(sum(exp(vector_param<"v", 4>{})))>);
static_assert(support_of<decltype(sum(exp(std::declval<vector_param<"v">>())))> == nonneg);
static_assert(!support_known_v<decltype(sum(exp(std::declval<vector_param<"v">>())))>);
static_assert(support_of<decltype(sum(-square(vector_param<"v", 2>{})))> == interval::open_closed(-inf, 0));
static_assert(support_of<decltype(log_sum_exp(log_logistic(vector_param<"v", 3>{})))> ==
              interval::open(-inf, 2));
static_assert(support_of<decltype(log_sum_exp(logistic(vector_param<"v", 1>{})))> == unit_open);
static_assert(support_of<matvec_node<vector_param<"b">>> == whole);
static_assert(support_of<residual_squares_node<literal<0>, vector_param<"b">>> == nonneg);
// the escape hatch sets the support and is known
static_assert(support_of<decltype(assume_positive(param<"a">{}))> == pos);
static_assert(support_known_v<decltype(assume_positive(param<"a">{} * constant{2.0}))>);
static_assert(support_of<decltype(assume_probability(param<"a">{}))> == unit);
static_assert(support_of<decltype(assume_support<supports::closed<-1, 1>>(param<"a">{}))> ==
              interval::closed(-1, 1));
// verdicts
static_assert(argument_support_t<decltype(exp(param<"s">{})), domains::positive>::ok);
static_assert(!argument_support_t<param<"s">, domains::positive>::ok);
static_assert(std::is_same_v<argument_support_t<param<"s">, domains::positive>,
                             support_is<'(', '-', 'i', 'n', 'f', ',', ' ', 'i', 'n', 'f', ')'>>);
static_assert(argument_support_t<constant, domains::positive>::ok);  // decided at construction
static_assert(operand_support_t<param<"s">, domains::positive>::ok);  // log(x): may be positive
static_assert(!operand_support_t<decltype(-exp(param<"s">{})), domains::positive>::ok);

// ---- support: from the data -----------------------------------------------------------------

TEST_CASE("support: data and constants are read when the model is built", "[partial_eval][support]") {
  const std::vector<double> x{2.0, -1.0, 3.5}, w{1.0, 4.0};
  CHECK(support(data(x)) == interval::closed(-1, 3.5));
  CHECK(support(constant{2.5}) == interval::point(2.5));
  CHECK(support_at(data(x), 1) == interval::point(-1));
  CHECK(support(square(data(x))) == interval::closed(0, 12.25));
  CHECK(support(exp(param<"a">{}) * data(w)) == pos);
  CHECK(support(sum(data(w))) == interval::closed(2, 8));
  CHECK(support(sum(data(w) - param<"a">{})) == whole);
  const auto u = uniform<"u">(0.0, 1.0);
  CHECK(support(u.value_expression()) == unit_open);
  const auto v = uniform<"v">(-2.0, 6.0);
  CHECK(support(v.value_expression()) == interval::open(-2, 6));
  CHECK(support(inv(data(w))) == interval::closed(0.25, 1));
  const interval l = support(log_sum_exp(data(w)));  // [1 + log 2, 4 + log 2]
  CHECK(l.lo <= 1 + std::log(2.0));
  CHECK(l.hi >= 4 + std::log(2.0));
  CHECK(l.hi < 4 + std::log(2.0) + 1e-12);
  const std::vector<double> xm{1.0, -2.0, 0.5, 3.0};  // 2 x 2
  const auto xv = matrix(xm, 2, 2) * vector_param<"b">(2);
  CHECK(support(xv) == whole);
  CHECK(support_at(xv, 1) == whole);
  CHECK(support(square(xv)) == nonneg);
}

// ---- construction-time checks: the exact messages ---------------------------------------------

// An observed term's check is prefixed with the term: its family, sizes and the variables its
// arguments read (joint.hpp, check_variable_supports), then the family's own message.
static bool observed_error(const std::string& what, const std::string& family, const std::string& message) {
  const std::string head = "tyche::joint(...): " + family + "(...).observe(y) (";
  return what.rfind(head, 0) == 0 && what.size() >= message.size() &&
         what.compare(what.size() - message.size(), message.size(), message) == 0 &&
         what.find("): " + message) != std::string::npos;
}

TEST_CASE("support checks: data decide at model construction", "[partial_eval][support]") {
  const std::vector<double> y{1.0, 2.0, 3.0}, s{1.0, -0.5, 2.0}, good{1.0, 0.5, 2.0};
  const auto mu = normal<"mu">(0.0, 1.0);
  CHECK(observed_error(thrown([&] { (void)joint(mu, normal(mu, data(s)).observe(data(y))); }), "normal",
        "tyche::normal(mu, sigma): sigma must be > 0, but sigma[2] = -0.5 (data)"));
  // An element that depends on a parameter: its support, the data there, and the escape hatch.
  CHECK(thrown([&] { (void)joint(mu, normal(mu, exp(mu) * data(s)).observe(data(y))); })
            .starts_with("tyche::joint(...): normal(...).observe(y) (y has 3 values, argument 1 is a scalar (uses mu), "
                         "argument 2 has 3 values (uses mu)): tyche::normal(mu, sigma): "));
  CHECK(observed_error(thrown([&] { (void)joint(mu, normal(mu, exp(mu) * data(s)).observe(data(y))); }), "normal",
        "tyche::normal(mu, sigma): sigma must be > 0, but sigma[2] has support (-inf, 0) "
        "(computed from data[2] = -0.5)" TYCHE_SUPPORT_HINT));
  CHECK(observed_error(thrown([&] { (void)joint(mu, normal(mu, data(good) - data(s)).observe(data(y))); }), "normal",
        "tyche::normal(mu, sigma): sigma must be > 0, but sigma[1] = 0 "
        "(computed from data#1[1] = 1, data#2[1] = 1)"));
  // Data named in data(values, "name") are named in the message.
  CHECK(observed_error(thrown([&] { (void)joint(mu, normal(mu, data(s, "s")).observe(data(y))); }), "normal",
        "tyche::normal(mu, sigma): sigma must be > 0, but sigma[2] = -0.5 (data 's')"));
  CHECK(observed_error(thrown([&] { (void)joint(mu, normal(mu, exp(mu) * data(s, "s")).observe(data(y))); }), "normal",
        "tyche::normal(mu, sigma): sigma must be > 0, but sigma[2] has support (-inf, 0) (computed from s[2] = -0.5)" TYCHE_SUPPORT_HINT));
  CHECK(observed_error(thrown([&] { (void)joint(mu, normal(mu, data(good, "good") - data(s)).observe(data(y))); }), "normal",
        "tyche::normal(mu, sigma): sigma must be > 0, but sigma[1] = 0 "
        "(computed from good[1] = 1, data#2[1] = 1)"));
  CHECK(thrown([&] { (void)joint(mu, normal<"x">(mu, -1.0)); }) ==
        "tyche::joint(...): the random variable 'x' (normal): tyche::normal(mu, sigma): sigma must be > 0, "
        "but it is -1");
  CHECK_THAT(thrown([&] { (void)joint(mu, normal(mu, exp(mu) - 1.0).observe(data(y))); }),
             Catch::Matchers::Contains("): tyche::normal(mu, sigma): sigma must be > 0, but its support is (-1, inf); "
                                         "if it is inside by construction") &&
                 Catch::Matchers::Contains("assume_positive(x)"));
  // valid: data and constants inside the domain
  CHECK_NOTHROW(joint(mu, normal(mu, data(good)).observe(data(y))));
  CHECK_NOTHROW(joint(mu, normal(mu, exp(mu) * data(good) + 1.0).observe(data(y))));
  // every element inside, though the hull of the elements is not: square of {−1, 1}
  const std::vector<double> pm{-1.0, 1.0, 1.0};
  CHECK_NOTHROW(joint(mu, normal(mu, square(data(pm))).observe(data(y))));
}

TEST_CASE("support checks: every kind of domain", "[partial_eval][support]") {
  const std::vector<double> y{0.0, 1.0, 1.0}, p{0.2, 0.5, 1.5}, k{2.0, 1.0, 4.0}, counts{0, 1, 0};
  const auto a = normal<"a">(0.0, 1.0);
  CHECK(observed_error(thrown([&] { (void)joint(a, bernoulli(data(p)).observe(data(y))); }), "bernoulli",
        "tyche::bernoulli(p): p must be in [0, 1], but p[3] = 1.5 (data)"));
  CHECK(observed_error(thrown([&] { (void)joint(a, binomial(lit<3> - data(k), logistic(a)).observe(data(counts))); }), "binomial",
        "tyche::binomial(n, p): n must be >= 0, but n[3] = -1 (computed from data[3] = 4)"));
  CHECK(thrown([&] { (void)joint(a, tyche::gamma<"g">(2.0, 0.0)); }) ==
        "tyche::joint(...): the random variable 'g' (gamma): tyche::gamma(alpha, beta): beta must be > 0, but "
        "it is 0");
  CHECK(thrown([&] { (void)joint(a, student_t<"t">(-3.0, a, 1.0)); }) ==
        "tyche::joint(...): the random variable 't' (student_t): tyche::student_t(nu, mu, sigma): nu must be > 0, "
        "but it is -3");
  CHECK_THAT(thrown([&] { (void)joint(a, neg_binomial_2(exp(a) - 2.0, 1.0).observe(data(counts))); }),
             Catch::Matchers::Contains("): tyche::neg_binomial_2(mu, phi): mu must be > 0, but its support is (-2, inf); "));
  CHECK(thrown([&] { (void)log_mix(1.5, a, a); }) ==
        "tyche::log_mix(theta, lp1, lp2): theta must be in [0, 1], but it is 1.5");
  CHECK_NOTHROW(log_mix(0.25, a, a));
  // A mixing weight is an argument with a domain: a variable without constraint (at compile time:
  // tests/compile_fail/support_log_mix_theta_unconstrained.cpp), 0.5 + a or 2 + exp(a) is
  // refused when the model is built (it was NaN wherever it left [0, 1]); inv_logit is inside.
  CHECK_THAT(thrown([&] { (void)log_mix(0.5 + a, a, a); }),
             Catch::Matchers::StartsWith("tyche::log_mix(theta, lp1, lp2): theta must be in [0, 1], but its support "
                                         "is (-inf, inf); if it is inside by construction") &&
                 Catch::Matchers::Contains("assume_probability(x)"));
  CHECK_THAT(thrown([&] { (void)log_mix(2.0 + exp(a), a, a); }), Catch::Matchers::Contains("its support is (2, inf)"));
  CHECK_NOTHROW(log_mix(inv_logit(a), a, a));
  CHECK_NOTHROW(log_mix(assume_probability(a), a, a));
  CHECK_NOTHROW(joint(a, binomial(lit<5> - data(k), logistic(a)).observe(data(counts))));
}

TEST_CASE("support checks: what is not checked", "[partial_eval][support]") {
  // A density over bare parameters, compiled to be evaluated at chosen points, is not a model:
  // joint() runs the checks, distribution factories do not.
  param<"m"> m;
  param<"s"> s;
  param<"x"> x;
  const auto prog = compile(normal(m, s).log_prob(x), x, m, s);
  const std::vector<double> at{0.5, 0.0, 2.0};
  std::vector<double> ws(prog.workspace_size());
  CHECK(prog.value(std::span<const double>(at), std::span<double>(ws)) ==
        Approx(-0.5 * 0.0625 - std::log(2.0) - 0.5 * std::log(2 * 3.14159265358979323846)));
  // A number the data could make valid is not rejected at compile time (only at construction).
  static_assert(argument_support_t<decltype(constant{-1.0} * exp(param<"a">{})), domains::positive>::ok);
}

// ---- the escape hatch -------------------------------------------------------------------------

TEST_CASE("assume_support: the support without the value or the gradient changing",
          "[partial_eval][support]") {
  const std::vector<double> y{1.0, 2.0, 3.0}, s{1.0, -0.5, 2.0};
  const auto mu = normal<"mu">(0.0, 1.0);
  // the user vouches for a sign interval arithmetic cannot prove (here falsely, to show that
  // nothing is checked at run time)
  CHECK_NOTHROW(joint(mu, normal(mu, assume_positive(exp(mu) * data(s))).observe(data(y))));
  const auto sig = normal<"sig">(0.0, 1.0);
  CHECK_NOTHROW(joint(mu, sig, normal(mu, assume_positive(sig)).observe(data(y))));
  // value and gradient are those of the operand
  param<"a"> a;
  const auto plain = compile(square(a) * exp(a), a);
  const auto wrapped = compile(assume_positive(square(a)) * exp(assume_support<supports::nonnegative>(a)), a);
  for (double v : {-1.5, 0.3, 2.0}) {
    const std::vector<double> at{v};
    std::vector<double> g1(1), g2(1), ws1(plain.workspace_size()), ws2(wrapped.workspace_size());
    const double f1 = plain.value_and_gradient(std::span<const double>(at), std::span<double>(g1),
                                               std::span<double>(ws1));
    const double f2 = wrapped.value_and_gradient(std::span<const double>(at), std::span<double>(g2),
                                                 std::span<double>(ws2));
    CHECK(f1 == f2);
    CHECK(g1[0] == g2[0]);
  }
}

// ---- explain with supports ----------------------------------------------------------------------

TEST_CASE("explain(..., with_supports) prints the support of every node", "[partial_eval][support]") {
  const std::vector<double> w{1.0, 2.0, 4.0};
  CHECK(explain(exp(param<"a">{}) * data(w), with_supports) ==
        "(exp(a{(-inf, inf)}){(0, inf)} * data[3]{[1, 4]}){(0, inf)}");
  CHECK(explain(lit<1, 2> * logistic(param<"b">{}), with_supports) ==
        "(1/2 * logistic(b{(-inf, inf)}){(0, 1)}){(0, 0.5)}");
  const std::vector<double> y{1.0, 2.0, 3.0};
  const auto mu = normal<"mu">(0.0, 1.0);
  const auto sigma = half_normal<"sigma">(1.0);
  const auto m = model(joint(mu, sigma, normal(mu, sigma).observe(data(y))));
  const std::string e = explain(m, with_supports);
  CHECK(e.find("exp(sigma{(-inf, inf)}){(0, inf)}") != std::string::npos);
  CHECK(explain(m).find('{') == std::string::npos);  // the plain form is unchanged
}

TEST_CASE("support: the limits of a function are kept where floating point reaches them",
          "[partial_eval][support]") {
  // exp(−800) rounds to 0, but the support of exp is (0, ∞): the run-time bound is not pushed
  // below 0 by the outward widening, and 0 is not attained.
  CHECK(exp(interval::closed(-800, 0)) == interval::open_closed(0, 1));
  CHECK(logistic(interval::closed(0, 40)) == interval::closed_open(0.5, 1));
  CHECK(log1p_exp(interval::closed(-800, -700)).lo == 0.0);
  CHECK(!log1p_exp(interval::closed(-800, -700)).lo_closed);
}
