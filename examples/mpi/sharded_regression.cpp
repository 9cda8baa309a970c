// examples/mpi/sharded_regression.cpp — a logistic regression whose rows are spread over the
// ranks of an MPI program (docs/mpi.md): each rank builds its model from its own block of rows
// (here generated row by row, as a rank would read its block of a file), rank 0's model carries
// the priors and the others declare the same parameters flat; then the same model's chains are
// spread over the ranks instead. Run: mpirun -np 2 ./sharded_regression
#include <tyche/mpi.hpp>
#include <tyche/tyche.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <iostream>
#include <vector>

using namespace tyche;

struct rows {
  std::vector<double> x, y;  // this rank's rows: x row-major, 3 covariates
  std::size_t n = 0;
};

/// A uniform on (0, 1) that depends only on (i, k): any rank computes row i's values alone.
double hashed_uniform(std::size_t i, std::size_t k) {
  std::uint64_t h = (i * 4 + k + 1) * 0x9E3779B97F4A7C15ULL;  // splitmix64's finaliser
  h = (h ^ (h >> 30)) * 0xBF58476D1CE4E5B9ULL;
  h = (h ^ (h >> 27)) * 0x94D049BB133111EBULL;
  return (static_cast<double>((h ^ (h >> 31)) >> 11) + 0.5) / 9007199254740992.0;
}

/// Rows [begin, end) of a data set of y ~ bernoulli_logit(0.5 + x · (1, −1, 0.5)), x uniform on
/// (−2, 2)³.
rows read_rows(std::size_t begin, std::size_t end) {
  rows d;
  const double beta[3] = {1.0, -1.0, 0.5};
  for (std::size_t i = begin; i < end; ++i) {
    double eta = 0.5;
    for (std::size_t k = 0; k < 3; ++k) {
      d.x.push_back(4 * hashed_uniform(i, k) - 2);
      eta += beta[k] * d.x.back();
    }
    d.y.push_back(hashed_uniform(i, 3) < 1 / (1 + std::exp(-eta)) ? 1.0 : 0.0);
  }
  d.n = end - begin;
  return d;
}

auto with_priors(const rows& d) {
  auto alpha = normal<"alpha">(0.0, 2.0);
  auto beta = normal<"beta">(0.0, 2.0, shape<3>);
  return model(joint(alpha, beta, bernoulli_logit(alpha + matvec(matrix(d.x, d.n, 3), beta)).observe(data(d.y))));
}
auto flat_parameters(const rows& d) {
  auto alpha = flat<"alpha">();
  auto beta = flat<"beta">(real_line(), shape<3>);
  return model(joint(alpha, beta, bernoulli_logit(alpha + matvec(matrix(d.x, d.n, 3), beta)).observe(data(d.y))));
}

int main(int argc, char** argv) {
  int provided = 0;  // the chains run on threads (cpu::threads); only this thread calls MPI
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  int status = 0;
  try {
    const std::size_t n = 4000;
    const mpi::block mine = mpi::block_of(n);  // this rank's rows
    const rows d = read_rows(mine.begin, mine.end);
    const nuts_config cfg{.chains = 2, .warmup = 500, .draws = 500, .seed = 1};
    const nuts_fit sharded = mpi::rank() == 0 ? mpi::nuts_sharded(with_priors(d), cfg)
                                              : mpi::nuts_sharded(flat_parameters(d), cfg);
    // The same posterior with every rank holding all the rows, its chains spread over the ranks.
    const rows all = read_rows(0, n);
    const nuts_fit spread = mpi::nuts(with_priors(all), {.chains = 4, .warmup = 500, .draws = 500, .seed = 2});
    if (mpi::rank() == 0) {
      std::cout << "data across " << mpi::size() << " ranks:\n" << summary(sharded) << "\n";
      std::cout << "chains across " << mpi::size() << " ranks:\n" << summary(spread);
    }
  } catch (const std::exception& e) {
    // An error inside tyche's calls reaches every rank (the same message on each). One before
    // them — this rank's data file missing or malformed — reaches this rank only, while the
    // others wait in the next collective call: end the whole job.
    std::cerr << "rank " << mpi::rank() << ": " << e.what() << "\n";
    MPI_Abort(MPI_COMM_WORLD, 1);
    status = 1;
  }
  MPI_Finalize();
  return status;
}
