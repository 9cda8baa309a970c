// bench/mpi_scale.cpp — tyche::mpi (issue 17, "MPI"): run as `mpirun -np R mpi_scale [--quick]`
// with R = 1 and 2 (bash bench/run.sh scale does both and prints the ratios). Two cases, one CSV
// row per measurement on rank 0:
//
//   mpi,covertype_sharded,<ranks>,ms_per_gradient,<ms>       Edward2's workload (logistic
//       regression, 581,012 × 54, bench/synthetic.hpp's generator, seed 20261121), the data split
//       over the ranks by rows (mpi::nuts_sharded; rank 0's model carries the priors): the median
//       of 30 summed value-and-gradient evaluations at the last draw of the run below, the
//       MPI_Allgather included;
//   mpi,covertype_sharded,<ranks>,ms_per_leapfrog,<ms>       one chain of mpi::nuts_sharded, 30 +
//       30 iterations: wall-clock seconds (initialisation included) / leapfrog gradients;
//   mpi,covertype_sharded_2_threads,1,ms_per_{gradient,leapfrog},<ms>   the same on one rank with
//       cpu{.threads = 2, .split = cpu_split_parts}: its block in 8 parts on 2 threads (1 rank only);
//   mpi,chains,<ranks>,ess_bulk_per_s,<value>               mpi::nuts, 8 chains of 1000 + 1000 of a
//       hierarchical logistic regression (1,000 × 5, 10 groups), cpu{.threads = 1} on each rank:
//       the smallest bulk ESS over the parameters / wall-clock seconds.
//
// --quick: 58,101 rows (a tenth), 4 chains of 300 + 300. One thread per rank but in the
// _2_threads rows, so that R ranks use R cores.
#include <tyche/mpi.hpp>
#include <tyche/tyche.hpp>

#include "synthetic.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

namespace {

using namespace tyche;
constexpr std::size_t features = 54;

struct block_data {
  std::vector<double> x, y;  // this rank's rows of X (row-major) and of y
  std::size_t rows = 0;
};

auto covertype_with_priors(const block_data& d) {
  auto alpha = normal<"alpha">(0.0, 1.0);
  auto beta = normal<"beta">(0.0, 1.0, shape<features>);
  return model(joint(alpha, beta, bernoulli_logit(alpha + matvec(matrix(d.x, d.rows, features), beta)).observe(data(d.y))));
}
auto covertype_flat(const block_data& d) {
  auto alpha = flat<"alpha">();
  auto beta = flat<"beta">(real_line(), shape<features>);
  return model(joint(alpha, beta, bernoulli_logit(alpha + matvec(matrix(d.x, d.rows, features), beta)).observe(data(d.y))));
}

struct groups_data {
  std::vector<double> x, y;
  std::vector<int> group;
};

/// y[i] ~ bernoulli_logit(a[group[i]] + X[i] · b), a[g] = mu + tau z[g]: 1,000 × 5, 10 groups.
auto hierarchical(const groups_data& d) {
  auto mu = normal<"mu">(0.0, 2.0);
  auto tau = half_normal<"tau">(1.0);
  auto z = std_normal<"z">(shape<10>);
  auto b = normal<"b">(0.0, 1.0, shape<5>);
  auto a = mu + tau * z;
  return model(joint(mu, tau, z, b,
                     bernoulli_logit(gather(a, d.group) + matvec(matrix(d.x, d.y.size(), 5), b)).observe(data(d.y))));
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

/// threads: each rank's (1: the chain's own; n > 1: its block evaluated in cpu_split_parts parts
/// on n threads, mpi::nuts_sharded's cpu::threads).
template <class Model>
void sharded_case(const Model& m, int ranks, bool root, int threads, const char* name) {
  MPI_Barrier(MPI_COMM_WORLD);  // the ranks finished building their data at different times
  const int split = threads > 1 ? cpu_split_parts : 1;
  const nuts_fit fit = mpi::nuts_sharded(
      m, {.chains = 1, .warmup = 30, .draws = 30, .seed = 1, .executor = cpu{.threads = threads, .split = split}});
  if (root)
    std::printf("mpi,%s,%d,ms_per_leapfrog,%.3f\n", name, ranks,
                1e3 * fit.seconds / static_cast<double>(fit.gradient_evaluations));
  // The summed value and gradient at the last draw, timed on every rank together.
  std::vector<double> theta(fit.values[0].end() - static_cast<std::ptrdiff_t>(m.dim()), fit.values[0].end());
  std::vector<double> grad(m.dim()), times;
  mpi::detail::with_shard_target(m, MPI_COMM_WORLD, [&](const auto& target, std::size_t) {
    std::vector<double> ws(target.workspace_size() + 1);
    for (int rep = 0; rep < 31; ++rep) {
      MPI_Barrier(MPI_COMM_WORLD);
      const auto t = std::chrono::steady_clock::now();
      target.value_and_gradient(theta.data(), grad.data(), ws.data());
      if (rep > 0) times.push_back(seconds_since(t));
    }
    return 0;
  }, mpi::detail::shard_threads{.threads = threads, .split = split, .chains = 1, .lanes = 0});
  std::nth_element(times.begin(), times.begin() + static_cast<std::ptrdiff_t>(times.size() / 2), times.end());
  if (root) std::printf("mpi,%s,%d,ms_per_gradient,%.3f\n", name, ranks, 1e3 * times[times.size() / 2]);
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;  // FUNNELED: the _2_threads rows start a helper thread beside the MPI calls
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  const int ranks = mpi::size(), me = mpi::rank();
  const bool root = me == 0;

  {  // covertype, data across ranks
    const std::size_t n = quick ? 58101 : 581012;
    const tyche_bench::logistic_data all(n, features, 20261121);
    const mpi::block rows = mpi::block_of(n);
    block_data d;
    d.rows = rows.size();
    d.x.assign(all.X.begin() + static_cast<std::ptrdiff_t>(rows.begin * features),
               all.X.begin() + static_cast<std::ptrdiff_t>(rows.end * features));
    d.y.assign(all.y.begin() + static_cast<std::ptrdiff_t>(rows.begin), all.y.begin() + static_cast<std::ptrdiff_t>(rows.end));
    if (root) sharded_case(covertype_with_priors(d), ranks, root, 1, "covertype_sharded");
    else sharded_case(covertype_flat(d), ranks, root, 1, "covertype_sharded");
    // One rank on two cores: its block in parts on 2 threads (against 2 ranks of 1 thread).
    if (ranks == 1) sharded_case(covertype_with_priors(d), ranks, root, 2, "covertype_sharded_2_threads");
  }

  {  // chains across ranks
    groups_data d;
    const tyche_bench::logistic_data g(1000, 5, 7);
    d.x = g.X;
    d.y = g.y;
    for (std::size_t i = 0; i < 1000; ++i) d.group.push_back(static_cast<int>(i % 10));
    const auto m = hierarchical(d);
    const int chains = quick ? 4 : 8, iterations = quick ? 300 : 1000;
    MPI_Barrier(MPI_COMM_WORLD);
    const auto t = std::chrono::steady_clock::now();
    const nuts_fit fit = mpi::nuts(
        m, {.chains = chains, .warmup = iterations, .draws = iterations, .seed = 3, .executor = cpu{.threads = 1}});
    const double seconds = seconds_since(t);
    if (root) {
      double least = INFINITY;
      for (const auto& row : summary(fit).rows) least = std::min(least, row.ess_bulk);
      std::printf("mpi,chains,%d,ess_bulk_per_s,%.1f\n", ranks, least / seconds);
      std::printf("mpi,chains,%d,seconds,%.3f\n", ranks, seconds);
    }
  }
  MPI_Finalize();
  return 0;
}
