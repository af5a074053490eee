// The size of every struct a module hands to the host in each released SDK (ABI 1.x), so a
// struct_size that matches no release is refused instead of read as far as it reaches.
//
// A struct_size is accepted when it is one of the sizes below, or larger than this host's own
// struct (a module built against a newer SDK) with every byte past this host's struct zero: the
// newer fields were left unset, so nothing the module asked for is dropped. tests/sdk/abi_test.cc
// checks the table against the frozen layout (abi_frozen.inc): the last size of each struct is
// its sizeof, and every size ends on a field of that layout. Read-only, no locks.
#ifndef VESSEL_HOST_ENGINE_ABI_SIZES_H_
#define VESSEL_HOST_ENGINE_ABI_SIZES_H_

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>

#include "host/engine/strutil.h"
#include "vessel/module.h"

namespace vessel::engine::abi {

// `size` bytes from ABI 1.`minor` on (until the next entry's minor).
struct ReleasedSize {
  uint16_t minor;
  uint32_t size;
};

inline constexpr ReleasedSize kManifestSizes[] = {{0, 80}};
inline constexpr ReleasedSize kKeySpecSizes[] = {{0, 56}};
inline constexpr ReleasedSize kCommandDescSizes[] = {
    {0, 104},  // 1.0: name .. tips
    {4, 112},  // 1.4: acl_categories
    {6, 128},  // 1.6: args, n_args
};
inline constexpr ReleasedSize kTypeDescSizes[] = {
    {0, 80},   // 1.0: name .. encoding
    {2, 88},   // 1.2: visit
    {3, 104},  // 1.3: next_due, expire_due
    {5, 112},  // 1.5: rdb_name (the first 1.5 header)
    {5, 128},  // 1.5: parts_expired_event, parts_expired_class
    {6, 136},  // 1.6: flags
    {7, 152},  // 1.7: rdb_type, rdb_load_types
};
inline constexpr ReleasedSize kCommandArgSizes[] = {{6, 72}};

// "" when a module struct of `size` bytes at `p` (`size` readable bytes) may be read as the host's
// `host_size`-byte struct named `type`; otherwise why not, naming the sizes this host knows.
inline std::string CheckStructSize(std::string_view type, std::span<const ReleasedSize> sizes,
                                   size_t host_size, const void* p, uint64_t size) {
  for (const ReleasedSize& r : sizes)
    if (r.size == size) return "";
  if (size > host_size) {
    const auto* tail = static_cast<const unsigned char*>(p) + host_size;
    for (uint64_t i = 0; i < size - host_size; ++i) {
      if (tail[i] != 0)
        return Cat(type, " struct_size ", size,
                   " is from a newer SDK and sets fields this host (ABI ", VSL_ABI_MAJOR, ".",
                   VSL_ABI_MINOR, ") does not know");
    }
    return "";
  }
  std::string known;
  for (const ReleasedSize& r : sizes)
    known += Cat(known.empty() ? "" : ", ", r.size, " (ABI ", VSL_ABI_MAJOR, ".", r.minor, ")");
  return Cat(type, " struct_size ", size, " matches no SDK release; known sizes: ", known);
}

}  // namespace vessel::engine::abi

#endif  // VESSEL_HOST_ENGINE_ABI_SIZES_H_
