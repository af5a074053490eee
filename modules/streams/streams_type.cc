// The stream value type (streams_type.h).
#include "streams_type.h"

#include <cstdio>

namespace vessel::streams {
namespace {

// What a tree node costs in the allocator, by what it holds (MEMORY USAGE estimates).
constexpr size_t kNodeOverhead = 32;
size_t NodeBytes(size_t payload) { return (kNodeOverhead + payload + 15) / 16 * 16; }

size_t NameBytes(const vsl::String& s) {
  return s.capacity() > 15 ? vsl::Api().usable_size(s.data()) : 0;
}

}  // namespace

vsl::Type<Stream> g_stream_type;

// ---- groups and consumers ----

Consumer* Group::FindConsumer(std::string_view name) {
  auto it = consumers.find(name);
  return it == consumers.end() ? nullptr : &it->second;
}

Consumer* Group::CreateConsumer(std::string_view name, int64_t now_ms) {
  if (consumers.find(name) != consumers.end()) return nullptr;
  auto [it, added] = consumers.try_emplace(vsl::String(name));
  it->second.name = &it->first;
  it->second.seen_time = now_ms;
  return &it->second;
}

size_t Group::DeleteConsumer(std::string_view name) {
  auto it = consumers.find(name);
  if (it == consumers.end()) return 0;
  const size_t pending = it->second.pel.size();
  for (const auto& [id, nack] : it->second.pel) pel.erase(id);
  consumers.erase(it);
  return pending;
}

void Group::Ack(Map<StreamId, Nack>::iterator it) {
  if (it->second.consumer != nullptr) it->second.consumer->pel.erase(it->first);
  pel.erase(it);
}

void Group::Assign(Nack& nack, StreamId id, Consumer* to) {
  if (nack.consumer == to) return;
  to->pel.emplace(id, &nack);  // first: if it throws, the entry still has its owner
  if (nack.consumer != nullptr) nack.consumer->pel.erase(id);
  nack.consumer = to;
}

// ---- the stream ----

Group* Stream::FindGroup(std::string_view name) {
  auto it = groups.find(name);
  return it == groups.end() ? nullptr : &it->second;
}

Group* Stream::CreateGroup(std::string_view name, StreamId last, int64_t entries_read) {
  if (groups.find(name) != groups.end()) return nullptr;
  auto [it, added] = groups.try_emplace(vsl::String(name));
  it->second.last_id = last;
  it->second.entries_read = entries_read;
  return &it->second;
}

StreamId Stream::LastValidId() const {
  StreamId id;
  log.Last(true, &id);
  return id;
}

void Stream::RefreshFirstId() {
  first_id = StreamId{};
  if (length() != 0) log.First(true, &first_id);
}

bool Stream::RangeHasTombstones(StreamId start, const StreamId* end) const {
  if (length() == 0 || max_deleted.zero()) return false;
  if (first_id > max_deleted) return false;  // the last tombstone is before the first entry
  const StreamId stop = end != nullptr ? *end : StreamId::Max();
  return start <= max_deleted && max_deleted <= stop;
}

// a - b as Redis's long long arithmetic gives it on the counters of a stream, which an RDB file
// may set to anything: wrapping, never undefined.
static int64_t WrapSub(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}

int64_t Stream::EstimateDistance(StreamId id) const {
  const auto added = static_cast<int64_t>(entries_added);
  if (entries_added == 0) return 0;
  if (length() == 0 && id <= last_id) return added;
  if (id == last_id) return added;
  if (id > last_id) return kInvalidEntriesRead;  // a future ID
  if (max_deleted.zero() || max_deleted < first_id) {
    // No tombstone ahead: the counter follows from the length.
    const auto len = static_cast<int64_t>(length());
    if (id < first_id) return WrapSub(added, len);
    if (id == first_id) return WrapSub(WrapSub(added, len), -1);
  }
  return kInvalidEntriesRead;
}

bool Stream::Lag(const Group& g, int64_t* lag) const {
  const auto added = static_cast<int64_t>(entries_added);
  if (entries_added == 0) {
    *lag = 0;
    return true;
  }
  if (g.entries_read != kInvalidEntriesRead && !RangeHasTombstones(g.last_id, nullptr)) {
    *lag = WrapSub(added, g.entries_read);
    return true;
  }
  const int64_t read = EstimateDistance(g.last_id);
  if (read == kInvalidEntriesRead) return false;
  *lag = WrapSub(added, read);
  return true;
}

void Stream::Advance(Group& g, StreamId id) const {
  if (g.entries_read != kInvalidEntriesRead && !RangeHasTombstones(id, nullptr)) {
    g.entries_read = WrapSub(g.entries_read, -1);  // + 1, wrapping
  } else if (entries_added != 0) {
    g.entries_read = EstimateDistance(id);
  }
  g.last_id = id;
}

int Stream::Visit(vsl_visit_fn fn, void* ud) const {
  EntryLog::Cursor c(log, StreamId{}, StreamId::Max(), /*rev=*/false);
  while (c.Next()) {
    char id[48];
    const int n =
        std::snprintf(id, sizeof(id), "%llu.%llu", static_cast<unsigned long long>(c.id().ms),
                      static_cast<unsigned long long>(c.id().seq));
    if (fn(ud, id, static_cast<size_t>(n), 0) != 0) return VSL_OK;
    for (uint32_t i = 0; i < c.pairs(); ++i) {
      std::string_view field, value;
      c.NextPair(&field, &value);
      if (fn(ud, field.data(), field.size(), 0) != 0 || fn(ud, value.data(), value.size(), 0) != 0)
        return VSL_OK;
    }
  }
  return VSL_OK;
}

size_t Stream::MemUsage() const {
  size_t n = vsl::Api().usable_size(const_cast<Stream*>(this)) + log.MemUsage();
  for (const auto& [name, g] : groups) {
    n += NodeBytes(sizeof(vsl::String) + sizeof(Group)) + NameBytes(name);
    n += g.pel.size() * NodeBytes(sizeof(StreamId) + sizeof(Nack));
    for (const auto& [cname, c] : g.consumers) {
      n += NodeBytes(sizeof(vsl::String) + sizeof(Consumer)) + NameBytes(cname);
      n += c.pel.size() * NodeBytes(sizeof(StreamId) + sizeof(Nack*));
    }
  }
  return n;
}

Stream* Stream::Clone() const {
  Stream* s = vsl::New<Stream>();
  try {
    s->log.CopyFrom(log);
    s->last_id = last_id;
    s->first_id = first_id;
    s->max_deleted = max_deleted;
    s->entries_added = entries_added;
    for (const auto& [name, g] : groups) {
      Group& copy = *s->CreateGroup(name, g.last_id, g.entries_read);
      for (const auto& [id, nack] : g.pel)
        copy.pel.emplace(id, Nack{nack.delivery_time, nack.delivery_count, nullptr});
      for (const auto& [cname, c] : g.consumers) {
        Consumer& cc = *copy.CreateConsumer(cname, c.seen_time);
        for (const auto& [id, nack] : c.pel) {
          Nack& mine = copy.pel.find(id)->second;
          mine.consumer = &cc;
          cc.pel.emplace(id, &mine);
        }
      }
    }
  } catch (...) {
    vsl::Delete(s);
    throw;
  }
  return s;
}

}  // namespace vessel::streams
