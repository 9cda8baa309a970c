// expect: observation_reads<.*random_variable_named<'p', 'h', 'i'>.*phi must be > 0|phi must be > 0.*observation_reads<.*random_variable_named<'p', 'h', 'i'>
// An observed term's support error names the random variables its arguments read: phi declared
// with a normal prior (support the whole line) and used as neg_binomial_2_log's phi (which must
// be > 0). The term has no name of its own, so its checks go through a function whose template
// argument spells the variables it reads, observation_reads<random_variable_named<'p', 'h',
// 'i'>>, which both compilers print in the diagnostic's instantiation notes.
#include <tyche/tyche.hpp>

#include <vector>

int main() {
  using namespace tyche;
  static const std::vector<double> y{0, 3, 1, 7};
  const auto eta = normal<"eta">(0.0, 1.0);
  const auto phi = normal<"phi">(5.0, 1.0);
  const auto m = model(joint(eta, phi, neg_binomial_2_log(eta, phi).observe(data(y))));
  return static_cast<int>(m.dim());
}
