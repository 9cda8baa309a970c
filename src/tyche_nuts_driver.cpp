// The NUTS driver's instantiations for a program built with TYCHE_SEPARATE_DRIVER (CMake target
// tyche::separate_driver adds this file to the target that links it; docs/compile-time.md).
#define TYCHE_NUTS_DRIVER_SOURCE  // this file defines the driver's non-template functions too
#include <tyche/tyche.hpp>
// The JSON data reader's entry points too (io/json_data.hpp), where the target can include
// nlohmann-json (this file is compiled with the target's own include paths): a target that reads
// data files includes the header, and so can this file.
#if __has_include(<nlohmann/json.hpp>)
#include <tyche/io/json_data.hpp>
#endif

TYCHE_NUTS_DRIVER_INSTANCE()
