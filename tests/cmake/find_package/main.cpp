// Minimal tyche consumer (tests/cmake). Returns 0 on success.
#include <tyche/tyche.hpp>

static_assert(TYCHE_VERSION_MAJOR == 0, "unexpected tyche major version");

int main() {
    return TYCHE_VERSION_MAJOR == 0 ? 0 : 1;
}
