// What the command files of the hashes module share: read lookups, reply helpers, and each file's
// part of the command table.
#ifndef VESSEL_MODULES_HASHES_HASHES_H_
#define VESSEL_MODULES_HASHES_HASHES_H_

#include <span>
#include <string_view>

#include "hashes_type.h"
#include "vessel/module.hpp"

namespace vessel::hashes {

// The key's hash for a read, or nullptr when the key does not exist or holds no live field (a
// read never removes expired fields). Throws WRONGTYPE.
const void* LookupRead(const vsl::Ctx& ctx, const vsl::Key& key);

// After fields were removed (`removed`): fires `event`, then "del" when the hash was left empty
// and deleted (HashEditor::Commit's result), as Redis.
void NotifyRemoval(const vsl::Key& key, bool removed, bool deleted, const char* event = "hdel");

// An entry's value as a bulk reply.
inline void ReplyValue(vsl::Ctx& ctx, const HashEntry& e) { ctx.Bulk(e.value); }

// The rows of the field-expiry commands (Redis 7.4) and of HSETEX / HGETEX / HGETDEL (Redis
// 8.0), defined by hashes_ttl.cc and registered by hashes.cc's entry point.
std::span<const vsl::CommandDef> TtlCommands();

}  // namespace vessel::hashes

#endif  // VESSEL_MODULES_HASHES_HASHES_H_
