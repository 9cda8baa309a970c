// examples/posteriordb.hpp — the posteriordb reference posteriors of ../shared/posteriors written
// with tyche's model API, one function per posterior (one header per posterior in
// examples/posteriordb/, which an example includes alone to compile only its model; the tests
// include them all through this header). Each takes the posterior's data file and
// returns a posterior<Storage, Model>: the data the model views (design matrices, transformed
// responses; tyche::data(v) and tyche::matrix(p, r, c) keep views, not copies) in a heap-allocated
// Storage that moves with it, and the model. Parameter names, constraints and priors are those of
// each posterior's model.md; θ follows the reference draws' column order.
//
//     const tyche::data_file d = tyche::read_json_data(dir / "kidiq-kidscore_interaction/data.json");
//     const auto p = tyche_examples::kidiq_kidscore_interaction(d);
//     p.model.log_prob(theta);
//
#pragma once

#include "posteriordb/eight_schools.hpp"
#include "posteriordb/kidiq.hpp"
#include "posteriordb/ark.hpp"
#include "posteriordb/mesquite.hpp"
#include "posteriordb/sblrc.hpp"
#include "posteriordb/diamonds.hpp"
#include "posteriordb/low_dim_gauss_mix.hpp"
#include "posteriordb/garch.hpp"
#include "posteriordb/gp_pois_regr.hpp"
