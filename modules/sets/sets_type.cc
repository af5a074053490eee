// The set value type: intset and listpack blocks, the Set facade over them and HashSet, and the
// set algebra.
#include "sets_type.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <utility>

namespace vessel::sets {
namespace {

// Realloc through the host allocator; throws std::bad_alloc.
template <class T>
T* Resize(T* p, size_t bytes) {
  return static_cast<T*>(vsl::Realloc(p, bytes));
}

// A shrinking realloc: keeps the old block when the allocator cannot move it.
template <class T>
T* Shrink(T* p, size_t bytes) {
  void* q = vsl::Api().realloc(p, bytes);
  return q == nullptr ? p : static_cast<T*>(q);
}

std::string_view FormatInt(int64_t v, NumBuf& buf) {
  const auto r = std::to_chars(buf.data, buf.data + sizeof(buf.data), v);
  return {buf.data, static_cast<size_t>(r.ptr - buf.data)};
}

}  // namespace

// ---- intset: a header, then count integers of `width` bytes in ascending order ----

struct Intset {
  uint32_t count;
  uint32_t width;  // 2, 4 or 8
  unsigned char* data() { return reinterpret_cast<unsigned char*>(this + 1); }
  const unsigned char* data() const { return reinterpret_cast<const unsigned char*>(this + 1); }
};

namespace {

uint32_t WidthFor(int64_t v) {
  if (v >= INT16_MIN && v <= INT16_MAX) return 2;
  if (v >= INT32_MIN && v <= INT32_MAX) return 4;
  return 8;
}

int64_t IsGet(const Intset* is, size_t i) {
  const unsigned char* p = is->data() + i * is->width;
  if (is->width == 2) {
    int16_t v;
    std::memcpy(&v, p, 2);
    return v;
  }
  if (is->width == 4) {
    int32_t v;
    std::memcpy(&v, p, 4);
    return v;
  }
  int64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

void IsPut(Intset* is, size_t i, int64_t v) {
  unsigned char* p = is->data() + i * is->width;
  if (is->width == 2) {
    const auto x = static_cast<int16_t>(v);
    std::memcpy(p, &x, 2);
  } else if (is->width == 4) {
    const auto x = static_cast<int32_t>(v);
    std::memcpy(p, &x, 4);
  } else {
    std::memcpy(p, &v, 8);
  }
}

size_t IsBytes(size_t count, size_t width) { return sizeof(Intset) + count * width; }

Intset* IsNew(size_t count, uint32_t width) {
  auto* is = static_cast<Intset*>(vsl::Alloc(IsBytes(count, width)));
  is->count = static_cast<uint32_t>(count);
  is->width = width;
  return is;
}

// Binary search: true with *pos at v, or false with *pos where v would go.
bool IsSearch(const Intset* is, int64_t v, size_t* pos) {
  size_t lo = 0, hi = is->count;
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    const int64_t x = IsGet(is, mid);
    if (x < v) {
      lo = mid + 1;
    } else if (x > v) {
      hi = mid;
    } else {
      *pos = mid;
      return true;
    }
  }
  *pos = lo;
  return false;
}

bool IsAdd(Intset** pis, int64_t v) {
  Intset* is = *pis;
  const size_t n = is->count;
  const uint32_t width = WidthFor(v);
  if (width > is->width) {  // v lies beyond every member: it goes first or last
    Intset* wide = IsNew(n + 1, width);
    const size_t shift = v < 0 ? 1 : 0;
    for (size_t i = 0; i < n; ++i) IsPut(wide, i + shift, IsGet(is, i));
    IsPut(wide, v < 0 ? 0 : n, v);
    vsl::Free(is);
    *pis = wide;
    return true;
  }
  size_t pos;
  if (IsSearch(is, v, &pos)) return false;
  is = *pis = Resize(is, IsBytes(n + 1, is->width));
  std::memmove(is->data() + (pos + 1) * is->width, is->data() + pos * is->width,
               (n - pos) * is->width);
  IsPut(is, pos, v);
  is->count = static_cast<uint32_t>(n + 1);
  return true;
}

void IsRemoveAt(Intset** pis, size_t pos) {
  Intset* is = *pis;
  std::memmove(is->data() + pos * is->width, is->data() + (pos + 1) * is->width,
               (is->count - pos - 1) * is->width);
  --is->count;
  *pis = Shrink(is, IsBytes(is->count, is->width));
}

}  // namespace

// ---- listpack: a header, then count entries [length byte][bytes] in insertion order ----

struct Listpack {
  uint16_t count;
  uint16_t used;  // bytes of entries (at most 128 * 65)
  unsigned char* data() { return reinterpret_cast<unsigned char*>(this + 1); }
  const unsigned char* data() const { return reinterpret_cast<const unsigned char*>(this + 1); }
};

namespace {

Listpack* LpNew(size_t reserve) {
  auto* lp = static_cast<Listpack*>(vsl::Alloc(sizeof(Listpack) + reserve));
  lp->count = 0;
  lp->used = 0;
  return lp;
}

std::string_view LpEntry(const Listpack* lp, size_t off) {
  return {reinterpret_cast<const char*>(lp->data() + off + 1), lp->data()[off]};
}

ptrdiff_t LpFind(const Listpack* lp, std::string_view s) {
  const unsigned char* d = lp->data();
  for (size_t off = 0; off < lp->used; off += 1 + d[off]) {
    if (d[off] == s.size() && std::memcmp(d + off + 1, s.data(), s.size()) == 0) {
      return static_cast<ptrdiff_t>(off);
    }
  }
  return -1;
}

size_t LpOffsetOf(const Listpack* lp, size_t i) {
  size_t off = 0;
  for (; i > 0; --i) off += 1 + lp->data()[off];
  return off;
}

// Appends s (at most kMaxListpackValue bytes, not a member yet).
void LpAppend(Listpack** plp, std::string_view s) {
  Listpack* lp = *plp = Resize(*plp, sizeof(Listpack) + (*plp)->used + 1 + s.size());
  lp->data()[lp->used] = static_cast<unsigned char>(s.size());
  if (!s.empty()) std::memcpy(lp->data() + lp->used + 1, s.data(), s.size());
  lp->used = static_cast<uint16_t>(lp->used + 1 + s.size());
  ++lp->count;
}

void LpRemoveAt(Listpack** plp, size_t off) {
  Listpack* lp = *plp;
  const size_t len = 1 + lp->data()[off];
  std::memmove(lp->data() + off, lp->data() + off + len, lp->used - off - len);
  lp->used = static_cast<uint16_t>(lp->used - len);
  --lp->count;
  *plp = Shrink(lp, sizeof(Listpack) + lp->used);
}

bool FitsListpack(std::string_view m) { return m.size() <= kMaxListpackValue; }

}  // namespace

// ---- Set ----

Set::Set() : is_(IsNew(0, 2)) {}

Set::~Set() { ClearData(); }

void Set::ClearData() {
  switch (rep_) {
    case Rep::kIntset:
      vsl::Free(is_);
      break;
    case Rep::kListpack:
      vsl::Free(lp_);
      break;
    case Rep::kHashtable:
      vsl::Delete(ht_);
      break;
  }
}

size_t Set::size() const {
  switch (rep_) {
    case Rep::kIntset:
      return is_->count;
    case Rep::kListpack:
      return lp_->count;
    case Rep::kHashtable:
      break;
  }
  return ht_->size();
}

bool Set::ContainsInt(int64_t v) const {
  if (rep_ == Rep::kIntset) {
    size_t pos;
    return IsSearch(is_, v, &pos);
  }
  NumBuf buf;
  return Contains(FormatInt(v, buf));
}

bool Set::Contains(std::string_view m) const {
  switch (rep_) {
    case Rep::kIntset: {
      int64_t v;
      size_t pos;
      return vsl::ParseInt(m, &v) && IsSearch(is_, v, &pos);
    }
    case Rep::kListpack:
      return LpFind(lp_, m) >= 0;
    case Rep::kHashtable:
      break;
  }
  return ht_->Contains(m);
}

void Set::ToListpack() {
  Listpack* lp = LpNew(is_->count * 7);
  try {
    NumBuf buf;
    for (size_t i = 0; i < is_->count; ++i) LpAppend(&lp, FormatInt(IsGet(is_, i), buf));
  } catch (...) {
    vsl::Free(lp);
    throw;
  }
  ClearData();
  rep_ = Rep::kListpack;
  lp_ = lp;
}

void Set::ToHashtable(size_t reserve) {
  HashSet* ht = vsl::New<HashSet>();
  try {
    ht->Reserve(reserve);
    SetIter it(*this);
    std::string_view m;
    while (it.Next(&m)) ht->Insert(m);
  } catch (...) {
    vsl::Delete(ht);
    throw;
  }
  ClearData();
  rep_ = Rep::kHashtable;
  ht_ = ht;
}

bool Set::Add(std::string_view m) {
  switch (rep_) {
    case Rep::kIntset: {
      int64_t v;
      if (vsl::ParseInt(m, &v)) {
        if (!IsAdd(&is_, v)) return false;
        if (is_->count > kMaxIntsetEntries) ToHashtable(is_->count);
        return true;
      }
      if (is_->count < kMaxListpackEntries && FitsListpack(m)) {
        ToListpack();
        LpAppend(&lp_, m);
        return true;
      }
      ToHashtable(is_->count + 1);
      return ht_->Insert(m);
    }
    case Rep::kListpack:
      if (LpFind(lp_, m) >= 0) return false;
      if (lp_->count < kMaxListpackEntries && FitsListpack(m)) {
        LpAppend(&lp_, m);
        return true;
      }
      ToHashtable(lp_->count + 1);
      return ht_->Insert(m);
    case Rep::kHashtable:
      break;
  }
  return ht_->Insert(m);
}

bool Set::Remove(std::string_view m) {
  switch (rep_) {
    case Rep::kIntset: {
      int64_t v;
      size_t pos;
      if (!vsl::ParseInt(m, &v) || !IsSearch(is_, v, &pos)) return false;
      IsRemoveAt(&is_, pos);
      return true;
    }
    case Rep::kListpack: {
      const ptrdiff_t off = LpFind(lp_, m);
      if (off < 0) return false;
      LpRemoveAt(&lp_, static_cast<size_t>(off));
      return true;
    }
    case Rep::kHashtable:
      break;
  }
  return ht_->Erase(m);
}

std::string_view Set::At(size_t i, NumBuf& buf) const {
  switch (rep_) {
    case Rep::kIntset:
      return FormatInt(IsGet(is_, i), buf);
    case Rep::kListpack:
      return LpEntry(lp_, LpOffsetOf(lp_, i));
    case Rep::kHashtable:
      break;
  }
  return ht_->At(i);
}

void Set::RemoveAt(size_t i) {
  switch (rep_) {
    case Rep::kIntset:
      return IsRemoveAt(&is_, i);
    case Rep::kListpack:
      return LpRemoveAt(&lp_, LpOffsetOf(lp_, i));
    case Rep::kHashtable:
      break;
  }
  ht_->EraseAt(i);
}

void Set::Compact() {
  if (rep_ != Rep::kHashtable || size() > kMaxIntsetEntries) return;
  bool ints = true, short_members = true;
  for (size_t i = 0; i < ht_->size(); ++i) {
    const std::string_view m = ht_->At(i);
    int64_t v;
    ints = ints && vsl::ParseInt(m, &v);
    short_members = short_members && FitsListpack(m);
  }
  if (!ints && (size() > kMaxListpackEntries || !short_members)) return;
  try {  // only an optimisation: without memory for the copy, the hashtable stays
    Set fresh;
    for (size_t i = 0; i < ht_->size(); ++i) fresh.Add(ht_->At(i));
    if (fresh.rep_ == Rep::kHashtable) return;
    HashSet* old = ht_;
    rep_ = fresh.rep_;
    if (rep_ == Rep::kIntset) {
      is_ = fresh.is_;
    } else {
      lp_ = fresh.lp_;
    }
    fresh.rep_ = Rep::kHashtable;
    fresh.ht_ = old;  // freed with `fresh`
  } catch (const std::bad_alloc&) {
  }
}

void Set::AssignInPlace(const Set& r) {
  ht_->Reserve(r.size());  // first: only long members allocate after this
  for (size_t i = ht_->size(); i-- > 0;) {
    if (!r.Contains(ht_->At(i))) ht_->EraseAt(i);
  }
  SetIter it(r);
  std::string_view m;
  while (it.Next(&m)) ht_->Insert(m);
}

uint64_t Set::ScanStep(uint64_t cursor, uint64_t count, size_t* lo, size_t* hi) const {
  const size_t n = size();
  if (rep_ != Rep::kHashtable) {
    *lo = 0;
    *hi = n;
    return 0;
  }
  *hi = cursor == 0 || cursor > n ? n : static_cast<size_t>(cursor);
  *lo = *hi > count ? *hi - static_cast<size_t>(count) : 0;
  return *lo;
}

size_t Set::MemUsage() const {
  auto usable = [](const void* p) { return vsl::Api().usable_size(const_cast<void*>(p)); };
  size_t bytes = usable(this);
  switch (rep_) {
    case Rep::kIntset:
      return bytes + usable(is_);
    case Rep::kListpack:
      return bytes + usable(lp_);
    case Rep::kHashtable:
      break;
  }
  return bytes + usable(ht_) + ht_->MemUsage();
}

Set* Set::Clone() const {
  Set* c = New();
  try {
    switch (rep_) {
      case Rep::kIntset: {
        Intset* is = IsNew(is_->count, is_->width);
        std::memcpy(is->data(), is_->data(), size_t{is_->count} * is_->width);
        vsl::Free(c->is_);
        c->is_ = is;
        break;
      }
      case Rep::kListpack: {
        Listpack* lp = LpNew(lp_->used);
        std::memcpy(lp, lp_, sizeof(Listpack) + lp_->used);
        vsl::Free(c->is_);
        c->lp_ = lp;
        break;
      }
      case Rep::kHashtable: {
        HashSet* ht = ht_->Clone();
        vsl::Free(c->is_);
        c->ht_ = ht;
        break;
      }
    }
    c->rep_ = rep_;
  } catch (...) {
    vsl::Delete(c);
    throw;
  }
  return c;
}

// Format (encoding version 1): the representation, the number of members, then the members:
// int64s (as u64) for an intset, byte strings otherwise, in the set's own order.
void Set::Serialize(vsl::Writer& w) const {
  w.U64(static_cast<uint64_t>(rep_));
  w.U64(size());
  if (rep_ == Rep::kIntset) {
    for (size_t i = 0; i < is_->count; ++i) w.U64(static_cast<uint64_t>(IsGet(is_, i)));
    return;
  }
  SetIter it(*this);
  std::string_view m;
  while (it.Next(&m)) w.Bytes(m);
}

Set* Set::Deserialize(vsl::Reader& r, uint32_t encver) {
  uint64_t rep, n;
  if (encver != 1 || !r.U64(&rep) || !r.U64(&n) || n == 0 || rep > 2) return nullptr;
  if ((rep == 0 && n > kMaxIntsetEntries) || (rep == 1 && n > kMaxListpackEntries) ||
      n > HashSet::kMaxSize) {
    return nullptr;
  }
  Set* s = New();
  bool ok = true;
  try {
    if (rep == 0) {
      uint64_t prev = 0;
      for (uint64_t i = 0; ok && i < n; ++i) {
        uint64_t v;
        ok = r.U64(&v) && (i == 0 || static_cast<int64_t>(v) > static_cast<int64_t>(prev));
        if (ok) IsAdd(&s->is_, static_cast<int64_t>(v));
        prev = v;
      }
    } else {
      if (rep == 1) {
        s->ToListpack();
      } else {
        s->ToHashtable(std::min<uint64_t>(n, uint64_t{1} << 16));
      }
      for (uint64_t i = 0; ok && i < n; ++i) {
        std::string_view m;
        ok = r.Bytes(&m) && (rep == 2 || FitsListpack(m)) && !s->Contains(m);
        if (!ok) break;
        if (rep == 1) {
          LpAppend(&s->lp_, m);
        } else {
          s->ht_->Insert(m);
        }
      }
    }
  } catch (...) {
    ok = false;
  }
  if (!ok) {
    vsl::Delete(s);
    return nullptr;
  }
  return s;
}

const char* Set::Encoding() const {
  switch (rep_) {
    case Rep::kIntset:
      return "intset";
    case Rep::kListpack:
      return "listpack";
    case Rep::kHashtable:
      break;
  }
  return "hashtable";
}

int Set::Visit(vsl_visit_fn fn, void* ud) const {
  SetIter it(*this);
  std::string_view m;
  while (it.Next(&m)) {
    if (fn(ud, m.data(), m.size(), 0.0) != 0) break;
  }
  return VSL_OK;
}

// ---- iteration ----

bool SetIter::Next(std::string_view* out) {
  if (i_ >= s_.size()) return false;
  switch (s_.rep_) {
    case Rep::kIntset:
      int_ = IsGet(s_.is_, i_);
      *out = FormatInt(int_, buf_);
      break;
    case Rep::kListpack:
      *out = LpEntry(s_.lp_, off_);
      off_ += 1 + out->size();
      break;
    case Rep::kHashtable:
      *out = s_.ht_->At(i_);
      break;
  }
  ++i_;
  return true;
}

Indexed::Indexed(const Set& s) : s_(s) {
  if (s.rep_ != Rep::kListpack) return;
  size_t off = 0;
  for (size_t i = 0; i < s.lp_->count; ++i) {
    offsets_[i] = static_cast<uint16_t>(off);
    off += 1 + s.lp_->data()[off];
  }
}

std::string_view Indexed::Get(size_t i, NumBuf& buf) const {
  if (s_.rep_ == Rep::kListpack) return LpEntry(s_.lp_, offsets_[i]);
  return s_.At(i, buf);
}

// ---- set algebra ----

size_t SortBySize(std::span<const Set* const> sets, const Set** out) {
  for (size_t i = 0; i < sets.size(); ++i) {
    if (sets[i] == nullptr) return 0;
    out[i] = sets[i];
  }
  std::sort(out, out + sets.size(),
            [](const Set* a, const Set* b) { return a->size() < b->size(); });
  return sets.size();
}

bool MemberOf(const Set& s, const SetIter& it, std::string_view m) {
  if (it.is_int() && s.rep() == Rep::kIntset) return s.ContainsInt(it.int_value());
  return s.Contains(m);
}

namespace {

// A copy of `s` when every set built from its members is a hashtable anyway (more members than
// any compact representation holds), else nullptr: the result is built member by member then.
Set* CloneIfLarge(const Set& s) {
  return s.rep() == Rep::kHashtable && s.size() > kMaxIntsetEntries ? s.Clone() : nullptr;
}

void AddAll(Set* out, const Set& s) {
  SetIter it(s);
  std::string_view m;
  while (it.Next(&m)) out->Add(m);
}

// Owns a result under construction; Release() hands it over, nullptr when empty.
class Result {
 public:
  explicit Result(Set* s) : s_(s != nullptr ? s : Set::New()) {}
  ~Result() { vsl::Delete(s_); }
  Set* operator->() const { return s_; }
  Set& operator*() const { return *s_; }
  Set* Release() {
    Set* s = std::exchange(s_, nullptr);
    if (!s->empty()) return s;
    vsl::Delete(s);
    return nullptr;
  }

 private:
  Set* s_;
};

}  // namespace

Set* OpUnion(std::span<const Set* const> sets) {
  const Set* largest = nullptr;
  for (const Set* s : sets) {
    if (s != nullptr && (largest == nullptr || s->size() > largest->size())) largest = s;
  }
  if (largest == nullptr) return nullptr;
  Set* copy = CloneIfLarge(*largest);
  Result out(copy);
  for (const Set* s : sets) {
    if (s != nullptr && !(copy != nullptr && s == largest)) AddAll(&*out, *s);
  }
  return out.Release();
}

// Redis's two algorithms, chosen the same way: (1) test each member of the first set against
// the others, largest first; (2) copy the first set and remove the members of the others.
Set* OpDiff(std::span<const Set* const> sets) {
  const Set* first = sets[0];
  if (first == nullptr) return nullptr;
  uint64_t work1 = 0, work2 = 0;
  for (const Set* s : sets) {
    if (s == nullptr) continue;
    work1 += first->size();
    work2 += s->size();
  }
  if (work1 / 2 <= work2) {
    std::vector<const Set*, vsl::Allocator<const Set*>> others;
    for (const Set* s : sets.subspan(1)) {
      if (s != nullptr) others.push_back(s);
    }
    std::stable_sort(others.begin(), others.end(),
                     [](const Set* a, const Set* b) { return a->size() > b->size(); });
    Result out(nullptr);
    SetIter it(*first);
    std::string_view m;
    while (it.Next(&m)) {
      bool keep = true;
      for (const Set* s : others) {
        if (s == first || MemberOf(*s, it, m)) {
          keep = false;
          break;
        }
      }
      if (keep) out->Add(m);
    }
    return out.Release();
  }
  Set* copy = CloneIfLarge(*first);
  Result out(copy);
  if (copy == nullptr) AddAll(&*out, *first);
  for (const Set* s : sets.subspan(1)) {
    if (s == nullptr) continue;
    SetIter it(*s);
    std::string_view m;
    while (!out->empty() && it.Next(&m)) out->Remove(m);
    if (out->empty()) break;
  }
  return out.Release();
}

}  // namespace vessel::sets
