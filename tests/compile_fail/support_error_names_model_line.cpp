// expect: (support_error_names_model_line\.cpp:13:[0-9]+:   required from here.*gamma\(alpha, beta\): alpha must be > 0|gamma\(alpha, beta\): alpha must be > 0.*support_error_names_model_line\.cpp:13:[0-9]+: note: in instantiation of)
// An impossible model's support error names the line of the user's model, with clang too: the
// support checks are `auto` functions, instantiated where joint() calls them (a `void` one is
// instantiated at the end of the translation unit, and clang's notes then stop inside tyche;
// docs/design/model-api.md). Line 13 below is the joint(...) call.
#include <tyche/tyche.hpp>

#include <vector>

int main() {
  using namespace tyche;
  const auto a = normal<"a">(0.0, 1.0);
  const auto m = model(joint(a, gamma<"x">(lit<-2>, lit<1>)));
  return static_cast<int>(m.dim());
}
