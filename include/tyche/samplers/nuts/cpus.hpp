// tyche/samplers/nuts/cpus.hpp — how many CPUs this process may run on: what cpu{.threads = 0}
// (and pathfinder's and the device executor's host threads) count.
//
// std::thread::hardware_concurrency() counts the machine's CPUs, not the ones this process may
// use: under `taskset`, a Slurm job's cpuset, a container's cpuset or an MPI rank's binding it can
// be many times more, and then the CPU executor starts that many threads — a chain's split
// gradient (cpu::split) gets a helper per idle CPU it believes in, and the helpers spin on the
// few CPUs there are. On Linux the affinity mask is the count (sched_getaffinity of the calling
// thread: the process's mask unless the thread was given its own); elsewhere, or when the mask
// cannot be read, hardware_concurrency().
//
// cpu_pause(): the spin-wait hint of the thread pools (the split gradient's, the SMC engine's).
#pragma once

#include <cstddef>
#include <thread>

#if defined(__linux__)
#include <cerrno>
#include <sched.h>
#endif

namespace tyche::samplers::detail {

/// The CPUs the calling thread may run on — the process's affinity mask unless the thread was
/// given a mask of its own (on Linux: sched_getaffinity, with a CPU set grown until it holds the
/// machine's CPUs; otherwise std::thread::hardware_concurrency()); at least 1.
inline unsigned available_cpus() {
#if defined(__linux__) && defined(CPU_ALLOC)
  for (int cpus = CPU_SETSIZE; cpus <= (1 << 20); cpus *= 2) {
    cpu_set_t* set = CPU_ALLOC(cpus);
    if (set == nullptr) break;
    const std::size_t bytes = CPU_ALLOC_SIZE(cpus);
    CPU_ZERO_S(bytes, set);
    const int status = sched_getaffinity(0, bytes, set);
    const int count = status == 0 ? CPU_COUNT_S(bytes, set) : 0;
    const bool too_small = status != 0 && errno == EINVAL;  // the kernel's mask is wider
    CPU_FREE(set);
    if (count > 0) return static_cast<unsigned>(count);
    if (!too_small) break;
  }
#endif
  const unsigned n = std::thread::hardware_concurrency();
  return n > 0 ? n : 1u;
}

/// A spinning thread's hint to the CPU (x86 `pause`, ARM `yield`): it waits a few dozen cycles
/// without leaving the CPU, and spares the core's resources meanwhile; nothing elsewhere.
inline void cpu_pause() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

}  // namespace tyche::samplers::detail
