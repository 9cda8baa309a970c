// expect: the file with TYCHE_NUTS_DRIVER_INSTANCE\(\) must #define TYCHE_NUTS_DRIVER_SOURCE
// The driver's source file of a program built with TYCHE_SEPARATE_DRIVER, written without the
// #define TYCHE_NUTS_DRIVER_SOURCE that makes it hold summary() and the checks.
#define TYCHE_SEPARATE_DRIVER
#include <tyche/tyche.hpp>
TYCHE_NUTS_DRIVER_INSTANCE()
int main() {}
