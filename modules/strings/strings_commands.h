// What the strings module's command files (strings.cc, strings_bitmap.cc, strings_hyperloglog.cc)
// share: key access for string values, host settings, and each file's part of the command table.
#ifndef VESSEL_MODULES_STRINGS_STRINGS_COMMANDS_H_
#define VESSEL_MODULES_STRINGS_STRINGS_COMMANDS_H_

#include <cstdint>
#include <span>

#include "strings_type.h"
#include "vessel/module.hpp"

namespace vessel::strings {

// The key's string value; nullptr when the key does not exist. Throws WRONGTYPE.
Value Lookup(const vsl::Key& key);

// Stores an Op's result for key, whose value was `old` (nullptr: no key). A new value replaces
// the old one keeping the TTL (as Redis's APPEND, SETRANGE and INCR do); an in-place change is
// only reported.
void Commit(vsl::Key& key, Value old, Value v);

// The host's proto-max-bulk-len (the setting on a host without ABI 1.6; Redis's default without
// ABI 1.1).
uint64_t MaxBulkLen(const vsl::Ctx& ctx);

// Before a string of old_len bytes grows to new_len because an argument said so (an offset):
// fails with Redis's OOM error when the host's maxmemory leaves no room (ABI 1.6).
void CheckRoomToGrow(const vsl::Ctx& ctx, size_t old_len, uint64_t new_len);

// The rows of the command tables defined by strings_bitmap.cc (group "bitmap") and
// strings_hyperloglog.cc (group "hyperloglog"); their rows leave .group to RegisterCommands.
std::span<const vsl::CommandDef> BitmapCommands();
std::span<const vsl::CommandDef> HyperLogLogCommands();

}  // namespace vessel::strings

#endif  // VESSEL_MODULES_STRINGS_STRINGS_COMMANDS_H_
