// Whether this test executable is built with AddressSanitizer (tools/test.sh's clang tree). Under
// ASan a fork costs 10-20 times the kernel time of one without (docs/design/sanitizers.md), so
// the fork engine's tests run there at a reduced size; the g++ tree runs them at full size.
#pragma once

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TYCHE_TEST_ADDRESS_SANITIZER 1
#endif
#endif
#if !defined(TYCHE_TEST_ADDRESS_SANITIZER) && defined(__SANITIZE_ADDRESS__)
#define TYCHE_TEST_ADDRESS_SANITIZER 1
#endif

namespace tyche_test {
#ifdef TYCHE_TEST_ADDRESS_SANITIZER
inline constexpr bool address_sanitized = true;
#else
inline constexpr bool address_sanitized = false;
#endif
}  // namespace tyche_test
