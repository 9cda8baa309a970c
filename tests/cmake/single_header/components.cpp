// tests/cmake/single_header: the single header's companions, <tyche/io/json_data.hpp> and (where
// MPI is found, TYCHE_CONSUMER_MPI) <tyche/mpi.hpp>, included from single_include/ alone
// (tools/amalgamate.py writes them beside tyche/tyche.hpp). Reads CmdStan-format JSON data,
// builds a model from it and checks its log density; with MPI, runs as one process (an MPI
// singleton) and checks its rank and block. Returns 0 on success.
#include <tyche/tyche.hpp>
#include <tyche/io/json_data.hpp>
#if defined(TYCHE_CONSUMER_MPI)
#include <tyche/mpi.hpp>
#endif

#include <cmath>
#include <cstdio>
#include <exception>
#include <vector>

int main(int argc, char** argv) {
  int status = 0;
#if defined(TYCHE_CONSUMER_MPI)
  MPI_Init(&argc, &argv);
#else
  (void)argc, (void)argv;
#endif
  try {
    using namespace tyche;
    const data_file d = parse_json_data(R"({"N": 3, "y": [1, 2, 4]})", "consumer");
    param<"mu"> mu;
    auto prog = compile(sum(-0.5 * square(data(d.vector("y")) - mu)));
    const std::vector<double> theta{1.5};
    // -0.5 * (0.25 + 0.25 + 6.25) = -3.375
    if (d.scalar("N") != 3 || std::fabs(prog.value(theta) + 3.375) > 1e-12) {
      std::fprintf(stderr, "tyche consumer (single header, io): N %g, log density %.17g\n", d.scalar("N"),
                   prog.value(theta));
      status = 1;
    }
#if defined(TYCHE_CONSUMER_MPI)
    const mpi::block b = mpi::block_of(10);
    if (mpi::size() == 1 && (mpi::rank() != 0 || b.begin != 0 || b.end != 10)) {
      std::fprintf(stderr, "tyche consumer (single header, mpi): rank %d of 1 holds [%zu, %zu) of 10\n", mpi::rank(),
                   b.begin, b.end);
      status = 1;
    }
#endif
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tyche consumer (single header, components): %s\n", e.what());
    status = 1;
  }
#if defined(TYCHE_CONSUMER_MPI)
  MPI_Finalize();
#endif
  return status;
}
