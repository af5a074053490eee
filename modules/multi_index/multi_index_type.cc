// The multi_index value type: records, indexes and the operations that keep them in step.
#include "multi_index_type.h"

#include <algorithm>
#include <limits>
#include <memory>
#include <new>
#include <string>

namespace vessel::multi_index {
namespace {

constexpr Id kMaxId = std::numeric_limits<Id>::max();
// Ids are replied as RESP integers: they stay below INT64_MAX.
constexpr Id kIdLimit = static_cast<Id>(std::numeric_limits<int64_t>::max());

constexpr uint64_t kFlagOrdered = 1;
constexpr uint64_t kFlagUnique = 2;
constexpr uint64_t kFlagNumeric = 4;

std::string Quoted(std::string_view s) { return "'" + std::string(s) + "'"; }

[[noreturn]] void NotNumber(const Index& ix) {
  vsl::Fail("value of field " + Quoted(ix.field()) + " is not a valid float (NUMERIC index " +
            Quoted(ix.name()) + ")");
}
[[noreturn]] void Duplicate(const Index& ix, Id holder) {
  throw vsl::Error{"UNIQUE", "value already in unique index " + Quoted(ix.name()) + " (record " +
                                 std::to_string(holder) + ")"};
}

void PutU32(char* p, uint32_t v) { std::memcpy(p, &v, 4); }

struct BlockDeleter {
  Accounting* a;
  void operator()(char* p) const { Deallocate(a, p); }
};
using BlockPtr = std::unique_ptr<char, BlockDeleter>;

}  // namespace

// ---- memory ----

void* Allocate(Accounting* a, size_t n) {
  void* p = vsl::Alloc(n);
  a->bytes += vsl::Api().usable_size(p);
  return p;
}

void Deallocate(Accounting* a, void* p) noexcept {
  if (p == nullptr) return;
  a->bytes -= vsl::Api().usable_size(p);
  vsl::Free(p);
}

// ---- records ----

Vec<FieldValue> DistinctFields(std::span<const FieldValue> pairs) {
  Vec<FieldValue> out;
  out.reserve(pairs.size());
  if (pairs.size() <= 16) {
    for (const FieldValue& p : pairs) {
      auto it = std::find_if(out.begin(), out.end(),
                             [&](const FieldValue& o) { return o.field == p.field; });
      if (it == out.end()) {
        out.push_back(p);
      } else {
        it->value = p.value;
      }
    }
    return out;
  }
  absl::flat_hash_map<std::string_view, size_t, absl::Hash<std::string_view>,
                      std::equal_to<std::string_view>,
                      vsl::Allocator<std::pair<const std::string_view, size_t>>>
      pos;
  pos.reserve(pairs.size());
  for (const FieldValue& p : pairs) {
    auto [it, added] = pos.try_emplace(p.field, out.size());
    if (added) {
      out.push_back(p);
    } else {
      out[it->second].value = p.value;
    }
  }
  return out;
}

bool RecordRef::Find(std::string_view field, std::string_view* value) const {
  const char* q = p_ + 8;
  for (uint32_t i = 0, n = field_count(); i < n; ++i) {
    const uint32_t fl = U32(q), vl = U32(q + 4);
    if (std::string_view(q + 8, fl) == field) {
      *value = std::string_view(q + 8 + fl, vl);
      return true;
    }
    q += 8 + fl + vl;
  }
  return false;
}

char* BuildRecord(Accounting* a, std::span<const FieldValue> fields) {
  constexpr uint64_t kMax = std::numeric_limits<uint32_t>::max();
  uint64_t payload = 0;
  for (const FieldValue& f : fields) payload += 8 + f.field.size() + f.value.size();
  if (payload + 8 > kMax || fields.size() > kMax) vsl::Fail("record too large (4 GiB at most)");
  char* block = static_cast<char*>(Allocate(a, 8 + payload));
  PutU32(block, static_cast<uint32_t>(fields.size()));
  PutU32(block + 4, static_cast<uint32_t>(payload));
  char* q = block + 8;
  for (const FieldValue& f : fields) {
    PutU32(q, static_cast<uint32_t>(f.field.size()));
    PutU32(q + 4, static_cast<uint32_t>(f.value.size()));
    if (!f.field.empty()) std::memcpy(q + 8, f.field.data(), f.field.size());
    if (!f.value.empty()) std::memcpy(q + 8 + f.field.size(), f.value.data(), f.value.size());
    q += 8 + f.field.size() + f.value.size();
  }
  return block;
}

char* BuildUpdated(Accounting* a, RecordRef old, std::span<const FieldValue> changes) {
  Vec<FieldValue> merged;
  merged.reserve(old.field_count() + changes.size());
  old.ForEach([&](std::string_view f, std::string_view v) { merged.push_back({f, v}); });
  for (const FieldValue& c : changes) merged.push_back(c);
  // DistinctFields keeps the first position and the last value: old fields stay in place.
  return BuildRecord(a, DistinctFields(merged));
}

// ---- schema ----

std::string CheckSchema(std::span<const IndexDef> defs) {
  if (defs.empty()) return "at least one INDEX is required";
  if (defs.size() > kMaxIndexes) {
    return "too many indexes (" + std::to_string(kMaxIndexes) + " at most)";
  }
  for (size_t i = 0; i < defs.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (defs[j].name == defs[i].name) return "duplicate index name " + Quoted(defs[i].name);
    }
    if (defs[i].numeric && defs[i].kind != Kind::kOrdered) {
      return "NUMERIC needs an ORDERED index (index " + Quoted(defs[i].name) + ")";
    }
  }
  return {};
}

// ---- IdSet ----

IdSet& IdSet::operator=(IdSet&& o) noexcept {
  if (this != &o) {
    FreeMany();
    one_ = o.one_;
    many_ = o.many_;
    o.many_ = nullptr;
  }
  return *this;
}

IdSet::~IdSet() { FreeMany(); }

void IdSet::FreeMany() {
  if (many_ == nullptr) return;
  Accounting* a = many_->get_allocator().accounting();
  many_->~Many();
  Deallocate(a, many_);
  many_ = nullptr;
}

size_t IdSet::size() const {
  if (many_ != nullptr) return many_->size();
  return one_ != 0 ? 1 : 0;
}

Id IdSet::first() const { return many_ != nullptr ? *many_->begin() : one_; }

void IdSet::Add(Accounting* a, Id id) {
  if (many_ != nullptr) {
    many_->insert(id);
    return;
  }
  if (one_ == 0) {
    one_ = id;
    return;
  }
  void* mem = Allocate(a, sizeof(Many));
  Many* m = new (mem) Many(CountingAllocator<Id>(a));
  try {
    m->insert(one_);
    m->insert(id);
  } catch (...) {
    m->~Many();
    Deallocate(a, mem);
    throw;
  }
  many_ = m;
  one_ = 0;
}

bool IdSet::Remove(Id id) {
  if (many_ == nullptr) {
    if (one_ != id) return false;
    one_ = 0;
    return true;
  }
  if (many_->erase(id) == 0) return false;
  if (many_->size() == 1) {
    const Id last = *many_->begin();
    FreeMany();
    one_ = last;
  }
  return true;
}

void IdSet::ForEach(absl::FunctionRef<bool(Id)> f) const {
  if (many_ == nullptr) {
    if (one_ != 0) f(one_);
    return;
  }
  for (Id id : *many_) {
    if (!f(id)) return;
  }
}

// ---- Index ----

namespace {

template <class Data>
Data MakeData(Accounting* a) {
  return Data(typename Data::allocator_type(a));
}

}  // namespace

Index::Index(Accounting* a, const IndexDef& def)
    : acct_(a),
      name_(def.name, CountingAllocator<char>(a)),
      field_(def.field, CountingAllocator<char>(a)),
      kind_(def.kind),
      unique_(def.unique),
      numeric_(def.numeric),
      data_(def.kind == Kind::kHash
                ? std::variant<HashData, LexData, NumData>(MakeData<HashData>(a))
            : def.numeric ? std::variant<HashData, LexData, NumData>(MakeData<NumData>(a))
                          : std::variant<HashData, LexData, NumData>(MakeData<LexData>(a))) {}

bool Index::MakeKey(std::string_view v, IndexKey* k) const {
  k->s = v;
  if (!numeric_) return true;
  return vsl::ParseDouble(v, &k->d);
}

bool Index::SameKey(const IndexKey& a, const IndexKey& b) const {
  return numeric_ ? a.d == b.d : a.s == b.s;
}

Id Index::AnyHolder(const IndexKey& k) const {
  if (const auto* h = std::get_if<HashData>(&data_)) {
    auto it = h->find(k.s);
    return it == h->end() ? 0 : it->ids.first();
  }
  if (const auto* l = std::get_if<LexData>(&data_)) {
    auto it = l->lower_bound(LexEntry{k.s, 0});
    return it != l->end() && it->key == k.s ? it->id : 0;
  }
  const auto& n = std::get<NumData>(data_);
  auto it = n.lower_bound(NumEntry{k.d, 0});
  return it != n.end() && it->key == k.d ? it->id : 0;
}

void Index::Insert(const IndexKey& k, Id id) {
  if (auto* h = std::get_if<HashData>(&data_)) {
    auto it = h->find(k.s);
    if (it != h->end()) {
      it->ids.Add(acct_, id);
    } else {
      h->insert(Bucket{k.s, IdSet(id)});
    }
  } else if (auto* l = std::get_if<LexData>(&data_)) {
    l->insert(LexEntry{k.s, id});
  } else {
    std::get<NumData>(data_).insert(NumEntry{k.d, id});
  }
  ++entries_;
}

void Index::Erase(const IndexKey& k, Id id, absl::FunctionRef<std::string_view(Id)> field_of) {
  size_t erased = 0;
  if (auto* h = std::get_if<HashData>(&data_)) {
    auto it = h->find(k.s);
    if (it != h->end() && it->ids.Remove(id)) {
      erased = 1;
      if (it->ids.size() == 0) {
        h->erase(it);
      } else if (it->key.data() == k.s.data()) {  // the view was into the leaving record
        it->key = field_of(it->ids.first());
      }
    }
  } else if (auto* l = std::get_if<LexData>(&data_)) {
    erased = l->erase(LexEntry{k.s, id});
  } else {
    erased = std::get<NumData>(data_).erase(NumEntry{k.d, id});
  }
  entries_ -= erased;
}

void Index::Repoint(const IndexKey& k, Id id, std::string_view old_view,
                    std::string_view new_view) {
  if (auto* h = std::get_if<HashData>(&data_)) {
    auto it = h->find(k.s);
    if (it != h->end() && it->key.data() == old_view.data()) it->key = new_view;
  } else if (auto* l = std::get_if<LexData>(&data_)) {
    auto it = l->find(LexEntry{k.s, id});
    if (it != l->end()) it->key = new_view;
  }
}

void Index::Equal(const IndexKey& k, absl::FunctionRef<bool(Id)> emit) const {
  if (const auto* h = std::get_if<HashData>(&data_)) {
    auto it = h->find(k.s);
    if (it != h->end()) it->ids.ForEach(emit);
  } else if (const auto* l = std::get_if<LexData>(&data_)) {
    for (auto it = l->lower_bound(LexEntry{k.s, 0}); it != l->end() && it->key == k.s; ++it) {
      if (!emit(it->id)) return;
    }
  } else {
    const auto& n = std::get<NumData>(data_);
    for (auto it = n.lower_bound(NumEntry{k.d, 0}); it != n.end() && it->key == k.d; ++it) {
      if (!emit(it->id)) return;
    }
  }
}

int Index::Compare(const LexEntry& e, const IndexKey& k) {
  const int c = e.key.compare(k.s);
  return c < 0 ? -1 : (c > 0 ? 1 : 0);
}
int Index::Compare(const NumEntry& e, const IndexKey& k) {
  return e.key < k.d ? -1 : (e.key > k.d ? 1 : 0);
}
Index::LexEntry Index::Probe(const LexEntry*, const IndexKey& k, Id id) { return {k.s, id}; }
Index::NumEntry Index::Probe(const NumEntry*, const IndexKey& k, Id id) { return {k.d, id}; }

template <class Data, class Entry>
void Index::RangeOf(const Data& data, const Bound& lo, const Bound& hi, bool rev,
                    absl::FunctionRef<bool(Id)> emit) {
  const Entry* tag = nullptr;
  auto above_lo = [&](const Entry& e) {
    if (lo.open != Bound::Open::kNone) return lo.open == Bound::Open::kMin;
    const int c = Compare(e, lo.key);
    return c > 0 || (c == 0 && !lo.exclusive);
  };
  auto below_hi = [&](const Entry& e) {
    if (hi.open != Bound::Open::kNone) return hi.open == Bound::Open::kMax;
    const int c = Compare(e, hi.key);
    return c < 0 || (c == 0 && !hi.exclusive);
  };
  if (!rev) {
    auto it = lo.open == Bound::Open::kMin ? data.begin()
              : lo.open == Bound::Open::kMax
                  ? data.end()
                  : (lo.exclusive ? data.upper_bound(Probe(tag, lo.key, kMaxId))
                                  : data.lower_bound(Probe(tag, lo.key, 0)));
    for (; it != data.end() && below_hi(*it); ++it) {
      if (!emit(it->id)) return;
    }
    return;
  }
  auto it = hi.open == Bound::Open::kMax ? data.end()
            : hi.open == Bound::Open::kMin
                ? data.begin()
                : (hi.exclusive ? data.lower_bound(Probe(tag, hi.key, 0))
                                : data.upper_bound(Probe(tag, hi.key, kMaxId)));
  while (it != data.begin()) {
    --it;
    if (!above_lo(*it) || !emit(it->id)) return;
  }
}

void Index::Range(const Bound& lo, const Bound& hi, bool rev,
                  absl::FunctionRef<bool(Id)> emit) const {
  if (const auto* l = std::get_if<LexData>(&data_)) {
    RangeOf<LexData, LexEntry>(*l, lo, hi, rev, emit);
  } else if (const auto* n = std::get_if<NumData>(&data_)) {
    RangeOf<NumData, NumEntry>(*n, lo, hi, rev, emit);
  }
}

// ---- MultiIndex ----

MultiIndex::MultiIndex(std::span<const IndexDef> schema)
    : indexes_(CountingAllocator<Index>(&acct_)),
      records_(0, absl::Hash<Id>(), std::equal_to<Id>(),
               CountingAllocator<std::pair<const Id, char*>>(&acct_)) {
  indexes_.reserve(schema.size());
  for (const IndexDef& d : schema) indexes_.emplace_back(&acct_, d);
}

MultiIndex::~MultiIndex() {
  for (auto& [id, block] : records_) Deallocate(&acct_, block);
}

const Index* MultiIndex::FindIndex(std::string_view name) const {
  for (const Index& ix : indexes_) {
    if (ix.name() == name) return &ix;
  }
  return nullptr;
}

RecordRef MultiIndex::Get(Id id) const {
  auto it = records_.find(id);
  return RecordRef(it == records_.end() ? nullptr : it->second);
}

std::string_view MultiIndex::FieldOf(Id id, const Index& ix) const {
  std::string_view v;
  Get(id).Find(ix.field(), &v);
  return v;
}

Vec<IndexDef> MultiIndex::Defs() const {
  Vec<IndexDef> defs;
  for (const Index& ix : indexes_) {
    defs.push_back({ix.name(), ix.field(), ix.kind(), ix.unique(), ix.numeric()});
  }
  return defs;
}

Id MultiIndex::OpInsert(std::span<const FieldValue> fields) {
  if (next_id_ >= kIdLimit) vsl::Fail("record ids exhausted");
  InsertAs(next_id_, fields);
  return next_id_++;
}

void MultiIndex::InsertAs(Id id, std::span<const FieldValue> fields) {
  InsertBlock(id, BuildRecord(&acct_, fields));
}

void MultiIndex::InsertBlock(Id id, char* block) {
  BlockPtr owned(block, BlockDeleter{&acct_});
  const RecordRef r(block);
  const size_t n = indexes_.size();
  IndexKey keys[kMaxIndexes];
  bool present[kMaxIndexes];
  for (size_t i = 0; i < n; ++i) {
    const Index& ix = indexes_[i];
    std::string_view v;
    present[i] = r.Find(ix.field(), &v);
    if (!present[i]) continue;
    if (!ix.MakeKey(v, &keys[i])) NotNumber(ix);
    if (ix.unique()) {
      if (const Id holder = ix.AnyHolder(keys[i]); holder != 0) Duplicate(ix, holder);
    }
  }
  records_.emplace(id, block);
  size_t done = 0;
  try {
    for (; done < n; ++done) {
      if (present[done]) indexes_[done].Insert(keys[done], id);
    }
  } catch (...) {
    while (done-- > 0) {
      const Index& ix = indexes_[done];
      if (present[done]) {
        indexes_[done].Erase(keys[done], id, [&](Id m) { return FieldOf(m, ix); });
      }
    }
    records_.erase(id);
    throw;
  }
  owned.release();
}

void MultiIndex::OpUpdate(std::span<const Id> ids, std::span<const FieldValue> changes) {
  const size_t n = indexes_.size();
  // The indexes whose field changes, and the new key (the same for every record).
  bool affected[kMaxIndexes];
  IndexKey new_keys[kMaxIndexes];
  for (size_t i = 0; i < n; ++i) {
    const Index& ix = indexes_[i];
    auto c = std::find_if(changes.begin(), changes.end(),
                          [&](const FieldValue& f) { return f.field == ix.field(); });
    affected[i] = c != changes.end();
    if (affected[i] && !ix.MakeKey(c->value, &new_keys[i])) NotNumber(ix);
  }
  if (ids.empty()) return;
  for (size_t i = 0; i < n; ++i) {
    const Index& ix = indexes_[i];
    if (!affected[i] || !ix.unique()) continue;
    if (ids.size() > 1) {
      throw vsl::Error{"UNIQUE", std::to_string(ids.size()) +
                                     " records would share one value of unique index " +
                                     Quoted(ix.name())};
    }
    if (const Id holder = ix.AnyHolder(new_keys[i]); holder != 0 && holder != ids[0]) {
      Duplicate(ix, holder);
    }
  }

  // The new blocks, before anything changes.
  Vec<BlockPtr> blocks;
  blocks.reserve(ids.size());
  for (Id id : ids) {
    blocks.emplace_back(BuildUpdated(&acct_, Get(id), changes), BlockDeleter{&acct_});
  }
  struct Added {
    uint32_t index;
    uint32_t record;
  };
  Vec<Added> added;
  size_t n_affected = 0;
  for (size_t i = 0; i < n; ++i) n_affected += affected[i];
  added.reserve(ids.size() * n_affected);

  // Phase 1, may fail: index every record's new values next to its old ones (entries are
  // (key, id) pairs, so both coexist).
  auto key_in = [&](RecordRef r, const Index& ix, IndexKey* k) {
    std::string_view v;
    if (!r.Find(ix.field(), &v)) return false;
    ix.MakeKey(v, k);  // checked when the value was stored
    return true;
  };
  try {
    for (size_t r = 0; r < ids.size(); ++r) {
      const RecordRef old = Get(ids[r]), fresh(blocks[r].get());
      for (size_t i = 0; i < n; ++i) {
        if (!affected[i]) continue;
        IndexKey old_key, new_key;
        key_in(fresh, indexes_[i], &new_key);
        if (key_in(old, indexes_[i], &old_key) && indexes_[i].SameKey(old_key, new_key)) continue;
        indexes_[i].Insert(new_key, ids[r]);
        added.push_back({static_cast<uint32_t>(i), static_cast<uint32_t>(r)});
      }
    }
  } catch (...) {
    for (size_t j = added.size(); j-- > 0;) {
      const Index& ix = indexes_[added[j].index];
      IndexKey k;
      key_in(RecordRef(blocks[added[j].record].get()), ix, &k);
      indexes_[added[j].index].Erase(k, ids[added[j].record], [&](Id m) { return FieldOf(m, ix); });
    }
    throw;
  }

  // Phase 2, cannot fail: drop the old entries, move views to the new blocks, swap the blocks.
  for (size_t r = 0; r < ids.size(); ++r) {
    const Id id = ids[r];
    auto rec = records_.find(id);
    const RecordRef old(rec->second), fresh(blocks[r].get());
    for (size_t i = 0; i < n; ++i) {
      Index& ix = indexes_[i];
      std::string_view old_view, new_view;
      if (!old.Find(ix.field(), &old_view)) continue;
      fresh.Find(ix.field(), &new_view);
      IndexKey old_key, new_key;
      ix.MakeKey(old_view, &old_key);
      ix.MakeKey(new_view, &new_key);
      if (affected[i] && !ix.SameKey(old_key, new_key)) {
        ix.Erase(old_key, id, [&](Id m) { return FieldOf(m, ix); });
      } else {
        ix.Repoint(old_key, id, old_view, new_view);
      }
    }
    Deallocate(&acct_, rec->second);
    rec->second = blocks[r].release();
  }
}

void MultiIndex::OpDelete(std::span<const Id> ids) {
  for (Id id : ids) {
    auto rec = records_.find(id);
    if (rec == records_.end()) continue;
    const RecordRef r(rec->second);
    for (Index& ix : indexes_) {
      std::string_view v;
      if (!r.Find(ix.field(), &v)) continue;
      IndexKey k;
      ix.MakeKey(v, &k);
      ix.Erase(k, id, [&](Id m) { return FieldOf(m, ix); });
    }
    Deallocate(&acct_, rec->second);
    records_.erase(rec);
  }
}

// ---- type callbacks ----

size_t MultiIndex::MemUsage() const {
  // The object itself comes from vsl::New: its usable size, like everything it owns.
  return vsl::Api().usable_size(this) + acct_.bytes;
}

MultiIndex* MultiIndex::Clone() const {
  const Vec<IndexDef> defs = Defs();
  std::unique_ptr<MultiIndex, void (*)(MultiIndex*)> copy(vsl::New<MultiIndex>(defs),
                                                          [](MultiIndex* m) { vsl::Delete(m); });
  copy->records_.reserve(records_.size());
  for (const auto& [id, block] : records_) {
    const size_t bytes = 8 + RecordRef(block).payload_bytes();
    char* dup = static_cast<char*>(Allocate(&copy->acct_, bytes));
    std::memcpy(dup, block, bytes);
    copy->InsertBlock(id, dup);
  }
  copy->next_id_ = next_id_;
  return copy.release();
}

// Encoding 1: u64 index count, per index bytes name, bytes field, u64 flags (1 ordered,
// 2 unique, 4 numeric); u64 next id; u64 record count, per record (ascending ids) u64 id,
// u64 field count, per field bytes name, bytes value.
void MultiIndex::Serialize(vsl::Writer& w) const {
  w.U64(indexes_.size());
  for (const Index& ix : indexes_) {
    w.Bytes(ix.name());
    w.Bytes(ix.field());
    w.U64((ix.kind() == Kind::kOrdered ? kFlagOrdered : 0) | (ix.unique() ? kFlagUnique : 0) |
          (ix.numeric() ? kFlagNumeric : 0));
  }
  w.U64(next_id_);
  Vec<Id> ids;
  ids.reserve(records_.size());
  for (const auto& [id, block] : records_) ids.push_back(id);
  std::sort(ids.begin(), ids.end());
  w.U64(ids.size());
  for (Id id : ids) {
    const RecordRef r = Get(id);
    w.U64(id);
    w.U64(r.field_count());
    r.ForEach([&](std::string_view f, std::string_view v) {
      w.Bytes(f);
      w.Bytes(v);
    });
  }
}

MultiIndex* MultiIndex::Deserialize(vsl::Reader& r, uint32_t encver) {
  if (encver != 1) return nullptr;
  uint64_t n_indexes;
  if (!r.U64(&n_indexes) || n_indexes == 0 || n_indexes > kMaxIndexes) return nullptr;
  Vec<IndexDef> defs(n_indexes);
  for (IndexDef& d : defs) {
    uint64_t flags;
    if (!r.Bytes(&d.name) || !r.Bytes(&d.field) || !r.U64(&flags)) return nullptr;
    if (flags & ~(kFlagOrdered | kFlagUnique | kFlagNumeric)) return nullptr;
    d.kind = (flags & kFlagOrdered) ? Kind::kOrdered : Kind::kHash;
    d.unique = flags & kFlagUnique;
    d.numeric = flags & kFlagNumeric;
  }
  if (!CheckSchema(defs).empty()) return nullptr;
  uint64_t next_id, count;
  if (!r.U64(&next_id) || next_id == 0 || next_id > kIdLimit || !r.U64(&count)) return nullptr;
  std::unique_ptr<MultiIndex, void (*)(MultiIndex*)> mi(vsl::New<MultiIndex>(defs),
                                                        [](MultiIndex* m) { vsl::Delete(m); });
  Vec<FieldValue> fields;
  for (uint64_t i = 0; i < count; ++i) {
    uint64_t id, n_fields;
    if (!r.U64(&id) || id == 0 || id >= next_id || mi->records_.contains(id)) return nullptr;
    if (!r.U64(&n_fields) || n_fields == 0) return nullptr;
    fields.clear();
    for (uint64_t f = 0; f < n_fields; ++f) {
      FieldValue fv;
      if (!r.Bytes(&fv.field) || !r.Bytes(&fv.value)) return nullptr;
      fields.push_back(fv);
    }
    if (DistinctFields(fields).size() != fields.size()) return nullptr;
    try {
      mi->InsertAs(id, fields);
    } catch (const vsl::Error&) {  // a NUMERIC field that is not a number, a UNIQUE violation
      return nullptr;
    }
  }
  mi->next_id_ = next_id;
  return mi.release();
}

}  // namespace vessel::multi_index
