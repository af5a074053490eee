// The host allocator as modules see it (accounted per module) and allocator statistics.
#ifndef VESSEL_HOST_ENGINE_MEMORY_H_
#define VESSEL_HOST_ENGINE_MEMORY_H_

#include <cstddef>
#include <cstdint>
#include <string>

namespace vessel::engine::memory {

constexpr int kMaxModules = 64;  // module 0 is the host itself

// The module whose code is running on this thread; allocations are accounted to it. The host
// sets it around every call into a module (handlers, type callbacks, init).
int CurrentModule();
class ModuleScope {
 public:
  explicit ModuleScope(int module);
  ~ModuleScope();
  ModuleScope(const ModuleScope&) = delete;
  ModuleScope& operator=(const ModuleScope&) = delete;

 private:
  int saved_;
};

void* Alloc(size_t size);
void* Realloc(void* ptr, size_t size);
void Free(void* ptr);
size_t UsableSize(const void* ptr);
// Bytes currently allocated through Alloc by module id (summed over threads).
int64_t ModuleBytes(int module);

struct AllocatorStats {
  bool jemalloc = false;
  size_t allocated = 0;  // bytes in live allocations
  size_t active = 0;     // bytes in active pages
  size_t resident = 0;   // bytes in physically resident pages
  size_t mapped = 0;
  size_t retained = 0;
  size_t metadata = 0;
  const char* version = nullptr;  // jemalloc's, e.g. "5.3.0-0-g54eaed1d..."
};
AllocatorStats ReadStats();
// Returns unused dirty pages to the OS (jemalloc arenas.<all>.purge); false when unavailable.
bool Purge();
// The resident set size of the process from /proc/self/statm.
size_t ProcessRss();
// jemalloc's own stats text (malloc_stats_print), or a note when jemalloc is not linked.
std::string AllocatorReport();

}  // namespace vessel::engine::memory

#endif  // VESSEL_HOST_ENGINE_MEMORY_H_
