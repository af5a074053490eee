// What the streams module's command files share: argument parsing with Redis's errors, entry
// replies, and each file's slice of the command table.
#ifndef VESSEL_MODULES_STREAMS_STREAMS_H_
#define VESSEL_MODULES_STREAMS_STREAMS_H_

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "streams_type.h"
#include "vessel/module.hpp"

namespace vessel::streams {

inline constexpr char kInvalidId[] = "Invalid stream ID specified as stream command argument";

// The key's stream, nullptr when it does not exist; throws the WRONGTYPE error.
inline Stream* Lookup(const vsl::Key& key) { return key.Get(g_stream_type); }

// An ID argument (Redis's streamParseIDOrReply / streamParseStrictIDOrReply).
StreamId IdArg(const vsl::Ctx& ctx, int i, uint64_t missing_seq = 0);
StreamId StrictIdArg(const vsl::Ctx& ctx, int i);
// A range bound ("(" makes it exclusive): start bounds default the sequence to 0, end bounds to
// the maximum, as streamParseIntervalIDOrReply.
StreamId RangeStartArg(const vsl::Ctx& ctx, int i);
StreamId RangeEndArg(const vsl::Ctx& ctx, int i);
// An integer argument with Redis's generic error, or `msg` when given.
int64_t LongArg(const vsl::Ctx& ctx, int i, const char* msg = nullptr);

inline void ReplyId(vsl::Ctx& ctx, StreamId id) { ctx.Bulk(id.ToString()); }
// [id, [field, value, ...]] for the cursor's current entry.
void ReplyEntry(vsl::Ctx& ctx, EntryLog::Cursor& c);
// The entries from start to end (at most count; 0 = all) as an array; returns how many.
size_t ReplyRange(vsl::Ctx& ctx, const Stream& s, StreamId start, StreamId end, uint64_t count,
                  bool rev);
// The entry `id` alone ([id, [...]]); false (nothing sent) when it does not exist.
bool ReplyOneEntry(vsl::Ctx& ctx, const Stream& s, StreamId id);

// What replicas and the append-only file record for consumer group changes, as Redis
// propagates them: XCLAIM key group consumer 0 id TIME t RETRYCOUNT n FORCE JUSTID LASTID last
// (a delivery or a claim; also a pending entry whose stream entry is gone, which the replay
// drops the same way), XGROUP SETID key group last ENTRIESREAD n (a group's position moved by
// NOACK or LASTID), XGROUP CREATECONSUMER key group consumer (a consumer created by NOACK).
void PropagateClaim(vsl::Ctx& ctx, std::string_view key, std::string_view group, const Group& g,
                    std::string_view id, const Nack& nack);
void PropagateGroupId(vsl::Ctx& ctx, std::string_view key, std::string_view group, const Group& g);
void PropagateConsumer(vsl::Ctx& ctx, std::string_view key, std::string_view group,
                       std::string_view consumer);

// Where new blocks open (stream-node-max-bytes, stream-node-max-entries).
BlockLimits Limits(const vsl::Ctx& ctx);

// The command table, one slice per file.
std::span<const vsl::CommandDef> StreamCommands();
std::span<const vsl::CommandDef> GroupCommands();
std::span<const vsl::CommandDef> ReadCommands();

}  // namespace vessel::streams

#endif  // VESSEL_MODULES_STREAMS_STREAMS_H_
