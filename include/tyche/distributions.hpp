// tyche/distributions.hpp — every distribution family.
#pragma once
#include <tyche/distributions/cauchy.hpp>
#include <tyche/distributions/normal.hpp>
