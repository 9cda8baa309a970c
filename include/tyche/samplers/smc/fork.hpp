// tyche/samplers/smc/fork.hpp — the fork engine (Paige & Wood 2014, "A compilation target for
// probabilistic programming languages"): every particle is a process running the program;
// observe() is a barrier; resampling forks particles or ends them. Also observe(), predict()
// and rng(), the calls a program makes.
//
// Processes. run_fork (in the calling process, the *controller*) forks a *manager*, which
//   - makes itself a child subreaper (prctl PR_SET_CHILD_SUBREAPER), so every process below it
//     that loses its parent becomes its child, and dies with the controller (PDEATHSIG);
//   - forks an *anchor* process that only leads a new process group: every particle and keeper
//     joins that group, so one killpg ends them all;
//   - forks the L particles of a sweep, each running the program from the top;
//   - runs the barrier loop below and streams each sweep's particles to the controller
//     through a pipe; the controller builds the result and calls on_sweep.
// A particle forks its offspring through a short-lived intermediate process (fork, fork,
// exit), so that every offspring is reparented to the manager at once: the manager alone
// reaps every process and sees how each ended (a crash, an exception, an early exit).
//
// Shared memory (mmap MAP_SHARED | MAP_ANONYMOUS, made before any fork): a header with two
// process-shared counting semaphores, `arrived` (a particle reached an observe or the end)
// and `departed` (a particle or keeper read its instruction and finished forking), and one
// record per particle slot (its `go` semaphore, what it reported, the manager's instruction,
// and a buffer for its predictions or error text) and per keeper.
//
// One observe (a barrier), for SMC and PIMH (the paper's Algorithms 1 and 2):
//   particle: write log-likelihood, post arrived, wait on go[slot]
//   manager:  wait for every running particle (reaping and checking for deaths meanwhile);
//             update weights and log Ẑ; if ESS < τ, draw offspring counts O (sorted
//             ancestors, as the in-process engine); write instructions; post each go; wait
//             for as many departures
//   particle: O = 0: exit. O ≥ 1: fork O − 1 children into slots first+1 .. first+O−1,
//             continue as slot `first`, post departed; each copy reseeds rng() for its slot.
// Particle Gibbs (Algorithms 3 and 4) resamples at every observe, and every particle with
// offspring also forks a *keeper*: a copy frozen at that observe, waiting in the retain/
// branch loop. A conditional sweep runs L − 1 fresh particles; slot 0 is the retained trace,
// whose keeper at observe n forks the retained particle's new offspring. After each sweep a
// particle b is drawn; the keepers on b's lineage are kept and every other keeper ends.
// Keepers whose lineage has died out are ended at once, so the keepers alive are the
// distinct ancestors of the current particles.
//
// Errors. A particle that throws reports the message; one that dies (abort, SIGSEGV, exit)
// is reaped by the manager; NaN or +inf log-likelihoods, programs that observe a different
// number of times, and particles that do not reach the next observe within
// config::timeout_seconds are detected by the manager. Each ends the run: the manager kills
// the process group, reaps every process, reports; run_fork reaps the manager and throws
// std::runtime_error naming the particle, the observe and the cause.
//
// Restrictions. Call run_fork from a single-threaded process (fork copies only the calling
// thread; a lock held by another thread stays locked in every particle). In particles, the
// default dispositions of SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTERM, SIGINT and SIGPIPE
// are restored, so a crash ends the particle.
//
// Linux only: fork, POSIX semaphores and shared memory, and prctl (the child subreaper, the
// parent-death signal). TYCHE_SMC_FORK_ENGINE is 1 where <sys/prctl.h> exists on Linux, else 0;
// with 0 this header declares no engine, the calls a program makes (observe, predict, rng) throw
// std::logic_error, and run_smc/run_pimh/run_pg take stepwise programs only (the in-process
// engine). Defining it to 0 before including tyche leaves the engine out on Linux too. See
// docs/smc.md, "Where the fork engine runs".
#pragma once
#ifndef TYCHE_SMC_FORK_ENGINE
#if defined(__linux__) && __has_include(<sys/prctl.h>)
#define TYCHE_SMC_FORK_ENGINE 1
#else
#define TYCHE_SMC_FORK_ENGINE 0
#endif
#endif

#include <tyche/random/philox.hpp>
#include <tyche/samplers/smc/config.hpp>
#include <tyche/samplers/smc/detail/collector.hpp>
#include <tyche/samplers/smc/program.hpp>
#include <tyche/samplers/smc/resampling.hpp>
#include <tyche/samplers/smc/result.hpp>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <exception>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#if TYCHE_SMC_FORK_ENGINE
#include <fcntl.h>
#include <semaphore.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#endif

namespace tyche::smc {

#if TYCHE_SMC_FORK_ENGINE

namespace detail {

enum class arrival : int { none = 0, observe = 1, finished = 2, error = 3 };

struct shared_header {
  sem_t arrived;
  sem_t departed;
  pid_t manager;
  std::uint64_t seed;
  std::size_t sweep;
};

struct slot_record {
  // Two semaphores, used at even and odd observes: a particle that reaches observe n + 1 in a
  // slot must not take the post meant for the slot's previous holder at observe n.
  sem_t go[2];
  pid_t pid;
  arrival kind;
  std::size_t observes;   // observes made before this arrival (the index of this observe)
  double log_likelihood;
  // The manager's instruction, written before go is posted.
  std::size_t offspring;  // copies to continue with; 0: end
  std::size_t first;      // the slot of the first copy (the particle itself)
  std::ptrdiff_t keeper;  // particle Gibbs: the keeper to fork here, or −1
  std::size_t length;     // bytes used in the buffer that follows
};

struct keeper_record {
  sem_t go;
  pid_t pid;
  int end;                // 1: end; 0: fork `children` particles into slots first, first + 1, ...
  std::size_t children;
  std::size_t first;
};

/// The shared segment: header, slots (each followed by its buffer), keepers.
class shared_segment {
 public:
  shared_segment(std::size_t slots, std::size_t buffer_bytes, std::size_t keepers)
      : slots_(slots), keepers_(keepers) {
    slot_stride_ = round_up(sizeof(slot_record) + buffer_bytes);
    buffer_bytes_ = slot_stride_ - sizeof(slot_record);
    bytes_ = round_up(sizeof(shared_header)) + slots * slot_stride_ + keepers * round_up(sizeof(keeper_record));
    void* p = ::mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
      throw std::runtime_error(std::string("tyche::smc (fork engine): mmap of shared memory failed: ") +
                               std::strerror(errno));
    base_ = static_cast<char*>(p);
    std::memset(base_, 0, bytes_);
    bool ok = ::sem_init(&header().arrived, 1, 0) == 0 && ::sem_init(&header().departed, 1, 0) == 0;
    for (std::size_t s = 0; s < slots; ++s)
      ok = ok && ::sem_init(&slot(s).go[0], 1, 0) == 0 && ::sem_init(&slot(s).go[1], 1, 0) == 0;
    for (std::size_t k = 0; k < keepers; ++k) ok = ok && ::sem_init(&keeper(k).go, 1, 0) == 0;
    if (!ok) {
      ::munmap(base_, bytes_);
      throw std::runtime_error("tyche::smc (fork engine): sem_init failed");
    }
  }
  shared_segment(const shared_segment&) = delete;
  shared_segment& operator=(const shared_segment&) = delete;
  ~shared_segment() { ::munmap(base_, bytes_); }

  shared_header& header() const { return *reinterpret_cast<shared_header*>(base_); }
  slot_record& slot(std::size_t s) const {
    return *reinterpret_cast<slot_record*>(base_ + round_up(sizeof(shared_header)) + s * slot_stride_);
  }
  char* buffer(std::size_t s) const { return reinterpret_cast<char*>(&slot(s)) + sizeof(slot_record); }
  std::size_t buffer_bytes() const { return buffer_bytes_; }
  keeper_record& keeper(std::size_t k) const {
    return *reinterpret_cast<keeper_record*>(base_ + round_up(sizeof(shared_header)) + slots_ * slot_stride_ +
                                             k * round_up(sizeof(keeper_record)));
  }
  std::size_t slots() const { return slots_; }
  std::size_t keepers() const { return keepers_; }

 private:
  static std::size_t round_up(std::size_t n) { return (n + 63) / 64 * 64; }
  char* base_ = nullptr;
  std::size_t slots_, keepers_, slot_stride_ = 0, buffer_bytes_ = 0, bytes_ = 0;
};

/// What a particle process knows about itself (one per process; inert outside a run).
struct particle_context {
  const shared_segment* shared = nullptr;
  std::size_t slot = 0;
  std::size_t observes = 0;
  counter_rng rng{0};
  std::vector<std::pair<std::string, double>> predicted;
};

inline particle_context*& current_particle() {
  static particle_context* c = nullptr;
  return c;
}

inline particle_context& require_particle(const char* function) {
  particle_context* c = current_particle();
  if (c == nullptr)
    throw std::logic_error(std::string(function) +
                           " was called outside a fork-engine run: call it from a program given to "
                           "tyche::smc::run_smc, run_pimh or run_pg");
  return *c;
}

/// An error of the shared checks (detail/collector.hpp) without its "tyche::smc: ": the fork
/// engine's message starts with the run_* function's name and "(fork engine): " instead.
inline std::string without_prefix(const std::exception& e) {
  const std::string what = e.what(), prefix = "tyche::smc: ";
  return what.rfind(prefix, 0) == 0 ? what.substr(prefix.size()) : what;
}

/// Exit codes of particle processes that the manager translates.
inline constexpr int exit_fork_failed = 70;
inline constexpr int exit_manager_gone = 71;

inline constexpr int exit_controller_gone = 72;

/// The manager's process group, for its signal handler (0 until the group exists).
inline volatile std::sig_atomic_t& manager_group() {
  static volatile std::sig_atomic_t g = 0;
  return g;
}

/// The manager's handler of SIGTERM, its parent-death signal: the controller is gone (killed,
/// even by SIGKILL, or ended), so every particle and keeper of the run is killed with the group
/// (a busy one would otherwise compute on, and a waiting one notice only after seconds). Only
/// async-signal-safe calls.
inline void manager_orphaned(int) {
  const pid_t g = static_cast<pid_t>(manager_group());
  if (g > 0) ::killpg(g, SIGKILL);
  ::_exit(exit_controller_gone);
}

/// The intermediate process this process was forked through by spawn() (below), or 0: until
/// that intermediate has fully exited, it, not the manager, is this process's parent.
inline pid_t& spawn_intermediate() {
  static pid_t p = 0;
  return p;
}

/// Waits on a semaphore, checking every second that the manager is still alive: every
/// particle and keeper is the manager's child (directly, or reparented to it when the
/// intermediate of its fork exits), so a parent that is neither the manager nor that
/// intermediate, seen twice in a row, means the manager is gone. The intermediate exits at once,
/// but on a loaded machine it can stay in the kernel's exit path (state D) for seconds, and until
/// it is gone it is still the parent; counting it as a stranger made particles exit (status 71)
/// in busy test runs. (Probing the manager's pid with kill(pid, 0) is not enough: a busy machine
/// reuses pids within a second; a parent pid equal to the old intermediate's cannot be a reused
/// one, since a process is only reparented to a process that already exists.)
inline void particle_wait(sem_t* s, pid_t manager) {
  int strange_parent = 0;
  for (;;) {
    timespec ts{};
    ::clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += 1;
    if (::sem_timedwait(s, &ts) == 0) return;
    if (errno != ETIMEDOUT) continue;
    const pid_t parent = ::getppid();
    const bool expected = parent == manager || (spawn_intermediate() != 0 && parent == spawn_intermediate());
    strange_parent = expected ? 0 : strange_parent + 1;
    if (strange_parent >= 2) ::_exit(exit_manager_gone);
  }
}

/// Forks a process that is reparented to the manager at once (through an intermediate that
/// exits). Returns true in the new process, false in the caller; the new process's pid is
/// stored in *pid before this returns in the caller.
inline bool spawn(pid_t* pid) {
  const pid_t middle = ::fork();
  if (middle < 0) ::_exit(exit_fork_failed);
  if (middle == 0) {
    const pid_t child = ::fork();
    if (child < 0) ::_exit(exit_fork_failed);
    if (child > 0) {
      *pid = child;
      ::_exit(0);
    }
    *pid = ::getpid();
    spawn_intermediate() = ::getppid();  // the intermediate, or the manager if it has already gone
    return true;
  }
  int status = 0;
  while (::waitpid(middle, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) ::_exit(exit_fork_failed);
  return false;
}

/// The keeper loop (the paper's Algorithm 4). Returns only in a forked child, with the slot
/// that child continues as.
inline std::size_t keeper_loop(particle_context& c, std::size_t k) {
  const shared_segment& sh = *c.shared;
  keeper_record& rec = sh.keeper(k);
  for (;;) {
    particle_wait(&rec.go, sh.header().manager);
    if (rec.end) ::_exit(0);
    const std::size_t children = rec.children, first = rec.first;
    for (std::size_t j = 0; j < children; ++j)
      if (spawn(&sh.slot(first + j).pid)) return first + j;
    ::sem_post(&sh.header().departed);
  }
}

/// Writes the predictions (or an error text) into the particle's buffer.
inline bool write_buffer(const particle_context& c, const std::string& bytes) {
  const shared_segment& sh = *c.shared;
  if (bytes.size() > sh.buffer_bytes()) return false;
  std::memcpy(sh.buffer(c.slot), bytes.data(), bytes.size());
  sh.slot(c.slot).length = bytes.size();
  return true;
}

template <class T>
void put(std::string& out, const T& v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof(T));
}
template <class T>
T get(const char*& p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  p += sizeof(T);
  return v;
}

inline std::string serialise(const std::vector<std::pair<std::string, double>>& list) {
  std::string out;
  put(out, static_cast<std::uint32_t>(list.size()));
  for (const auto& [name, value] : list) {
    put(out, static_cast<std::uint32_t>(name.size()));
    out += name;
    put(out, value);
  }
  return out;
}

inline prediction_list deserialise(std::string_view bytes) {
  prediction_list out;
  const char* p = bytes.data();
  const auto n = get<std::uint32_t>(p);
  out.reserve(n);
  for (std::uint32_t i = 0; i < n; ++i) {
    const auto len = get<std::uint32_t>(p);
    std::string name(p, len);
    p += len;
    out.emplace_back(std::move(name), get<double>(p));
  }
  return out;
}

/// Reports an arrival of the given kind (with the buffer already written) and, for an observe,
/// waits for and carries out the manager's instruction.
inline void arrive(particle_context& c, arrival kind, double log_likelihood) {
  const shared_segment& sh = *c.shared;
  slot_record& rec = sh.slot(c.slot);
  rec.log_likelihood = log_likelihood;
  rec.observes = c.observes;
  rec.kind = kind;
  ::sem_post(&sh.header().arrived);
  if (kind != arrival::observe) ::_exit(0);
  particle_wait(&rec.go[c.observes % 2], sh.header().manager);
  const std::size_t offspring = rec.offspring, first = rec.first;
  const std::ptrdiff_t keeper = rec.keeper;
  if (offspring == 0) {
    ::sem_post(&sh.header().departed);
    ::_exit(0);
  }
  std::size_t slot = first;
  bool is_new = false;
  if (keeper >= 0) {
    if (spawn(&sh.keeper(static_cast<std::size_t>(keeper)).pid)) {
      slot = keeper_loop(c, static_cast<std::size_t>(keeper));
      is_new = true;
    }
  }
  for (std::size_t j = 1; j < offspring && !is_new; ++j)
    if (spawn(&sh.slot(first + j).pid)) {
      slot = first + j;
      is_new = true;
    }
  if (!is_new) {
    sh.slot(first).pid = ::getpid();
    ::sem_post(&sh.header().departed);
  }
  c.slot = slot;
  ++c.observes;
  c.rng = particle_rng(sh.header().seed, sh.header().sweep, slot, c.observes);
}

[[noreturn]] inline void report_and_exit(particle_context& c, const std::string& what) {
  std::string text = what;
  if (text.size() > c.shared->buffer_bytes()) text.resize(c.shared->buffer_bytes());
  write_buffer(c, text);
  arrive(c, arrival::error, 0);
  ::_exit(0);
}

inline void restore_default_signals() {
  for (int s : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTERM, SIGINT, SIGPIPE, SIGCHLD})
    ::signal(s, SIG_DFL);
}

/// A particle process from the top of the program.
template <class Program>
[[noreturn]] void particle_main(const Program& program, const shared_segment& sh, std::size_t slot) {
  static particle_context c;
  c.shared = &sh;
  c.slot = slot;
  c.observes = 0;
  c.predicted.clear();
  c.rng = particle_rng(sh.header().seed, sh.header().sweep, slot, 0);
  current_particle() = &c;
  sh.slot(slot).pid = ::getpid();
  try {
    program();
  } catch (const std::exception& e) {
    report_and_exit(c, std::string("threw: ") + e.what());
  } catch (...) {
    report_and_exit(c, "threw an exception not derived from std::exception");
  }
  const std::string bytes = serialise(c.predicted);
  if (!write_buffer(c, bytes))
    report_and_exit(c, "made " + std::to_string(bytes.size()) + " bytes of predictions, more than "
                       "config::predict_bytes = " + std::to_string(sh.buffer_bytes()));
  arrive(c, arrival::finished, 0);
  ::_exit(0);
}

// --- the manager ------------------------------------------------------------------------------

struct fork_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

inline std::string describe_status(int status) {
  if (WIFSIGNALED(status)) {
    const int s = WTERMSIG(status);
    const char* name = ::strsignal(s);
    return "was killed by signal " + std::to_string(s) + " (" + (name ? name : "?") + ")";
  }
  if (WIFEXITED(status)) {
    const int code = WEXITSTATUS(status);
    if (code == exit_fork_failed) return "could not fork (exit status 70: a process or memory limit?)";
    return "exited with status " + std::to_string(code) + " before the end of the program";
  }
  return "stopped (status " + std::to_string(status) + ")";
}

inline std::string format_seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", s);
  return buf;
}

/// The pipe from manager to controller: one message per sweep, then done or an error.
enum message_type : char { message_sweep = 'S', message_error = 'E', message_done = 'D', message_group = 'G' };

inline bool write_all(int fd, const std::string& bytes) {
  std::size_t off = 0;
  while (off < bytes.size()) {
    const ssize_t w = ::write(fd, bytes.data() + off, bytes.size() - off);
    if (w < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    off += static_cast<std::size_t>(w);
  }
  return true;
}

inline bool read_all(int fd, char* out, std::size_t n) {
  std::size_t off = 0;
  while (off < n) {
    const ssize_t r = ::read(fd, out + off, n - off);
    if (r < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    if (r == 0) return false;
    off += static_cast<std::size_t>(r);
  }
  return true;
}

inline void send(int fd, message_type type, const std::string& payload) {
  std::string m;
  put(m, type);
  put(m, static_cast<std::uint64_t>(payload.size()));
  m += payload;
  if (!write_all(fd, m)) throw fork_error("the controller stopped listening");
}

template <class Program>
class manager {
 public:
  manager(const Program& program, algorithm method, const config& cfg, int pipe,
          std::chrono::steady_clock::time_point start, const char* function)
      : program_(program), method_(method), cfg_(cfg), pipe_(pipe), controller_(::getppid()), start_(start),
        function_(function),
        L_(cfg.particles),
        shared_(cfg.particles, cfg.predict_bytes, method == algorithm::pg ? cfg.max_processes : 0) {}

  [[noreturn]] void main() {
    int code = 0;
    try {
      setup();
      for (std::size_t m = 0; m < cfg_.sweeps; ++m) {
        if (m > 0 && seconds_since(start_) >= cfg_.max_seconds) break;
        sweep(m);
      }
      cleanup();
      send(pipe_, message_done, {});
    } catch (const std::exception& e) {
      cleanup();
      try {
        send(pipe_, message_error, std::string(function_) + " (fork engine): " + e.what());
      } catch (...) {
        code = 1;
      }
    }
    ::_exit(code);
  }

 private:
  void setup() {
    ::prctl(PR_SET_CHILD_SUBREAPER, 1);
    ::signal(SIGPIPE, SIG_IGN);
    ::signal(SIGCHLD, SIG_DFL);
    shared_.header().manager = ::getpid();
    shared_.header().seed = cfg_.seed;
    const pid_t anchor = ::fork();
    if (anchor < 0) throw fork_error(std::string("fork failed: ") + std::strerror(errno));
    if (anchor == 0) {
      ::close(pipe_);  // the controller sees end-of-file when the manager alone has ended
      ::setpgid(0, 0);
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      for (;;) ::pause();
    }
    ::setpgid(anchor, anchor);
    group_ = anchor;
    // From here a dead controller takes the whole group with it (manager_orphaned).
    manager_group() = static_cast<std::sig_atomic_t>(group_);
    struct sigaction on_term {};
    on_term.sa_handler = manager_orphaned;
    ::sigemptyset(&on_term.sa_mask);
    ::sigaction(SIGTERM, &on_term, nullptr);
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != controller_) manager_orphaned(0);  // it died before the prctl
    std::string g;
    put(g, static_cast<std::int64_t>(group_));
    send(pipe_, message_group, g);
  }

  /// Kills the group and reaps every process of the run. A process the program forked that left
  /// the group (setsid) is this subreaper's child once its parent has ended: it is killed by
  /// pid, from /proc's list of this process's children, so it cannot hold the report back.
  /// Where that list is missing, the wait is bounded (2 s) and such a process is left running.
  void cleanup() {
    if (group_ > 0) ::killpg(group_, SIGKILL);
    const auto start = std::chrono::steady_clock::now();
    const std::string children = "/proc/self/task/" + std::to_string(::getpid()) + "/children";
    int status = 0;
    for (;;) {
      const pid_t p = ::waitpid(-1, &status, WNOHANG);
      if (p > 0 || (p < 0 && errno == EINTR)) continue;
      if (p < 0) break;  // ECHILD: none left
      if (std::FILE* f = std::fopen(children.c_str(), "r")) {
        long pid = 0;
        while (std::fscanf(f, "%ld", &pid) == 1)
          if (pid > 1) ::kill(static_cast<pid_t>(pid), SIGKILL);
        std::fclose(f);
      }
      if (std::chrono::steady_clock::now() - start > std::chrono::seconds(2)) break;
      ::usleep(1000);
    }
    group_ = 0;
    manager_group() = 0;
  }

  void launch(std::size_t slot) {
    slot_record& rec = shared_.slot(slot);
    rec.kind = arrival::none;
    rec.length = 0;
    const pid_t pid = ::fork();
    if (pid < 0) throw fork_error(std::string("fork failed: ") + std::strerror(errno));
    if (pid == 0) {
      ::setpgid(0, group_);
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // dies with the manager (its offspring poll, above)
      if (::getppid() != shared_.header().manager) ::_exit(exit_manager_gone);
      ::close(pipe_);
      restore_default_signals();
      particle_main(program_, shared_, slot);
    }
    ::setpgid(pid, group_);
    rec.pid = pid;
    owner_[pid] = {slot, false};
  }

  // Who a pid is, for the reaper: a particle slot or a keeper, and whether its end is expected.
  struct process {
    std::size_t index;
    bool keeper;
    bool ending = false;
  };

  std::string who(std::size_t slot) const { return "particle " + std::to_string(slot); }
  /// Where the running particles are: between the last barrier passed and the next.
  std::string where() const {
    return passed_ == 0 ? "before its first observe"
                        : "after observe " + std::to_string(passed_ - 1) + " (0-based)";
  }

  /// Reaps every ended process; throws for one that ended unexpectedly.
  void reap() {
    for (;;) {
      int status = 0;
      const pid_t p = ::waitpid(-1, &status, WNOHANG);
      if (p <= 0) return;
      auto it = owner_.find(p);
      if (it == owner_.end()) {
        // Not yet registered: a new particle or keeper (its pid is in shared memory).
        for (std::size_t s = 0; s < L_ && it == owner_.end(); ++s)
          if (shared_.slot(s).pid == p) it = owner_.emplace(p, process{s, false}).first;
        for (std::size_t k = 0; k < shared_.keepers() && it == owner_.end(); ++k)
          if (shared_.keeper(k).pid == p && keeper_used_[k]) it = owner_.emplace(p, process{k, true}).first;
      }
      if (it == owner_.end()) {
        if (WIFEXITED(status) && WEXITSTATUS(status) == 0) continue;
        throw fork_error("a particle process (pid " + std::to_string(p) + ") " + describe_status(status) +
                         " " + where() + " (sweep " + std::to_string(sweep_) + ")");
      }
      const process proc = it->second;
      owner_.erase(it);
      if (proc.keeper) {
        if (proc.ending && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
          release_keeper(proc.index);
          continue;
        }
        throw fork_error("the keeper of observe " + std::to_string(keeper_observe_[proc.index]) +
                         " (pid " + std::to_string(p) + ") " + describe_status(status));
      }
      if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && proc.ending) continue;
      // The process may have moved to another slot since it was registered (a parent continues
      // in the first slot of its offspring, and may finish before the manager re-registers it).
      // While offspring are being forked, a slot may still show the pid of its previous holder.
      std::size_t slot = proc.index;
      bool reported = false;
      for (std::size_t s = 0; s < L_ && !reported; ++s) {
        const slot_record& rec = shared_.slot(s);
        if (rec.pid != p) continue;
        slot = s;
        reported = rec.kind == arrival::finished || rec.kind == arrival::error;
      }
      if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && reported) continue;
      throw fork_error(who(slot) + " (pid " + std::to_string(p) + ") " + describe_status(status) +
                       " " + where() + " (sweep " + std::to_string(sweep_) + ")");
    }
  }

  /// Waits for n posts of a semaphore, reaping meanwhile; throws after the timeout.
  template <class Missing>
  void collect(sem_t* s, std::size_t n, const char* what, Missing missing) {
    const auto begin = std::chrono::steady_clock::now();
    for (std::size_t got = 0; got < n;) {
      timespec ts{};
      ::clock_gettime(CLOCK_REALTIME, &ts);
      ts.tv_nsec += 5'000'000;
      if (ts.tv_nsec >= 1'000'000'000) {
        ts.tv_sec += 1;
        ts.tv_nsec -= 1'000'000'000;
      }
      if (::sem_timedwait(s, &ts) == 0) {
        ++got;
        continue;
      }
      reap();
      if (seconds_since(begin) > cfg_.timeout_seconds)
        throw fork_error("timed out after " + format_seconds(cfg_.timeout_seconds) + " s waiting for " +
                         missing() + " " + what + " (config::timeout_seconds)");
    }
  }

  std::size_t allocate_keeper(std::size_t observe) {
    if (free_keepers_.empty())
      throw fork_error("particle Gibbs needs more than config::max_processes = " +
                       std::to_string(cfg_.max_processes) + " keeper processes; raise it or use fewer particles");
    const std::size_t k = free_keepers_.back();
    free_keepers_.pop_back();
    keeper_used_[k] = true;
    keeper_observe_[k] = observe;
    shared_.keeper(k).pid = 0;
    shared_.keeper(k).end = 0;
    return k;
  }
  void release_keeper(std::size_t k) {
    keeper_used_[k] = false;
    free_keepers_.push_back(k);
  }
  void end_keeper(std::size_t k) {
    keeper_record& rec = shared_.keeper(k);
    rec.end = 1;
    for (auto& [pid, p] : owner_)
      if (p.keeper && p.index == k && pid == rec.pid) p.ending = true;
    if (owner_.find(rec.pid) == owner_.end()) owner_[rec.pid] = {k, true, true};
    ::sem_post(&rec.go);
  }

  void sweep(std::size_t m) {
    sweep_ = m;
    passed_ = 0;
    shared_.header().sweep = m;
    const bool pg = method_ == algorithm::pg, conditional = pg && m > 0;
    const std::size_t first_running = conditional ? 1 : 0;
    std::vector<double> log_w(L_, 0.0), increment(L_, 0.0);
    double log_evidence = 0, log_total = std::log(static_cast<double>(L_));  // log Σ w
    double final_ess = static_cast<double>(L_);  // sweep_record::final_ess
    for (std::size_t s = first_running; s < L_; ++s) launch(s);

    // Particle Gibbs bookkeeping for this sweep.
    std::vector<std::vector<std::size_t>> ancestors;         // per observe: parent of each new slot
    std::vector<std::vector<std::ptrdiff_t>> keeper_of;       // per observe: keeper of each old slot
    std::vector<std::vector<double>> increments;              // per observe

    for (;;) {
      collect(&shared_.header().arrived, L_ - first_running, "to reach the next observe or the end", [&] {
        std::string s;
        for (std::size_t l = first_running; l < L_; ++l)
          if (shared_.slot(l).kind == arrival::none) s += (s.empty() ? "particle " : ", ") + std::to_string(l);
        return s.empty() ? std::string("a particle") : s;
      });
      // What arrived.
      const std::size_t n = shared_.slot(first_running).observes;
      for (std::size_t l = first_running; l < L_; ++l) {
        const slot_record& rec = shared_.slot(l);
        if (rec.kind == arrival::error)
          throw fork_error(who(l) + " " + std::string(shared_.buffer(l), rec.length) + " (after " +
                           std::to_string(rec.observes) + " observes; sweep " + std::to_string(m) + ")");
      }
      const arrival kind = shared_.slot(first_running).kind;
      for (std::size_t l = first_running; l < L_; ++l) {
        const slot_record& rec = shared_.slot(l);
        if (rec.kind != kind || rec.observes != n)
          throw fork_error(mismatch(first_running, kind, n, l, rec.kind, rec.observes));
      }
      if (kind == arrival::finished) {
        for (std::size_t l = first_running; l < L_; ++l) owner_[shared_.slot(l).pid] = {l, false, true};
        if (known_observes_ != npos && n != known_observes_)
          throw fork_error("the program called observe " + std::to_string(n) + " times in sweep " +
                           std::to_string(m) + " but " + std::to_string(known_observes_) +
                           " times before; a program must call observe the same number of times on every run");
        known_observes_ = n;
        break;
      }
      if (conditional && n >= known_observes_)
        throw fork_error("the program called observe more than " + std::to_string(known_observes_) +
                         " times in sweep " + std::to_string(m) + "; a program must call observe the same "
                         "number of times on every run");
      for (std::size_t l = first_running; l < L_; ++l) {
        const double v = shared_.slot(l).log_likelihood;
        if (std::isnan(v) || v == std::numeric_limits<double>::infinity()) {
          throw fork_error(without_prefix(bad_weight(v, l, n)));
        }
        increment[l] = v;
      }
      if (conditional) increment[0] = retained_increment_[n];
      for (std::size_t l = 0; l < L_; ++l) log_w[l] += increment[l];
      const weight_summary after = summarise_weights(log_w);
      if (after.log_sum == -std::numeric_limits<double>::infinity()) throw fork_error(without_prefix(all_zero(n)));
      log_evidence += after.log_sum - log_total;
      log_total = after.log_sum;
      final_ess = after.ess;

      // Offspring.
      std::vector<std::size_t> ancestor;
      const bool resample_now = pg || after.ess < cfg_.ess_threshold * static_cast<double>(L_);
      if (resample_now) {
        counter_rng g = engine_rng(cfg_.seed, m, n);
        if (conditional) {
          ancestor.push_back(0);
          // Multinomial: see the note in in_process.hpp.
          const auto rest = resample(log_w, L_ - 1, resampling_scheme::multinomial, g);
          ancestor.insert(ancestor.end(), rest.begin(), rest.end());
        } else {
          ancestor = resample(log_w, L_, cfg_.resampling, g);
        }
        std::fill(log_w.begin(), log_w.end(), 0.0);
        log_total = std::log(static_cast<double>(L_));
      } else {
        for (std::size_t l = 0; l < L_; ++l) ancestor.push_back(l);
      }
      std::vector<std::size_t> count(L_, 0), first(L_, 0);
      for (std::size_t i = L_; i-- > 0;) {
        ++count[ancestor[i]];
        first[ancestor[i]] = i;
      }
      // Instructions.
      std::vector<std::ptrdiff_t> keepers(L_, -1);
      if (conditional) keepers[0] = static_cast<std::ptrdiff_t>(retained_keeper_[n]);
      std::size_t posts = 0;
      for (std::size_t l = first_running; l < L_; ++l) {
        slot_record& rec = shared_.slot(l);
        rec.offspring = count[l];
        rec.first = first[l];
        rec.keeper = pg && count[l] > 0 ? keepers[l] = static_cast<std::ptrdiff_t>(allocate_keeper(n)) : -1;
        if (count[l] == 0) {
          auto it = owner_.find(rec.pid);
          if (it != owner_.end()) it->second.ending = true;
          else owner_[rec.pid] = {l, false, true};
        }
      }
      for (std::size_t l = first_running; l < L_; ++l) {
        shared_.slot(l).kind = arrival::none;
        shared_.slot(l).length = 0;
      }
      for (std::size_t l = first_running; l < L_; ++l) {
        ::sem_post(&shared_.slot(l).go[n % 2]);
        passed_ = n + 1;
        ++posts;
      }
      if (conditional) {
        keeper_record& rec = shared_.keeper(retained_keeper_[n]);
        rec.end = 0;
        rec.children = count[0] - 1;  // the retained trace itself continues in the next keeper
        rec.first = 1;
        ::sem_post(&rec.go);
        ++posts;
      }
      collect(&shared_.header().departed, posts, "to finish forking", [] { return std::string("a particle"); });
      for (std::size_t l = first_running; l < L_; ++l) owner_[shared_.slot(l).pid] = {l, false};
      if (pg) {
        for (std::size_t l = 0; l < L_; ++l)
          if (keepers[l] >= 0 && !(conditional && l == 0))
            owner_[shared_.keeper(static_cast<std::size_t>(keepers[l])).pid] = {static_cast<std::size_t>(keepers[l]), true};
        ancestors.push_back(std::move(ancestor));
        keeper_of.push_back(std::move(keepers));
        increments.push_back(increment);
        prune(ancestors, keeper_of, conditional);
      }
      reap();
    }

    // The sweep's particle set.
    const std::vector<double> w = normalised_weights(log_w);
    std::vector<std::string> bytes(L_);
    for (std::size_t l = first_running; l < L_; ++l) bytes[l].assign(shared_.buffer(l), shared_.slot(l).length);
    if (conditional) bytes[0] = retained_predictions_;
    bool accepted = true;
    if (method_ == algorithm::pimh && m > 0) {
      counter_rng g = engine_rng(cfg_.seed, m, final_step);
      accepted = std::log(g.uniform01()) < log_evidence - current_log_evidence_;
    }
    if (accepted) current_log_evidence_ = log_evidence;
    if (pg) {
      counter_rng g = engine_rng(cfg_.seed, m, final_step);
      std::size_t b = sample_discrete(g, w);
      retained_predictions_ = bytes[b];
      const std::size_t N = ancestors.size();
      std::vector<std::size_t> keep(N);
      retained_increment_.assign(N, 0.0);
      for (std::size_t n = N; n-- > 0;) {
        b = ancestors[n][b];
        keep[n] = static_cast<std::size_t>(keeper_of[n][b]);
        retained_increment_[n] = increments[n][b];
      }
      // keeper_of holds only live keepers (prune clears the entries of those it ends).
      for (std::size_t n = 0; n < N; ++n)
        for (std::size_t l = 0; l < L_; ++l)
          if (keeper_of[n][l] >= 0 && static_cast<std::size_t>(keeper_of[n][l]) != keep[n])
            end_keeper(static_cast<std::size_t>(keeper_of[n][l]));
      retained_keeper_ = std::move(keep);
    }
    std::string payload;
    put(payload, static_cast<std::uint64_t>(m));
    put(payload, log_evidence);
    put(payload, static_cast<std::uint8_t>(accepted ? 1 : 0));
    put(payload, seconds_since(start_));
    put(payload, final_ess);
    put(payload, static_cast<std::uint64_t>(L_));
    for (std::size_t l = 0; l < L_; ++l) {
      put(payload, w[l]);
      put(payload, static_cast<std::uint64_t>(bytes[l].size()));
      payload += bytes[l];
    }
    send(pipe_, message_sweep, payload);
    reap();
  }

  /// Ends the keepers whose lineage has no particle left (slot 0 of a conditional sweep is
  /// the retained trace, never pruned: its keepers are the retained keepers).
  void prune(const std::vector<std::vector<std::size_t>>& ancestors,
             std::vector<std::vector<std::ptrdiff_t>>& keeper_of, bool conditional) {
    std::vector<char> alive(L_, 1);
    for (std::size_t n = ancestors.size(); n-- > 0;) {
      std::vector<char> parent(L_, 0);
      for (std::size_t i = 0; i < L_; ++i)
        if (alive[i]) parent[ancestors[n][i]] = 1;
      for (std::size_t l = 0; l < L_; ++l) {
        const std::ptrdiff_t k = keeper_of[n][l];
        if (k < 0 || parent[l] || (conditional && l == 0)) continue;
        end_keeper(static_cast<std::size_t>(k));
        keeper_of[n][l] = -1;  // its id may be reused
      }
      alive = std::move(parent);
    }
  }

  std::string mismatch(std::size_t a, arrival ka, std::size_t na, std::size_t b, arrival kb, std::size_t nb) const {
    // Counts of calls, not 0-based positions: a particle at observe n (0-based) has called it
    // n + 1 times ("after 1 observes while … at observe 1" read as a contradiction).
    auto times = [](std::size_t n) { return std::to_string(n) + (n == 1 ? " time" : " times"); };
    auto where = [&](arrival k, std::size_t n) {
      return k == arrival::finished ? "ended after calling observe " + times(n)
                                    : "has called observe " + times(n + 1) + " and waits there";
    };
    return "particle " + std::to_string(b) + " " + where(kb, nb) + " while particle " + std::to_string(a) + " " +
           where(ka, na) + " (sweep " + std::to_string(sweep_) +
           "); a program must call observe the same number of times on every run";
  }

  static constexpr std::size_t npos = static_cast<std::size_t>(-1);

  const Program& program_;
  algorithm method_;
  const config& cfg_;
  int pipe_;
  pid_t controller_;  // the process that called run_fork (checked as the parent before this runs)
  std::chrono::steady_clock::time_point start_;
  const char* function_;
  std::size_t L_;
  shared_segment shared_;
  pid_t group_ = 0;
  std::unordered_map<pid_t, process> owner_;
  std::size_t sweep_ = 0, passed_ = 0, known_observes_ = npos;
  double current_log_evidence_ = 0;
  // Particle Gibbs.
  std::vector<std::size_t> free_keepers_ = [this] {
    std::vector<std::size_t> v;
    for (std::size_t k = shared_.keepers(); k-- > 0;) v.push_back(k);
    return v;
  }();
  std::vector<char> keeper_used_ = std::vector<char>(shared_.keepers(), 0);
  std::vector<std::size_t> keeper_observe_ = std::vector<std::size_t>(shared_.keepers(), 0);
  std::vector<std::size_t> retained_keeper_;
  std::vector<double> retained_increment_;
  std::string retained_predictions_;
};

/// The fork engine: see the top of this file.
template <class Program>
result run_fork(const Program& program, algorithm method, const config& cfg,
                const char* function = "tyche::smc::run") {
  const auto start = std::chrono::steady_clock::now();
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    throw std::runtime_error(std::string(function) + " (fork engine): pipe failed: " + std::strerror(errno));
  std::fflush(nullptr);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw std::runtime_error(std::string(function) + " (fork engine): fork failed: " + std::strerror(errno));
  }
  if (pid == 0) {
    ::close(fds[0]);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(1);
    restore_default_signals();
    int code = 1;
    try {
      manager<Program> mgr(program, method, cfg, fds[1], start, function);
      mgr.main();
    } catch (const std::exception& e) {
      try {
        send(fds[1], message_error, std::string(function) + " (fork engine): " + e.what());
      } catch (...) {
      }
    }
    ::_exit(code);
  }
  ::close(fds[1]);

  result r;
  collector out(r, cfg, method);
  particle_set current;
  std::string error;
  bool done = false;
  pid_t group = 0;
  auto stop = [&] {  // the manager first, so that it forks no particle after the killpg
    ::kill(pid, SIGKILL);
    if (group > 0) ::killpg(group, SIGKILL);
  };
  try {
    for (;;) {
      char header[1 + sizeof(std::uint64_t)];
      if (!read_all(fds[0], header, sizeof header)) break;
      const char* p = header;
      const auto type = get<char>(p);
      const auto length = get<std::uint64_t>(p);
      std::string payload(length, '\0');
      if (!read_all(fds[0], payload.data(), length)) break;
      p = payload.data();
      if (type == message_group) {
        group = static_cast<pid_t>(get<std::int64_t>(p));
      } else if (type == message_error) {
        error = payload;
      } else if (type == message_done) {
        done = true;
      } else if (type == message_sweep) {
        sweep_record rec;
        rec.index = get<std::uint64_t>(p);
        rec.log_evidence = get<double>(p);
        rec.accepted = get<std::uint8_t>(p) != 0;
        rec.seconds = get<double>(p);
        rec.final_ess = get<double>(p);
        const auto n = static_cast<std::size_t>(get<std::uint64_t>(p));
        std::vector<double> w(n);
        std::vector<prediction_list> lists(n);
        for (std::size_t l = 0; l < n; ++l) {
          w[l] = get<double>(p);
          const auto len = get<std::uint64_t>(p);
          if (len > 0) lists[l] = deserialise(std::string_view(p, len));
          p += len;
        }
        particle_set set = out.make_set(rec, std::move(w), n, [&](std::size_t l) -> const auto& { return lists[l]; });
        if (method == algorithm::pimh) {
          if (rec.accepted || rec.index == 0) current = std::move(set);
          const double kept_ess = current.record.final_ess;  // the set the chain holds: its own
          current.record = rec;
          current.record.final_ess = kept_ess;
          out.emit(current, rec.log_evidence);
        } else {
          out.emit(set, rec.log_evidence);
        }
      }
    }
  } catch (...) {
    stop();
    ::close(fds[0]);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    throw;
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!error.empty()) throw std::runtime_error(error);
  if (!done) {
    if (group > 0) ::killpg(group, SIGKILL);
    throw std::runtime_error(std::string(function) + " (fork engine): the manager process " +
                             describe_status(status));
  }
  out.finish(seconds_since(start));
  return r;
}

}  // namespace detail

/// Weights the current run of the program by exp(log_likelihood): the paper's observe.
/// The particle waits here until every particle has arrived, and may be resampled.
inline void observe(double log_likelihood) {
  detail::arrive(detail::require_particle("tyche::smc::observe"), detail::arrival::observe, log_likelihood);
}

/// Records `value` under `name` for the posterior (once per name per run).
inline void predict(std::string_view name, double value) {
  detail::require_particle("tyche::smc::predict").predicted.emplace_back(std::string(name), value);
}
/// Records `value` under "name[index]".
inline void predict(std::string_view name, std::size_t index, double value) {
  detail::require_particle("tyche::smc::predict")
      .predicted.emplace_back(predictions::indexed_name(name, index), value);
}

/// This particle's random number generator: its own stream, reseeded after every observe.
inline counter_rng& rng() { return detail::require_particle("tyche::smc::rng").rng; }

#else  // no fork engine: a program that calls these still compiles, and says why it cannot run

namespace detail {
[[noreturn]] inline void no_fork_engine(const char* function) {
  throw std::logic_error(std::string(function) +
                         " was called, but this build has no fork engine (it needs Linux: fork, POSIX "
                         "semaphores and shared memory, prctl); write the program as "
                         "tyche::smc::stepwise(...), which runs on the in-process engine");
}
}  // namespace detail

inline void observe(double) { detail::no_fork_engine("tyche::smc::observe"); }
inline void predict(std::string_view, double) { detail::no_fork_engine("tyche::smc::predict"); }
inline void predict(std::string_view, std::size_t, double) { detail::no_fork_engine("tyche::smc::predict"); }
inline counter_rng& rng() { detail::no_fork_engine("tyche::smc::rng"); }

#endif  // TYCHE_SMC_FORK_ENGINE

/// Draws from rng().
inline double sample_normal(double mean, double sd) { return mean + sd * rng().normal(); }
inline double sample_uniform() { return rng().uniform01(); }

}  // namespace tyche::smc
