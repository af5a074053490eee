// The bag value type (see bag_type.h).
#include "bag_type.h"

#include <algorithm>
#include <charconv>

namespace vessel::bag {

using ordered::CompareKeys;
using ordered::PackedTree;
using ordered::ValueBuf;

namespace {

std::string_view Text(uint64_t v, ValueBuf& buf) {
  auto [end, ec] = std::to_chars(buf.b, buf.b + sizeof(buf.b), v);
  return {buf.b, static_cast<size_t>(end - buf.b)};
}

}  // namespace

uint64_t ParseCount(std::string_view text) {
  uint64_t v = 0;
  std::from_chars(text.data(), text.data() + text.size(), v);
  return v;
}

// The count's significant bytes L (1..8) as one byte that sorts bigger counts first (0xFF - L),
// then the bytes complemented, most significant first: keys order by count downwards, and the
// member after them by its bytes (the count part is self-delimiting).
vsl::String CountKey(uint64_t count, std::string_view member) {
  int len = 1;
  while (len < 8 && (count >> (8 * len)) != 0) ++len;
  vsl::String key;
  key.reserve(1 + static_cast<size_t>(len) + member.size());
  key.push_back(static_cast<char>(0xFF - len));
  for (int i = len - 1; i >= 0; --i) key.push_back(static_cast<char>(~(count >> (8 * i)) & 0xFF));
  key.append(member.data(), member.size());
  return key;
}

std::pair<uint64_t, std::string_view> FromCountKey(std::string_view key) {
  const int len = 0xFF - static_cast<unsigned char>(key[0]);
  uint64_t count = 0;
  for (int i = 0; i < len; ++i)
    count = (count << 8) | (~static_cast<unsigned char>(key[1 + i]) & 0xFFu);
  return {count, key.substr(1 + static_cast<size_t>(len))};
}

Bag::~Bag() {
  if (index_ != nullptr) vsl::Delete(index_);
}

uint64_t Bag::SumCounts() const {
  uint64_t total = 0;
  ValueBuf buf;
  for (auto c = members_.First(); c.valid(); c.Next()) total += ParseCount(c.value(buf));
  return total;
}

uint64_t Bag::total() const { return index_ != nullptr ? index_->total : SumCounts(); }

uint64_t Bag::Count(std::string_view member) const {
  const PackedTree::Cursor c = members_.Find(member);
  if (!c.valid()) return 0;
  ValueBuf buf;
  return ParseCount(c.value(buf));
}

uint64_t Bag::Add(std::string_view member, int64_t delta) {
  const uint64_t old = Count(member);
  const uint64_t now = old + static_cast<uint64_t>(delta);
  if (now == old) return now;
  PackedTree* by_count = index_ != nullptr ? &index_->by_count : nullptr;
  if (now == 0) {
    members_.Erase(member);
    if (by_count != nullptr) by_count->Erase(CountKey(old, member));
  } else {
    ValueBuf buf;
    if (by_count != nullptr) {
      const vsl::String key = CountKey(now, member);
      by_count->Upsert(key, "");
      try {
        members_.Upsert(member, Text(now, buf));
      } catch (...) {
        by_count->Erase(key);
        throw;
      }
      if (old != 0) by_count->Erase(CountKey(old, member));
    } else {
      members_.Upsert(member, Text(now, buf));
    }
  }
  if (index_ != nullptr) index_->total += static_cast<uint64_t>(delta);
  Reindex();
  return now;
}

void Bag::Reindex() {
  if (index_ != nullptr && members_.size() < kIndexed / 2) {
    vsl::Delete(index_);
    index_ = nullptr;
  } else if (index_ == nullptr && members_.size() > kIndexed) {
    // Without the index the bag stays correct (its top comes from a walk, its total from a sum):
    // a failure to build it is left for the next change to retry.
    try {
      vsl::Owned<Index> index(vsl::New<Index>());
      ValueBuf buf;
      for (auto c = members_.First(); c.valid(); c.Next()) {
        const uint64_t n = ParseCount(c.value(buf));
        index->by_count.Upsert(CountKey(n, c.key()), "");
        index->total += n;
      }
      index_ = index.release();
    } catch (const std::bad_alloc&) {
    }
  }
}

void Bag::TopByWalk(size_t k, vsl::Vec<std::pair<uint64_t, std::string_view>>* out) const {
  ValueBuf buf;
  out->reserve(members_.size());
  for (auto c = members_.First(); c.valid(); c.Next())
    out->emplace_back(ParseCount(c.value(buf)), c.key());
  auto before = [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : CompareKeys(a.second, b.second) < 0;
  };
  k = std::min(k, out->size());
  std::partial_sort(out->begin(), out->begin() + static_cast<long>(k), out->end(), before);
  out->resize(k);
}

bool Bag::Valid() const {
  if (!members_.Valid()) return false;
  // The index exists past kIndexed members and not under half that (either shape between).
  if (members_.size() > kIndexed && index_ == nullptr) return false;
  if (members_.size() < kIndexed / 2 && index_ != nullptr) return false;
  uint64_t total = 0;
  ValueBuf buf;
  for (auto c = members_.First(); c.valid(); c.Next()) {
    const uint64_t n = ParseCount(c.value(buf));
    if (n == 0 || n > static_cast<uint64_t>(INT64_MAX) || total > INT64_MAX - n) return false;
    total += n;
    if (index_ != nullptr && !index_->by_count.Find(CountKey(n, c.key())).valid()) return false;
  }
  if (index_ == nullptr) return true;
  return index_->by_count.Valid() && index_->by_count.size() == members_.size() &&
         total == index_->total;
}

size_t Bag::MemUsage() const {
  size_t n = vsl::Api().usable_size(this) + members_.bytes();
  if (index_ != nullptr) n += vsl::Api().usable_size(index_) + index_->by_count.bytes();
  return n;
}

Bag* Bag::Clone() const {
  BagPtr copy(vsl::New<Bag>());
  copy->members_.CopyFrom(members_);
  copy->Reindex();
  return copy.release();
}

void Bag::Serialize(vsl::Writer& w) const {
  w.U64(members_.size());
  ValueBuf buf;
  for (auto c = members_.First(); c.valid(); c.Next()) {
    w.Bytes(c.key());
    w.U64(ParseCount(c.value(buf)));
  }
}

Bag* Bag::Deserialize(vsl::Reader& r, uint32_t encver) {
  uint64_t n;
  if (encver != kEncodingVersion || !r.U64(&n) || n == 0) return nullptr;
  BagPtr b(vsl::New<Bag>());
  std::string_view prev;
  ValueBuf buf;
  uint64_t total = 0;
  for (uint64_t i = 0; i < n; ++i) {
    std::string_view member;
    uint64_t count;
    if (!r.Bytes(&member) || !r.U64(&count)) return nullptr;
    // In member order, unique, counts >= 1 and a total within int64.
    if (i > 0 && CompareKeys(prev, member) >= 0) return nullptr;
    if (count == 0 || count > static_cast<uint64_t>(INT64_MAX) - total) return nullptr;
    b->members_.InsertAfterEquals(member, Text(count, buf));
    total += count;
    prev = member;  // the reader's bytes stay valid until the callback returns
  }
  b->Reindex();
  if (b->members_.size() > kIndexed && b->index_ == nullptr) throw std::bad_alloc();
  return b.release();
}

int Bag::Visit(vsl_visit_fn fn, void* ud) const {
  ValueBuf buf;
  for (auto c = members_.First(); c.valid(); c.Next()) {
    const std::string_view m = c.key();
    if (fn(ud, m.data(), m.size(), static_cast<double>(ParseCount(c.value(buf)))) != 0) break;
  }
  return VSL_OK;
}

}  // namespace vessel::bag
