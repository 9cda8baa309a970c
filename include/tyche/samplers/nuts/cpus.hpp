// tyche/samplers/nuts/cpus.hpp — how many CPUs this process may run on: what cpu{.threads = 0}
// (and pathfinder's and the device executor's host threads) count.
//
// std::thread::hardware_concurrency() counts the machine's CPUs, not the ones this process may
// use: under `taskset`, a Slurm job's cpuset, a container's cpuset or an MPI rank's binding it can
// be many times more, and then the CPU executor starts that many threads — a chain's split
// gradient (cpu::split) gets a helper per idle CPU it believes in, and the helpers spin on the
// few CPUs there are. On Linux the process's affinity mask is the count (sched_getaffinity of
// the calling thread); elsewhere, or when the mask cannot be read (more than CPU_SETSIZE CPUs),
// hardware_concurrency().
#pragma once

#include <thread>

#if defined(__linux__)
#include <sched.h>
#endif

namespace tyche::samplers::detail {

/// The CPUs the calling thread may run on (its affinity mask's count on Linux; otherwise
/// std::thread::hardware_concurrency()); at least 1.
inline unsigned available_cpus() {
#if defined(__linux__) && defined(CPU_COUNT)
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    const int n = CPU_COUNT(&set);
    if (n > 0) return static_cast<unsigned>(n);
  }
#endif
  const unsigned n = std::thread::hardware_concurrency();
  return n > 0 ? n : 1u;
}

}  // namespace tyche::samplers::detail
