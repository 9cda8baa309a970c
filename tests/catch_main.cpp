// The Catch2 (v2) main, compiled once and linked into every Catch2 test executable.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
