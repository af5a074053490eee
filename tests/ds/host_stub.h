// A stand-in for the host's API table, for a module's data structures compiled without the server
// (the tests in tests/ds, the micro-benchmarks in bench/): memory through malloc, counted by usable
// size as the host accounts it, and Redis's strict integer parsing. Every other slot is null.
// Single-threaded: its counter is a plain integer.
#ifndef VESSEL_TESTS_DS_HOST_STUB_H_
#define VESSEL_TESTS_DS_HOST_STUB_H_

#include <cstddef>

namespace vessel::stub {

// Points vsl::g_api at the stand-in (the first call; later ones do nothing).
void InstallHostApi();

// Bytes in live allocations made through the table (and through CountedAlloc), by usable size.
size_t AllocatedBytes();

// malloc and free counted with the table's allocations: a benchmark that replaces the global
// operator new with them measures a std:: container the same way as the module's.
void* CountedAlloc(size_t n);
void CountedFree(void* p);

}  // namespace vessel::stub

#endif  // VESSEL_TESTS_DS_HOST_STUB_H_
