// The hash value type: compact blocks, the tagged value's read helpers, the HashEditor, the type
// callbacks (free, memory, copy, serialization, encoding) and Redis's long double formatting.
#include "hashes_type.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <utility>

namespace vessel::hashes {
namespace {

const vsl_type* g_type = nullptr;

size_t Usable(const void* p) { return vsl::Api().usable_size(const_cast<void*>(p)); }

void* Tag(HashTable* t) { return reinterpret_cast<void*>(reinterpret_cast<uintptr_t>(t) | 1); }

HashPack* NewPack(size_t capacity) {
  auto* p = static_cast<HashPack*>(vsl::Alloc(sizeof(HashPack) + capacity));
  p->used = 0;
  p->count = 0;
  p->flags = 0;
  p->reserved = 0;
  return p;
}

size_t PackCapacity(const HashPack* p) { return Usable(p) - sizeof(HashPack); }

// Removes the entries expired at `now` from a compact block in place; recomputes its expiry flag.
size_t PurgePack(HashPack* p, int64_t now) {
  size_t removed = 0, out = 0;
  bool any_expiry = false;
  for (size_t off = 0; off < p->used;) {
    const HashEntry e = GetEntry(p->data() + off);
    if (Alive(e, now)) {
      any_expiry = any_expiry || e.expire != 0;
      if (out != off) std::memmove(p->data() + out, p->data() + off, e.size);
      out += e.size;
    } else {
      ++removed;
    }
    off += e.size;
  }
  p->used = static_cast<uint32_t>(out);
  p->count = static_cast<uint16_t>(p->count - removed);
  if (!any_expiry) p->flags &= static_cast<uint8_t>(~kPackExpiry);
  return removed;
}

// Removes the records expired at `now` from a table; makes its earliest expiry exact.
size_t PurgeTable(HashTable* t, int64_t now) {
  std::vector<const unsigned char*, vsl::Allocator<const unsigned char*>> victims;
  int64_t earliest = INT64_MAX;
  for (size_t i = 0; i < t->slot_count(); ++i) {
    const unsigned char* rec = t->At(i);
    if (rec == nullptr) continue;
    const HashEntry e = GetEntry(rec);
    if (e.expire == 0) continue;
    if (e.expire < now) {
      victims.push_back(rec);
    } else if (e.expire < earliest) {
      earliest = e.expire;
    }
  }
  // Records never move (only slots do), so each victim's field stays readable until its erase.
  for (const unsigned char* rec : victims) t->Erase(GetEntry(rec).field);
  t->set_min_expire(earliest);
  return victims.size();
}

}  // namespace

const vsl_type* HashType() { return g_type; }

// ---- reading ----

bool HashView::MayHaveExpired(int64_t now) const {
  if (is_table()) return table()->expiring() > 0 && table()->min_expire() < now;
  return (pack()->flags & kPackExpiry) != 0;
}

size_t HashView::Size(int64_t now) const {
  if (!MayHaveExpired(now)) return raw_size();
  size_t n = 0;
  ForEachRaw([&](const HashEntry& e) { n += Alive(e, now) ? 1 : 0; });
  return n;
}

bool HashView::Find(std::string_view f, int64_t now, HashEntry* out) const {
  if (is_table()) {
    const unsigned char* rec = table()->Find(f);
    if (rec == nullptr) return false;
    *out = GetEntry(rec);
    return Alive(*out, now);
  }
  const HashPack* p = pack();
  for (size_t off = 0; off < p->used;) {
    const HashEntry e = GetEntry(p->data() + off);
    if (e.field.size() == f.size() && std::memcmp(e.field.data(), f.data(), f.size()) == 0) {
      *out = e;
      return Alive(e, now);
    }
    off += e.size;
  }
  return false;
}

int64_t HashView::NextFieldExpiry() const {
  if (is_table()) return table()->expiring() == 0 ? -1 : table()->min_expire();
  if ((pack()->flags & kPackExpiry) == 0) return -1;
  int64_t earliest = INT64_MAX;
  ForEachRaw([&](const HashEntry& e) {
    if (e.expire != 0 && e.expire < earliest) earliest = e.expire;
  });
  return earliest == INT64_MAX ? -1 : earliest;
}

const char* HashView::Encoding() const {
  if (is_table()) return "hashtable";
  return (pack()->flags & kPackEx) != 0 ? "listpackex" : "listpack";
}

FieldSnapshot::FieldSnapshot(HashView h, int64_t now) {
  entries_.reserve(h.raw_size());
  h.ForEach(now, [&](const HashEntry& e) { entries_.push_back(e); });
}

HashLimits ReadLimits(const vsl::Ctx& ctx) {
  HashLimits l;
  const int64_t entries = ctx.Setting("hash-max-listpack-entries", kDefaultMaxEntries);
  const int64_t value = ctx.Setting("hash-max-listpack-value", kDefaultMaxValue);
  l.max_entries = entries < 0 ? 0 : std::min<size_t>(static_cast<size_t>(entries), kMaxPackEntries);
  l.max_value = value < 0 ? 0 : static_cast<size_t>(value);
  return l;
}

// ---- the HashEditor ----

HashEditor::HashEditor(vsl::Ctx& ctx, vsl::Key key) : ctx_(ctx), key_(key), now_(ctx.now_ms()) {
  Open();
}

void HashEditor::Open() {
  void* v = nullptr;
  const int rc = key_.GetRaw(HashType(), &v);
  if (rc == VSL_WRONGTYPE) vsl::WrongType();
  if (rc != VSL_OK) return;
  v_ = v;
  stored_ = true;
  PurgeExpired();
}

HashEditor::~HashEditor() {
  if (v_ == nullptr) return;
  if (!stored_) {
    FreeHash(v_);
  } else if (HashView(v_).raw_size() == 0) {
    key_.Delete();
  } else if (changed_) {
    key_.Modified();
  }
}

void HashEditor::PurgeExpired() {
  if (!HashView(v_).MayHaveExpired(now_)) return;
  const size_t removed = is_table() ? PurgeTable(table(), now_) : PurgePack(pack(), now_);
  if (removed == 0) return;
  changed_ = true;
  key_.Notify(VSL_NOTIFY_HASH, "hexpired");  // Redis 7.4's lazy field expiry
  if (HashView(v_).raw_size() == 0) {        // the last field expired: the hash goes
    key_.Delete();
    key_.Notify(VSL_NOTIFY_GENERIC, "del");
    v_ = nullptr;
    stored_ = false;
    changed_ = false;
  }
}

void HashEditor::Replace(void* fresh) {
  if (stored_) {
    key_.SetRaw(HashType(), fresh, VSL_SET_KEEPTTL);  // the host frees the old value
  } else if (v_ != nullptr) {
    FreeHash(v_);
  }
  v_ = fresh;
  changed_ = true;
}

bool HashEditor::Commit() {
  if (v_ == nullptr) return false;
  bool deleted = false;
  if (HashView(v_).raw_size() == 0) {
    if (stored_) {
      deleted = key_.Delete();
    } else {
      FreeHash(v_);
    }
  } else if (!stored_) {
    void* v = std::exchange(v_, nullptr);  // on failure key_set frees it
    key_.SetRaw(HashType(), v);
    return false;
  } else if (changed_) {
    key_.Modified();
  }
  v_ = nullptr;
  stored_ = false;
  changed_ = false;
  return deleted;
}

bool HashEditor::Get(std::string_view f, HashEntry* out) const {
  return v_ != nullptr && HashView(v_).Find(f, now_, out);
}

void HashEditor::ToTable(size_t reserve) {
  auto* t = vsl::New<HashTable>();
  try {
    t->Reserve(std::max(reserve, size()));
    if (v_ != nullptr)
      HashView(v_).ForEachRaw([&](const HashEntry& e) { t->Insert(e.field, e.value, e.expire); });
  } catch (...) {
    vsl::Delete(t);
    throw;
  }
  Replace(Tag(t));
}

void HashEditor::EnsureRoom(size_t extra) {
  if (v_ == nullptr) {
    v_ = NewPack(extra);
    return;
  }
  HashPack* p = pack();
  if (p->used + extra <= PackCapacity(p)) return;
  HashPack* fresh = NewPack(p->used + extra);
  std::memcpy(fresh, p, sizeof(HashPack) + p->used);
  Replace(fresh);
}

void HashEditor::Prepare(const vsl::Ctx& ctx, int first, int last) {
  if (v_ != nullptr && is_table()) return;
  if (!limits_read_) limits_ = ReadLimits(ctx), limits_read_ = true;
  size_t sum = 0;
  bool convert = false;
  for (int i = first; i <= last; ++i) {
    const size_t len = ctx.arg(i).size();
    convert = convert || len > limits_.max_value;
    sum += len;
  }
  const size_t pairs = static_cast<size_t>(last - first + 1) / 2;
  const size_t used = v_ == nullptr ? 0 : pack()->used;
  if (convert || used + sum > kMaxPackBytes) return ToTable(size() + pairs);
  if (v_ != nullptr) return;  // an existing block grows as entries arrive
  size_t room = 0;
  for (int i = first; i + 1 <= last; i += 2) {
    room += EntrySize(ctx.arg(i).size(), ctx.arg(i + 1).size(), false);
  }
  EnsureRoom(room);  // a new hash gets its block in one allocation
}

void HashEditor::MaybeConvert(std::string_view f, std::string_view v) {
  if (v_ != nullptr && is_table()) return;
  if (!limits_read_) limits_ = ReadLimits(ctx_), limits_read_ = true;
  if (f.size() > limits_.max_value || v.size() > limits_.max_value) ToTable(size() + 1);
}

ptrdiff_t HashEditor::PackFind(std::string_view f, HashEntry* out) const {
  const HashPack* p = pack();
  for (size_t off = 0; off < p->used;) {
    const HashEntry e = GetEntry(p->data() + off);
    if (e.field.size() == f.size() && std::memcmp(e.field.data(), f.data(), f.size()) == 0) {
      *out = e;
      return static_cast<ptrdiff_t>(off);
    }
    off += e.size;
  }
  return -1;
}

void HashEditor::PackAssign(size_t off, size_t old_size, std::string_view f, std::string_view v,
                            int64_t expire) {
  const size_t size = EntrySize(f.size(), v.size(), expire != 0);
  const auto* lo = reinterpret_cast<const char*>(pack()->data());
  const auto* hi = lo + pack()->used;
  const bool alias = (f.data() >= lo && f.data() < hi) || (v.data() >= lo && v.data() < hi);
  // Encode first when f or v point into the block itself (SetExpire, Persist).
  std::unique_ptr<unsigned char, void (*)(void*)> tmp(nullptr, vsl::Free);
  if (alias) {
    tmp.reset(static_cast<unsigned char*>(vsl::Alloc(size)));
    PutEntry(tmp.get(), f, v, expire);
  }
  if (size > old_size) EnsureRoom(size - old_size);
  HashPack* p = pack();
  unsigned char* at = p->data() + off;
  if (size != old_size) std::memmove(at + size, at + old_size, p->used - off - old_size);
  if (alias) {
    std::memcpy(at, tmp.get(), size);
  } else {
    PutEntry(at, f, v, expire);
  }
  p->used = static_cast<uint32_t>(p->used + size - old_size);
  if (expire != 0) p->flags |= kPackExpiry;
  changed_ = true;
}

void HashEditor::PackRemove(size_t off, size_t size) {
  HashPack* p = pack();
  std::memmove(p->data() + off, p->data() + off + size, p->used - off - size);
  p->used = static_cast<uint32_t>(p->used - size);
  --p->count;
  changed_ = true;
}

bool HashEditor::Set(std::string_view f, std::string_view v, bool keep_expiry) {
  MaybeConvert(f, v);
  if (v_ != nullptr && is_table()) {
    HashTable* t = table();
    const ptrdiff_t slot = t->Locate(f);
    changed_ = true;
    if (slot >= 0) {
      const int64_t expire = keep_expiry ? GetEntry(t->At(static_cast<size_t>(slot))).expire : 0;
      t->Assign(static_cast<size_t>(slot), v, expire);
      return false;
    }
    t->Insert(f, v, 0);
    return true;
  }
  HashEntry e;
  const ptrdiff_t off = v_ == nullptr ? -1 : PackFind(f, &e);
  if (off >= 0) {
    PackAssign(static_cast<size_t>(off), e.size, f, v, keep_expiry ? e.expire : 0);
    return false;
  }
  const size_t need = EntrySize(f.size(), v.size(), false);
  const size_t count = size();
  if (count + 1 > kMaxPackEntries || (v_ != nullptr ? pack()->used : 0) + need > kMaxPackBytes) {
    ToTable(count + 1);
    table()->Insert(f, v, 0);
    return true;
  }
  EnsureRoom(need);
  HashPack* p = pack();
  PutEntry(p->data() + p->used, f, v, 0);
  p->used = static_cast<uint32_t>(p->used + need);
  ++p->count;
  changed_ = true;
  if (p->count > limits_.max_entries) ToTable(p->count);
  return true;
}

bool HashEditor::Delete(std::string_view f) {
  if (v_ == nullptr) return false;
  if (is_table()) {
    if (!table()->Erase(f)) return false;
    changed_ = true;
    return true;
  }
  HashEntry e;
  const ptrdiff_t off = PackFind(f, &e);
  if (off < 0) return false;
  PackRemove(static_cast<size_t>(off), e.size);
  return true;
}

int HashEditor::SetExpire(std::string_view f, int64_t at, ExpireCond cond) {
  if (v_ == nullptr) return kNoField;
  HashEntry e;
  ptrdiff_t where;
  if (is_table()) {
    where = table()->Locate(f);
    if (where >= 0) e = GetEntry(table()->At(static_cast<size_t>(where)));
  } else {
    where = PackFind(f, &e);
  }
  if (where < 0) return kNoField;
  if (e.expire == 0) {
    // No expiry counts as an infinite one: GT never holds, LT always does.
    if (cond == ExpireCond::kXx || cond == ExpireCond::kGt) return kCondNotMet;
  } else if (cond == ExpireCond::kNx || (cond == ExpireCond::kGt && e.expire >= at) ||
             (cond == ExpireCond::kLt && e.expire <= at)) {
    return kCondNotMet;
  }
  if (at <= now_) {
    Delete(f);
    return kDeleted;
  }
  if (is_table()) {
    table()->Assign(static_cast<size_t>(where), e.value, at);
    changed_ = true;
  } else {
    PackAssign(static_cast<size_t>(where), e.size, e.field, e.value, at);
  }
  return kUpdated;
}

int HashEditor::Persist(std::string_view f) {
  HashEntry e;
  if (!Get(f, &e)) return kNoField;
  if (e.expire == 0) return kNoExpiry;
  if (is_table()) {
    const ptrdiff_t slot = table()->Locate(f);
    table()->Assign(static_cast<size_t>(slot), e.value, 0);
    changed_ = true;
  } else {
    HashEntry found;
    const ptrdiff_t off = PackFind(f, &found);
    PackAssign(static_cast<size_t>(off), found.size, found.field, found.value, 0);
  }
  return kUpdated;
}

void HashEditor::MarkExpiryUsed() {
  if (v_ != nullptr && !is_table()) pack()->flags |= kPackEx;
}

// ---- the value callbacks ----

void FreeHash(void* v) {
  const HashView h(v);
  if (h.is_table()) {
    vsl::Delete(const_cast<HashTable*>(h.table()));
  } else {
    vsl::Free(v);
  }
}

size_t MemUsage(const void* v) {
  const HashView h(v);
  if (!h.is_table()) return Usable(v);
  return Usable(h.table()) + h.table()->MemUsage();
}

void* Clone(const void* v) {
  const HashView h(v);
  if (h.is_table()) return Tag(h.table()->Clone());
  const HashPack* p = h.pack();
  HashPack* c = NewPack(p->used);
  std::memcpy(c, p, sizeof(HashPack) + p->used);
  return c;
}

size_t ExpireDue(void* v, int64_t now_ms) {
  const HashView h(v);
  if (!h.MayHaveExpired(now_ms)) return 0;
  if (h.is_table()) return PurgeTable(const_cast<HashTable*>(h.table()), now_ms);
  return PurgePack(static_cast<HashPack*>(v), now_ms);
}

// ---- serialization (encoding version 1) ----
//
// u64 representation (0 compact, 1 table) | compact flags << 8, u64 count, then per entry:
// bytes field, bytes value, u64 expiry (0 = none), in storage order.

namespace {

constexpr uint32_t kEncodingVersion = 1;
// A compact hash restored with more entries than this is rebuilt as a table: the duplicate check
// of a compact block is quadratic.
constexpr uint64_t kMaxRestoredPack = 512;

void Serialize(const void* v, vsl::Writer& w) {
  const HashView h(v);
  w.U64(h.is_table() ? 1 : static_cast<uint64_t>(h.pack()->flags & kPackEx) << 8);
  w.U64(h.raw_size());
  h.ForEachRaw([&](const HashEntry& e) {
    w.Bytes(e.field);
    w.Bytes(e.value);
    w.U64(static_cast<uint64_t>(e.expire));
  });
}

void* Deserialize(vsl::Reader& r, uint32_t encver) {
  uint64_t head, n;
  if (encver != kEncodingVersion || !r.U64(&head) || !r.U64(&n) || n == 0) return nullptr;
  const uint64_t kind = head & 0xff, flags = head >> 8;
  if (kind > 1 || (flags & ~uint64_t{kPackEx}) != 0 || (kind == 1 && flags != 0)) return nullptr;
  if (n > HashTable::kMaxSize) return nullptr;
  const bool compact = kind == 0 && n <= kMaxRestoredPack;
  std::vector<unsigned char, vsl::Allocator<unsigned char>> block;
  HashTable* t = nullptr;
  bool ok = true;
  bool any_expiry = false;
  try {
    if (!compact) t = vsl::New<HashTable>();
    if (t != nullptr) t->Reserve(std::min<uint64_t>(n, uint64_t{1} << 16));
    for (uint64_t i = 0; ok && i < n; ++i) {
      std::string_view f, val;
      uint64_t expire;
      ok = r.Bytes(&f) && r.Bytes(&val) && r.U64(&expire) && static_cast<int64_t>(expire) >= 0;
      if (!ok) break;
      any_expiry = any_expiry || expire != 0;
      if (t != nullptr) {
        ok = t->Locate(f) < 0;
        if (ok) t->Insert(f, val, static_cast<int64_t>(expire));
        continue;
      }
      for (size_t off = 0; ok && off < block.size(); off += GetEntry(block.data() + off).size) {
        ok = GetEntry(block.data() + off).field != f;
      }
      const size_t at = block.size();
      block.resize(at + EntrySize(f.size(), val.size(), expire != 0));
      PutEntry(block.data() + at, f, val, static_cast<int64_t>(expire));
      ok = ok && block.size() <= kMaxPackBytes;
    }
    if (ok && t != nullptr) return Tag(t);
    if (ok) {
      HashPack* p = NewPack(block.size());
      std::memcpy(p->data(), block.data(), block.size());
      p->used = static_cast<uint32_t>(block.size());
      p->count = static_cast<uint16_t>(n);
      p->flags = static_cast<uint8_t>(flags | (any_expiry ? kPackExpiry : 0));
      return p;
    }
  } catch (...) {
  }
  if (t != nullptr) vsl::Delete(t);
  return nullptr;
}

}  // namespace

bool RegisterHashType(vsl_module* m) {
  vsl_type_desc d{};
  d.struct_size = sizeof(d);
  d.name = "hash";
  d.encoding_version = kEncodingVersion;
  d.free = [](vsl_type_ctx*, void* v) { FreeHash(v); };
  d.mem_usage = [](vsl_type_ctx*, const void* v) { return MemUsage(v); };
  d.copy = [](vsl_type_ctx*, const void* v) -> void* {
    try {
      return Clone(v);
    } catch (...) {
      return nullptr;
    }
  };
  d.serialize = [](vsl_type_ctx*, const void* v, vsl_writer* w) {
    vsl::Writer writer(w);
    try {
      Serialize(v, writer);
      return VSL_OK;
    } catch (...) {
      return VSL_ERR;
    }
  };
  d.deserialize = [](vsl_type_ctx*, vsl_reader* r, uint32_t encver) -> void* {
    vsl::Reader reader(r);
    return Deserialize(reader, encver);
  };
  d.free_effort = [](vsl_type_ctx*, const void* v) -> size_t {
    const HashView h(v);
    return h.is_table() ? h.raw_size() : 1;
  };
  d.encoding = [](vsl_type_ctx*, const void* v) { return HashView(v).Encoding(); };
  // Field, then value with the field's expiry (unix ms, 0 = none) as its score (ABI 1.4's
  // visit of a hash; RDB files and DUMP payloads are written from it). Expired fields not yet
  // purged are included: the writer drops them at its own point in time.
  d.visit = [](vsl_type_ctx*, const void* v, vsl_visit_fn fn, void* ud) {
    bool stop = false;
    HashView(v).ForEachRaw([&](const HashEntry& e) {
      if (stop) return;
      stop = fn(ud, e.field.data(), e.field.size(), 0) != 0 ||
             fn(ud, e.value.data(), e.value.size(), static_cast<double>(e.expire)) != 0;
    });
    return VSL_OK;
  };
  // Active field expiry (ABI 1.3): the host runs ExpireDue when the earliest field is due.
  d.next_due = [](vsl_type_ctx*, const void* v) { return HashView(v).NextFieldExpiry(); };
  d.expire_due = [](vsl_type_ctx*, void* v, int64_t now_ms, int* empty) {
    const size_t removed = ExpireDue(v, now_ms);
    *empty = HashView(v).raw_size() == 0 ? 1 : 0;
    return removed;
  };
  // Redis 7.4 fires "hexpired" (then "del" for an emptied hash) for fields the cycle removes.
  d.parts_expired_event = "hexpired";
  d.parts_expired_class = VSL_NOTIFY_HASH;
  return vsl::Api().register_type(m, &d, &g_type) == VSL_OK;
}

// ---- numbers ----

}  // namespace vessel::hashes
