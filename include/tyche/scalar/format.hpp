// tyche/scalar/format.hpp — numbers in messages: the shortest decimal text that reads back to
// the same double where it has at most 10 significant digits ("0.1", "-1e-09", "3",
// "2147483648"), else 10 significant digits ("0.96" for 0.9600000000000001, the rounding noise
// of a sum); "nan", "inf", "-inf". (std::to_string would print "0.100000", "-0.000000".)
#pragma once
#include <tyche/config.hpp>

#include <charconv>
#include <cmath>
#include <cstdio>
#include <string>
#include <system_error>

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

}  // namespace tyche::detail
