// tyche/tyche.hpp — the umbrella header: everything except backends/cuda.
#pragma once
#include <tyche/config.hpp>
#include <tyche/core/expr.hpp>
#include <tyche/core/leaves.hpp>
#include <tyche/core/operations.hpp>
#include <tyche/core/program.hpp>
