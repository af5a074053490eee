// The sorted-set value type: the Zset facade over Pack and the tree (MemberTable + OrderTree),
// Redis's zsetAdd rules, range ranks, walking and the type callbacks.
#include "zsets_type.h"

#include <cmath>
#include <cstring>
#include <iterator>
#include <memory>
#include <new>
#include <vector>

namespace vessel::zsets {
namespace {

using vsl::Vec;

size_t Usable(const void* p) { return vsl::Api().usable_size(const_cast<void*>(p)); }

}  // namespace

int CompareLex(const LexBound& a, const LexBound& b) {
  if (a.kind == b.kind && a.kind != LexBound::Kind::kString) return 0;
  if (a.kind == LexBound::Kind::kMinusInf || b.kind == LexBound::Kind::kPlusInf) return -1;
  if (a.kind == LexBound::Kind::kPlusInf || b.kind == LexBound::Kind::kMinusInf) return 1;
  return CompareMembers(a.s, b.s);
}

int CompareLex(std::string_view v, const LexBound& b) {
  if (b.kind == LexBound::Kind::kMinusInf) return 1;
  if (b.kind == LexBound::Kind::kPlusInf) return -1;
  return CompareMembers(v, b.s);
}

// ---- construction ----

Zset::~Zset() { vsl::Delete(big_); }

Zset* Zset::Build(std::span<const Item> items, const ZsetLimits& lim) {
  size_t longest = 0, bytes = 0;
  for (const Item& it : items) {
    longest = std::max(longest, it.member.size());
    bytes += Pack::EntryBytes(it.member, it.score);
  }
  std::unique_ptr<Zset, void (*)(Zset*)> z(New(), [](Zset* p) { vsl::Delete(p); });
  if (static_cast<int64_t>(items.size()) <= lim.entries &&
      static_cast<int64_t>(longest) <= lim.value && bytes <= Pack::kMaxBytes) {
    z->pack_.Reserve(bytes);
    for (const Item& it : items) z->pack_.Append(it.member, it.score);
    return z.release();
  }
  Big* b = vsl::New<Big>();
  try {
    b->table.Reserve(items.size());
    Vec<uint32_t> pos(items.size());
    Vec<double> score(items.size());
    for (size_t i = 0; i < items.size(); ++i) {
      pos[i] = b->table.Insert(items[i].member, items[i].score);
      score[i] = items[i].score;
    }
    b->tree.Build(pos.data(), score.data(), items.size());
  } catch (...) {
    vsl::Delete(b);
    throw;
  }
  z->pack_.Free();
  z->big_ = b;
  return z.release();
}

Zset* Zset::NewTree() {
  Zset* z = New();
  try {
    z->big_ = vsl::New<Big>();
  } catch (...) {
    vsl::Delete(z);
    throw;
  }
  z->pack_.Free();
  return z;
}

void Zset::ToTree() {
  const size_t n = pack_.size();
  Big* b = vsl::New<Big>();
  try {
    b->table.Reserve(n + 1);
    Vec<uint32_t> pos(n);
    Vec<double> score(n);
    size_t i = 0;
    for (size_t off = pack_.begin(), end = pack_.end(), next; off < end; off = next, ++i) {
      const Pack::Item it = pack_.Decode(off, &next);
      pos[i] = b->table.Insert(it.member, it.score);
      score[i] = it.score;
    }
    b->tree.Build(pos.data(), score.data(), n);
  } catch (...) {
    vsl::Delete(b);
    throw;
  }
  pack_.Free();
  big_ = b;
}

// ---- members ----

bool Zset::Score(std::string_view m, double* out) const {
  if (big_ == nullptr) {
    size_t off;
    return pack_.Find(m, &off, out);
  }
  const int64_t pos = big_->table.Find(m);
  if (pos < 0) return false;
  *out = big_->table.Score(static_cast<uint32_t>(pos));
  return true;
}

int Zset::Add(std::string_view m, double score, int flags, double* newscore,
              const ZsetLimits& lim) {
  if (std::isnan(score)) return kNan;
  return big_ == nullptr ? AddToPack(m, score, flags, newscore, lim)
                         : AddToTree(m, score, flags, newscore);
}

int Zset::AddToPack(std::string_view m, double score, int flags, double* newscore,
                    const ZsetLimits& lim) {
  size_t off;
  double cur;
  if (pack_.Find(m, &off, &cur)) {
    if (flags & kAddNx) return kNop;
    if (flags & kAddIncr) {
      score += cur;
      if (std::isnan(score)) return kNan;
    }
    if (((flags & kAddLt) && score >= cur) || ((flags & kAddGt) && score <= cur)) return kNop;
    *newscore = score;
    if (score == cur) return 0;
    pack_.Update(off, m, score);
    return kUpdated;
  }
  if (flags & kAddXx) return kNop;
  if (static_cast<int64_t>(pack_.size()) + 1 > lim.entries ||
      static_cast<int64_t>(m.size()) > lim.value ||
      pack_.bytes() + Pack::EntryBytes(m, score) > Pack::kMaxBytes) {
    ToTree();
    return AddToTree(m, score, flags, newscore);
  }
  pack_.Insert(m, score);
  *newscore = score;
  return kAdded;
}

int Zset::AddToTree(std::string_view m, double score, int flags, double* newscore) {
  MemberTable& t = big_->table;
  const int64_t found = t.Find(m);
  if (found >= 0) {
    if (flags & kAddNx) return kNop;
    const auto pos = static_cast<uint32_t>(found);
    const double cur = t.Score(pos);
    if (flags & kAddIncr) {
      score += cur;
      if (std::isnan(score)) return kNan;
    }
    if (((flags & kAddLt) && score >= cur) || ((flags & kAddGt) && score <= cur)) return kNop;
    *newscore = score;
    if (score == cur) return 0;
    // Nodes for the re-insertion first: after the erase nothing may fail.
    big_->tree.Reserve(t, score, pos);
    big_->tree.Erase(t, cur, pos);
    t.SetScore(pos, score);
    big_->tree.Insert(t, score, pos);
    return kUpdated;
  }
  if (flags & kAddXx) return kNop;
  TreeInsert(m, score);
  *newscore = score;
  return kAdded;
}

void Zset::TreeInsert(std::string_view m, double score) {
  const uint32_t pos = big_->table.Insert(m, score);
  try {
    big_->tree.Insert(big_->table, score, pos);
  } catch (...) {
    big_->table.Erase(pos);
    throw;
  }
}

void Zset::TreeErase(uint32_t pos) {
  big_->tree.Erase(big_->table, big_->table.Score(pos), pos);
  big_->table.Erase(pos);
}

void Zset::MaybeCompact() {
  if (!big_->table.WantsCompaction()) return;
  void* map = vsl::Api().alloc(sizeof(uint32_t) * big_->table.high());
  if (map == nullptr) return;  // only an optimisation
  big_->table.Compact(static_cast<uint32_t*>(map));
  big_->tree.Remap(static_cast<uint32_t*>(map));
  vsl::Free(map);
}

bool Zset::Remove(std::string_view m) {
  if (big_ == nullptr) {
    size_t off, next;
    double score;
    if (!pack_.Find(m, &off, &score)) return false;
    pack_.Decode(off, &next);
    pack_.Erase(off, next, 1);
    return true;
  }
  const int64_t pos = big_->table.Find(m);
  if (pos < 0) return false;
  TreeErase(static_cast<uint32_t>(pos));
  MaybeCompact();
  return true;
}

int64_t Zset::Rank(std::string_view m) const {
  if (big_ == nullptr) {
    int64_t rank = 0;
    for (size_t off = pack_.begin(), end = pack_.end(), next; off < end; off = next, ++rank) {
      if (pack_.Decode(off, &next).member == m) return rank;
    }
    return -1;
  }
  const int64_t pos = big_->table.Find(m);
  if (pos < 0) return -1;
  const auto p = static_cast<uint32_t>(pos);
  return static_cast<int64_t>(big_->tree.Rank(big_->table, big_->table.Score(p), p));
}

// ---- ranges ----

size_t Zset::CountBelow(double score, bool inclusive) const {
  if (big_ != nullptr) return big_->tree.CountBelow(score, inclusive);
  size_t n = 0;
  for (size_t off = pack_.begin(), end = pack_.end(), next; off < end; off = next, ++n) {
    const double s = pack_.Decode(off, &next).score;
    if (inclusive ? s > score : s >= score) break;
  }
  return n;
}

bool Zset::RangeRanks(const ScoreRange& r, size_t* first, size_t* last) const {
  const size_t lo = CountBelow(r.min, r.minex);
  const size_t hi = CountBelow(r.max, !r.maxex);
  if (lo >= hi) return false;
  *first = lo;
  *last = hi - 1;
  return true;
}

namespace {

// Redis's zslIsInLexRange / zzlIsInLexRange: the range is not empty and overlaps the set.
bool OverlapsLex(const LexRange& r, std::string_view first, std::string_view last) {
  const int c = CompareLex(r.min, r.max);
  if (c > 0 || (c == 0 && (r.min.exclusive || r.max.exclusive))) return false;
  return r.GteMin(last) && r.LteMax(first);
}

}  // namespace

size_t Zset::FirstInLex(const LexRange& r) const {
  const size_t n = size();
  if (n == 0 || !OverlapsLex(r, At(0).member, At(n - 1).member)) return npos;
  size_t rank = 0;
  if (big_ == nullptr) {
    Walker w(*this, 0);
    while (w.valid() && !r.GteMin(w.Get().member)) {
      w.Next();
      ++rank;
    }
    if (rank == n) return npos;
  } else if (r.min.kind == LexBound::Kind::kString) {
    rank = big_->tree.CountLexBelow(big_->table, r.min.s, r.min.exclusive);
    if (rank == n) return npos;
  }
  return r.LteMax(At(rank).member) ? rank : npos;
}

size_t Zset::LastInLex(const LexRange& r) const {
  const size_t n = size();
  if (n == 0 || !OverlapsLex(r, At(0).member, At(n - 1).member)) return npos;
  size_t rank = n - 1;
  if (big_ == nullptr) {
    Walker w(*this, n - 1);
    while (w.valid() && !r.LteMax(w.Get().member)) {
      w.Prev();
      if (rank-- == 0) return npos;
    }
  } else if (r.max.kind == LexBound::Kind::kString) {
    const size_t c = big_->tree.CountLexBelow(big_->table, r.max.s, !r.max.exclusive);
    if (c == 0) return npos;
    rank = c - 1;
  }
  return r.GteMin(At(rank).member) ? rank : npos;
}

Zset::Item Zset::At(size_t r) const {
  if (big_ == nullptr) {
    size_t off = pack_.begin(), next;
    for (; r > 0; --r) {
      pack_.Decode(off, &next);
      off = next;
    }
    const Pack::Item it = pack_.Decode(off, &next);
    return {it.member, it.score};
  }
  const OrderTree::Cursor c = big_->tree.At(r);
  return {big_->table.Member(c.pos()), c.score()};
}

void Zset::EraseRanks(size_t from, size_t n) {
  if (n == 0) return;
  if (big_ == nullptr) {
    size_t off = pack_.begin(), next;
    for (size_t r = 0; r < from; ++r, off = next) pack_.Decode(off, &next);
    size_t to = off;
    for (size_t k = 0; k < n; ++k, to = next) pack_.Decode(to, &next);
    pack_.Erase(off, to, n);
    return;
  }
  for (size_t k = 0; k < n; ++k) TreeErase(big_->tree.At(from).pos());
  MaybeCompact();
}

Zset::Item Zset::Random() const {
  if (big_ == nullptr) return At(vsl::RandomBelow(size()));
  return ItemAt(big_->table.RandomLive(vsl::RandomU64));
}

// ---- walking ----

Walker::Walker(const Zset& z, size_t rank) : z_(z) {
  const size_t n = z.size();
  i_ = static_cast<int64_t>(rank);
  if (z.big_ != nullptr) {
    if (rank < n) cur_ = z.big_->tree.At(rank);
    return;
  }
  offs_ =
      n <= std::size(small_) ? small_ : static_cast<uint32_t*>(vsl::Alloc(sizeof(uint32_t) * n));
  size_t i = 0;
  for (size_t off = z.pack_.begin(), end = z.pack_.end(), next; off < end; off = next) {
    offs_[i++] = static_cast<uint32_t>(off);
    z.pack_.Decode(off, &next);
  }
}

Walker::~Walker() {
  if (offs_ != nullptr && offs_ != small_) vsl::Free(offs_);
}

bool Walker::valid() const {
  if (z_.big_ != nullptr) return cur_.valid();
  return i_ >= 0 && i_ < static_cast<int64_t>(z_.pack_.size());
}

Zset::Item Walker::Get() const {
  if (z_.big_ != nullptr) return {z_.big_->table.Member(cur_.pos()), cur_.score()};
  size_t next;
  const Pack::Item it = z_.pack_.Decode(offs_[i_], &next);
  return {it.member, it.score};
}

void Walker::Next() {
  if (z_.big_ != nullptr) return cur_.Next();
  ++i_;
}

void Walker::Prev() {
  if (z_.big_ != nullptr) return cur_.Prev();
  --i_;
}

// ---- type callbacks ----

size_t Zset::MemUsage() const {
  size_t bytes = Usable(this);
  if (big_ == nullptr) return bytes + pack_.MemUsage();
  return bytes + Usable(big_) + big_->table.MemUsage() + big_->tree.MemUsage();
}

Zset* Zset::Clone() const {
  Zset* c = New();
  try {
    if (big_ == nullptr) {
      c->pack_.CopyFrom(pack_);
      return c;
    }
    Big* b = vsl::New<Big>();
    try {
      b->table.CopyFrom(big_->table);
      b->tree.CopyFrom(big_->tree);
    } catch (...) {
      vsl::Delete(b);
      throw;
    }
    c->pack_.Free();
    c->big_ = b;
  } catch (...) {
    vsl::Delete(c);
    throw;
  }
  return c;
}

int Zset::Visit(vsl_visit_fn fn, void* ud) const {
  for (Walker w(*this, 0); w.valid(); w.Next()) {
    const Item it = w.Get();
    if (fn(ud, it.member.data(), it.member.size(), it.score) != 0) break;
  }
  return VSL_OK;
}

// Format (encoding version 1): the representation (0 pack, 1 tree), the number of members,
// then every member and its score in ascending order.
void Zset::Serialize(vsl::Writer& w) const {
  w.U64(big_ == nullptr ? 0 : 1);
  w.U64(size());
  for (Walker it(*this, 0); it.valid(); it.Next()) {
    const Item item = it.Get();
    w.Bytes(item.member);
    w.Double(item.score);
  }
}

Zset* Zset::Deserialize(vsl::Reader& r, uint32_t encver) {
  uint64_t rep, n;
  if (encver != 1 || !r.U64(&rep) || !r.U64(&n) || rep > 1 || n == 0 || n > MemberTable::kMaxSize) {
    return nullptr;
  }
  // Members go into a table as they are read (it finds duplicates; the order is checked
  // against the previous one), at positions 0, 1, ... in order.
  std::unique_ptr<Big, void (*)(Big*)> big(vsl::New<Big>(), [](Big* b) { vsl::Delete(b); });
  MemberTable& t = big->table;
  Vec<double> scores;
  scores.reserve(std::min<uint64_t>(n, 4096));
  size_t pack_bytes = 0;
  for (uint64_t i = 0; i < n; ++i) {
    std::string_view m;
    double s;
    if (!r.Bytes(&m) || !r.Double(&s) || std::isnan(s) || t.Find(m) >= 0) return nullptr;
    if (i > 0) {
      const double ps = t.Score(static_cast<uint32_t>(i - 1));
      if (ps > s || (ps == s && CompareMembers(t.Member(static_cast<uint32_t>(i - 1)), m) >= 0)) {
        return nullptr;
      }
    }
    t.Insert(m, s);
    scores.push_back(s);
    pack_bytes += Pack::EntryBytes(m, s);
  }
  Zset* z = New();
  // A pack stays a pack (within what a pack holds), as Redis keeps a listpack it loads.
  if (rep == 0 && pack_bytes <= Pack::kMaxBytes) {
    try {
      z->pack_.Reserve(pack_bytes);
      for (uint32_t i = 0; i < n; ++i) z->pack_.Append(t.Member(i), t.Score(i));
    } catch (...) {
      vsl::Delete(z);
      throw;
    }
    return z;
  }
  try {
    Vec<uint32_t> pos(n);
    for (uint32_t i = 0; i < n; ++i) pos[i] = i;
    big->tree.Build(pos.data(), scores.data(), n);
  } catch (...) {
    vsl::Delete(z);
    throw;
  }
  z->pack_.Free();
  z->big_ = big.release();
  return z;
}

}  // namespace vessel::zsets
