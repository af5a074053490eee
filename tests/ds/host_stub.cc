// The host stand-in (see host_stub.h).
#include "tests/ds/host_stub.h"

#include <malloc.h>

#include <cstdint>
#include <cstdlib>

#include "vessel/module.hpp"

namespace vessel::stub {
namespace {

size_t g_allocated = 0;

void* CountedRealloc(void* p, size_t n) {
  const size_t before = p == nullptr ? 0 : malloc_usable_size(p);
  void* q = std::realloc(p, n == 0 ? 1 : n);
  if (q != nullptr) g_allocated += malloc_usable_size(q) - before;
  return q;
}

// Redis's string2ll: an optional '-', then digits without a leading zero (or "0" alone), within
// int64.
int ParseInt64(const char* s, size_t len, int64_t* out) {
  if (len == 0 || len > 20) return VSL_ERR;
  size_t i = s[0] == '-' ? 1 : 0;
  if (i == len || (s[i] == '0' && (len > i + 1 || i == 1))) {
    if (len == 1 && s[0] == '0') return *out = 0, VSL_OK;
    return VSL_ERR;
  }
  __extension__ typedef unsigned __int128 U128;
  U128 v = 0;
  for (; i < len; ++i) {
    if (s[i] < '0' || s[i] > '9') return VSL_ERR;
    v = v * 10 + static_cast<unsigned>(s[i] - '0');
    if (v > static_cast<U128>(INT64_MAX) + 1) return VSL_ERR;
  }
  if (s[0] == '-') return *out = static_cast<int64_t>(0 - static_cast<uint64_t>(v)), VSL_OK;
  if (v > INT64_MAX) return VSL_ERR;
  return *out = static_cast<int64_t>(v), VSL_OK;
}

}  // namespace

void* CountedAlloc(size_t n) {
  void* p = std::malloc(n == 0 ? 1 : n);
  if (p != nullptr) g_allocated += malloc_usable_size(p);
  return p;
}

void CountedFree(void* p) {
  if (p == nullptr) return;
  g_allocated -= malloc_usable_size(p);
  std::free(p);
}

size_t AllocatedBytes() { return g_allocated; }

void InstallHostApi() {
  static vsl_api api = [] {
    vsl_api a{};
    a.struct_size = sizeof(vsl_api);
    a.abi_major = VSL_ABI_MAJOR;
    a.abi_minor = VSL_ABI_MINOR;
    a.alloc = CountedAlloc;
    a.realloc = CountedRealloc;
    a.free = CountedFree;
    a.usable_size = [](const void* p) { return malloc_usable_size(const_cast<void*>(p)); };
    a.parse_int64 = ParseInt64;
    return a;
  }();
  vsl::g_api = &api;
}

}  // namespace vessel::stub
