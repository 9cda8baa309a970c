// tyche/tyche.hpp — the umbrella header: everything except backends/cuda.
#pragma once
#include <tyche/config.hpp>
