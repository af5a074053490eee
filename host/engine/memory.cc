// The host allocator as modules see it (accounted per module) and allocator statistics.
#include "host/engine/memory.h"

#include <malloc.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>

#include "host/engine/engine.h"

// jemalloc's control interface, present when the server is linked with jemalloc (the release
// build); sanitizer builds and tests use the system allocator and see null here.
extern "C" {
int mallctl(const char* name, void* oldp, size_t* oldlenp, void* newp, size_t newlen)
    __attribute__((weak));
void malloc_stats_print(void (*write_cb)(void*, const char*), void* cbopaque, const char* opts)
    __attribute__((weak));
}

namespace vessel::engine::memory {
namespace {

// Per-thread counters: each thread adds to its own row with plain loads and stores (no locked
// instruction on the allocation path); readers sum the rows. Rows are never freed, so a thread
// that exits leaves its deltas behind, which keeps the sums right.
struct alignas(64) Row {
  std::array<std::atomic<int64_t>, kMaxModules> bytes{};
};
constexpr int kMaxRows = 1024;
std::array<Row, kMaxRows> g_rows;
std::atomic<int> g_next_row{0};

thread_local int t_module = 0;
thread_local Row* t_row = nullptr;

Row& MyRow() {
  if (t_row == nullptr) {
    int i = g_next_row.fetch_add(1, std::memory_order_relaxed);
    // Past the limit threads share the last row with atomic adds (see Account).
    t_row = &g_rows[i < kMaxRows ? i : kMaxRows - 1];
  }
  return *t_row;
}

void Account(int64_t delta) {
  Row& row = MyRow();
  auto& cell = row.bytes[t_module];
  if (&row == &g_rows[kMaxRows - 1]) {
    cell.fetch_add(delta, std::memory_order_relaxed);
  } else {
    cell.store(cell.load(std::memory_order_relaxed) + delta, std::memory_order_relaxed);
  }
}

template <typename T>
T ReadCtl(const char* name) {
  T v{};
  size_t len = sizeof(v);
  if (mallctl == nullptr || mallctl(name, &v, &len, nullptr, 0) != 0) return T{};
  return v;
}

}  // namespace

int CurrentModule() { return t_module; }
ModuleScope::ModuleScope(int module) : saved_(t_module) { t_module = module; }
ModuleScope::~ModuleScope() { t_module = saved_; }

void* Alloc(size_t size) {
  void* p = std::malloc(size == 0 ? 1 : size);
  if (p != nullptr) Account(static_cast<int64_t>(malloc_usable_size(p)));
  return p;
}

void* Realloc(void* ptr, size_t size) {
  if (ptr == nullptr) return Alloc(size);
  const int64_t before = static_cast<int64_t>(malloc_usable_size(ptr));
  void* p = std::realloc(ptr, size == 0 ? 1 : size);
  if (p != nullptr) Account(static_cast<int64_t>(malloc_usable_size(p)) - before);
  return p;
}

void Free(void* ptr) {
  if (ptr == nullptr) return;
  Account(-static_cast<int64_t>(malloc_usable_size(ptr)));
  std::free(ptr);
}

size_t UsableSize(const void* ptr) {
  return ptr == nullptr ? 0 : malloc_usable_size(const_cast<void*>(ptr));
}

int64_t ModuleBytes(int module) {
  int64_t sum = 0;
  const int rows = std::min(g_next_row.load(std::memory_order_relaxed), kMaxRows);
  for (int i = 0; i < rows; ++i) sum += g_rows[i].bytes[module].load(std::memory_order_relaxed);
  return sum;
}

AllocatorStats ReadStats() {
  AllocatorStats s;
  if (mallctl != nullptr) {
    uint64_t epoch = 1;
    size_t len = sizeof(epoch);
    mallctl("epoch", &epoch, &len, &epoch, len);  // refresh the cached statistics
    s.jemalloc = true;
    s.allocated = ReadCtl<size_t>("stats.allocated");
    s.active = ReadCtl<size_t>("stats.active");
    s.resident = ReadCtl<size_t>("stats.resident");
    s.mapped = ReadCtl<size_t>("stats.mapped");
    s.retained = ReadCtl<size_t>("stats.retained");
    s.metadata = ReadCtl<size_t>("stats.metadata");
    s.version = ReadCtl<const char*>("version");
    return s;
  }
  struct mallinfo2 mi = mallinfo2();
  s.allocated = mi.uordblks + mi.hblkhd;
  s.active = s.allocated;
  s.resident = ProcessRss();
  s.mapped = mi.arena + mi.hblkhd;
  return s;
}

bool Purge() {
  if (mallctl == nullptr) return malloc_trim(0) >= 0;
  char name[64];
  std::snprintf(name, sizeof(name), "arena.%u.purge", 4096u);  // MALLCTL_ARENAS_ALL
  return mallctl(name, nullptr, nullptr, nullptr, 0) == 0;
}

size_t ProcessRss() {
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return 0;
  unsigned long size = 0, resident = 0;
  const int n = std::fscanf(f, "%lu %lu", &size, &resident);
  std::fclose(f);
  return n == 2 ? resident * static_cast<size_t>(sysconf(_SC_PAGESIZE)) : 0;
}

std::string AllocatorReport() {
  if (malloc_stats_print == nullptr) return "Stats not supported for the current allocator";
  std::string out;
  malloc_stats_print(
      [](void* opaque, const char* text) { static_cast<std::string*>(opaque)->append(text); }, &out,
      nullptr);
  return out;
}

}  // namespace vessel::engine::memory

namespace vessel::engine {

// ---- the engine's figures ----

void Engine::RefreshUsedMemory() {
  used_memory_.store(has_used_memory_source_.load(std::memory_order_acquire)
                         ? used_memory_source_()
                         : static_cast<int64_t>(memory::ReadStats().allocated),
                     std::memory_order_relaxed);
}

}  // namespace vessel::engine
