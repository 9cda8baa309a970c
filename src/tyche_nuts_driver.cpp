// The NUTS driver's instantiations for a program built with TYCHE_SEPARATE_DRIVER (CMake target
// tyche::separate_driver adds this file to the target that links it; docs/compile-time.md).
#define TYCHE_NUTS_DRIVER_SOURCE  // this file defines the driver's non-template functions too
#include <tyche/tyche.hpp>
// The JSON data reader's entry points too (io/json_data.hpp, which needs nothing more).
#include <tyche/io/json_data.hpp>

TYCHE_NUTS_DRIVER_INSTANCE()
