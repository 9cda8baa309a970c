// expect: random_variable_named<'t', 'h', 'e', 't', 'a'>.*normal\(mu, sigma\): sigma must be > 0|normal\(mu, sigma\): sigma must be > 0.*random_variable_named<'t', 'h', 'e', 't', 'a'>
// A support error names the random variable whose distribution fails its check: the term's own
// type shows its name only as packed numbers (fixed_string<6>{418564630644, ...}), so the check
// goes through a function whose template argument spells it, random_variable_named<'t', 'h',
// 'e', 't', 'a'>, which both compilers print in the diagnostic's instantiation notes.
#include <tyche/tyche.hpp>

int main() {
  using namespace tyche;
  const auto a = normal<"a">(0.0, 1.0);
  const auto m = model(joint(a, normal<"theta">(0.0, a)));
  return static_cast<int>(m.dim());
}
