// The contracts of tyche/concepts.hpp as the library's own families meet them, and a family of
// one's own (the extension point): named<"x">(d) makes a random variable of any continuous
// family, and observe(y) a likelihood term of any family.
#include <tyche/tyche.hpp>

#include <catch2/catch.hpp>

#include <cmath>
#include <tuple>
#include <vector>

namespace {

// A family written outside the library: the normal density, spelled out.
template <class Mu, class Sigma>
struct my_normal : tyche::distribution<my_normal<Mu, Sigma>> {
  static constexpr const char* family = "my_normal";
  Mu mu;
  Sigma sigma;
  auto transform() const { return tyche::transforms::identity{}; }
  template <class X>
  auto log_prob(const X& x) const {
    using namespace tyche;
    return detail::total(lit<-1, 2> * square((x - mu) / sigma) - log(sigma) - detail::half_log_two_pi);
  }
  auto arguments() const { return std::tuple{mu, sigma}; }
};
template <class Mu, class Sigma>
auto make_my_normal(const Mu& mu, const Sigma& sigma) {
  return tyche::detail::make_distribution<my_normal>(mu, sigma);
}

using normal_type = decltype(tyche::normal(0.0, 1.0));
using poisson_type = decltype(tyche::poisson(3.0));
static_assert(tyche::continuous_family<normal_type>);
static_assert(tyche::distribution_family<poisson_type>);
static_assert(!tyche::continuous_family<poisson_type>);  // discrete: observed only
static_assert(tyche::continuous_family<decltype(make_my_normal(0.0, 1.0))>);
static_assert(!tyche::distribution_family<std::vector<double>>);

}  // namespace

TEST_CASE("contracts: named<\"x\">(d) is the named form, for the library's families and one's own",
          "[distributions][contracts]") {
  using namespace tyche;
  static const std::vector<double> y{0.3, -1.2, 2.5};
  auto a = normal<"mu">(1.0, 2.0);
  auto b = named<"mu">(normal(1.0, 2.0));
  auto c = named<"mu">(make_my_normal(1.0, 2.0));
  const auto ma = model(joint(a, normal(a, 1.5).observe(data(y))));
  const auto mb = model(joint(b, normal(b, 1.5).observe(data(y))));
  const auto mc = model(joint(c, make_my_normal(c, 1.5).observe(data(y))));
  for (double theta : {-2.0, 0.0, 0.7, 3.1}) {
    const std::vector<double> q{theta};
    CHECK(mb.log_prob(q) == ma.log_prob(q));
    CHECK(mc.log_prob(q) == Approx(ma.log_prob(q)).epsilon(1e-14));
  }
  CHECK(mc.parameter_names() == std::vector<std::string>{"mu"});
  // A vector of them, and a positive family named.
  auto v = named<"v">(normal(0.0, 1.0), shape<3>);
  auto s = named<"s">(lognormal(0.0, 1.0));
  const auto mv = model(joint(v, s));
  CHECK(mv.dim() == 4);
  CHECK(mv.constrain(std::vector<double>{0, 0, 0, 0.5})[3] == Approx(std::exp(0.5)));
}
