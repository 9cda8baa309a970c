// expect: has at most 63 characters
// A parameter name of 64 characters: fixed_string packs a name into eight 64-bit words (so that
// nvcc can spell a model's types in a CUDA kernel's arguments, docs/gpu.md), which hold 63.
#include <tyche/tyche.hpp>

int main() {
  auto x = tyche::normal<"a_parameter_name_that_is_much_longer_than_anybody_would_write_xy">(0.0, 1.0);
  (void)x;
}
