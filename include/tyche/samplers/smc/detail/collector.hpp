// tyche/samplers/smc/detail/collector.hpp — turns each sweep's particles (weights and
// predict lists) into a particle_set, keeps the name table, calls on_sweep, fills the result.
#pragma once
#include <tyche/samplers/smc/config.hpp>
#include <tyche/samplers/smc/resampling.hpp>
#include <tyche/samplers/smc/result.hpp>

#include <chrono>
#include <cmath>
#include <exception>
#include <functional>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <typeinfo>
#include <utility>
#include <vector>

namespace tyche::smc::detail {

using prediction_list = std::vector<std::pair<std::string, double>>;

/// Seconds since `start` on the steady clock.
inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

class collector {
 public:
  collector(result& r, const config& cfg, algorithm method) : r_(r), cfg_(cfg) {
    r_.method = method;
    r_.particles = cfg.particles;
  }

  /// The particle set of weights w (normalised) and one predict list per particle.
  template <class ListOf>
  particle_set make_set(const sweep_record& rec, std::vector<double> w, std::size_t n, ListOf list_of) {
    particle_set s;
    s.record = rec;
    s.weights = std::move(w);
    // Columns of each particle's list; particles usually predict the same names in the same
    // order, so the previous list's columns are tried first (no map look-up).
    std::vector<std::vector<std::size_t>> columns(n);
    for (std::size_t p = 0; p < n; ++p) {
      const auto& list = list_of(p);
      bool same = list.size() == last_names_.size();
      for (std::size_t i = 0; same && i < list.size(); ++i) same = list[i].first == last_names_[i];
      if (!same) {
        last_names_.clear();
        last_columns_.clear();
        for (const auto& [name, value] : list) {
          last_names_.push_back(name);
          last_columns_.push_back(column_of(name));
        }
      }
      columns[p] = last_columns_;
    }
    s.columns = r_.names.size();
    s.values.assign(n * s.columns, std::numeric_limits<double>::quiet_NaN());
    for (std::size_t p = 0; p < n; ++p)
      for (std::size_t i = 0; i < columns[p].size(); ++i) {
        const auto& [name, value] = list_of(p)[i];
        double& slot = s.values[p * s.columns + columns[p][i]];
        if (!std::isnan(slot))
          throw std::runtime_error("tyche::smc: predict(\"" + name + "\", ...) was called twice in one run "
                                   "of the program (particle " + std::to_string(p) + "); give each value "
                                   "its own name, e.g. predict(\"x\", i, value) for x[i]");
        slot = value;
      }
    return s;
  }

  /// Records a sweep: its evidence and the set it outputs.
  void emit(const particle_set& s, double proposal_log_evidence) {
    r_.sweeps.push_back(s.record);
    evidences_.push_back(proposal_log_evidence);
    if (cfg_.on_sweep) cfg_.on_sweep(s);
    if (cfg_.keep_sweeps) r_.sets.push_back(s);
  }

  /// Sets log_evidence and the run time.
  void finish(double seconds) {
    r_.seconds = seconds;
    if (evidences_.empty()) return;
    if (r_.method == algorithm::pg) {
      r_.log_evidence = evidences_.front();
    } else {
      r_.log_evidence = log_sum_exp(evidences_) - std::log(static_cast<double>(evidences_.size()));
    }
  }

 private:
  std::size_t column_of(const std::string& name) {
    auto it = columns_.find(name);
    if (it != columns_.end()) return it->second;
    r_.names.push_back(name);
    return columns_.emplace(name, r_.names.size() - 1).first->second;
  }

  result& r_;
  const config& cfg_;
  std::map<std::string, std::size_t, std::less<>> columns_;
  std::vector<double> evidences_;
  std::vector<std::string> last_names_;
  std::vector<std::size_t> last_columns_;
};

/// Checks the arguments every run_* shares.
inline void check_config(const config& cfg, const char* function) {
  const std::string f = function;
  if (cfg.particles < 1)
    throw std::invalid_argument(f + ": particles must be at least 1 (got " + std::to_string(cfg.particles) + ")");
  if (cfg.particles >= (std::size_t{1} << 24) - 1)
    throw std::invalid_argument(f + ": particles must be below 2^24 - 1 (got " + std::to_string(cfg.particles) + ")");
  if (cfg.sweeps < 1)
    throw std::invalid_argument(f + ": sweeps must be at least 1 (got " + std::to_string(cfg.sweeps) + ")");
  if (!(cfg.ess_threshold >= 0 && cfg.ess_threshold <= 1))
    throw std::invalid_argument(f + ": ess_threshold must lie in [0, 1] (got " + std::to_string(cfg.ess_threshold) + ")");
  if (!(cfg.timeout_seconds > 0))
    throw std::invalid_argument(f + ": timeout_seconds must be positive (got " + std::to_string(cfg.timeout_seconds) + ")");
}

/// Rethrows the exception being handled — thrown by a particle's step or predict in the in-process
/// engine — with `where` (where it happened) in front of its message, e.g. "tyche::smc: sweep 2,
/// particle 17, observe 5 (0-based): <message>". Only the standard exception types themselves are rebuilt (as the
/// same type); an exception of another type, the program's own or one derived from a standard
/// one, passes unchanged, so that a caller who catches it by its type still can.
[[noreturn]] inline void rethrow_with(const std::string& where) {
  try {
    throw;
  } catch (const std::exception& e) {
    const std::type_info& type = typeid(e);
    if (type == typeid(std::domain_error)) throw std::domain_error(where + e.what());
    if (type == typeid(std::invalid_argument)) throw std::invalid_argument(where + e.what());
    if (type == typeid(std::out_of_range)) throw std::out_of_range(where + e.what());
    if (type == typeid(std::length_error)) throw std::length_error(where + e.what());
    if (type == typeid(std::logic_error)) throw std::logic_error(where + e.what());
    if (type == typeid(std::range_error)) throw std::range_error(where + e.what());
    if (type == typeid(std::overflow_error)) throw std::overflow_error(where + e.what());
    if (type == typeid(std::underflow_error)) throw std::underflow_error(where + e.what());
    if (type == typeid(std::runtime_error)) throw std::runtime_error(where + e.what());
    throw;
  }
}
[[noreturn]] inline void rethrow_from_step(const std::string& sweep, std::size_t particle, std::size_t observe) {
  rethrow_with("tyche::smc: " + sweep + "particle " + std::to_string(particle) + ", observe " +
               std::to_string(observe) + " (0-based): ");
}
/// The same for an exception thrown by a particle's predict (after its last observe).
[[noreturn]] inline void rethrow_from_predict(const std::string& sweep, std::size_t particle) {
  rethrow_with("tyche::smc: " + sweep + "particle " + std::to_string(particle) + " (0-based), in predict: ");
}

/// The error for a NaN or +∞ log-likelihood.
inline std::runtime_error bad_weight(double value, std::size_t particle, std::size_t observe) {
  return std::runtime_error("tyche::smc: particle " + std::to_string(particle) + " passed " +
                            (std::isnan(value) ? std::string("NaN") : std::string("+inf")) +
                            " to observe " + std::to_string(observe) +
                            " (0-based); a log-likelihood must be a number or -inf");
}

/// The words of all_zero's message that run_pmmh recognises (with either engine: the fork
/// engine passes its errors on as text) to reject a proposal whose likelihood estimate is 0.
inline constexpr const char* all_zero_words = "every particle has log weight -inf after observe ";

/// all_zero's type: the in-process engine adds the run's config::domain_error_zero_weight count,
/// so that run_pmmh counts the particles a domain error killed in a sweep that ended so.
struct all_zero_error : std::runtime_error {
  using std::runtime_error::runtime_error;
  std::size_t domain_errors = 0;
  std::string first_domain_error;
};

inline all_zero_error all_zero(std::size_t observe) {
  return all_zero_error(std::string("tyche::smc: ") + all_zero_words + std::to_string(observe) +
                        " (0-based): no particle is consistent with the data; use more particles or check the "
                        "model");
}

/// config::domain_error_zero_weight's bookkeeping for one observe: each particle's
/// std::domain_error, written by the thread that steps it, then gathered in particle order (so
/// the count and the first message do not depend on config::threads).
class particle_domain_errors {
 public:
  particle_domain_errors(std::size_t particles, bool on) : message_(on ? particles : 0), thrown_(on ? particles : 0, 0) {}
  void record(std::size_t particle, const char* what) {
    thrown_[particle] = 1;
    message_[particle] = what;
  }
  /// Adds this observe's errors to r.domain_errors; the first of the run gives
  /// r.first_domain_error: `where` + "particle <l>, observe <n>: " + the message.
  void gather(result& r, const std::string& where, std::size_t observe) {
    for (std::size_t l = 0; l < thrown_.size(); ++l)
      if (thrown_[l]) {
        thrown_[l] = 0;
        if (r.domain_errors++ == 0)
          r.first_domain_error =
              where + "particle " + std::to_string(l) + ", observe " + std::to_string(observe) + ": " + message_[l];
        message_[l].clear();
      }
  }

 private:
  std::vector<std::string> message_;
  std::vector<unsigned char> thrown_;
};

/// Throws bad_weight for the first log-likelihood that is NaN or +∞.
inline void check_increments(const std::vector<double>& increment, std::size_t observe) {
  for (std::size_t l = 0; l < increment.size(); ++l)
    if (std::isnan(increment[l]) || increment[l] == std::numeric_limits<double>::infinity())
      throw bad_weight(increment[l], l, observe);
}

/// Random streams. Particle p of sweep m draws from counter_rng(seed, stream(m, p)), starting
/// at position n · 2^32 for the stretch of program between observe n − 1 and observe n; the
/// engine's own draws (resampling after observe n, the final accept/select) use particle
/// number 2^24 − 1 of the same sweep.
inline std::uint64_t particle_stream(std::size_t sweep, std::size_t particle) {
  return (static_cast<std::uint64_t>(sweep) << 24) | static_cast<std::uint64_t>(particle);
}
inline counter_rng particle_rng(std::uint64_t seed, std::size_t sweep, std::size_t particle, std::size_t step) {
  return counter_rng(seed, particle_stream(sweep, particle), static_cast<std::uint64_t>(step) << 32);
}
inline constexpr std::size_t engine_particle = (std::size_t{1} << 24) - 1;
inline constexpr std::size_t final_step = 0xFFFFFFFFu;
inline counter_rng engine_rng(std::uint64_t seed, std::size_t sweep, std::size_t step) {
  return particle_rng(seed, sweep, engine_particle, step);
}

}  // namespace tyche::smc::detail
