// Two translation units including the whole library and linked together: a non-inline function
// or variable defined in a header shows up as a multiple-definition link error.
#include <tyche/tyche.hpp>

int two_tu_b_version_major();

int main() {
    return (two_tu_b_version_major() == TYCHE_VERSION_MAJOR) ? 0 : 1;
}
