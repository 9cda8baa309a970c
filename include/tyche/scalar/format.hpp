// tyche/scalar/format.hpp — numbers in messages: the shortest decimal text that reads back to
// the same double where it has at most 10 significant digits ("0.1", "-1e-09", "3",
// "2147483648"), else 10 significant digits ("0.96" for 0.9600000000000001, the rounding noise
// of a sum); "nan", "inf", "-inf". (std::to_string would print "0.100000", "-0.000000".)
#pragma once
#include <tyche/config.hpp>

#include <algorithm>
#include <charconv>
#include <cstddef>
#include <cmath>
#include <cstdio>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace tyche::detail {

inline std::string format_number(double x) {
  if (std::isnan(x)) return "nan";
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, x);
  if (r.ec != std::errc{}) return "?";
  const std::string shortest(buf, r.ptr);
  int digits = 0;
  for (const char c : shortest) {
    if (c == 'e') break;
    digits += c >= '0' && c <= '9' ? 1 : 0;
  }
  if (digits <= 10) return shortest;
  std::snprintf(buf, sizeof buf, "%.10g", x);
  return buf;
}

/// The position of `name` in `names` (a fit's values: "mu", "theta[2]"); throws
/// std::out_of_range "<who>: no value named '<name>'; the fit has <the first names>".
inline std::size_t index_of_name(const std::vector<std::string>& names, std::string_view name, const char* who) {
  for (std::size_t k = 0; k < names.size(); ++k)
    if (names[k] == name) return k;
  // A vector's or matrix's element asked for by a wrong index, or the whole variable by its name:
  // its elements' first and last names, which show how they are indexed.
  const std::string_view base = name.substr(0, name.find('['));
  std::size_t first = names.size(), last = 0, count = 0;
  for (std::size_t k = 0; k < names.size(); ++k)
    if (names[k].size() > base.size() && names[k].compare(0, base.size(), base) == 0 && names[k][base.size()] == '[') {
      first = std::min(first, k);
      last = k;
      ++count;
    }
  if (count > 0)
    throw std::out_of_range(std::string(who) + ": no value named '" + std::string(name) + "'; '" + std::string(base) +
                            "' has " + std::to_string(count) + " values, " + names[first] +
                            (count > 1 ? " … " + names[last] : std::string()) +
                            " (indices count from 1, as in Stan)");
  std::string known;
  for (std::size_t k = 0; k < names.size() && k < 12; ++k) known += (k > 0 ? ", " : "") + names[k];
  if (names.size() > 12) known += ", … (" + std::to_string(names.size()) + " in all)";
  throw std::out_of_range(std::string(who) + ": no value named '" + std::string(name) + "'; the fit has " +
                          (names.empty() ? std::string("none") : known));
}

/// Draw d of chain c of a fit's values ([chain][draw * dim + k]): its dim values, a view.
/// Throws std::out_of_range "<who>::draw: chain <c>, draw <d>, but the fit has ..." (both
/// 0-based, as the vectors they index).
inline std::span<const double> draw_of(const std::vector<std::vector<double>>& values, int chains, int draws,
                                       std::size_t dim, int c, int d, const char* who) {
  if (c < 0 || c >= chains || d < 0 || d >= draws)
    throw std::out_of_range(std::string(who) + "::draw: chain " + std::to_string(c) + ", draw " + std::to_string(d) +
                            ", but the fit has " + std::to_string(chains) + " chains of " + std::to_string(draws) +
                            " draws (both count from 0)");
  const auto& chain = values[static_cast<std::size_t>(c)];
  const std::size_t at = static_cast<std::size_t>(d) * dim;
  if (chain.size() < at + dim)
    throw std::out_of_range(std::string(who) + "::draw: chain " + std::to_string(c) + " holds " +
                            std::to_string(chain.size()) + " values, fewer than " + std::to_string(draws) +
                            " draws of " + std::to_string(dim));
  return std::span<const double>(chain.data() + at, dim);
}

/// The first `most` names, comma-separated, then ", … (<n> in all)" when there are more: the
/// list an error message gives of what a vector of values must hold.
inline std::string first_names(const std::vector<std::string>& names, std::size_t most = 8) {
  if (names.empty()) return "none";
  std::string listed;
  for (std::size_t k = 0; k < names.size() && k < most; ++k) listed += (k ? ", " : "") + names[k];
  if (names.size() > most) listed += ", … (" + std::to_string(names.size()) + " in all)";
  return listed;
}

}  // namespace tyche::detail
