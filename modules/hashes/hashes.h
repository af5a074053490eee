// What the command files of the hashes module share: read lookups, reply helpers and the
// handlers of the field-expiry commands (hashes_ttl.cc), registered in hashes.cc's table.
#ifndef VESSEL_MODULES_HASHES_HASHES_H_
#define VESSEL_MODULES_HASHES_HASHES_H_

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

// Field expiry (Redis 7.4) and HSETEX / HGETEX / HGETDEL (Redis 8.0).
void CmdHExpire(vsl::Ctx& ctx);
void CmdHPExpire(vsl::Ctx& ctx);
void CmdHExpireAt(vsl::Ctx& ctx);
void CmdHPExpireAt(vsl::Ctx& ctx);
void CmdHPersist(vsl::Ctx& ctx);
void CmdHTtl(vsl::Ctx& ctx);
void CmdHPTtl(vsl::Ctx& ctx);
void CmdHExpireTime(vsl::Ctx& ctx);
void CmdHPExpireTime(vsl::Ctx& ctx);
void CmdHSetEx(vsl::Ctx& ctx);
void CmdHGetEx(vsl::Ctx& ctx);
void CmdHGetDel(vsl::Ctx& ctx);

}  // namespace vessel::hashes

#endif  // VESSEL_MODULES_HASHES_HASHES_H_
