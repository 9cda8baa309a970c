// tests/cmake/find_package: a consumer of the installed component mpi (tyche::mpi: an MPI
// implementation's headers and libraries). Run as one process (an MPI singleton): its rank, the
// number of ranks and the block of items it holds; returns 0 on success.
#include <tyche/mpi.hpp>

#include <cstdio>
#include <exception>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int status = 0;
  try {
    const tyche::mpi::block b = tyche::mpi::block_of(10);
    if (tyche::mpi::size() == 1 && (tyche::mpi::rank() != 0 || b.begin != 0 || b.end != 10)) {
      std::fprintf(stderr, "tyche consumer (mpi): rank %d of 1 holds [%zu, %zu) of 10\n", tyche::mpi::rank(), b.begin,
                   b.end);
      status = 1;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tyche consumer (mpi): %s\n", e.what());
    status = 1;
  }
  MPI_Finalize();
  return status;
}
