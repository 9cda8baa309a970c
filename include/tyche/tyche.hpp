// tyche/tyche.hpp — the umbrella header: everything except backends/cuda.
#pragma once
#include <tyche/config.hpp>
#include <tyche/core/expr.hpp>
#include <tyche/core/leaves.hpp>
#include <tyche/core/operations.hpp>
#include <tyche/core/program.hpp>
#include <tyche/distributions.hpp>
#include <tyche/model/joint.hpp>
#include <tyche/model/model.hpp>
#include <tyche/model/random_variable.hpp>
#include <tyche/transforms/bounds.hpp>
#include <tyche/model/intervention.hpp>
#include <tyche/core/substitute.hpp>
#include <tyche/samplers/nuts/instruction_table.hpp>
#include <tyche/samplers/nuts/transition.hpp>
