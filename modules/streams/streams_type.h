// The stream value type: its entries (entry_log.h), the IDs and counters Redis 7.0 keeps beside
// them, and its consumer groups with their pending entries lists (PELs) and consumers.
//
// A group's PEL maps an entry ID to its delivery record (Nack); each consumer's PEL maps the IDs
// it owns to the same records, so a record is found from either side and names its owner. Groups
// and consumers are ordered by name bytes and PELs by ID, as Redis's radix trees order them, so
// every listing comes out in Redis's order. Everything lives in the host allocator; a value is
// only touched under its key's lock.
#ifndef VESSEL_MODULES_STREAMS_STREAMS_TYPE_H_
#define VESSEL_MODULES_STREAMS_STREAMS_TYPE_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string_view>

#include "entry_log.h"
#include "stream_id.h"
#include "vessel/module.hpp"
#include "vessel/util.hpp"

namespace vessel::streams {

template <class K, class V>
using Map = std::map<K, V, std::less<>, vsl::Allocator<std::pair<const K, V>>>;

// Redis's SCG_INVALID_ENTRIES_READ: a group whose read counter is unknown.
inline constexpr int64_t kInvalidEntriesRead = -1;

struct Consumer;

// A delivered, not yet acknowledged entry.
struct Nack {
  int64_t delivery_time = 0;    // unix ms of the last delivery
  uint64_t delivery_count = 1;  // deliveries so far
  Consumer* consumer = nullptr;
};

struct Consumer {
  const vsl::String* name = nullptr;  // the key of its node in Group::consumers
  int64_t seen_time = 0;              // unix ms of the consumer's last activity
  Map<StreamId, Nack*> pel;
};

struct Group {
  StreamId last_id;
  int64_t entries_read = kInvalidEntriesRead;
  Map<StreamId, Nack> pel;
  Map<vsl::String, Consumer> consumers;

  Consumer* FindConsumer(std::string_view name);
  // A new consumer seen now; nullptr when one of that name exists.
  Consumer* CreateConsumer(std::string_view name, int64_t now_ms);
  // Removes a consumer and its pending entries from the group; returns how many it had.
  size_t DeleteConsumer(std::string_view name);
  // Removes the pending entry `it` from the group and its owner.
  void Ack(Map<StreamId, Nack>::iterator it);
  // Gives the pending entry to `to` (moving it from its owner's PEL).
  void Assign(Nack& nack, StreamId id, Consumer* to);
};

class Stream {
 public:
  EntryLog log;
  StreamId last_id;      // the last ID ever generated (0-0: none yet)
  StreamId first_id;     // the first live entry's ID (0-0 when empty)
  StreamId max_deleted;  // the largest ID ever deleted (0-0: none)
  uint64_t entries_added = 0;
  Map<vsl::String, Group> groups;

  uint64_t length() const { return log.length(); }
  Group* FindGroup(std::string_view name);
  // A new group; nullptr when one of that name exists.
  Group* CreateGroup(std::string_view name, StreamId last, int64_t entries_read);

  // The last live entry's ID (0-0 when empty): streamLastValidID.
  StreamId LastValidId() const;
  // After entries were removed: the first live entry's ID, or 0-0 when none is left.
  void RefreshFirstId();
  // Whether the range from start (to end, or the stream's end when null) may contain a
  // tombstone: streamRangeHasTombstones.
  bool RangeHasTombstones(StreamId start, const StreamId* end) const;
  // The logical read counter of an ID: streamEstimateDistanceFromFirstEverEntry
  // (kInvalidEntriesRead when it cannot be known).
  int64_t EstimateDistance(StreamId id) const;
  // The group's lag (entries not yet delivered to it); false when it cannot be known.
  bool Lag(const Group& g, int64_t* lag) const;
  // Delivering entry `id` to a group past its last ID: its read counter and last ID, as
  // streamReplyWithRange keeps them.
  void Advance(Group& g, StreamId id) const;

  // Type callbacks (vsl::Type<Stream>).
  size_t MemUsage() const;
  Stream* Clone() const;
  size_t FreeEffort() const { return log.blocks() + groups.size(); }
  const char* Encoding() const { return "stream"; }
  // The entries in ID order, each as its ID's "<ms>.<seq>" (the text Redis's DEBUG DIGEST mixes
  // in) followed by its fields and values; the groups are not part of it, as in Redis's digest.
  int Visit(vsl_visit_fn fn, void* ud) const;
  // Saved as Redis 7.0 saves a stream (RDB_TYPE_STREAM_LISTPACKS_2: its nodes as listpacks, the
  // IDs and counters, the groups with their PELs and consumers); loaded from that, from Redis 5
  // and 6's RDB_TYPE_STREAM_LISTPACKS and from Redis 7.2's RDB_TYPE_STREAM_LISTPACKS_3
  // (streams_type_rdb.cc). Deserialize trusts nothing: a malformed value gives nullptr.
  static constexpr uint32_t kRdbType = 19;
  static constexpr uint64_t kRdbLoadTypes =
      (uint64_t{1} << 15) | (uint64_t{1} << 19) | (uint64_t{1} << 21);
  void Serialize(vsl::Writer& w) const;
  static Stream* Deserialize(vsl::Reader& r, uint32_t rdb_type);
};

extern vsl::Type<Stream> g_stream_type;

// A stream not yet stored in a key.
using StreamPtr = vsl::Owned<Stream>;

}  // namespace vessel::streams

#endif  // VESSEL_MODULES_STREAMS_STREAMS_TYPE_H_
