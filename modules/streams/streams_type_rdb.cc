// A stream in Redis's RDB encodings (rdb.c's RDB_TYPE_STREAM_LISTPACKS*), through the SDK's RDB
// slots: the blocks become Redis's listpack nodes byte for byte (a block holds what Redis's node
// holds, see entry_log.h), and nodes read back become blocks. Loading checks every listpack as
// Redis's deep integrity check does and more: IDs must grow from node to node and entry to
// entry, counters must match the entries, every pending entry must have exactly one consumer.
#include <cstring>
#include <string>
#include <vector>

#include "listpack.h"
#include "streams_type.h"

namespace vessel::streams {
namespace {

constexpr uint32_t kListpacks = 15;   // Redis 5.0-6.2
constexpr uint32_t kListpacks2 = 19;  // Redis 7.0
constexpr uint32_t kListpacks3 = 21;  // Redis 7.2 (consumers' active time)

constexpr int64_t kFlagDeleted = 1;
constexpr int64_t kFlagSameFields = 2;

// An ID as 16 bytes big-endian (the radix tree key and the PEL IDs of Redis's RDB).
std::string EncodeId(StreamId id) {
  std::string b(16, '\0');
  for (int i = 0; i < 8; ++i) {
    b[i] = static_cast<char>(id.ms >> (56 - 8 * i));
    b[8 + i] = static_cast<char>(id.seq >> (56 - 8 * i));
  }
  return b;
}

StreamId DecodeId(std::string_view b) {
  StreamId id;
  for (int i = 0; i < 8; ++i) {
    id.ms = id.ms << 8 | static_cast<unsigned char>(b[i]);
    id.seq = id.seq << 8 | static_cast<unsigned char>(b[8 + i]);
  }
  return id;
}

// rdbSaveMillisecondTime: 8 bytes little-endian.
std::string EncodeMillis(int64_t ms) {
  std::string b(8, '\0');
  const auto u = static_cast<uint64_t>(ms);
  for (int i = 0; i < 8; ++i) b[i] = static_cast<char>(u >> (8 * i));
  return b;
}

int64_t DecodeMillis(std::string_view b) {
  uint64_t u = 0;
  for (int i = 7; i >= 0; --i) u = u << 8 | static_cast<unsigned char>(b[i]);
  return static_cast<int64_t>(u);
}

// The listpack Redis holds for a block: the master entry, then every entry, tombstones included.
std::string BlockListpack(const Block* b) {
  ListpackWriter lp;
  lp.AddInt(b->live);
  lp.AddInt(b->deleted);
  lp.AddInt(b->master_fields);
  BlockWalker w(b);
  IntText buf;
  for (uint32_t i = 0; i < b->master_fields; ++i) lp.Add(w.MasterField(i, &buf));
  lp.AddInt(0);
  while (w.Next()) {
    const bool same = w.same_fields();
    lp.AddInt((w.deleted() ? kFlagDeleted : 0) | (same ? kFlagSameFields : 0));
    lp.AddInt(static_cast<int64_t>(w.id().ms - b->master.ms));
    lp.AddInt(static_cast<int64_t>(w.id().seq - b->master.seq));
    const int64_t fields = w.pairs();
    if (!same) lp.AddInt(fields);
    for (int64_t i = 0; i < fields; ++i) {
      std::string_view f, v;
      w.NextPair(&f, &v);
      if (!same) lp.Add(f);
      lp.Add(v);
    }
    lp.AddInt(fields + 3 + (same ? 0 : fields + 1));
  }
  return lp.Finish();
}

// The text of a listpack element (integers as their decimal text).
std::string_view ElemText(const LpElem& e, std::string* buf) {
  if (!e.is_int) return e.s;
  *buf = std::to_string(e.v);
  return *buf;
}

// Adds the node (master ID, listpack) to the stream's log; `last` is the last entry so far
// (tombstones included) and becomes this node's last. false on anything malformed.
bool LoadNode(EntryLog& log, StreamId master, std::string_view blob, bool* any, StreamId* last) {
  std::vector<LpElem> el;
  if (!ReadListpack(blob, &el)) return false;
  size_t i = 0;
  auto next_int = [&](int64_t* v) {
    if (i >= el.size() || !el[i].is_int) return false;
    *v = el[i++].v;
    return true;
  };
  int64_t live, deleted, nfields, zero;
  if (!next_int(&live) || !next_int(&deleted) || !next_int(&nfields) || live < 0 || deleted < 0 ||
      nfields < 0 || live + deleted == 0 || static_cast<uint64_t>(nfields) > el.size() - i)
    return false;
  std::vector<std::string> fields;
  fields.reserve(static_cast<size_t>(nfields));
  std::string buf;
  for (int64_t f = 0; f < nfields; ++f) fields.emplace_back(ElemText(el[i++], &buf));
  if (!next_int(&zero) || zero != 0) return false;
  if (*any && master <= *last) return false;  // nodes in increasing order, none overlapping
  {
    std::vector<std::string_view> views(fields.begin(), fields.end());
    log.OpenLoadedBlock(master, views);
  }
  int64_t seen_live = 0, seen_deleted = 0;
  std::vector<std::string> pairs;
  std::vector<std::string_view> views;
  for (int64_t n = 0; n < live + deleted; ++n) {
    int64_t flags, msd, seqd, count;
    if (!next_int(&flags) || !next_int(&msd) || !next_int(&seqd) || flags < 0 || flags > 3)
      return false;
    const bool same = flags & kFlagSameFields;
    count = nfields;
    if (!same && (!next_int(&count) || count < 0)) return false;
    const uint64_t elems = static_cast<uint64_t>(count) * (same ? 1 : 2);
    if (count > static_cast<int64_t>(el.size()) || elems > el.size() - i) return false;
    pairs.clear();
    pairs.reserve(static_cast<size_t>(count) * 2);
    for (int64_t k = 0; k < count; ++k) {  // field, value (the field only when not the same)
      if (same) {
        pairs.push_back(fields[static_cast<size_t>(k)]);
      } else {
        pairs.emplace_back(ElemText(el[i++], &buf));
      }
      pairs.emplace_back(ElemText(el[i++], &buf));
    }
    int64_t lp_count;
    if (!next_int(&lp_count) || lp_count != count + 3 + (same ? 0 : count + 1)) return false;
    const StreamId id{master.ms + static_cast<uint64_t>(msd),
                      master.seq + static_cast<uint64_t>(seqd)};
    if (id < master || (*any && id <= *last)) return false;
    views.assign(pairs.begin(), pairs.end());
    log.AppendLoaded(id, flags & kFlagDeleted, same, views);
    (flags & kFlagDeleted ? seen_deleted : seen_live) += 1;
    *any = true;
    *last = id;
  }
  return i == el.size() && seen_live == live && seen_deleted == deleted;
}

bool ReadId(vsl::Reader& r, StreamId* id) { return r.RdbLen(&id->ms) && r.RdbLen(&id->seq); }

bool LoadGroups(vsl::Reader& r, Stream& s, uint32_t type) {
  uint64_t n;
  if (!r.RdbLen(&n)) return false;
  for (uint64_t g = 0; g < n; ++g) {
    std::string_view name;
    StreamId last;
    if (!r.RdbString(&name) || !ReadId(r, &last)) return false;
    int64_t entries_read;
    if (type == kListpacks) {
      entries_read = s.EstimateDistance(last);
    } else {
      uint64_t u;
      if (!r.RdbLen(&u)) return false;
      entries_read = static_cast<int64_t>(u);
    }
    Group* group = s.CreateGroup(name, last, entries_read);
    if (group == nullptr) return false;  // the same name twice
    uint64_t pending;
    if (!r.RdbLen(&pending)) return false;
    for (uint64_t k = 0; k < pending; ++k) {
      std::string_view id, time;
      uint64_t count;
      if (!r.Raw(16, &id) || !r.Raw(8, &time) || !r.RdbLen(&count)) return false;
      if (!group->pel.emplace(DecodeId(id), Nack{DecodeMillis(time), count, nullptr}).second)
        return false;
    }
    uint64_t consumers;
    if (!r.RdbLen(&consumers)) return false;
    for (uint64_t c = 0; c < consumers; ++c) {
      std::string_view cname, seen, active;
      if (!r.RdbString(&cname) || !r.Raw(8, &seen)) return false;
      if (type == kListpacks3 && !r.Raw(8, &active)) return false;  // 7.2's active time
      Consumer* consumer = group->CreateConsumer(cname, DecodeMillis(seen));
      uint64_t owned;
      if (consumer == nullptr || !r.RdbLen(&owned)) return false;
      for (uint64_t k = 0; k < owned; ++k) {
        std::string_view raw;
        if (!r.Raw(16, &raw)) return false;
        const StreamId id = DecodeId(raw);
        auto it = group->pel.find(id);
        if (it == group->pel.end() || it->second.consumer != nullptr) return false;
        it->second.consumer = consumer;
        consumer->pel.emplace(id, &it->second);
      }
    }
    for (const auto& [id, nack] : group->pel)
      if (nack.consumer == nullptr) return false;  // a pending entry nobody owns
  }
  return true;
}

}  // namespace

void Stream::Serialize(vsl::Writer& w) const {
  w.RdbLen(log.blocks());
  for (const auto& [master, block] : log.index()) {
    w.RdbString(EncodeId(master));
    w.RdbString(BlockListpack(block));
  }
  w.RdbLen(length());
  for (StreamId id : {last_id, first_id, max_deleted}) {
    w.RdbLen(id.ms);
    w.RdbLen(id.seq);
  }
  w.RdbLen(entries_added);
  w.RdbLen(groups.size());
  for (const auto& [name, g] : groups) {
    w.RdbString(name);
    w.RdbLen(g.last_id.ms);
    w.RdbLen(g.last_id.seq);
    w.RdbLen(static_cast<uint64_t>(g.entries_read));
    w.RdbLen(g.pel.size());
    for (const auto& [id, nack] : g.pel) {
      w.Raw(EncodeId(id));
      w.Raw(EncodeMillis(nack.delivery_time));
      w.RdbLen(nack.delivery_count);
    }
    w.RdbLen(g.consumers.size());
    for (const auto& [cname, c] : g.consumers) {
      w.RdbString(cname);
      w.Raw(EncodeMillis(c.seen_time));
      w.RdbLen(c.pel.size());
      for (const auto& [id, nack] : c.pel) w.Raw(EncodeId(id));
    }
  }
}

Stream* Stream::Deserialize(vsl::Reader& r, uint32_t rdb_type) {
  if (rdb_type != kListpacks && rdb_type != kListpacks2 && rdb_type != kListpacks3) return nullptr;
  StreamPtr s(vsl::New<Stream>());
  uint64_t nodes;
  if (!r.RdbLen(&nodes)) return nullptr;
  bool any = false;
  StreamId last_entry;
  for (uint64_t n = 0; n < nodes; ++n) {
    std::string_view key, blob;
    if (!r.RdbString(&key) || key.size() != 16 || !r.RdbString(&blob)) return nullptr;
    if (!LoadNode(s->log, DecodeId(key), blob, &any, &last_entry)) {
      s->log.DropEmptyTail();
      return nullptr;
    }
  }
  uint64_t length;
  if (!r.RdbLen(&length) || length != s->length() || !ReadId(r, &s->last_id)) return nullptr;
  if (any && s->last_id < last_entry) return nullptr;  // the next XADD would go backwards
  if (rdb_type == kListpacks) {
    s->entries_added = length;
    s->RefreshFirstId();
  } else if (!ReadId(r, &s->first_id) || !ReadId(r, &s->max_deleted) ||
             !r.RdbLen(&s->entries_added)) {
    return nullptr;
  }
  if (!LoadGroups(r, *s, rdb_type)) return nullptr;
  return s.release();
}

}  // namespace vessel::streams
