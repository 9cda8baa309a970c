// See two_tu_a.cpp.
#include <tyche/tyche.hpp>

int two_tu_b_version_major() { return TYCHE_VERSION_MAJOR; }
